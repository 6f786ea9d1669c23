/**
 * Whole hardware-key ceremonies for any front end (the CLI's `key add` and
 * `agent unlock`, the dashboard's unlock key): serve the page, get a challenge
 * from the host, wait for the browser's answer, relay it to the host, and
 * report the host's verdict. The host decides; this only carries messages.
 * Both are owner operations: the passphrase goes with every call.
 */
import { VaultError } from '../core/errors.js';
import { CHALLENGE_TTL_MS } from '../core/webauthn.js';
import { startPageServer } from './page-server.js';
/**
 * Runs a ceremony: `begin` gets the first page's options for the server's
 * origin; each page's result goes to its step's relay; resolves with the last
 * one's value or rejects with the first error (a VaultError from the host).
 * @throws VaultError VLT-1002 when `hooks.port` is taken.
 */
async function run(hooks, begin) {
    const server = await startPageServer(hooks.port ?? 0).catch((err) => {
        if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
            throw new VaultError('VLT-1002', `Port ${hooks.port ?? 0} is not free for the ceremony page.`);
        }
        throw err;
    });
    try {
        const first = await begin(server.origin);
        if (first === null)
            return null;
        let outcome = null;
        const show = (step) => {
            const relay = async (result) => {
                try {
                    const r = await step.relay(result);
                    if ('next' in r)
                        return { ok: true, message: step.success, next: show(r.next) };
                    outcome = { ok: true, value: r.done };
                    return { ok: true, message: step.success };
                }
                catch (err) {
                    outcome = { ok: false, err };
                    return { ok: false, message: err instanceof VaultError ? err.message : 'Refused.' };
                }
            };
            const url = server.publish({ kind: step.kind, title: step.title, options: step.options }, relay, hooks.timeoutMs ?? CHALLENGE_TTL_MS);
            hooks.onUrl(url, step.what);
            return url;
        };
        show(first);
        await server.closed;
        const done = outcome;
        if (done === null)
            throw new VaultError('VLT-4007', 'The ceremony page closed without a result.');
        if (!done.ok)
            throw done.err;
        return done.value;
    }
    finally {
        server.close();
    }
}
/**
 * Lifts agent `name`'s lockdown with an enrolled hardware key: the owner's
 * passphrase, then the key, on a page that names the agent.
 * @throws VaultError VLT-3002 wrong passphrase, VLT-4002 no such agent,
 *   VLT-4004 no key enrolled, VLT-4007 not accepted, VLT-4008 counter did not
 *   increase (possible clone).
 */
export async function unlockWithKey(name, 
/** Absent: the terminal's owner session stands for it. */
passphrase, hooks) {
    const done = await run(hooks, async (origin) => {
        const r = await hooks.call('unlock.begin', { passphrase, name, origin });
        if ('notLocked' in r)
            return null;
        return {
            kind: 'get',
            // The host's own account of the agent: the page says what the touch unlocks.
            title: `Unlock agent ${r.agent.name} (id ${r.agent.id.slice(0, 12)})`,
            options: r.options,
            success: `Agent ${r.agent.name} is unlocked. You can close this page.`,
            relay: async (result) => ({
                done: await hooks.call('unlock.finish', {
                    passphrase,
                    challengeId: r.challengeId,
                    result,
                }),
            }),
        };
    });
    return done === null ? { status: 'not-locked' } : { status: 'unlocked' };
}
/**
 * Enrols a hardware key under `name` (default `key-<n>`). Once a key is
 * enrolled, an enrolled key confirms the new one first (two pages), unless
 * `recoveryKey` is given.
 * @throws VaultError VLT-3002 wrong passphrase or recovery key, VLT-4006 name
 *   or key taken, VLT-4007 not accepted, VLT-4008 the vouching key's counter.
 */
export async function enrolKey(passphrase, name, hooks, recoveryKey) {
    const create = (r) => {
        const keyName = r.options.user.name.replace(/^vault-cli /, '');
        return {
            kind: 'create',
            title: `Enrol hardware key ${keyName}`,
            what: `enrol hardware key ${keyName}`,
            options: r.options,
            success: 'The key is enrolled. You can close this page.',
            relay: async (result) => ({
                done: await hooks.call('key.finish', { passphrase, challengeId: r.challengeId, result }),
            }),
        };
    };
    const done = await run(hooks, async (origin) => {
        const r = await hooks.call('key.begin', {
            passphrase,
            origin,
            ...(name === undefined ? {} : { name }),
            ...(recoveryKey === undefined ? {} : { recoveryKey }),
        });
        if ('options' in r)
            return create(r);
        return {
            kind: 'get',
            title: 'Confirm with an enrolled key before a new one is added',
            what: 'first confirm with an enrolled key',
            options: r.vouch,
            success: 'Confirmed. Now go on to the next step and touch the new key.',
            relay: async (result) => ({
                next: create(await hooks.call('key.vouch', { passphrase, challengeId: r.challengeId, result })),
            }),
        };
    });
    if (done === null)
        throw new VaultError('VLT-4007', 'Could not enrol the hardware key.');
    return done;
}
/** Proof fields of a request body, not its arguments: never sent inside another request. */
const PROOF_FIELDS = new Set([
    'passphrase',
    'newPassphrase',
    'recoveryKey',
    'seenAnchor',
    'keyProof',
]);
/**
 * An enrolled key's touch for request `op` with `body` (an owner session with
 * a key enrolled, VLT-2070): the host binds the challenge to the op and its
 * arguments and the page names them; the assertion is checked when the
 * request is sent again with it, and stands for that request alone.
 * @throws VaultError VLT-4004 no key enrolled, VLT-4007 the page closed without an answer.
 */
export async function confirmRequest(op, body, hooks) {
    const args = Object.fromEntries(Object.entries(body).filter(([k]) => !PROOF_FIELDS.has(k)));
    const done = await run(hooks, async (origin) => {
        const r = await hooks.call('owner.confirm', { origin, op, body: args });
        return {
            kind: 'get',
            title: `Confirm ${r.what}`,
            what: `confirm ${r.what}`,
            options: r.options,
            success: 'Sent to vault-cli: the terminal says whether it was done. You can close this page.',
            relay: (result) => Promise.resolve({ done: { challengeId: r.challengeId, result } }),
        };
    });
    if (done === null)
        throw new VaultError('VLT-4007', 'The request was not confirmed.');
    return done;
}
