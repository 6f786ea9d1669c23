/**
 * Small helpers shared by the end-to-end tests, on top of the rig: what a
 * refusal looks like to a user, the host's pid, the audit log as data.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { HostChannel } from '../../src/client/channel.js';
import { ERRORS, type ErrorCode } from '../../src/core/errors.js';
import { ok, type Result, type Rig } from './rig.js';

/**
 * A refusal as a user meets it: the exit status of the code's row in the
 * table, nothing on stdout, and exactly one stderr line `vault-cli: <code>: ...`.
 * Returns the message after the code.
 */
export function assertRefused(r: Result, code: ErrorCode, what = ''): string {
  const ctx = `${what}${what ? ': ' : ''}exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`;
  assert.equal(r.signal, null, ctx);
  assert.equal(r.code, ERRORS[code].exit, ctx);
  assert.equal(r.stdout, '', ctx);
  const prefix = `vault-cli: ${code}: `;
  assert.ok(r.stderr.startsWith(prefix), ctx);
  assert.ok(r.stderr.endsWith('\n'), ctx);
  const body = r.stderr.slice(prefix.length, -1);
  assert.ok(body.length > 0, ctx);
  assert.doesNotMatch(body, /[\r\n]/, `${ctx}: one line only`);
  return body;
}

/** Random hex, for sentinels and unique names. */
export function hex(bytes = 8): string {
  return randomBytes(bytes).toString('hex');
}

/** The pid of the running host, from `daemon status --json`; fails the test when none runs. */
export async function hostPid(rig: Rig): Promise<number> {
  const status = JSON.parse(ok(await rig.owner(['daemon', 'status', '--json']))) as {
    running: boolean;
    pid: number;
  };
  assert.equal(status.running, true);
  assert.ok(Number.isInteger(status.pid) && status.pid > 0);
  return status.pid;
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits (polling, bounded) until `pid` has gone; false when it is still there at the end. */
export async function waitGone(pid: number, maxMs = 10_000): Promise<boolean> {
  const until = Date.now() + maxMs;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

export interface AuditLine {
  readonly seq: number;
  readonly action: string;
  readonly actor: string;
  readonly outcome: string;
  readonly entry: string | null;
  readonly field: string | null;
  readonly subject: string | null;
  readonly time: string;
  readonly source?: string;
}

/** `vault-cli audit --json` as records. */
export async function auditRecords(rig: Rig): Promise<AuditLine[]> {
  const out = ok(await rig.owner(['audit', '--json']));
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditLine);
}

/**
 * Pids of `vault-cli daemon` processes serving (or starting to serve) `vaultDir`,
 * found through /proc: a host started in the background is nobody's child.
 */
export function hostProcesses(vaultDir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (!argv.includes('daemon') || argv.includes('stop') || argv.includes('status')) continue;
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (env.includes(`VAULT_DIR=${vaultDir}`)) pids.push(Number(name));
    } catch {
      // gone already, or not ours to read
    }
  }
  return pids;
}

/** Polls until at most `max` host processes serve `vaultDir`; returns what is left. */
export async function settleHosts(
  vaultDir: string,
  max: number,
  maxMs = 10_000,
): Promise<number[]> {
  const until = Date.now() + maxMs;
  let left = hostProcesses(vaultDir);
  while (left.length > max && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = hostProcesses(vaultDir);
  }
  return left;
}

/**
 * `rig.dispose()` that also outlasts hosts still starting in the background
 * (a burst of auto-starting commands spawns several): it stops whatever host
 * answers until none is left, then removes the rig.
 */
export async function disposeAll(rig: Rig): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await rig.stop();
    if ((await settleHosts(rig.vaultDir, 0, 3000)).length === 0) break;
  }
  await rig.dispose();
}

/**
 * A vault in `rig` (created here) with entry E holding `value` and an agent
 * `reader` scoped to it whose limits no load run reaches; its token, a
 * channel to the host (started by the setup, as the rig's CLI builds it) and
 * the host's pid: for loads of many reads (bench/, memory tests).
 */
export async function loadReader(
  rig: Rig,
  value: string,
): Promise<{ token: string; channel: HostChannel; pid: number }> {
  await rig.create();
  await rig.set('E', value);
  const limits = ['--per-minute', '100000000', '--per-hour', '100000000'];
  const token = await rig.addAgent('reader', ['E'], limits);
  await rig.liftValuesLimit('reader');
  const daemon = { node: process.execPath, script: rig.cli, env: rig.env };
  const channel = new HostChannel({ vaultDir: rig.vaultDir, daemon, autoStart: false });
  const pid = (await channel.call('status', {})).pid;
  return { token, channel, pid };
}
