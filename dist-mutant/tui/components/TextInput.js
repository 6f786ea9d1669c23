import { jsxs as _jsxs, jsx as _jsx } from "react/jsx-runtime";
/**
 * One labelled input line. The typing itself is the reducer's; this only
 * shows it. A secret field shows a fixed mask and its length, never a
 * character of what was typed.
 */
import { Text } from 'ink';
import { cell, plain } from '../format.js';
/** What a field shows of its value. */
export function shownValue(field) {
    if (field.kind === 'secret') {
        const n = Array.from(field.value).length;
        return n === 0 ? '(hidden, nothing typed)' : `(hidden, ${n} ${n === 1 ? 'char' : 'chars'})`;
    }
    if (field.kind === 'choice')
        return (field.choices ?? []).map((c) => (c === field.value ? `[${c}]` : ` ${c} `)).join('');
    return plain(field.value);
}
export function TextInput({ field, focused }) {
    return (_jsxs(Text, { children: [_jsxs(Text, { bold: focused, children: [focused ? '> ' : '  ', cell(field.label, 34)] }), ' ', _jsx(Text, { color: field.kind === 'secret' ? 'gray' : undefined, children: shownValue(field) }), focused && field.kind !== 'secret' && field.kind !== 'choice' ? (_jsx(Text, { inverse: true, children: " " })) : null] }));
}
