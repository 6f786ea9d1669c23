// `vault-cli render` through real processes: the spec's examples, a program
// reading its configuration from the pipe, all or nothing, byte identity,
// fill audit records, limits, and --watch.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CLI, Rig, ok, terminate } from '../support/rig.js';

const rig = new Rig();
let token = '';
const file = (name: string, content: string | Buffer) => {
  const p = join(rig.root, name);
  writeFileSync(p, content);
  return p;
};

interface AgentView {
  usage: { minute: number; hour: number };
}
const usage = async (name: string) =>
  (JSON.parse(ok(await rig.owner(['agent', 'show', name, '--json']))) as AgentView).usage;

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'hunter2');
  await rig.set('Stripe Prod', 'sk_live_"quoted"\\back\nline', 'key');
  await rig.set('db/main', 'pg-pass');
  await rig.set('Tricky', 'see vault://Stripe Prod/password');
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent(
    'svc',
    ['Stripe Prod', 'db/main', 'Tricky'],
    ['--per-minute', '1000', '--per-hour', '1000'],
  );
});
after(() => rig.dispose());

test('the spec’s example: a JSON config with references, piped to a real program on stdin', async () => {
  const tpl = file(
    'app.json',
    '{"stripe": {"key": "vault://Stripe Prod/key"}, "db": "{{ vault://db%2Fmain/password }}"}\n',
  );
  const r = await rig.agent(['render', tpl], token);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  // A real consumer: node reading its configuration from stdin (`-`).
  const child = spawn(
    process.execPath,
    [
      '-e',
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const c=JSON.parse(s);process.stdout.write(c.stripe.key+"|"+c.db)})',
      '-',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stdin.end(r.stdoutBytes);
  await new Promise((res) => child.on('close', res));
  assert.equal(Buffer.concat(out).toString(), 'sk_live_"quoted"\\back\nline|pg-pass');
});

test('render - reads the template from stdin; other text is raw', async () => {
  const r = await rig.agent(['render', '-'], token, {
    input:
      'password=vault://Stripe Prod/password\nurl=postgres://app:vault://db%2Fmain/password@h/db\n',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'password=hunter2\nurl=postgres://app:pg-pass@h/db\n');
  const y = await rig.agent(['render', '--format', 'yaml', '-'], token, {
    input: 'key: vault://Stripe Prod/key\n',
  });
  assert.equal(y.stdout, 'key: "sk_live_\\"quoted\\"\\\\back\\nline"\n');
});

test('a template named by a path that is a pipe (a FIFO, as `<(cmd)` gives) renders', async () => {
  // A pipe cannot be read by position, nor twice: it was an "internal error" (ESPIPE).
  const fifo = join(rig.root, 'app.fifo');
  execFileSync('mkfifo', [fifo]);
  const writer = spawn('sh', [
    '-c',
    'printf "pw=vault://Stripe Prod/password\\n" > "$1"',
    'sh',
    fifo,
  ]);
  const written = new Promise((res) => writer.on('close', res));
  const r = await rig.agent(['render', fifo], token);
  await written;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'pw=hunter2\n');
});

test('a file without references comes out byte for byte: CRLF, BOM, invalid UTF-8', async () => {
  const bytes = Buffer.concat([
    Buffer.from('\ufeff{"a": "x"}\r\nmyvault://not/a/ref\r\n'),
    Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0x00, 0x0a]),
  ]);
  for (const name of ['plain.json', 'plain.txt']) {
    const r = await rig.agent(['render', file(name, bytes)], token);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdoutBytes, bytes);
  }
  // No reference: no host request, so not even a token is needed.
  const r = await rig.agent(['render', '-'], undefined, { input: bytes });
  assert.deepEqual(r.stdoutBytes, bytes);
});

test('a value that holds vault:// is inserted once, not expanded', async () => {
  const r = await rig.agent(['render', '-'], token, { input: 'x=vault://Tricky/password\n' });
  assert.equal(r.stdout, 'x=see vault://Stripe Prod/password\n');
});

test('all or nothing: every bad reference named, stdout empty, only the refused names charged', async () => {
  const t2 = await rig.addAgent('fresh', ['Stripe Prod']);
  const tpl = file(
    'bad.yaml',
    'a: vault://Stripe Prod/password\nb: vault://Payroll/password\nc: vault://Stripe Prod/nope\nd: vault://Nowhere/x\n',
  );
  const r = await rig.agent(['render', tpl], t2);
  assert.equal(r.stdout, '');
  assert.equal(r.code, 77);
  assert.equal(
    r.stderr,
    [
      'vault-cli: VLT-2041: vault://Payroll/password: Access denied.',
      'vault-cli: VLT-2044: vault://Stripe Prod/nope: Field not found.',
      'vault-cli: VLT-2041: vault://Nowhere/x: Access denied.',
      '',
    ].join('\n'),
  );
  // Nothing released is charged; the two names refused with VLT-2041 are, as
  // guesses (issue 16: guessing names counts against the agent).
  assert.deepEqual(await usage('fresh'), { minute: 2, hour: 2 });
  assert.ok(!r.stderr.includes('hunter2'));
});

test('malformed references are reported without contacting the host (VLT-2046, exit 65)', async () => {
  const r = await rig.agent(['render', '-'], 'vlt_not_even_a_token', {
    input: 'a vault://Stripe Prod/password\nb vault://no field\nc {{ vault://a/b c }}\n',
  });
  assert.equal(r.stdout, '');
  assert.equal(r.code, 65);
  assert.equal(
    r.stderr,
    'vault-cli: VLT-2046: vault://no field: malformed reference: no /field after the entry name\n' +
      'vault-cli: VLT-2046: vault://a/b: malformed reference: {{ vault://<entry>/<field> }} is not closed by }} right after the field\n',
  );
});

test('fill audit records: one per distinct credential, however often referenced', async () => {
  const t3 = await rig.addAgent('auditee', ['Stripe Prod', 'db/main']);
  const r = await rig.agent(['render', '-'], t3, {
    input:
      'vault://Stripe Prod/password vault://Stripe Prod/password vault://db%2Fmain/password vault://Stripe Prod/key\n',
  });
  assert.equal(r.code, 0, r.stderr);
  const records = ok(await rig.owner(['audit', '--json', '--agent', 'auditee']))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { action: string; entry: string; field: string });
  const fills = records.filter((x) => x.action === 'fill');
  // An entry is one credential (docs/how-it-works.md): one record names its fields.
  assert.deepEqual(fills.map((x) => `${x.entry}/${x.field}`).sort(), [
    'Stripe Prod/password, key',
    'db/main/password',
  ]);
  for (const line of JSON.stringify(records).split(',')) {
    assert.ok(!line.includes('hunter2') && !line.includes('pg-pass'));
  }
  assert.deepEqual(await usage('auditee'), { minute: 2, hour: 2 });
});

test('limits: 3 distinct entries for an agent allowed 2 a minute is VLT-2042, nothing on stdout', async () => {
  const t4 = await rig.addAgent(
    'limited',
    ['Stripe Prod', 'db/main', 'Tricky'],
    ['--per-minute', '2'],
  );
  const r = await rig.agent(['render', '-'], t4, {
    input: 'vault://Stripe Prod/password vault://db%2Fmain/password vault://Tricky/password\n',
  });
  assert.equal(r.stdout, '');
  assert.equal(r.code, 75);
  assert.match(r.stderr, /^vault-cli: VLT-2042: [^\n]+\n$/);
});

test('--watch renders again to stdout when the template changes', async () => {
  const tpl = file('watch.json', '{"v": "vault://Stripe Prod/password"}\n');
  const env = { ...rig.env, VAULT_TOKEN: token, VAULT_PASSPHRASE_FILE: undefined };
  const child = spawn(process.execPath, [CLI, 'render', '--watch', tpl], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const waitFor = (n: number) =>
    new Promise<void>((res, rej) => {
      // Complete lines only: a chunk may end in the middle of one.
      const check = () => {
        if (out.split('\n').slice(0, -1).filter(Boolean).length >= n) res();
      };
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        check();
      });
      child.on('close', () => rej(new Error(`render --watch exited: ${err}`)));
      check();
    });
  try {
    await waitFor(1);
    // chokidar needs its watch set up before the change; retry the write until it is seen.
    const second = waitFor(2);
    let seen = false;
    void second.then(() => (seen = true));
    for (let i = 0; i < 50 && !seen; i++) {
      // Written whole and renamed into place, so no render sees a half-written template.
      writeFileSync(`${tpl}.new`, '{"v": "vault://db%2Fmain/password", "n": ' + i + '}\n');
      renameSync(`${tpl}.new`, tpl);
      await new Promise((r) => setTimeout(r, 200));
    }
    await second;
    const docs = out
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as { v: string });
    assert.equal(docs[0]?.v, 'hunter2');
    assert.ok(docs.length >= 2);
    for (const d of docs.slice(1)) assert.equal(d.v, 'pg-pass');
  } finally {
    await terminate(child);
  }
});
