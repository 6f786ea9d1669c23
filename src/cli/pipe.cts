/**
 * get, totp, render and --version start here: bin/vault-cli runs this file
 * for them, and main.ts loads it when run directly. An agent's scripts run
 * these over and over, each a whole Node start, so this file does what Node's
 * module loader would do for the bundle (pipe-main.bundle.cjs, made by
 * scripts/bundle.mjs) with two savings, measured in docs/decisions.md:
 *
 * - a CommonJS entry: Node's ESM loader is never started (about 4 ms);
 * - V8's code cache: the bundle is compiled as a vm.Script with the bytecode
 *   a run before left beside it, so neither the bundle's compile nor the
 *   first calls' lazy compiles are paid again (about 6 ms).
 *
 * The cache is written once, at the exit of a run that found none it could
 * use, beside the bundle (the same directory, so whoever can change it can
 * change the code already; where that directory is not writable, as in a
 * global install by root, nothing is written and the bundle compiles from
 * source each time). It holds bytecode and the source's constants, never a
 * run's values (test/e2e/get-startup.test.ts plants one). V8 refuses a cache
 * of another V8 version or flags, and checks only the source's length; so the
 * cache's first line names the bundle it was made from (its inode, size and
 * mtime), and one that names another is not used.
 */
import type { Script } from 'node:vm';

// Not require(): it reads as `node:fs` in a module trace, where an ESM
// namespace import would cost every lazy export (test/e2e/get-startup.test.ts).
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');
const vm = process.getBuiltinModule('node:vm');

interface Entry {
  start(argv: readonly string[], script: string): void;
}
interface Pipe {
  start(argv: readonly string[], script: string, full: () => Promise<Entry>): void;
}

const BUNDLE = path.join(__dirname, 'pipe-main.bundle.cjs');
/** One cache per Node: an installation may be run by node@24 and by the `node` on PATH. */
const CACHE = `${BUNDLE}.${process.version}-${process.arch}.cache`;

/** The bundle's identity, as the cache's first line holds it. */
function identity(fd: number): Buffer {
  const st = fs.fstatSync(fd, { bigint: true });
  return Buffer.from(`${st.ino}:${st.size}:${st.mtimeNs}\n`);
}

/** The V8 data of the cache made from this very bundle, or undefined. */
function cachedFor(id: Buffer): Buffer | undefined {
  let data: Buffer;
  try {
    data = fs.readFileSync(CACHE);
  } catch {
    return undefined;
  }
  const own = data.length > id.length && data.subarray(0, id.length).equals(id);
  return own ? data.subarray(id.length) : undefined;
}

/** Writes the cache whole or not at all (a reader never sees half of one); any failure is silent. */
function keep(script: Script, id: Buffer): void {
  const tmp = `${CACHE}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, Buffer.concat([id, script.createCachedData()]), {
      mode: 0o644,
      flag: 'wx',
    });
    fs.renameSync(tmp, CACHE);
  } catch {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // Never written.
    }
  }
}

/** The bundle's exports, or null where the build made no bundle (a tree built by tsc alone). */
function load(): Pipe | null {
  let fd: number;
  try {
    fd = fs.openSync(BUNDLE, 'r');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return null;
    throw err;
  }
  let id: Buffer;
  let source: string;
  try {
    id = identity(fd);
    source = fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
  const cachedData = cachedFor(id);
  const script = new vm.Script(`(function (exports, require, module) {${source}\n})`, {
    filename: BUNDLE,
    cachedData,
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // At exit: the functions this run called are compiled by then, and kept too.
    process.once('exit', () => keep(script, id));
  }
  const module = { exports: {} as Pipe };
  (script.runInThisContext() as (e: object, r: NodeJS.Require, m: object) => void)(
    module.exports,
    require,
    module,
  );
  return module.exports;
}

const full = (): Promise<Entry> => import('./full.js');

if (require.main === module) {
  const pipe = load();
  const argv = process.argv.slice(2);
  const script = path.join(__dirname, 'main.js');
  if (pipe === null) void import('./pipe-main.js').then((m) => m.start(argv, script, full));
  else pipe.start(argv, script, full);
}

export = { load, full };
