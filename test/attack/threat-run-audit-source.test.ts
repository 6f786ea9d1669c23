// docs/threat-model.md, "claim another pid as the audit source", the `run`
// column: an agent inside the sandbox writes its own request to the session's
// socket with a made-up client pid (1, which inside its PID namespace is even
// a real process). The host takes the caller from the kernel (SO_PEERCRED),
// so the record names the caller's pid as the host sees it, never the claim.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { installBin, underPty } from '../support/pty.js';
import { Rig } from '../support/rig.js';

const rig = new Rig();

// The agent's own client: one raw HTTP request over the vault's socket path
// (inside `run`, the session's socket), the claimed pid in a header.
const CLAIM = `
import json, os, socket
body = json.dumps({'token': os.environ['VAULT_TOKEN'], 'entry': 'X', 'field': 'password', 'mode': 'get'}).encode()
s = socket.socket(socket.AF_UNIX)
s.connect(os.path.join(os.environ['VAULT_DIR'], 'host.sock'))
s.sendall(b'POST /v1/read HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n'
  + b'Content-Length: %d\\r\\nx-vault-client-pid: 1\\r\\nConnection: close\\r\\n\\r\\n' % len(body) + body)
reply = b''
while True:
    b = s.recv(65536)
    if not b: break
    reply += b
print('ok=%s inner=%d' % (b'"ok":true' in reply, os.getpid()))
`;

before(async () => {
  await rig.create();
  await rig.set('X', `value-${hex(8)}`);
  await rig.addAgent('a', ['X'], ['--per-minute', '10', '--per-hour', '10']);
  installBin(rig);
});
after(() => rig.dispose());

test('inside run, a request that claims pid 1 is audited with the kernel’s pid and uid', async () => {
  const r = await underPty(rig, ['run', '--agent', 'a', '--', 'python3', '-c', CLAIM]).exited;
  assert.equal(r.exitCode, 0, r.output);
  const said = /ok=(\w+) inner=(\d+)/.exec(r.output);
  assert.ok(said, r.output);
  assert.equal(said[1], 'True', r.output);
  const inner = Number(said[2]);

  const reads = (await auditRecords(rig)).filter((x) => x.action === 'ai_read') as unknown as {
    source: string;
  }[];
  assert.equal(reads.length, 1, JSON.stringify(reads));
  const source = /^sandbox pid:(\d+) uid:(\d+)$/.exec(reads[0]?.source ?? '');
  assert.ok(source, reads[0]?.source);
  assert.equal(Number(source[2]), process.getuid?.());
  // Neither the claim nor the pid the agent sees of itself: the host's view.
  assert.notEqual(Number(source[1]), 1);
  assert.notEqual(Number(source[1]), inner);
});
