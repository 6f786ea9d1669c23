/**
 * A vault host whose clock the test moves: the real `vault-cli daemon` under
 * libfaketime (Debian's faketime package), reading its offset from a file the
 * test rewrites. Only the wall clock is faked; timers keep real time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI, runCli, type Rig } from './rig.js';

const LIBS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
];

export const LIBFAKETIME = LIBS.find((p) => existsSync(p)) ?? null;

/**
 * A copy of the built tree in `dir` whose owner's client accepts a host under
 * libfaketime (ACCEPT_FAKETIME in src/client/test-build.ts set true in the
 * copy only): a build flag, which a production build never has, not an
 * environment variable an agent could set. Returns its CLI script; the host
 * must be started from the same script (the client checks that).
 */
export function faketimeBuild(dir: string): string {
  const root = join(dirname(CLI), '..', '..', '..');
  const to = join(dir, 'faketime-build');
  cpSync(join(root, 'dist'), join(to, 'dist'), { recursive: true });
  cpSync(join(root, 'package.json'), join(to, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(to, 'node_modules'));
  const flag = join(to, 'dist', 'src', 'client', 'test-build.js');
  const built = readFileSync(flag, 'utf8');
  if (!/ACCEPT_FAKETIME = false/.test(built)) throw new Error(`${flag}: no flag to set`);
  writeFileSync(flag, built.replace('ACCEPT_FAKETIME = false', 'ACCEPT_FAKETIME = true'));
  return join(to, 'dist', 'src', 'cli', 'main.js');
}

export class FakeClock {
  private offset = 0;
  private readonly file: string;
  private host: ChildProcess | null = null;
  /** The test build the host runs and the rig's commands now run (faketimeBuild). */
  readonly cli: string;

  constructor(private readonly rig: Rig) {
    this.file = join(rig.root, 'faketime');
    this.write();
    // The owner's client checks the host before sending the passphrase, and a
    // host under a preload is not one it trusts: only a test build's is.
    this.cli = faketimeBuild(rig.root);
    rig.cli = this.cli;
  }

  private write(): void {
    writeFileSync(this.file, `${this.offset >= 0 ? '+' : ''}${this.offset}s\n`);
  }

  /** Seconds the host's clock is ahead of real time. */
  get seconds(): number {
    return this.offset;
  }

  /** Moves the host's clock to `seconds` after the real time. */
  set(seconds: number): void {
    this.offset = seconds;
    this.write();
  }

  /** Starts the host under libfaketime and waits until it answers. */
  async start(): Promise<void> {
    if (LIBFAKETIME === null) throw new Error('libfaketime not installed');
    // A host the production build started (vault create's) is stopped by that
    // build: the test build's client would refuse it, and it would go on serving.
    await runCli(['daemon', 'stop'], this.rig.env, {}, CLI);
    this.host = spawn(process.execPath, [this.cli, 'daemon'], {
      env: {
        ...this.rig.env,
        LD_PRELOAD: LIBFAKETIME,
        FAKETIME_TIMESTAMP_FILE: this.file,
        FAKETIME_NO_CACHE: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      },
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      const r = await this.rig.owner(['daemon', 'status']);
      if (r.code === 0) return;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error('faked host did not start');
  }

  async stop(): Promise<void> {
    await this.rig.stop();
    this.host?.kill('SIGKILL');
  }
}
