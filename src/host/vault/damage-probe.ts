/**
 * Whether an access refusal rests on damage. A record damaged on disk (a bit
 * flipped in an agent's verifier, in its name index, in an entry's field
 * list) makes an agent's read fail the way a wrong token or an entry out of
 * scope does (VLT-2040, 2041, 2044), while `vault check` names the damage. An
 * agent told "bad token" for a disk error goes looking for the wrong fault.
 * So before such a refusal goes out, the store's records are read with their
 * checksums; damage found anywhere is answered instead, as its code. The
 * refusal itself was audited and charged as it was: only what the agent is
 * told changes, and it names no record (no oracle on which entries exist).
 */
import type { ErrorCode } from '../../core/errors.js';
import type { HostContext } from '../context.js';

/** Refusals a damaged record can cause as well as a caller. */
export const ACCESS_REFUSALS: ReadonlySet<string> = new Set(['VLT-2040', 'VLT-2041', 'VLT-2044']);

/**
 * How long a verdict holds. Reading every record costs about as much as the
 * start-up scan (milliseconds per MB); a caller sending bad tokens in a loop
 * must not make the host do it per request.
 */
const PROBE_MS = 10_000;

const verdicts = new WeakMap<HostContext, { at: number; code: ErrorCode | null }>();

/** The damage the store holds (VLT-3034 a record that does not decode, VLT-3030/3035 a failed checksum), or null. */
export function storeDamage(ctx: HostContext): ErrorCode | null {
  const now = ctx.now();
  const last = verdicts.get(ctx);
  if (last !== undefined && now - last.at < PROBE_MS) return last.code;
  let code: ErrorCode | null = null;
  try {
    const records = ctx.store().read((tx) => tx.rawRecords());
    if (records.some((r) => r.error !== undefined)) code = 'VLT-3034';
    else if (records.some((r) => r.key === 'header' && r.sumOk === false)) code = 'VLT-3030';
    else if (records.some((r) => r.sumOk === false)) code = 'VLT-3035';
  } catch {
    // A store that cannot be read now: the refusal stands as it was.
  }
  verdicts.set(ctx, { at: now, code });
  return code;
}
