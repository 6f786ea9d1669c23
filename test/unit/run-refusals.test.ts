// run's lines for its proxy's refusals: one each, at most one a second per code, the rest counted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refusalReport } from '../../src/cli/run/refusals.js';
import { formatTime, localTimes } from '../../src/core/audit.js';
import { VaultError } from '../../src/core/errors.js';

function rig() {
  const lines: string[] = [];
  let t = 10_000;
  const report = refusalReport(
    (l) => lines.push(l),
    () => t,
  );
  return { lines, report, advance: (ms: number) => (t += ms) };
}

test('each refusal is one line naming its code and message', () => {
  const { lines, report } = rig();
  report.refused(new VaultError('VLT-2053', 'Not on this machine: 127.0.0.1:9.'));
  report.refused(new VaultError('VLT-2045'));
  assert.deepEqual(lines, [
    'vault-cli: the proxy refused: VLT-2053: Not on this machine: 127.0.0.1:9.',
    'vault-cli: the proxy refused: VLT-2045: Destination host not allowed for this credential.',
  ]);
});

test('a code repeated within a second is counted, and the count comes with its next line', () => {
  const { lines, report, advance } = rig();
  for (let i = 0; i < 5; i++) report.refused(new VaultError('VLT-2041'));
  assert.equal(lines.length, 1);
  advance(999);
  report.refused(new VaultError('VLT-2041'));
  assert.equal(lines.length, 1);
  advance(1);
  // (The same line again would only be counted: the test below.)
  report.refused(new VaultError('VLT-2041', 'Access denied: vault://Y/z.'));
  assert.deepEqual(lines.slice(1), [
    'vault-cli: the proxy refused: VLT-2041: Access denied: vault://Y/z. (5 more before it)',
  ]);
});

test('held while the dashboard shows: counted into the next line of the code, or the flush at the end', () => {
  const { lines, report, advance } = rig();
  report.hold();
  report.refused(new VaultError('VLT-2053'));
  report.refused(new VaultError('VLT-2053'));
  report.refused(new VaultError('VLT-2042'));
  assert.deepEqual(lines, []);
  report.resume();
  assert.deepEqual(lines, []);
  advance(5_000);
  report.refused(new VaultError('VLT-2053'));
  assert.deepEqual(lines, [
    `vault-cli: the proxy refused: VLT-2053: ${new VaultError('VLT-2053').message} (2 more before it)`,
  ]);
  report.flush();
  assert.deepEqual(lines.slice(1), ['vault-cli: the proxy refused 1 more with VLT-2042']);
  report.flush();
  assert.equal(lines.length, 2);
});

test('one violation reads as one: the same refusal again (a client retrying it) is counted, not shown again', () => {
  const { lines, report, advance } = rig();
  const violation = new VaultError(
    'VLT-2042',
    'Rate limit exceeded (minute); violation recorded; retry after 2026-11-29T07:27:41.444Z.',
  );
  report.refused(violation);
  advance(2_000);
  report.refused(violation);
  advance(2_000);
  report.refused(violation);
  assert.deepEqual(lines, [
    `vault-cli: the proxy refused: ${localTimes(violation.line().slice(11))}`,
  ]);
  // Another refusal of the code is shown, with the repeats counted before it.
  report.refused(new VaultError('VLT-2042', 'Rate limit exceeded (minute); no new violation.'));
  assert.match(lines[1] ?? '', /no new violation\. \(2 more before it\)$/);
  report.flush();
  assert.equal(lines.length, 2);
});

test('the agent’s own traffic (no reference, no proxy token) is not shown, only counted in one line at the end', () => {
  const { lines, report } = rig();
  report.refused(new VaultError('VLT-2040'), false);
  report.refused(new VaultError('VLT-3008', 'Upstream github.com:443: ENOTFOUND.'), false);
  report.refused(new VaultError('VLT-3008', 'Upstream ab.chatgpt.com:443: ENOTFOUND.'), false);
  assert.deepEqual(lines, []);
  // A refusal of the vault's with the same code is still shown.
  report.refused(new VaultError('VLT-3008', 'Upstream api.example.com:443: ECONNREFUSED.'));
  assert.equal(lines.length, 1);
  report.flush();
  assert.deepEqual(lines.slice(1), [
    "vault-cli: not shown: 3 requests with no vault reference failed at the proxy (VLT-2040 1, VLT-3008 2): the agent's own traffic (docs/run.md)",
  ]);
  report.flush();
  assert.equal(lines.length, 2);
});

test('a retry time is told in local time to the second, as get tells it, not as the reply’s UTC ISO', () => {
  const { lines, report } = rig();
  const at = Date.UTC(2030, 0, 1, 12, 0, 30, 250);
  report.refused(
    new VaultError(
      'VLT-2042',
      `Rate limit exceeded (minute); violation recorded; retry after ${new Date(at).toISOString()}.`,
    ),
  );
  assert.deepEqual(lines, [
    `vault-cli: the proxy refused: VLT-2042: Rate limit exceeded (minute); violation recorded; retry after ${formatTime(at + 750)}.`,
  ]);
});
