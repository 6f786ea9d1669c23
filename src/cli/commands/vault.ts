/** `vault-cli vault create|passwd|rekey`. */
import { VaultError } from '../../core/errors.js';
import { flag, type Command } from '../context.js';
import { passphrase, secretInput } from '../io.js';
import { ownerPassphrase } from '../owner.js';

export const run: Command = async (ctx) => {
  const sub = ctx.inv.command?.path[1];
  if (sub === 'create') {
    const { recoveryKey } = await ctx.call('vault.create', {
      passphrase: await ownerPassphrase(ctx, true),
    });
    ctx.stderr.write(
      `vault-cli: vault created in ${ctx.paths.vaultDir}\n` +
        'vault-cli: the recovery key below is shown once; keep it offline. It can reset the passphrase (vault passwd --recovery).\n',
    );
    ctx.stdout.write(recoveryKey + '\n');
    return 0;
  }
  if (sub === 'rekey') {
    const { recoveryKey } = await ctx.call('vault.rekey', {
      passphrase: await ownerPassphrase(ctx),
    });
    ctx.stderr.write(
      'vault-cli: new root key made; the old recovery key no longer works.\n' +
        'vault-cli: the new recovery key below is shown once; keep it offline.\n',
    );
    ctx.stdout.write(recoveryKey + '\n');
    return 0;
  }
  if (sub === 'passwd') {
    let auth: { passphrase: string } | { recoveryKey: string };
    if (flag(ctx, 'recovery')) {
      const r = await secretInput(ctx.stdin, 'Recovery key');
      auth = { recoveryKey: r.expose().toString('utf8').trim() };
      r.wipe();
    } else {
      auth = { passphrase: await ownerPassphrase(ctx) };
    }
    const next = await passphrase(ctx.paths.newPassphraseFile, 'New vault passphrase', true);
    await ctx.call('vault.passwd', { ...auth, newPassphrase: next.expose().toString('utf8') });
    next.wipe();
    ctx.stderr.write('vault-cli: passphrase changed\n');
    return 0;
  }
  throw new VaultError('VLT-1001');
};
