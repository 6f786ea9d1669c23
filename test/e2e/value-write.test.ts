// get and totp write their value to fd 1 directly (src/cli/pipe-only.ts
// writeValue), without the stream Node builds for process.stdout (issue 39:
// start-up). A pipe that another process made non-blocking and filled
// (a Node process that touched its process.stdout does that to the pipe it
// shares) refuses the write with EAGAIN: the rest goes through the stream,
// which waits for the reader, and the value arrives whole, once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CLI, Rig, fate } from '../support/rig.js';

const rig = new Rig();
let token = '';

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'hunter2');
  await rig.set('GitHub', 'JBSWY3DPEHPK3PXP', 'totp');
  token = await rig.addAgent('a', ['Stripe Prod', 'GitHub']);
});
after(() => rig.dispose());

// Holds the pipe on fd 3 as a Node socket (libuv makes it non-blocking, for
// every process that shares it, while this one lives), fills it until EAGAIN,
// says so on stderr and in the marker file argv[1], and lives on until killed.
const FILL = `new (require('node:net').Socket)({ fd: 3, readable: false });
const { writeFileSync, writeSync } = require('node:fs');
const b = Buffer.alloc(4096, 120);
let n = 0;
try { for (;;) n += writeSync(3, b); } catch (e) { process.stderr.write('filled ' + n + ' ' + e.code + '\\n'); }
writeFileSync(process.argv[1], '');
setTimeout(() => {}, 60000);`;

// The writer fills the pipe, then runs the CLI into it; the reader reads
// nothing until the CLI has ended, or for 5 s: a CLI that waits for its
// reader is still running then ("waited").
const SCRIPT = `NODE=$0 CLI=$1 DIR=$2 FILL=$3; shift 3
{
  "$NODE" -e "$FILL" "$DIR/filled" 3>&1 &
  filler=$!
  i=0; while [ ! -e "$DIR/filled" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  "$NODE" "$CLI" "$@"; echo "status=$?" >&2
  touch "$DIR/done"; kill $filler; wait
} | {
  i=0; while [ ! -e "$DIR/done" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  [ -e "$DIR/done" ] || echo waited >&2
  cat
}`;

/** The CLI's `args` into a pipe another process made non-blocking and filled. */
async function intoFullPipe(args: readonly string[]) {
  const dir = mkdtempSync(join(rig.root, 'pipe-'));
  const child = spawn('sh', ['-c', SCRIPT, process.execPath, CLI, dir, FILL, ...args], {
    env: { ...rig.env, VAULT_TOKEN: token, VAULT_PASSPHRASE_FILE: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return fate(child);
}

for (const { args, value } of [
  { args: ['get', 'Stripe Prod'], value: /^hunter2\n$/ },
  { args: ['totp', 'GitHub'], value: /^[0-9]{6}\n$/ },
]) {
  test(`${args[0]} into a full non-blocking pipe: the value waits for the reader and arrives whole`, async () => {
    const r = await intoFullPipe(args);
    const filled = /filled ([0-9]+) EAGAIN/.exec(r.stderr);
    assert.ok(filled !== null, `the pipe was filled until EAGAIN: ${r.stderr}`);
    assert.match(r.stderr, /status=0\n/);
    assert.match(r.stderr, /waited\n/, 'the CLI waited for its reader');
    const out = r.stdoutBytes;
    const n = Number(filled[1]);
    assert.equal(out.subarray(0, n).toString('latin1'), 'x'.repeat(n));
    assert.match(out.subarray(n).toString('utf8'), value);
  });
}
