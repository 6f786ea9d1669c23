// One host start for many calls at once. With no host running, every call a
// process makes finds none; each used to start its own `vault-cli daemon`,
// and all but one of those found the lock taken and exited: a burst of fills
// through one proxy started twenty processes for one host. Calls in one
// process now share one start; across processes the host's own lock keeps
// one host (host.test.ts).
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  alive,
  auditRecords,
  hex,
  hostProcesses,
  settleHosts,
  disposeAll,
} from '../support/e2e-helpers.js';
import { Tunnel, proxyBench, type ProxyBench } from '../support/proxy.js';
import { Rig } from '../support/rig.js';

/** The pids that wrote to host.log past `from` (every daemon started logs a line: serving, or why not). */
function loggedHosts(vaultDir: string, from: number): Set<number> {
  const log = readFileSync(join(vaultDir, 'host.log')).subarray(from).toString('utf8');
  return new Set([...log.matchAll(/vault-host\[([0-9]+)\]/g)].map((m) => Number(m[1])));
}

describe('host start: many calls at once, one daemon', () => {
  const rig = new Rig();
  const secret = `start-once-${hex(8)}`;
  let bench: ProxyBench;
  let ourCa: string;

  before(async () => {
    bench = await proxyBench(rig, async () => {
      await rig.create();
      await rig.set('API', secret, 'token');
      return rig.addAgent('web', ['API'], ['--per-minute', '1000', '--per-hour', '1000']);
    });
    ourCa = readFileSync(bench.ourCa, 'utf8');
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(bench?.proxy.stderr());
    await bench?.close();
    await disposeAll(rig);
  });

  test('20 fills at once through one proxy with no host running: one daemon started, it stays, every fill answered and audited once', async () => {
    const fillsBefore = (await auditRecords(rig)).filter((r) => r.action === 'fill').length;
    await rig.stop();
    assert.deepEqual(await settleHosts(rig.vaultDir, 0), [], 'no host runs');
    const from = statSync(join(rig.vaultDir, 'host.log')).size;

    const target = `localhost:${bench.up.port}`;
    const replies = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const t = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
        t.send(
          `GET /burst/${i} HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer vault://API/token\r\n\r\n`,
        );
        const r = await t.reply();
        await t.close();
        return r;
      }),
    );
    for (const r of replies) {
      assert.equal(r.status, 200, r.body);
      assert.equal(r.body, 'you sent: Bearer vault://API/token\n');
    }
    const burst = bench.up.seen.filter((s) => s.url.startsWith('/burst/'));
    assert.equal(burst.length, 20);
    for (const s of burst) assert.ok(s.rawHeaders.includes(`Bearer ${secret}`));

    // Daemons that lost the lock would be gone (and have logged why) by now.
    const left = await settleHosts(rig.vaultDir, 1);
    assert.equal(left.length, 1, `one host serves (${left.join(', ')})`);
    const started = loggedHosts(rig.vaultDir, from);
    for (const pid of hostProcesses(rig.vaultDir)) started.add(pid);
    assert.deepEqual([...started], left, 'the one daemon started is the one that serves');
    assert.ok(alive(left[0] as number));

    const fills = (await auditRecords(rig)).filter((r) => r.action === 'fill').length;
    assert.equal(fills - fillsBefore, 20, 'each fill audited once');
  });
});
