/**
 * The project controls below the tops of `run`'s writable roots
 * (docs/sandbox.md, "Nested repositories and directories"): a nested
 * repository's config and hooks, a nested `.envrc`, `.vscode/`, `.mcp.json`,
 * `.claude/settings.json`, ... that the owner's own tools would run later,
 * outside the sandbox.
 *
 * At the start (`projectStart`) the walk notes every control there is, by
 * device and inode, and names the directories whose controls the sandbox
 * keeps read-only. At the end (`projectCheck`), once the agent and its
 * processes are gone, a second walk finds each control the agent made or
 * changed, and makes it harmless by renaming it to `<name>.vault-held-<time>`,
 * a name no tool reads; the caller prints one line per item.
 *
 * "Made or changed" is decided by ctime, which the agent cannot set (it sets
 * mtime at will), and by identity: a control that was not there at the start
 * is new even when its own ctime is old, since renaming a directory into
 * place leaves the ctimes of what is inside it as they were. A repository's
 * configuration is judged by its keys (shell/git-config.ts) and its hooks by
 * name, so that a plain `git init` or `git clone` by the agent survives;
 * everything else the agent made among the controls is held.
 */
import {
  existsSync,
  openSync,
  readSync,
  closeSync,
  readdirSync,
  renameSync,
  statSync,
  type BigIntStats,
} from 'node:fs';
import { oneLine } from '../src/core/errors.js';
import { gitConfigKeys, unsafeGitKeys } from './git-config.js';
import {
  child,
  identity,
  KEPT_DEPTH,
  KEPT_DIRS,
  look,
  walkProject,
  WALK,
  type Found,
} from './project-scan.js';
import { PROJECT_CONTROLS } from './sandbox-policy.js';

/** What the start of a session noted, for its end. */
export interface ProjectStart {
  readonly roots: readonly string[];
  /** ctimes from here on are the session's (ns since the epoch). */
  readonly since: bigint;
  /** Every control, and part of a repository, there was: its identity, and its ctime then. */
  readonly seen: ReadonlyMap<string, bigint>;
  /** The newest ctime inside each control directory there was (absent: more than could be read). */
  readonly within: ReadonlyMap<string, bigint>;
  /** The identities of the directories the walk found controls in. */
  readonly dirs: ReadonlySet<string>;
  /** Directories below the roots whose controls the sandbox keeps read-only (shell/sandbox-policy.ts `nested`). */
  readonly nested: readonly string[];
  /** Whether the walk stopped at a bound: what is beyond it is neither kept nor known. */
  readonly bounded: boolean;
}

/**
 * Coarse file systems keep ctime in whole seconds (ext3) or two (FAT): a
 * change in the session's first moments must not read as older than it.
 */
const CLOCK_SLACK_NS = 2_000_000_000n;

/** The controls under the `.claude` directory (it is itself only their container). */
const CLAUDE = PROJECT_CONTROLS.filter((c) => c.startsWith('.claude/') && c !== '.claude/').map(
  (c) => c.slice('.claude/'.length).replace(/\/$/, ''),
);

/** The parts of a git directory that make git run something or read another file. */
const GIT_PARTS = ['config', 'config.worktree', 'commondir', 'hooks'];

/** A control as judged: a git directory, another directory, or anything else (a file, a link). */
type Item = { kind: 'gitdir' | 'dir' | 'file'; path: Buffer; st: BigIntStats };

/** The controls in a directory the walk found. */
function itemsOf(f: Found): Item[] {
  const items: Item[] = [];
  const add = (path: Buffer, container: 'git' | 'plain') => {
    const st = look(path);
    if (st === null) return;
    const kind = !st.isDirectory() ? 'file' : container === 'git' ? 'gitdir' : 'dir';
    items.push({ kind, path, st });
  };
  if (f.bare) add(f.dir, 'git');
  for (const name of f.names) {
    const path = child(f.dir, name);
    if (name === '.git') add(path, 'git');
    else if (name === '.claude' && look(path)?.isDirectory() === true)
      for (const c of CLAUDE) add(child(path, c), 'plain');
    else add(path, 'plain');
  }
  return items;
}

/** A git directory's parts that exist, and each hook. */
function gitParts(dir: Buffer): { name: string; path: Buffer; st: BigIntStats }[] {
  const parts = [];
  for (const name of GIT_PARTS) {
    const path = child(dir, name);
    const st = look(path);
    if (st === null) continue;
    parts.push({ name, path, st });
    if (name !== 'hooks' || !st.isDirectory()) continue;
    let hooks: Buffer[] = [];
    try {
      hooks = readdirSync(path, { encoding: 'buffer' });
    } catch {
      // Not ours to read: not git's either, when it runs as us.
    }
    for (const hook of hooks) {
      const hp = child(path, hook);
      const hs = look(hp);
      if (hs !== null) parts.push({ name: `hooks/${hook.toString('latin1')}`, path: hp, st: hs });
    }
  }
  return parts;
}

/** The paths the sandbox hides, or that the owner opened: not walked, not judged. */
function outside(paths: readonly string[]): (p: Buffer) => boolean {
  const bufs = paths.map((p) => Buffer.from(p));
  return (p) =>
    bufs.some(
      (b) =>
        p.equals(b) ||
        (p.length > b.length && p[b.length] === 0x2f && p.subarray(0, b.length).equals(b)),
    );
}

/**
 * What there is at the start of a session in `roots` (the working directory
 * first, then the --allow-write directories), besides the paths in `skip`.
 */
export function projectStart(
  roots: readonly string[],
  skip: readonly string[],
  now: number,
): ProjectStart {
  const since = BigInt(now) * 1_000_000n - CLOCK_SLACK_NS;
  const walk = walkProject(roots, WALK, outside(skip));
  const seen = new Map<string, bigint>();
  const within = new Map<string, bigint>();
  const dirs = new Set<string>();
  const nested: string[] = [];
  for (const f of walk.found) {
    const st = look(f.dir);
    if (st !== null) dirs.add(identity(st));
    for (const item of itemsOf(f)) {
      seen.set(identity(item.st), item.st.ctimeNs);
      const newest = item.kind === 'dir' ? newestWithin(item.path) : null;
      if (newest !== null) within.set(identity(item.st), newest);
      if (item.kind === 'gitdir')
        for (const p of gitParts(item.path)) seen.set(identity(p.st), p.st.ctimeNs);
    }
    const text = f.dir.toString('utf8');
    // A name that is not UTF-8 cannot be given to bubblewrap: the end check has it.
    if (f.depth >= 1 && f.depth <= KEPT_DEPTH && Buffer.from(text).equals(f.dir))
      if (f.names.length > 0 && nested.length < KEPT_DIRS) nested.push(text);
  }
  const cut = walk.found.filter((f) => f.depth >= 1 && f.depth <= KEPT_DEPTH && f.names.length > 0);
  return {
    roots,
    since,
    seen,
    within,
    dirs,
    nested,
    bounded: walk.bounded || cut.length > nested.length,
  };
}

/** One control made harmless: where it was, why, and its new name. */
export interface Held {
  readonly path: Buffer;
  readonly why: string;
  readonly to: Buffer;
}

/** Entries read at most under one control directory to see whether anything in it changed. */
const DIR_ENTRIES = 10_000;

/** The newest ctime under `dir` (itself excluded; 0 when empty), or null when there is more than the bound. */
function newestWithin(dir: Buffer): bigint | null {
  const queue = [dir];
  let budget = DIR_ENTRIES;
  let newest = 0n;
  for (let i = 0; i < queue.length; i++) {
    let entries;
    try {
      entries = readdirSync(queue[i] as Buffer, { encoding: 'buffer' });
    } catch {
      continue;
    }
    budget -= entries.length;
    if (budget < 0) return null;
    for (const name of entries) {
      const p = child(queue[i] as Buffer, name);
      const st = look(p);
      if (st === null) continue;
      if (st.ctimeNs > newest) newest = st.ctimeNs;
      if (st.isDirectory()) queue.push(p);
    }
  }
  return newest;
}

/** Whether `st` is nothing the owner's tools could run: an empty file or directory. */
function empty(path: Buffer, st: BigIntStats): boolean {
  if (st.isFile()) return st.size === 0n;
  if (!st.isDirectory()) return false;
  try {
    return readdirSync(path).length === 0;
  } catch {
    return false;
  }
}

/** The first `max` bytes of a file (following a link), or null. */
function head(path: Buffer, max: number): Buffer | null {
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(max + 1);
      const n = readSync(fd, buf, 0, buf.length, 0);
      return n > max ? null : buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/** A configuration larger than this is held unread: git's own are a few hundred bytes. */
const MAX_CONFIG = 1024 * 1024;

/**
 * Why the agent's git configuration would make the owner's git run
 * something, or null when every key in it is harmless.
 */
function unsafeConfig(path: Buffer, git: string | null): string | null {
  if (git === null)
    return 'a git configuration written in the session (git is not on PATH to read it)';
  const text = head(path, MAX_CONFIG);
  if (text === null) return 'a git configuration written in the session that could not be read';
  const keys = gitConfigKeys(git, text);
  if (keys === null) return 'a git configuration written in the session that git cannot parse';
  const bad = unsafeGitKeys(keys);
  if (bad.length === 0) return null;
  const shown = bad.slice(0, 3).join(', ') + (bad.length > 3 ? `, and ${bad.length - 3} more` : '');
  return `git configuration written in the session sets ${shown}`;
}

/** `<name>.vault-held-<time>` beside `path`, one that does not exist yet. */
function heldName(path: Buffer, stamp: string): Buffer {
  for (let n = 0; ; n++) {
    const to = Buffer.concat([path, Buffer.from(`.vault-held-${stamp}${n === 0 ? '' : `-${n}`}`)]);
    if (!existsSync(to)) return to;
  }
}

/**
 * The session's end: every control in `start.roots` the agent made or
 * changed that the owner's tools would run is renamed aside. `opened` are the
 * controls the owner opened with --allow-write (left alone), `kept` those the
 * sandbox bound read-only (the agent could not change them: a change there is
 * the owner's own, from outside, and is left alone), `skip` the paths the
 * sandbox hid; `git` is the owner's git, to read configurations with. Call it
 * only once nothing of the sandbox runs any more.
 */
export function projectCheck(
  start: ProjectStart,
  o: {
    opened: readonly string[];
    kept: readonly string[];
    skip: readonly string[];
    git: string | null;
    now: Date;
  },
): { held: Held[]; bounded: boolean } {
  const walk = walkProject(start.roots, WALK, outside(o.skip));
  const opened = outside([...o.opened, ...o.kept]);
  const stamp = o.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.[0-9]+/, '');
  const held: Held[] = [];
  const hold = (path: Buffer, why: string) => {
    const to = heldName(path, stamp);
    try {
      renameSync(path, to);
      held.push({ path, why, to });
    } catch {
      // Gone meanwhile: nothing left to run.
    }
  };
  for (const f of walk.found) {
    const dir = look(f.dir);
    // In a directory the start did not look into, and which the session did not make, nothing is known to be new.
    const known = dir !== null && (start.dirs.has(identity(dir)) || dir.ctimeNs >= start.since);
    // What was there at the start is the session's if its ctime moved; what was not, if it is new
    // here (or, where nothing is known, if its ctime is the session's).
    const fresh = (st: BigIntStats) => {
      const then = start.seen.get(identity(st));
      return then !== undefined ? st.ctimeNs !== then : known || st.ctimeNs >= start.since;
    };
    for (const item of itemsOf(f)) {
      if (opened(item.path)) continue;
      if (item.kind === 'gitdir') {
        // By part, not by the directory: the owner's own repository changes with every commit.
        for (const part of gitParts(item.path)) {
          if (opened(part.path) || !fresh(part.st) || empty(part.path, part.st)) continue;
          if (part.name === 'config' || part.name === 'config.worktree') {
            const why = part.st.isFile()
              ? unsafeConfig(part.path, o.git)
              : 'a link made in the session';
            if (why !== null) hold(part.path, why);
          } else if (part.name === 'commondir')
            hold(
              part.path,
              "made in the session: it points git at another directory's configuration",
            );
          else if (part.name === 'hooks') {
            if (!part.st.isDirectory()) hold(part.path, 'hooks replaced in the session');
          } else if (!part.name.endsWith('.sample'))
            hold(part.path, 'a hook made or changed in the session');
        }
      } else if (item.kind === 'dir') {
        // Made, moved in, or anything in it newer than what was there (an entry renamed in is new too).
        const then = start.within.get(identity(item.st)) ?? start.since - 1n;
        const newest = newestWithin(item.path);
        if ((fresh(item.st) || newest === null || newest > then) && !empty(item.path, item.st))
          hold(item.path, 'made or changed in the session');
      } else {
        let changed = fresh(item.st);
        if (item.st.isSymbolicLink())
          try {
            changed ||= statSync(item.path, { bigint: true }).ctimeNs >= start.since;
          } catch {
            // A link to nothing: what it names could be made later.
          }
        if (changed && !empty(item.path, item.st))
          hold(item.path, 'made or changed in the session');
      }
    }
  }
  return { held, bounded: walk.bounded || start.bounded };
}

/** `path` for a terminal line: control characters and invisible ones escaped. */
export function shown(path: Buffer): string {
  return oneLine(path.toString('utf8'));
}

/** The lines `run` prints on stderr for what the check did. */
export function heldLines(r: { held: readonly Held[]; bounded: boolean }): string[] {
  const lines = r.held.map(
    (h) =>
      `vault-cli: held ${shown(h.path)}: ${oneLine(h.why)}; renamed to ${shown(h.to)}, which no tool reads (docs/sandbox.md)`,
  );
  if (r.bounded)
    lines.push(
      `vault-cli: warning: the walk over project controls stopped at its bound (${WALK.depth} levels, ${WALK.entries} entries, ${KEPT_DIRS} directories kept read-only): what is beyond was neither kept nor checked (docs/sandbox.md)`,
    );
  return lines;
}
