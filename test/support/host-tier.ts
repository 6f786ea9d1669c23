// The host tier's rig (docs/development.md): the vault host started in this
// process by the daemon's own startHost, on a real LMDB store in a temp dir
// and a real Unix socket, with its clock injected, so a test moves time by
// setting a number instead of waiting or preloading libfaketime.
//
// Agent requests go through the real client (src/client/client.ts `call`),
// as `get` sends them. Owner requests are written on the socket with the
// client's own request head and reply parser, but without its host check:
// that check refuses any listener that is not a `vault-cli daemon` process
// (src/client/host-check.ts), and here the listener is this test process.
// The passphrase goes in the body as the CLI sends it.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Op, Ops } from '../../src/core/protocol.js';
import { call } from '../../src/client/client.js';
import type { ClientOptions } from '../../src/client/options.js';
import { parseReply, requestHead, unwrap } from '../../src/client/request.js';
import { startHost, type RunningHost } from '../../src/host/serve/server.js';
import type { SessionTerms } from '../../src/host/owner/unlock.js';

export const PASSPHRASE = 'correct horse battery staple';

/** A clock the test sets: the host reads it wherever it reads time. */
export class TestClock {
  constructor(public ms = Date.UTC(2030, 0, 1)) {}
  readonly now = (): number => this.ms;
  /** Moves on by `ms` (never back, unless a test means to). */
  advance(ms: number): number {
    this.ms += ms;
    return this.ms;
  }
}

export class HostTier {
  readonly clock: TestClock;
  readonly client: ClientOptions;
  private constructor(
    readonly root: string,
    readonly dir: string,
    private readonly host: RunningHost,
    clock: TestClock,
  ) {
    this.clock = clock;
    // Agents' requests need no host check, and nothing is ever started from here.
    this.client = {
      vaultDir: dir,
      autoStart: false,
      daemon: { node: process.execPath, script: join(root, 'no-daemon.js'), env: {} },
    };
  }

  /** A host on a fresh vault (weak test KDF) at the clock's time. */
  static async start(opts: { ownerSessions?: SessionTerms; at?: number } = {}): Promise<HostTier> {
    const root = mkdtempSync(join(tmpdir(), 'vault-host-tier-'));
    const dir = join(root, 'vault');
    const clock = new TestClock(opts.at);
    const host = await startHost({
      dir,
      idleMs: 0,
      now: clock.now,
      ...(opts.ownerSessions === undefined ? {} : { ownerSessions: opts.ownerSessions }),
    });
    const tier = new HostTier(root, dir, host, clock);
    await tier.owner('vault.create', { testWeakKdf: true });
    return tier;
  }

  get socketPath(): string {
    return this.host.socketPath;
  }

  async stop(): Promise<void> {
    this.host.stop();
    await this.host.stopped;
    rmSync(this.root, { recursive: true, force: true });
  }

  /** One raw exchange on the host's socket: the reply as the client parses it. */
  exchange<O extends Op>(op: O, body: object): Promise<ReturnType<typeof parseReply<O>>> {
    return new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const sock = connect(this.host.socketPath, () => {
        sock.write(Buffer.concat([Buffer.from(requestHead(op, payload.length)), payload]));
      });
      const chunks: Buffer[] = [];
      sock.on('data', (c: Buffer) => chunks.push(c));
      sock.on('end', () => {
        try {
          resolve(parseReply<O>(Buffer.concat(chunks)));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      sock.on('error', reject);
    });
  }

  /**
   * An owner request with the passphrase (`passphrase: undefined` in `body`
   * leaves it out: the process hold or terminal session must stand for it).
   * @throws VaultError with the host's code, as the client does.
   */
  async owner<O extends Op>(op: O, body: Record<string, unknown> = {}): Promise<Ops[O]['res']> {
    const sent = 'passphrase' in body ? body : { passphrase: PASSPHRASE, ...body };
    return unwrap(await this.exchange(op, JSON.parse(JSON.stringify(sent)) as object));
  }

  /** An entry's password field. */
  async set(entry: string, value = `value of ${entry}`): Promise<void> {
    await this.owner('entry.set', {
      entry,
      field: 'password',
      value: Buffer.from(value).toString('base64'),
    });
  }

  /** A new agent and its token: default limits (3 distinct a minute, 10 an hour) unless given. */
  async agent(
    name: string,
    scope: readonly string[],
    limits: { perMinute?: number; perHour?: number } = {},
  ): Promise<string> {
    const { token } = await this.owner('agent.add', { kind: 'ai', name, scope, limits });
    return token;
  }

  /** `get <entry>` as the agent: the value, through the real client. */
  async read(token: string, entry: string): Promise<string> {
    const { value } = await call(this.client, 'read', {
      token,
      entry,
      field: 'password',
      mode: 'get',
    });
    return Buffer.from(value, 'base64').toString('utf8');
  }
}
