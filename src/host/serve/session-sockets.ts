/**
 * The sockets of sandboxed sessions. `run` binds one of these, and never the
 * host's own socket, into its sandbox: behind it the host answers only the
 * agent operations (whoami, read, resolve) and only for that session's token,
 * so an agent inside the sandbox cannot stop the host, try the owner's
 * passphrase or bring in another token (VLT-2051). Each socket lives in
 * `<socket dir>/sessions/` (0700, the host's) and goes when its session ends.
 *
 * What a session may cost the host is bounded, so that an agent holding its
 * socket open (thousands of half-sent requests) starves only itself: at most
 * SESSION_CONNECTIONS connections per session, the rest closed as they
 * come; headers within HEADERS_WITHIN_MS, a whole request within
 * REQUEST_WITHIN_MS, no connection idle for longer (but a `render --watch`
 * feed the host has answered, which ends with its session); and all sessions
 * together never take the last FD_RESERVE descriptors of the host, which its
 * own socket, the store and the audit log need.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { FD_RESERVE, openFileLimit } from './descriptors.js';

/** How long a session's socket waits for `run` to hold the session before it ends it. */
const HOLD_WITHIN_MS = 60_000;
/** An agent's client makes one request per connection; a handful at once is already a lot. */
const SESSION_CONNECTIONS = 64;
const HEADERS_WITHIN_MS = 5_000;
const REQUEST_WITHIN_MS = 10_000;

export class SessionSockets {
  private readonly servers = new Map<string, { server: Server; path: string }>();
  private readonly unheld = new Map<string, NodeJS.Timeout>();
  /** Connections open on all session sockets, and how many they may be together. */
  #connections = 0;
  private readonly budget = Math.max(SESSION_CONNECTIONS, openFileLimit() - FD_RESERVE);

  constructor(
    private readonly dir: string,
    /** Hardened host: `run` (a member of the host's group) must reach the sockets. */
    private readonly shared: boolean,
    /** The restricted request handler for session `id`. */
    private readonly serve: (id: string) => RequestListener,
    /** Ends session `id` (revokes it) when nobody held it in time. */
    private readonly end: (id: string) => void,
  ) {}

  /** Connections open on all session sockets together. */
  get connections(): number {
    return this.#connections;
  }

  /** Starts serving session `id` and returns its socket's path. */
  async open(id: string): Promise<string> {
    const dir = join(this.dir, 'sessions');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, this.shared ? 0o750 : 0o700);
    // 64 bits of the id keep the path inside sun_path's 108 bytes.
    const path = join(dir, `${id.slice(0, 16)}.sock`);
    // Only this host writes here: a file of that name is an earlier host's leftover.
    rmSync(path, { force: true });
    const server = createServer(
      {
        headersTimeout: HEADERS_WITHIN_MS,
        requestTimeout: REQUEST_WITHIN_MS,
        // The timeouts above are enforced at this interval (30 s by default).
        connectionsCheckingInterval: 1000,
      },
      this.serve(id),
    );
    server.keepAliveTimeout = 1000;
    // Idle, with nothing sent: no header timeout runs yet.
    server.timeout = REQUEST_WITHIN_MS;
    // Past the cap, net.Server closes a new connection as soon as it is accepted.
    server.maxConnections = SESSION_CONNECTIONS;
    server.on('connection', (socket: Socket) => {
      if (this.#connections >= this.budget) {
        socket.destroy();
        return;
      }
      this.#connections++;
      socket.once('close', () => this.#connections--);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(path, this.shared ? 0o660 : 0o600);
    this.servers.set(id, { server, path });
    const timer = setTimeout(() => {
      this.unheld.delete(id);
      this.end(id);
      this.close(id);
    }, HOLD_WITHIN_MS);
    timer.unref();
    this.unheld.set(id, timer);
    return path;
  }

  /** `run` holds the session: it now ends with that hold, not with the timer. */
  held(id: string): void {
    clearTimeout(this.unheld.get(id));
    this.unheld.delete(id);
  }

  /** Stops serving session `id`; connections still open are cut. */
  close(id: string): void {
    clearTimeout(this.unheld.get(id));
    this.unheld.delete(id);
    const s = this.servers.get(id);
    if (s === undefined) return;
    this.servers.delete(id);
    s.server.close();
    s.server.closeAllConnections();
    rmSync(s.path, { force: true });
  }

  closeAll(): void {
    for (const id of [...this.servers.keys()]) this.close(id);
  }
}
