/**
 * The agent supervisor: runs one command under a pseudo-terminal with the
 * caller's terminal size and modes, forwards input, output, resize and
 * signals, and reports the child's fate as data (execa's result: exit code,
 * signal, and the status a shell would give it).
 *
 * Nothing is orphaned: the child is a session leader on the pty, so if the
 * supervisor dies, even by SIGKILL, the kernel closes the pty master and
 * hangs up the child's session (SIGHUP). When the supervisor itself is told to
 * stop (SIGTERM, SIGHUP) it passes the signal on and, if the child is still
 * there after `killAfterMs`, kills its process group.
 *
 * The agent's output reaches the terminal through a filter
 * (src/terminal/filter.ts): what a full-screen program needs to draw
 * passes byte for byte; clipboard writes, titles, report requests, strings
 * and 8-bit controls do not (the agent's DA1 and DSR 5 are answered here,
 * with fixed text). When the child has gone, the terminal is asked
 * for its device attributes (DA1) and everything it sent until its answer is
 * read and discarded before the terminal is given back: keys typed for the
 * agent and answers to anything the terminal was asked never reach the
 * owner's shell.
 *
 * Hand-over (docs/run.md): with `handOver`, the hand-over key (Ctrl-]) gives the
 * terminal to the dashboard. From that key on, nothing typed reaches the agent
 * and nothing it writes reaches the screen; its output goes on feeding a
 * mirror of its screen, which repaints the screen when the dashboard is left.
 * Resizes reach the agent and the mirror throughout.
 *
 * Without a terminal (`pty: false`, for scripts): no pty. The child gets
 * pipes, and its stdout and stderr reach ours apart, byte for byte; a stream
 * of ours that is a terminal gets the same output filter, one that is not gets
 * the bytes as they are; there is no drain and no hand-over. The child starts
 * in a session of its own, so it has no controlling terminal to write to or
 * inject into, and Ctrl-C at a terminal reaches it only through us.
 *
 * The only importer of node-pty, loaded lazily so `get` never loads it.
 */
import { readFileSync } from 'node:fs';
import { TERMINAL_RESTORE, TerminalOutputFilter } from '../src/terminal/filter.js';
import { commandLine, exitStatus, forwardSignals, signalName } from './child-signals.js';
import { superviseWithoutPty } from './supervise-pipes.js';
export { exitStatus };
/** Device attributes (DA1): every terminal answers it, and answers in order. */
const ASK_ATTRIBUTES = '\x1b[c';
/** A DA1 answer: `CSI ? <attributes> c`. */
const ATTRIBUTES = /\x1b\[\?[0-9;]*c/;
/**
 * Reads and discards the terminal's input until it has answered a DA1 sent
 * now, or `waitMs` has passed: what it sent before the answer (keys typed
 * ahead, answers to earlier requests) is then gone, not left for the next
 * program to read. Node cannot tcflush; asking and waiting is the way to know
 * that what was in flight has arrived.
 */
function drainTerminal(stdin, stdout, waitMs) {
    return new Promise((resolve) => {
        let tail = '';
        const done = () => {
            clearTimeout(timer);
            stdin.off('data', onData);
            resolve();
        };
        const onData = (d) => {
            // The answer may come in pieces: a short tail is enough to find it.
            tail = (tail + Buffer.from(d).toString('latin1')).slice(-64);
            if (ATTRIBUTES.test(tail))
                done();
        };
        const timer = setTimeout(done, waitMs);
        stdin.on('data', onData);
        stdin.resume();
        stdout.write(ASK_ATTRIBUTES);
    });
}
/** The foreground process group of the terminal `pid` is in, from /proc (Linux), or null. */
function foregroundGroup(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // Fields after the command name, which is in parentheses and may hold anything.
        const tpgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[5]);
        return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : null;
    }
    catch {
        return null;
    }
}
/** Runs `file args` under a pty (or pipes) until it exits; resolves with its fate, never rejects for it. */
export async function supervise(o) {
    if (o.pty === false)
        return superviseWithoutPty(o);
    const pty = await import('node-pty');
    const cols = o.io.stdout.columns ?? 80;
    const rows = o.io.stdout.rows ?? 24;
    const handOver = await mirrored(o.handOver, cols, rows);
    const child = pty.spawn(o.file, [...o.args], {
        name: process.env.TERM ?? 'xterm-256color',
        cols,
        rows,
        cwd: o.cwd,
        env: o.env,
        encoding: null,
    });
    o.onSpawn?.(child.pid);
    return new PtySupervision(o, child, handOver).run();
}
/** `h` with a mirror of the agent's screen; null without a hand-over. */
async function mirrored(h, cols, rows) {
    // Only a supervisor that can hand the terminal over needs to remember the screen.
    if (h === undefined)
        return null;
    const mirrors = await import('./mirror.js');
    return { ...h, mirror: new mirrors.ScreenMirror(cols, rows), defaults: mirrors.DEFAULT_MODES };
}
/** One child on a pty, from its spawn to its fate: `supervise`'s state and its parts. */
class PtySupervision {
    o;
    child;
    handOver;
    killed = false;
    gone = false;
    // While the dashboard is shown the agent's output only feeds the mirror;
    // while the repaint is being made, what arrives is held and written after it.
    showing = false;
    held = null;
    /** The dashboard's turn at the terminal, from the key until the agent has it back. */
    shown = null;
    stopping = new AbortController();
    stdin;
    stdout;
    raw;
    filter;
    exited;
    constructor(o, child, handOver) {
        this.o = o;
        this.child = child;
        this.handOver = handOver;
        this.stdin = o.io.stdin;
        this.stdout = o.io.stdout;
        this.exited = new Promise((resolve) => {
            child.onExit((fate) => {
                this.gone = true;
                const signal = fate.signal !== undefined && fate.signal > 0 ? fate.signal : 0;
                resolve({
                    command: commandLine(o),
                    exitCode: signal > 0 ? null : fate.exitCode,
                    signal: signal > 0 ? signalName(signal) : null,
                    status: exitStatus(fate.exitCode, signal),
                    killed: this.killed,
                });
            });
        });
        this.raw = this.stdin.isTTY === true && typeof this.stdin.setRawMode === 'function';
        // The mirror sees what the terminal sees, so a repaint shows nothing the filter dropped.
        // DA1 and DSR 5 are answered here, to the agent: nothing the owner's terminal says.
        this.filter = new TerminalOutputFilter(o.output, (reply) => {
            if (!this.gone)
                child.write(reply);
        });
    }
    /** Relays input, output, resizes and signals until the child exits; then gives the terminal back. */
    async run() {
        if (this.raw)
            this.stdin.setRawMode?.(true);
        const onOutput = this.child.onData((d) => this.emit(this.filter.write(d)));
        this.stdin.on('data', this.onInput);
        this.stdin.resume();
        this.stdout.on('resize', this.onResize);
        const unforward = forwardSignals(this.o.io.signals, this.o.killAfterMs ?? 5_000, {
            deliver: (sig) => this.deliver(sig),
            stop: () => this.stopping.abort(),
            kill: () => this.kill(),
        });
        try {
            const result = await this.exited;
            // The child ended under the dashboard: the user leaves it first, then sees the agent's last screen.
            if (this.shown !== null && !this.stopping.signal.aborted)
                await Promise.race([
                    this.shown,
                    new Promise((resolve) => this.stopping.signal.addEventListener('abort', resolve)),
                ]);
            return result;
        }
        finally {
            unforward();
            onOutput.dispose();
            await this.restore();
        }
    }
    /** The agent's output, filtered: to the mirror, and to the screen unless the dashboard holds it. */
    emit(safe) {
        if (safe.length === 0)
            return;
        const out = Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength);
        this.handOver?.mirror.write(out);
        if (!this.showing)
            this.stdout.write(out);
        else
            this.held?.push(out);
    }
    /** Typed input: the agent's, up to the hand-over key; from the key on, the dashboard's. */
    onInput = (d) => {
        const h = this.handOver;
        const chunk = h === null || this.gone ? null : Buffer.from(d);
        const at = h === null || chunk === null ? -1 : chunk.indexOf(h.key);
        if (h === null || chunk === null || at < 0) {
            this.child.write(d);
            return;
        }
        if (at > 0)
            this.child.write(chunk.subarray(0, at));
        this.shown = this.handTo(h, chunk.subarray(at + 1)).catch((err) => {
            // Writing the repaint failed: the terminal is going, the agent's exit will follow.
            h.onError?.(err);
        });
    };
    /** Gives the terminal to the dashboard, and back to the agent when it is left. */
    async handTo(h, after) {
        const { stdin, stdout } = this;
        this.showing = true;
        // The dashboard gets plain keys and no mouse reports, whatever modes the agent set.
        stdout.write(h.defaults);
        stdin.off('data', this.onInput);
        stdin.pause();
        // What was typed after the key, in the same read, is the dashboard's.
        if (after.length > 0)
            stdin.unshift(after);
        try {
            await h.show({
                stdin,
                stdout,
                agent: h.mirror,
                signal: this.stopping.signal,
                // Once the agent's last output is in its lines.
                exited: this.exited.then(async (r) => {
                    await h.mirror.settled();
                    return r;
                }),
            });
        }
        catch (err) {
            h.onError?.(err);
        }
        if (this.stopping.signal.aborted)
            return;
        // A dashboard may leave the terminal cooked and stdin unreferenced.
        if (this.raw)
            stdin.setRawMode?.(true);
        stdin.ref?.();
        this.held = [];
        const picture = await h.mirror.repaint();
        stdout.write(picture);
        for (const d of this.held)
            stdout.write(d);
        this.held = null;
        this.showing = false;
        this.shown = null;
        if (!this.gone) {
            // Keys the dashboard left unread were typed at the dashboard: never the
            // agent's. (Only here: read() restarts reading, which resume and the
            // final pause then own; with the child gone it would keep us alive.)
            while (stdin.read() !== null)
                ;
            stdin.on('data', this.onInput);
            stdin.resume();
        }
    }
    onResize = () => {
        const { columns, rows } = this.stdout;
        if (columns === undefined || rows === undefined)
            return;
        try {
            this.child.resize(columns, rows);
        }
        catch {
            // The child is gone; its exit is on its way.
        }
        this.handOver?.mirror.resize(columns, rows);
    };
    /** A forwarded signal: to the terminal's foreground job when asked (the sandbox's agent), else the child. */
    deliver(sig) {
        try {
            const group = this.o.signalForeground === true ? foregroundGroup(this.child.pid) : null;
            if (group !== null && group !== this.child.pid)
                process.kill(-group, sig);
            else
                this.child.kill(sig);
        }
        catch {
            // Already gone: its exit is on its way.
        }
    }
    /** The escalation: SIGKILL to the child's group (or the child alone). */
    kill() {
        this.killed = true;
        try {
            process.kill(-this.child.pid, 'SIGKILL');
        }
        catch {
            try {
                this.child.kill('SIGKILL');
            }
            catch {
                // Gone in the meantime.
            }
        }
    }
    /** The terminal given back as it was: restored modes, drained input, cooked. */
    async restore() {
        const { stdin, stdout } = this;
        this.emit(this.filter.end());
        // Before the drain, so a report already on its way is read and dropped with the rest.
        if (stdout.isTTY === true)
            stdout.write(TERMINAL_RESTORE);
        stdout.off('resize', this.onResize);
        stdin.off('data', this.onInput);
        if (this.raw && stdout.isTTY === true && !this.stopping.signal.aborted)
            await drainTerminal(stdin, stdout, this.o.drainMs ?? 1_000);
        stdin.pause();
        if (this.raw)
            stdin.setRawMode?.(false);
        this.handOver?.mirror.dispose();
    }
}
