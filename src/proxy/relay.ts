/**
 * A response body on its way to the client, scrubbed when a value was
 * injected into its request.
 *
 * What arrives in the turn of the event loop that brought the head is held;
 * a body that has ended by then (most API replies: head, body and end in one
 * read) goes with the head in one write, with no stream stage in between: a
 * scrubbed one with its new length. A pipe or a transform stream per
 * response was measured as a large share of the proxy's own CPU (a scrub
 * stream and chunked encoding alone 0.2 ms of 0.6 ms per filled request). A
 * body still coming after that turn (server-sent events, a download) or
 * longer than WHOLE_BODY_BYTES streams from there, through the scrubber when
 * there is one, its head sent at once so the first event is not held back.
 * A compressed body (only decoded when a value was injected) goes through
 * its decoder and the scrubber as streams.
 */
import type { ServerResponse } from 'node:http';
import { pipeline, type Transform } from 'node:stream';
import type { RawHeaders } from './raw-headers.js';
import { Scrubber, scrubStream, type Replacement } from './scrub.js';

/** A response that ends within this much in its first turn is sent whole. */
const WHOLE_BODY_BYTES = 64 * 1024;

/** Where the body comes from: paused while the client cannot take more. */
export interface BodySource {
  pause(): void;
  resume(): void;
}

export class Relay {
  readonly #res: ServerResponse;
  readonly #status: number;
  readonly #message: string;
  readonly #headers: RawHeaders;
  readonly #replacements: readonly Replacement[] | null;
  readonly #source: BodySource;
  readonly #held: Buffer[] = [];
  #bytes = 0;
  #turn: NodeJS.Immediate | null = null;
  /** Set once the body streams: the scrubber, when there is one. */
  #scrubber: Scrubber | null = null;
  #streaming = false;
  #waiting = false;
  /** The decoder of a compressed body: written to, piped on to the client. */
  readonly #decoder: Transform | null;

  /**
   * `headers`: the client's head, without Content-Length when the body is
   * scrubbed or decoded. `replacements`: null when nothing is scrubbed.
   */
  constructor(
    res: ServerResponse,
    status: number,
    message: string,
    headers: RawHeaders,
    replacements: readonly Replacement[] | null,
    decoder: Transform | null,
    source: BodySource,
  ) {
    this.#res = res;
    this.#status = status;
    this.#message = message;
    this.#headers = headers;
    this.#replacements = replacements;
    this.#source = source;
    this.#decoder = decoder;
    if (decoder !== null) {
      res.writeHead(status, message, headers.toArray());
      res.flushHeaders();
      pipeline(decoder, scrubStream(replacements ?? []), res, (err) => {
        if (err) res.destroy();
      });
      return;
    }
    this.#turn = setImmediate(() => this.#stream());
  }

  body(chunk: Buffer): void {
    if (this.#decoder !== null) {
      if (!this.#decoder.write(chunk)) this.#wait(this.#decoder);
      return;
    }
    if (!this.#streaming) {
      this.#held.push(chunk);
      this.#bytes += chunk.length;
      if (this.#bytes > WHOLE_BODY_BYTES) this.#stream();
      return;
    }
    this.#send(this.#scrubber === null ? chunk : this.#scrubber.write(chunk));
  }

  end(): void {
    if (this.#decoder !== null) {
      this.#decoder.end();
      return;
    }
    const res = this.#res;
    if (res.destroyed || res.writableEnded) return;
    if (this.#streaming) {
      const rest = this.#scrubber?.end();
      if (rest !== undefined && rest.length > 0) res.end(rest);
      else res.end();
      return;
    }
    this.#clearTurn();
    const held = this.#held.splice(0);
    const whole = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held);
    if (this.#replacements === null) {
      res.writeHead(this.#status, this.#message, this.#headers.toArray());
      if (whole.length > 0) res.end(whole);
      else res.end();
      return;
    }
    const body = Scrubber.bytes(this.#replacements, whole);
    res.writeHead(
      this.#status,
      this.#message,
      this.#headers.set('Content-Length', String(body.length)).toArray(),
    );
    res.end(body);
  }

  /** The upstream failed mid-body: the client's connection is cut, never a short body passed as whole. */
  fail(): void {
    this.#clearTurn();
    this.#decoder?.destroy();
    this.#res.destroy();
  }

  #stream(): void {
    this.#clearTurn();
    if (this.#streaming) return;
    this.#streaming = true;
    const res = this.#res;
    // Answered already (a refusal after an upstream error), or gone.
    if (res.destroyed || res.headersSent) return;
    res.writeHead(this.#status, this.#message, this.#headers.toArray());
    if (this.#replacements !== null) this.#scrubber = new Scrubber(this.#replacements);
    const held = this.#held.splice(0);
    if (held.length === 0) res.flushHeaders();
    for (const c of held) this.#send(this.#scrubber === null ? c : this.#scrubber.write(c));
  }

  #send(chunk: Buffer): void {
    if (chunk.length === 0 || this.#res.destroyed) return;
    if (!this.#res.write(chunk)) this.#wait(this.#res);
  }

  /** Pauses the source until `sink` drains. */
  #wait(sink: NodeJS.EventEmitter): void {
    if (this.#waiting) return;
    this.#waiting = true;
    this.#source.pause();
    sink.once('drain', () => {
      this.#waiting = false;
      this.#source.resume();
    });
  }

  #clearTurn(): void {
    if (this.#turn !== null) clearImmediate(this.#turn);
    this.#turn = null;
  }
}
