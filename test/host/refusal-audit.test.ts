// The coalescing rules of src/host/audit/refusals.ts on a real store, with the
// host's clock injected: full records, the marker, counts written when the
// next refusal of a kind comes after its window, and the group budget of a
// shell loop. test/attack/audit-flood.test.ts drives the same through processes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { UNKNOWN_ACTOR, agentActor, type AuditView } from '../../src/core/audit.js';
import { Secret } from '../../src/crypto/secret.js';
import { accessEvent } from '../../src/host/audit/event.js';
import { viewAudit } from '../../src/host/audit/log.js';
import { HostContext } from '../../src/host/context.js';
import { createVault, unlockOwner } from '../../src/host/owner/keys.js';
import {
  FULL_PER_WINDOW,
  REFUSAL_WINDOW_MS,
  SOURCES_PER_WINDOW,
  auditRefusal,
  groupOf,
  refusalsOf,
} from '../../src/host/audit/refusals.js';

const root = mkdtempSync(join(tmpdir(), 'vault-cli-refusals-'));
let now = 1_800_000_000_000;
const ctx = new HostContext(join(root, 'vault'), () => now);
const pass = () => Secret.fromString('correct horse battery staple');

before(async () => {
  await createVault(ctx, pass(), 'test', true);
});
after(async () => {
  await ctx.close();
  rmSync(root, { recursive: true, force: true });
});

function refuse(source: string, actor = UNKNOWN_ACTOR): void {
  const header = ctx.store().read((tx) => ctx.header(tx));
  auditRefusal(ctx, header, accessEvent(ctx, 'denied', 'VLT-2040', actor, source));
}

async function log(): Promise<AuditView[]> {
  const s = await unlockOwner(ctx, pass());
  return viewAudit(
    ctx.store().read((tx) => tx.audit()),
    s.auditKeys(),
  );
}

const countOf = (r: AuditView) => Number(/^\((\d+) more refusal/.exec(r.entry ?? '')?.[1] ?? 1);
const shape = (r: AuditView) =>
  r.entry === null ? 'full' : r.entry.startsWith('(further') ? 'marker' : `count ${countOf(r)}`;

test('groupOf leaves the pid out, and nothing else', () => {
  assert.equal(groupOf('pid:123 uid:1000'), 'pid:* uid:1000');
  assert.equal(groupOf('sandbox pid:9 uid:0'), 'sandbox pid:* uid:0');
  assert.equal(groupOf('local'), 'local');
});

test('one source: in full, a marker, then counted; the count written when the next window opens', async () => {
  const start = (await log()).length;
  const src = 'pid:4242 uid:1000';
  for (let i = 0; i < FULL_PER_WINDOW + 1 + 50; i++) {
    now += 10;
    refuse(src);
  }
  // Another agent's refusal from the same process is another kind: in full.
  refuse(src, agentActor('other'));
  now += REFUSAL_WINDOW_MS;
  refuse(src);
  const mine = (await log()).slice(start).filter((r) => r.source === src);
  assert.deepEqual(mine.map(shape), [
    ...Array.from({ length: FULL_PER_WINDOW }, () => 'full'),
    'marker',
    'full', // cli:other
    'count 50',
    'full', // the new window's first
  ]);
  assert.equal(mine[4]?.actor, 'cli:other');
});

test('a shell loop: SOURCES_PER_WINDOW pids in full, the rest counted under the group', async () => {
  now += 2 * REFUSAL_WINDOW_MS;
  const start = (await log()).length;
  const pids = SOURCES_PER_WINDOW + 20;
  for (let p = 0; p < pids; p++) {
    now += 1;
    refuse(`pid:${10_000 + p} uid:1001`);
  }
  // A process of another user is another group: in full.
  refuse('pid:99 uid:1002');
  refusalsOf(ctx).flush();
  const fresh = (await log()).slice(start);
  const loop = fresh.filter((r) => r.source.endsWith('uid:1001'));
  assert.equal(loop.filter((r) => r.source !== 'pid:* uid:1001').length, SOURCES_PER_WINDOW);
  assert.deepEqual(loop.filter((r) => r.source === 'pid:* uid:1001').map(shape), [
    'marker',
    `count ${pids - SOURCES_PER_WINDOW - 1}`,
  ]);
  assert.equal(
    loop.reduce((n, r) => n + countOf(r), 0),
    pids,
  );
  assert.deepEqual(fresh.filter((r) => r.source === 'pid:99 uid:1002').map(shape), ['full']);
});
