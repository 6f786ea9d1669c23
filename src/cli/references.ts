/**
 * A command's references, all or nothing (`exec` and `render`): every
 * distinct reference released by one `resolve` through the host, and what
 * stops the command (a refusal, a malformed reference, a value that cannot go
 * where it was written) reported one line each on stderr, never with a value.
 */
import { ERRORS, VaultError, oneLine, type ErrorCode } from '../core/errors.js';
import type { MalformedReference } from '../core/reference.js';
import type { CliContext } from './context.js';
import { loadToken } from './token.js';

/** A reference (or the value it gave) that stops the command. */
export interface Refusal {
  readonly code: ErrorCode;
  /** Where the command was given it (`--env NAME`), for a command that takes references in several places. */
  readonly where?: string;
  readonly written: string;
  readonly reason: string;
}

/** One distinct reference: what the host is asked for, and how (and where) it was written. */
export interface Wanted {
  readonly entry: string;
  readonly field: string;
  readonly written: string;
  readonly where?: string;
}

/** VLT-2046 for each malformed reference a scan found. */
export function malformed(found: readonly MalformedReference[], where?: string): Refusal[] {
  return found.map((m) => ({
    code: 'VLT-2046',
    where,
    written: m.written,
    reason: `malformed reference: ${m.reason}`,
  }));
}

/** One stderr line per refusal, each once; the exit status is the first one's. */
export function report(ctx: CliContext, refusals: readonly Refusal[]): number {
  const seen = new Set<string>();
  for (const r of refusals) {
    const at = r.where === undefined ? '' : `${r.where}: `;
    const line = `vault-cli: ${r.code}: ${at}${oneLine(r.written)}: ${oneLine(r.reason)}`;
    if (seen.has(line)) continue;
    seen.add(line);
    ctx.stderr.write(line + '\n');
  }
  return ERRORS[(refusals[0] as Refusal).code].exit;
}

/**
 * Every reference of `wanted` in one `resolve`: the values by its keys, or
 * the refused references (each said as it was written; the values are never
 * in a message).
 * @throws VaultError a refusal of the whole request (token, lock, limit, host).
 */
export async function resolveAll(
  ctx: CliContext,
  wanted: ReadonlyMap<string, Wanted>,
): Promise<Map<string, Buffer> | Refusal[]> {
  const keys = [...wanted.keys()];
  const refs = [...wanted.values()];
  if (keys.length === 0) return new Map();
  try {
    const { values } = await ctx.call('resolve', {
      token: loadToken(ctx),
      refs: refs.map((r) => ({ entry: r.entry, field: r.field })),
    });
    return new Map(keys.map((k, i) => [k, Buffer.from(values[i] ?? '', 'base64')]));
  } catch (err) {
    // A refusal of the whole request (token, lock, limit, host) is one ordinary error line.
    if (!(err instanceof VaultError) || err.problems.length === 0) throw err;
    return err.problems.map((p) => ({
      code: p.code,
      where: refs[p.index]?.where,
      written: refs[p.index]?.written ?? '',
      reason: ERRORS[p.code].message,
    }));
  }
}
