// The agent's session with the host: started with the owner's passphrase,
// held on a connection of its own while the command runs, ended after it.
import { VaultError } from '../../core/errors.js';
import { flagList } from '../context.js';
import { passphraseItself } from '../owner.js';
import { profileVars, sessionModelKey } from './profile.js';
import { refusalReport } from './refusals.js';
import { summaryLine } from './summary.js';
import { supervised, wantsPty } from './supervised.js';
/**
 * The session around the agent's command: a token for the agent from the
 * host, held until this process ends however it ends; the command under the
 * supervisor with the profile's state applied around it; the session ended
 * and summed up on stderr. Returns the command's exit status.
 * @throws VaultError VLT-1005 when the sandbox is wanted and the host gave
 * the session no socket of its own.
 */
export async function agentSession(ctx, s) {
    const { agent, box } = s;
    // Kept for the dashboard's owner calls while the command runs; see docs/threat-model.md.
    // Always the passphrase itself: a session token acts for the agent in its
    // whole scope, which the terminal's owner session alone never releases
    // (VLT-2055); the dashboard keeps it for what it asks of the host.
    const passphrase = await passphraseItself(ctx, 'A run session token');
    // The session's records are at or after this (the summary counts them).
    const asked = Date.now();
    const started = await ctx.call('session.start', {
        passphrase,
        agent,
        scope: flagList(ctx, 'scope'),
        sandbox: box !== null,
    });
    const { token } = started;
    const { hold } = await import('../../client/follow.js');
    // From here the session ends when this process does, however it ends.
    const held = await hold(ctx.client, token);
    const pty = wantsPty(ctx);
    const report = refusalReport((line) => ctx.stderr.write(line + (pty ? '\r\n' : '\n')));
    let status = null;
    const heldLines = [];
    try {
        const hostSocket = started.socket;
        if (box !== null && hostSocket === undefined)
            throw new VaultError('VLT-1005', 'The agent sandbox cannot start: the vault host gave the session no socket of its own (an older host? `vault-cli daemon stop`, then run again).');
        const key = await sessionModelKey(ctx, passphrase, agent, s.profile);
        status = await withState(ctx, s, heldLines, () => supervised(ctx, {
            command: s.command,
            dir: s.dir,
            passphrase,
            token,
            agent,
            pty,
            report,
            box: box === null || hostSocket === undefined ? null : { ...box, hostSocket },
            profile: profileVars(s.profile, key),
            heldLines,
        }));
        return status;
    }
    finally {
        report.flush();
        const revoked = await endSession(ctx, token, held);
        if (status !== null)
            ctx.stderr.write((await summaryLine(ctx, { passphrase, agent, since: asked, revoked, status })) + '\n');
        // Lines followed the held ones: they are said again as the very last, where the owner looks.
        if (status !== null)
            for (const line of heldLines)
                ctx.stderr.write(line + '\n');
    }
}
/**
 * Runs `command` with the profile's state applied around it; after it, what
 * the agent changed in its state is held, and the held lines are said on
 * stderr and added to `heldLines`.
 */
async function withState(ctx, s, heldLines, command) {
    const { applyState, finishState } = await import('../../../shell/agent-state.js');
    const stateAt = applyState(s.plan);
    try {
        return await command();
    }
    finally {
        // After `supervised`: the sandbox's processes are gone (the engine's cleanup waits for them).
        const { HeldSession, heldLines: stateLines } = await import('../../../shell/held.js');
        const held = new HeldSession(s.held.root, s.held.session, s.plan.profile ?? 'none');
        // Errors may quote names the agent chose: no control character reaches the terminal.
        for (const said of finishState(s.plan, stateAt, held))
            ctx.stderr.write(`vault-cli: ${said.replace(/\p{Cc}/gu, '?')}\n`);
        const lines = stateLines(held, s.held.session, s.plan.profile ?? 'none');
        for (const line of lines)
            ctx.stderr.write(line + '\n');
        heldLines.push(...lines);
    }
}
/**
 * Ends the session with its own token, then lets go of the hold. In this
 * order: the hold's end revokes the session too, and a `session.end` sent
 * after it would present a revoked token (a `denied` record after every
 * session). Returns whether the host confirmed the token revoked.
 */
export async function endSession(ctx, token, held) {
    try {
        await ctx.call('session.end', { token });
        return true;
    }
    catch {
        // The host is gone or ended it already (the hold broke): the token is refused either way.
        return false;
    }
    finally {
        held.release();
    }
}
