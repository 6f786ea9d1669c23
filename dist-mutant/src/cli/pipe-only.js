import { VaultError } from '../core/errors.js';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { fstatSync, writeSync } = process.getBuiltinModule('node:fs');
const { isatty } = process.getBuiltinModule('node:tty');
/** What stdout is, when it may not take a value; null when it may. */
export function unfitForValues(fd) {
    let st;
    try {
        st = fstatSync(fd);
    }
    catch {
        return 'closed';
    }
    if (st.isFIFO() || st.isSocket())
        return null;
    if (st.isCharacterDevice())
        return isatty(fd) ? 'a terminal' : null;
    if (st.isFile())
        return 'a file';
    if (st.isBlockDevice())
        return 'a block device';
    return 'not a pipe';
}
/**
 * @throws VaultError VLT-2050 when stdout (fd 1) is a terminal, a file or
 * anything else that is not a pipe; `example` shows the piped form.
 */
export function requirePipe(example) {
    const what = unfitForValues(1);
    if (what === null)
        return;
    throw new VaultError('VLT-2050', `Values go only into a pipe, and stdout is ${what}: pipe it to the program that needs it (${example} | program), or use the proxy or render; nothing was read.`);
}
/**
 * One value and a newline into stdout, the pipe requirePipe checked: written
 * to fd 1 directly, without the stream Node builds for process.stdout (which
 * costs `get` and `totp` about a millisecond to set up), and the copy made
 * here zeroed once written. What fd 1 does not take at once (a full pipe
 * another process made non-blocking: EAGAIN; a reader gone: EPIPE) goes
 * through `streams.stdout` as before, which waits for the pipe or, on EPIPE,
 * ends the process as src/cli/main.ts has it.
 */
export function writeValue(streams, value) {
    const line = Buffer.alloc(value.length + 1);
    value.copy(line);
    line[value.length] = 0x0a;
    let done = 0;
    try {
        while (done < line.length)
            done += writeSync(1, line, done);
    }
    catch {
        // The rest goes the stream's way, which reports or waits as it always did.
        streams.stdout.write(Buffer.from(line.subarray(done)));
    }
    line.fill(0);
}
