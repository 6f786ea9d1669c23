/**
 * The audit events the host writes, stamped with the host's clock: the
 * owner's operations and an agent's accesses, both built by core's one
 * builder (auditEvent), so the two cannot drift apart.
 */
import { OWNER_ACTOR, auditEvent, } from '../../core/audit.js';
/** An owner operation that succeeded (a refusal overrides `outcome`). */
export function ownerEvent(ctx, action, source, more = {}) {
    return auditEvent(ctx.now(), action, OWNER_ACTOR, source, 'ok', more);
}
/** An access by `actor` (an agent, or the unknown caller of a bad token). */
export function accessEvent(ctx, action, outcome, actor, source, more = {}) {
    return auditEvent(ctx.now(), action, actor, source, outcome, more);
}
