/**
 * OAuth2 refresh in the host (issue 40). An entry holding the fields
 * `client_id`, `refresh_token` and `token_url` (and, for a confidential
 * client, `client_secret`) is an OAuth entry: `vault://<entry>/access_token`
 * (the proxy's fill, or `get --field access_token`) is a current access token
 * the host obtains from the token endpoint (RFC 6749 section 6: an HTTPS POST,
 * grant_type=refresh_token, the client's credentials in the body) and keeps
 * until shortly before it expires. `refresh_token` and `client_secret` never
 * leave the host: a reference to either is refused (VLT-2064, entry-check.ts).
 *
 * One refresh is in flight per entry: fills that find none current wait on
 * it. A refresh token the endpoint rotates is written back at once, sealed
 * under the entry's data key as `entry set` would (same key, the field's next
 * version), unless the owner changed the entry meanwhile; the write is
 * audited (`oauth_rotate`). A refresh that fails (an HTTP error, an answer
 * that is not a token, no answer within the deadline) refuses the fill with
 * VLT-2063 and is audited; the message names the entry and what went wrong,
 * never a byte of what the endpoint sent.
 *
 * The access path (access.ts) has checked, charged and audited the fill
 * before any of this runs, and holds the entry's data key (from the caller's
 * grant) for the length of the request.
 */
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';
import { agentActor } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { open, seal } from '../../crypto/aead.js';
import { Secret } from '../../crypto/secret.js';
import { RECORD_BYTES } from '../../store/engine.js';
import { accessEvent } from '../audit/event.js';
import { appendAudit } from '../audit/log.js';
import { fieldHash, openMeta, sealMeta } from '../keys/grants.js';
import { slots } from '../keys/slots.js';
export const ACCESS_TOKEN = 'access_token';
/** The fields an OAuth entry keeps in the host. */
const HELD = ['refresh_token', 'client_secret'];
/** The fields a refresh reads. */
export const OAUTH_FIELDS = ['client_id', 'client_secret', 'refresh_token', 'token_url'];
/** Refreshed this long before the endpoint says the token expires. */
const MARGIN_MS = 60_000;
/** Kept this long when the endpoint does not say (expires_in is optional). */
const UNSAID_MS = 300_000;
const MAX_REPLY = 64 * 1024;
const MAX_TOKEN = 8 * 1024;
/** Whether an entry's meta makes it an OAuth entry. */
export function isOAuth(meta) {
    return (meta.fields.includes('client_id') &&
        meta.fields.includes('refresh_token') &&
        meta.fields.includes('token_url'));
}
/**
 * What a reference to `field` of an entry is: `held` (never leaves the host),
 * `access` (the access token the host obtains), or null (an ordinary field;
 * also `access_token` of an entry that stores one itself).
 */
export function oauthRole(meta, field) {
    if (!isOAuth(meta))
        return null;
    if (HELD.includes(field))
        return 'held';
    return field === ACCESS_TOKEN && !meta.fields.includes(ACCESS_TOKEN) ? 'access' : null;
}
const held = new Map();
const inFlight = new Map();
const stateOf = (entry, r) => [entry.gen, ...OAUTH_FIELDS.map((f) => r[f]?.version ?? 0)].join(':');
/**
 * The current access token of an OAuth entry: the one held while it is good
 * for MARGIN_MS more, else a refresh (one at a time per entry).
 * @throws VaultError VLT-2063 (audited), VLT-3003, VLT-3004.
 */
export async function accessToken(ctx, header, t, who) {
    const state = stateOf(t.entry, t.records);
    for (let tries = 0; tries < 2; tries++) {
        const h = held.get(t.entry.id);
        if (h !== undefined && h.states.includes(state) && ctx.now() < h.expiresAt - MARGIN_MS)
            return new Secret(Buffer.from(h.token));
        const running = inFlight.get(t.entry.id);
        if (running === undefined)
            break;
        await running.catch(() => undefined);
    }
    let run = inFlight.get(t.entry.id);
    if (run === undefined) {
        run = refresh(ctx, header, t, who, state).finally(() => inFlight.delete(t.entry.id));
        inFlight.set(t.entry.id, run);
    }
    const h = await run;
    return new Secret(Buffer.from(h.token));
}
/** Opens one of the entry's OAuth fields, or null when the entry has none of it. */
function field(header, t, f) {
    const r = t.records[f];
    if (r === undefined)
        return null;
    const v = open(t.dataKey, r.value, slots.field(header.vaultId, t.entry.id, f, r.version, r.gen));
    if (v === null)
        throw new VaultError('VLT-3003');
    return v;
}
/** A refresh, its rotated refresh token stored, its token held; a failure audited. */
async function refresh(ctx, header, t, who, state) {
    const opened = OAUTH_FIELDS.map((f) => [f, field(header, t, f)]);
    const get = (f) => opened.find(([n]) => n === f)?.[1] ?? null;
    try {
        const url = get('token_url').toString('utf8').trim();
        const form = new URLSearchParams({ grant_type: 'refresh_token' });
        form.set('refresh_token', get('refresh_token').toString('utf8'));
        form.set('client_id', get('client_id').toString('utf8'));
        const secret = get('client_secret');
        if (secret !== null)
            form.set('client_secret', secret.toString('utf8'));
        let answer;
        try {
            answer = await post(url, form.toString());
        }
        catch (err) {
            const why = err instanceof RefreshFailure ? err.message : 'the request failed';
            failed(ctx, header, t, who);
            throw new VaultError('VLT-2063', `The OAuth token endpoint of ${JSON.stringify(t.name)} gave no access token (${why}); nothing was sent.`);
        }
        const now = ctx.now();
        let records = t.records;
        if (answer.refreshToken !== null)
            records = keep(ctx, header, t, who, answer.refreshToken);
        const h = {
            token: Buffer.from(answer.accessToken, 'utf8'),
            expiresAt: now + (answer.expiresInMs ?? UNSAID_MS),
            // Rotated: also the state the next fill will read, so it finds this token current.
            states: records === t.records ? [state] : [state, stateOf(t.entry, records)],
        };
        const old = held.get(t.entry.id);
        held.set(t.entry.id, h);
        old?.token.fill(0);
        return h;
    }
    finally {
        for (const [, v] of opened)
            v?.fill(0);
    }
}
/** Why a refresh gave no token, in words that hold nothing the endpoint sent. */
class RefreshFailure extends Error {
}
/** Extra CA certificates the owner trusts for token endpoints (tests: a local CA), with the system's. */
function trusted() {
    const extra = process.env.VAULT_OAUTH_CA_FILE;
    const own = extra === undefined || extra === '' ? [] : [readFileSync(extra, 'utf8')];
    return [...getCACertificates('system'), ...getCACertificates('bundled'), ...own];
}
/** The deadline of one refresh (VAULT_OAUTH_TIMEOUT_MS, default 10 s). */
function deadline() {
    const n = Number(process.env.VAULT_OAUTH_TIMEOUT_MS ?? '');
    return Number.isInteger(n) && n > 0 ? n : 10_000;
}
/** The token endpoint's answer to one refresh request. @throws RefreshFailure */
function post(url, body) {
    let u;
    try {
        u = new URL(url);
    }
    catch {
        return Promise.reject(new RefreshFailure('token_url is not a URL'));
    }
    if (u.protocol !== 'https:')
        return Promise.reject(new RefreshFailure('token_url is not https'));
    return new Promise((resolve, reject) => {
        const req = httpsRequest(u, {
            method: 'POST',
            ca: trusted(),
            headers: {
                'content-type': 'application/x-www-form-urlencoded',
                accept: 'application/json',
                'content-length': Buffer.byteLength(body),
            },
            timeout: deadline(),
        }, (res) => {
            const chunks = [];
            let n = 0;
            res.on('data', (c) => {
                n += c.length;
                if (n > MAX_REPLY)
                    req.destroy(new RefreshFailure('an answer over 64 KiB'));
                else
                    chunks.push(c);
            });
            res.on('end', () => {
                if (res.statusCode !== 200)
                    return reject(new RefreshFailure(`HTTP ${res.statusCode ?? 'status unknown'}`));
                try {
                    resolve(parseAnswer(Buffer.concat(chunks).toString('utf8')));
                }
                catch (err) {
                    reject(err);
                }
            });
            res.on('error', () => reject(new RefreshFailure('the answer broke off')));
        });
        const timer = setTimeout(() => req.destroy(new RefreshFailure('no answer in time')), deadline());
        req.on('timeout', () => req.destroy(new RefreshFailure('no answer in time')));
        req.on('error', (err) => reject(err instanceof RefreshFailure ? err : new RefreshFailure('unreachable or not trusted')));
        req.on('close', () => clearTimeout(timer));
        req.end(body);
    });
}
/** A token response (RFC 6749 5.1) read strictly. @throws RefreshFailure */
export function parseAnswer(text) {
    let j;
    try {
        j = JSON.parse(text);
    }
    catch {
        throw new RefreshFailure('an answer that is not JSON');
    }
    if (typeof j !== 'object' || j === null)
        throw new RefreshFailure('an answer that is not JSON');
    const o = j;
    const token = o.access_token;
    const printable = (s) => typeof s === 'string' && s.length > 0 && s.length <= MAX_TOKEN && /^[\x21-\x7e]+$/.test(s);
    if (!printable(token))
        throw new RefreshFailure('no usable access_token in the answer');
    const type = o.token_type;
    if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
        throw new RefreshFailure('a token type other than bearer');
    const rotated = o.refresh_token;
    if (rotated !== undefined && !printable(rotated))
        throw new RefreshFailure('an unusable refresh_token in the answer');
    const exp = o.expires_in;
    const expiresInMs = typeof exp === 'number' && Number.isFinite(exp) && exp > 0
        ? Math.min(exp, 86_400) * 1000
        : null;
    return { accessToken: token, refreshToken: rotated ?? null, expiresInMs };
}
/**
 * Stores a rotated refresh token: the field's next version under the same
 * data key, the meta's version with it, and an `oauth_rotate` record, unless
 * the owner set or rotated the entry since the check read it (that write
 * stands; this one is dropped). Returns the records the next fill will read.
 */
function keep(ctx, header, t, who, rotated) {
    const used = t.records.refresh_token;
    return ctx.commit((tx) => {
        const e = tx.entry(t.entry.id);
        if (e === null || e.gen !== t.entry.gen)
            return t.records;
        const meta = openMeta(header, t.dataKey, e);
        if (meta === null || (meta.versions.refresh_token ?? 0) !== used.version)
            return t.records;
        const version = used.version + 1;
        const now = ctx.now();
        const record = {
            version,
            gen: e.gen,
            value: seal(t.dataKey, Buffer.from(rotated, 'utf8'), slots.field(header.vaultId, e.id, 'refresh_token', version, e.gen)),
            updated: now,
        };
        tx.putField(e.id, fieldHash(t.dataKey, e.id, 'refresh_token'), record);
        meta.versions.refresh_token = version;
        tx.putEntry({ ...e, meta: sealMeta(header, t.dataKey, e.id, e.gen, meta), updated: now });
        audit(ctx, tx, header, t, who, 'oauth_rotate', 'ok', 'refresh_token');
        return { ...t.records, refresh_token: record };
    }, 3 * RECORD_BYTES);
}
/** A refresh that failed, audited against the agent whose fill asked for it. */
function failed(ctx, header, t, who) {
    ctx.commit((tx) => audit(ctx, tx, header, t, who, 'denied', 'VLT-2063', ACCESS_TOKEN), RECORD_BYTES);
}
function audit(ctx, tx, header, t, who, action, outcome, fieldName) {
    appendAudit(tx, header, accessEvent(ctx, action, outcome, agentActor(who.agent), who.source, {
        entryId: t.entry.id,
        entry: t.name,
        field: fieldName,
        host: who.host,
    }));
}
/** The records a refresh reads, from the check step's transaction (entry-check.ts). */
export function oauthRecords(tx, entry, key) {
    const out = {};
    for (const f of OAUTH_FIELDS) {
        const r = tx.field(entry.id, key(f));
        if (r !== null)
            out[f] = r;
    }
    return out;
}
/**
 * The access tokens of a release's OAuth targets (access.ts: `key` is the
 * reference's JSON [entry, field]), into `values`; on a
 * failure, every value already opened is wiped.
 */
export async function accessTokens(ctx, header, targets, values, who) {
    try {
        for (const t of targets) {
            if (t.oauth === undefined)
                continue;
            const o = {
                entry: t.entry,
                name: JSON.parse(t.key)[0],
                records: t.oauth,
                dataKey: t.dataKey,
            };
            values.set(t.key, await accessToken(ctx, header, o, who));
        }
    }
    catch (err) {
        for (const v of values.values())
            v.wipe();
        throw err;
    }
}
