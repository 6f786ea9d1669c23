/**
 * The real DashboardApi: owner calls to the vault host over the client, the
 * audit feed over `follow`, unlocks through the hardware-key ceremony. The
 * calls go without the passphrase: the terminal's owner session stands for it
 * (src/host/owner/unlock.ts), so no call costs a key derivation. The
 * passphrase, when the owner typed one, stays in this closure to open the
 * session again when it ran out; nothing here shows or logs it.
 */
import { call } from '../src/client/client.js';
import { follow } from '../src/client/follow.js';
import { VaultError } from '../src/core/errors.js';
import { enrolKey, unlockWithKey } from '../src/webauthn/ceremony.js';
/** How long the audit feed waits before following again after the host went away. */
const RECONNECT_MS = 1000;
const noSession = (err) => err instanceof VaultError && err.code === 'VLT-2054';
const notProved = (err) => err instanceof VaultError && err.code === 'VLT-2055';
/**
 * Owner calls on the terminal's owner session. With `passphrase`, a session
 * that ran out is opened again with it, and a caller the host gives no session
 * (no terminal of its own) sends it with each call instead.
 */
class OwnerCalls {
    client;
    passphrase;
    /** Set once the host has said this caller can hold no session: the passphrase goes with each call. */
    sessionless = false;
    constructor(client, passphrase) {
        this.client = client;
        this.passphrase = passphrase;
    }
    /** What proves the owner in a request besides the session: the passphrase, once sessionless. */
    auth() {
        return this.sessionless ? { passphrase: this.passphrase } : {};
    }
    async call(op, body) {
        const { client, passphrase } = this;
        if (passphrase === undefined || this.sessionless)
            return call(client, op, { ...body, ...this.auth() });
        try {
            return await call(client, op, body);
        }
        catch (err) {
            // What the session alone does not prove (VLT-2055) goes with the passphrase `run` kept.
            if (notProved(err))
                return call(client, op, { ...body, passphrase });
            if (!noSession(err))
                throw err;
        }
        try {
            await call(client, 'owner.unlock', { passphrase });
        }
        catch (err) {
            if (!noSession(err))
                throw err;
            this.sessionless = true;
        }
        return call(client, op, { ...body, ...this.auth() });
    }
    /** Opens the session again, when there is a passphrase to open it with; whether it opened. */
    async reopen() {
        if (this.passphrase === undefined || this.sessionless)
            return false;
        return call(this.client, 'owner.unlock', { passphrase: this.passphrase }).then(() => true, () => false);
    }
}
/**
 * The dashboard's api over a vault host. Every call is an owner call on the
 * terminal's owner session. With `passphrase`, a session that ran out is
 * opened again with it, and a caller the host gives no session (no terminal
 * of its own) sends it with each call instead. Errors are the host's
 * VaultErrors (VLT-3002 wrong passphrase, VLT-2054 no session, VLT-3005 no
 * host...), thrown from the promise that made the call.
 */
export function hostDashboardApi(client, passphrase, hooks = {}) {
    const owner = new OwnerCalls(client, passphrase);
    /** The latest record this api has handed out: the feed follows from there, no gap, no replay. */
    let lastSeq = null;
    const seen = (records) => {
        const last = records[records.length - 1];
        if (last !== undefined && (lastSeq === null || last.seq > lastSeq))
            lastSeq = last.seq;
    };
    /** What the hardware-key ceremonies are given: the host, and where the page's URL goes. */
    const ceremony = (onUrl) => ({
        call: (op, body) => call(client, op, body),
        onUrl: (url) => {
            onUrl(url);
            hooks.onUrl?.(url);
        },
        ...(hooks.timeoutMs === undefined ? {} : { timeoutMs: hooks.timeoutMs }),
    });
    return {
        agents: async () => (await owner.call('agent.ls', {})).agents,
        entries: async () => (await owner.call('entry.ls', {})).entries,
        recentAudit: async (limit) => {
            const { records } = await owner.call('audit.list', { last: limit });
            seen(records);
            return records;
        },
        // Each feed keeps its own place: run's dashboard comes and goes on one api.
        followAudit: (onRecord, onError) => auditFeed(client, owner, lastSeq, (record) => {
            seen([record]);
            onRecord(record);
        }, onError),
        setField: async (entry, field, value) => {
            const { version } = await owner.call('entry.set', {
                entry,
                field,
                value: Buffer.from(value, 'utf8').toString('base64'),
            });
            return { version };
        },
        removeEntry: async (entry) => {
            await owner.call('entry.rm', { entry });
        },
        addAgent: async (name, kind, scope, limits) => owner.call('agent.add', { name, kind, scope, limits }),
        revokeAgent: async (name) => {
            await owner.call('agent.revoke', { name });
        },
        changeScope: async (name, add, rm) => {
            await owner.call('agent.scope', { name, add, rm });
        },
        changeLimits: async (name, perMinute, perHour) => {
            await owner.call('agent.limits', {
                name,
                ...(perMinute === undefined ? {} : { perMinute }),
                ...(perHour === undefined ? {} : { perHour }),
            });
        },
        unlock: async (name, onUrl) => (await unlockWithKey(name, passphrase, ceremony(onUrl))).status,
        enrolKey: async (onUrl) => {
            const key = await enrolKey(passphrase, undefined, ceremony(onUrl));
            return { name: key.name };
        },
    };
}
/**
 * The audit records after `after` (null: after the latest), each to
 * `onRecord` once and in order, followed again after each outage until the
 * returned function stops it.
 */
function auditFeed(client, owner, after, onRecord, onError) {
    const stopped = new AbortController();
    const { signal } = stopped;
    const onLine = (line) => {
        let record;
        try {
            record = JSON.parse(line);
        }
        catch {
            onError(new VaultError('VLT-3007', 'The vault host sent a malformed audit record.'));
            return;
        }
        if (after !== null && record.seq <= after)
            return;
        after = record.seq;
        onRecord(record);
    };
    void (async () => {
        // One error per outage: the feed keeps trying, the dashboard shows it once.
        let reported = false;
        while (!signal.aborted) {
            try {
                if (after === null)
                    after = (await owner.call('audit.list', { last: 1 })).records.at(-1)?.seq ?? 0;
                if (signal.aborted)
                    return;
                await follow(client, 'audit.follow', { ...owner.auth(), afterSeq: after }, (line) => {
                    reported = false;
                    onLine(line);
                }, signal);
                if (signal.aborted)
                    return;
                throw new VaultError('VLT-3005', 'The vault host ended the audit feed; following again.');
            }
            catch (err) {
                if (signal.aborted)
                    return;
                // The session ran out under the feed: open it again, and follow on at once.
                if (noSession(err) && (await owner.reopen()))
                    continue;
                if (!reported)
                    onError(err instanceof Error ? err : new Error(String(err)));
                reported = true;
                await pause(RECONNECT_MS, signal);
            }
        }
    })();
    return () => stopped.abort();
}
/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms, signal) {
    return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
        }
        signal.addEventListener('abort', done, { once: true });
    });
}
