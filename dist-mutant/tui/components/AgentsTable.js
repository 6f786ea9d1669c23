import { jsxs as _jsxs, jsx as _jsx } from "react/jsx-runtime";
/**
 * Every agent: state (colour and a text marker, so it reads without colour),
 * distinct reads this minute and hour against its limits, scope size, and
 * the entries it may use only in requests its caveats allow (`agent caveats`).
 */
import { Box, Text } from 'ink';
import { cell, plain, stateLook, usageCell, windowOf } from '../format.js';
import { COLOR } from './tone.js';
const W = { name: 16, kind: 6, state: 20, minute: 7, hour: 7 };
export function AgentsTable({ agents, selected, rows, active, loaded = true }) {
    const [start, end] = windowOf(agents.length, selected, Math.max(1, rows));
    return (_jsxs(Box, { flexDirection: "column", flexShrink: 0, children: [_jsxs(Text, { bold: true, children: ['  ', cell('AGENT', W.name), " ", cell('KIND', W.kind), " ", cell('STATE', W.state), ' ', cell('MIN', W.minute), " ", cell('HOUR', W.hour), " SCOPE"] }), agents.length === 0 ? (_jsx(Text, { dimColor: true, children: loaded ? ' no agents yet (n adds one)' : ' loading…' })) : null, agents.slice(start, end).map((a, i) => {
                const index = start + i;
                const look = stateLook(a.state);
                const minute = usageCell(a.usage.minute, a.limits.perMinute);
                const hour = usageCell(a.usage.hour, a.limits.perHour);
                const chosen = active && index === selected;
                return (_jsxs(Text, { inverse: chosen, children: [chosen ? '> ' : '  ', cell(plain(a.name), W.name), " ", cell(a.kind, W.kind), ' ', _jsx(Text, { color: COLOR[look.tone], bold: look.tone === 'alarm', children: cell(`${look.marker} ${look.text}`, W.state) }), ' ', _jsx(Text, { color: minute.full ? 'yellow' : undefined, children: cell(minute.text, W.minute) }), ' ', _jsx(Text, { color: hour.full ? 'yellow' : undefined, children: cell(hour.text, W.hour) }), ' ', a.scope.length, " ", a.scope.length === 1 ? 'entry' : 'entries', caveatsNote(a)] }, a.name));
            })] }));
}
/** ` · caveats: GitHub (2 rules)`: the entries under request caveats (`agent show` lists the rules). */
function caveatsNote(a) {
    const all = a.caveats ?? [];
    if (all.length === 0)
        return '';
    const each = all.map((c) => `${plain(c.entry)} (${c.rules.length} ${c.rules.length === 1 ? 'rule' : 'rules'})`);
    return ` · caveats: ${each.join(', ')}`;
}
