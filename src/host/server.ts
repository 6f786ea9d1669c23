/**
 * The vault host's socket server: HTTP+JSON on a Unix socket (mode 0600) in
 * the vault directory. It parses and checks requests, calls the operations and
 * turns their errors into `{ ok: false, code, message }`. It never logs a
 * request body, and a reply never carries a secret except the one asked for.
 */
import { chmodSync, closeSync, constants, mkdirSync, openSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { matchesFilter, type AuditFilter } from '../core/audit.js';
import { ERRORS, VaultError, isErrorCode } from '../core/errors.js';
import { DEFAULT_LIMITS } from '../core/policy.js';
import {
  LOCK_NAME,
  MAX_REFS,
  PROTOCOL_VERSION,
  SOCKET_NAME,
  type HostStatus,
  type Op,
  type Ops,
} from '../core/protocol.js';
import { peerCred, tryLock } from '../kernel/unix.js';
import { Secret } from '../crypto/secret.js';
import { wipe } from '../crypto/aead.js';
import type { KeyPair } from '../crypto/box.js';
import {
  addAgent,
  listAgents,
  lockAgent,
  revokeAgent,
  scopeAgent,
  setLimits,
  showAgent,
} from './agents.js';
import { anchorAudit, appendAudit, viewAudit } from './audit-log.js';
import { HostContext } from './context.js';
import { liftOwnerSecrets, type OwnerSecretField } from './owner-secrets.js';
import { backupVault, restoreVault } from './backup.js';
import { checkStore, scanInChild } from './check.js';
import { Store } from '../store/store.js';
import { archiveAudit, verifyWithArchive } from './archive.js';
import { authenticate, endSession, readField, release, whoami } from './access.js';
import { endOrphanedSessions, mintSession, revokeSession, rotatePending } from './sessions.js';
import { parseToken } from '../crypto/token.js';
import { SessionSockets } from './session-sockets.js';
import { listEntries, removeEntry, revealField, setEntry, setHosts, showEntry } from './entries.js';
import {
  beginEnrol,
  beginUnlock,
  finishEnrol,
  finishUnlock,
  listKeys,
  removeKey,
} from './hardware-keys.js';
import {
  checkNewPassphrase,
  createVault,
  ownerEvent,
  rekeyVault,
  unlockOwner,
  unlockWithRecovery,
  type OwnerSession,
} from './owner.js';

const MAX_BODY = 4 * 1024 * 1024;

type Body = Record<string, unknown>;

/**
 * What the host log says of an unexpected error: its class, errno-style code
 * and top stack frame. Never its message: a dependency's message could quote
 * the input that failed, and the input may be a secret.
 */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const code = (err as { code?: unknown }).code;
  const frame =
    err.stack
      ?.split('\n')
      .find((l) => l.trim().startsWith('at '))
      ?.trim() ?? '';
  return [
    err.name,
    typeof code === 'string' || typeof code === 'number' ? `code ${code}` : '',
    frame,
  ]
    .filter(Boolean)
    .join(' ');
}

function bad(what: string): VaultError {
  return new VaultError('VLT-1001', `Bad request: ${what}.`);
}
function str(b: Body, key: string): string {
  const v = b[key];
  if (typeof v !== 'string') throw bad(`${key} must be a string`);
  return v;
}
function optStr(b: Body, key: string): string | undefined {
  return b[key] === undefined ? undefined : str(b, key);
}
function strList(b: Body, key: string): string[] {
  const v = b[key] ?? [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw bad(`${key} must be a list`);
  return v as string[];
}
function optCount(b: Body, key: string): number | undefined {
  const v = b[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw bad(`${key} must be a count`);
  return v;
}
function auditFilter(b: Body): AuditFilter {
  const whole = (key: string): number | undefined => {
    const v = b[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v))) {
      throw bad(`${key} must be a whole number`);
    }
    return v;
  };
  return { agent: optStr(b, 'agent'), since: whole('since'), afterSeq: whole('afterSeq') };
}
/** The owner's secrets readBody() took out of each body's bytes (owner-secrets.ts). */
const lifted = new WeakMap<Body, Map<OwnerSecretField, Secret>>();

function secret(b: Body, key: string, encoding: 'utf8' | 'base64' = 'utf8'): Secret {
  const own = lifted.get(b)?.get(key as OwnerSecretField);
  if (own !== undefined) return own;
  return new Secret(Buffer.from(str(b, key), encoding));
}
/** Wipes the owner's secrets a request carried, used or not, once it is answered. */
function wipeLifted(b: Body): void {
  for (const v of lifted.get(b)?.values() ?? []) v.wipe();
  lifted.delete(b);
}
/** An owner secret the request may carry (the recovery key), or undefined. */
function optSecret(b: Body, key: OwnerSecretField): Secret | undefined {
  return lifted.get(b)?.get(key) ?? (b[key] === undefined ? undefined : secret(b, key));
}

type Handler = (b: Body, source: string) => Promise<unknown>;

export interface HostOptions {
  readonly dir: string;
  /**
   * Where the socket goes, when not in `dir`: the hardened host's socket
   * directory, which its group may reach. The socket is then 0660 (the group
   * connects) and the directory the host's alone to write.
   */
  readonly socketDir?: string;
  /** Stop after this long without a request; 0 for never. */
  readonly idleMs: number;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
}

export interface RunningHost {
  readonly socketPath: string;
  /** Resolves once the host has stopped and closed its store. */
  readonly stopped: Promise<void>;
  stop(): void;
}

/** Unlocks as the owner for one request and wipes the keys after it. */
async function asOwner<T>(
  ctx: HostContext,
  b: Body,
  source: string,
  fn: (s: OwnerSession) => T | Promise<T>,
): Promise<T> {
  const pass = secret(b, 'passphrase');
  const s = await unlockOwner(ctx, pass, source);
  pass.wipe();
  try {
    rotatePending(ctx, s);
    // Awaited: the anchor goes on the head the command leaves (a backup's record included).
    const out = await fn(s);
    anchor(ctx, s);
    return out;
  } finally {
    s.wipe();
  }
}

/**
 * Each owner command anchors the audit chain head it leaves. Best effort: a
 * command that could not commit its anchor (a full disk) has still done its
 * work, and `audit --verify` counts the records after the last anchor.
 */
function anchor(ctx: HostContext, s: OwnerSession): void {
  try {
    ctx.commit((tx) => anchorAudit(tx, s.vaultId, s.anchorKey(), ctx.now()));
  } catch {
    // Left unanchored; reported as such.
  }
}

/**
 * Whether a vault exists, for `status`. A store the host cannot open for
 * writing (read-only file system, permission error) is still a vault: status
 * must answer then, or `daemon stop`, which asks it first, could not stop the host.
 */
function vaultHere(ctx: HostContext): boolean {
  try {
    return ctx.hasVault();
  } catch (err) {
    if (err instanceof VaultError && (err.code === 'VLT-3004' || err.code === 'VLT-3034')) {
      return true;
    }
    throw err;
  }
}

function handlers(
  ctx: HostContext,
  stop: () => void,
  startedAt: number,
  sockets: SessionSockets,
  mode: HostStatus['mode'],
): Record<Op, Handler> {
  const h: { [O in Op]: (b: Body, source: string) => Promise<Ops[O]['res']> } = {
    status: async () => ({
      pid: process.pid,
      vaultDir: ctx.dir,
      startedAt,
      vault: vaultHere(ctx),
      mode,
    }),
    // The owner's proof from any caller: an agent that could stop the host could
    // put its own process on the socket and take the owner's next passphrase.
    shutdown: async (b, source) => {
      // A host with no vault yet, or with a store it cannot open, guards nothing
      // and cannot check a passphrase: it stops for anyone (docs/threat-model.md).
      let guards: boolean;
      try {
        guards = ctx.hasVault();
      } catch {
        guards = false;
      }
      if (guards) await asOwner(ctx, b, source, () => null);
      setImmediate(stop);
      return {};
    },
    whoami: async (b, source) => whoami(ctx, secret(b, 'token'), source),
    read: async (b, source) => {
      const mode = str(b, 'mode');
      if (mode !== 'get' && mode !== 'totp') throw bad('mode');
      const session = authenticate(ctx, secret(b, 'token'), source);
      try {
        const value = await readField(
          ctx,
          session,
          { entry: str(b, 'entry'), field: str(b, 'field'), mode },
          source,
        );
        const out = value.expose().toString('base64');
        value.wipe();
        return { value: out };
      } finally {
        endSession(session);
      }
    },
    resolve: async (b, source) => {
      const raw = b.refs;
      if (!Array.isArray(raw) || raw.length === 0) throw bad('refs must be a list of references');
      if (raw.length > MAX_REFS) {
        throw new VaultError(
          'VLT-1006',
          `One request names at most ${MAX_REFS} references; this one names ${raw.length}. Nothing was resolved.`,
        );
      }
      const refs = raw.map((r: unknown) => {
        const o = (typeof r === 'object' && r !== null ? r : {}) as Body;
        return { entry: str(o, 'entry'), field: str(o, 'field') };
      });
      const session = authenticate(ctx, secret(b, 'token'), source);
      try {
        const values = await release(
          ctx,
          session,
          refs,
          { kind: 'fill', host: optStr(b, 'host') ?? null },
          source,
        );
        const out = values.map((v) => v.expose().toString('base64'));
        for (const v of values) v.wipe();
        return { values: out };
      } finally {
        endSession(session);
      }
    },
    'vault.create': async (b, source) =>
      createVault(ctx, secret(b, 'passphrase'), source, b.testWeakKdf === true),
    'vault.passwd': async (b, source) => {
      const next = secret(b, 'newPassphrase');
      checkNewPassphrase(next);
      const recovery = optSecret(b, 'recoveryKey');
      const s =
        recovery !== undefined
          ? await unlockWithRecovery(ctx, recovery, source)
          : await unlockOwner(ctx, secret(b, 'passphrase'), source);
      recovery?.wipe();
      try {
        const rewrapped = await s.rewrapRoot(next);
        ctx.commit((tx) => {
          const header = ctx.header(tx);
          tx.putHeader({ ...header, ...rewrapped });
          appendAudit(tx, header, ownerEvent(ctx, 'vault_passwd', source));
        });
        anchor(ctx, s);
        return {};
      } finally {
        s.wipe();
        next.wipe();
      }
    },
    'vault.backup': async (b, source) => {
      return asOwner(ctx, b, source, () => backupVault(ctx, str(b, 'path'), source));
    },
    'vault.check': async (b, source) => {
      const pass = secret(b, 'passphrase');
      try {
        if (!Store.exists(ctx.dir)) throw new VaultError('VLT-3001');
        const report = await checkStore(
          ctx.storePath,
          () => {
            // Just read whole in a child: whatever damage was found at start is not there now.
            ctx.damaged = null;
            return ctx.store();
          },
          () => unlockOwner(ctx, pass, source),
          ctx.now(),
        );
        // A store that cannot be read whole takes no audit record either.
        if (report.problems.some((p) => p.code === 'VLT-3034' && p.where === 'store')) {
          return report;
        }
        ctx.commit((tx) => {
          const header = tx.header();
          if (header === null) return;
          appendAudit(tx, header, {
            ...ownerEvent(ctx, 'vault_check', source, {
              subject: `${report.problems.length} problem(s)`,
            }),
          });
        });
        return report;
      } finally {
        pass.wipe();
      }
    },
    'vault.restore': async (b, source) => {
      const pass = secret(b, 'passphrase');
      try {
        return await restoreVault(
          ctx,
          { path: str(b, 'path'), passphrase: pass, confirm: b.confirm === true },
          source,
        );
      } finally {
        pass.wipe();
      }
    },
    'vault.rekey': async (b, source) => {
      const pass = secret(b, 'passphrase');
      const s = await unlockOwner(ctx, pass, source);
      try {
        return await rekeyVault(ctx, s, pass, source);
      } finally {
        s.wipe();
        pass.wipe();
      }
    },
    'entry.set': (b, source) =>
      asOwner(ctx, b, source, (s) =>
        setEntry(
          ctx,
          s,
          {
            entry: str(b, 'entry'),
            field: str(b, 'field'),
            tier: optStr(b, 'tier'),
            value: secret(b, 'value', 'base64'),
          },
          source,
        ),
      ),
    'entry.rm': (b, source) =>
      asOwner(ctx, b, source, (s) => (removeEntry(ctx, s, str(b, 'entry'), source), {})),
    'entry.show': (b, source) => asOwner(ctx, b, source, (s) => showEntry(ctx, s, str(b, 'entry'))),
    'entry.reveal': (b, source) =>
      asOwner(ctx, b, source, (s) =>
        revealField(ctx, s, { entry: str(b, 'entry'), field: str(b, 'field') }, source),
      ),
    'entry.ls': (b, source) => asOwner(ctx, b, source, (s) => ({ entries: listEntries(ctx, s) })),
    'entry.hosts': (b, source) =>
      asOwner(ctx, b, source, (s) =>
        setHosts(ctx, s, { entry: str(b, 'entry'), hosts: strList(b, 'hosts') }, source),
      ),
    'agent.add': (b, source) =>
      asOwner(ctx, b, source, (s) => {
        const kind = str(b, 'kind');
        if (kind !== 'ai' && kind !== 'script')
          throw new VaultError('VLT-1002', 'Agent kinds are ai and script.');
        const limits = (b.limits ?? {}) as Body;
        return addAgent(
          ctx,
          s,
          {
            name: str(b, 'name'),
            kind,
            scope: strList(b, 'scope'),
            limits: {
              perMinute: optCount(limits, 'perMinute') ?? DEFAULT_LIMITS.perMinute,
              perHour: optCount(limits, 'perHour') ?? DEFAULT_LIMITS.perHour,
            },
          },
          source,
        );
      }),
    'agent.ls': (b, source) => asOwner(ctx, b, source, (s) => ({ agents: listAgents(ctx, s) })),
    'agent.show': (b, source) => asOwner(ctx, b, source, (s) => showAgent(ctx, s, str(b, 'name'))),
    'agent.scope': (b, source) =>
      asOwner(ctx, b, source, (s) =>
        scopeAgent(
          ctx,
          s,
          { name: str(b, 'name'), add: strList(b, 'add'), rm: strList(b, 'rm') },
          source,
        ),
      ),
    'agent.limits': (b, source) =>
      asOwner(ctx, b, source, (s) =>
        setLimits(
          ctx,
          s,
          {
            name: str(b, 'name'),
            perMinute: optCount(b, 'perMinute'),
            perHour: optCount(b, 'perHour'),
          },
          source,
        ),
      ),
    'agent.lock': (b, source) =>
      asOwner(ctx, b, source, (s) => lockAgent(ctx, s, str(b, 'name'), source)),
    'agent.revoke': (b, source) =>
      asOwner(ctx, b, source, (s) => (revokeAgent(ctx, s, str(b, 'name'), source), {})),
    'session.start': async (b, source) => {
      const sandbox = b.sandbox === true;
      const minted = await asOwner(ctx, b, source, (s) =>
        mintSession(
          ctx,
          s,
          {
            agent: str(b, 'agent'),
            scope: strList(b, 'scope'),
            ttlMs: optCount(b, 'ttlMs'),
            sandboxed: sandbox,
          },
          source,
        ),
      );
      if (!sandbox) return { token: minted.token, expires: minted.expires };
      const socket = await sockets.open(minted.id);
      return { token: minted.token, expires: minted.expires, socket };
    },
    'session.end': async (b, source) => {
      const session = authenticate(ctx, secret(b, 'token'), source);
      try {
        if (session.sessionId !== undefined) {
          revokeSession(ctx, session.sessionId, source);
          sockets.close(session.sessionId);
        }
        return {};
      } finally {
        endSession(session);
      }
    },
    // Served as a stream by holdSession(); reaching here means a plain request.
    'session.hold': async () => {
      throw bad('session.hold streams; it has no single reply');
    },
    'key.begin': (b, source) =>
      asOwner(ctx, b, source, () =>
        beginEnrol(ctx, { name: optStr(b, 'name'), origin: str(b, 'origin') }),
      ),
    'key.finish': async (b, source) => {
      await asOwner(ctx, b, source, () => null);
      return finishEnrol(ctx, { challengeId: str(b, 'challengeId'), result: b.result }, source);
    },
    'key.ls': (b, source) => asOwner(ctx, b, source, () => ({ keys: listKeys(ctx) })),
    'key.rm': (b, source) =>
      asOwner(ctx, b, source, () => (removeKey(ctx, str(b, 'name'), source), {})),
    'unlock.begin': async (b) =>
      beginUnlock(ctx, { name: str(b, 'name'), origin: str(b, 'origin') }),
    'unlock.finish': (b, source) =>
      finishUnlock(ctx, { challengeId: str(b, 'challengeId'), result: b.result }, source),
    'audit.list': (b, source) =>
      asOwner(ctx, b, source, (s) => {
        const filter = auditFilter(b);
        const records = ctx
          .store()
          .read((tx) => tx.audit())
          .filter((r) => matchesFilter(r, filter));
        return { records: viewAudit(records, s.auditKeys()) };
      }),
    'audit.verify': (b, source) =>
      asOwner(ctx, b, source, (s) => verifyWithArchive(ctx, s, strList(b, 'archives'))),
    'audit.archive': (b, source) =>
      asOwner(ctx, b, source, (s) => {
        const before = b.before;
        if (typeof before !== 'number' || !Number.isFinite(before)) throw bad('before');
        return archiveAudit(ctx, s, { path: str(b, 'path'), before }, source);
      }),
    // Served as a stream by followAudit(); reaching here means a plain request.
    'audit.follow': async () => {
      throw bad('audit.follow streams; it has no single reply');
    },
  };
  return h as Record<Op, Handler>;
}

function readBody(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(bad('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      try {
        // The owner's secrets leave as Buffers before the bytes become a string.
        const secrets = liftOwnerSecrets(raw);
        const parsed: unknown = JSON.parse(raw.toString('utf8') || '{}');
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          for (const v of secrets.values()) v.wipe();
          throw bad('body');
        }
        lifted.set(parsed as Body, secrets);
        resolve(parsed as Body);
      } catch (err) {
        reject(err instanceof VaultError ? err : bad('body is not JSON'));
      } finally {
        raw.fill(0);
        for (const c of chunks) c.fill(0);
      }
    });
    req.on('error', reject);
  });
}

const peers = new WeakMap<Socket, string>();

/**
 * The audit source of a request: `pid:<n> uid:<n>` of the connecting process,
 * as the kernel recorded it (SO_PEERCRED). Nothing the client writes on the
 * socket can change it; a pid the client states about itself is not read.
 */
function sourceOf(req: IncomingMessage): string {
  const socket = req.socket;
  let source = peers.get(socket);
  if (source === undefined) {
    try {
      const peer = peerCred(socket);
      source = `pid:${peer.pid} uid:${peer.uid}`;
    } catch {
      source = 'local';
    }
    peers.set(socket, source);
  }
  return source;
}

async function listenOnce(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(path);
  });
}

/**
 * One host per vault: an exclusive flock on `<dir>/host.lock`, taken before
 * the socket is bound and held until the host has closed its socket and its
 * store. Whoever holds it owns `host.sock`: only the holder removes a socket
 * file (a stale one, before it binds) and its close unlinks only its own, so an
 * orphan host can no longer take the live host's socket path with it.
 * @returns the lock's file descriptor, or null when another host holds it.
 */
function takeHostLock(dir: string): number | null {
  const fd = openSync(
    join(dir, LOCK_NAME),
    constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    if (tryLock(fd)) return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  closeSync(fd);
  return null;
}

/** How often a follower also polls, for records another host process committed. */
const FOLLOW_POLL_MS = 1000;

/**
 * `audit --follow`: unlocks once, then writes matching records as JSON lines
 * as they are committed, until the client goes away. The body is delimited by
 * the connection's end (no chunking), so every line arrives as written.
 */
async function followAudit(
  ctx: HostContext,
  req: IncomingMessage,
  res: ServerResponse,
  fail: (err: unknown) => void,
  followers: { count: number },
): Promise<void> {
  let keys: KeyPair;
  let filter: AuditFilter;
  let body: Body | undefined;
  try {
    body = await readBody(req);
    filter = auditFilter(body);
    const pass = secret(body, 'passphrase');
    const session = await unlockOwner(ctx, pass, sourceOf(req));
    pass.wipe();
    // A follower may last for hours: it keeps the audit key pair, not the root key.
    keys = session.keepAuditKeysOnly();
  } catch (err) {
    fail(err);
    return;
  } finally {
    if (body !== undefined) wipeLifted(body);
  }
  let last = filter.afterSeq ?? 0;
  res.useChunkedEncodingByDefault = false;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  const flush = () => {
    const fresh = ctx.store().read((tx) => tx.audit(last + 1));
    if (fresh.length === 0) return;
    last = fresh[fresh.length - 1]?.seq ?? last;
    const shown = viewAudit(
      fresh.filter((r) => matchesFilter(r, filter)),
      keys,
    );
    if (shown.length > 0) res.write(shown.map((r) => JSON.stringify(r) + '\n').join(''));
  };
  followers.count++;
  ctx.events.on('commit', flush);
  const poll = setInterval(flush, FOLLOW_POLL_MS);
  res.on('close', () => {
    followers.count--;
    ctx.events.off('commit', flush);
    clearInterval(poll);
    wipe(keys.secretKey);
  });
  flush();
}

/**
 * `session.hold`: `run` holds its session on this connection. One line says
 * the hold is in place; when the connection ends, for whatever reason (`run`
 * exited, was killed, or the host is stopping), the session is revoked and its
 * socket closed, so a process the agent left behind has nothing left to use.
 */
async function holdSession(
  ctx: HostContext,
  req: IncomingMessage,
  res: ServerResponse,
  fail: (err: unknown) => void,
  followers: { count: number },
  sockets: SessionSockets,
  source: string,
): Promise<void> {
  let id: string;
  try {
    const body = await readBody(req);
    const session = authenticate(ctx, secret(body, 'token'), source);
    try {
      if (session.sessionId === undefined) throw bad('only a session token can be held');
      id = session.sessionId;
    } finally {
      endSession(session);
    }
  } catch (err) {
    fail(err);
    return;
  }
  sockets.held(id);
  res.useChunkedEncodingByDefault = false;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.write('{"held":true}\n');
  followers.count++;
  res.on('close', () => {
    followers.count--;
    sockets.close(id);
    ctx.callers.clear();
    try {
      revokeSession(ctx, id, source);
    } catch {
      // The store is closing with the host; the next host ends the session at start.
    }
  });
}

/**
 * Operations that change no agent, session or entry: the agents' own and the
 * owner's reads (the dashboard polls these). Any other clears the caller
 * cache before and after it runs (caller-cache.ts): a change to who may do
 * what is never met by keys kept from before it. (Each request checks the
 * records anyway; this is so they are not kept either.)
 */
const CALLER_OPS: ReadonlySet<Op> = new Set<Op>([
  'whoami',
  'read',
  'resolve',
  'status',
  'entry.show',
  'entry.ls',
  'agent.ls',
  'agent.show',
  'key.ls',
  'audit.list',
  'audit.verify',
]);

/** The only operations a sandboxed session's socket serves. */
const SANDBOX_OPS: ReadonlySet<Op> = new Set<Op>(['whoami', 'read', 'resolve']);

export class HostAlreadyRunning extends Error {}

/**
 * Starts the host on `<dir>/host.sock`.
 * @throws HostAlreadyRunning when another host holds the vault's host lock.
 */
export async function startHost(opts: HostOptions): Promise<RunningHost> {
  const log = opts.log ?? (() => {});
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const socketDir = opts.socketDir ?? opts.dir;
  const shared = socketDir !== opts.dir;
  if (shared) mkdirSync(socketDir, { recursive: true, mode: 0o750 });
  const socketPath = join(socketDir, SOCKET_NAME);
  const lock = takeHostLock(opts.dir);
  if (lock === null) throw new HostAlreadyRunning('a vault host is already running');
  const ctx = new HostContext(opts.dir, opts.now);
  const startedAt = Date.now();
  let idle: NodeJS.Timeout | undefined;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let stopping = false;

  const stop = () => {
    if (stopping) return;
    stopping = true;
    clearTimeout(idle);
    // The lock goes last: until then no other host may bind or unlink host.sock.
    server.close(() => {
      void ctx.close().finally(() => {
        closeSync(lock);
        resolveStopped();
      });
    });
    server.closeAllConnections();
    sockets.closeAll();
  };
  const followers = { count: 0 };
  const sockets = new SessionSockets(
    socketDir,
    shared,
    (id) => route(sandboxGuard(id), (req) => `sandbox ${sourceOf(req)}`),
    (id) => {
      ctx.callers.clear();
      revokeSession(ctx, id, 'host');
    },
  );
  const touch = () => {
    clearTimeout(idle);
    if (opts.idleMs <= 0) return;
    idle = setTimeout(() => {
      if (followers.count > 0) return touch();
      log('idle: stopping');
      stop();
    }, opts.idleMs);
  };
  const table = handlers(ctx, stop, startedAt, sockets, shared ? 'hardened' : 'same-user');

  /**
   * A session socket's gate: agent operations only, with that session's token
   * only; anything else is refused before it reaches a handler.
   */
  const sandboxGuard =
    (id: string) =>
    (op: Op, b: Body): void => {
      if (!SANDBOX_OPS.has(op)) throw new VaultError('VLT-2051');
      const token = typeof b.token === 'string' ? parseToken(b.token) : null;
      if (token?.agentId !== id)
        throw new VaultError('VLT-2051', 'Only this session’s token works inside its sandbox.');
    };

  const route =
    (guard: ((op: Op, b: Body) => void) | null, source: (req: IncomingMessage) => string) =>
    (req: IncomingMessage, res: ServerResponse) => {
      touch();
      const prefix = `/${PROTOCOL_VERSION}/`;
      const url = req.url ?? '';
      const op = (url.startsWith(prefix) ? url.slice(prefix.length) : '') as Op;
      const reply = (status: number, body: unknown) => {
        const bytes = Buffer.from(JSON.stringify(body));
        res.writeHead(status, {
          'content-type': 'application/json',
          'content-length': bytes.length,
          'cache-control': 'no-store',
        });
        res.end(bytes);
      };
      const fail = (err: unknown) => {
        if (err instanceof VaultError && isErrorCode(err.code)) {
          const problems = err.problems.length > 0 ? { problems: err.problems } : {};
          reply(200, { ok: false, code: err.code, message: err.message, ...problems });
          return;
        }
        // Log the kind of failure only: a message of a dependency could quote input.
        log(`internal error in ${op}: ${describe(err)}`);
        const damage = ctx.explain(err);
        if (damage !== null) {
          reply(200, { ok: false, code: damage, message: ERRORS[damage].message });
          return;
        }
        reply(200, { ok: false, code: 'VLT-3007', message: 'Internal error in the vault host.' });
      };
      if (guard === null && req.method === 'POST' && op === 'audit.follow') {
        void followAudit(ctx, req, res, fail, followers);
        return;
      }
      if (guard === null && req.method === 'POST' && op === 'session.hold') {
        void holdSession(ctx, req, res, fail, followers, sockets, source(req));
        return;
      }
      const handler = req.method === 'POST' && Object.hasOwn(table, op) ? table[op] : undefined;
      if (handler === undefined) {
        reply(404, { ok: false, code: 'VLT-1001', message: 'No such operation.' });
        return;
      }
      const changes = !CALLER_OPS.has(op);
      readBody(req)
        .then(async (body) => {
          try {
            guard?.(op, body);
            if (changes) ctx.callers.clear();
            return await handler(body, source(req));
          } finally {
            wipeLifted(body);
          }
        })
        .finally(() => {
          if (changes) ctx.callers.clear();
        })
        .then((result) => reply(200, { ok: true, result }), fail);
    };
  const server = createServer(route(null, sourceOf));
  // A proxy keeps its connections (client.ts HostChannel drops its idle ones sooner).
  server.keepAliveTimeout = 5000;

  try {
    // A store LMDB cannot read whole (a damaged page) crashes whoever opens it,
    // and a page that reads survive can crash the first write into it (an
    // audit record, with nearly every request): read it, and write into a copy
    // of it, first in a child, before any request can open it here, and refuse
    // with VLT-3034 instead of dying at every request. After the host lock
    // (taken above), so a second host started meanwhile stops at the lock
    // instead of reading too; the child never takes host.lock. It costs the
    // start ~25 ms on a 100 KB store, ~0.5 s on a 30 MB one.
    if (Store.exists(opts.dir)) {
      ctx.damaged = await scanInChild(ctx.storePath);
      if (ctx.damaged !== null) log(`the store cannot be read whole: ${ctx.damaged}`);
    }
    // Under the lock, a socket file left here is a dead host's: no live host can own it.
    rmSync(socketPath, { force: true });
    await listenOnce(server, socketPath);
  } catch (err) {
    closeSync(lock);
    throw err;
  }
  chmodSync(socketPath, shared ? 0o660 : 0o600);
  // Before the first request: no `run` holds a session of an earlier host.
  if (ctx.damaged === null && ctx.hasVault()) {
    const ended = endOrphanedSessions(ctx);
    if (ended > 0) log(`ended ${ended} session(s) left by an earlier host`);
  }
  touch();
  log(`listening on ${socketPath}`);
  return { socketPath, stopped, stop };
}
