/** `vault-cli key add|ls|rm`: the owner's hardware keys (WebAuthn credentials). */
import { formatTime } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { arg, flag, flagString } from '../context.js';
import { secretInput } from '../io.js';
import { ownerPassphrase, table } from '../owner.js';
export const run = async (ctx) => {
    const sub = ctx.inv.command?.path[1];
    const passphrase = await ownerPassphrase(ctx);
    switch (sub) {
        case 'add': {
            const [{ enrolKey }, { ceremonyHooks }] = await Promise.all([
                import('../../webauthn/ceremony.js'),
                import('../ceremony.js'),
            ]);
            // The recovery key stands in for an enrolled key's confirmation (a lost key).
            let recoveryKey;
            if (flag(ctx, 'recovery')) {
                const r = await secretInput(ctx.stdin, 'Recovery key');
                recoveryKey = r.expose().toString('utf8').trim();
                r.wipe();
            }
            const key = await enrolKey(passphrase, flagString(ctx, 'name'), ceremonyHooks(ctx, 'enrol a hardware key'), recoveryKey);
            ctx.stderr.write(`vault-cli: enrolled hardware key ${key.name}\n`);
            const { keys } = await ctx.call('key.ls', { passphrase });
            if (keys.length === 1) {
                ctx.stderr.write('vault-cli: this is the only key that can lift a lockdown: enrol a second one as a spare\n');
            }
            return 0;
        }
        case 'ls': {
            const { keys } = await ctx.call('key.ls', { passphrase });
            if (flag(ctx, 'json')) {
                ctx.stdout.write(JSON.stringify(keys) + '\n');
                return 0;
            }
            if (keys.length === 0) {
                ctx.stderr.write('vault-cli: no hardware key enrolled; enrol one with `vault-cli key add`\n');
                return 0;
            }
            ctx.stdout.write(table([
                ['NAME', 'ENROLLED', 'LAST USED', 'COUNTER'],
                ...keys.map((k) => [
                    k.name,
                    formatTime(k.created),
                    k.lastUsed === null ? 'never' : formatTime(k.lastUsed),
                    String(k.counter),
                ]),
            ]));
            return 0;
        }
        case 'rm': {
            const name = arg(ctx, 'name');
            await ctx.call('key.rm', { passphrase, name });
            ctx.stderr.write(`vault-cli: removed hardware key ${name}\n`);
            return 0;
        }
        default:
            throw new VaultError('VLT-1001');
    }
};
