/**
 * Values go only into pipes (the specification: a value exists "only in the
 * pipe", a rendered file "only in the pipe; never on disk"). `get`, `totp` and
 * `render` are agent commands, always run with an agent's or a session's
 * token, so each checks its stdout before it asks the host for anything: a
 * pipe, a socket, or a character device that is not a terminal (/dev/null)
 * may take a value; a terminal (under `run`, the agent's pty, which is its
 * transcript and its model's context), a regular file or a block device may
 * not.
 *
 * This guards against accidental echo, not against a hostile agent: `get X |
 * cat` or `get X | tee f` still puts the value where the agent wants it, and a
 * tool runner that captures output through a pipe is a pipe. The scope, the
 * limits, the audit trail and `run`'s containment are what hold against that
 * (docs/pipes.md, docs/threat-model.md).
 */
import type { Stats } from 'node:fs';
import { VaultError } from '../core/errors.js';
import type { Streams } from './io.js';

// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { fstatSync, writeSync } = process.getBuiltinModule('node:fs');

/** What stdout is, when it may not take a value; null when it may. */
export function unfitForValues(fd: number): string | null {
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch {
    return 'closed';
  }
  if (st.isFIFO() || st.isSocket()) return null;
  // node:tty (about 1 ms to load) only for a character device: a pipe never asks.
  if (st.isCharacterDevice())
    return process.getBuiltinModule('node:tty').isatty(fd) ? 'a terminal' : null;
  if (st.isFile()) return 'a file';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a pipe';
}

/**
 * @throws VaultError VLT-2050 when stdout (fd 1) is a terminal, a file or
 * anything else that is not a pipe; `example` shows the piped form.
 */
export function requirePipe(example: string): void {
  const what = unfitForValues(1);
  if (what === null) return;
  throw new VaultError(
    'VLT-2050',
    `Values go only into a pipe, and stdout is ${what}: pipe it to the program that needs it (${example} | program), or use the proxy or render; nothing was read.`,
  );
}

/**
 * One value and a newline into stdout, the pipe requirePipe checked: written
 * to fd 1 directly, without the stream Node builds for process.stdout (which
 * costs `get` and `totp` about a millisecond to set up), and the copy made
 * here zeroed once written. What fd 1 does not take at once (a full pipe
 * another process made non-blocking: EAGAIN; a reader gone: EPIPE) goes
 * through `streams.stdout` as before, which waits for the pipe or, on EPIPE,
 * ends the process as src/cli/edge.ts has it.
 */
export function writeValue(streams: Pick<Streams, 'stdout'>, value: Buffer): void {
  const line = Buffer.alloc(value.length + 1);
  value.copy(line);
  line[value.length] = 0x0a;
  let done = 0;
  try {
    while (done < line.length) done += writeSync(1, line, done);
  } catch {
    // The rest goes the stream's way, which reports or waits as it always did.
    streams.stdout.write(Buffer.from(line.subarray(done)));
  }
  line.fill(0);
}
