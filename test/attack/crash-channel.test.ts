// The host SIGKILLed while the proxy has many resolves in flight on its framed
// channel (issue 28), read by the host together and committed in groups: every
// value the upstream received has its durable audit record once a new host
// reads the store, and every request in flight is answered with a clean
// refusal (VLT-3005), none left hanging.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { disposeAll, hostPid, waitGone } from '../support/e2e-helpers.js';
import { makeTestCa, startProxy, Tunnel, Upstream } from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const ENTRIES = Array.from({ length: 4 }, (_, i) => `E${i}`);
/** Requests in flight at once: enough that the host reads and commits them in groups. */
const CONCURRENCY = 16;
/** How long one request may take before it counts as hung: far beyond any answer. */
const HUNG_MS = 60_000;

const rig = new Rig();
after(() => disposeAll(rig));

test('SIGKILL of the host with many fills in flight on the proxy’s channel: every value the upstream got is audited, every request in flight answered', async (t) => {
  await rig.create();
  const valueOf = new Map(ENTRIES.map((e) => [`value-of-${e}-${process.pid}`, e]));
  for (const [value, e] of valueOf) await rig.set(e, value, 'token');
  const token = await rig.addAgent('filler', ENTRIES, [
    '--per-minute',
    '100000',
    '--per-hour',
    '100000',
  ]);
  const ca = makeTestCa(rig.root);
  const up = await Upstream.start(ca);
  // The subject is the host's channel: a restart under load can take longer
  // than Node's 5 s keep-alive, and an upstream closing a kept connection as
  // the proxy reuses it is another story (VLT-3008).
  up.keepAliveTimeout = 120_000;
  const proxy = await startProxy(rig, token, ca);
  const ourCa = readFileSync(ok(await rig.agent(['proxy', 'ca'], token)).trim(), 'utf8');
  const target = `localhost:${up.port}`;
  try {
    const pid = await hostPid(rig);
    let filled = 0;
    let stop = false;
    const refused: string[] = [];
    let sent = 0;
    const worker = async (w: number) => {
      let tunnel = await Tunnel.open(proxy.port, target, ourCa, null);
      while (!stop) {
        const entry = ENTRIES[sent++ % ENTRIES.length] as string;
        tunnel.send(
          `GET /${w} HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer vault://${entry}/token\r\n\r\n`,
        );
        let timer: NodeJS.Timeout | undefined;
        const hung = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`request to ${entry} hung`)), HUNG_MS);
        });
        const r = await Promise.race([tunnel.reply(), hung]).finally(() => clearTimeout(timer));
        if (r.status === 200) filled++;
        else {
          // A clean refusal: the proxy's status and the host's code, not a cut connection.
          assert.equal(r.status, 502, r.head);
          refused.push(r.body + r.head);
        }
        // The proxy closes a connection after its refusal: the next request goes on a new one.
        if (r.status !== 200 || tunnel.closed) {
          tunnel = await Tunnel.open(proxy.port, target, ourCa, null);
        }
      }
    };
    const workers = Array.from({ length: CONCURRENCY }, (_, w) => worker(w));
    // Killed once fills run at full speed, with requests in flight.
    while (filled < 200) await new Promise((r) => setTimeout(r, 10));
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid), 'the host survived SIGKILL');
    const atKill = filled;
    // The proxy starts a new host and fills go on.
    while (filled < atKill + 100) await new Promise((r) => setTimeout(r, 10));
    stop = true;
    await Promise.all(workers);

    for (const text of refused) assert.equal(/VLT-\d{4}/.exec(text)?.[0], 'VLT-3005', text);
    const received = new Map<string, number>();
    for (const auth of up.header('authorization')) {
      const entry = valueOf.get(auth.replace(/^Bearer /, ''));
      assert.ok(entry !== undefined, `the upstream got ${auth.slice(0, 20)}`);
      received.set(entry, (received.get(entry) ?? 0) + 1);
    }
    assert.notEqual(await hostPid(rig), pid);
    const records = ok(await rig.owner(['audit', '--agent', 'filler', '--json']))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; entry: string });
    for (const e of ENTRIES) {
      const audited = records.filter((r) => r.action === 'fill' && r.entry === e).length;
      const got = received.get(e) ?? 0;
      assert.ok(audited >= got, `${e}: the upstream got ${got}, ${audited} audited`);
    }
    assert.match(ok(await rig.owner(['audit', '--verify'])), /^audit chain verified: /);
    t.diagnostic(
      `${filled} filled (${atKill} before the kill), ${refused.length} in flight refused with VLT-3005, ` +
        `${up.header('authorization').length} values upstream, each audited`,
    );
  } finally {
    await proxy.stop();
    await up.close();
  }
});
