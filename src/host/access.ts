/**
 * The agent access path, in the one order that holds everywhere:
 * authenticate -> lock -> scope -> field -> check and charge the limits ->
 * commit the audit record -> decrypt -> release. Nothing is released on any
 * failure before the end, and the charge, any violation or lock, and the audit
 * record are one write transaction.
 *
 * No existence oracle: a name that matches no entry and an entry outside the
 * scope take the same path, write the same kind of record and give the same
 * error bytes; and the caller's name index holds its own scope only, so
 * neither the host nor a copy of the store answers for any other name.
 *
 * Keys follow scope (schema 2): the caller's token opens its key pair, which
 * opens the grants of its scope (one data key per entry) and nothing else.
 */
import { agentActor, UNKNOWN_ACTOR, type AuditAction, type AuditEvent } from '../core/audit.js';
import { VaultError, type ErrorCode } from '../core/errors.js';
import { TOTP_FIELD } from '../core/names.js';
import { chargeRefused, decideRead, inScope } from '../core/policy.js';
import { KEY_BYTES, KeyArena, open, unwrapKey, wipe } from '../crypto/aead.js';
import { openSealed, type KeyPair } from '../crypto/box.js';
import { equal, keyedHash } from '../crypto/hash.js';
import { tokenKeys } from '../crypto/kdf.js';
import { Secret } from '../crypto/secret.js';
import { parseToken } from '../crypto/token.js';
import {
  SCHEMA_VERSION,
  type AgentRecord,
  type EntryRecord,
  type FieldRecord,
  type Grant,
  type Grants,
  type Tx,
  type VaultHeader,
} from '../store/store.js';
import { appendAudit } from './audit-log.js';
import type { Borrowed, CallerKeys } from './caller-cache.js';
import { normalHost } from './entries.js';
import { fieldHash, nameHash, openMeta, openName, type EntryMeta } from './grants.js';
import { RECORD_BYTES, type HostContext } from './context.js';
import { sessionLive } from './sessions.js';
import { slots } from './slots.js';
import { parseSeed, totpCode } from './totp.js';

/** An authenticated agent for the length of one request. */
export interface AgentSession {
  /** The agent as stored when the request began (each transaction reads it again). */
  readonly agent: AgentRecord;
  readonly keys: KeyPair;
  readonly indexKey: Buffer;
  /** Guarded memory for the keys this request opens (data keys), wiped when it ends. */
  readonly arena: KeyArena;
  /** Set when the token is a `run` session token: its id, checked again in each transaction. */
  readonly sessionId?: string;
  /**
   * The key sealed in `box` to this caller (a grant's data key), or null; the
   * session owns it (never wipe it).
   */
  unseal(box: Buffer): Buffer | null;
  /** Wipes or gives back every key of the request: see endSession. */
  end(): void;
}

/** Request arenas, zeroed and reused: a guarded allocation maps fresh pages every time. */
const spareArenas: KeyArena[] = [];
const SPARE_ARENAS = 64;

function requestArena(): KeyArena {
  return spareArenas.pop() ?? new KeyArena();
}

function returnArena(a: KeyArena): void {
  a.reset();
  if (spareArenas.length < SPARE_ARENAS) spareArenas.push(a);
  else a.wipe();
}

/** A request's session on keys the caller cache lent it. */
function lentSession(agent: AgentRecord, lent: Borrowed): AgentSession {
  const arena = requestArena();
  let ended = false;
  return {
    agent,
    keys: lent.keys.keys,
    indexKey: lent.keys.indexKey,
    arena,
    ...(lent.keys.sessionId === undefined ? {} : { sessionId: lent.keys.sessionId }),
    unseal: (box) => lent.unseal(box),
    end: () => {
      if (ended) return;
      ended = true;
      returnArena(arena);
      lent.done();
    },
  };
}

/** A request's session on keys of its own (the cache is off): all wiped when it ends. */
function ownSession(agent: AgentRecord, k: CallerKeys, arena: KeyArena): AgentSession {
  return {
    agent,
    keys: k.keys,
    indexKey: k.indexKey,
    arena,
    ...(k.sessionId === undefined ? {} : { sessionId: k.sessionId }),
    unseal: (box) => openSealed(k.keys, box, arena),
    end: () => {
      wipe(k.keys.secretKey, k.indexKey);
      arena.wipe();
    },
  };
}

/**
 * The caller cache's check of a kept token against the records now: the
 * agent (and session) still there, not revoked, not expired, and the token's
 * verifier still theirs. Returns the agent as stored, or null.
 */
function stillValid(ctx: HostContext, k: CallerKeys): AgentRecord | null {
  return ctx.store().read((tx) => {
    const agent = tx.agent(k.agentId);
    if (agent === null || agent.revoked !== null) return null;
    if (k.sessionId === undefined) return equal(agent.verifier, k.verifier) ? agent : null;
    const r = tx.session(k.sessionId);
    if (r === null || r.agentId !== k.agentId || !sessionLive(r, ctx.now())) return null;
    return equal(r.verifier, k.verifier) ? agent : null;
  });
}

/**
 * What the caller may see right now, read inside the transaction: the agent as
 * stored (for its rate state and lock), and the scope, grants and name index
 * of the token — the agent's own, or its session's (narrower, sealed to the
 * session's key pair). A session that was revoked or has expired sees nothing.
 */
function view(
  tx: Tx,
  ctx: HostContext,
  s: AgentSession,
): {
  agent: AgentRecord;
  scope: readonly string[];
  grants: Grants['grants'];
  index: Grants['index'];
  dead: boolean;
} {
  const agent = tx.agent(s.agent.id) ?? s.agent;
  if (s.sessionId === undefined) {
    const { scope, grants, index } = agent;
    return { agent, scope, grants: grants ?? {}, index: index ?? {}, dead: false };
  }
  const r = tx.session(s.sessionId);
  if (r === null || !sessionLive(r, ctx.now()))
    return { agent, scope: [], grants: {}, index: {}, dead: true };
  return {
    agent,
    scope: r.scope.filter((id) => agent.scope.includes(id)),
    grants: r.grants ?? {},
    index: r.index ?? {},
    dead: false,
  };
}

/** A session token: its record and the agent it acts for, or null when the id names no session. */
function sessionAuth(
  ctx: HostContext,
  token: Buffer,
  header: VaultHeader,
  id: string,
  secret: Buffer,
  denied: (actor: string, message?: string) => never,
): AgentSession | null {
  const found = ctx.store().read((tx) => {
    const r = tx.session(id);
    return r === null ? null : { r, agent: tx.agent(r.agentId) };
  });
  if (found === null) return null;
  const { r, agent } = found;
  if (agent === null) return denied(UNKNOWN_ACTOR);
  const actor = agentActor(agent.name);
  if (agent.revoked !== null || r.revoked !== null) return denied(actor, 'Token revoked.');
  if (ctx.now() >= r.expires) return denied(actor, 'Token expired.');
  const arena = new KeyArena();
  const { verifier, wrapKey } = tokenKeys(secret, arena);
  try {
    // A known id with a wrong secret: audited to the agent the id names.
    if (!equal(verifier, r.verifier)) return denied(actor);
    const secretKey = unwrapKey(
      wrapKey,
      r.secretKey,
      slots.sessionSecretKey(header.vaultId, r.id),
      arena,
    );
    if (secretKey === null) throw new VaultError('VLT-3003');
    const keys = { publicKey: r.publicKey, secretKey };
    const indexKey = openSealed(keys, r.indexKey, arena);
    if (indexKey === null) throw new VaultError('VLT-3003');
    return opened(
      ctx,
      token,
      agent,
      { agentId: agent.id, sessionId: r.id, keys, indexKey, verifier: r.verifier },
      arena,
    );
  } catch (err) {
    arena.wipe();
    throw err;
  } finally {
    wipe(wrapKey);
  }
}

function event(
  ctx: HostContext,
  action: AuditAction,
  outcome: 'ok' | ErrorCode,
  actor: string,
  source: string,
  more: Partial<Pick<AuditEvent, 'entryId' | 'entry' | 'field' | 'host'>> = {},
): AuditEvent {
  return {
    at: ctx.now(),
    action,
    actor,
    source,
    outcome,
    entryId: more.entryId ?? null,
    entry: more.entry ?? null,
    field: more.field ?? null,
    host: more.host ?? null,
    subject: null,
  };
}

/** Audits a refusal, then throws it; if the record cannot be written, VLT-3004 instead. */
function refuse(ctx: HostContext, header: VaultHeader, e: AuditEvent, err: VaultError): never {
  ctx.commit((tx) => appendAudit(tx, header, e));
  throw err;
}

/**
 * Authenticates a token: well-formed, known, not revoked, verifier equal (constant time).
 * @throws VaultError VLT-2040 (audited), VLT-3003 when the agent's keys do not open.
 */
export function authenticate(ctx: HostContext, token: Secret, source: string): AgentSession {
  const bytes = token.expose();
  let fresh: AgentRecord | null = null;
  const lent = ctx.callers.borrow(bytes, (k) => (fresh = stillValid(ctx, k)) !== null);
  if (lent !== null && fresh !== null) return lentSession(fresh, lent);
  const store = ctx.store();
  const header = store.read((tx) => ctx.header(tx));
  if (header.schema > SCHEMA_VERSION) throw new VaultError('VLT-3023');
  if (header.schema < SCHEMA_VERSION) throw new VaultError('VLT-3024');
  const parsed = parseToken(bytes.toString('utf8'));
  const agent = parsed === null ? null : store.read((tx) => tx.agent(parsed.agentId));
  const denied = (actor: string, message?: string): never =>
    refuse(
      ctx,
      header,
      event(ctx, 'denied', 'VLT-2040', actor, source),
      new VaultError('VLT-2040', message),
    );
  if (parsed !== null && agent === null) {
    const session = sessionAuth(ctx, bytes, header, parsed.agentId, parsed.secret, denied);
    if (session !== null) return session;
  }
  if (parsed === null || agent === null) return denied(UNKNOWN_ACTOR);
  if (agent.revoked !== null) return denied(agentActor(agent.name), 'Token revoked.');
  const arena = new KeyArena();
  const { verifier, wrapKey } = tokenKeys(parsed.secret, arena);
  try {
    if (!equal(verifier, agent.verifier)) return denied(agentActor(agent.name));
    const secretKey = unwrapKey(
      wrapKey,
      agent.secretKey,
      slots.agentSecretKey(header.vaultId, agent.id),
      arena,
    );
    if (secretKey === null) throw new VaultError('VLT-3003');
    const keys = { publicKey: agent.publicKey, secretKey };
    const indexKey = openSealed(keys, agent.indexKey, arena);
    if (indexKey === null) throw new VaultError('VLT-3003');
    return opened(
      ctx,
      bytes,
      agent,
      { agentId: agent.id, keys, indexKey, verifier: agent.verifier },
      arena,
    );
  } catch (err) {
    arena.wipe();
    throw err;
  } finally {
    wipe(wrapKey);
  }
}

/**
 * A token's keys, just opened into `arena`: kept by the caller cache for the
 * caller's next requests (and lent to this one), or this request's alone.
 */
function opened(
  ctx: HostContext,
  token: Buffer,
  agent: AgentRecord,
  k: CallerKeys,
  arena: KeyArena,
): AgentSession {
  if (!ctx.callers.enabled) return ownSession(agent, k, arena);
  return lentSession(agent, ctx.callers.keep(token, k, arena));
}

/**
 * The request is over: every key it opened is wiped; the caller's own keys
 * are wiped too, or given back to the caller cache that keeps them.
 */
export function endSession(s: AgentSession): void {
  s.end();
}

/** A reference to one field of one entry, as the caller wrote it. */
export interface FieldRef {
  readonly entry: string;
  readonly field: string;
}

/** What the released values are for: the audit action and, for a fill, where it goes. */
export type Purpose =
  | { readonly kind: 'get' }
  | { readonly kind: 'totp' }
  | { readonly kind: 'fill'; readonly host: string | null };

interface Target {
  /** The reference's key in the request, for putting values back in order. */
  key: string;
  entry: EntryRecord;
  field: string;
  record: FieldRecord;
  /** The entry's data key, opened from the caller's grant (in the request's arena). */
  dataKey: Buffer;
}

/** What check() found for one entry of a request, kept for its other fields. */
type EntryCheck = { code: ErrorCode } | { dataKey: Buffer; meta: EntryMeta };

/**
 * The entry half of check(): the grant opened, its generation, the sealed name
 * equal to the name asked for, the meta opened. Once per entry and name in a
 * request, however many of its fields are asked for.
 */
function checkEntry(
  session: AgentSession,
  header: VaultHeader,
  entry: EntryRecord,
  grant: Grant,
  name: string,
): EntryCheck {
  if (entry.gen !== grant.gen) return { code: 'VLT-3020' };
  const dataKey = session.unseal(grant.box);
  if (dataKey === null || dataKey.length !== KEY_BYTES) return { code: 'VLT-3003' };
  const sealed = openName(header, dataKey, entry);
  if (sealed === null) return { code: 'VLT-3003' };
  if (sealed !== name) return { code: 'VLT-3022' };
  const meta = openMeta(header, dataKey, entry);
  if (meta === null) return { code: 'VLT-3003' };
  return { dataKey, meta };
}

/**
 * One reference checked against the caller's grant, inside the transaction:
 * its data key opened from the grant, the entry's sealed name equal to the name
 * asked for (a swapped index row leads elsewhere: VLT-3022), the generations
 * and the field's version as the sealed meta says (an older record: VLT-3020),
 * a totp seed refused (VLT-2052), and for a fill the host binding.
 */
function check(
  tx: Tx,
  entry: EntryRecord,
  checked: EntryCheck,
  ref: FieldRef,
  purpose: Purpose,
  host: string | null,
): { code: ErrorCode } | { record: FieldRecord; dataKey: Buffer } {
  if ('code' in checked) return checked;
  const { dataKey, meta } = checked;
  const record = tx.field(entry.id, fieldHash(dataKey, entry.id, ref.field));
  if (record === null) return { code: 'VLT-2044' };
  if (record.gen !== entry.gen || record.version < (meta.versions[ref.field] ?? 0))
    return { code: 'VLT-3020' };
  // A one-time-password seed never leaves the host: only `totp` uses it, for a code.
  if (ref.field === TOTP_FIELD && purpose.kind !== 'totp') return { code: 'VLT-2052' };
  if (host !== null && meta.hosts.length > 0 && !meta.hosts.includes(normalHost(host)))
    return { code: 'VLT-2045' };
  return { record, dataKey };
}

/** Refused references audited by name in one request; the rest share one record. */
const AUDITED_REFUSALS = 16;

function retryText(d: { retryAt: number | null; window: string }): string {
  const when =
    d.retryAt === null
      ? 'this request alone exceeds the limit'
      : `retry after ${new Date(d.retryAt).toISOString()}`;
  return `Rate limit exceeded (${d.window}); violation recorded; ${when}.`;
}

/**
 * Releases the fields `refs` name, all of them or none: for `get` and `totp`
 * one reference, for a render or a proxy fill all distinct references of the
 * request at once, charged to the limits together. Values come back in the
 * order of `refs` (duplicates resolved once).
 * @throws VaultError VLT-2040/2041/2042/2043/2044 (each audited; for several
 *   references, `problems` names each bad one), VLT-3003, VLT-3004.
 */
export async function release(
  ctx: HostContext,
  session: AgentSession,
  refs: readonly FieldRef[],
  purpose: Purpose,
  source: string,
): Promise<Secret[]> {
  const keyOf = (r: FieldRef) => JSON.stringify([r.entry, r.field]);
  // Each distinct reference and where it stands in the request, built once:
  // the cost of a request stays linear in its size (issue 16).
  const at = new Map<string, { ref: FieldRef; indices: number[] }>();
  refs.forEach((r, index) => {
    const k = keyOf(r);
    const seen = at.get(k);
    if (seen === undefined) at.set(k, { ref: r, indices: [index] });
    else seen.indices.push(index);
  });
  const distinct = [...at.values()].map((a) => a.ref);
  const actor = agentActor(session.agent.name);
  const host = purpose.kind === 'fill' ? purpose.host : null;

  // Grouped with the other requests of this moment: one durable flush for all.
  const decided = await ctx.commitGrouped(
    (tx): { ok: true; targets: Target[]; header: VaultHeader } | { ok: false; err: VaultError } => {
      const header = ctx.header(tx);
      const { agent, scope, grants, index, dead } = view(tx, ctx, session);
      // Only the caller's own index: a name outside its scope is in no row it can read.
      const looked = distinct.map((ref) => {
        const entryId = index[nameHash(session.indexKey, ref.entry)] ?? null;
        return { ref, entryId, entry: entryId === null ? null : tx.entry(entryId) };
      });
      const audit = (action: AuditAction, code: 'ok' | ErrorCode, l: (typeof looked)[number]) =>
        appendAudit(
          tx,
          header,
          event(ctx, action, code, actor, source, {
            entryId: l.entryId,
            entry: l.ref.entry,
            field: l.ref.field,
            host,
          }),
        );
      /**
       * Audits refused references: each of the first AUDITED_REFUSALS by name,
       * the rest in one record that counts them, so one request grows the store
       * by a bounded amount however many names it guesses.
       */
      const auditRefused = (
        action: AuditAction,
        refused: readonly { l: (typeof looked)[number]; code: ErrorCode }[],
      ) => {
        for (const { l, code } of refused.slice(0, AUDITED_REFUSALS)) audit(action, code, l);
        const rest = refused.length - AUDITED_REFUSALS;
        if (rest > 0) {
          appendAudit(
            tx,
            header,
            event(ctx, action, refused[AUDITED_REFUSALS]?.code ?? 'VLT-2041', actor, source, {
              entry: `(${rest} more references)`,
              host,
            }),
          );
        }
      };
      /** Every reference refused for one reason, audited. */
      const refuseAll = (action: AuditAction, code: ErrorCode, message?: string) => {
        auditRefused(
          action,
          looked.map((l) => ({ l, code })),
        );
        return { ok: false as const, err: new VaultError(code, message) };
      };
      if (agent.revoked !== null || dead) return refuseAll('denied', 'VLT-2040', 'Token revoked.');
      if (agent.rate.lock !== null) return refuseAll('locked', 'VLT-2043');

      const targets: Target[] = [];
      const problems: { index: number; code: ErrorCode }[] = [];
      const refused: { l: (typeof looked)[number]; code: ErrorCode }[] = [];
      const checkedEntries = new Map<string, EntryCheck>();
      for (const l of looked) {
        const { entry, ref } = l;
        let code: ErrorCode | null = null;
        let record: FieldRecord | null = null;
        let dataKey: Buffer | null = null;
        const grant = l.entryId === null ? undefined : grants[l.entryId];
        if (entry === null || !inScope(scope, l.entryId) || grant === undefined) {
          code = 'VLT-2041';
        } else {
          const k = JSON.stringify([entry.id, ref.entry]);
          let e = checkedEntries.get(k);
          if (e === undefined) {
            e = checkEntry(session, header, entry, grant, ref.entry);
            checkedEntries.set(k, e);
          }
          const c = check(tx, entry, e, ref, purpose, host);
          if ('code' in c) code = c.code;
          else ({ record, dataKey } = c);
        }
        if (code !== null || entry === null || record === null || dataKey === null) {
          const c = code ?? 'VLT-2041';
          refused.push({ l, code: c });
          for (const index of at.get(keyOf(ref))?.indices ?? []) problems.push({ index, code: c });
          continue;
        }
        targets.push({
          key: keyOf(ref),
          entry,
          field: ref.field,
          record,
          dataKey,
        });
      }
      if (problems.length > 0) {
        // A name refused as out of scope (or unknown: the same) takes a slot in
        // the rate windows as a read would, once per name and window, so
        // guessing names costs the agent its next reads (the guardrail skill
        // says so). The refusal itself stays VLT-2041 (policy.ts chargeRefused).
        const guessed = refused
          .filter((r) => r.code === 'VLT-2041')
          .map((r) => `?${keyedHash(session.indexKey, 'refused', r.l.ref.entry).toString('hex')}`);
        if (guessed.length > 0) {
          const rate = chargeRefused(agent.rate, agent.limits, [...new Set(guessed)], ctx.now());
          tx.putAgent({ ...agent, rate });
        }
        auditRefused('denied', refused);
        problems.sort((a, b) => a.index - b.index);
        const first = problems[0]?.code ?? 'VLT-2041';
        const message =
          refs.length === 1
            ? first === 'VLT-2044'
              ? `Field not found: ${JSON.stringify(refs[0]?.field)}.`
              : undefined
            : `${problems.length} of ${refs.length} references cannot be resolved; nothing was released.`;
        return { ok: false, err: new VaultError(first, message, { problems }) };
      }

      const d = decideRead(
        agent.rate,
        agent.limits,
        [...new Set(targets.map((t) => t.entry.id))],
        ctx.now(),
      );
      if (d.kind === 'locked') return refuseAll('locked', 'VLT-2043');
      tx.putAgent({ ...agent, rate: d.state });
      if (d.kind === 'lockdown') {
        return refuseAll(
          'locked',
          'VLT-2043',
          'Second rate-limit violation: agent locked; the owner must unlock it with the hardware key.',
        );
      }
      if (d.kind === 'limited') return refuseAll('limited', 'VLT-2042', retryText(d));
      const action = purpose.kind === 'fill' ? 'fill' : agent.kind === 'ai' ? 'ai_read' : 'read';
      // One record per credential released (an entry: DESIGN section 6), naming
      // its fields, as the limits charged it.
      const byEntry = new Map<string, (typeof looked)[number][]>();
      for (const l of looked) {
        const group = byEntry.get(l.entryId ?? '');
        if (group === undefined) byEntry.set(l.entryId ?? '', [l]);
        else group.push(l);
      }
      for (const [first, ...more] of byEntry.values()) {
        if (first === undefined) continue;
        const fields = [first, ...more].map((l) => l.ref.field).join(', ');
        audit(action, 'ok', { ...first, ref: { ...first.ref, field: fields } });
      }
      return { ok: true, targets, header };
    },
    // At most one record per distinct reference, AUDITED_REFUSALS + 1 when refused.
    distinct.length * RECORD_BYTES,
  );
  if (!decided.ok) throw decided.err;

  const { header } = decided;
  const values = new Map<string, Secret>();
  try {
    for (const t of decided.targets) {
      const value = open(
        t.dataKey,
        t.record.value,
        slots.field(header.vaultId, t.entry.id, t.field, t.record.version, t.record.gen),
      );
      if (!value) throw new VaultError('VLT-3003');
      values.set(t.key, totpOr(purpose, value, ctx.now()));
    }
    return refs.map((r) => values.get(keyOf(r)) as Secret);
  } catch (err) {
    for (const v of values.values()) v.wipe();
    throw err;
  }
}

function totpOr(purpose: Purpose, value: Buffer, now: number): Secret {
  if (purpose.kind !== 'totp') return new Secret(value);
  try {
    return Secret.fromString(totpCode(parseSeed(value.toString('utf8')), now));
  } finally {
    wipe(value);
  }
}

/**
 * Releases one field (mode `get`) or the current code of the `totp` field
 * (mode `totp`) to an authenticated agent.
 * @throws VaultError as release().
 */
export async function readField(
  ctx: HostContext,
  session: AgentSession,
  req: { entry: string; field: string; mode: 'get' | 'totp' },
  source: string,
): Promise<Secret> {
  const field = req.mode === 'totp' ? TOTP_FIELD : req.field;
  const [value] = await release(
    ctx,
    session,
    [{ entry: req.entry, field }],
    { kind: req.mode },
    source,
  );
  if (value === undefined) throw new VaultError('VLT-3007');
  return value;
}

/** For `init`: the token is good. Writes nothing beyond an audit record on failure. */
export function whoami(ctx: HostContext, token: Secret, source: string): { agent: string } {
  const s = authenticate(ctx, token, source);
  try {
    if (s.agent.rate.lock !== null) {
      refuse(
        ctx,
        ctx.store().read((tx: Tx) => ctx.header(tx)),
        event(ctx, 'locked', 'VLT-2043', agentActor(s.agent.name), source),
        new VaultError('VLT-2043'),
      );
    }
    return { agent: s.agent.name };
  } finally {
    endSession(s);
  }
}
