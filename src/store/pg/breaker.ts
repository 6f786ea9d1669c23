/**
 * A team host's breaker (pg.ts): open after a request the database did not
 * answer in time, or answered that the connection was lost. While open every
 * request is refused at once (VLT-3040, naming the cause) instead of waiting
 * its own answer time in series, until a probe sent in the background is
 * answered.
 */
import type { MessagePort } from 'node:worker_threads';
import type { PgReply, PgRequest } from './pg-protocol.js';

/** While the breaker is open, how often the worker asks the database again, in the background. */
const PROBE_MS = 500;
/** A probe the worker has not answered by then: that worker is dropped and a new one asks. */
const PROBE_GIVE_UP_MS = 10_000;

/** What the breaker asks through: the worker's port (a new one after `drop`), and what to ask. */
export interface Probing {
  readonly port: () => MessagePort;
  readonly drop: () => void;
  readonly request: () => PgRequest;
}

export class Breaker {
  private state: { cause: unknown; timer: NodeJS.Timeout | null } | null = null;

  constructor(private readonly via: Probing) {}

  /** Why it is open (the first failure), or null when closed. */
  get open(): { cause: unknown } | null {
    return this.state;
  }

  trip(cause: unknown): void {
    if (this.state !== null) return;
    this.state = { cause, timer: null };
    this.probe(PROBE_MS);
  }

  close(): void {
    if (this.state?.timer) clearTimeout(this.state.timer);
    this.state = null;
  }

  /**
   * Asks the database again `afterMs` from now, on the worker's port but in
   * the background: the host's main thread goes on answering (refusals, status,
   * `daemon stop`) meanwhile. An answer closes the breaker; a refusal asks
   * again later; silence drops the worker and asks with a new one.
   */
  private probe(afterMs: number): void {
    const b = this.state;
    if (b === null) return;
    b.timer = setTimeout(() => {
      const port = this.via.port();
      const giveUp = setTimeout(() => {
        port.off('message', answered);
        this.via.drop();
        this.probe(0);
      }, PROBE_GIVE_UP_MS);
      giveUp.unref();
      const answered = (reply: PgReply) => {
        clearTimeout(giveUp);
        port.off('message', answered);
        if (this.state !== b) return;
        if (reply.ok) this.state = null;
        else this.probe(PROBE_MS);
      };
      port.on('message', answered);
      // A probe keeps no process alive: the host's own lifetime decides.
      port.unref();
      port.postMessage(this.via.request());
    }, afterMs);
    b.timer.unref();
  }
}
