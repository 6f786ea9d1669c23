// `vault-cli render -` through real processes, with stdin redirected from a
// regular file (read twice through fd 0, like a named file, in flat memory)
// and with stdin a pipe (held in memory: it cannot be read twice).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { CLI, Rig, fate, type Result } from '../support/rig.js';

const rig = new Rig();
let token = '';
const CHUNK = 64 * 1024;

const file = (name: string, content: string | Buffer) => {
  const p = join(rig.root, name);
  writeFileSync(p, content);
  return p;
};

interface Run extends Result {
  /** Peak resident set size of the vault-cli process in KiB (VmHWM), when asked for. */
  readonly peakKiB: number | null;
  readonly sha256: string;
}

/**
 * `vault-cli ...args` as the agent, with stdin the open file `fd` (at whatever
 * offset it is at). With `measure`, a preload module reports the process's own
 * VmHWM on fd 3 as it exits.
 */
async function runOnFd(args: readonly string[], fd: number, measure = false): Promise<Run> {
  const env = { ...rig.env, VAULT_TOKEN: token, VAULT_PASSPHRASE_FILE: undefined };
  const pre = measure ? ['--import', pathToFileURL(join(rig.root, 'hwm.mjs')).href] : [];
  const child = spawn(process.execPath, [...pre, CLI, ...args], {
    env,
    stdio: [fd, 'pipe', 'pipe', 'pipe'],
  });
  let report = '';
  child.stdio[3]?.on('data', (c: Buffer) => (report += c.toString()));
  const r = await fate(child);
  const m = /VmHWM:\s*(\d+)\s*kB/.exec(report);
  return {
    ...r,
    peakKiB: m ? Number(m[1]) : null,
    sha256: createHash('sha256').update(r.stdoutBytes).digest('hex'),
  };
}

/** `vault-cli ...args` with stdin redirected from `path`, first advanced by `skip` bytes. */
async function fromFile(args: readonly string[], path: string, skip = 0, measure = false) {
  const fd = openSync(path, 'r');
  try {
    if (skip > 0) assert.equal(readSync(fd, Buffer.alloc(skip), 0, skip, null), skip);
    const r = await runOnFd(args, fd, measure);
    // The shared offset is left at the end, as any reader of stdin leaves it.
    assert.equal(readSync(fd, Buffer.alloc(1), 0, 1, null), 0);
    return r;
  } finally {
    closeSync(fd);
  }
}

/**
 * A template whose references straddle 64 KiB read boundaries at several
 * offsets, with a BOM, CRLF line ends and (unless `utf8`) invalid UTF-8 bytes.
 */
function template(utf8: boolean): Buffer {
  const parts: Buffer[] = [Buffer.from('\ufeffstart: "vault://Stripe Prod/password"\r\n')];
  let size = parts[0]!.length;
  const refs = ['vault://Stripe Prod/password', '{{ vault://db%2Fmain/password }}'];
  for (let k = 1; k <= 6; k++) {
    const ref = refs[k % 2]!;
    // The reference starts this many bytes before the boundary: split inside it.
    const before = [1, 5, 9, 17, ref.length - 1, Math.floor(ref.length / 2)][k - 1]!;
    const pad = k * CHUNK - before - size - 'k: "'.length;
    const filler = Buffer.alloc(pad, 'x');
    for (let i = 60; i < pad; i += 62) filler.write('\r\n', i - 2);
    if (!utf8) filler[7] = 0xff;
    const line = Buffer.from(`k: "${ref}"\r\n`);
    parts.push(filler, line);
    size += pad + line.length;
  }
  parts.push(Buffer.from('end: "vault://Stripe Prod/password" \r\n'));
  return Buffer.concat(parts);
}

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'hun"ter\\2');
  await rig.set('db/main', 'pg\npass');
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent('svc', ['Stripe Prod', 'db/main'], ['--per-hour', '1000']);
  writeFileSync(
    join(rig.root, 'hwm.mjs'),
    "import { readFileSync, writeSync } from 'node:fs';\n" +
      "process.on('exit', () => writeSync(3, readFileSync('/proc/self/status', 'utf8')));\n",
  );
});
after(() => rig.dispose());

test('stdin from a regular file renders the same bytes as the file named', async () => {
  for (const [name, utf8, args] of [
    ['t.txt', false, []],
    ['t.yaml', true, ['--format', 'yaml']],
  ] as const) {
    const path = file(name, template(utf8));
    const named = await fromFile(['render', ...args, path], '/dev/null');
    assert.equal(named.code, 0, named.stderr);
    const piped = await fromFile(['render', ...args, '-'], path);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stderr, '');
    assert.ok(named.stdoutBytes.length > 5 * CHUNK);
    assert.deepEqual(piped.stdoutBytes, named.stdoutBytes);
    assert.equal(piped.stdoutBytes.subarray(0, 3).toString('hex'), 'efbbbf');
    assert.ok(!piped.stdout.includes('vault://'));
  }
});

test('a ~50 MB template on stdin from a regular file: peak RSS under 100 MB', async (t) => {
  const line = 'key: "vault://Stripe Prod/password" and {{ vault://db%2Fmain/password }} ..\r\n';
  const lines = Math.ceil((50 * 1024 * 1024) / line.length);
  const path = file('big.txt', Buffer.from(line.repeat(lines)));
  const expected = createHash('sha256')
    .update(Buffer.from('key: "hun"ter\\2" and pg\npass ..\r\n'.repeat(lines)))
    .digest('hex');
  const r = await fromFile(['render', '-'], path, 0, true);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.sha256, expected);
  assert.ok(r.peakKiB !== null, 'no VmHWM reported');
  t.diagnostic(`peak RSS ${Math.round(r.peakKiB / 1024)} MB`);
  assert.ok(r.peakKiB < 100 * 1024, `peak RSS ${Math.round(r.peakKiB / 1024)} MB`);
});

test('stdin from a regular file at a non-zero offset renders from that offset', async () => {
  const whole = template(false);
  const path = file('offset.txt', whole);
  for (const skip of [10, CHUNK + 123]) {
    const rest = file(`rest-${skip}.txt`, whole.subarray(skip));
    const named = await fromFile(['render', rest], '/dev/null');
    assert.equal(named.code, 0, named.stderr);
    const r = await fromFile(['render', '-'], path, skip);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdoutBytes, named.stdoutBytes);
  }
  // Through a shell, as a user writes it.
  const small = file('small.txt', 'skip-meA=vault://db%2Fmain/password\n');
  const env = { ...rig.env, VAULT_TOKEN: token, VAULT_PASSPHRASE_FILE: undefined };
  const shell = spawn(
    'sh',
    ['-c', '{ head -c 7 >/dev/null; "$0" "$1" render -; } < "$2"', process.execPath, CLI, small],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  shell.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise((res) => shell.on('close', res));
  assert.equal(code, 0);
  assert.equal(out, 'A=pg\npass\n');
});

test('a pipe still works; a bad reference on either path prints nothing', async () => {
  const ok = await rig.agent(['render', '--format', 'yaml', '-'], token, {
    input: '\ufeffa: vault://Stripe Prod/password\r\nb: vault://db%2Fmain/password\r\n',
  });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, '\ufeffa: "hun\\"ter\\\\2"\r\nb: "pg\\npass"\r\n');

  // A bad reference after more than one read chunk of good ones.
  const bad = Buffer.concat([
    template(false),
    Buffer.from('x: vault://Payroll/password\ny: vault://Stripe Prod/nope\n'),
  ]);
  const expected =
    'vault-cli: VLT-2041: vault://Payroll/password: Access denied.\n' +
    'vault-cli: VLT-2044: vault://Stripe Prod/nope: Field not found.\n';
  const piped = await rig.agent(['render', '-'], token, { input: bad });
  const redirected = await fromFile(['render', '-'], file('bad.txt', bad));
  for (const r of [piped, redirected]) {
    assert.equal(r.stdout, '');
    assert.equal(r.code, 77);
    assert.equal(r.stderr, expected);
  }
});
