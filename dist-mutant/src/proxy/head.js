/** An RFC 9110 token, what a header name must be. */
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/** What would split or end a line. */
const LINE_BREAKING = /[\r\n\0]/;
/** A head that cannot be written without changing what it says. */
export class UnsafeHead extends Error {
    name = 'UnsafeHead';
}
export const requestLine = (method, target) => `${method} ${target} HTTP/1.1`;
export const statusLine = (status, message) => `HTTP/1.1 ${status} ${message}`;
/**
 * The bytes of a head: `start` (a request or status line, without CRLF),
 * then each header as `Name: value`.
 * @throws UnsafeHead for a name that is not a token, or CR, LF or NUL in a value or the start line.
 */
export function serializeHead(start, headers) {
    if (LINE_BREAKING.test(start))
        throw new UnsafeHead('line break in the start line');
    let text = `${start}\r\n`;
    for (const [name, value] of headers) {
        if (!TOKEN.test(name))
            throw new UnsafeHead('header name is not a token');
        if (LINE_BREAKING.test(value))
            throw new UnsafeHead(`line break in the value of ${name}`);
        text += `${name}: ${value}\r\n`;
    }
    return Buffer.from(`${text}\r\n`, 'latin1');
}
