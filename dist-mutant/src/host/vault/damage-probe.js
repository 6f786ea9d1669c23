/** Refusals a damaged record can cause as well as a caller. */
export const ACCESS_REFUSALS = new Set(['VLT-2040', 'VLT-2041', 'VLT-2044']);
/**
 * How long a verdict holds. Reading every record costs about as much as the
 * start-up scan (milliseconds per MB); a caller sending bad tokens in a loop
 * must not make the host do it per request.
 */
const PROBE_MS = 10_000;
const verdicts = new WeakMap();
/** The damage the store holds (VLT-3034 a record that does not decode, VLT-3030/3035 a failed checksum), or null. */
export function storeDamage(ctx) {
    const now = ctx.now();
    const last = verdicts.get(ctx);
    if (last !== undefined && now - last.at < PROBE_MS)
        return last.code;
    let code = null;
    try {
        const records = ctx.store().read((tx) => tx.rawRecords());
        if (records.some((r) => r.error !== undefined))
            code = 'VLT-3034';
        else if (records.some((r) => r.key === 'header' && r.sumOk === false))
            code = 'VLT-3030';
        else if (records.some((r) => r.sumOk === false))
            code = 'VLT-3035';
    }
    catch {
        // A store that cannot be read now: the refusal stands as it was.
    }
    verdicts.set(ctx, { at: now, code });
    return code;
}
