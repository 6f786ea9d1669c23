const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const hex = (c, width) => c.toString(16).toUpperCase().padStart(width, '0');
/** JSON string content: JSON.stringify's escapes, without the quotes. */
export function jsonString(s) {
    return JSON.stringify(s).slice(1, -1);
}
/** YAML 1.2 printable, minus the characters YAML 1.1 readers take for line breaks or a BOM. */
function yamlPrintable(c) {
    if (c >= 0x20 && c <= 0x7e)
        return true;
    if (c >= 0xa0 && c <= 0xd7ff)
        return c !== 0x2028 && c !== 0x2029;
    if (c >= 0xe000 && c <= 0xfffd)
        return c !== 0xfeff;
    return c >= 0x10000;
}
const YAML_SHORT = { 0: '\\0', 9: '\\t', 10: '\\n', 13: '\\r' };
/** YAML double-quoted scalar content. */
export function yamlDouble(s) {
    let out = '';
    for (const ch of s) {
        const c = ch.codePointAt(0);
        if (ch === '\\')
            out += '\\\\';
        else if (ch === '"')
            out += '\\"';
        else if (yamlPrintable(c))
            out += ch;
        else
            out += YAML_SHORT[c] ?? (c <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`);
    }
    return out;
}
const TOML_SHORT = {
    8: '\\b',
    9: '\\t',
    10: '\\n',
    12: '\\f',
    13: '\\r',
    0x22: '\\"',
    0x5c: '\\\\',
};
/** TOML basic-string content. */
export function tomlBasic(s) {
    return s.replace(/[\u0000-\u001f\u007f"\\]/g, (ch) => {
        const c = ch.charCodeAt(0);
        return TOML_SHORT[c] ?? `\\u${hex(c, 4)}`;
    });
}
const anyYamlUnprintable = (s) => {
    for (const ch of s)
        if (!yamlPrintable(ch.codePointAt(0)))
            return true;
    return false;
};
/**
 * Safe inside a YAML plain scalar that has begun: not empty (`x:` + nothing
 * would end in a mapping indicator), no comment, mapping or flow syntax.
 */
function yamlPlainSafe(s) {
    return s.length > 0 && !anyYamlUnprintable(s) && !/^[\s#]|\s$|:$|: |\s#|[,[\]{}]/.test(s);
}
/**
 * The text to write for `value` in `context`.
 * @returns the bytes, or a reason (without the value) why it cannot be written there.
 */
export function escapeValue(value, context) {
    if (context === 'raw')
        return value;
    let s;
    try {
        s = utf8.decode(value);
    }
    catch {
        return 'the value is not UTF-8 text, so it cannot be escaped for this format; use --raw';
    }
    const out = escapeText(s, context);
    return out === null ? reason(context) : Buffer.from(out);
}
function escapeText(s, context) {
    switch (context) {
        case 'raw':
            return s;
        case 'json.value':
            return JSON.stringify(s);
        case 'json.string':
            return jsonString(s);
        case 'yaml.value':
            return `"${yamlDouble(s)}"`;
        case 'yaml.double':
            return yamlDouble(s);
        case 'yaml.single':
            return anyYamlUnprintable(s) ? null : s.replaceAll("'", "''");
        case 'yaml.plain':
            return yamlPlainSafe(s) ? s : null;
        case 'toml.value':
            return `"${tomlBasic(s)}"`;
        case 'toml.basic':
            return tomlBasic(s);
        case 'toml.literal':
            return /['\u0000-\u0008\u000a-\u001f\u007f]/.test(s) ? null : s;
        case 'toml.ml-literal':
            return /['\u0000-\u0008\u000b-\u001f\u007f]/.test(s) ? null : s;
        case 'env.value':
            if (!/['\r]/.test(s))
                return `'${s}'`;
            if (!/"|\\[nr]/.test(s))
                return `"${s.replaceAll('\n', '\\n').replaceAll('\r', '\\r')}"`;
            if (!/[`\r]/.test(s))
                return `\`${s}\``;
            return null;
        case 'env.bare':
            // U+2028/U+2029 end a line for a JavaScript reader (dotenv's multiline regex).
            return /[#\r\n\u2028\u2029]|^\s|\s$/.test(s) ? null : s;
        case 'env.single':
            return /['\r]/.test(s) ? null : s;
        case 'env.double':
            return /"|\\[nr]/.test(s) ? null : s.replaceAll('\n', '\\n').replaceAll('\r', '\\r');
        case 'env.backtick':
            return /[`\r]/.test(s) ? null : s;
        case 'comment':
            return /[\u0000-\u0008\u000a-\u001f\u007f]/.test(s) ? null : s;
    }
}
function reason(context) {
    switch (context) {
        case 'yaml.single':
        case 'toml.literal':
        case 'toml.ml-literal':
        case 'env.single':
        case 'env.backtick':
            return 'the value cannot be written inside this kind of quotes; use double quotes';
        case 'yaml.plain':
        case 'env.bare':
            return 'the value cannot be written inside an unquoted value; put that value in double quotes';
        case 'env.double':
            return 'the value cannot be written inside double quotes in .env; use the reference alone as the value';
        case 'env.value':
            return 'the value holds every kind of .env quote and cannot be written exactly; use --raw';
        default:
            return 'the value cannot be written inside a comment';
    }
}
