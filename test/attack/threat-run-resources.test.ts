// docs/threat-model.md, the `run` column of rows on shared resources: a
// prompt-injected agent with a shell inside `vault-cli run` tries, through
// its session's socket (the only way to the host it has), to grow the host's
// memory with large half-sent bodies, and to fill the disk with refusals
// (asking again and again for an entry out of its scope, then with a
// garbage token), and to open the proxy's framed channel on it.
// Either way it starves only itself: the owner and another agent are served
// all along, the host's memory and the store stay bounded, and the chain
// verifies. Real host, real `run` with its sandbox, real Python inside.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hex, hostPid } from '../support/e2e-helpers.js';
import { installBin, said, underPty, until } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';

const MiB = 1024 * 1024;
const rig = new Rig();
const otherSecret = `other-${hex(12)}`;
let otherToken = '';

/** The resident set of a process, from /proc. */
function rss(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(line?.[1] !== undefined);
  return Number(line[1]) * 1024;
}

const storeBytes = () => statSync(join(rig.vaultDir, 'vault.mdb')).size;

before(async () => {
  await rig.create();
  await rig.set('Mine', `mine-${hex(8)}`);
  await rig.set('Payroll', `payroll-${hex(8)}`);
  await rig.set('Other', otherSecret);
  await rig.addAgent('bodies', ['Mine'], ['--per-minute', '100', '--per-hour', '100']);
  await rig.addAgent('asker', ['Mine']);
  await rig.addAgent('looper', ['Mine']);
  otherToken = await rig.addAgent('other', ['Other']);
  installBin(rig);
});
after(() => rig.dispose());

/** Python inside the sandbox: the session's socket is `$VAULT_DIR/host.sock`, its token VAULT_TOKEN. */
const PRELUDE = [
  'import json, os, socket, sys',
  "path = os.path.join(os.environ['VAULT_DIR'], 'host.sock')",
  "token = os.environ['VAULT_TOKEN']",
];

/** One request on a connection of its own; the error code it was answered with, or 'none'. */
const ASK = [
  'def ask(op, body):',
  "    head = b'POST /v1/%s HTTP/1.1\\r\\nHost: h\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n' % (op, len(body))",
  '    c = socket.socket(socket.AF_UNIX)',
  '    c.connect(path)',
  '    c.sendall(head + body)',
  "    out = b''",
  '    while True:',
  '        b = c.recv(65536)',
  '        if not b: break',
  '        out += b',
  '    c.close()',
  '    return out.split(b\'"code":"\')[1][:8].decode() if b\'"code":"\' in out else \'none\'',
];

test('inside run, 64 half-sent bodies of 2 MiB on the session socket: the host stays bounded, the owner and another agent are served', async (t) => {
  const flood = [
    ...PRELUDE,
    'held = []',
    "head = b'POST /v1/read HTTP/1.1\\r\\nHost: h\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n' % (4 * 1024 * 1024 - 1024)",
    'for i in range(64):',
    '    c = socket.socket(socket.AF_UNIX)',
    '    c.settimeout(5)',
    '    try:',
    '        c.connect(path)',
    "        c.sendall(head + b'{' * (2 * 1024 * 1024))",
    '        held.append(c)',
    '    except OSError:',
    '        c.close()',
    "print('held=%d' % len(held)); sys.stdout.flush()",
    'sys.stdin.readline()',
    'for c in held: c.close()',
  ].join('\n');
  const pid = await hostPid(rig);
  const before = rss(pid);
  const run = underPty(rig, ['run', '--agent', 'bodies', '--', 'python3', '-c', flood]);
  try {
    await until(() => /held=[0-9]+/.test(run.output()), 'the bodies');
    const grown = rss(pid) - before;
    t.diagnostic(
      `held ${said(run.output()).get('held')} connections; the host grew by ${(grown / MiB).toFixed(0)} MiB`,
    );
    // 32 MiB of pool and 16 KiB per connection, with room for the host's own
    // buffers and garbage not yet collected: unbounded, 128 MiB were sent.
    assert.ok(grown < 96 * MiB, `the host grew by ${(grown / MiB).toFixed(0)} MiB`);
    assert.match(ok(await rig.owner(['entry', 'ls'])), /Payroll/);
    assert.equal(ok(await rig.agent(['get', 'Other'], otherToken)), `${otherSecret}\n`);
    assert.equal(await hostPid(rig), pid);
  } finally {
    run.pty.write('\r');
  }
  const r = await run.exited;
  assert.equal(r.exitCode, 0, r.output);
});

test('inside run, an agent asking 2,000 times for an entry out of scope, then 2,000 times with a garbage token: its refusals coalesced, the store bounded, others served', async () => {
  const flood = [
    ...PRELUDE,
    ...ASK,
    "read = json.dumps({'token': token, 'mode': 'get', 'entry': 'Payroll', 'field': 'password'}).encode()",
    "garbage = json.dumps({'token': 'vlt_' + 'x' * 40}).encode()",
    "for name, op, body in (('scope', b'read', read), ('garbage', b'whoami', garbage)):",
    '    codes = {}',
    '    for i in range(2000):',
    '        code = ask(op, body)',
    '        codes[code] = codes.get(code, 0) + 1',
    "    print('%s=%s' % (name, json.dumps(codes, sort_keys=True).replace(' ', '')))",
    '    sys.stdout.flush()',
  ].join('\n');
  await hostPid(rig);
  const records = async () =>
    ok(await rig.owner(['audit', '--json']))
      .split('\n')
      .filter((l) => l !== '').length;
  const recordsBefore = await records();
  const bytesBefore = storeBytes();
  const r = await underPty(rig, ['run', '--agent', 'asker', '--', 'python3', '-c', flood]).exited;
  assert.equal(r.exitCode, 0, r.output);
  const m = said(r.output);
  // Refused every time, each the way it should be.
  assert.deepEqual(JSON.parse(m.get('scope') ?? '{}'), { 'VLT-2041': 2000 }, r.output);
  const garbage = JSON.parse(m.get('garbage') ?? '{}') as Record<string, number>;
  assert.equal(
    Object.values(garbage).reduce((a, b) => a + b, 0),
    2000,
    r.output,
  );
  assert.equal(garbage.none, undefined, r.output);
  // The owner and another agent, after it.
  assert.match(ok(await rig.owner(['entry', 'ls'])), /Payroll/);
  assert.equal(ok(await rig.agent(['get', 'Other'], otherToken)), `${otherSecret}\n`);
  // A record takes about 380 bytes: uncoalesced, 4,000 refusals would add ~1.5 MB.
  const grown = storeBytes() - bytesBefore;
  assert.ok(grown <= 256 * 1024, `the store grew by ${grown} bytes`);
  const added = (await records()) - recordsBefore;
  assert.ok(added < 200, `${added} audit records for 4,000 refusals`);
  ok(await rig.owner(['audit', '--verify']));
});

test('inside run, an agent re-reading its own entry 5,000 times: locked past its values a minute, the store bounded, the owner and another agent served', async () => {
  const loop = [
    ...PRELUDE,
    ...ASK,
    "read = json.dumps({'token': token, 'mode': 'get', 'entry': 'Mine', 'field': 'password'}).encode()",
    'codes = []',
    'for i in range(5000):',
    "    codes.append(ask(b'read', read))",
    'first = {c: codes.index(c) for c in set(codes)}',
    'counts = {c: codes.count(c) for c in set(codes)}',
    "print('first=%s' % json.dumps(first, sort_keys=True).replace(' ', ''))",
    "print('counts=%s' % json.dumps(counts, sort_keys=True).replace(' ', ''))",
  ].join('\n');
  await hostPid(rig);
  const bytesBefore = storeBytes();
  const r = await underPty(rig, ['run', '--agent', 'looper', '--', 'python3', '-c', loop]).exited;
  assert.equal(r.exitCode, 0, r.output);
  const m = said(r.output);
  const first = JSON.parse(m.get('first') ?? '{}') as Record<string, number>;
  const counts = JSON.parse(m.get('counts') ?? '{}') as Record<string, number>;
  // The bucket's 600 (a few more come back while the loop runs), then the
  // violation, then the lock for the rest of the loop.
  assert.equal(first.none, 0, r.output);
  assert.ok((counts.none ?? 0) >= 600 && (counts.none ?? 0) < 700, r.output);
  assert.ok((first['VLT-2042'] ?? -1) >= 600, r.output);
  assert.ok((counts['VLT-2043'] ?? 0) > 4000, r.output);
  assert.match(ok(await rig.owner(['agent', 'show', 'looper'])), /state:\s+locked/);
  // The owner and another agent, after it.
  assert.match(ok(await rig.owner(['entry', 'ls'])), /Mine/);
  assert.equal(ok(await rig.agent(['get', 'Other'], otherToken)), `${otherSecret}\n`);
  // Every read allowed has its record (~380 bytes); 5,000 of them would add ~1.9 MB.
  const grown = storeBytes() - bytesBefore;
  assert.ok(grown <= 512 * 1024, `the store grew by ${grown} bytes`);
  ok(await rig.owner(['audit', '--verify']));
});

test('inside run, the session socket offers no framed channel: the upgrade is answered as an ordinary refused request', async () => {
  const probe = [
    ...PRELUDE,
    'c = socket.socket(socket.AF_UNIX)',
    'c.settimeout(10)',
    'c.connect(path)',
    "c.sendall(b'GET /v1/channel HTTP/1.1\\r\\nHost: h\\r\\nConnection: Upgrade\\r\\nUpgrade: vault-channel/1\\r\\n\\r\\n')",
    "out = b''",
    'try:',
    '    while True:',
    '        b = c.recv(65536)',
    '        if not b: break',
    '        out += b',
    "        if b'\\r\\n\\r\\n' in out: break",
    'except OSError:',
    '    pass',
    "print('status=%s' % (out.split(b'\\r\\n')[0].decode() if out else 'closed').replace(' ', '_'))",
  ].join('\n');
  const r = await underPty(rig, ['run', '--agent', 'asker', '--', 'python3', '-c', probe]).exited;
  assert.equal(r.exitCode, 0, r.output);
  const status = said(r.output).get('status') ?? '';
  // Refused as a request the session socket does not serve, or the connection closed: never switched.
  assert.match(status, /^(HTTP\/1\.1_4[0-9][0-9]|closed)/, r.output);
});
