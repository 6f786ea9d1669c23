/**
 * The end-to-end rig: a vault in a temp directory and real `vault-cli`
 * processes (the built dist/, on this Node) run against it, as a user would.
 * Every rig has its own HOME, vault and config directory, and stops its host.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI; VAULT_TEST_DIST names another build of this tree (parallel work on one checkout). */
export const CLI = join(ROOT, process.env.VAULT_TEST_DIST ?? 'dist', 'src', 'cli', 'main.js');
export const PASSPHRASE = 'correct horse battery staple';

export interface Result {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Buffer;
}

export interface RunOptions {
  /** Bytes for stdin; stdin is closed (not a terminal) either way. */
  readonly input?: string | Buffer;
  /** Extra variables; `undefined` removes one. */
  readonly env?: Record<string, string | undefined>;
}

/** Runs `node dist/src/cli/main.js ...args` with `env` and returns its fate as data. */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  opts: RunOptions = {},
  cli = CLI,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const merged: NodeJS.ProcessEnv = { ...env };
    for (const [k, v] of Object.entries(opts.env ?? {})) {
      if (v === undefined) delete merged[k];
      else merged[k] = v;
    }
    const child = spawn(process.execPath, [cli, ...args], {
      env: merged,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // A CLI that never ends fails its test (killed: its fate shows SIGKILL and
    // what it printed) instead of holding the suite until CI's own limit.
    const deadline = setTimeout(() => child.kill('SIGKILL'), CLI_DEADLINE_MS);
    fate(child)
      .finally(() => clearTimeout(deadline))
      .then(resolve, reject);
    // A child that exits before reading its input (refused at once, or its host
    // killed under it) closes the pipe: EPIPE here; its fate says what happened.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/** Longer than any one CLI process of the suite takes (the longest test takes about 3 minutes). */
const CLI_DEADLINE_MS = 600_000;

/**
 * Ends a long-running child (`render --watch`, `sweep --watch`, `run`) with
 * SIGTERM, as a user would, and waits for it to close (its output all read). One that has not exited
 * `ms` later is killed and the test fails: a command that outlives its SIGTERM
 * is a bug, and waiting on it forever would hang the suite.
 */
export async function terminate(child: ChildProcess, ms = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  child.kill('SIGTERM');
  if (await exited) return;
  child.kill('SIGKILL');
  throw new Error(`${child.spawnargs.slice(2, 4).join(' ')} did not exit ${ms} ms after SIGTERM`);
}

/** What a spawned child with piped stdout and stderr printed, and how it ended. */
export function fate(child: ChildProcess): Promise<Result> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        signal,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
      });
    });
  });
}

export class Rig {
  readonly root: string;
  readonly vaultDir: string;
  readonly configDir: string;
  readonly passphraseFile: string;
  /** Environment of the owner: passphrase file set. */
  readonly env: NodeJS.ProcessEnv;
  /**
   * The CLI script owner() and agent() run: the built one, or a test build
   * (test/support/faketime.ts sets one whose client accepts its faked host).
   */
  cli = CLI;

  constructor() {
    this.root = mkdtempSync(join(tmpdir(), 'vault-cli-test-'));
    this.vaultDir = join(this.root, 'vault');
    this.configDir = join(this.root, 'config');
    this.passphraseFile = join(this.root, 'passphrase');
    writeFileSync(this.passphraseFile, PASSPHRASE + '\n', { mode: 0o600 });
    this.env = {
      PATH: process.env.PATH,
      HOME: this.root,
      LANG: 'C.UTF-8',
      VAULT_DIR: this.vaultDir,
      VAULT_CONFIG_DIR: this.configDir,
      VAULT_PASSPHRASE_FILE: this.passphraseFile,
      // `vault create` takes libsodium's minimum Argon2id costs (and says so on
      // stderr): every owner step derives the key again, at the full cost about
      // 0.1-1 s. A test of the costs themselves removes it (`env` of a run).
      VAULT_TEST_WEAK_KDF: '1',
      // A host a failed test leaves behind ends by itself.
      VAULT_HOST_IDLE_MS: '60000',
      // VAULT_DEBUG=1 npm test: the CLI prints the cause of an internal error.
      ...(process.env.VAULT_DEBUG === undefined ? {} : { VAULT_DEBUG: process.env.VAULT_DEBUG }),
    };
  }

  /** Runs as the owner (passphrase file in the environment). */
  owner(args: readonly string[], opts: RunOptions = {}): Promise<Result> {
    return runCli(args, this.env, opts, this.cli);
  }

  /** Runs as an agent: no passphrase file; `token` in VAULT_TOKEN when given. */
  agent(args: readonly string[], token?: string, opts: RunOptions = {}): Promise<Result> {
    const env = { ...this.env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token, ...opts.env };
    return runCli(args, this.env, { ...opts, env }, this.cli);
  }

  /** `vault create`, failing the test when it does not succeed. */
  async create(): Promise<string> {
    return ok(await this.owner(['vault', 'create']));
  }

  async set(entry: string, value: string | Buffer, field = 'password'): Promise<void> {
    ok(await this.owner(['entry', 'set', entry, '--field', field], { input: value }));
  }

  /** Adds an agent and returns its token. */
  async addAgent(
    name: string,
    scope: readonly string[],
    more: readonly string[] = [],
  ): Promise<string> {
    const args = ['agent', 'add', name, ...scope.flatMap((s) => ['--scope', s]), ...more];
    return ok(await this.owner(args)).trim();
  }

  /**
   * For load runs (bench/): lifts an agent's values-a-minute limit
   * (core/policy.ts), which a run of thousands of fills reaches in a second.
   * A build older than that limit (a bench's --baseline) has none to lift.
   */
  async liftValuesLimit(name: string): Promise<void> {
    const r = await this.owner(liftValuesArgs(name));
    if (r.code !== 0 && !predatesValuesLimit(r.stderr)) ok(r);
  }

  async stop(): Promise<void> {
    await this.owner(['daemon', 'stop']);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The stdout of a run that must succeed; otherwise an error carrying its stderr. */
/** The owner's argv that gives an agent a values-a-minute limit no load run reaches. */
export const liftValuesArgs = (name: string): string[] => [
  'agent',
  'limits',
  name,
  '--values-per-minute',
  '100000000',
];

/** Whether a lift refused says the build predates the values-a-minute limit: nothing to lift. */
export const predatesValuesLimit = (stderr: string): boolean => /unknown option/.test(stderr);

export function ok(r: Result): string {
  if (r.code !== 0) throw new Error(`vault-cli exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
