/**
 * Agent profiles for `vault-cli run` (docs/run.md): what a coding agent needs
 * to work in the sandbox and nothing more. The profiles are data
 * (shell/profiles.json, which the owner can read; a user file extends or
 * overrides it), and everything here is pure: parsing, choosing one, and
 * merging an agent's private copy of a state file back into the owner's.
 *
 * The invariant it guards: a profile never lets the agent write what the
 * owner's next session outside the sandbox executes. A state directory is
 * writable, but the files in it that name commands (hooks, MCP servers,
 * notify, custom commands) are bound read-only; a file that mixes state and
 * such settings (~/.claude.json) is given as a private copy, and on exit only
 * the keys that cannot execute anything come back.
 */
import { VaultError } from '../src/core/errors.js';
import builtin from './profiles.json' with { type: 'json' };

/** The model provider: where its API is, which variable carries its key, which header the proxy fills. */
export interface ModelProvider {
  readonly host: string;
  readonly variable: string;
  readonly header: string;
  readonly entry: string;
  readonly field: string;
}

/** A state file the agent gets as a copy; on exit the copy comes back except at `ownerKeeps`. */
export interface PrivateFile {
  readonly path: string;
  /** Key paths (dots; `*` for any key) where the owner's file wins: what could execute. */
  readonly ownerKeeps: readonly string[];
}

export interface Profile {
  readonly name: string;
  readonly summary: string;
  /** Command names (the basename of `run`'s command) that choose this profile. */
  readonly commands: readonly string[];
  /** State paths the agent may write: directories and files (`~/` is the home directory). */
  readonly write: readonly string[];
  /**
   * Read-only even inside `write`: files and directories (a trailing `/`)
   * whose contents run at the agent's next start.
   */
  readonly readOnly: readonly string[];
  readonly private: readonly PrivateFile[];
  /** Variables the agent needs set (never secrets: the data file is public). */
  readonly env: Readonly<Record<string, string>>;
  readonly model: ModelProvider | null;
}

export type Profiles = ReadonlyMap<string, Profile>;

const invalid = (where: string, what: string) =>
  new VaultError('VLT-1002', `${where}: ${what} (docs/run.md, "Agent profiles").`);

function strings(v: unknown, where: string, field: string): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))
    throw invalid(where, `"${field}" must be a list of strings`);
  return v as string[];
}

function record(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One profile from its JSON, each field of `base` kept where `v` does not give it. */
function profileFrom(name: string, v: unknown, base: Profile | undefined, where: string): Profile {
  if (!record(v)) throw invalid(where, `profile "${name}" must be an object`);
  const at = `${where}, profile "${name}"`;
  const has = (k: string) => Object.hasOwn(v, k);
  for (const k of Object.keys(v))
    if (!['summary', 'commands', 'write', 'readOnly', 'private', 'env', 'model'].includes(k))
      throw invalid(at, `unknown field "${k}"`);
  const env = has('env') ? v.env : (base?.env ?? {});
  if (!record(env) || !Object.values(env).every((s) => typeof s === 'string'))
    throw invalid(at, '"env" must map names to strings');
  const privates = has('private') ? v.private : (base?.private ?? []);
  if (!Array.isArray(privates)) throw invalid(at, '"private" must be a list');
  const model = has('model') ? v.model : (base?.model ?? null);
  if (model !== null) {
    const fields = ['host', 'variable', 'header', 'entry', 'field'];
    if (!record(model) || !fields.every((f) => typeof model[f] === 'string'))
      throw invalid(at, `"model" must be null or give ${fields.join(', ')}`);
  }
  const summary = has('summary') ? v.summary : (base?.summary ?? name);
  if (typeof summary !== 'string') throw invalid(at, '"summary" must be a string');
  return {
    name,
    summary,
    commands: has('commands') ? strings(v.commands, at, 'commands') : (base?.commands ?? []),
    write: has('write') ? strings(v.write, at, 'write') : (base?.write ?? []),
    readOnly: has('readOnly') ? strings(v.readOnly, at, 'readOnly') : (base?.readOnly ?? []),
    private: privates.map((p: unknown) => {
      if (!record(p) || typeof p.path !== 'string')
        throw invalid(at, '"private" entries need a "path"');
      return { path: p.path, ownerKeeps: strings(p.ownerKeeps ?? [], at, 'ownerKeeps') };
    }),
    env: env as Record<string, string>,
    model: model as ModelProvider | null,
  };
}

/**
 * The shipped profiles, extended or overridden by the user's file (its parsed
 * JSON, or null when there is none): a profile the user names replaces the
 * shipped one field by field.
 * @throws VaultError VLT-1002 when the user's file is not a map of profiles.
 */
export function loadProfiles(user: unknown, userFile = 'profiles.json'): Profiles {
  const out = new Map<string, Profile>();
  for (const [name, v] of Object.entries(builtin))
    out.set(name, profileFrom(name, v, undefined, 'shell/profiles.json'));
  if (user === null) return out;
  if (!record(user)) throw invalid(userFile, 'must hold an object of profiles');
  for (const [name, v] of Object.entries(user)) {
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(name)) throw invalid(userFile, `bad profile name "${name}"`);
    out.set(name, profileFrom(name, v, out.get(name), userFile));
  }
  return out;
}

/**
 * The profile for `run`: the one `--profile` names (`none` for none), else
 * the one whose commands include the command's name, else none.
 * @throws VaultError VLT-1002 for a `--profile` that names no profile.
 */
export function chooseProfile(
  profiles: Profiles,
  commandName: string,
  named: string | undefined,
): Profile | null {
  if (named === 'none') return null;
  if (named !== undefined) {
    const p = profiles.get(named);
    if (p === undefined)
      throw new VaultError(
        'VLT-1002',
        `No profile ${JSON.stringify(named)}: ${[...profiles.keys(), 'none'].join(', ')}.`,
      );
    return p;
  }
  for (const p of profiles.values()) if (p.commands.includes(commandName)) return p;
  return null;
}

/** `~/x` under `home`; other paths as they are. */
export function expandHome(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? `${home}/${p.slice(2)}` : p;
}

/** A read-only path as the profile names it: the path and whether it is a directory. */
export function readOnlyPath(p: string, home: string): { path: string; dir: boolean } {
  const dir = p.endsWith('/');
  return { path: expandHome(dir ? p.slice(0, -1) : p, home), dir };
}

/**
 * What a placeholder for a read-only path that does not exist yet holds: the
 * sandbox cannot bind over nothing (bubblewrap would create the mount point
 * in the owner's real directory, empty), so `run` creates one the agent
 * itself would read as "nothing configured", and removes it afterwards.
 */
export function placeholder(path: string): string {
  return path.endsWith('.json') ? '{}\n' : '';
}

type Json = unknown;

/**
 * The owner's file after a session: the agent's copy, except at each key path
 * of `ownerKeeps`, where the owner's current file wins (its value, or no key
 * when it has none). Neither input is changed.
 */
export function mergeBack(owner: Json, copy: Json, ownerKeeps: readonly string[]): Json {
  if (!record(copy)) return owner;
  const out: Record<string, unknown> = structuredClone(copy);
  const own = record(owner) ? owner : {};
  for (const path of ownerKeeps) keep(out, own, path.split('.'));
  return out;
}

/** Sets `out` at `path` to `owner`'s value there (deleting it when the owner has none). */
function keep(out: Record<string, unknown>, owner: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const keys = head === '*' ? [...new Set([...Object.keys(out), ...Object.keys(owner)])] : [head];
  for (const k of keys) {
    const o = Object.hasOwn(owner, k) ? owner[k] : undefined;
    if (rest.length === 0) {
      if (o === undefined) delete out[k];
      else out[k] = structuredClone(o);
      continue;
    }
    const inner = Object.hasOwn(out, k) ? out[k] : undefined;
    if (record(inner)) keep(inner, record(o) ? o : {}, rest);
    // A value that is no object where the owner's has one cannot hide a key below it:
    // the owner's whole value comes back.
    else if (record(o)) out[k] = structuredClone(o);
  }
}

export type Kind = 'dir' | 'file';

/** What `run` does for a profile, decided before anything is created. Paths are absolute. */
export interface StatePlan {
  /** Writable: existing paths, and directories `run` creates first (`create`). */
  readonly write: readonly { readonly path: string; readonly create: boolean }[];
  /** Read-only inside the writable ones: existing paths, and placeholders `run` creates and removes. */
  readonly readOnly: readonly {
    readonly path: string;
    readonly kind: Kind;
    readonly create: boolean;
  }[];
  /** Private copies: the owner's file (created as `{}` when absent) and the copy's place. */
  readonly private: readonly (PrivateFile & { readonly copy: string; readonly create: boolean })[];
}

function inside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

/**
 * What `run` must create and bind for `profile`, given what exists now. A
 * write path ending in `/` is created as a directory when absent; a file
 * that does not exist is left out. A read-only path gets a placeholder only
 * inside a writable path (elsewhere the agent cannot create it anyway).
 */
export function planState(
  profile: Profile | null,
  home: string,
  sessionDir: string,
  found: (p: string) => Kind | null,
): StatePlan {
  if (profile === null) return { write: [], readOnly: [], private: [] };
  const write = profile.write.flatMap((w) => {
    const { path, dir } = readOnlyPath(w, home);
    const k = found(path);
    if (k !== null) return [{ path, create: false }];
    return dir ? [{ path, create: true }] : [];
  });
  const readOnly = profile.readOnly.flatMap((r) => {
    const { path, dir } = readOnlyPath(r, home);
    const k = found(path);
    if (k !== null) return [{ path, kind: k, create: false }];
    if (!write.some((w) => inside(path, w.path))) return [];
    return [{ path, kind: (dir ? 'dir' : 'file') as Kind, create: true }];
  });
  const privates = profile.private.map((f, i) => {
    const path = expandHome(f.path, home);
    return {
      ...f,
      path,
      copy: `${sessionDir}/private-${i}.json`,
      create: found(path) === null,
    };
  });
  return { write, readOnly, private: privates };
}
