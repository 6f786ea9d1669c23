/**
 * A vault host whose clock the test moves: the real `vault-cli daemon` under
 * libfaketime (Debian's faketime package), reading its offset from a file the
 * test rewrites. Only the wall clock is faked; timers keep real time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, type Rig } from './rig.js';

const LIBS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
];

export const LIBFAKETIME = LIBS.find((p) => existsSync(p)) ?? null;

export class FakeClock {
  private offset = 0;
  private readonly file: string;
  private host: ChildProcess | null = null;

  constructor(private readonly rig: Rig) {
    this.file = join(rig.root, 'faketime');
    this.write();
    // The owner's client checks the host before sending the passphrase, and a
    // host under a preload is not one it trusts unless told (host-check.ts).
    (rig.env as Record<string, string>).VAULT_ACCEPT_FAKETIME = '1';
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
    this.host = spawn(process.execPath, [CLI, 'daemon'], {
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
