/**
 * The keys of a host's copy of the rows (mirror.ts), in the order LMDB keeps
 * string keys (code units; ASCII keys: bytes and code units agree), as a
 * list of sorted chunks of at most 2 * CHUNK keys each. One insert or removal
 * searches the chunks' last keys and then one chunk, and moves at most one
 * chunk's keys: O(log n + CHUNK), where one sorted array moved half the list
 * (issue 37: 700,000 rows inserted one at a time in the database's order took
 * 56 s). A whole load is sorted once (`from`).
 */
const CHUNK = 512;
/** Binary search: the index of the first key >= `key`. */
export function lowerBound(keys, key) {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
export class SortedKeys {
    chunks = [];
    /** The last key of each chunk. */
    lasts = [];
    count = 0;
    /** The keys of `keys`, sorted once (duplicates kept once). */
    static from(keys) {
        const out = new SortedKeys();
        keys.sort();
        let cur = [];
        let prev;
        for (const k of keys) {
            if (k === prev)
                continue;
            prev = k;
            cur.push(k);
            if (cur.length === CHUNK) {
                out.chunks.push(cur);
                cur = [];
            }
        }
        if (cur.length > 0)
            out.chunks.push(cur);
        out.lasts = out.chunks.map((c) => c[c.length - 1]);
        out.count = out.chunks.reduce((n, c) => n + c.length, 0);
        return out;
    }
    get size() {
        return this.count;
    }
    /** Adds `key`; false if it was there. */
    insert(key) {
        if (this.chunks.length === 0) {
            this.chunks.push([key]);
            this.lasts.push(key);
            this.count = 1;
            return true;
        }
        const i = Math.min(lowerBound(this.lasts, key), this.chunks.length - 1);
        const c = this.chunks[i];
        const at = lowerBound(c, key);
        if (c[at] === key)
            return false;
        c.splice(at, 0, key);
        this.count++;
        if (c.length > 2 * CHUNK) {
            const tail = c.splice(CHUNK);
            this.chunks.splice(i + 1, 0, tail);
            this.lasts.splice(i, 1, c[c.length - 1], tail[tail.length - 1]);
        }
        else
            this.lasts[i] = c[c.length - 1];
        return true;
    }
    /** Removes `key`; false if it was not there. */
    delete(key) {
        const i = lowerBound(this.lasts, key);
        const c = this.chunks[i];
        if (c === undefined)
            return false;
        const at = lowerBound(c, key);
        if (c[at] !== key)
            return false;
        c.splice(at, 1);
        this.count--;
        if (c.length === 0) {
            this.chunks.splice(i, 1);
            this.lasts.splice(i, 1);
        }
        else
            this.lasts[i] = c[c.length - 1];
        return true;
    }
    /** The keys from `start` (included) to `end` (excluded), at most `limit` of them. */
    range(start, end, limit = Infinity) {
        const out = [];
        let i = start === undefined ? 0 : lowerBound(this.lasts, start);
        let at = start === undefined || i >= this.chunks.length
            ? 0
            : lowerBound(this.chunks[i], start);
        for (; i < this.chunks.length && out.length < limit; i++, at = 0) {
            const c = this.chunks[i];
            for (; at < c.length && out.length < limit; at++) {
                const k = c[at];
                if (end !== undefined && k >= end)
                    return out;
                out.push(k);
            }
        }
        return out;
    }
    *[Symbol.iterator]() {
        for (const c of this.chunks)
            yield* c;
    }
}
