/**
 * Raw requests to a host's socket, as a client that is not vault-cli would
 * send them (tests of what the host refuses, and benches that measure the
 * host without the CLI's start-up), and the output of a long-running child.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { connect } from 'node:net';

/** One HTTP request on `socket`, the connection closed after it; the whole reply as text. */
export function rawPost(socket: string, op: string, body: object): Promise<string> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const s = connect(socket, () => {
      s.write(
        `POST /v1/${op} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${payload.length}\r\nConnection: close\r\n\r\n`,
      );
      s.write(payload);
    });
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    s.on('error', reject);
  });
}

/** The JSON body of a reply `rawPost` returned. */
export function replyBody<T>(reply: string): T {
  return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as T;
}

/**
 * A child's stdout and stderr as they arrive, and `until`: resolves once
 * `what` holds, rejects (with both outputs) if the child exits first or
 * `maxMs` passes; a bound on a hang, not a timing assertion.
 */
export function watchOutput(
  child: Pick<ChildProcessWithoutNullStreams, 'stdout' | 'stderr' | 'exitCode'>,
  label: string,
): {
  out: () => string;
  err: () => string;
  until: (what: () => boolean, maxMs?: number) => Promise<void>;
} {
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const until = (what: () => boolean, maxMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const gaveUp = Date.now() + maxMs;
      const t = setInterval(() => {
        if (what()) {
          clearInterval(t);
          resolve();
        } else if (child.exitCode !== null || Date.now() > gaveUp) {
          clearInterval(t);
          reject(new Error(`${label}: ${out}\n${err}`));
        }
      }, 50);
    });
  return { out: () => out, err: () => err, until };
}
