/**
 * Agents on a machine with no host of their own (a container, a CI job) reach
 * a team host over TCP with TLS (docs/team.md "Remote agents"). Only an
 * agent's operations are served there, each with its own token; the owner's
 * operations stay on the Unix socket, where the kernel names the caller. The
 * audit source of a remote request is the peer's IP address as the TCP
 * connection has it (`ip:<address>`), nothing the client states.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Op } from '../../core/protocol.js';
import { VaultError } from '../../core/errors.js';

export interface RemoteListen {
  /** `address:port` to listen on (`0.0.0.0:8443`, `[::1]:8443`). */
  readonly listen: string;
  /** PEM files of the host's certificate (chain) and its key. */
  readonly cert: string;
  readonly key: string;
}

/** The operations a remote agent may ask for: its own reads and fills, and who it is. */
const REMOTE_OPS: ReadonlySet<Op> = new Set<Op>(['whoami', 'read', 'resolve']);

/** Refuses anything but an agent's operation over TCP. @throws VaultError VLT-3044 */
export function remoteGuard(op: Op): void {
  if (!REMOTE_OPS.has(op)) {
    throw new VaultError(
      'VLT-3044',
      'Only an agent’s reads and fills are served over TCP; owner commands use the host’s Unix socket.',
    );
  }
}

/** The audit source of a remote request: the TCP peer's address. */
export function remoteSource(req: IncomingMessage): string {
  return `ip:${req.socket.remoteAddress ?? 'unknown'}`;
}

function parseListen(listen: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(listen);
  const port = Number(m?.[2]);
  if (m === null || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new VaultError('VLT-1001', `VAULT_LISTEN_TLS must be address:port, not ${listen}.`);
  }
  return { host: m[1] as string, port };
}

/**
 * Starts the TLS listener with `handle` (the host's router with remoteGuard
 * and remoteSource) and resolves once it listens.
 */
export async function listenRemote(
  opts: RemoteListen,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Server> {
  const { host, port } = parseListen(opts.listen);
  const server = createServer(
    { cert: readFileSync(opts.cert), key: readFileSync(opts.key), minVersion: 'TLSv1.2' },
    handle,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
