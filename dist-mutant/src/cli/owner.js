/**
 * The owner's side of the edge: the passphrase for one command (none when the
 * terminal holds an owner session, `vault-cli unlock`; else
 * VAULT_PASSPHRASE_FILE, else a prompt on the terminal), and the refusals that
 * come before any prompt: inside `vault-cli run`, and to an agent.
 */
import { join } from 'node:path';
import { formatTime } from '../core/audit.js';
import { VaultError, needsPassphraseItself } from '../core/errors.js';
import { SOCKET_NAME } from '../core/protocol.js';
import { passphrase } from './io.js';
// Built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');
const { connect } = process.getBuiltinModule('node:net');
function commandName(ctx) {
    return ['vault-cli', ...(ctx.inv.command?.path ?? [])].join(' ');
}
const AGENT_INSTEAD = 'an agent uses its token with get, totp, render or the proxy';
/**
 * Whether the process on the host's socket runs outside this process's PID
 * namespace, as it does for everything inside a `vault-cli run` sandbox (the
 * kernel then names no pid for the peer). Nothing is sent on the connection:
 * the peer is not yet known to be the host (src/client/host-check.ts). False
 * when nothing listens, or off Linux.
 */
async function hostOutsidePidNamespace(ctx) {
    if (process.platform !== 'linux')
        return false;
    const path = join(ctx.client.socketDir ?? ctx.client.vaultDir, SOCKET_NAME);
    const sock = connect(path);
    try {
        await new Promise((resolve, reject) => {
            sock.once('connect', resolve);
            sock.once('error', reject);
        });
        const { peerCred } = await import('../kernel/unix.js');
        return peerCred(sock).pid === 0;
    }
    catch {
        return false;
    }
    finally {
        sock.destroy();
    }
}
/**
 * Refuses an owner command inside a `vault-cli run` sandbox, before anything
 * is asked: there the agent holds the terminal, and a passphrase typed into
 * it is typed to the agent. The host would refuse it anyway (the session's
 * socket serves agent operations only, VLT-2051), but only after the prompt.
 * @throws VaultError VLT-2051 inside a sandbox.
 */
export async function refuseInsideRun(ctx) {
    if (await hostOutsidePidNamespace(ctx)) {
        throw new VaultError('VLT-2051', `${commandName(ctx)} is an owner command and this is inside \`vault-cli run\` (the agent's sandbox): run it in another terminal; inside, ${AGENT_INSTEAD}.`);
    }
}
/** Whether this process holds an agent's token: VAULT_TOKEN or the file `init` stored. */
function holdsToken(ctx) {
    const env = ctx.env.VAULT_TOKEN;
    return (env !== undefined && env !== '') || existsSync(ctx.paths.tokenFile);
}
/**
 * Whether this process has a controlling terminal (`tty_nr` in
 * /proc/self/stat, after the command name). True where /proc cannot say:
 * the host is asked then, as before.
 */
function hasTerminal() {
    if (process.platform !== 'linux')
        return true;
    try {
        const stat = readFileSync('/proc/self/stat', 'utf8');
        const tty = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[4];
        return tty === undefined || Number(tty) !== 0;
    }
    catch {
        return true;
    }
}
/**
 * Whether the host holds an owner session for this process's terminal. The
 * host decides from the kernel's word for the caller; nothing is sent but the
 * question. A host too old to know the question has none.
 */
export async function terminalUnlocked(ctx) {
    // The host keeps sessions for terminals only: for a process with none (a
    // script, CI, cron) the answer is no, and asking would cost a round trip
    // and a check of the host's process. Not asking is safe: the request that
    // then carries the passphrase is checked before it is sent (client/request.ts).
    if (!hasTerminal())
        return false;
    try {
        return (await ctx.call('owner.session', {})).session !== null;
    }
    catch (err) {
        if (err instanceof VaultError && err.code === 'VLT-1001')
            return false;
        throw err;
    }
}
/**
 * The passphrase for one owner command, or undefined when the terminal's
 * owner session stands for it (the host then sends the request without one).
 * `session: false` always asks: a new or changed passphrase, and the commands
 * that re-derive or re-check it (rekey, passwd, restore).
 * @throws VaultError VLT-1003 with no terminal and no passphrase file; to a
 * caller with a token (an agent), saying this is an owner command and what an
 * agent uses instead, never where a passphrase might be found.
 */
export async function ownerPassphrase(ctx, confirm = false, check, session = !confirm) {
    if (session && (await terminalUnlocked(ctx)))
        return undefined;
    // Shell completion asks for names this way: a terminal with no session is not prompted.
    if (ctx.env.VAULT_NO_PROMPT === '1' && ctx.paths.passphraseFile === null) {
        throw new VaultError('VLT-2054');
    }
    let typed = await askPassphrase(ctx, confirm, check);
    if (session && ctx.paths.passphraseFile === null && opensSession(ctx)) {
        // Typed at the terminal: a slip is asked again, PASSPHRASE_TRIES in all
        // (as sudo does); the host's growing delay between wrong ones still runs.
        for (let tries = 1;; tries++) {
            try {
                if (!(await openSession(ctx, typed)))
                    return typed;
                typedForSession = typed;
                return undefined;
            }
            catch (err) {
                if (!(err instanceof VaultError && err.code === 'VLT-3002'))
                    throw err;
                if (tries >= PASSPHRASE_TRIES)
                    throw err;
                ctx.stderr.write(`vault-cli: wrong passphrase (${tries} of ${PASSPHRASE_TRIES} tries); try again\n`);
                typed = await askPassphrase(ctx, confirm, check);
            }
        }
    }
    return typed;
}
/** Passphrases typed at the terminal before a wrong one is final (VLT-3002). */
export const PASSPHRASE_TRIES = 3;
/**
 * The passphrase this command's owner typed to open the terminal's session:
 * a request of the same command that the session alone does not prove
 * (VLT-2055) sends it instead of asking twice. It lives as long as the
 * command, as the typed passphrase always did.
 */
let typedForSession;
/**
 * The passphrase once more, for a request the host refused on the terminal's
 * owner session alone (VLT-2055: it releases a value or loosens a rule). The
 * owner is told which command asks, so a prompt that a script, a hook or a
 * `.envrc` raised is seen for what it is; from VAULT_PASSPHRASE_FILE when set.
 * @throws VaultError VLT-2055 when no one can answer here: no passphrase file,
 * and stdin is not a terminal (a git hook runs with it closed, a daemon or a
 * pipe has none). Nothing was done.
 */
export async function proveAgain(ctx, refusal) {
    if (typedForSession !== undefined)
        return typedForSession;
    const file = ctx.paths.passphraseFile;
    if (file === null && ctx.stdin.isTTY !== true) {
        throw new VaultError('VLT-2055', `${commandName(ctx)}: ${refusal.message.replace(/\.$/, '')}; there is no terminal on stdin to ask on, so nothing was done. Run it yourself at a terminal.`, { cause: refusal });
    }
    if (file === null)
        ctx.stderr.write(`vault-cli: ${commandName(ctx)}: ${refusal.message}\n`);
    typedForSession = await askPassphrase(ctx);
    return typedForSession;
}
/**
 * The passphrase itself, for a command whose requests the terminal's owner
 * session does not stand for (`run`: its session token acts for the agent):
 * asked as proveAgain asks when the terminal is unlocked (refused with no
 * terminal on stdin), else as any owner command without a session is.
 * @param what what the command releases, as the refusal names it.
 */
export async function passphraseItself(ctx, what) {
    if (ctx.paths.passphraseFile === null && (await terminalUnlocked(ctx))) {
        return proveAgain(ctx, needsPassphraseItself(what));
    }
    return (await ownerPassphrase(ctx, false, undefined, false)) ?? '';
}
/** Whether `body` left the passphrase out, for the terminal's owner session to stand for it. */
export function sentWithoutPassphrase(body) {
    const sent = body.passphrase;
    return sent === undefined;
}
/**
 * Whether a passphrase typed for this command opens the terminal's owner
 * session, as `vault-cli unlock` would: yes, but for `daemon stop` (the
 * session would end with the host at once) and `run`, which keeps the
 * passphrase for its dashboard's calls for as long as the agent runs, hours
 * after a session would have idled out. A passphrase file never does: it
 * serves scripts, and a session is the terminal's. A host configured without
 * owner sessions (VAULT_OWNER_SESSION_MINUTES=0) opens none.
 */
function opensSession(ctx) {
    const path = ctx.inv.command?.path ?? [];
    return !((path[0] === 'daemon' && path[1] === 'stop') || path[0] === 'run');
}
/**
 * Opens the terminal's owner session with the passphrase just typed (one key
 * derivation, in place of the command's own) and says so, with how to end it.
 * False when the host gives this caller none (no terminal it can see,
 * sessions off): the command then sends the passphrase itself.
 * @throws VaultError the host's refusal of the passphrase (VLT-3002 and the guess delay).
 */
async function openSession(ctx, typed) {
    let opened;
    try {
        opened = await ctx.call('owner.unlock', { passphrase: typed });
    }
    catch (err) {
        if (err instanceof VaultError && (err.code === 'VLT-2054' || err.code === 'VLT-1001')) {
            return false;
        }
        throw err;
    }
    ctx.stderr.write(unlockedLine(opened));
    return true;
}
/** What the owner is told when a session opens: where, until when, and how to end it. */
export function unlockedLine(opened) {
    return (`vault-cli: unlocked on ${opened.terminal} until ${formatTime(opened.expires)}` +
        ` (or after ${Math.round(opened.idleMs / 60_000)} min without an owner command); vault-cli lock ends it\n`);
}
/** The passphrase itself, from VAULT_PASSPHRASE_FILE or the terminal; never the session. */
export async function askPassphrase(ctx, confirm = false, check) {
    let s;
    try {
        s = await passphrase(ctx.paths.passphraseFile, 'Vault passphrase', confirm, check);
    }
    catch (err) {
        if (err instanceof VaultError && err.code === 'VLT-1003' && holdsToken(ctx)) {
            throw new VaultError('VLT-1003', `${commandName(ctx)} is an owner command: it needs the vault passphrase, typed by the owner at a terminal; ${AGENT_INSTEAD}.`, { cause: err });
        }
        throw err;
    }
    const text = s.expose().toString('utf8');
    s.wipe();
    return text;
}
/**
 * The owner's proof for the many requests of one command (a sweep marks what
 * it finds every 200 ms): the terminal's session when it stands for the
 * passphrase; else the passphrase once, asking the host to hold the owner key
 * for this process alone (src/host/owner/unlock.ts), and nothing after while
 * it does. Each passphrase the host gets is a full Argon2id run, about a
 * second; sent with every mark, they were most of a sweep's cost to the host.
 * A hold that lapsed (the host restarted, or the vault was rekeyed) is asked
 * again with the passphrase. Every request still names the passphrase field,
 * so the client checks the host before each (client/request.ts ownerRequest).
 */
export class OwnerProof {
    ctx;
    passphrase;
    #held = false;
    constructor(ctx, 
    /** Undefined when the terminal's owner session stands for it. */
    passphrase) {
        this.ctx = ctx;
        this.passphrase = passphrase;
    }
    /** What a request that cannot ask to hold carries (a stream: `audit.follow`). */
    get current() {
        return { passphrase: this.#held ? undefined : this.passphrase };
    }
    async call(op, body) {
        if (this.passphrase === undefined || this.#held) {
            try {
                return await this.ctx.call(op, { ...body, passphrase: undefined });
            }
            catch (err) {
                const lapsed = err instanceof VaultError && err.code === 'VLT-2054';
                if (!lapsed || this.passphrase === undefined)
                    throw err;
                this.#held = false;
            }
        }
        const res = await this.ctx.call(op, {
            ...body,
            passphrase: this.passphrase,
            hold: true,
        });
        this.#held = res.held;
        return res;
    }
}
/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function table(rows) {
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    return rows
        .map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i] ?? 0) : c)).join('  '))
        .join('\n')
        .concat('\n');
}
