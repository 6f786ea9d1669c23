// The owner session's binding, read from a /proc laid out in a temp dir as the
// kernel writes it, and the session table against a real vault (LMDB in a
// temp dir, weak test KDF) with the clock driven by the test.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { VaultError } from '../../src/core/errors.js';
import { Secret } from '../../src/crypto/secret.js';
import { HostContext } from '../../src/host/context.js';
import { createVault, rekeyVault, unlockOwner } from '../../src/host/owner/keys.js';
import {
  bindingOf,
  OwnerSessions,
  processOf,
  ttyName,
  type Binding,
  type ProcessBinding,
} from '../../src/host/owner/unlock.js';

const root = mkdtempSync(join(tmpdir(), 'vault-owner-unlock-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A process in the fake /proc: its stat line (fields after the name) and NSpid. */
function proc(dir: string, pid: number, comm: string, after: string[], nspid = `${pid}`): void {
  mkdirSync(join(dir, String(pid)), { recursive: true });
  writeFileSync(join(dir, String(pid), 'stat'), `${pid} (${comm}) ${after.join(' ')}\n`);
  writeFileSync(join(dir, String(pid), 'status'), `Name:\t${comm}\nNSpid:\t${nspid}\n`);
}

/** The stat fields after the name: state ppid pgrp session tty_nr, then up to starttime (19). */
function fields(sid: number, tty: number, start: number): string[] {
  const f = ['S', '1', String(sid), String(sid), String(tty)];
  while (f.length < 19) f.push('0');
  f.push(String(start), '0', '0');
  return f;
}

test('bindingOf reads tty, session and leader start; refuses what may hold no session', () => {
  const p = join(root, 'proc');
  const PTS3 = (136 << 8) | 3;
  proc(p, 500, 'bash', fields(500, PTS3, 1234));
  // A command name with spaces and parentheses, as the kernel allows.
  proc(p, 501, 'a) b (c', fields(500, PTS3, 9999));
  assert.deepEqual(bindingOf({ pid: 501, uid: 1000 }, p), {
    uid: 1000,
    tty: PTS3,
    sid: 500,
    leaderStart: '1234',
  });
  assert.equal(ttyName(PTS3), 'pts/3');
  // No controlling terminal.
  proc(p, 502, 'cron', fields(500, 0, 1));
  assert.equal(bindingOf({ pid: 502, uid: 1000 }, p), null);
  // Inside a nested PID namespace (a `run` sandbox): NSpid has two entries.
  proc(p, 503, 'sh', fields(500, PTS3, 1), '503 2');
  assert.equal(bindingOf({ pid: 503, uid: 1000 }, p), null);
  // pid 0 (the kernel maps none), a pid not in /proc, a session leader gone.
  assert.equal(bindingOf({ pid: 0, uid: 1000 }, p), null);
  assert.equal(bindingOf({ pid: 777, uid: 1000 }, p), null);
  proc(p, 504, 'orphan', fields(600, PTS3, 1));
  assert.equal(bindingOf({ pid: 504, uid: 1000 }, p), null);
});

test('bindingOf names this very process as the kernel sees it (real /proc)', () => {
  const b = bindingOf({ pid: process.pid, uid: process.getuid?.() ?? 0 });
  // Under a terminal or not, depending on how the tests were started: either
  // way it is a binding with a terminal, or none.
  if (b !== null) assert.ok(b.tty !== 0 && b.sid > 0 && /^\d+$/.test(b.leaderStart));
});

test('sessions: used by their binding only, until the idle timeout, expiry, lock or a rekey', async () => {
  const dir = join(root, 'vault');
  const ctx = new HostContext(dir);
  const pass = () => Secret.fromString('correct horse battery staple');
  await createVault(ctx, pass(), 'test', true);
  let now = 1_000_000;
  const owners = new OwnerSessions(() => now);
  const mine: Binding = { uid: 1000, tty: 34819, sid: 500, leaderStart: '1234' };
  const header = () => ctx.store().read((tx) => ctx.header(tx));
  const refused = (b: Binding | null) =>
    assert.throws(
      () => owners.use(b, header()),
      (e: unknown) => e instanceof VaultError && e.code === 'VLT-2054',
    );

  const s = await unlockOwner(ctx, pass(), 'test');
  owners.open(mine, s, 15 * 60_000, 5 * 60_000);
  s.wipe();
  // The request's own copy works, and wiping it leaves the session's key alone.
  const first = owners.use(mine, header());
  assert.equal(first.nameHash('x').length, 64);
  first.wipe();
  owners.use(mine, header()).wipe();
  // Another terminal, session or leader (a reused sid) never matches.
  refused({ ...mine, tty: 34820 });
  refused({ ...mine, sid: 501 });
  refused({ ...mine, leaderStart: '1235' });
  refused({ ...mine, uid: 1001 });
  refused(null);
  // Idle: each use starts the idle timeout again.
  now += 4 * 60_000;
  owners.use(mine, header()).wipe();
  now += 4 * 60_000;
  assert.notEqual(owners.view(mine), null);
  now += 60_000 + 1;
  refused(mine);
  // Absolute expiry, however busy.
  const s2 = await unlockOwner(ctx, pass(), 'test');
  owners.open(mine, s2, 10 * 60_000, 5 * 60_000);
  s2.wipe();
  for (let i = 0; i < 4; i++) {
    now += 3 * 60_000;
    if (i < 3) owners.use(mine, header()).wipe();
  }
  refused(mine);
  // lock.
  const s3 = await unlockOwner(ctx, pass(), 'test');
  owners.open(mine, s3, 10 * 60_000, 5 * 60_000);
  s3.wipe();
  assert.equal(owners.anyLive(), true);
  assert.equal(owners.end(mine), true);
  assert.equal(owners.end(mine), false);
  assert.equal(owners.anyLive(), false);
  refused(mine);
  // A rekey: the kept root key no longer opens the vault.
  const s4 = await unlockOwner(ctx, pass(), 'test');
  owners.open(mine, s4, 10 * 60_000, 5 * 60_000);
  const p4 = pass();
  await rekeyVault(ctx, s4, p4, 'test');
  s4.wipe();
  refused(mine);
  assert.equal(owners.view(mine), null, 'dropped on the way');
  owners.endAll();
  await ctx.close();
});

test('processOf names a process by pid and its own start time, terminal or none', () => {
  const p = join(root, 'proc-hold');
  proc(p, 600, 'cron', fields(600, 0, 4242));
  assert.deepEqual(processOf({ pid: 600, uid: 1000 }, p), { uid: 1000, pid: 600, start: '4242' });
  proc(p, 601, 'sh', fields(600, 0, 1), '601 2');
  assert.equal(processOf({ pid: 601, uid: 1000 }, p), null, 'a nested PID namespace');
  assert.equal(processOf({ pid: 0, uid: 1000 }, p), null);
  assert.equal(processOf({ pid: 777, uid: 1000 }, p), null);
});

test('a process hold serves its one process, not its terminal, and ends with it', async () => {
  const dir = join(root, 'vault-hold');
  const p = join(root, 'proc-held');
  const ctx = new HostContext(dir);
  const pass = () => Secret.fromString('correct horse battery staple');
  await createVault(ctx, pass(), 'test', true);
  let now = 1_000_000;
  const owners = new OwnerSessions(() => now, undefined, p);
  const PTS3 = (136 << 8) | 3;
  proc(p, 500, 'bash', fields(500, PTS3, 100));
  proc(p, 700, 'vault-cli', fields(500, PTS3, 5000));
  proc(p, 701, 'vault-cli', fields(500, PTS3, 5001));
  const sweep = processOf({ pid: 700, uid: 1000 }, p) as ProcessBinding;
  const other = processOf({ pid: 701, uid: 1000 }, p) as ProcessBinding;
  const terminal = bindingOf({ pid: 700, uid: 1000 }, p) as Binding;
  const header = () => ctx.store().read((tx) => ctx.header(tx));
  const refused = (b: Binding | null, caller: ProcessBinding | null) =>
    assert.throws(
      () => owners.use(b, header(), () => caller),
      (e: unknown) => e instanceof VaultError && e.code === 'VLT-2054',
    );

  const s = await unlockOwner(ctx, pass(), 'test');
  assert.equal(owners.hold(null, s), false, 'no process the host can name');
  assert.equal(owners.hold(sweep, s), true);
  s.wipe();
  owners.use(null, header(), () => sweep).wipe();
  owners.use(terminal, header(), () => sweep).wipe();
  // Another process of the same terminal, the terminal itself, a reused pid.
  refused(terminal, other);
  refused(terminal, null);
  refused(null, { ...sweep, start: '5002' });
  refused(null, { ...sweep, uid: 1001 });
  assert.equal(owners.view(terminal), null, 'no terminal session came of it');
  assert.equal(owners.anyLive(), true);
  // The process ends and its pid is reused: the hold is gone with it.
  proc(p, 700, 'vault-cli', fields(500, PTS3, 9999));
  refused(null, processOf({ pid: 700, uid: 1000 }, p));
  refused(null, sweep);
  assert.equal(owners.anyLive(), false);
  // Unused for the idle time: gone too.
  proc(p, 700, 'vault-cli', fields(500, PTS3, 5000));
  const s2 = await unlockOwner(ctx, pass(), 'test');
  owners.hold(sweep, s2);
  s2.wipe();
  now += 9 * 60_000;
  owners.use(null, header(), () => sweep).wipe();
  now += 10 * 60_000 + 1;
  refused(null, sweep);
  owners.endAll();
  await ctx.close();
});
