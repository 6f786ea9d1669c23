/**
 * The shapes a released value takes in a transcript: as written, base64 (at
 * each of its three alignments, standard and URL-safe alphabets), URL-encoded,
 * and as a JSON string's contents (escaped once, or twice for JSON inside a
 * JSON string, as tool results in agents' JSONL often are). The sweep looks
 * for all of them at once (multi-match.ts). Pure.
 */

export type LeakForm = 'plain' | 'base64' | 'base64url' | 'url' | 'json' | 'json2';

export interface LeakPattern {
  readonly form: LeakForm;
  readonly bytes: Buffer;
}

/**
 * Values shorter than this are not swept: a short value is found everywhere by
 * chance (a 4-digit PIN), and its encodings' stable parts shrink to nothing.
 */
export const MIN_SWEEP_BYTES = 8;

/**
 * The distinct forms of `value`, each at least MIN_SWEEP_BYTES long (a form
 * equal to another is listed once, under the first name). For base64 only the
 * characters that depend on the value alone are kept: the first and last
 * characters of an encoded value also carry bits of its neighbours.
 */
export function leakForms(value: Uint8Array): LeakPattern[] {
  const v = Buffer.from(value);
  const out: LeakPattern[] = [];
  const seen = new Set<string>();
  const add = (form: LeakForm, bytes: Buffer) => {
    if (bytes.length < MIN_SWEEP_BYTES) return;
    const key = bytes.toString('latin1');
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ form, bytes });
  };
  add('plain', v);
  for (let align = 0; align < 3; align++) {
    const core = base64Core(v, align);
    add('base64', Buffer.from(core, 'latin1'));
    add('base64url', Buffer.from(core.replace(/\+/g, '-').replace(/\//g, '_'), 'latin1'));
  }
  add('url', percentEncode(v, URI_COMPONENT_SAFE, 'upper'));
  add('url', percentEncode(v, URI_COMPONENT_SAFE, 'lower'));
  add('url', percentEncode(v, UNRESERVED, 'upper'));
  add('url', formEncode(v));
  const text = utf8(v);
  if (text !== null) {
    for (const once of jsonEscapes(text)) {
      add('json', Buffer.from(once, 'utf8'));
      add('json2', Buffer.from(JSON.stringify(once).slice(1, -1), 'utf8'));
    }
  }
  return out;
}

/**
 * The base64 characters that encode `value` alone when it starts `align` bytes
 * into a 3-byte group: character i covers bits [6i, 6i + 6) of the stream, and
 * the value's bits are [8 align, 8 (align + n)).
 */
export function base64Core(value: Buffer, align: number): string {
  const enc = Buffer.concat([Buffer.alloc(align), value])
    .toString('base64')
    .replace(/=+$/, '');
  const first = Math.ceil((8 * align) / 6);
  const last = Math.floor((8 * (align + value.length)) / 6);
  return enc.slice(first, Math.max(first, last));
}

/** encodeURIComponent's own unescaped set. */
const URI_COMPONENT_SAFE = /[A-Za-z0-9\-_.!~*'()]/;
/** RFC 3986's unreserved set. */
const UNRESERVED = /[A-Za-z0-9\-_.~]/;

function percentEncode(v: Buffer, safe: RegExp, hex: 'upper' | 'lower'): Buffer {
  let s = '';
  for (const b of v) {
    const c = String.fromCharCode(b);
    if (b < 0x80 && safe.test(c)) s += c;
    else {
      const h = b.toString(16).padStart(2, '0');
      s += '%' + (hex === 'upper' ? h.toUpperCase() : h);
    }
  }
  return Buffer.from(s, 'latin1');
}

/** application/x-www-form-urlencoded: a space is `+`. */
function formEncode(v: Buffer): Buffer {
  let s = '';
  for (const b of v) {
    const c = String.fromCharCode(b);
    if (b === 0x20) s += '+';
    else if (b < 0x80 && /[A-Za-z0-9*\-._]/.test(c)) s += c;
    else s += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return Buffer.from(s, 'latin1');
}

/** The value as text, or null when it is not valid UTF-8 (then it has no JSON form). */
function utf8(v: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(v);
  } catch {
    return null;
  }
}

/**
 * A string's contents as JSON writers put them: JSON.stringify's, with `/`
 * escaped (PHP, some loggers), and with everything past ASCII as \uXXXX
 * (Python's json.dumps by default).
 */
function jsonEscapes(text: string): string[] {
  const plain = JSON.stringify(text).slice(1, -1);
  const slash = plain.replace(/\//g, '\\/');
  const ascii = plain.replace(
    /[\u007f-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
  return [plain, slash, ascii];
}
