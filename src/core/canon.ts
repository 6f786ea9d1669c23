/**
 * The deterministic text of a record, for MACs and checksums: keys sorted,
 * undefined members left out, Buffers as hex. Pure; what it returns for a
 * record must never change (stored MACs and checksums depend on it). Built
 * by one string per object rather than arrays joined: every write of a
 * record checksums it, two per proxy fill (issue 28).
 */
export function canon(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'u';
  if (v instanceof Uint8Array) {
    const b = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    return `b:${b.toString('hex')}`;
  }
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  const o = v as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const k of sortedKeys(o)) {
    const member = o[k];
    if (member === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canon(member)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * The object's own keys in the order `Array.prototype.sort` gives them (UTF-16
 * code units, as `<` compares strings; keys are distinct, so no ties), sorted
 * in place by insertion when there are a few: a rate record's objects have a
 * handful, and V8's sort allocates its own working state on every call, which
 * was the largest allocation of a fill (about 6 KB of its 58, four records
 * made canonical, issue 37). Many (an agent's grants) take the sort.
 */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  if (keys.length > 12) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && (keys[j] as string) > k; j--) keys[j + 1] = keys[j] as string;
    keys[j + 1] = k;
  }
  return keys;
}
