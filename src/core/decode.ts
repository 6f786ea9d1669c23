/**
 * Decoders for request bodies: each takes any JSON value and returns the typed
 * value or throws VaultError VLT-1001 (`Bad request: ...`), never anything
 * else. A decoder also carries, as a type only, what a caller may send
 * (`Wire`), so the client's request types come from the same definition the
 * host checks against (protocol.ts). Hand-written rather than valibot: the
 * client of `get` loads none of this, and the host needs a dozen shapes.
 * Pure: no I/O.
 */
import { VaultError } from './errors.js';

export interface Decoder<Out, Wire = Out> {
  /** @throws VaultError VLT-1001 (or the code a refinement names) */
  (value: unknown, key: string): Out;
  /** Type only: what a well-behaved client sends for this field. */
  readonly wire?: Wire;
}

export type Out<D> = D extends Decoder<infer O, unknown> ? O : never;
export type Wire<D> = D extends Decoder<unknown, infer W> ? W : never;

export function bad(what: string): VaultError {
  return new VaultError('VLT-1001', `Bad request: ${what}.`);
}

export const str: Decoder<string> = (v, key) => {
  if (typeof v !== 'string') throw bad(`${key} must be a string`);
  return v;
};

export function optional<O, W>(d: Decoder<O, W>): Decoder<O | undefined, W | undefined> {
  return (v, key) => (v === undefined ? undefined : d(v, key));
}

/** A list of strings; absent (or null) is the empty list. */
export const strList: Decoder<string[], string[] | undefined> = (v, key) => {
  const list = v ?? [];
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
    throw bad(`${key} must be a list`);
  }
  return list as string[];
};

/** A positive whole number, or absent. */
export const optCount: Decoder<number | undefined> = (v, key) => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw bad(`${key} must be a count`);
  return v;
};

/** A whole number (any sign), or absent. */
export const optWhole: Decoder<number | undefined> = (v, key) => {
  if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v))) {
    throw bad(`${key} must be a whole number`);
  }
  return v;
};

/** A finite number; the message names the key only. */
export const finite: Decoder<number> = (v, key) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(key);
  return v;
};

/** True only when the client sent `true`; anything else is false. */
export const flag: Decoder<boolean, boolean | undefined> = (v) => v === true;

/** Passed on as is, for the callee to check (a WebAuthn result). */
export const anything: Decoder<unknown> = (v) => v;

/** One of a few strings: not a string says so, another string names the key only. */
export function oneOf<const T extends string>(values: readonly T[]): Decoder<T> {
  return (v, key) => {
    const s = str(v, key);
    if (!(values as readonly string[]).includes(s)) throw bad(key);
    return s as T;
  };
}

export type Fields = Readonly<Record<string, Decoder<unknown, unknown>>>;

/** Keys a client may leave out: those whose wire type admits undefined. */
type OptionalKeys<F extends Fields> = {
  [K in keyof F]: undefined extends Wire<F[K]> ? K : never;
}[keyof F];
type Flat<T> = { [K in keyof T]: T[K] };

export type ObjectWire<F extends Fields> = Flat<
  { [K in Exclude<keyof F, OptionalKeys<F>>]: Wire<F[K]> } & {
    [K in OptionalKeys<F>]?: Wire<F[K]>;
  }
>;
export type ObjectOut<F extends Fields> = { [K in keyof F]: Out<F[K]> };

function ownField(o: object, key: string): unknown {
  return Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;
}

/**
 * An object of `fields`, decoded in their order (the first bad one is
 * reported); keys not named are ignored. `loose`: a value that is not an
 * object reads as `{}` (a nested part whose fields all have defaults).
 */
export function object<F extends Fields>(
  fields: F,
  opts: { loose?: boolean } = {},
): Decoder<ObjectOut<F>, ObjectWire<F>> & { readonly fields: F } {
  const d = (v: unknown, key: string): ObjectOut<F> => {
    const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
    if (!isObject && !opts.loose) throw bad(key);
    const o = isObject ? v : {};
    const out: Record<string, unknown> = {};
    for (const [k, field] of Object.entries(fields)) out[k] = field(ownField(o, k), k);
    return out as ObjectOut<F>;
  };
  return Object.assign(d, { fields });
}

/** A list of `item`, at most `max` long (`tooMany` says why, with its own code). */
export function list<O, W>(
  item: Decoder<O, W>,
  opts: { what: string; min: number; max: number; tooMany: (n: number) => VaultError },
): Decoder<O[], W[]> {
  return (v) => {
    if (!Array.isArray(v) || v.length < opts.min) throw bad(opts.what);
    if (v.length > opts.max) throw opts.tooMany(v.length);
    return v.map((x, i) => item(x, String(i)));
  };
}
