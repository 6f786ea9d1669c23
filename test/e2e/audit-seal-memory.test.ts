// What a dump of the host's memory gives for the audit log (issue 28): the
// host seals each record's names under its current epoch's key, so its memory
// holds that key, which opens the current epoch's names (the host saw those
// names anyway); an ended epoch's key is wiped, so nothing in the memory opens
// an earlier epoch's. Shown on a real host: enough fills to end one epoch by
// its record bound, then the host's writable memory read whole from
// /proc/<pid>/mem (as root, as a memory dump would be) and searched for each
// epoch's key, which the owner's audit key derives from the store.
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { after, test } from 'node:test';
import { HostChannel } from '../../src/client/channel.js';
import { unwrapKey } from '../../src/crypto/aead.js';
import { deriveEpochKey } from '../../src/crypto/audit-seal.js';
import { EPOCH_RECORDS } from '../../src/host/audit/names.js';
import { slots } from '../../src/host/keys/slots.js';
import type { VaultHeader } from '../../src/store/schema.js';
import { hostProcesses } from '../support/e2e-helpers.js';
import { readStore } from '../support/live-store.js';
import { ownerKeys } from '../support/offline.js';
import { CLI, PASSPHRASE, Rig } from '../support/rig.js';

const rig = new Rig();
after(() => rig.dispose());

const CHUNK = 8 * 1024 * 1024;

/**
 * Which of `needles` (32 bytes each) occur anywhere in the writable memory of
 * process `pid`; null when this process may not read it (not root, and
 * ptrace_scope keeps it from a process that is not its child).
 */
function inMemory(pid: number, needles: readonly Buffer[]): boolean[] | null {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/mem`, 'r');
  } catch {
    return null;
  }
  const found = needles.map(() => false);
  let scanned = 0;
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (r)(w)/.exec(line);
      if (m === null) continue;
      const start = parseInt(m[1] as string, 16);
      const end = parseInt(m[2] as string, 16);
      // A key straddling two chunks is found in the overlap.
      for (let at = start; at < end; at += CHUNK - 32) {
        const len = Math.min(CHUNK, end - at);
        const buf = Buffer.alloc(len);
        let n = 0;
        try {
          n = readSync(fd, buf, 0, len, at);
        } catch {
          continue; // a guard page or a mapping gone meanwhile
        }
        scanned += n;
        const seen = buf.subarray(0, n);
        needles.forEach((k, i) => {
          if (!found[i] && seen.includes(k)) found[i] = true;
        });
        if (len < CHUNK) break;
      }
    }
  } finally {
    closeSync(fd);
  }
  assert.ok(scanned > 1024 * 1024, `read ${scanned} bytes of the host's memory`);
  return found;
}

test('a dump of the host’s memory holds the current audit epoch’s key only: no ended epoch’s', async (t) => {
  await rig.create();
  await rig.set('Bench', 'bench-value', 'token');
  const token = (
    await rig.owner([
      'agent',
      'add',
      'bench',
      '--scope',
      'Bench',
      '--per-minute',
      '1000',
      '--per-hour',
      '1000',
      // More fills than an epoch holds, in seconds.
      '--values-per-minute',
      '100000',
    ])
  ).stdout.trim();
  const channel = new HostChannel({
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: rig.env },
    autoStart: false,
  });
  const body = { token, refs: [{ entry: 'Bench', field: 'token' }], host: 'localhost' };
  // Fills past one epoch's record bound, eight at a time, as a proxy sends them.
  let left = EPOCH_RECORDS + 16;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) await channel.call('resolve', body);
    }),
  );
  channel.close();

  const [pid] = hostProcesses(rig.vaultDir);
  assert.ok(pid !== undefined, 'the host runs');
  // The owner's side, offline: the audit key pair, then each epoch's key from its records.
  const { root } = await ownerKeys(rig.vaultDir, PASSPHRASE);
  const { header, epochs } = await readStore(rig.vaultDir, (tx) => ({
    header: tx.header() as VaultHeader,
    epochs: [...new Set(tx.audit().flatMap((r) => (r.epoch ? [r.epoch.toString('hex')] : [])))],
  }));
  const secretKey = unwrapKey(
    Buffer.from(root, 'hex'),
    header.auditSecretKey,
    slots.auditSecretKey(header.vaultId),
  );
  assert.ok(secretKey !== null);
  const pair = { publicKey: header.auditPublicKey, secretKey };
  assert.ok(epochs.length >= 2, `${epochs.length} epochs: one ended by its record bound`);
  const keys = epochs.map((e) => deriveEpochKey(pair, Buffer.from(e, 'hex')) as Buffer);

  const found = inMemory(pid, keys);
  if (found === null) {
    t.skip('this process may not read the host’s memory (run as root)');
    return;
  }
  // The control: the scan finds the key the host holds now.
  assert.equal(found.at(-1), true, 'the current epoch’s key is in the host’s memory');
  assert.deepEqual(
    found.slice(0, -1),
    keys.slice(0, -1).map(() => false),
    'no ended epoch’s key is in the host’s memory',
  );
});
