/** `vault-cli vault create|passwd|rekey|backup|check|restore`. */
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ERRORS, VaultError, isErrorCode } from '../../core/errors.js';
import { arg, flag, flagString } from '../context.js';
import { passphrase, secretInput } from '../io.js';
import { offerKeyEnrolment } from '../key-offer.js';
import { askPassphrase, ownerPassphrase } from '../owner.js';
export const run = async (ctx) => {
    const sub = ctx.inv.command?.path[1];
    if (sub === 'create') {
        const testWeakKdf = ctx.paths.testWeakKdf;
        // The host's own rule, applied at the first prompt rather than after the second.
        const { checkNewPassphrase } = await import('../../host/owner/keys.js');
        const typed = await askPassphrase(ctx, true, checkNewPassphrase);
        const store = flagString(ctx, 'store');
        const { recoveryKey } = await ctx.call('vault.create', {
            passphrase: typed,
            ...(testWeakKdf ? { testWeakKdf } : {}),
            ...(store !== undefined ? { store } : {}),
        });
        if (testWeakKdf)
            ctx.stderr.write("vault-cli: test-only: this vault's passphrase KDF is weak\n");
        ctx.stderr.write(`vault-cli: vault created in ${store === undefined ? ctx.paths.vaultDir : 'the database'}\n` +
            'vault-cli: the recovery key below is shown once; keep it offline. It can reset the passphrase (vault passwd --recovery).\n');
        ctx.stdout.write(recoveryKey + '\n');
        await offerKeyEnrolment(ctx, typed);
        return 0;
    }
    if (sub === 'rekey') {
        // The passphrase itself, not the session: rekey wraps the new root key with it.
        const { recoveryKey } = await ctx.call('vault.rekey', {
            passphrase: await askPassphrase(ctx),
        });
        ctx.stderr.write('vault-cli: new root key made; the old recovery key no longer works.\n' +
            'vault-cli: the new recovery key below is shown once; keep it offline.\n');
        ctx.stdout.write(recoveryKey + '\n');
        return 0;
    }
    if (sub === 'passwd') {
        let auth;
        if (flag(ctx, 'recovery')) {
            const r = await secretInput(ctx.stdin, 'Recovery key');
            auth = { recoveryKey: r.expose().toString('utf8').trim() };
            r.wipe();
        }
        else {
            auth = { passphrase: await askPassphrase(ctx) };
        }
        const { checkNewPassphrase } = await import('../../host/owner/keys.js');
        const next = await passphrase(ctx.paths.newPassphraseFile, 'New vault passphrase', true, checkNewPassphrase);
        await ctx.call('vault.passwd', { ...auth, newPassphrase: next.expose().toString('utf8') });
        next.wipe();
        ctx.stderr.write('vault-cli: passphrase changed\n');
        return 0;
    }
    if (sub === 'migrate')
        return migrate(ctx);
    if (sub === 'backup')
        return backup(ctx);
    if (sub === 'check')
        return check(ctx);
    if (sub === 'restore')
        return restore(ctx);
    throw new VaultError('VLT-1001');
};
function describeBackup(b) {
    const head = b.head === null ? 'empty' : `record ${b.head.seq}, ${b.head.hash.slice(0, 16)}`;
    return (`  entries        ${b.entries}\n` +
        `  agents         ${b.agents}\n` +
        `  audit records  ${b.auditRecords}\n` +
        `  chain head     ${head}\n` +
        `  size           ${b.bytes} bytes\n`);
}
async function backup(ctx) {
    const path = resolve(arg(ctx, 'file'));
    const summary = await ctx.call('vault.backup', { passphrase: await ownerPassphrase(ctx), path });
    if (flag(ctx, 'json'))
        ctx.stdout.write(JSON.stringify(summary) + '\n');
    else
        ctx.stdout.write(`backup written to ${summary.path}\n${describeBackup(summary)}`);
    return 0;
}
async function migrate(ctx) {
    const to = flagString(ctx, 'to');
    if (to === undefined)
        throw new VaultError('VLT-1001', 'vault migrate needs --to <url|lmdb>.');
    const done = await ctx.call('vault.migrate', { passphrase: await ownerPassphrase(ctx), to });
    if (flag(ctx, 'json'))
        ctx.stdout.write(JSON.stringify(done) + '\n');
    else
        ctx.stdout.write(`vault migrate: ${done.records} records copied from ${done.from} to ${done.to} and read back equal\n`);
    return 0;
}
async function check(ctx) {
    const report = await ctx.call('vault.check', { passphrase: await ownerPassphrase(ctx) });
    if (flag(ctx, 'json')) {
        ctx.stdout.write(JSON.stringify(report) + '\n');
    }
    else {
        for (const p of report.problems) {
            ctx.stderr.write(`vault-cli: ${p.code}: ${p.where}: ${p.message}\n`);
        }
        const summary = `${report.records} records, ${report.entries} entries, ${report.agents} agents, ` +
            `${report.auditRecords} audit records`;
        if (report.problems.length === 0)
            ctx.stdout.write(`vault check: no damage found (${summary})\n`);
        else
            ctx.stdout.write(`vault check: ${report.problems.length} problem(s) (${summary})\n`);
    }
    if (report.problems.length === 0)
        return 0;
    const first = report.problems[0]?.code;
    return isErrorCode(first) ? ERRORS[first].exit : 74;
}
function describePreview(p) {
    const list = (xs) => xs.length === 0 ? 'none' : xs.map((x) => JSON.stringify(x)).join(', ');
    return (`The backup holds:\n${describeBackup(p.backup)}` +
        (p.currentReadable
            ? `Restoring it would roll back the current vault:\n`
            : `There is no current vault it can be compared with (none, or it does not open).\n`) +
        `  agents that come back       ${list(p.revivedAgents)}\n` +
        `  locks that lift             ${list(p.liftedLocks)}\n` +
        `  rotations undone            ${list(p.undoneRotations)}\n` +
        `  entries lost                ${list(p.lostEntries)}\n` +
        `  audit records lost          ${p.lostAuditRecords} of ${p.currentAuditRecords}\n`);
}
async function confirmed(ctx) {
    if (flag(ctx, 'yes'))
        return true;
    if (ctx.stdin.isTTY !== true)
        throw new VaultError('VLT-1010');
    const rl = createInterface({ input: ctx.stdin, output: ctx.stderr });
    try {
        const answer = await new Promise((r) => rl.question('Restore this backup? [y/N] ', r));
        return /^y(es)?$/i.test(answer.trim());
    }
    finally {
        rl.close();
    }
}
async function restore(ctx) {
    const path = resolve(arg(ctx, 'file'));
    // The passphrase itself: restore opens the backup with it too.
    const passphrase = await askPassphrase(ctx);
    const json = flag(ctx, 'json');
    const { preview } = await ctx.call('vault.restore', { passphrase, path, confirm: false });
    if (json)
        ctx.stdout.write(JSON.stringify({ preview, restored: false }) + '\n');
    else
        ctx.stdout.write(describePreview(preview));
    if (flag(ctx, 'dry-run'))
        return 0;
    if (!(await confirmed(ctx))) {
        ctx.stderr.write('vault-cli: nothing restored\n');
        return 1;
    }
    const done = await ctx.call('vault.restore', { passphrase, path, confirm: true });
    if (json)
        ctx.stdout.write(JSON.stringify(done) + '\n');
    else {
        ctx.stdout.write('vault restored and verified\n');
        if (done.keptAside !== null) {
            ctx.stdout.write(`the vault as it was is kept at ${done.keptAside} (delete it when satisfied)\n`);
        }
    }
    return 0;
}
