/**
 * Session tokens for `run`: minted by the owner for one agent, they act as that
 * agent (same limits, same rate state, same audit actor) within the agent's
 * scope or a narrower one. A session has its own verifier and key pair; the
 * owner seals the tier keys and the index key to the new public key exactly as
 * addAgent does, so the agent's token is never needed and the store alone
 * decrypts nothing. A session dies when `run` ends it, and after `expires`.
 */
import { agentActor } from '../core/audit.js';
import { VaultError, quote } from '../core/errors.js';
import { randomBytes, seal, wipe } from '../crypto/aead.js';
import { newKeyPair, sealTo } from '../crypto/box.js';
import { tokenKeys } from '../crypto/kdf.js';
import { AGENT_ID_BYTES, SECRET_BYTES, formatToken } from '../crypto/token.js';
import type { SessionRecord, Tx } from '../store/store.js';
import { appendAudit } from './audit-log.js';
import type { HostContext } from './context.js';
import { entryIds } from './entries.js';
import { ownerEvent, type OwnerSession } from './owner.js';
import { slots } from './slots.js';

/** The longest a session token lives, whatever the caller asks. */
export const SESSION_MAX_MS = 12 * 3_600_000;
/**
 * How long an ended session's record is kept, so its token reads "revoked" or
 * "expired" rather than "invalid"; after that it is removed when the next
 * session is minted, and the store does not grow with every `run`.
 */
export const SESSION_KEEP_MS = 24 * 3_600_000;

/** Removes the records of sessions that ended more than SESSION_KEEP_MS before `now`. */
function pruneSessions(tx: Tx, now: number): void {
  for (const r of tx.sessions()) {
    const ended = r.revoked ?? r.expires;
    if (ended + SESSION_KEEP_MS < now) tx.removeSession(r.id);
  }
}

/**
 * Mints a session token for agent `req.agent`, scoped to `req.scope` (entry
 * names, each within the agent's scope) or, when empty, to the agent's scope.
 * @throws VaultError VLT-4002 no such agent, VLT-4001 unknown entry,
 *   VLT-2041 an entry outside the agent's scope, VLT-2043 agent locked.
 */
export function mintSession(
  ctx: HostContext,
  s: OwnerSession,
  req: {
    agent: string;
    scope: readonly string[];
    ttlMs?: number | undefined;
    /** Whether `run` starts the agent in its sandbox; the audit record says which. */
    sandboxed?: boolean;
  },
  source: string,
): { token: string; expires: number; id: string } {
  const sessionId = randomBytes(AGENT_ID_BYTES);
  const secret = randomBytes(SECRET_BYTES);
  const { verifier, wrapKey } = tokenKeys(secret);
  const pair = newKeyPair();
  const ttl = Math.min(req.ttlMs ?? SESSION_MAX_MS, SESSION_MAX_MS);
  try {
    const expires = ctx.commit((tx) => {
      const agentId = tx.agentIdByName(req.agent);
      const agent = agentId === null ? null : tx.agent(agentId);
      if (agent === null || agent.revoked !== null)
        throw new VaultError('VLT-4002', `No such agent: ${quote(req.agent)}.`);
      if (agent.rate.lock !== null) throw new VaultError('VLT-2043');
      const header = ctx.header(tx);
      const asked = entryIds(tx, s, [...new Set(req.scope)]);
      const outside = asked.find((e) => !agent.scope.includes(e.id));
      if (outside !== undefined)
        throw new VaultError('VLT-2041', 'A --scope entry is outside the agent’s scope.');
      const scope = asked.length > 0 ? asked.map((e) => e.id) : [...agent.scope];
      const tierKeys: Record<string, Buffer> = {};
      for (const id of scope) {
        const e = tx.entry(id);
        if (e === null || tierKeys[e.tier] !== undefined) continue;
        const key = s.tierKey(header, e.tier);
        if (key === null) throw new VaultError('VLT-3003');
        tierKeys[e.tier] = sealTo(pair.publicKey, key);
      }
      const id = sessionId.toString('hex');
      const now = ctx.now();
      pruneSessions(tx, now);
      const record: SessionRecord = {
        id,
        agentId: agent.id,
        scope,
        verifier,
        publicKey: pair.publicKey,
        secretKey: seal(wrapKey, pair.secretKey, slots.sessionSecretKey(header.vaultId, id)),
        tierKeys,
        indexKey: sealTo(pair.publicKey, s.indexKey),
        created: now,
        expires: now + ttl,
        revoked: null,
      };
      tx.putSession(record);
      appendAudit(
        tx,
        header,
        ownerEvent(ctx, 'session_start', source, {
          subject: agent.name,
          field: req.sandboxed === true ? 'sandbox' : 'no-sandbox',
        }),
      );
      return record.expires;
    });
    return { token: formatToken(sessionId, secret), expires, id: sessionId.toString('hex') };
  } finally {
    wipe(secret, wrapKey, pair.secretKey);
  }
}

/** Ends a session for good: its keys are erased, the record stays so its token reads "revoked". */
export function revokeSession(ctx: HostContext, id: string, source: string): void {
  ctx.commit((tx) => {
    const r = tx.session(id);
    if (r === null || r.revoked !== null) return;
    const header = ctx.header(tx);
    tx.putSession({
      ...r,
      scope: [],
      tierKeys: {},
      verifier: Buffer.alloc(0),
      secretKey: Buffer.alloc(0),
      indexKey: Buffer.alloc(0),
      revoked: ctx.now(),
    });
    const name = tx.agent(r.agentId)?.name ?? '?';
    appendAudit(tx, header, {
      ...ownerEvent(ctx, 'session_end', source, { subject: name }),
      actor: agentActor(name),
    });
  });
}

/**
 * Ends every live session: called when a host starts. A session lives only as
 * long as the `run` that holds it, and no hold outlives the host it was made
 * on, so a session still live in the store at start-up belongs to a `run` that
 * is gone or can no longer be told apart from one that is.
 */
export function endOrphanedSessions(ctx: HostContext): number {
  const now = ctx.now();
  const live = ctx
    .store()
    .read((tx) => tx.sessions())
    .filter((r) => sessionLive(r, now));
  for (const r of live) revokeSession(ctx, r.id, 'host-start');
  return live.length;
}

/** Whether a session is alive at `now`. */
export function sessionLive(r: SessionRecord, now: number): boolean {
  return r.revoked === null && now < r.expires;
}
