/**
 * Terminal and pipe input: values and tokens come from stdin or a prompt
 * without echo, passphrases from a prompt or VAULT_PASSPHRASE_FILE; never from
 * the argument list.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import { VaultError } from '../core/errors.js';
import { Secret } from '../crypto/secret.js';

export interface Streams {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
}

/** All of stdin as bytes. */
export async function readAll(stdin: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  const all = Buffer.concat(chunks);
  for (const c of chunks) c.fill(0);
  return all;
}

/** Drops one trailing newline (LF or CRLF): `echo value |` should store `value`. */
export function chompOne(b: Buffer): Buffer {
  if (b.length > 0 && b[b.length - 1] === 0x0a) {
    const cut = b.length > 1 && b[b.length - 2] === 0x0d ? 2 : 1;
    return b.subarray(0, b.length - cut);
  }
  return b;
}

/**
 * Asks on the controlling terminal with echo off.
 * @throws VaultError VLT-1003 when there is no terminal, VLT-1002 when cancelled.
 */
export async function promptHidden(question: string): Promise<Secret> {
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'r+');
  } catch {
    throw new VaultError(
      'VLT-1003',
      'No terminal to prompt on; pipe the value on stdin or set VAULT_PASSPHRASE_FILE.',
    );
  }
  const input = new ReadStream(fd);
  const output = new WriteStream(fd);
  input.setRawMode(true);
  output.write(question);
  const bytes: number[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        for (const b of chunk) {
          if (b === 0x0d || b === 0x0a) return finish(resolve);
          if (b === 0x03 || b === 0x04)
            return finish(() => reject(new VaultError('VLT-1002', 'Cancelled.')));
          if (b === 0x7f || b === 0x08) bytes.pop();
          else bytes.push(b);
        }
      };
      const finish = (done: () => void) => {
        input.off('data', onData);
        done();
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    output.write('\n');
    input.destroy();
    try {
      closeSync(fd);
    } catch {
      // already closed by the stream
    }
  }
  const secret = new Secret(Buffer.from(bytes));
  bytes.fill(0);
  return secret;
}

/** A passphrase from `file` (one trailing newline dropped), else a prompt (twice when `confirm`). */
export async function passphrase(
  file: string | null,
  what: string,
  confirm = false,
): Promise<Secret> {
  if (file !== null) {
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch {
      throw new VaultError('VLT-1002', 'Cannot read the passphrase file.');
    }
    return new Secret(Buffer.from(chompOne(raw)));
  }
  const first = await promptHidden(`${what}: `);
  if (!confirm) return first;
  const again = await promptHidden(`${what} (again): `);
  if (!first.expose().equals(again.expose())) {
    first.wipe();
    again.wipe();
    throw new VaultError('VLT-1002', 'The two entries differ.');
  }
  again.wipe();
  return first;
}

/** A value or token: stdin when it is not a terminal, else a hidden prompt. */
export async function secretInput(
  stdin: NodeJS.ReadStream,
  what: string,
  confirm = false,
): Promise<Secret> {
  if (!stdin.isTTY) return new Secret(Buffer.from(chompOne(await readAll(stdin))));
  return passphrase(null, what, confirm);
}
