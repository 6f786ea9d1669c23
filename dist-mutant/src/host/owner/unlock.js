/**
 * Owner sessions: `vault-cli unlock` leaves the owner's root key in the host
 * for a limited time, and owner requests from the same terminal use it
 * instead of a passphrase. A session is bound the way sudo binds its
 * timestamp: to the caller's controlling terminal, its session id and the
 * start time of that session's leader, all read by the host from the kernel
 * (SO_PEERCRED, then /proc) for the process at the other end of the socket.
 * Nothing the caller writes, and no file it could read, names a session.
 *
 * Refused outright (no session is ever found for them): a caller with no
 * controlling terminal, one in another PID namespace (everything inside a
 * `run` sandbox), one whose pid the host cannot see in its /proc, and one of
 * another uid. A process inside `run` has its own pty and session anyway.
 *
 * The root key is kept in guarded memory (sodium_malloc: locked, out of core
 * dumps) and wiped at expiry, `lock`, and when the host stops; each request
 * gets its own short-lived copy, wiped with the request's OwnerSession.
 *
 * A process hold is narrower: one owner command that sent the passphrase and
 * will send many requests (`sweep` marks what it finds as it goes) asks the
 * host to keep the key for that one process, named by pid and the process's
 * own start time, terminal or none. No other process matches, not even one
 * of the same terminal; it ends when the process is gone (checked every few
 * seconds), after PROCESS_IDLE_MS unused, or at MAX_TTL_MS. The process held
 * the passphrase itself all along, so it gains nothing it did not have.
 */
import { readFileSync } from 'node:fs';
import { VaultError } from '../../core/errors.js';
import { KEY_BYTES, allocate, unwrapKey, wipe } from '../../crypto/aead.js';
import { sessionFromRoot } from './keys.js';
import { slots } from '../keys/slots.js';
/** Default lifetime of a session, absolute from `unlock`. */
export const DEFAULT_TTL_MS = 15 * 60_000;
/** Default idle timeout: a session unused this long ends before its lifetime. */
export const DEFAULT_IDLE_MS = 5 * 60_000;
/** The longest a session may be asked to last (a working day). */
export const MAX_TTL_MS = 12 * 3_600_000;
/** The longest idle timeout the host's configuration may set (`unlock --idle` may ask up to the lifetime). */
export const MAX_CONFIG_IDLE_MS = 3_600_000;
/** A process hold unused this long ends: a sweep marks every 200 ms while it scans. */
export const PROCESS_IDLE_MS = 10 * 60_000;
/** How often the host looks whether a held process is still there. */
const PROCESS_CHECK_MS = 2_000;
export const DEFAULT_TERMS = { ttlMs: DEFAULT_TTL_MS, idleMs: DEFAULT_IDLE_MS };
/** Whole minutes, 0 or more, else null (absent, or not a count). */
function minutes(text) {
    if (text === undefined || !/^\d{1,9}$/.test(text.trim()))
        return null;
    return Number(text.trim()) * 60_000;
}
/**
 * The session terms a configuration asks for (VAULT_OWNER_SESSION_MINUTES,
 * VAULT_OWNER_IDLE_MINUTES), bounded: whoever started the host chose its
 * environment, and in same-user mode that may be an agent. The lifetime is at
 * most MAX_TTL_MS (12 h), the idle timeout at most MAX_CONFIG_IDLE_MS (1 h)
 * and never longer than the lifetime; a value that is not a whole number of
 * minutes is the default. A lifetime of 0 turns owner sessions off.
 */
export function sessionTerms(session, idle) {
    const ttlMs = Math.min(minutes(session) ?? DEFAULT_TTL_MS, MAX_TTL_MS);
    const asked = minutes(idle) ?? DEFAULT_IDLE_MS;
    return { ttlMs, idleMs: Math.max(1, Math.min(asked, MAX_CONFIG_IDLE_MS, ttlMs)) };
}
/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function statFields(proc, pid) {
    let text;
    try {
        text = readFileSync(`${proc}/${pid}/stat`, 'utf8');
    }
    catch {
        return null;
    }
    const close = text.lastIndexOf(')');
    return close < 0 ? null : text.slice(close + 2).split(' ');
}
/**
 * The pids of `pid` in each PID namespace from the /proc mount's down to its
 * own (`NSpid`): one number when it lives in the host's namespace.
 */
function nsPids(proc, pid) {
    try {
        const line = readFileSync(`${proc}/${pid}/status`, 'utf8')
            .split('\n')
            .find((l) => l.startsWith('NSpid:'));
        return line === undefined ? null : line.slice('NSpid:'.length).trim().split(/\s+/);
    }
    catch {
        return null;
    }
}
/**
 * The binding of the process `peer` names (from SO_PEERCRED), or null when it
 * may hold no session: pid 0 (the kernel maps no pid: another namespace), a
 * pid not in this /proc, a process in a nested PID namespace, one with no
 * controlling terminal, or a session leader gone.
 */
export function bindingOf(peer, proc = '/proc') {
    if (peer.pid <= 0)
        return null;
    const ns = nsPids(proc, peer.pid);
    if (ns === null || ns.length !== 1 || ns[0] !== String(peer.pid))
        return null;
    // After the name: state(0) ppid(1) pgrp(2) session(3) tty_nr(4) ... starttime(19).
    const f = statFields(proc, peer.pid);
    const sid = Number(f?.[3]);
    const tty = Number(f?.[4]);
    if (!Number.isInteger(sid) || sid <= 0 || !Number.isInteger(tty) || tty === 0)
        return null;
    const leaderStart = statFields(proc, sid)?.[19];
    if (leaderStart === undefined || !/^\d+$/.test(leaderStart))
        return null;
    return { uid: peer.uid, tty, sid, leaderStart };
}
/**
 * The process `peer` names, or null when it may hold nothing: pid 0 (another
 * PID namespace), a pid not in this /proc, or one in a nested namespace.
 */
export function processOf(peer, proc = '/proc') {
    if (peer.pid <= 0)
        return null;
    const ns = nsPids(proc, peer.pid);
    if (ns === null || ns.length !== 1 || ns[0] !== String(peer.pid))
        return null;
    const start = statFields(proc, peer.pid)?.[19];
    if (start === undefined || !/^\d+$/.test(start))
        return null;
    return { uid: peer.uid, pid: peer.pid, start };
}
/** The terminal's name for the audit (`pts/3`), from its device number. */
export function ttyName(tty) {
    const major = (tty >> 8) & 0xfff;
    const minor = (tty & 0xff) | ((tty >> 12) & 0xfff00);
    if (major >= 136 && major <= 143)
        return `pts/${(major - 136) * 256 + minor}`;
    if (major === 4)
        return `tty${minor}`;
    return `tty ${major}:${minor}`;
}
const keyOf = (b) => `${b.uid}:${b.tty}:${b.sid}:${b.leaderStart}`;
const processKey = (p) => `process:${p.uid}:${p.pid}:${p.start}`;
/** The host's owner sessions, one per bound terminal. */
export class OwnerSessions {
    now;
    terms;
    proc;
    #held = new Map();
    constructor(now, 
    /** What a session lasts when `unlock` does not say (the host's configuration). */
    terms = DEFAULT_TERMS, proc = '/proc') {
        this.now = now;
        this.terms = terms;
        this.proc = proc;
    }
    /**
     * Keeps a copy of `s`'s root key for `binding`, replacing any session it had.
     * @returns when it expires.
     */
    open(binding, s, ttlMs, idleMs) {
        this.end(binding);
        return this.#keep(keyOf(binding), s, ttlMs, idleMs);
    }
    /**
     * Keeps a copy of `s`'s root key for the one process `p` (a process hold:
     * see the header), replacing any it had; whether it did (false: the host
     * cannot name the caller's process).
     */
    hold(p, s) {
        if (p === null)
            return false;
        const key = processKey(p);
        this.#drop(key);
        this.#keep(key, s, MAX_TTL_MS, PROCESS_IDLE_MS, () => processOf(p, this.proc)?.start === p.start);
        return true;
    }
    #keep(key, s, ttlMs, idleMs, alive) {
        const root = allocate(KEY_BYTES, true);
        s.rootKey().copy(root);
        const now = this.now();
        const held = {
            root,
            vaultId: Buffer.from(s.vaultId),
            expires: now + Math.min(ttlMs, MAX_TTL_MS),
            idleMs: Math.min(idleMs, ttlMs),
            lastUsed: now,
            timer: undefined,
            ...(alive === undefined ? {} : { alive }),
        };
        this.#held.set(key, held);
        this.#schedule(key, held);
        return { expires: held.expires, idleMs: held.idleMs };
    }
    /** The live session of `binding`, or null (an expired one is wiped on the way). */
    view(binding) {
        const held = binding === null ? undefined : this.#live(keyOf(binding));
        return held === undefined ? null : { expires: held.expires, idleMs: held.idleMs };
    }
    /**
     * An OwnerSession for this request from the hold of the calling process,
     * else from `binding`'s session, which counts as a use (the idle timeout
     * starts again).
     * @throws VaultError VLT-2054 when neither is live, or its key no longer
     * opens the vault (rekeyed or restored since).
     */
    use(binding, header, caller = () => null) {
        // The caller's /proc is read only while some process holds a key.
        const p = this.#processes() ? caller() : null;
        const byProcess = p === null ? undefined : this.#live(processKey(p));
        const key = byProcess !== undefined && p !== null
            ? processKey(p)
            : binding === null
                ? null
                : keyOf(binding);
        const held = byProcess ?? (key === null ? undefined : this.#live(key));
        if (held === undefined || key === null)
            throw new VaultError('VLT-2054');
        const probe = unwrapKey(held.root, header.indexKey, slots.indexKey(header.vaultId));
        if (probe === null || !held.vaultId.equals(header.vaultId)) {
            this.#drop(key);
            throw new VaultError('VLT-2054');
        }
        wipe(probe);
        held.lastUsed = this.now();
        const root = allocate(KEY_BYTES, true);
        held.root.copy(root);
        const s = sessionFromRoot(header, root);
        s.provedBy = byProcess !== undefined ? 'process' : 'terminal';
        return s;
    }
    /** Ends `binding`'s session; whether there was one. */
    end(binding) {
        if (binding === null)
            return false;
        const key = keyOf(binding);
        const had = this.#live(key) !== undefined;
        this.#drop(key);
        return had;
    }
    /** Whether any session is live: the host does not idle out under one. */
    anyLive() {
        return [...this.#held.keys()].some((key) => this.#live(key) !== undefined);
    }
    /** Ends every session (the host stops). */
    endAll() {
        for (const key of [...this.#held.keys()])
            this.#drop(key);
    }
    #processes() {
        for (const held of this.#held.values())
            if (held.alive !== undefined)
                return true;
        return false;
    }
    #live(key) {
        const held = this.#held.get(key);
        if (held === undefined)
            return undefined;
        const now = this.now();
        if (now >= held.expires ||
            now - held.lastUsed >= held.idleMs ||
            (held.alive !== undefined && !held.alive())) {
            this.#drop(key);
            return undefined;
        }
        return held;
    }
    #drop(key) {
        const held = this.#held.get(key);
        if (held === undefined)
            return;
        clearTimeout(held.timer);
        wipe(held.root);
        this.#held.delete(key);
    }
    /** Wipes the key when the session runs out (or its process ends), even if no request comes to notice. */
    #schedule(key, held) {
        const ends = Math.min(held.expires, held.lastUsed + held.idleMs) - this.now();
        const due = held.alive === undefined ? ends : Math.min(ends, PROCESS_CHECK_MS);
        held.timer = setTimeout(() => {
            if (this.#live(key) !== undefined)
                this.#schedule(key, held);
        }, Math.max(due, 0) + 10);
        held.timer.unref();
    }
}
