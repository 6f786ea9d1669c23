// A remote agent (a machine with no host of its own) reads from a team host
// over TCP with TLS: the value arrives, the audit record names the peer's IP
// address, owner commands are refused there (VLT-3044), and a client that
// does not trust the host's certificate sends nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords, disposeAll, hex } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { ok, Rig, runCli, terminate } from '../support/rig.js';
import { startSshAgentProcess } from '../support/ssh-agent.js';
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

// A CI job with no host of its own signs with an SSH key that stays in the
// team vault: `vault-cli ssh-agent` over TLS lists the key and has the host
// sign (ssh.keys and ssh.sign, agent operations like read), audited with the
// peer's address. Before, the listener refused both (VLT-3044) and the agent
// could not start.
test('a remote agent signs over TLS with an SSH key that stays in the vault', async () => {
  const a = new Rig();
  rigs.push(a);
  ok(await a.owner(['vault', 'create', '--store', pg.database().url]));
  const keyFile = join(a.root, 'deploy');
  const gen = spawnSync('ssh-keygen', [
    '-q',
    '-t',
    'ed25519',
    '-N',
    '',
    '-C',
    'deploy',
    '-f',
    keyFile,
  ]);
  assert.equal(gen.status, 0, String(gen.stderr));
  ok(await a.owner(['entry', 'import-ssh', 'deploy', keyFile]));
  rmSync(keyFile);
  const token = await a.addAgent('ci-signer', ['deploy']);
  await a.stop();
  const { remoteEnv: remote } = await listenTls(a);
  ok(await a.owner(['agent', 'show', 'ci-signer']));

  const { child, sock } = await startSshAgentProcess(a, token, ['deploy'], remote);
  try {
    const env = { PATH: process.env.PATH, HOME: a.root, SSH_AUTH_SOCK: sock };
    const listed = spawnSync('ssh-add', ['-L'], { env, encoding: 'utf8' });
    assert.equal(listed.status, 0, listed.stderr);
    // Type and key as in the .pub file; the comment is the vault reference.
    const keyOf = (line: string) => line.trim().split(' ').slice(0, 2).join(' ');
    assert.equal(keyOf(listed.stdout), keyOf(readFileSync(`${keyFile}.pub`, 'utf8')));
    const message = join(a.root, 'release.txt');
    writeFileSync(message, 'v1.2.3\n');
    const signed = spawnSync(
      'ssh-keygen',
      ['-Y', 'sign', '-f', `${keyFile}.pub`, '-n', 'file', message],
      {
        env,
        encoding: 'utf8',
      },
    );
    assert.equal(signed.status, 0, signed.stderr);
    const checked = spawnSync(
      'ssh-keygen',
      ['-Y', 'check-novalidate', '-n', 'file', '-s', `${message}.sig`],
      { env, encoding: 'utf8', input: readFileSync(message) },
    );
    assert.equal(checked.status, 0, checked.stderr);
  } finally {
    await terminate(child);
  }
  const signs = (await auditRecords(a)).filter((r) => r.action === 'ssh_sign');
  assert.equal(signs.length, 1);
  assert.equal(signs[0]?.source, 'ip:127.0.0.1');
});
