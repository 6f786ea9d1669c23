/**
 * Fault injection for e2e tests: a real host started under fault-shim.c (an
 * LD_PRELOAD shim compiled here with the machine's cc into the test's temp
 * dir) that fails chosen file-system calls on one file with a chosen errno,
 * switched on and off while the host runs.
 *
 * Chosen over `strace -e inject` (which stages the same faults, and did in
 * issue 42's first measurements): strace can match a fault only by call and
 * by count (`when=`), not by the file or by the size of a write, so it
 * cannot fail LMDB's 128-byte meta write alone; switching a fault off means
 * detaching it; and it makes the host a traced process. Commit latency under
 * either (300 commits, 3 runs each) was within this shared machine's noise
 * (0.5 to 7 ms a commit for plain, shim and strace alike): speed did not
 * decide it. The shim costs a stat of its control file per wrapped call.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI, ok, terminate, type Result, type Rig } from './rig.js';

/**
 * How long a faulty host may take to listen: its start-up scan reads and
 * copies the store in a child first, a few seconds on a loaded machine
 * (5 s was too short under a full run's load).
 */
const LISTEN_MS = 120_000;

/** Longer than any owner command of a fault test takes on a loaded machine. */
const OWNER_DEADLINE_MS = 120_000;

export type FaultCall =
  | 'pwrite'
  | 'write'
  | 'fdatasync'
  | 'fsync'
  | 'msync'
  | 'ftruncate'
  | 'fallocate'
  | 'pread'
  | 'read';
export type FaultErrno = 'EIO' | 'ENOSPC' | 'EROFS';

/** LMDB's meta page record, as this lmdb-js build writes it (pwrite64 of 128 bytes on its O_DSYNC descriptor). */
export const META_WRITE_BYTES = 128;

const SOURCE = join(import.meta.dirname, 'fault-shim.c');

/** Whether a C compiler is here to build the shim. */
export function canInject(): boolean {
  return spawnSync('cc', ['--version']).status === 0;
}

/** Compiles the shim into `dir`; returns the library's path. */
export function buildShim(dir: string): string {
  const out = join(dir, 'fault-shim.so');
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', out, SOURCE, '-ldl'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`cc fault-shim.c: ${r.stderr}`);
  return out;
}

/**
 * A copy of the built tree in `dir` whose owner's client accepts a host
 * under the shim (src/client/test-build.ts set true in the copy only): the
 * build flag a production build never has. Returns its CLI script; the host
 * must be started from the same script (the client checks that).
 */
export function testBuild(dir: string): string {
  const root = join(dirname(CLI), '..', '..', '..');
  const to = join(dir, 'test-build');
  cpSync(join(root, 'dist'), join(to, 'dist'), { recursive: true });
  cpSync(join(root, 'package.json'), join(to, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(to, 'node_modules'));
  const flag = join(to, 'dist', 'src', 'client', 'test-build.js');
  const built = readFileSync(flag, 'utf8');
  if (!/ACCEPT_FAULT_SHIM = false/.test(built)) throw new Error(`${flag}: no flag to set`);
  writeFileSync(flag, built.replace('ACCEPT_FAULT_SHIM = false', 'ACCEPT_FAULT_SHIM = true'));
  return join(to, 'dist', 'src', 'cli', 'main.js');
}

/** Runs the owner's command `args` on the test build `cli`, as rig.owner does on the real one. */
export function ownerOn(
  cli: string,
  rig: Rig,
  args: readonly string[],
  input = '',
): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: rig.env });
    // A command that never ends fails its test (its fate shows SIGKILL) instead of holding the file.
    const deadline = setTimeout(() => child.kill('SIGKILL'), OWNER_DEADLINE_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('close', (code, signal) => {
      clearTimeout(deadline);
      resolve({ code, signal, stdout, stderr, stdoutBytes: Buffer.from(stdout) });
    });
  });
}

/** The refusal code a command's error names (VLT-NNNN), or its exit and stderr when it names none. */
export const codeOf = (r: Result): string =>
  /VLT-\d+/.exec(r.stderr)?.[0] ?? `exit ${r.code}: ${r.stderr}`;

/** What a fault test's readers got back. */
export interface Tally {
  released: number;
  refused: Map<string, number>;
  /** Each refusal's line, once. */
  said: Set<string>;
}

/**
 * Reads of entry A (whose value is `value-a`) by `workers` agents at once
 * until `stop` says so, tallying what came back; a refused read must release
 * nothing.
 */
export async function readers(
  rig: Rig,
  token: string,
  workers: number,
  stop: () => boolean,
): Promise<Tally> {
  const tally: Tally = { released: 0, refused: new Map(), said: new Set() };
  const one = async () => {
    while (!stop()) {
      const r = await rig.agent(['get', 'A'], token);
      if (r.code === 0) {
        assert.equal(r.stdout, 'value-a\n');
        tally.released++;
      } else {
        assert.equal(r.stdout, '', 'a refused read released something');
        const code = codeOf(r);
        tally.refused.set(code, (tally.refused.get(code) ?? 0) + 1);
        tally.said.add(r.stderr.trim());
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, one));
  return tally;
}

/** The owner's writes of a fault test: names acknowledged, refusal codes. */
export interface Writes {
  acknowledged: string[];
  refused: string[];
}

/**
 * Owner writes (`entry set W<i>`) one after another until `stop`, on the test
 * build `cli`; `out` fills as they go (and is returned).
 */
export async function ownerWrites(
  cli: string,
  rig: Rig,
  stop: () => boolean,
  out: Writes = { acknowledged: [], refused: [] },
): Promise<Writes> {
  for (let i = 0; !stop(); i++) {
    const r = await ownerOn(cli, rig, ['entry', 'set', `W${i}`, '--field', 'password'], `w-${i}`);
    if (r.code === 0) out.acknowledged.push(`W${i}`);
    else out.refused.push(codeOf(r));
  }
  return out;
}

/**
 * After a fault test, its host stopped: every value released (the readers'
 * tally and `releasedBesides` more) was audited, and no more were than were
 * released or refused (under a failed fdatasync a refused read's commit can
 * reach the file all the same: only the flush failed); every owner write
 * acknowledged is there; the audit chain verifies and the store checks
 * clean. Returns how many reads were audited.
 */
export async function accounted(
  rig: Rig,
  tally: Tally,
  releasedBesides: number,
  writes: Writes,
): Promise<number> {
  const audit = ok(await rig.owner(['audit', '--agent', 'reader', '--json']));
  const reads = audit.split('\n').filter((l) => l.includes('"ai_read"')).length;
  const refused = [...tally.refused.values()].reduce((a, b) => a + b, 0);
  const released = tally.released + releasedBesides;
  assert.ok(reads >= released, `${released} values went out, ${reads} audited`);
  assert.ok(
    reads <= released + refused,
    `${reads} audited, ${released} released, ${refused} refused`,
  );
  const listed = JSON.parse(ok(await rig.owner(['entry', 'ls', '--json']))) as { name: string }[];
  const names = new Set(listed.map((e) => e.name));
  for (const w of writes.acknowledged) assert.ok(names.has(w), `${w} acknowledged, then lost`);
  ok(await rig.owner(['audit', '--verify']));
  ok(await rig.owner(['vault', 'check']));
  return reads;
}

/** A host running under the shim, and the switch for its faults. */
export class FaultyHost {
  readonly ctl: string;
  /** What the host wrote on stderr (its log), when started by startFailing. */
  log = '';
  private constructor(
    readonly proc: ChildProcess,
    dir: string,
  ) {
    this.ctl = join(dir, 'faults.ctl');
  }

  /**
   * Starts the rig's host under the shim (the rig's host stopped first),
   * waiting until it answers. The owner's client refuses such a host: only
   * the agent's path (and a test build, docs/development.md) talks to it.
   */
  static async start(rig: Rig, dir: string, cli = CLI): Promise<FaultyHost> {
    const shim = buildShim(dir);
    await rig.stop();
    const ctl = join(dir, 'faults.ctl');
    writeFileSync(ctl, '');
    // Its log kept beside the control file: what a stalled test prints (stalled()).
    const log = openSync(join(dir, 'faulty-host.log'), 'a');
    const proc = spawn(process.execPath, [cli, 'daemon'], {
      env: { ...rig.env, LD_PRELOAD: shim, FAULT_SHIM_CTL: ctl },
      stdio: ['ignore', 'ignore', log],
    });
    closeSync(log);
    const host = new FaultyHost(proc, dir);
    await host.listening();
    return host;
  }

  /**
   * Resolves once this host says it listens (it then holds the vault's lock
   * and its socket: no client can start another host meanwhile, which a
   * socket file left by the rig's stopped host would not show). Fails when
   * it exits first, or says nothing for LISTEN_MS.
   */
  async listening(): Promise<void> {
    const until = Date.now() + LISTEN_MS;
    while (!/vault-host\[\d+\]: listening on /.test(this.#logText())) {
      const ended = this.proc.exitCode ?? this.proc.signalCode;
      if (ended !== null)
        throw new Error(`the faulty host ended (${ended}) before listening: ${this.stalled()}`);
      if (Date.now() > until)
        throw new Error(`the faulty host did not listen in ${LISTEN_MS} ms: ${this.stalled()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Its log so far: the file start() writes it to, or what startFailing() gathered. */
  #logText(): string {
    const file = join(dirname(this.ctl), 'faulty-host.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : this.log;
  }

  /**
   * Fails `calls` on `file` with `errno` (writes of `size` bytes only, when
   * given) from now on, each failing call `delayMs` late (fault-shim.c
   * DELAY), and only off the main thread with `workersOnly` (THREADS).
   */
  fail(
    calls: readonly FaultCall[],
    errno: FaultErrno,
    file: string,
    size = 0,
    delayMs = 0,
    workersOnly = false,
  ): void {
    this.#set(
      `${calls.join(',')} ${errno} ${size} ${file} ${delayMs} ${workersOnly ? 'workers' : 'any'}\n`,
    );
  }

  /**
   * What the host was doing, for a test that stalled: its log's last lines
   * and where each of its threads waits in the kernel.
   */
  stalled(): string {
    const pid = this.proc.pid;
    let threads = '';
    try {
      for (const t of readdirSync(`/proc/${pid}/task`)) {
        const comm = readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
        const wchan = readFileSync(`/proc/${pid}/task/${t}/wchan`, 'utf8').trim();
        threads += ` ${t}:${comm}:${wchan}`;
      }
    } catch {
      threads += ' (gone)';
    }
    const log = this.#logText();
    return `host ${pid} threads${threads}; hits ${this.hits().length}; log:\n${log.split('\n').slice(-40).join('\n')}`;
  }

  /** Every fault off. */
  heal(): void {
    this.#set('');
  }

  /** The calls the shim has failed so far, one `call size` line each. */
  hits(): string[] {
    const f = `${this.ctl}.hits`;
    return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
  }

  /**
   * As start(), with the fault already on when the host starts (its start-up
   * scan, a child that the shim follows into, meets it). It does not wait
   * for the socket (a start that the fault makes fail shows as an exit):
   * await listening() before any client runs, or a client may start a host
   * of its own (the production build, without the shim) in the meantime.
   */
  static startFailing(
    rig: Rig,
    dir: string,
    cli: string,
    fault: { calls: readonly FaultCall[]; errno: FaultErrno; file: string; size?: number },
  ): FaultyHost {
    const shim = buildShim(dir);
    const ctl = join(dir, 'faults.ctl');
    writeFileSync(
      ctl,
      `${fault.calls.join(',')} ${fault.errno} ${fault.size ?? 0} ${fault.file}\n`,
    );
    const proc = spawn(process.execPath, [cli, 'daemon'], {
      env: { ...rig.env, LD_PRELOAD: shim, FAULT_SHIM_CTL: ctl },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const host = new FaultyHost(proc, dir);
    proc.stderr?.on('data', (c: Buffer) => (host.log += c.toString('utf8')));
    return host;
  }

  #set(line: string): void {
    // Replaced whole (a new inode), so the shim sees every change.
    writeFileSync(`${this.ctl}.new`, line);
    renameSync(`${this.ctl}.new`, this.ctl);
  }

  /** SIGTERM, as a user stops a host; one still there 15 s later is killed and fails the test. */
  async stop(): Promise<void> {
    await terminate(this.proc);
  }
}
