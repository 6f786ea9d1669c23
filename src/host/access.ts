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
import { accessEvent } from './audit-event.js';
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

interface CallerView {
  readonly agent: AgentRecord;
  readonly scope: readonly string[];
  readonly grants: Grants['grants'];
  readonly index: Grants['index'];
  /** The session token's session was revoked or has expired. */
  readonly dead: boolean;
}

/**
 * What the caller may see right now, read inside the transaction: the agent as
 * stored (for its rate state and lock), and the scope, grants and name index
 * of the token — the agent's own, or its session's (narrower, sealed to the
 * session's key pair). A session that was revoked or has expired sees nothing.
 */
function view(tx: Tx, ctx: HostContext, s: AgentSession): CallerView {
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

/** Who a token's id names: an agent, or a `run` session and the agent it acts for. */
interface Holder {
  readonly agent: AgentRecord;
  /** The record the token opens: the agent's own, or its session's. */
  readonly record: Pick<AgentRecord, 'verifier' | 'publicKey' | 'secretKey' | 'indexKey'>;
  readonly sessionId?: string;
  /** The slot the record's secret key is wrapped under. */
  readonly slot: Buffer;
  /** Why the token no longer opens anything (revoked, expired), or null. */
  readonly barred: string | null;
}

/**
 * The agent or session a token's id names, read in one transaction; null when
 * it names neither (or a session of an agent that is gone).
 */
function holderOf(ctx: HostContext, header: VaultHeader, id: string): Holder | null {
  return ctx.store().read((tx): Holder | null => {
    const agent = tx.agent(id);
    if (agent !== null) {
      const barred = agent.revoked !== null ? 'Token revoked.' : null;
      return { agent, record: agent, slot: slots.agentSecretKey(header.vaultId, id), barred };
    }
    const r = tx.session(id);
    const owner = r === null ? null : tx.agent(r.agentId);
    if (r === null || owner === null) return null;
    const barred =
      owner.revoked !== null || r.revoked !== null
        ? 'Token revoked.'
        : ctx.now() >= r.expires
          ? 'Token expired.'
          : null;
    const slot = slots.sessionSecretKey(header.vaultId, r.id);
    return { agent: owner, record: r, sessionId: r.id, slot, barred };
  });
}

/**
 * Opens the caller's keys with the token's secret, for both kinds of token:
 * the verifier compared in constant time (a known id with a wrong secret is
 * audited to the agent the id names), the key pair unwrapped, the index key
 * opened.
 * @throws VaultError VLT-2040 (audited), VLT-3003 when the keys do not open.
 */
function openCaller(
  ctx: HostContext,
  token: Buffer,
  secret: Buffer,
  h: Holder,
  denied: (actor: string, message?: string) => never,
): AgentSession {
  const arena = new KeyArena();
  const { verifier, wrapKey } = tokenKeys(secret, arena);
  try {
    if (!equal(verifier, h.record.verifier)) return denied(agentActor(h.agent.name));
    const secretKey = unwrapKey(wrapKey, h.record.secretKey, h.slot, arena);
    if (secretKey === null) throw new VaultError('VLT-3003');
    const keys = { publicKey: h.record.publicKey, secretKey };
    const indexKey = openSealed(keys, h.record.indexKey, arena);
    if (indexKey === null) throw new VaultError('VLT-3003');
    const k: CallerKeys = {
      agentId: h.agent.id,
      ...(h.sessionId === undefined ? {} : { sessionId: h.sessionId }),
      keys,
      indexKey,
      verifier: h.record.verifier,
    };
    return opened(ctx, token, h.agent, k, arena);
  } catch (err) {
    arena.wipe();
    throw err;
  } finally {
    wipe(wrapKey);
  }
}

/** Audits a refusal, then throws it; if the record cannot be written, VLT-3004 instead. */
function refuse(ctx: HostContext, header: VaultHeader, e: AuditEvent, err: VaultError): never {
  ctx.commit((tx) => appendAudit(tx, header, e));
  throw err;
}

/** The header, if this build reads the vault's format. @throws VaultError VLT-3023, VLT-3024 */
function currentHeader(ctx: HostContext): VaultHeader {
  const header = ctx.store().read((tx) => ctx.header(tx));
  if (header.schema > SCHEMA_VERSION) throw new VaultError('VLT-3023');
  if (header.schema < SCHEMA_VERSION) throw new VaultError('VLT-3024');
  return header;
}

/**
 * Authenticates a token (an agent's, or a `run` session's): well-formed,
 * known, not revoked or expired, verifier equal (constant time). A caller the
 * cache still holds is checked against the records and lent its kept keys.
 * @throws VaultError VLT-2040 (audited), VLT-3003 when the keys do not open,
 *   VLT-3023/3024 for a vault of another format.
 */
export function authenticate(ctx: HostContext, token: Secret, source: string): AgentSession {
  const bytes = token.expose();
  let fresh: AgentRecord | null = null;
  const lent = ctx.callers.borrow(bytes, (k) => (fresh = stillValid(ctx, k)) !== null);
  if (lent !== null && fresh !== null) return lentSession(fresh, lent);
  const header = currentHeader(ctx);
  const denied = (actor: string, message?: string): never =>
    refuse(
      ctx,
      header,
      accessEvent(ctx, 'denied', 'VLT-2040', actor, source),
      new VaultError('VLT-2040', message),
    );
  const parsed = parseToken(bytes.toString('utf8'));
  const holder = parsed === null ? null : holderOf(ctx, header, parsed.agentId);
  if (parsed === null || holder === null) return denied(UNKNOWN_ACTOR);
  if (holder.barred !== null) return denied(agentActor(holder.agent.name), holder.barred);
  return openCaller(ctx, bytes, parsed.secret, holder, denied);
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

const keyOf = (r: FieldRef): string => JSON.stringify([r.entry, r.field]);

/** A request's references: each distinct one once, and where it stands in the request. */
interface Asked {
  readonly refs: readonly FieldRef[];
  readonly distinct: readonly FieldRef[];
  readonly positions: ReadonlyMap<string, readonly number[]>;
}

/** Built once, so the cost of a request stays linear in its size (issue 16). */
function asked(refs: readonly FieldRef[]): Asked {
  const at = new Map<string, { ref: FieldRef; indices: number[] }>();
  refs.forEach((r, index) => {
    const k = keyOf(r);
    const seen = at.get(k);
    if (seen === undefined) at.set(k, { ref: r, indices: [index] });
    else seen.indices.push(index);
  });
  const values = [...at.values()];
  return {
    refs,
    distinct: values.map((v) => v.ref),
    positions: new Map(values.map((v) => [keyOf(v.ref), v.indices])),
  };
}

/** One access's write transaction: what each step reads, and where it writes. */
interface Access {
  readonly tx: Tx;
  readonly ctx: HostContext;
  readonly header: VaultHeader;
  readonly session: AgentSession;
  /** The caller as this transaction sees it. */
  readonly view: CallerView;
  readonly actor: string;
  readonly source: string;
  readonly purpose: Purpose;
  /** The destination of a fill, for the host binding and the audit record; else null. */
  readonly host: string | null;
}

/** A reference as the caller's own index resolves it. */
interface Looked {
  readonly ref: FieldRef;
  readonly entryId: string | null;
  readonly entry: EntryRecord | null;
}

interface Refused {
  readonly l: Looked;
  readonly code: ErrorCode;
}

/** The request refused: the transaction still commits what the refusal wrote (audit, charge). */
type Refusal = { ok: false; err: VaultError };
type Decided = { ok: true; targets: Target[]; header: VaultHeader } | Refusal;

/**
 * Look up: only in the caller's own index, so a name outside its scope is in
 * no row it can read.
 */
function lookUp(a: Access, refs: readonly FieldRef[]): Looked[] {
  return refs.map((ref) => {
    const entryId = a.view.index[nameHash(a.session.indexKey, ref.entry)] ?? null;
    return { ref, entryId, entry: entryId === null ? null : a.tx.entry(entryId) };
  });
}

function audit(a: Access, action: AuditAction, code: 'ok' | ErrorCode, l: Looked): void {
  const { entryId, ref } = l;
  appendAudit(
    a.tx,
    a.header,
    accessEvent(a.ctx, action, code, a.actor, a.source, {
      entryId,
      entry: ref.entry,
      field: ref.field,
      host: a.host,
    }),
  );
}

/**
 * Audits refused references: each of the first AUDITED_REFUSALS by name, the
 * rest in one record that counts them, so one request grows the store by a
 * bounded amount however many names it guesses.
 */
function auditRefused(a: Access, action: AuditAction, refused: readonly Refused[]): void {
  for (const { l, code } of refused.slice(0, AUDITED_REFUSALS)) audit(a, action, code, l);
  const rest = refused.length - AUDITED_REFUSALS;
  if (rest <= 0) return;
  const code = refused[AUDITED_REFUSALS]?.code ?? 'VLT-2041';
  const more = { entry: `(${rest} more references)`, host: a.host };
  appendAudit(a.tx, a.header, accessEvent(a.ctx, action, code, a.actor, a.source, more));
}

/** Every reference refused for one reason, audited. */
function refuseAll(
  a: Access,
  looked: readonly Looked[],
  action: AuditAction,
  code: ErrorCode,
  message?: string,
): Refusal {
  auditRefused(
    a,
    action,
    looked.map((l) => ({ l, code })),
  );
  return { ok: false, err: new VaultError(code, message) };
}

/** Check, the caller: its token still good and the agent not locked. */
function barred(a: Access, looked: readonly Looked[]): Refusal | null {
  const { agent, dead } = a.view;
  if (agent.revoked !== null || dead)
    return refuseAll(a, looked, 'denied', 'VLT-2040', 'Token revoked.');
  if (agent.rate.lock !== null) return refuseAll(a, looked, 'locked', 'VLT-2043');
  return null;
}

/**
 * Check, one reference: in scope and granted (else VLT-2041, the same as no
 * such name), then the entry (once per entry and name: `entries` keeps it)
 * and the field, as checkEntry() and check() say.
 */
function checkRef(a: Access, l: Looked, entries: Map<string, EntryCheck>): Target | Refused {
  const { entry, entryId, ref } = l;
  const grant = entryId === null ? undefined : a.view.grants[entryId];
  if (entry === null || !inScope(a.view.scope, entryId) || grant === undefined)
    return { l, code: 'VLT-2041' };
  const k = JSON.stringify([entry.id, ref.entry]);
  let e = entries.get(k);
  if (e === undefined) {
    e = checkEntry(a.session, a.header, entry, grant, ref.entry);
    entries.set(k, e);
  }
  const c = check(a.tx, entry, e, ref, a.purpose, a.host);
  if ('code' in c) return { l, code: c.code };
  return { key: keyOf(ref), entry, field: ref.field, record: c.record, dataKey: c.dataKey };
}

/** Check, every reference: the ones to release, and the ones refused. */
function checkRefs(
  a: Access,
  looked: readonly Looked[],
): { targets: Target[]; refused: Refused[] } {
  const targets: Target[] = [];
  const refused: Refused[] = [];
  const entries = new Map<string, EntryCheck>();
  for (const l of looked) {
    const c = checkRef(a, l, entries);
    if ('code' in c) refused.push(c);
    else targets.push(c);
  }
  return { targets, refused };
}

/**
 * Any reference refused refuses the request, each bad one named in
 * `problems`. A name refused as out of scope (or unknown: the same) takes a
 * slot in the rate windows as a read would, once per name and window, so
 * guessing names costs the agent its next reads (the guardrail skill says
 * so). The refusal itself stays VLT-2041 (policy.ts chargeRefused).
 */
function refuseRefs(a: Access, q: Asked, refused: readonly Refused[]): Refusal {
  const guessed = refused
    .filter((r) => r.code === 'VLT-2041')
    .map((r) => `?${keyedHash(a.session.indexKey, 'refused', r.l.ref.entry).toString('hex')}`);
  if (guessed.length > 0) {
    const { agent } = a.view;
    const rate = chargeRefused(agent.rate, agent.limits, [...new Set(guessed)], a.ctx.now());
    a.tx.putAgent({ ...agent, rate });
  }
  auditRefused(a, 'denied', refused);
  const problems = refused
    .flatMap(({ l, code }) =>
      (q.positions.get(keyOf(l.ref)) ?? []).map((index) => ({ index, code })),
    )
    .sort((x, y) => x.index - y.index);
  const first = problems[0]?.code ?? 'VLT-2041';
  const message =
    q.refs.length === 1
      ? first === 'VLT-2044'
        ? `Field not found: ${JSON.stringify(q.refs[0]?.field)}.`
        : undefined
      : `${problems.length} of ${q.refs.length} references cannot be resolved; nothing was released.`;
  return { ok: false, err: new VaultError(first, message, { problems }) };
}

/**
 * Charge: the entries to release, against the rate windows (policy.ts
 * decideRead). A violation is recorded and refuses the request; the second
 * locks the agent.
 */
function charge(a: Access, looked: readonly Looked[], targets: readonly Target[]): Refusal | null {
  const { agent } = a.view;
  const ids = [...new Set(targets.map((t) => t.entry.id))];
  const d = decideRead(agent.rate, agent.limits, ids, a.ctx.now());
  if (d.kind === 'locked') return refuseAll(a, looked, 'locked', 'VLT-2043');
  a.tx.putAgent({ ...agent, rate: d.state });
  if (d.kind === 'lockdown') {
    return refuseAll(
      a,
      looked,
      'locked',
      'VLT-2043',
      'Second rate-limit violation: agent locked; the owner must unlock it with the hardware key.',
    );
  }
  if (d.kind === 'limited') return refuseAll(a, looked, 'limited', 'VLT-2042', retryText(d));
  return null;
}

/**
 * Audit the release: one record per credential released (an entry: DESIGN
 * section 6), naming its fields, as the limits charged it.
 */
function auditRelease(a: Access, looked: readonly Looked[]): void {
  const action =
    a.purpose.kind === 'fill' ? 'fill' : a.view.agent.kind === 'ai' ? 'ai_read' : 'read';
  const byEntry = new Map<string, Looked[]>();
  for (const l of looked) {
    const group = byEntry.get(l.entryId ?? '');
    if (group === undefined) byEntry.set(l.entryId ?? '', [l]);
    else group.push(l);
  }
  for (const [first, ...more] of byEntry.values()) {
    if (first === undefined) continue;
    const fields = [first, ...more].map((l) => l.ref.field).join(', ');
    audit(a, action, 'ok', { ...first, ref: { ...first.ref, field: fields } });
  }
}

/**
 * Look up, check, charge and audit, in the one write transaction: a refusal
 * at any step is audited (and charged, where the limits say so) and commits
 * with it; the request goes on to decrypt only when every step passed.
 */
function decide(a: Access, q: Asked): Decided {
  const looked = lookUp(a, q.distinct);
  const bar = barred(a, looked);
  if (bar !== null) return bar;
  const { targets, refused } = checkRefs(a, looked);
  if (refused.length > 0) return refuseRefs(a, q, refused);
  const limited = charge(a, looked, targets);
  if (limited !== null) return limited;
  auditRelease(a, looked);
  return { ok: true, targets, header: a.header };
}

/**
 * Decrypt, after the audit record is committed: every target's value (for
 * `totp`, the current code), or none, the ones opened wiped, on any failure.
 * @throws VaultError VLT-3003
 */
function decrypt(
  ctx: HostContext,
  header: VaultHeader,
  targets: readonly Target[],
  purpose: Purpose,
): Map<string, Secret> {
  const values = new Map<string, Secret>();
  try {
    for (const t of targets) {
      const value = open(
        t.dataKey,
        t.record.value,
        slots.field(header.vaultId, t.entry.id, t.field, t.record.version, t.record.gen),
      );
      if (!value) throw new VaultError('VLT-3003');
      values.set(t.key, totpOr(purpose, value, ctx.now()));
    }
    return values;
  } catch (err) {
    for (const v of values.values()) v.wipe();
    throw err;
  }
}

/**
 * Releases the fields `refs` name, all of them or none: for `get` and `totp`
 * one reference, for a render or a proxy fill all distinct references of the
 * request at once, charged to the limits together. Values come back in the
 * order of `refs` (duplicates resolved once). The order of every access
 * (DESIGN section 4): look up, check, charge, audit (one write transaction),
 * then decrypt and release.
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
  const q = asked(refs);
  const actor = agentActor(session.agent.name);
  const host = purpose.kind === 'fill' ? purpose.host : null;
  // Grouped with the other requests of this moment: one durable flush for all.
  const decided = await ctx.commitGrouped(
    (tx) =>
      decide(
        {
          tx,
          ctx,
          header: ctx.header(tx),
          session,
          view: view(tx, ctx, session),
          actor,
          source,
          purpose,
          host,
        },
        q,
      ),
    // At most one record per distinct reference, AUDITED_REFUSALS + 1 when refused.
    q.distinct.length * RECORD_BYTES,
  );
  if (!decided.ok) throw decided.err;
  const values = decrypt(ctx, decided.header, decided.targets, purpose);
  return refs.map((r) => values.get(keyOf(r)) as Secret);
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
        accessEvent(ctx, 'locked', 'VLT-2043', agentActor(s.agent.name), source),
        new VaultError('VLT-2043'),
      );
    }
    return { agent: s.agent.name };
  } finally {
    endSession(s);
  }
}
