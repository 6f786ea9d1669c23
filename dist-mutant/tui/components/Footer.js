import { jsx as _jsx } from "react/jsx-runtime";
/** The notice line (errors as `vault-cli: VLT-XXXX: message`) and the key footer, from the key table. */
import { Box, Text } from 'ink';
import { footerText } from '../keys.js';
import { plain } from '../format.js';
export function NoticeLine({ notice }) {
    if (notice === null)
        return _jsx(Text, { children: " " });
    return (_jsx(Text, { color: notice.kind === 'error' ? 'red' : 'cyan', wrap: "truncate-end", children: plain(notice.text) }));
}
export function Footer({ mode, tokenShown, }) {
    return (_jsx(Box, { flexShrink: 0, children: _jsx(Text, { dimColor: true, children: tokenShown ? 'any key: close' : footerText(mode) }) }));
}
