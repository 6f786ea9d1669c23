import { constants } from 'node:os';
import { TERMINAL_RESTORE, TerminalOutputFilter, } from '../src/terminal/filter.js';
import { commandLine, exitStatus, forwardSignals, jobGroup, signalGroup } from './child-signals.js';
/**
 * The child's output on its way to one of our streams: through the terminal
 * filter when the stream is a terminal (the owner's screen), untouched when it
 * is not (a file or a pipe gets the agent's bytes exactly).
 */
function relayOutput(from, to, options) {
    if (to.isTTY !== true) {
        from.pipe(to, { end: false });
        return;
    }
    // Without a pty there is nobody to answer: the child's queries go unanswered.
    const filter = new TerminalOutputFilter(options, () => { });
    const put = (safe) => {
        if (safe.length > 0)
            to.write(Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength));
    };
    from.on('data', (d) => put(filter.write(d)));
    from.on('end', () => put(filter.end()));
}
/** `supervise` for scripts: pipes instead of a pty (see the header). */
export async function superviseWithoutPty(o) {
    const { stdin, stdout, signals } = o.io;
    const stderr = o.io.stderr ?? stdout;
    // A stdin that is a file or a pipe is handed over as it is (its end is the
    // child's end of input); a terminal is read here and its lines passed on, so
    // the child holds no descriptor of the owner's terminal.
    const shareable = stdin.isTTY !== true && hasDescriptor(stdin);
    const child = await spawnPiped(o, shareable);
    if (child === null) {
        return { command: commandLine(o), exitCode: 127, signal: null, status: 127, killed: false };
    }
    const pid = child.pid;
    o.onSpawn?.(pid);
    const stopInput = shareable ? () => { } : pipeInput(stdin, child);
    if (child.stdout !== null)
        relayOutput(child.stdout, stdout, o.output);
    if (child.stderr !== null)
        relayOutput(child.stderr, stderr, o.output);
    let killed = false;
    // Sandboxed, the signal is the agent's (its job); bubblewrap would die of it.
    const target = () => (o.signalForeground === true ? (jobGroup(pid) ?? pid) : pid);
    const unforward = forwardSignals(signals, o.killAfterMs ?? 5_000, {
        deliver: (sig) => {
            if (!signalGroup(target(), sig))
                signalGroup(pid, sig);
        },
        kill: () => {
            killed = true;
            signalGroup(pid, 'SIGKILL');
        },
    });
    const closed = new Promise((resolve) => child.once('close', () => resolve()));
    try {
        const [code, signal] = await new Promise((resolve) => child.once('exit', (c, s) => resolve([c, s])));
        // As a terminal hangs up its session when its leader goes: what the child left running goes too.
        signalGroup(pid, 'SIGHUP');
        // Then all it wrote is read (what it left running may still be writing, as in any pipeline).
        await closed;
        // As with a pty: what it set on a terminal it wrote to must not report into the owner's shell.
        for (const to of new Set([stdout, stderr]))
            if (to.isTTY === true)
                to.write(TERMINAL_RESTORE);
        const signum = signal === null ? 0 : (constants.signals[signal] ?? 0);
        return {
            command: commandLine(o),
            exitCode: signal === null ? code : null,
            signal,
            status: exitStatus(code ?? 0, signum),
            killed,
        };
    }
    finally {
        unforward();
        stopInput();
    }
}
/**
 * The child started in a session of its own, on pipes (stdin shared when
 * `shareStdin`); null when it could not start.
 */
async function spawnPiped(o, shareStdin) {
    const { spawn } = await import('node:child_process');
    const stdin = o.io.stdin;
    const child = spawn(o.file, [...o.args], {
        cwd: o.cwd,
        env: o.env,
        detached: true,
        stdio: [shareStdin ? stdin : 'pipe', 'pipe', 'pipe'],
    });
    const spawned = await new Promise((resolve) => {
        child.once('spawn', () => resolve(null));
        child.once('error', (err) => resolve(err));
    });
    if (spawned !== null || child.pid === undefined)
        return null;
    return child;
}
/** Our input passed on to the child's stdin, until what this returns is called. */
function pipeInput(stdin, child) {
    const to = child.stdin;
    if (to === null)
        return () => { };
    const onInput = (d) => to.write(d);
    const onEnd = () => to.end();
    // The child may stop reading before our input ends: that is its business.
    to.on('error', () => { });
    stdin.on('data', onInput);
    stdin.on('end', onEnd);
    stdin.resume();
    return () => {
        stdin.off('data', onInput);
        stdin.off('end', onEnd);
        stdin.pause();
    };
}
/** A stream backed by a file descriptor, which a child can be given as it is. */
function hasDescriptor(s) {
    const r = s;
    return typeof r.fd === 'number' || typeof r._handle?.fd === 'number';
}
