// Scope changes reach live `run` sessions (issue 23): the owner widens an
// agent's scope while its session lives and the session reads the new entry
// at once, with no refusal and no violation; a session started with --scope
// keeps its narrower scope; narrowing takes the entry from the session, and
// from its keys in the store too (the offline attacker of test/support/offline.ts).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { copyStore, tokenLoot } from '../support/offline.js';
import { installBin, underPty, until, type PtyRun } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();

before(async () => {
  await rig.create();
  await rig.set('Old', 'value-Old');
  await rig.set('New', 'value-New');
  installBin(rig);
});
after(() => rig.dispose());

/**
 * The script of a supervised agent: says `marker`, waits for a line typed on
 * its terminal (the test types it once the owner's change has committed), then
 * reads `entry` and prints the status and the value.
 */
function readAfterGo(marker: string, entry: string, tokenFile = '/dev/null'): string {
  return (
    `printf %s "$VAULT_TOKEN" > ${JSON.stringify(tokenFile)}; echo ${marker}; read go; ` +
    `v=$(vault-cli get ${JSON.stringify(entry)}); echo "status=$? value=[$v]"`
  );
}

/** Waits for the child's marker, runs the owner's command, then lets the child go on. */
async function meanwhile(run: PtyRun, marker: string, owner: readonly string[]): Promise<void> {
  await until(() => run.output().includes(marker), 'the supervised child');
  ok(await rig.owner(owner));
  for (const ch of 'go\r') run.pty.write(ch);
}

/**
 * The agent's refused reads in the audit log (those that name an entry: the
 * refusal `run` causes on its way out, issue 23's "clean ends", is not ours).
 */
async function refusedReads(agent: string) {
  return (await auditRecords(rig)).filter(
    (r) => r.actor === `cli:${agent}` && r.outcome !== 'ok' && r.entry !== null,
  );
}

test('widening the agent’s scope reaches its live session: the new entry is read at once, no refusal, no violation', async () => {
  await rig.addAgent('wide', ['Old']);
  const marker = `ready-${hex(4)}`;
  const run = underPty(rig, [
    'run',
    '--agent',
    'wide',
    '--',
    'sh',
    '-c',
    readAfterGo(marker, 'New'),
  ]);
  await meanwhile(run, marker, ['agent', 'scope', 'wide', '--add', 'New']);
  const r = await run.exited;
  assert.match(r.output, /status=0 value=\[value-New\]/);
  assert.equal(r.exitCode, 0, r.output);
  assert.deepEqual(await refusedReads('wide'), []);
  const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'wide', '--json']))) as {
    state: string;
    violations: unknown[];
  };
  assert.equal(shown.state, 'active');
  assert.deepEqual(shown.violations, []);
});

test('a session started with --scope keeps its narrower scope when the agent is widened', async () => {
  await rig.addAgent('narrow', ['Old']);
  const marker = `ready-${hex(4)}`;
  const run = underPty(rig, [
    'run',
    '--agent',
    'narrow',
    '--scope',
    'Old',
    '--',
    'sh',
    '-c',
    readAfterGo(marker, 'New'),
  ]);
  await meanwhile(run, marker, ['agent', 'scope', 'narrow', '--add', 'New']);
  const r = await run.exited;
  assert.match(r.output, /VLT-2041/);
  assert.match(r.output, /status=77 value=\[\]/);
  assert.doesNotMatch(r.output, /value-New/);
});

test('a session’s key pair opens the widened entry, and nothing of an entry it lost, from a store copy', async () => {
  await rig.addAgent('keys', ['Old']);
  const leak = join(rig.root, `leak-${hex(4)}`);
  mkdirSync(leak, { recursive: true });
  const tokenFile = join(leak, 'token');
  const marker = `ready-${hex(4)}`;
  const run = underPty(rig, [
    'run',
    '--agent',
    'keys',
    '--',
    'sh',
    '-c',
    readAfterGo(marker, 'Old', tokenFile),
  ]);
  await until(() => run.output().includes(marker), 'the supervised child');
  const session = readFileSync(tokenFile, 'utf8');
  assert.match(session, /^vlt_/);

  ok(await rig.owner(['agent', 'scope', 'keys', '--add', 'New']));
  const widened = await tokenLoot(copyStore(rig.vaultDir, rig.root), session);
  assert.deepEqual(widened.values, ['value-New', 'value-Old']);

  ok(await rig.owner(['agent', 'scope', 'keys', '--rm', 'Old']));
  const narrowed = await tokenLoot(copyStore(rig.vaultDir, rig.root), session);
  assert.deepEqual(narrowed.values, ['value-New']);
  assert.equal(narrowed.indexRows, 1);

  for (const ch of 'go\r') run.pty.write(ch);
  const r = await run.exited;
  assert.match(r.output, /VLT-2041/);
  assert.match(r.output, /status=77 value=\[\]/);
  assert.doesNotMatch(r.output, /value-Old/);
});
