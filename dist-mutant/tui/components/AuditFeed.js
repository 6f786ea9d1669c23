import { jsxs as _jsxs, jsx as _jsx } from "react/jsx-runtime";
/**
 * The latest audit records: TIME ACTION ENTRY ACTOR OUTCOME. A record holds
 * metadata only, never a value. Violations and lockdowns stand out by colour
 * and by a marker in the action column.
 */
import { Box, Text } from 'ink';
import { alarmOf, cell, feedTime, plain, recordTarget } from '../format.js';
const W = { time: 14, action: 14, entry: 20, actor: 14 };
export function AuditFeed({ records, rows, scroll = 0, loaded = true }) {
    const end = Math.max(0, records.length - scroll);
    const shown = records.slice(Math.max(0, end - Math.max(1, rows)), end);
    return (_jsxs(Box, { flexDirection: "column", flexShrink: 0, children: [_jsxs(Text, { bold: true, children: [cell('TIME', W.time), " ", cell('ACTION', W.action), " ", cell('ENTRY', W.entry), ' ', cell('ACTOR', W.actor), " OUTCOME"] }), records.length === 0 ? (_jsx(Text, { dimColor: true, children: loaded ? 'no audit records yet' : 'loading…' })) : null, shown.map((r) => {
                const alarm = alarmOf(r);
                const marker = alarm === 'locked' ? '■ ' : alarm === 'limited' ? '▲ ' : '';
                const color = alarm === 'locked' ? 'red' : alarm === 'limited' ? 'yellow' : undefined;
                return (_jsxs(Text, { color: color, bold: alarm !== null, children: [cell(feedTime(r.at), W.time), " ", cell(marker + r.action, W.action), ' ', cell(recordTarget(r), W.entry), " ", cell(plain(r.actor), W.actor), ' ', r.outcome === 'ok' ? 'ok' : plain(r.outcome)] }, r.seq));
            })] }));
}
