/**
 * A local stand-in for S3 and STS (HTTPS, under a test CA) that verifies
 * every request's AWS SigV4 signature with the real keys it was given and
 * answers 403 otherwise, recording each verdict. Its verifier is written
 * here from the SigV4 specification with node:crypto alone: it shares no code
 * with the proxy or the host (which sign with @smithy/signature-v4), so a
 * signing mistake of ours cannot cancel itself out.
 *
 * Canonical forms as AWS documents them: S3 signs the path as sent, other
 * services the path percent-encoded once more; the query decoded and
 * re-encoded (RFC 3986), sorted; the signed headers' values trimmed with
 * inner runs of spaces collapsed, repeated ones joined by commas; the payload
 * hash from x-amz-content-sha256 when sent (whose value must match the body
 * when it is a hash), else the body's own.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Upstream, type TestCa } from './proxy.js';

/** A key pair the stand-in accepts, with the session token it then requires. */
export interface AwsKey {
  readonly id: string;
  readonly secret: string;
  readonly sessionToken?: string;
}

/** One request's verdict. */
export interface Verdict {
  readonly method: string;
  readonly url: string;
  /** The access key id the Authorization named, or null. */
  readonly keyId: string | null;
  readonly ok: boolean;
  readonly why: string;
}

const sha256 = (d: string | Buffer) => createHash('sha256').update(d).digest('hex');
const hmac = (k: Buffer | string, d: string) => createHmac('sha256', k).update(d).digest();
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

function canonicalQuery(query: string): string {
  if (query === '') return '';
  const pairs = query.split('&').map((p) => {
    const eq = p.indexOf('=');
    const k = decodeURIComponent(eq < 0 ? p : p.slice(0, eq));
    const v = eq < 0 ? '' : decodeURIComponent(p.slice(eq + 1));
    return [rfc3986(k), rfc3986(v)] as const;
  });
  pairs.sort((a, b) =>
    a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0,
  );
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

const canonicalPath = (path: string, service: string) =>
  service === 's3' ? path : path.split('/').map(rfc3986).join('/');

/**
 * Verifies `req`'s SigV4 Authorization against `keys`; the reason when it fails.
 */
export function verifySigV4(
  req: IncomingMessage,
  body: Buffer,
  keys: readonly AwsKey[],
): { keyId: string | null; why: string | null } {
  const auth = req.headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (m === null) return { keyId: null, why: 'no SigV4 Authorization' };
  const [, keyId, day, region, service, signedList, signature] = m as unknown as string[];
  const key = keys.find((k) => k.id === keyId);
  if (key === undefined) return { keyId: keyId ?? null, why: 'InvalidAccessKeyId' };
  const date = String(req.headers['x-amz-date'] ?? '');
  if (!date.startsWith(day as string)) return { keyId: keyId as string, why: 'date not of scope' };
  const token = req.headers['x-amz-security-token'];
  if ((key.sessionToken ?? undefined) !== token)
    return { keyId: keyId as string, why: 'InvalidToken' };
  const signed = (signedList as string).split(';');
  if (key.sessionToken !== undefined && !signed.includes('x-amz-security-token'))
    return { keyId: keyId as string, why: 'session token not signed' };
  const raw = req.rawHeaders;
  const headerLines = signed.map((name) => {
    const values: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2)
      if ((raw[i] as string).toLowerCase() === name)
        values.push((raw[i + 1] as string).trim().replace(/ +/g, ' '));
    return `${name}:${values.join(',')}\n`;
  });
  const declared = req.headers['x-amz-content-sha256'];
  const bodyHash = sha256(body);
  if (typeof declared === 'string' && /^[0-9a-f]{64}$/.test(declared) && declared !== bodyHash)
    return { keyId: keyId as string, why: 'XAmzContentSHA256Mismatch' };
  if (typeof declared === 'string' && declared.startsWith('STREAMING-'))
    return { keyId: keyId as string, why: 'streaming not served here' };
  const payload = typeof declared === 'string' ? declared : bodyHash;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const canonical = [
    req.method,
    canonicalPath(q < 0 ? url : url.slice(0, q), service as string),
    canonicalQuery(q < 0 ? '' : url.slice(q + 1)),
    headerLines.join(''),
    signed.join(';'),
    payload,
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${date}\n${scope}\n${sha256(canonical)}`;
  let k = hmac(`AWS4${key.secret}`, day as string);
  for (const part of [region, service, 'aws4_request']) k = hmac(k, part as string);
  const want = createHmac('sha256', k).update(toSign).digest();
  const got = Buffer.from(signature as string, 'hex');
  return {
    keyId: keyId as string,
    why: timingSafeEqual(want, got) ? null : 'SignatureDoesNotMatch',
  };
}

const xml = (res: ServerResponse, status: number, text: string) => {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${text}`);
};

/**
 * The stand-in: an Upstream whose every request is verified first. S3:
 * `GET /` lists buckets, `PUT /<bucket>/<key>` stores an object (kept in
 * `objects`). STS: `POST /` with Action=GetCallerIdentity.
 */
export class AwsStandIn {
  readonly verdicts: Verdict[] = [];
  readonly objects = new Map<string, Buffer>();

  private constructor(
    readonly up: Upstream,
    readonly keys: AwsKey[],
  ) {}

  get port(): number {
    return this.up.port;
  }

  static async start(ca: TestCa, keys: AwsKey[]): Promise<AwsStandIn> {
    const up = await Upstream.start(ca);
    const s = new AwsStandIn(up, keys);
    up.routes.set('/', (req, res, body) => s.serve(req, res, body));
    return s;
  }

  private serve(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const { keyId, why } = verifySigV4(req, body, this.keys);
    this.verdicts.push({
      method: req.method ?? '',
      url: req.url ?? '',
      keyId,
      ok: why === null,
      why: why ?? 'ok',
    });
    if (why !== null) {
      return xml(
        res,
        403,
        `<Error><Code>${why.split(' ')[0]}</Code><Message>${why}</Message></Error>`,
      );
    }
    const path = (req.url ?? '/').split('?')[0] as string;
    if (req.method === 'POST' && body.toString().includes('Action=GetCallerIdentity')) {
      return xml(
        res,
        200,
        '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>' +
          `<Arn>arn:aws:sts::123456789012:assumed-role/standin/${keyId}</Arn><UserId>AROASTANDIN:standin</UserId><Account>123456789012</Account>` +
          '</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>',
      );
    }
    if (req.method === 'GET' && path === '/') {
      return xml(
        res,
        200,
        '<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>standin</ID></Owner>' +
          '<Buckets><Bucket><Name>standin-bucket</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate></Bucket></Buckets></ListAllMyBucketsResult>',
      );
    }
    if (req.method === 'PUT' && path.split('/').length >= 3) {
      this.objects.set(decodeURIComponent(path), body);
      res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
      return void res.end();
    }
    xml(res, 400, '<Error><Code>NotImplemented</Code></Error>');
  }

  close(): Promise<void> {
    return this.up.close();
  }
}
