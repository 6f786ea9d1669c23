/**
 * What `vault create` says about hardware keys, so that the first lockdown is
 * not the owner's first word of WebAuthn: lifting a lock needs an enrolled key
 * (a USB security key, or a platform passkey). On a terminal it offers to enrol
 * one at once; anywhere else it asks nothing, so a scripted create never waits.
 */
import { createInterface } from 'node:readline';
import { VaultError } from '../core/errors.js';
const WHY = 'vault-cli: an agent that over-reads is locked, and only an enrolled hardware key lifts the lock: a USB security key, or a platform passkey (your browser’s or your OS’s); see docs/hardware-key.md\n';
const LATER = 'vault-cli: enrol one later with `vault-cli key add` (a spare too)\n';
/**
 * Whether the owner is at a terminal to answer: stdin and stderr both one, and
 * the passphrase typed (one from VAULT_PASSPHRASE_FILE is a script's).
 */
function interactive(ctx) {
    return (ctx.paths.passphraseFile === null &&
        ctx.stdin.isTTY === true &&
        ctx.stderr.isTTY === true);
}
async function yes(ctx, question) {
    const rl = createInterface({ input: ctx.stdin, output: ctx.stderr });
    try {
        const answer = await new Promise((r) => rl.question(question, r));
        return /^y(es)?$/i.test(answer.trim());
    }
    finally {
        rl.close();
    }
}
/**
 * After `vault create`, on a terminal: says why a key matters and, when the
 * passphrase was typed there, offers to enrol one now with it (the `key add`
 * ceremony; the page's address is printed, no browser is started from here).
 * Declined, or with a passphrase file, it says how to do it later; with
 * stderr not a terminal it says nothing. An enrolment that fails
 * says why and leaves the new vault as it is: create has succeeded.
 */
export async function offerKeyEnrolment(ctx, passphrase) {
    const shown = ctx.stderr.isTTY === true;
    if (shown)
        ctx.stderr.write(WHY);
    if (!interactive(ctx)) {
        if (shown)
            ctx.stderr.write(LATER);
        return;
    }
    if (!(await yes(ctx, 'Enrol a hardware key now? [y/N] '))) {
        ctx.stderr.write(LATER);
        return;
    }
    const { enrolKey } = await import('../webauthn/ceremony.js');
    try {
        const key = await enrolKey(passphrase, undefined, {
            call: (op, body) => ctx.call(op, body),
            onUrl: (url) => ctx.stderr.write(`vault-cli: enrol a hardware key: open ${url} in a browser on this machine and touch your key\n`),
        });
        ctx.stderr.write(`vault-cli: enrolled hardware key ${key.name}; enrol a spare with \`vault-cli key add\`\n`);
    }
    catch (err) {
        ctx.stderr.write((err instanceof VaultError ? err.line() : 'vault-cli: the enrolment did not finish') + '\n');
        ctx.stderr.write(LATER);
    }
}
