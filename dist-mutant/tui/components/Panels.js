import { jsx as _jsx, jsxs as _jsxs } from "react/jsx-runtime";
/**
 * What opens over a view: a form, a confirmation, the unlock ceremony, a new
 * agent's token (shown once), the help screen.
 */
import { Box, Text } from 'ink';
import { KEY_TABLE } from '../keys.js';
import { plain } from '../format.js';
import { TextInput } from './TextInput.js';
export function FormPanel({ form }) {
    return (_jsxs(Box, { flexDirection: "column", borderStyle: "round", paddingX: 1, children: [_jsx(Text, { bold: true, children: plain(form.title) }), form.fields.map((f, i) => (_jsx(TextInput, { field: f, focused: i === form.focus }, f.id))), form.busy ? _jsx(Text, { dimColor: true, children: "working\u2026" }) : null] }));
}
const QUESTIONS = {
    removeEntry: (t) => `Remove entry ${t} and all its fields? Agents lose it at once.`,
    revokeAgent: (t) => `Revoke agent ${t}? Its token stops working at once.`,
};
export function ConfirmPanel({ confirm }) {
    return (_jsxs(Box, { flexDirection: "column", borderStyle: "round", borderColor: "yellow", paddingX: 1, children: [_jsx(Text, { bold: true, children: QUESTIONS[confirm.kind](plain(confirm.target)) }), _jsx(Text, { children: confirm.busy ? 'working…' : 'y: yes   n/Esc: no' })] }));
}
const UNLOCK_STATUS = {
    starting: 'Starting the ceremony page…',
    waiting: 'Waiting for the hardware key: open the page and touch your key.',
    unlocked: 'Unlocked.',
    'not-locked': 'The agent was not locked.',
    enrolled: 'Enrolled.',
    failed: 'Not unlocked.',
};
export function UnlockPanel({ unlock }) {
    const color = unlock.status === 'failed'
        ? 'red'
        : unlock.status === 'unlocked' || unlock.status === 'enrolled'
            ? 'green'
            : undefined;
    const enrol = unlock.kind === 'enrol';
    return (_jsxs(Box, { flexDirection: "column", borderStyle: "round", borderColor: "red", paddingX: 1, children: [_jsx(Text, { bold: true, children: enrol
                    ? 'Enrol a hardware key (a USB key or a platform passkey): it lifts locks'
                    : `Unlock agent ${plain(unlock.agent)} with the hardware key` }), unlock.url === null ? null : _jsxs(Text, { children: ["Open ", unlock.url] }), _jsx(Text, { color: color, children: enrol && unlock.status === 'failed'
                    ? 'Not enrolled.'
                    : enrol && unlock.status === 'enrolled'
                        ? `Enrolled ${plain(unlock.agent)}; \`vault-cli key add\` enrols a spare.`
                        : UNLOCK_STATUS[unlock.status] }), unlock.error === null ? null : _jsx(Text, { color: "red", children: unlock.error }), _jsx(Text, { dimColor: true, children: "Esc: close this panel" })] }));
}
export function TokenPanel({ agent, token }) {
    return (_jsxs(Box, { flexDirection: "column", borderStyle: "round", borderColor: "green", paddingX: 1, children: [_jsxs(Text, { bold: true, children: ["Token of agent ", plain(agent), ": shown once, copy it now"] }), _jsx(Text, { children: token }), _jsx(Text, { dimColor: true, children: "Any key: close (the token is not shown again)" })] }));
}
/** Every binding of the views with its help, from the key table. */
export function HelpPanel() {
    const views = ['agents', 'entries', 'audit'];
    return (_jsxs(Box, { flexDirection: "column", borderStyle: "round", paddingX: 1, children: [_jsx(Text, { bold: true, children: "Keys (any key closes this)" }), KEY_TABLE.filter((b) => b.modes.some((m) => views.some((v) => v === m))).map((b) => {
                const where = views.filter((v) => b.modes.includes(v));
                return (_jsxs(Text, { children: [b.label.padEnd(7), " ", b.help, where.length < views.length ? _jsxs(Text, { dimColor: true, children: [" (", where.join(', '), " view)"] }) : null] }, `${b.action}:${b.label}`));
            }), _jsx(Text, { dimColor: true, children: "Forms: Tab/\u2193 next field, \u2191 back, Enter submits on the last, Esc cancels." })] }));
}
