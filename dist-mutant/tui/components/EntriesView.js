import { jsxs as _jsxs, jsx as _jsx } from "react/jsx-runtime";
/**
 * Entries by name: fields with their versions and the hosts the proxy may send
 * them to. A field a transcript sweep found is marked `EXPOSED` until set anew.
 */
import { Box, Text } from 'ink';
import { cell, entryName, plain, windowOf } from '../format.js';
const W = { name: 24, fields: 32, hosts: 20 };
/**
 * The fields cell: exposed fields first, and when the list is cut, the
 * count of exposed ones kept at its end, so the mark `sweep` set is never
 * what the width cuts off (issue 38).
 */
export function fieldsCell(fields, width) {
    const exposed = fields.filter((f) => f.exposed !== undefined);
    const ordered = [...exposed, ...fields.filter((f) => f.exposed === undefined)];
    const text = ordered
        .map((f) => `${plain(f.name)} v${f.version}${f.exposed === undefined ? '' : ' EXPOSED'}`)
        .join(', ');
    if (exposed.length === 0 || Array.from(text).length <= width)
        return cell(text, width);
    const mark = ` ${exposed.length} EXPOSED`;
    return cell(text, Math.max(1, width - mark.length)) + mark;
}
export function EntriesView({ entries, selected, rows, width = 80 }) {
    const [start, end] = windowOf(entries.length, selected, Math.max(1, rows));
    const fieldsW = Math.max(W.fields, width - 2 - W.name - 2 - W.hosts - 1);
    return (_jsxs(Box, { flexDirection: "column", flexShrink: 0, children: [_jsxs(Text, { bold: true, children: ['  ', cell('ENTRY', W.name), " ", cell('FIELDS (version)', fieldsW), " HOSTS"] }), entries.length === 0 ? _jsx(Text, { dimColor: true, children: " no entries yet (a adds one)" }) : null, entries.slice(start, end).map((e, i) => {
                const chosen = start + i === selected;
                const fields = fieldsCell(e.fields, fieldsW);
                const hosts = e.hosts.length === 0 ? 'any' : e.hosts.map(plain).join(', ');
                return (_jsxs(Text, { inverse: chosen, children: [chosen ? '> ' : '  ', cell(entryName(e.name), W.name), " ", fields, " ", hosts] }, e.name));
            })] }));
}
