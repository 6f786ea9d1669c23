// A held session's command under the supervisor, with the proxy (and sandbox) around it.
import { VaultError, oneLine } from '../../core/errors.js';
import { flag, flagList } from '../context.js';
import { agentEnv } from './agent-env.js';
import { dashboardHandOver } from './handover.js';
import { sessionProxy } from './proxy.js';
import { sessionSshAgent } from './ssh.js';
import { startLine } from './summary.js';
/** A held session: the agent's command under the supervisor, with the proxy (and sandbox) around it. */
export async function supervised(ctx, s) {
    const { box, token } = s;
    let proxy;
    let relays;
    let launched;
    let ssh;
    try {
        // Sandboxed, the proxy is the agent's only way out: not back into this machine,
        // except to what the owner allowed with --allow-net.
        proxy = await sessionProxy(ctx, s.dir, token, box?.policy.confine, (code, detail, vault) => s.report.refused(new VaultError(code, detail), vault));
        relays = box === null ? undefined : await box.engine.open(box.policy, proxy.proxy);
        const sshKeys = flagList(ctx, 'ssh');
        if (sshKeys.length > 0)
            ssh = await sessionSshAgent(ctx, s.dir, token, sshKeys);
        const { env, stripped } = await agentEnv(ctx, {
            token,
            dir: s.dir,
            proxy,
            box,
            profile: s.profile,
            sshAuthSock: ssh?.path ?? null,
        });
        const { strippedLine } = await import('../../../shell/env.js');
        const told = strippedLine(stripped);
        if (told !== null)
            ctx.stderr.write(told + '\n');
        ctx.stderr.write(startLine(s.command, s.agent, box !== null, s.pty) + '\n');
        const [{ supervise }, { dashboardApi }] = await Promise.all([
            import('../../../shell/supervisor.js'),
            import('../commands/dashboard.js'),
        ]);
        const api = s.pty ? await dashboardApi(ctx, s.passphrase) : null;
        launched = await launchOf(ctx, s.command, box);
        const result = await supervise({
            pty: s.pty,
            file: launched.file,
            args: launched.args,
            env,
            cwd: process.cwd(),
            signalForeground: launched.signalForeground,
            output: { allowTitle: flag(ctx, 'allow-title') },
            io: { stdin: ctx.stdin, stdout: ctx.stdout, stderr: ctx.stderr, signals: process },
            ...(api === null ? {} : { handOver: dashboardHandOver(ctx, api, s.report) }),
        });
        return result.status;
    }
    finally {
        if (box !== null) {
            await box.engine.cleanup(box.policy);
            s.heldLines.push(...(await heldControls(ctx, box)));
        }
        await launched?.release();
        relays?.close();
        ssh?.close();
        await proxy?.proxy.close();
        proxy?.host.close();
    }
}
/**
 * The project controls the agent made or changed, made harmless once its
 * sandbox is gone (the engine's cleanup waits for that), one line each
 * (shell/project-check.ts). The sandbox's PID namespace ends with its first
 * process, so nothing of the agent's is left to race the check; another
 * session's sandbox in the same directory may be, and its own end checks
 * after it. The supervisor has put the owner's terminal back by then
 * (src/terminal/filter.ts, TERMINAL_RESTORE), so no mode the agent left set
 * hides these lines.
 */
async function heldControls(ctx, box) {
    const { heldLines, projectCheck } = await import('../../../shell/project-check.js');
    const { gitStill } = await import('../../../shell/git-config.js');
    try {
        const checked = projectCheck(box.project, {
            opened: box.policy.openedControls,
            kept: box.policy.controls.kept,
            skip: [...box.policy.hidden.map((h) => h.path), box.policy.sessionDir],
            // Never a git found on PATH now: the agent may have put one there.
            git: gitStill(box.git),
            now: new Date(),
        });
        const lines = heldLines(checked);
        for (const line of lines)
            ctx.stderr.write(line + '\n');
        return lines;
    }
    catch (err) {
        // The session's own outcome still stands; the owner is told the check did not finish.
        ctx.stderr.write(`vault-cli: warning: the check of project controls did not finish (${oneLine(err instanceof Error ? err.message : String(err))}): look at what the agent made before you run your tools there (docs/sandbox.md)\n`);
        return [];
    }
}
/** What the supervisor starts: the command itself, or the engine's sandbox around it. */
async function launchOf(ctx, command, box) {
    if (box === null)
        return {
            file: command[0],
            args: command.slice(1),
            signalForeground: false,
            release: async () => { },
        };
    return box.engine.launch(box.policy, {
        tools: box.tools,
        command,
        hostSocket: box.hostSocket,
        maxProcs: box.maxProcs,
        warn: (line) => ctx.stderr.write(line + '\n'),
    });
}
/**
 * A pty only for a person at a terminal: a script that captures or pipes
 * `run`'s output (or feeds its input) gets the command's bytes and streams
 * as they are, as it would without `run`.
 */
export function wantsPty(ctx) {
    return !flag(ctx, 'no-pty') && ctx.stdin.isTTY === true && ctx.stdout.isTTY === true;
}
