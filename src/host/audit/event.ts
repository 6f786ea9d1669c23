/**
 * The audit events the host writes, stamped with the host's clock: the
 * owner's operations and an agent's accesses, both built by core's one
 * builder (auditEvent), so the two cannot drift apart.
 */
import {
  OWNER_ACTOR,
  auditEvent,
  type AuditAction,
  type AuditDetail,
  type AuditEvent,
} from '../../core/audit.js';
import type { ErrorCode } from '../../core/errors.js';
import type { HostContext } from '../context.js';

/** An owner operation that succeeded (a refusal overrides `outcome`). */
export function ownerEvent(
  ctx: HostContext,
  action: AuditAction,
  source: string,
  more: Pick<AuditDetail, 'entryId' | 'entry' | 'field' | 'subject'> = {},
): AuditEvent {
  return auditEvent(ctx.now(), action, OWNER_ACTOR, source, 'ok', more);
}

/** An access by `actor` (an agent, or the unknown caller of a bad token). */
export function accessEvent(
  ctx: HostContext,
  action: AuditAction,
  outcome: 'ok' | ErrorCode,
  actor: string,
  source: string,
  more: Pick<AuditDetail, 'entryId' | 'entry' | 'field' | 'host'> = {},
): AuditEvent {
  return auditEvent(ctx.now(), action, actor, source, outcome, more);
}
