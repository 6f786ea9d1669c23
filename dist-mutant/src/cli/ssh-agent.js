/**
 * The SSH agent protocol on a Unix socket, for `vault-cli ssh-agent` and
 * `run` (docs/ssh.md). It holds public keys only: each signature is asked of
 * the vault host (`ssh.sign`), which checks, counts, audits and signs; the
 * private key never reaches this process. What it keeps of each connection
 * is the session-binds OpenSSH sent on it, passed to the host with every
 * signature request there, which verifies them.
 *
 * Bounded (docs/ssh.md, "Bounds"): a message stating more than
 * MAX_AGENT_MESSAGE closes its connection; every byte kept for a client (what
 * it sent and is not yet answered, a signature request's data while the host
 * signs, its session-binds) counts against BUFFER_BUDGET for all connections
 * together, and past it the largest holder is closed; at most MAX_CONNECTIONS
 * are open, a new one past them closing the least recently active. Buffers
 * grow with what has arrived (never to a stated length up front) and are
 * freed at once when a connection closes or its bytes are answered, not at
 * the next garbage collection (`free`).
 */
import { chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { VaultError } from '../core/errors.js';
import { parsePublicKeyLine } from '../core/ssh-keyfile.js';
import { failureReply, identitiesReply, MAX_AGENT_MESSAGE, parseAgentRequest, signReply, successReply, } from '../core/ssh-wire.js';
/** Session-binds kept per connection; past it, a bind is refused (as OpenSSH's agent does). */
const MAX_BINDS = 16;
/** The largest session-bind kept: a host key, a session id and a signature (RSA 16384 takes 4 KiB). */
const MAX_BIND = 8 * 1024;
const MAX_CONNECTIONS = 64;
/** Bytes held for all clients together: four of the largest messages. */
export const BUFFER_BUDGET = 1024 * 1024;
/** A public key entry's authorized_keys line as the agent lists it. */
export function agentKey(entry, line) {
    const blob = parsePublicKeyLine(line);
    if (blob === null)
        throw new VaultError('VLT-2067', `${JSON.stringify(entry)} holds no SSH public key.`);
    return { entry, blob, comment: `vault://${entry}` };
}
// Replies made once: a client asking again and again makes no garbage of them.
const FAILURE = failureReply();
const SUCCESS = successReply();
/** A buffer with memory of its own (never a slice of Node's shared pool), for `free`. */
const own = (size) => Buffer.allocUnsafeSlow(size);
/**
 * Gives `buf`'s memory back now, by detaching its ArrayBuffer, instead of
 * when the garbage collector gets to it (V8 lets tens of MiB of dead buffers
 * wait). Only a buffer spanning its whole ArrayBuffer: `own`'s, or a socket's
 * read, which Node allocates for each read. Its views read as empty after.
 */
function free(buf) {
    if (buf === null || buf.length === 0)
        return;
    const ab = buf.buffer;
    if (buf.byteOffset === 0 && ab.byteLength === buf.length && typeof ab.transfer === 'function')
        ab.transfer(0);
}
class Conn {
    socket;
    binds = [];
    /** What the client sent and is not yet answered: inbox[start, end). */
    inbox = null;
    start = 0;
    end = 0;
    /** Bytes held besides the inbox: binds, a signature request's data. */
    extra = 0;
    busy = false;
    closed = false;
    constructor(socket) {
        this.socket = socket;
    }
    get held() {
        return (this.inbox?.length ?? 0) + this.extra;
    }
}
/** The open connections, least recently active first, and the bytes they hold against the budget. */
class Connections {
    open = new Set();
    held = 0;
    add(conn) {
        const oldest = this.open.values().next();
        if (this.open.size >= MAX_CONNECTIONS && oldest.done !== true)
            this.close(oldest.value);
        this.open.add(conn);
    }
    touch(conn) {
        this.open.delete(conn);
        this.open.add(conn);
    }
    /**
     * Counts `bytes` more held by `conn`, closing the largest holder (the least
     * recently active of equals) while the total is past the budget.
     * @returns false when `conn` itself was closed.
     */
    reserve(conn, bytes) {
        if (conn.closed)
            return false;
        this.held += bytes;
        conn.extra += bytes;
        while (this.held > BUFFER_BUDGET) {
            let largest;
            for (const c of this.open)
                if (largest === undefined || c.held > largest.held)
                    largest = c;
            const victim = largest ?? conn;
            this.close(victim);
            if (victim === conn)
                return false;
        }
        return true;
    }
    release(conn, bytes) {
        if (conn.closed)
            return;
        this.held -= bytes;
        conn.extra -= bytes;
    }
    /**
     * Gives `conn` an inbox of `size` bytes (none for 0) holding its unanswered bytes.
     * @returns false when `conn` was closed for the budget instead.
     */
    resize(conn, size) {
        const old = conn.inbox;
        const before = old?.length ?? 0;
        if (!this.reserve(conn, size - before))
            return false;
        const next = size === 0 ? null : own(size);
        if (next !== null && old !== null)
            old.copy(next, 0, conn.start, conn.end);
        free(old);
        conn.extra -= size - before;
        conn.inbox = next;
        conn.end -= conn.start;
        conn.start = 0;
        return true;
    }
    /** Closes `conn` and frees what it held. */
    close(conn) {
        if (conn.closed)
            return;
        this.held -= conn.held;
        conn.closed = true;
        this.open.delete(conn);
        free(conn.inbox);
        conn.inbox = null;
        for (const b of conn.binds)
            free(b);
        conn.binds.length = 0;
        conn.extra = 0;
        conn.socket.destroy();
    }
    closeAll() {
        for (const c of [...this.open])
            this.close(c);
    }
}
/** Copies a read into `conn`'s inbox, growing it to at most twice what has arrived. */
function receive(agent, conn, chunk) {
    const live = conn.end - conn.start;
    const need = live + chunk.length;
    const size = conn.inbox?.length ?? 0;
    if (conn.inbox !== null && size - conn.end < chunk.length && size >= need) {
        conn.inbox.copyWithin(0, conn.start, conn.end);
        conn.end = live;
        conn.start = 0;
    }
    else if (size - conn.end < chunk.length) {
        const stated = live >= 4 ? 4 + (conn.inbox?.readUInt32BE(conn.start) ?? 0) : need;
        if (!agent.conns.resize(conn, Math.max(need, Math.min(2 * live, stated))))
            return false;
    }
    const inbox = conn.inbox;
    chunk.copy(inbox, conn.end);
    conn.end += chunk.length;
    if (conn.end - conn.start < 4 || inbox.readUInt32BE(conn.start) <= MAX_AGENT_MESSAGE)
        return true;
    agent.conns.close(conn);
    return false;
}
/**
 * What a message asks, decided now: a reply, or a signature to ask the host
 * for. Nothing returned refers to `body` (what a signature needs is copied,
 * counted against the budget), so its bytes may go at once.
 */
function decide(agent, conn, body) {
    const req = parseAgentRequest(body);
    if (req === null || req.type === 'unsupported')
        return FAILURE;
    if (req.type === 'identities')
        return agent.list;
    if (req.type === 'bind') {
        if (conn.binds.length >= MAX_BINDS || req.raw.length > MAX_BIND)
            return FAILURE;
        if (!agent.conns.reserve(conn, req.raw.length))
            return null;
        const bind = own(req.raw.length);
        bind.set(req.raw);
        conn.binds.push(bind);
        return SUCCESS;
    }
    const key = agent.keys.find((k) => k.blob.equals(req.keyBlob));
    if (key === undefined)
        return FAILURE;
    if (!agent.conns.reserve(conn, req.data.length))
        return null;
    const data = own(req.data.length);
    data.set(req.data);
    const request = { entry: key.entry, key: key.blob, data, flags: req.flags, binds: conn.binds };
    return async () => {
        try {
            return signReply(await agent.sign(request));
        }
        catch (err) {
            agent.onRefusal(err);
            return FAILURE;
        }
        finally {
            agent.conns.release(conn, data.length);
            free(data);
        }
    };
}
const drained = (socket) => new Promise((resolve) => {
    const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
});
/** Answers `conn`'s whole messages one at a time, each reply written (or queued by the kernel) before the next. */
async function pump(agent, conn) {
    if (conn.busy)
        return;
    conn.busy = true;
    try {
        while (!conn.closed && conn.inbox !== null && conn.end - conn.start >= 4) {
            const n = conn.inbox.readUInt32BE(conn.start);
            if (n > MAX_AGENT_MESSAGE)
                return agent.conns.close(conn);
            if (conn.end - conn.start - 4 < n)
                return;
            const job = decide(agent, conn, conn.inbox.subarray(conn.start + 4, conn.start + 4 + n));
            conn.start += 4 + n;
            if (conn.start === conn.end)
                agent.conns.resize(conn, 0);
            if (job === null)
                return;
            const reply = typeof job === 'function' ? await job() : job;
            if (conn.closed)
                return;
            if (!conn.socket.write(reply))
                await drained(conn.socket);
        }
    }
    finally {
        conn.busy = false;
    }
}
function serve(agent, socket) {
    const conn = new Conn(socket);
    agent.conns.add(conn);
    socket.on('error', () => agent.conns.close(conn));
    socket.on('close', () => agent.conns.close(conn));
    socket.on('data', (chunk) => {
        if (!conn.closed)
            agent.conns.touch(conn);
        const taken = !conn.closed && receive(agent, conn, chunk);
        free(chunk);
        if (taken)
            void pump(agent, conn);
    });
}
/**
 * Listens on `path` (a new socket, mode 0600) and serves the agent protocol.
 * @returns a handle whose `close` stops listening and closes every connection.
 */
export async function startSshAgent(opts) {
    const agent = { ...opts, list: identitiesReply(opts.keys), conns: new Connections() };
    const server = createServer((socket) => serve(agent, socket));
    const old = process.umask(0o177);
    try {
        await new Promise((resolve, reject) => {
            server.once('error', reject);
            server.listen(opts.path, resolve);
        });
    }
    finally {
        process.umask(old);
    }
    chmodSync(opts.path, 0o600);
    return {
        close: () => new Promise((resolve) => {
            server.close(() => resolve());
            agent.conns.closeAll();
        }),
    };
}
/**
 * The keys of `entries` as the host lists them for `token` (`ssh.keys`):
 * `vault-cli ssh-agent` and `run --ssh` (run/ssh.ts) read them once at start.
 * @throws VaultError as `ssh.keys` (an entry out of the token's scope: VLT-2041).
 */
export async function hostKeys(ctx, token, entries) {
    const listed = await ctx.call('ssh.keys', { token, entries: [...entries] });
    return entries.map((entry, i) => agentKey(entry, listed.keys[i] ?? ''));
}
/** Asks the host for every signature (`ssh.sign`) with `token`. */
export function hostSigner(ctx, token) {
    return async (req) => {
        const res = await ctx.call('ssh.sign', {
            token,
            entry: req.entry,
            key: req.key.toString('base64'),
            data: req.data.toString('base64'),
            flags: req.flags,
            binds: req.binds.map((b) => b.toString('base64')),
        });
        return Buffer.from(res.signature, 'base64');
    };
}
