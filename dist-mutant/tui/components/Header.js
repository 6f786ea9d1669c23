import { jsx as _jsx, jsxs as _jsxs } from "react/jsx-runtime";
/** The top two lines: vault and time; the views (the current one marked) and the counts. */
import { Box, Text } from 'ink';
import { formatTime } from '../../src/core/audit.js';
import { cell, plain } from '../format.js';
import { VIEWS } from '../keys.js';
const TITLES = {
    agents: 'Agents',
    entries: 'Entries',
    audit: 'Audit',
};
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
export function Header({ vault, now, view, agents, entries, loaded = true }) {
    const locked = agents.filter((a) => a.state === 'locked').length;
    const live = agents.filter((a) => a.state !== 'revoked');
    // Every live agent's recent violations, a locked one's too: "0 violations"
    // beside a lock that two of them caused read as a contradiction (issue 38).
    const violation = live.reduce((n, a) => n + a.violations.length, 0);
    return (_jsxs(Box, { flexDirection: "column", flexShrink: 0, children: [_jsxs(Box, { justifyContent: "space-between", children: [_jsx(Text, { bold: true, children: cell(`vault-cli · ${plain(vault)}`, 58).trimEnd() }), _jsx(Text, { children: formatTime(now) })] }), _jsxs(Box, { justifyContent: "space-between", children: [_jsx(Box, { children: VIEWS.map((v) => (_jsx(Text, { inverse: v === view, bold: v === view, children: v === view ? `[${TITLES[v]}]` : ` ${TITLES[v]} ` }, v))) }), loaded ? (_jsxs(Text, { children: [plural(live.length, 'agent', 'agents'), " \u00B7", ' ', _jsxs(Text, { color: locked > 0 ? 'red' : undefined, children: [locked, " locked"] }), " \u00B7", ' ', _jsx(Text, { color: violation > 0 ? 'yellow' : undefined, children: plural(violation, 'violation', 'violations') }), ' ', "\u00B7 ", plural(entries.length, 'entry', 'entries')] })) : (_jsx(Text, { dimColor: true, children: "loading\u2026" }))] })] }));
}
