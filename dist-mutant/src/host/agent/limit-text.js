/** What an agent refused by its rate limits is told (access.ts charge): when to retry, or who can raise them. */
export function retryText(d) {
    const when = d.retryAt === null
        ? 'this request alone exceeds the limit'
        : `retry after ${new Date(d.retryAt).toISOString()}`;
    // Only the violation's own request, retried at T, forgives it (policy.ts settle).
    const forgiven = d.retryAt === null || !d.clears
        ? ''
        : ' (retried then, before asking for anything new, this request clears it)';
    // Another request refused while the violation's quiet time runs records no
    // second one, and is not told it was recorded: read twice, the agent and
    // the owner would count two violations (the second locks).
    if (!d.counted && !d.clears)
        return `Rate limit exceeded (${d.window}); no new violation: refused under the one already recorded, which this request does not clear; ${when}.`;
    return `Rate limit exceeded (${d.window}); violation recorded${forgiven}; ${when}.`;
}
/** What an agent whose request alone is over its limit is told: nothing counted, and who can change it. */
export function tooManyText(agent, d) {
    const flag = d.window === 'minute' ? '--per-minute' : '--per-hour';
    return (`This request names ${d.wanted} distinct credentials and the agent may read ${d.limit} a ${d.window}: ` +
        `nothing was released and no violation recorded. Ask the owner to raise the limit ` +
        `(vault-cli agent limits ${agent} ${flag} ${d.wanted})` +
        (d.window === 'minute'
            ? ` or to count these entries as one credential (vault-cli agent group ${agent} <group> <entry>...)`
            : '') +
        `, or ask for fewer at once.`);
}
