// The agent name rows, written by a same-user agent (issue 24): `agent-name/<name>`
// is under no MAC, so a by-name lookup checks the record's own (MACed) name,
// `vault check` cross-checks the rows, and `agent revoke` reaches an agent by
// id and revokes it even when rotating what it held fails.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Tx } from '../../src/store/tx.js';
import { assertRefused } from '../support/e2e-helpers.js';
import { readStore, writeStore } from '../support/live-store.js';
import { installBin, underPty } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
const tokens = new Map<string, string>();

before(async () => {
  await rig.create();
  await rig.set('GitHub', 'value-github');
  await rig.set('Payroll', 'value-payroll');
  await rig.set('Notes', 'value-notes');
  const limits = ['--per-minute', '100', '--per-hour', '100'];
  tokens.set('claude', await rig.addAgent('claude', ['GitHub'], limits));
  tokens.set('admin', await rig.addAgent('admin', ['Payroll'], limits));
  tokens.set('helper', await rig.addAgent('helper', ['GitHub'], limits));
  tokens.set('writer', await rig.addAgent('writer', ['Notes'], limits));
  installBin(rig);
});
after(() => rig.dispose());

/** One write transaction on the live store, as the agent (same OS user) makes it. */
const tamper = (fn: (tx: Tx) => void): Promise<void> => writeStore(rig.vaultDir, fn);

const agentIds = (): Promise<Map<string, string>> =>
  readStore(rig.vaultDir, (tx) => new Map(tx.agents().map((a) => [a.name, a.id])));

interface Listed {
  id: string;
  name: string;
  state: string;
}
async function listed(): Promise<Listed[]> {
  return JSON.parse(ok(await rig.owner(['agent', 'ls', '--json']))) as Listed[];
}

test('a name row pointed at another agent: run, show, scope, limits, lock and revoke refuse with VLT-3021; check names the row', async () => {
  const ids = await agentIds();
  await tamper((tx) => tx.putAgentName('claude', ids.get('admin') as string));
  // Before: the owner's `run --agent claude` minted a session of admin, which read Payroll.
  const r = await underPty(rig, [
    'run',
    '--no-sandbox',
    '--agent',
    'claude',
    '--',
    'sh',
    '-c',
    'vault-cli get Payroll',
  ]).exited;
  assert.notEqual(r.exitCode, 0);
  assert.match(r.output, /VLT-3021/);
  assert.doesNotMatch(r.output, /value-payroll/);
  for (const args of [
    ['agent', 'show', 'claude'],
    ['agent', 'scope', 'claude', '--add', 'Payroll'],
    ['agent', 'limits', 'claude', '--per-minute', '5'],
    ['agent', 'lock', 'claude'],
    ['agent', 'revoke', 'claude'],
  ]) {
    const msg = assertRefused(await rig.owner(args), 'VLT-3021', args.join(' '));
    assert.match(msg, /agent revoke --id/);
  }
  // admin was touched by none of it.
  const admin = (await listed()).find((a) => a.name === 'admin');
  assert.equal(admin?.state, 'active');
  assert.equal(ok(await rig.agent(['get', 'Payroll'], tokens.get('admin'))), 'value-payroll\n');
  // `vault check` names the row.
  const check = await rig.owner(['vault', 'check']);
  assert.notEqual(check.code, 0);
  assert.match(check.stderr, /VLT-3022: agent-name "claude": .*"admin"/);
  // The owner reaches claude by id.
  const claude = (await listed()).find((a) => a.name === 'claude');
  assert.ok(claude);
  assert.equal(claude.id, ids.get('claude'));
  ok(await rig.owner(['agent', 'revoke', '--id', claude.id]));
  assertRefused(await rig.agent(['get', 'GitHub'], tokens.get('claude')), 'VLT-2040');
  assert.equal(ok(await rig.agent(['get', 'Payroll'], tokens.get('admin'))), 'value-payroll\n');
  // The row it left (pointing at admin) is the owner's to clear: check still says so.
  await tamper((tx) => tx.removeAgentName('claude'));
});

test('an agent that deletes its own name row is still found: revoke by name says VLT-3021, by id revokes', async () => {
  await tamper((tx) => tx.removeAgentName('helper'));
  const msg = assertRefused(await rig.owner(['agent', 'revoke', 'helper']), 'VLT-3021');
  assert.match(msg, /helper/);
  const helper = (await listed()).find((a) => a.name === 'helper');
  assert.ok(helper);
  assert.equal(helper.state, 'active');
  const check = await rig.owner(['vault', 'check']);
  assert.match(check.stderr, /VLT-3032: agent "helper": The agent name index/);
  ok(await rig.owner(['agent', 'revoke', '--id', helper.id]));
  assertRefused(await rig.agent(['get', 'GitHub'], tokens.get('helper')), 'VLT-2040');
  assert.equal(
    (await listed()).find((a) => a.name === 'helper'),
    undefined,
  );
});

test('a field generation bumped in its scope: revoke still revokes, then names the entry it could not rotate', async () => {
  await tamper((tx) => {
    const e = tx
      .entries()
      .find((x) => tx.agents().some((a) => a.name === 'writer' && a.scope.includes(x.id)));
    assert.ok(e);
    for (const f of tx.fieldRecords(e.id))
      tx.putField(e.id, f.key, { ...f.record, gen: f.record.gen + 1 });
  });
  const r = await rig.owner(['agent', 'revoke', 'writer']);
  const msg = assertRefused(r, 'VLT-3020');
  assert.match(
    msg,
    /^Agent writer is revoked, but an entry it held was not rotated: "Notes" \(VLT-3020\)/,
  );
  assertRefused(await rig.agent(['get', 'Notes'], tokens.get('writer')), 'VLT-2040');
  assert.equal(
    (await listed()).find((a) => a.name === 'writer'),
    undefined,
  );
  // The owner repairs the entry by setting it; it is then rotated as queued.
  await rig.set('Notes', 'value-notes-2');
  ok(await rig.owner(['agent', 'ls']));
});

test('the name row revoke --id leaves behind (moved to another agent) does not block adding that name again', async () => {
  const limits = ['--per-minute', '100', '--per-hour', '100'];
  await rig.addAgent('coder', ['GitHub'], limits);
  const reviewer = await rig.addAgent('reviewer', ['GitHub'], limits);
  const ids = await agentIds();
  const [coderId, reviewerId] = [ids.get('coder') as string, ids.get('reviewer') as string];
  await tamper((tx) => tx.putAgentName('coder', reviewerId));
  ok(await rig.owner(['agent', 'revoke', '--id', coderId]));
  // The row is not revoked coder's own, so revoke left it where it was moved.
  assert.equal(await readStore(rig.vaultDir, (tx) => tx.agentIdByName('coder')), reviewerId);
  const fresh = await rig.addAgent('coder', ['GitHub'], limits);
  assert.equal(ok(await rig.agent(['get', 'GitHub'], fresh)), 'value-github\n');
  const coder = (await listed()).find((a) => a.name === 'coder');
  assert.ok(coder);
  assert.notEqual(coder.id, coderId);
  assert.notEqual(coder.id, reviewerId);
  assert.equal(await readStore(rig.vaultDir, (tx) => tx.agentIdByName('coder')), coder.id);
  assert.match(ok(await rig.owner(['agent', 'show', 'coder'])), /GitHub/);
  // reviewer keeps its name and its reads.
  assert.equal(ok(await rig.agent(['get', 'GitHub'], reviewer)), 'value-github\n');
  assert.equal((await listed()).find((a) => a.name === 'reviewer')?.id, reviewerId);
});
