import { pipeline } from 'node:stream';
import { Scrubber, scrubStream } from './scrub.js';
/** A response that ends within this much in its first turn is sent whole. */
const WHOLE_BODY_BYTES = 64 * 1024;
export class Relay {
    #res;
    #status;
    #message;
    #headers;
    #replacements;
    #source;
    #held = [];
    #bytes = 0;
    #turn = null;
    /** Set once the body streams: the scrubber, when there is one. */
    #scrubber = null;
    #streaming = false;
    #waiting = false;
    /** The decoder of a compressed body: written to, piped on to the client. */
    #decoder;
    /**
     * `headers`: the client's head, without Content-Length when the body is
     * scrubbed or decoded. `replacements`: null when nothing is scrubbed.
     */
    constructor(res, status, message, headers, replacements, decoder, source) {
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
                if (err)
                    res.destroy();
            });
            return;
        }
        this.#turn = setImmediate(() => this.#stream());
    }
    body(chunk) {
        if (this.#decoder !== null) {
            if (!this.#decoder.write(chunk))
                this.#wait(this.#decoder);
            return;
        }
        if (!this.#streaming) {
            this.#held.push(chunk);
            this.#bytes += chunk.length;
            if (this.#bytes > WHOLE_BODY_BYTES)
                this.#stream();
            return;
        }
        this.#send(this.#scrubber === null ? chunk : this.#scrubber.write(chunk));
    }
    end() {
        if (this.#decoder !== null) {
            this.#decoder.end();
            return;
        }
        const res = this.#res;
        if (res.destroyed || res.writableEnded)
            return;
        if (this.#streaming) {
            const rest = this.#scrubber?.end();
            if (rest !== undefined && rest.length > 0)
                res.end(rest);
            else
                res.end();
            return;
        }
        this.#clearTurn();
        const held = this.#held.splice(0);
        const whole = held.length === 1 ? held[0] : Buffer.concat(held);
        if (this.#replacements === null) {
            res.writeHead(this.#status, this.#message, this.#headers.toArray());
            if (whole.length > 0)
                res.end(whole);
            else
                res.end();
            return;
        }
        const body = Scrubber.bytes(this.#replacements, whole);
        res.writeHead(this.#status, this.#message, this.#headers.set('Content-Length', String(body.length)).toArray());
        res.end(body);
    }
    /** The upstream failed mid-body: the client's connection is cut, never a short body passed as whole. */
    fail() {
        this.#clearTurn();
        this.#decoder?.destroy();
        this.#res.destroy();
    }
    #stream() {
        this.#clearTurn();
        if (this.#streaming)
            return;
        this.#streaming = true;
        const res = this.#res;
        // Answered already (a refusal after an upstream error), or gone.
        if (res.destroyed || res.headersSent)
            return;
        res.writeHead(this.#status, this.#message, this.#headers.toArray());
        if (this.#replacements !== null)
            this.#scrubber = new Scrubber(this.#replacements);
        const held = this.#held.splice(0);
        if (held.length === 0)
            res.flushHeaders();
        for (const c of held)
            this.#send(this.#scrubber === null ? c : this.#scrubber.write(c));
    }
    #send(chunk) {
        if (chunk.length === 0 || this.#res.destroyed)
            return;
        if (!this.#res.write(chunk))
            this.#wait(this.#res);
    }
    /** Pauses the source until `sink` drains. */
    #wait(sink) {
        if (this.#waiting)
            return;
        this.#waiting = true;
        this.#source.pause();
        sink.once('drain', () => {
            this.#waiting = false;
            this.#source.resume();
        });
    }
    #clearTurn() {
        if (this.#turn !== null)
            clearImmediate(this.#turn);
        this.#turn = null;
    }
}
