/**
 * The deterministic text of a record, for MACs and checksums: keys sorted,
 * undefined members left out, Buffers as hex. Pure; what it returns for a
 * record must never change (stored MACs and checksums depend on it).
 */
export function canon(v: unknown): string {
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `b:${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'u';
}
