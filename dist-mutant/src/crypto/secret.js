/**
 * Secrets are bytes with a redacting face: a `Secret` never prints, logs or
 * serialises its contents. `wipe()` zeroes the bytes; in JavaScript that is
 * best-effort (copies made by the engine, strings and the GC are out of reach),
 * so secrets stay Buffers as long as possible and become strings only at the edge.
 */
/**
 * util.inspect.custom by its registered name: importing node:util for it cost
 * every `get` about 2 ms (docs/development.md, "Start-up").
 */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');
export class Secret {
    #bytes;
    constructor(bytes) {
        this.#bytes = bytes;
    }
    static fromString(text) {
        return new Secret(Buffer.from(text, 'utf8'));
    }
    /** The bytes themselves; callers must not keep them beyond their use. */
    expose() {
        return this.#bytes;
    }
    get length() {
        return this.#bytes.length;
    }
    wipe() {
        this.#bytes.fill(0);
    }
    toString() {
        return '[REDACTED]';
    }
    toJSON() {
        return '[REDACTED]';
    }
    [INSPECT]() {
        return 'Secret [REDACTED]';
    }
}
