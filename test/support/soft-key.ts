/**
 * A software security key for unit tests: a P-256 key pair that produces
 * WebAuthn registrations (attestation format `none`) and assertions exactly as
 * a browser would post them, so the real verifier can be fed valid input and
 * mutations of it. The CBOR is written by hand: it is three small maps.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

const sha256 = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();

function cborBytes(b: Buffer): Buffer {
  if (b.length < 24) return Buffer.concat([Buffer.from([0x40 + b.length]), b]);
  if (b.length < 256) return Buffer.concat([Buffer.from([0x58, b.length]), b]);
  return Buffer.concat([Buffer.from([0x59, b.length >> 8, b.length & 0xff]), b]);
}
function cborText(s: string): Buffer {
  return Buffer.concat([Buffer.from([0x60 + s.length]), Buffer.from(s)]);
}

export const UP = 0x01;
export const AT = 0x40;

export class SoftKey {
  readonly id = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly x: Buffer;
  private readonly y: Buffer;
  counter = 0;

  constructor(readonly origin = 'http://localhost:4242') {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    const jwk = pair.publicKey.export({ format: 'jwk' });
    this.x = Buffer.from(jwk.x ?? '', 'base64url');
    this.y = Buffer.from(jwk.y ?? '', 'base64url');
  }

  private cose(): Buffer {
    // {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}
    return Buffer.concat([
      Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21]),
      cborBytes(this.x),
      Buffer.from([0x22]),
      cborBytes(this.y),
    ]);
  }

  authData(flags: number, counter: number, attested: boolean): Buffer {
    const head = Buffer.alloc(37);
    sha256('localhost').copy(head, 0);
    head[32] = flags;
    head.writeUInt32BE(counter, 33);
    if (!attested) return head;
    const idLen = Buffer.from([this.id.length >> 8, this.id.length & 0xff]);
    return Buffer.concat([head, Buffer.alloc(16), idLen, this.id, this.cose()]);
  }

  clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** What the page posts after `navigator.credentials.create()`. */
  registration(challenge: string) {
    const authData = this.authData(UP | AT, this.counter, true);
    const attestationObject = Buffer.concat([
      Buffer.from([0xa3]),
      cborText('fmt'),
      cborText('none'),
      cborText('attStmt'),
      Buffer.from([0xa0]),
      cborText('authData'),
      cborBytes(authData),
    ]);
    return {
      id: this.id.toString('base64url'),
      rawId: this.id.toString('base64url'),
      type: 'public-key',
      response: {
        clientDataJSON: this.clientData('webauthn.create', challenge).toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
      },
    };
  }

  /** The raw parts of an assertion, signed; `flags` UP by default, counter one up. */
  assertionParts(challenge: string, opts: { flags?: number; counter?: number } = {}) {
    this.counter = opts.counter ?? this.counter + 1;
    const authData = this.authData(opts.flags ?? UP, this.counter, false);
    const clientDataJSON = this.clientData('webauthn.get', challenge);
    const signature = this.sign(authData, clientDataJSON);
    return { authData, clientDataJSON, signature };
  }

  sign(authData: Buffer, clientDataJSON: Buffer): Buffer {
    return sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
  }

  /** What the page posts after `navigator.credentials.get()`. */
  static assertionJSON(
    id: Buffer,
    parts: { authData: Buffer; clientDataJSON: Buffer; signature: Buffer },
  ) {
    return {
      id: id.toString('base64url'),
      rawId: id.toString('base64url'),
      type: 'public-key',
      response: {
        clientDataJSON: parts.clientDataJSON.toString('base64url'),
        authenticatorData: parts.authData.toString('base64url'),
        signature: parts.signature.toString('base64url'),
      },
    };
  }
}
