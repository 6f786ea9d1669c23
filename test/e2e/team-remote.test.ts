// A remote agent (a machine with no host of its own) reads from a team host
// over TCP with TLS: the value arrives, the audit record names the peer's IP
// address, owner commands are refused there (VLT-3044), and a client that
// does not trust the host's certificate sends nothing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, disposeAll, hex } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { ok, Rig, runCli } from '../support/rig.js';
import { certificate, listenTls } from '../support/team-tls.js';

let pg: Postgres;
const rigs: Rig[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const rig of rigs) await disposeAll(rig);
  await pg?.stop();
});

test('a remote agent reads over TLS; its record names its IP; owner commands and untrusted certificates are refused', async () => {
  const db = pg.database();
  const a = new Rig();
  rigs.push(a);
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const value = `remote-${hex()}`;
  await a.set('db', value);
  const token = await a.addAgent('ci-job', ['db']);
  await a.stop();
  const { remoteEnv: remote } = await listenTls(a);
  ok(await a.owner(['agent', 'show', 'ci-job'])); // the host again, now listening on TCP too

  const got = await runCli(['get', 'db'], { ...remote, VAULT_TOKEN: token });
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stdout, `${value}\n`);

  const records = ok(await a.owner(['audit', '--json']))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { action: string; outcome: string; source: string });
  const read = records.filter((r) => r.action === 'ai_read' && r.outcome === 'ok');
  assert.equal(read.length, 1);
  assert.equal(read[0]?.source, 'ip:127.0.0.1');

  // Owner commands stay on the Unix socket.
  const passphraseFile = join(a.root, 'passphrase');
  assertRefused(
    await runCli(['audit'], { ...remote, VAULT_PASSPHRASE_FILE: passphraseFile }),
    'VLT-3044',
    'owner over TCP',
  );

  // A client that does not trust the host's certificate sends nothing and gets nothing.
  const other = certificate(a.root, 'impostor');
  const untrusted = await runCli(['get', 'db'], {
    ...remote,
    VAULT_HOST_CA: other.cert,
    VAULT_TOKEN: token,
  });
  assert.notEqual(untrusted.code, 0);
  assert.equal(untrusted.stdout, '');
  const after = ok(await a.owner(['audit', '--json']));
  assert.equal(after.split('\n').filter((l) => l.includes('"ai_read"')).length, 1);
});
