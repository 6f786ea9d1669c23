/**
 * The deterministic text of a record, for MACs and checksums: keys sorted,
 * undefined members left out, Buffers as hex. Pure; what it returns for a
 * record must never change (stored MACs and checksums depend on it). Built
 * by one string per object rather than arrays joined: every write of a
 * record checksums it, two per proxy fill (issue 28).
 */
export function canon(v) {
    if (typeof v !== 'object' || v === null)
        return JSON.stringify(v) ?? 'u';
    if (v instanceof Uint8Array) {
        const b = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
        return `b:${b.toString('hex')}`;
    }
    if (Array.isArray(v))
        return `[${v.map(canon).join(',')}]`;
    const o = v;
    let out = '{';
    let first = true;
    for (const k of Object.keys(o).sort()) {
        const member = o[k];
        if (member === undefined)
            continue;
        out += `${first ? '' : ','}${JSON.stringify(k)}:${canon(member)}`;
        first = false;
    }
    return `${out}}`;
}
