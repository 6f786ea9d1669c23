/**
 * The SSH agent protocol on a Unix socket, for `vault-cli ssh-agent` and
 * `run` (docs/ssh.md). It holds public keys only: each signature is asked of
 * the vault host (`ssh.sign`), which checks, counts, audits and signs; the
 * private key never reaches this process. What it keeps of each connection
 * is the session-binds OpenSSH sent on it, passed to the host with every
 * signature request there, which verifies them.
 *
 * Bounded: a message past MAX_AGENT_MESSAGE closes its connection before it
 * is buffered, a connection is read one message at a time (paused while one
 * is answered), at most MAX_CONNECTIONS are open and MAX_BINDS binds kept.
 */
import { chmodSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { VaultError } from '../core/errors.js';
import { parsePublicKeyLine } from '../core/ssh-keyfile.js';
import {
  failureReply,
  identitiesReply,
  MAX_AGENT_MESSAGE,
  parseAgentRequest,
  signReply,
  successReply,
  takeFrames,
} from '../core/ssh-wire.js';

/** Session-binds kept per connection; past it, a bind is refused (as OpenSSH's agent does). */
const MAX_BINDS = 16;
const MAX_CONNECTIONS = 64;

export interface AgentKey {
  readonly entry: string;
  readonly blob: Buffer;
  readonly comment: string;
}

/** What the agent asks of the host: a signature, or why not (the error line goes to stderr). */
export type Signer = (req: {
  entry: string;
  key: Buffer;
  data: Buffer;
  flags: number;
  binds: readonly Buffer[];
}) => Promise<Buffer>;

/** A public key entry's authorized_keys line as the agent lists it. */
export function agentKey(entry: string, line: string): AgentKey {
  const blob = parsePublicKeyLine(line);
  if (blob === null)
    throw new VaultError('VLT-2067', `${JSON.stringify(entry)} holds no SSH public key.`);
  return { entry, blob, comment: `vault://${entry}` };
}

interface Conn {
  readonly binds: Buffer[];
}

async function answer(
  body: Buffer,
  conn: Conn,
  keys: readonly AgentKey[],
  sign: Signer,
  onRefusal: (err: unknown) => void,
): Promise<Buffer> {
  const req = parseAgentRequest(body);
  if (req === null || req.type === 'unsupported') return failureReply();
  if (req.type === 'identities') return identitiesReply(keys);
  if (req.type === 'bind') {
    if (conn.binds.length >= MAX_BINDS) return failureReply();
    conn.binds.push(Buffer.from(req.raw));
    return successReply();
  }
  const key = keys.find((k) => k.blob.equals(Buffer.from(req.keyBlob)));
  if (key === undefined) return failureReply();
  try {
    const sig = await sign({
      entry: key.entry,
      key: key.blob,
      data: Buffer.from(req.data),
      flags: req.flags,
      binds: conn.binds,
    });
    return signReply(sig);
  } catch (err) {
    onRefusal(err);
    return failureReply();
  }
}

function serve(
  socket: Socket,
  keys: readonly AgentKey[],
  sign: Signer,
  onRefusal: (err: unknown) => void,
): void {
  const conn: Conn = { binds: [] };
  let pending = Buffer.alloc(0);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    socket.pause();
    pending = Buffer.concat([pending, chunk]);
    const { frames, rest, tooLong } = takeFrames(pending);
    pending = Buffer.from(rest);
    void (async () => {
      for (const f of frames) {
        if (socket.destroyed) return;
        socket.write(await answer(f, conn, keys, sign, onRefusal));
      }
      if (tooLong || pending.length > MAX_AGENT_MESSAGE + 4) socket.destroy();
      else socket.resume();
    })();
  });
}

/**
 * Listens on `path` (a new socket, mode 0600) and serves the agent protocol.
 * @returns the server; close it to stop.
 */
export async function startSshAgent(opts: {
  path: string;
  keys: readonly AgentKey[];
  sign: Signer;
  onRefusal: (err: unknown) => void;
}): Promise<Server> {
  const server = createServer((socket) => serve(socket, opts.keys, opts.sign, opts.onRefusal));
  server.maxConnections = MAX_CONNECTIONS;
  const old = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.path, resolve);
    });
  } finally {
    process.umask(old);
  }
  chmodSync(opts.path, 0o600);
  return server;
}
