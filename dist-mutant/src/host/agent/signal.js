/**
 * What the proxy reports about a caller that the host cannot see itself
 * (a Host that is not where the request went), counted as the caller's
 * own violation.
 */
import { VaultError } from '../../core/errors.js';
import { recordViolation } from '../../core/policy.js';
import {} from './authenticate.js';
import { RECORD_BYTES } from '../../store/engine.js';
import {} from './entry-check.js';
import { AUDITED_REFUSALS, asked, auditLock, auditRefused, lookUp, revokedText, sealedAccess, } from './access-records.js';
/** The code each signal is audited with: the refusal the proxy gave. */
const SIGNAL_CODE = { host_mismatch: 'VLT-2048' };
/**
 * Records a signal the proxy reported as a violation of the caller's own
 * limits (policy.ts recordViolation), in one write transaction: its
 * references audited as `exfil` with the destination host (at most
 * AUDITED_REFUSALS + 1 records), and a `locked` record when it is the second.
 *
 * Who can report what: the token is the only name of the agent a signal is
 * about, so a report can only ever count against the agent (or the session's
 * agent) whose token it carries. A token the host refuses is VLT-2040 from
 * authenticate and counts against nobody. A locked agent's report writes
 * nothing (its lock is recorded already), so however many reports a caller
 * sends, it adds a bounded number of records between two unlocks.
 * @returns what it did: `recorded` a first violation, `lockdown` a second
 *   (the agent is locked), or nothing (`locked`: the agent was locked already).
 * @throws VaultError VLT-2040 (revoked, or the session ended), VLT-3004.
 */
export async function reportSignal(ctx, session, signal, source) {
    const q = asked(signal.refs);
    const purpose = { kind: 'fill', host: signal.host };
    const done = await ctx.commitGrouped((tx) => {
        const a = sealedAccess(tx, ctx, session, source, purpose, signal.host);
        const { agent, dead } = a.view;
        if (agent.revoked !== null || dead)
            return new VaultError('VLT-2040', revokedText(agent));
        const counted = recordViolation(agent.rate, ctx.now());
        if (counted.kind === 'locked')
            return { outcome: 'locked' };
        tx.putRate(agent.id, counted.state);
        const code = SIGNAL_CODE[signal.kind];
        auditRefused(a, 'exfil', lookUp(a, q.distinct).map((l) => ({ l, code })));
        if (counted.kind === 'lockdown')
            auditLock(a);
        return { outcome: counted.kind };
    }, (AUDITED_REFUSALS + 2) * RECORD_BYTES);
    if (done instanceof VaultError)
        throw done;
    return done;
}
