// Fail closed: when the audit record cannot be committed (a full file system,
// a read-only store file, a store file the host may not write), every mode
// (get, totp, render) refuses with VLT-3004 and releases nothing, and every
// value that was released has its record.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { hostPid, waitGone } from '../support/e2e-helpers.js';
import { CLI, Rig, ok, type Result } from '../support/rig.js';
import { bindReadOnly, canMount, mountTmpfs, unmount } from '../support/tmpfs.js';

const skip = canMount() ? false : 'needs permission to mount (root)';

/** A template with both entries: render must release neither. */
const TEMPLATE = 'a=vault://A/password t=vault://T/totp\n';

function refusedClosed(r: Result, what: string): void {
  assert.equal(r.code, 74, `${what}: ${r.stderr}`);
  assert.equal(r.stdout, '', `${what} released something`);
  assert.match(r.stderr, /^vault-cli: VLT-3004: [^\n]*\n$/);
}

/** `daemon stop` ends the running host: the process is gone afterwards. */
async function stopsWhenTold(rig: Rig): Promise<void> {
  const pid = await hostPid(rig);
  ok(await rig.owner(['daemon', 'stop']));
  assert.ok(await waitGone(pid), `the host (pid ${pid}) is still running after daemon stop`);
}

/** Fills the file system holding `dir` but for `spare` bytes. */
function fill(dir: string, spare: number): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(4096, 0x41);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    ftruncateSync(fd, Math.max(0, fstatSync(fd).size - spare));
  } finally {
    closeSync(fd);
  }
  return path;
}

test(
  'a full file system: reads stop with VLT-3004, and every released value was audited',
  { skip },
  async (t) => {
    const rig = new Rig();
    mountTmpfs(rig.vaultDir, 4096);
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      await rig.set('T', 'JBSWY3DPEHPK3PXP', 'totp');
      const token = await rig.addAgent(
        'filler',
        ['A', 'T'],
        ['--per-minute', '100000', '--per-hour', '100000'],
      );
      // Leave a little more than the host's 1 MiB of headroom: some reads fit, then none.
      const filler = fill(rig.vaultDir, 1024 * 1024 + 96 * 1024);

      let released = 0;
      let refused = 0;
      for (let i = 0; i < 2000 && refused < 3; i++) {
        const r = await rig.agent(['get', 'A'], token);
        if (r.code === 0) {
          assert.equal(r.stdout, 'value-a\n');
          released++;
        } else {
          refusedClosed(r, `get #${i}`);
          refused++;
        }
      }
      assert.equal(refused, 3, 'the file system never filled up');
      assert.ok(released > 0, 'no read fitted in the space left');
      refusedClosed(await rig.agent(['totp', 'T'], token), 'totp');
      refusedClosed(await rig.agent(['render', '-'], token, { input: TEMPLATE }), 'render');

      rmSync(filler);
      const audit = ok(await rig.owner(['audit', '--agent', 'filler', '--json']));
      const reads = audit.split('\n').filter((l) => l.includes('"ai_read"'));
      assert.equal(reads.length, released, 'a value went out without its audit record');
      assert.ok(!audit.includes('"fill"'), 'a refused render was recorded as a fill');
      ok(await rig.owner(['audit', '--verify']));
      t.diagnostic(
        `full file system: ${released} reads released and audited, then ${refused + 2} refused with VLT-3004 (get, totp, render)`,
      );
    } finally {
      await rig.stop();
      unmount(rig.vaultDir);
      await rig.dispose();
    }
  },
);

test(
  'a file system another process filled: the store keeps room of its own, so reads go on, each audited, and the owner too',
  { skip },
  async (t) => {
    const rig = new Rig();
    // Room for the store and its 16 MiB reserve, then for an agent's files.
    mountTmpfs(rig.vaultDir, 48 * 1024);
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      const token = await rig.addAgent(
        'reader',
        ['A'],
        ['--per-minute', '100000', '--per-hour', '100000'],
      );
      assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');
      const store = join(rig.vaultDir, 'vault.mdb');
      const kept = () => {
        const st = statSync(store);
        return st.blocks * 512 - st.size;
      };
      assert.ok(kept() >= 8 * 1024 * 1024, `the store keeps ${kept()} bytes`);
      // What an agent writing its working directory does: nothing left for anyone.
      const filler = fill(rig.vaultDir, 0);
      const reads = 40;
      for (let i = 0; i < reads; i++)
        assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n', `get #${i}`);
      await rig.set('B', 'value-b');
      const audit = ok(await rig.owner(['audit', '--agent', 'reader', '--json']));
      assert.equal(audit.split('\n').filter((l) => l.includes('"ai_read"')).length, reads + 1);
      ok(await rig.owner(['audit', '--verify']));
      t.diagnostic(
        `full file system: ${reads} reads released and audited from the store's reserve`,
      );
      rmSync(filler);
    } finally {
      await rig.stop();
      unmount(rig.vaultDir);
      await rig.dispose();
    }
  },
);

test('a read-only store file: every mode refuses with VLT-3004', { skip }, async (t) => {
  const rig = new Rig();
  const store = join(rig.vaultDir, 'vault.mdb');
  let bound = false;
  try {
    await rig.create();
    await rig.set('A', 'value-a');
    await rig.set('T', 'JBSWY3DPEHPK3PXP', 'totp');
    const token = await rig.addAgent('reader', ['A', 'T']);
    assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');

    await rig.stop();
    bindReadOnly(store);
    bound = true;
    refusedClosed(await rig.agent(['get', 'A'], token), 'get');
    refusedClosed(await rig.agent(['get', 'A', '--field', 'password'], token), 'get --field');
    refusedClosed(await rig.agent(['totp', 'T'], token), 'totp');
    refusedClosed(await rig.agent(['render', '-'], token, { input: TEMPLATE }), 'render');
    await stopsWhenTold(rig);
    unmount(store);
    bound = false;

    const audit = ok(await rig.owner(['audit', '--agent', 'reader', '--json']));
    assert.equal(audit.split('\n').filter((l) => l.includes('"ai_read"')).length, 1);
    assert.ok(!audit.includes('"fill"'), 'a refused render was recorded as a fill');
    t.diagnostic('read-only store file: get, get --field, totp, render each refused with VLT-3004');
  } finally {
    await rig.stop();
    if (bound) unmount(store);
    await rig.dispose();
  }
});

// A permission error: the store file is mode 0400, so the host's open for
// writing fails with EACCES. Root ignores file modes (CAP_DAC_OVERRIDE), so as
// root the host is started under setpriv with that capability (and
// CAP_DAC_READ_SEARCH) removed from its bounding set, as an ordinary user's
// host would run; as any other user the next request starts it as usual.
const SETPRIV = '/usr/bin/setpriv';
const asRoot = process.getuid?.() === 0;
const skipPerm =
  asRoot && !existsSync(SETPRIV) ? 'as root, needs setpriv to drop CAP_DAC_OVERRIDE' : false;
/** Bit 1 of the capability sets (linux/capability.h). */
const CAP_DAC_OVERRIDE = 1n << 1n;

async function hostWithoutDacOverride(rig: Rig): Promise<ChildProcess> {
  const host = spawn(
    SETPRIV,
    [
      '--bounding-set=-dac_override,-dac_read_search',
      '--inh-caps=-dac_override,-dac_read_search',
      '--',
      process.execPath,
      CLI,
      'daemon',
    ],
    { env: rig.env, stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    const r = await rig.owner(['daemon', 'status', '--json']);
    if (r.code === 0) {
      assert.equal(
        (JSON.parse(r.stdout) as { pid: number }).pid,
        host.pid,
        'another host answered',
      );
      const status = readFileSync(`/proc/${host.pid}/status`, 'utf8');
      const eff = BigInt('0x' + (/^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'));
      assert.equal(eff & CAP_DAC_OVERRIDE, 0n, 'the host still overrides file modes');
      return host;
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  host.kill('SIGKILL');
  throw new Error('the host without CAP_DAC_OVERRIDE did not start');
}

test(
  'a store file the host may not open for writing (EACCES): every mode refuses with VLT-3004',
  { skip: skipPerm },
  async (t) => {
    const rig = new Rig();
    const store = join(rig.vaultDir, 'vault.mdb');
    let host: ChildProcess | null = null;
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      await rig.set('T', 'JBSWY3DPEHPK3PXP', 'totp');
      const token = await rig.addAgent('perm', ['A', 'T']);
      assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');

      await rig.stop();
      chmodSync(store, 0o400);
      if (asRoot) host = await hostWithoutDacOverride(rig);
      refusedClosed(await rig.agent(['get', 'A'], token), 'get');
      refusedClosed(await rig.agent(['get', 'A', '--field', 'password'], token), 'get --field');
      refusedClosed(await rig.agent(['totp', 'T'], token), 'totp');
      refusedClosed(await rig.agent(['render', '-'], token, { input: TEMPLATE }), 'render');
      // A host that cannot open its store still answers status and stops when told.
      await stopsWhenTold(rig);
      chmodSync(store, 0o600);

      const audit = ok(await rig.owner(['audit', '--agent', 'perm', '--json']));
      assert.equal(audit.split('\n').filter((l) => l.includes('"ai_read"')).length, 1);
      assert.ok(!audit.includes('"fill"'), 'a refused render was recorded as a fill');
      ok(await rig.owner(['audit', '--verify']));
      t.diagnostic(
        `store file mode 0400${asRoot ? ', host without CAP_DAC_OVERRIDE' : ''}: get, get --field, totp, render each refused with VLT-3004`,
      );
    } finally {
      await rig.stop();
      host?.kill('SIGKILL');
      await rig.dispose();
    }
  },
);
