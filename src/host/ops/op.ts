/**
 * What a host operation is: a handler that gets an explicit request (the
 * decoded body, the caller's audit source, the owner's secrets lifted from the
 * bytes) and returns its result, or a stream that writes its own reply. The
 * owner's proof is checked in one place, `owner()`, and an agent's in
 * `asAgent()`: a handler never unlocks by itself.
 */
import type { ServerResponse } from 'node:http';
import type { AnchorRef, Decoded, HostStatus, Op, Results } from '../../core/protocol.js';
import { bad } from '../../core/decode.js';
import { Secret } from '../../crypto/secret.js';
import { sealVault } from '../keys/state.js';
import { anchorAudit, anchoredHead, rememberedAnchorProblem } from '../audit/log.js';
import { VaultError } from '../../core/errors.js';
import { authenticate, endSession, type AgentSession } from '../agent/access.js';
import type { HostContext } from '../context.js';
import { unlockOwner, unlockWithRecovery, type OwnerSession } from '../owner/keys.js';
import type { OwnerSecrets } from '../owner/secrets.js';
import type { Binding, OwnerSessions, ProcessBinding } from '../owner/unlock.js';
import { rotatePending } from '../agent/sessions.js';
import type { SessionSockets } from '../serve/session-sockets.js';
import { finishConfirm } from '../owner/confirm.js';
import { keysEnrolled } from '../owner/hardware-keys.js';

/** What every handler may use of the running host. */
export interface HostEnv {
  readonly ctx: HostContext;
  readonly sockets: SessionSockets;
  /** Stops the host (after the reply that asked for it). */
  readonly stop: () => void;
  readonly startedAt: number;
  readonly mode: HostStatus['mode'];
  /** Streams open now (a follower, a held session): the host does not idle out under them. */
  readonly followers: { count: number };
  /** The owner sessions `vault-cli unlock` opened, by terminal. */
  readonly owners: OwnerSessions;
  /** A line for host.log. */
  readonly log: (line: string) => void;
}

/** One request, as the server hands it to a handler. */
export interface Request<O extends Op> {
  readonly op: O;
  readonly body: Decoded<O>;
  /** The caller as the kernel names it (`pid:<n> uid:<n>`), for the audit. */
  readonly source: string;
  /** Wiped by the server once the request is answered. */
  readonly secrets: OwnerSecrets;
  /**
   * The caller's terminal and session as the kernel names them, read when
   * asked (owner-unlock.ts); null for a caller that may hold no owner session.
   */
  readonly binding: () => Binding | null;
  /** The calling process, for a process hold (owner-unlock.ts); null on a session socket. */
  readonly process: () => ProcessBinding | null;
}

export type Handler<O extends Op> = (env: HostEnv, req: Request<O>) => Promise<Results[O]>;

/**
 * An operation that answers with a stream: it sets the stream up and
 * returns (or throws, before writing anything, for the server to reply with).
 */
export interface Streamed<O extends Op> {
  readonly stream: (env: HostEnv, req: Request<O>, res: ServerResponse) => Promise<void>;
}

/** The host's table: every operation, defined once (ops/index.ts). */
export type OpTable = { readonly [O in Op]: Handler<O> | Streamed<O> };

/** A slice of the table: one area's operations (ops/<area>.ts). */
export type OpArea<K extends Op> = { readonly [O in K]: Handler<O> | Streamed<O> };

/** The owner secret a request carries in `field`, or VLT-1001 naming it. */
export function ownerSecret(req: Request<Op>, field: 'passphrase' | 'newPassphrase'): Secret {
  const sent = (req.body as Record<string, unknown>)[field];
  if (sent !== undefined && typeof sent !== 'string') throw bad(`${field} must be a string`);
  const secret = req.secrets.get(field, sent);
  if (secret === undefined) throw bad(`${field} must be a string`);
  return secret;
}

/** How an owner operation proves itself, and what it leaves done after. */
export interface OwnerTerms<O extends Op> {
  /** Checks that need no unlock, run before it (a new passphrase's length). */
  readonly before?: (env: HostEnv, req: Request<O>) => void;
  /** `vault passwd --recovery`: a recovery key sent stands in for the passphrase. */
  readonly recovery?: boolean;
  /**
   * Finish the key rotations a revocation left pending before the command
   * (default true); passwd and rekey rewrap the root key and leave them.
   */
  readonly rotate?: boolean;
  /** Anchor the audit head the command leaves (default true); rekey anchors in its own commit. */
  readonly anchor?: boolean;
  /** Hand the passphrase on instead of wiping it at the unlock (rekey re-derives with it). */
  readonly keepPassphrase?: boolean;
  /**
   * Whether the terminal's owner session may stand for the passphrase when
   * none is sent (default true, false with `keepPassphrase`). Changing the
   * passphrase and opening a session ask for the passphrase itself.
   */
  readonly session?: boolean;
  /**
   * What the operation releases or loosens, as the refusal names it: the
   * terminal's owner session alone does not stand for it (VLT-2055, the
   * client asks for the passphrase again). Operations that loosen only
   * sometimes (a scope, limits, hosts) call OwnerSession.requireProof themselves.
   */
  readonly releases?: string;
}

/**
 * The one owner gate: unlocks with the request's passphrase (or recovery key)
 * through unlockOwner's guess throttle and audit, or, when neither is sent,
 * with the calling process's hold or its terminal's owner session (VLT-2054
 * when it has neither);
 * runs `run` with the owner session, anchors the audit head it leaves, and
 * wipes the keys after it.
 */
export function owner<O extends Op, T = Results[O]>(
  run: (
    env: HostEnv,
    req: Request<O>,
    s: OwnerSession,
    passphrase: Secret | null,
  ) => T | Promise<T>,
  terms: OwnerTerms<O> = {},
): (env: HostEnv, req: Request<O>) => Promise<T> {
  return async (env, req) => {
    const { ctx } = env;
    terms.before?.(env, req);
    const recoveryKey = terms.recovery
      ? req.secrets.get('recoveryKey', (req.body as { recoveryKey?: string }).recoveryKey)
      : undefined;
    let pass: Secret | null = null;
    let s: OwnerSession;
    const sent = (req.body as { passphrase?: unknown }).passphrase;
    const bySession = terms.session ?? terms.keepPassphrase !== true;
    if (recoveryKey !== undefined) {
      s = await unlockWithRecovery(ctx, recoveryKey, req.source);
      recoveryKey.wipe();
    } else if (sent === undefined && bySession) {
      s = env.owners.use(
        req.binding(),
        ctx.store().read((tx) => ctx.header(tx)),
        req.process,
      );
    } else {
      pass = ownerSecret(req, 'passphrase');
      s = await unlockOwner(ctx, pass, req.source);
      // Each one is a full Argon2id run (about a second at real costs): the
      // log is where a client that sends the passphrase too often shows.
      env.log(`owner passphrase derived for ${req.op} (${req.source})`);
      if (terms.keepPassphrase !== true) {
        pass.wipe();
        pass = null;
      }
    }
    try {
      // With a hardware key enrolled, a terminal with an open owner session
      // releases and loosens only on a touch of the key bound to the request:
      // the passphrase sent from it (typed at a prompt a hook raised, or read
      // from a file the agent found) is not enough.
      if (recoveryKey === undefined && keysEnrolled(ctx)) {
        s.keyGate =
          s.provedBy === 'terminal' ||
          (s.provedBy === 'passphrase' && bySession && env.owners.view(req.binding()) !== null);
      }
      const proof = (req.body as { keyProof?: { challengeId: string; result: unknown } }).keyProof;
      if (proof !== undefined) {
        await finishConfirm(ctx, req.op, req.body, proof, req.source);
        s.keyConfirmed = true;
      }
      if (terms.releases !== undefined) s.requireProof(terms.releases);
      refuseCutLog(ctx, s, req);
      sealVault(ctx, s);
      if (terms.rotate !== false) rotatePending(ctx, s);
      // Awaited: the anchor goes on the head the command leaves (a backup's record included).
      const out = await run(env, req, s, pass);
      if (terms.anchor !== false) anchor(ctx, s);
      const made = ctx.store().read((tx) => anchoredHead(tx, s.vaultId));
      if (made !== null) anchors.set(req, made);
      return out;
    } finally {
      s.wipe();
      pass?.wipe();
    }
  };
}

/** The audit head each owner request anchored: the server adds it to the reply (AnchorRef). */
const anchors = new WeakMap<object, AnchorRef>();

/** The anchor `req` left, for its reply, if it left one. */
export function anchoredBy(req: object): AnchorRef | undefined {
  return anchors.get(req);
}

/**
 * Refuses, before the command does anything (or anchors anything), a store
 * whose anchor is older than the one the owner's client says its last command
 * left: an agent of the owner's user put an older anchor back and cut the log
 * to it (audit-log.ts rememberedAnchorProblem).
 * @throws VaultError VLT-3003
 */
function refuseCutLog(ctx: HostContext, s: OwnerSession, req: Request<Op>): void {
  const seen = (req.body as { seenAnchor?: AnchorRef }).seenAnchor;
  if (seen === undefined) return;
  const problem = ctx.store().read((tx) => rememberedAnchorProblem(tx, s.vaultId, seen));
  if (problem === null) return;
  throw new VaultError(
    'VLT-3003',
    `The audit log was cut back: ${problem}. Nothing was done; restore a backup, or see docs/threat-model.md ("the owner's anchor memory").`,
  );
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

/** The agent (or session) a token names, for the length of `run`. */
export async function asAgent<T>(
  env: HostEnv,
  req: Request<Op> & { readonly body: { readonly token: string } },
  run: (session: AgentSession) => T | Promise<T>,
): Promise<T> {
  const session = authenticate(env.ctx, agentToken(req), req.source);
  try {
    return await run(session);
  } finally {
    endSession(session);
  }
}

/** The token a request carries, as a Secret (a token is not lifted: it is no owner secret). */
export function agentToken(req: { readonly body: { readonly token: string } }): Secret {
  return new Secret(Buffer.from(req.body.token, 'utf8'));
}
