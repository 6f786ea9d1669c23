// The session proxy's refusals, told on `run`'s stderr without flooding it.
import type { VaultError } from '../../core/errors.js';

/** The session proxy's refusals as `run` shows them on its stderr. */
export interface Refusals {
  refused(err: VaultError): void;
  /** Only count (the dashboard holds the terminal). */
  hold(): void;
  /** Lines again; what was held back is counted in the next line of its code. */
  resume(): void;
  /** The counts of what was held back and never told (the session has ended). */
  flush(): void;
}

/** At most one line a second per code: an agent in a retry loop does not flood the owner's terminal. */
const REFUSAL_EVERY_MS = 1_000;

/**
 * One line per refusal, at most one a second per code; those held back are
 * counted in the next line of their code, or when the session ends. A
 * refusal's message names the code, the destination and the reference as
 * written, never a value (src/proxy/refusal.ts).
 */
export function refusalReport(write: (line: string) => void, now = Date.now): Refusals {
  const codes = new Map<string, { at: number; held: number }>();
  let holding = false;
  const more = (n: number) => (n === 0 ? '' : ` (${n} more before it)`);
  return {
    refused(err) {
      const c = codes.get(err.code) ?? { at: -Infinity, held: 0 };
      codes.set(err.code, c);
      if (holding || now() - c.at < REFUSAL_EVERY_MS) {
        c.held++;
        return;
      }
      write(
        `vault-cli: the proxy refused: ${err.line().replace(/^vault-cli: /, '')}${more(c.held)}`,
      );
      c.at = now();
      c.held = 0;
    },
    hold() {
      holding = true;
    },
    resume() {
      holding = false;
    },
    flush() {
      holding = false;
      for (const [code, c] of codes)
        if (c.held > 0) {
          write(`vault-cli: the proxy refused ${c.held} more with ${code}`);
          c.held = 0;
        }
    },
  };
}
