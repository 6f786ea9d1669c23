/**
 * Audit names sealed per epoch (issue 28) against a sealed box per record, in
 * one run. Prints figures; asserts nothing.
 *
 *   node --import tsx bench/audit-seal.ts [resolves per host, default 3000] [baseline git ref, default 0510e5b]
 *
 * (npm run build first: part 2 runs this tree's dist/.)
 *
 * 1. In this process: the sealing of one record's names, the box of the build
 *    before (crypto_box_seal: an X25519 key pair and a DH each time) beside
 *    the epoch seal (one XChaCha20-Poly1305, plus an epoch's start every
 *    EPOCH_RECORDS records); a whole append into a real LMDB write
 *    transaction either way; and the owner's side, opening them.
 * 2. Host CPU per resolve under fill load: a warm host of the baseline build
 *    (`git archive` of the ref, built against this tree's node_modules) and
 *    one of this tree, each sent the same resolves eight at a time on
 *    kept-alive connections (as the proxy sends fills); the host's user+system
 *    CPU from /proc/<pid>/stat over the run, divided by the resolves; three
 *    rounds each, alternated, and the medians.
 *
 * The machine is shared: the load average is printed before and after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent } from '../src/core/audit.js';
import { HostChannel } from '../src/client/channel.js';
import { slot } from '../src/crypto/aead.js';
import { EpochOpener, SealEpoch } from '../src/crypto/audit-seal.js';
import { newKeyPair, openSealed, sealTo, type KeyPair } from '../src/crypto/box.js';
import { newKdfParams } from '../src/crypto/kdf.js';
import { appendAudit, recordHash, viewAudit } from '../src/host/audit/log.js';
import { EPOCH_RECORDS, endAuditEpoch } from '../src/host/audit/names.js';
import { SCHEMA_VERSION, type AuditRecord, type VaultHeader } from '../src/store/schema.js';
import { Store } from '../src/store/lmdb/store.js';
import type { Tx } from '../src/store/tx.js';
import { hostProcesses } from '../test/support/e2e-helpers.js';
import { cpuMs } from '../test/support/procs.js';
import { ROOT, liftValuesArgs, predatesValuesLimit } from '../test/support/rig.js';
import { benchVault, buildBaseline, cli } from './baseline.js';

const RESOLVES = Number(process.argv[2] ?? 3000);
const BASE = process.argv[3] ?? '0510e5b';
const ROUNDS = 3;

const names = Buffer.from(
  JSON.stringify({ entry: 'GitHub production', field: 'token', entryId: 'a'.repeat(32) }),
);

/** Microseconds per call of `fn`, the best of five runs of `n` calls. */
function perCall(n: number, fn: (i: number) => void): number {
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e3 / n);
  }
  return best;
}

function event(i: number): AuditEvent {
  return {
    at: 1_700_000_000_000 + i,
    action: 'fill',
    actor: 'cli:bench',
    source: 'pid:1 uid:0',
    outcome: 'ok',
    entryId: 'a'.repeat(32),
    entry: 'GitHub production',
    field: 'token',
    host: 'api.example.com',
    subject: null,
  };
}

/** The append of the build before epochs: a sealed box per record (as its audit-log.ts did). */
function appendBoxed(tx: Tx, h: VaultHeader, e: AuditEvent): void {
  const head = tx.auditHead();
  const base = {
    seq: (head?.seq ?? 0) + 1,
    at: e.at,
    action: e.action,
    actor: e.actor,
    source: e.source,
    outcome: e.outcome,
    entryId: null,
    sealed: sealTo(
      h.auditPublicKey,
      Buffer.from(JSON.stringify({ entry: e.entry, field: e.field, entryId: e.entryId })),
    ),
    host: e.host,
    subject: e.subject,
    prev: head?.hash ?? Buffer.alloc(32),
  };
  tx.appendAudit({ ...base, hash: recordHash(base) });
}

/** Microseconds per record of appending `n` records in one write transaction, best of three stores. */
function appendCost(pair: KeyPair, n: number, append: typeof appendBoxed): number {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const dir = mkdtempSync(join(tmpdir(), 'vault-bench-audit-'));
    const store = Store.open(dir);
    try {
      const h: VaultHeader = {
        schema: SCHEMA_VERSION,
        vaultId: Buffer.alloc(16, 1),
        kdf: newKdfParams(),
        rootByOwner: Buffer.alloc(72),
        rootByRecovery: Buffer.alloc(72),
        indexKey: Buffer.alloc(72),
        auditPublicKey: pair.publicKey,
        auditSecretKey: Buffer.alloc(72),
        tiers: {},
        created: 0,
      };
      store.write((tx) => tx.putHeader(h));
      const t = process.hrtime.bigint();
      store.write((tx) => {
        for (let i = 0; i < n; i++) append(tx, h, event(i));
      });
      best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e3 / n);
    } finally {
      void store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return best;
}

function micro(): void {
  const owner = newKeyPair();
  const n = 4 * EPOCH_RECORDS;
  const box = perCall(n, () => sealTo(owner.publicKey, names));
  let epoch = SealEpoch.start(owner.publicKey, 0);
  const epochSeal = perCall(n, (i) => {
    if (epoch.sealed >= EPOCH_RECORDS) {
      epoch.wipe();
      epoch = SealEpoch.start(owner.publicKey, i);
    }
    epoch.seal(names, slot('audit-names', i));
  });
  const start = perCall(200, () => SealEpoch.start(owner.publicKey, 0).wipe());
  const ad = slot('audit-names', 1);
  const boxBlob = sealTo(owner.publicKey, names);
  const epochBlob = epoch.seal(names, ad);
  const openBox = perCall(n, () => openSealed(owner, boxBlob));
  const opener = new EpochOpener(owner);
  const openEpoch = perCall(n, () => opener.open(epoch.publicKey, epochBlob, ad));
  opener.wipe();
  epoch.wipe();

  endAuditEpoch();
  const appendBox = appendCost(owner, 2000, appendBoxed);
  const appendEpoch = appendCost(owner, 2000, (tx, h, e) => void appendAudit(tx, h, e));
  endAuditEpoch();
  // The owner's listing of 2,000 records of each form.
  const listed = (append: typeof appendBoxed) => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-bench-audit-'));
    const store = Store.open(dir);
    try {
      const h = { auditPublicKey: owner.publicKey } as VaultHeader;
      store.write((tx) => {
        for (let i = 0; i < 2000; i++) append(tx, h, event(i));
      });
      const records: AuditRecord[] = store.read((tx) => tx.audit());
      return perCall(1, () => viewAudit(records, owner)) / records.length;
    } finally {
      void store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const viewBox = listed(appendBoxed);
  const viewEpoch = listed((tx, h, e) => void appendAudit(tx, h, e));
  endAuditEpoch();

  const row = (what: string, before: number, after: number) =>
    console.log(
      `${what.padEnd(44)}${before.toFixed(2).padStart(10)}${after.toFixed(2).padStart(10)}${(before / after).toFixed(1).padStart(8)}x`,
    );
  console.log(`\nper record, µs (best of 5; epoch of ${EPOCH_RECORDS} records)`);
  console.log(`${''.padEnd(44)}${'box'.padStart(10)}${'epoch'.padStart(10)}${'gain'.padStart(9)}`);
  row('seal the names', box, epochSeal);
  row('append (seal, chain hash, LMDB puts), in one tx', appendBox, appendEpoch);
  row('owner opens the names (one record)', openBox, openEpoch);
  row('owner lists (audit, 2,000 records)', viewBox, viewEpoch);
  console.log(
    `${'start of an epoch (key pair, DH, hash)'.padEnd(44)}${''.padStart(10)}${start.toFixed(2).padStart(10)}`,
  );
}

// ---------------------------------------------------------------------------

interface HostFigures {
  cpuPerResolve: number;
  perSecond: number;
}

async function hostLoad(script: string): Promise<HostFigures> {
  const { root, env } = benchVault('vault-bench-seal-', {
    VAULT_HOST_IDLE_MS: '60000',
    VAULT_TEST_WEAK_KDF: '1',
  });
  try {
    cli(script, env, ['vault', 'create']);
    cli(script, env, ['entry', 'set', 'Bench', '--field', 'token'], 'bench-value');
    const token = cli(script, env, [
      'agent',
      'add',
      'bench',
      '--scope',
      'Bench',
      '--per-minute',
      '1000',
      '--per-hour',
      '1000',
    ]).trim();
    try {
      cli(script, env, liftValuesArgs('bench'));
    } catch (err) {
      if (!predatesValuesLimit((err as Error).message)) throw err;
    }
    const [pid] = hostProcesses(env.VAULT_DIR as string);
    if (pid === undefined) throw new Error('no host');
    const channel = new HostChannel({
      vaultDir: env.VAULT_DIR as string,
      daemon: { node: process.execPath, script, env },
      autoStart: false,
    });
    const body = { token, refs: [{ entry: 'Bench', field: 'token' }], host: 'localhost' };
    const burst = async (n: number) => {
      let left = n;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (left-- > 0) await channel.call('resolve', body);
        }),
      );
    };
    await burst(200); // warm
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    await burst(RESOLVES);
    const wall = performance.now() - t0;
    const cpu = cpuMs(pid) - cpu0;
    channel.close();
    cli(script, env, ['daemon', 'stop']);
    return { cpuPerResolve: cpu / RESOLVES, perSecond: (RESOLVES / wall) * 1000 };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
console.log(`node ${process.version}; load average before: ${load()}`);
micro();

const baseDir = mkdtempSync(join(tmpdir(), 'vault-bench-seal-base-'));
try {
  const baseline = buildBaseline(BASE, baseDir);
  const current = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const rows: [string, HostFigures][] = [];
  // Alternated, ROUNDS times each, so a change in the machine's load falls on both.
  for (let round = 0; round < ROUNDS; round++) {
    rows.push([`baseline ${BASE}`, await hostLoad(baseline)]);
    rows.push(['this tree', await hostLoad(current)]);
  }
  console.log(`\nhost under fill load: ${RESOLVES} resolves, 8 in flight, kept-alive connections`);
  console.log(
    `${'build'.padEnd(20)}${'host CPU ms/resolve'.padStart(22)}${'resolves/s'.padStart(12)}`,
  );
  for (const [name, f] of rows) {
    console.log(
      `${name.padEnd(20)}${f.cpuPerResolve.toFixed(3).padStart(22)}${f.perSecond.toFixed(0).padStart(12)}`,
    );
  }
  const median = (name: string) => {
    const xs = rows
      .filter(([n]) => n === name)
      .map(([, f]) => f.cpuPerResolve)
      .sort((a, b) => a - b);
    return xs[Math.floor(xs.length / 2)] ?? NaN;
  };
  const before = median(`baseline ${BASE}`);
  const after = median('this tree');
  console.log(
    `median host CPU per resolve: ${before.toFixed(3)} -> ${after.toFixed(3)} ms (${(((after - before) / before) * 100).toFixed(0)}%)`,
  );
} finally {
  rmSync(baseDir, { recursive: true, force: true });
}
console.log(`load average after: ${load()} (2 cores, shared)`);
