// An owner session with a hardware key enrolled (issue 35): inside an open
// session, what observes or narrows runs without a prompt; what releases a
// value or loosens a rule needs a touch of the key on a page whose challenge
// names that very request (op and arguments). The passphrase alone is not
// enough there, and an assertion made for one request stands for no other.
// Real processes on a real pty, headless Chromium with a DevTools virtual
// authenticator, fido2-lib in the host. Nothing stubbed but the browser
// opener (`xdg-open`, which would start a browser of the machine's own).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { shellUnderPty, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig } from '../support/rig.js';
import {
  BrowserRig,
  assertIn,
  blankAt,
  ceremony,
  runInBrowser,
  skipChromium,
  type Authenticator,
} from '../support/webauthn.js';

const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };
const PROMPT = 'Vault passphrase';
const URL_LINE = /open (http:\/\/localhost:[0-9]+\/[0-9a-f]+) /g;

const rig = new Rig();
let browser: BrowserRig;
let keyA: Authenticator;
let shell: PtyRun;
let botToken = '';

const count = (text: string) => shell.output().split(text).length - 1;
const urls = () => [...shell.output().matchAll(URL_LINE)].map((m) => m[1] ?? '');

/** Types `line` (a marker after it); returns its exit status once the shell prints it. */
async function typed(line: string, answer?: string, onUrl?: (url: string) => Promise<void>) {
  const before = count('rc=');
  const prompts = count(PROMPT);
  const pages = urls().length;
  shell.pty.write(`${line}; echo "rc""=$?"\r`);
  if (answer !== undefined) {
    await until(() => count(PROMPT) > prompts, `the prompt for ${line}`);
    shell.pty.write(answer + '\r');
  }
  if (onUrl !== undefined) {
    await until(() => urls().length > pages, `the key's page for ${line}`);
    await onUrl(urls()[pages] ?? '');
  }
  await until(() => count('rc=') > before, line);
  return Number(/^(\d+)/.exec(shell.output().split('rc=').at(-1) ?? '')?.[1] ?? NaN);
}

/** What the shell printed since `mark` (a length of its output). */
const since = (mark: number) => shell.output().slice(mark);

before(async () => {
  if (skipChromium) return;
  await rig.create();
  await rig.set('Alpha', 'alpha-value-7f3');
  await rig.set('Beta', 'beta-value-9c1');
  botToken = await rig.addAgent('bot', ['Alpha']);
  browser = await BrowserRig.launch();
  keyA = await browser.authenticator();
  const enrolled = await runInBrowser(keyA, await ceremony(rig, ['key', 'add']));
  assert.equal(enrolled.code, 0, enrolled.stderr);
  shell = shellUnderPty(rig, PROMPTED);
  // The page's URL is on the terminal; no browser of the machine's own is started.
  const opener = join(rig.root, 'bin', 'xdg-open');
  writeFileSync(opener, '#!/bin/sh\nexit 0\n');
  chmodSync(opener, 0o755);
  await until(() => shell.output().includes('$ '), 'the shell');
  assert.equal(await typed('vault-cli unlock', PASSPHRASE), 0);
});
after(async () => {
  shell?.pty.kill();
  if (!skipChromium) await browser.close();
  await rig.dispose();
});

test(
  'observing and narrowing in the session ask for nothing, key or passphrase',
  { skip: skipChromium },
  async () => {
    const prompts = count(PROMPT);
    const pages = urls().length;
    for (const cmd of [
      'vault-cli entry ls',
      'vault-cli entry show Alpha',
      'vault-cli agent show bot',
      'vault-cli agent limits bot --per-minute 3',
      'vault-cli audit',
    ]) {
      assert.equal(await typed(cmd), 0, cmd);
    }
    assert.equal(count(PROMPT), prompts);
    assert.equal(urls().length, pages, 'no key page was raised');
  },
);

test(
  '`entry show --reveal` in the session needs the key, and works with it',
  { skip: skipChromium },
  async () => {
    const mark = shell.output().length;
    const prompts = count(PROMPT);
    let pageSeen = '';
    const rc = await typed('vault-cli entry show Alpha --reveal', undefined, async (url) => {
      // Nothing released before the touch.
      assert.doesNotMatch(since(mark), /alpha-value-7f3/);
      const page = await fetch(url).then((r) => r.text());
      pageSeen = page;
      await keyA.page.bringToFront();
      await keyA.page.goto(url);
    });
    assert.equal(rc, 0, since(mark));
    assert.match(since(mark), /alpha-value-7f3/);
    assert.match(since(mark), /VLT-2070|needs a touch of your hardware key/);
    assert.equal(count(PROMPT), prompts, 'the passphrase was not asked: the key replaces it');
    // The page names the request as the host read it.
    assert.match(pageSeen, /<h1>Confirm entry\.reveal &#34;Alpha&#34; &#34;password&#34;<\/h1>/);
  },
);

test(
  'the passphrase alone is refused in the session: with stdin closed (a hook), and at the terminal',
  { skip: skipChromium },
  async () => {
    const file = `VAULT_PASSPHRASE_FILE=${rig.passphraseFile}`;
    // A hook with the passphrase file the agent read: refused, nothing printed.
    let mark = shell.output().length;
    const pages = urls().length;
    const rc = await typed(`${file} vault-cli entry show Alpha --reveal </dev/null`);
    assert.equal(rc, 77, since(mark));
    assert.doesNotMatch(since(mark), /alpha-value-7f3/);
    assert.match(since(mark), /VLT-2055/);
    assert.match(since(mark), /hardware key/);
    assert.equal(urls().length, pages, 'no page: no one can answer');
    // At the terminal, the passphrase file is not enough either: the key is asked.
    mark = shell.output().length;
    const rc2 = await typed(
      `${file} vault-cli entry show Beta --reveal`,
      undefined,
      async (url) => {
        assert.doesNotMatch(since(mark), /beta-value-9c1/);
        await keyA.page.bringToFront();
        await keyA.page.goto(url);
      },
    );
    assert.equal(rc2, 0, since(mark));
    assert.match(since(mark), /beta-value-9c1/);
  },
);

// A client of its own on the unlocked terminal (what a planted hook could
// run): it gets a challenge for `agent add`, has the key sign it, and sends
// that assertion with `entry.reveal`. Refused; the same key's assertion over
// a challenge for the reveal itself is accepted, so the refusal is the binding.
const SWAP = String.raw`
import { connect } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const [sock, dir, origin] = process.argv.slice(2);
const post = (op, body) => new Promise((resolve, reject) => {
  const payload = Buffer.from(JSON.stringify(body));
  const s = connect(sock, () => {
    s.write('POST /v1/' + op + ' HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ' + payload.length + '\r\nConnection: close\r\n\r\n');
    s.write(payload);
  });
  const chunks = [];
  s.on('data', (c) => chunks.push(c));
  s.on('end', () => { const t = Buffer.concat(chunks).toString(); resolve(JSON.parse(t.slice(t.indexOf('\r\n\r\n') + 4))); });
  s.on('error', reject);
});
const answer = async (n) => {
  while (!existsSync(dir + '/answer' + n + '.json')) await new Promise((r) => setTimeout(r, 50));
  return JSON.parse(readFileSync(dir + '/answer' + n + '.json', 'utf8'));
};
const reveal = { entry: 'Alpha', field: 'password' };
const b1 = await post('owner.confirm', { origin, op: 'agent.add', body: { kind: 'ai', name: 'evil', scope: ['Alpha'] } });
writeFileSync(dir + '/begin1.json', JSON.stringify(b1));
const r1 = await post('entry.reveal', { ...reveal, keyProof: { challengeId: b1.result.challengeId, result: await answer(1) } });
console.log('swapped=' + JSON.stringify(r1.ok ? 'released' : r1.code));
const b2 = await post('owner.confirm', { origin, op: 'entry.reveal', body: reveal });
writeFileSync(dir + '/begin2.json', JSON.stringify(b2));
const r2 = await post('entry.reveal', { ...reveal, keyProof: { challengeId: b2.result.challengeId, result: await answer(2) } });
console.log('bound=' + JSON.stringify(r2.ok ? 'released' : r2.code));
`;

test('an assertion made for another request is refused', { skip: skipChromium }, async () => {
  const dir = rig.root;
  const script = join(dir, 'swap.mjs');
  writeFileSync(script, SWAP);
  const origin = 'http://localhost:45871';
  const before = count('rc=');
  const mark = shell.output().length;
  shell.pty.write(
    `node ${script} ${join(rig.vaultDir, 'host.sock')} ${dir} ${origin}; echo "rc""=$?"\r`,
  );
  for (const n of [1, 2]) {
    const begin = join(dir, `begin${n}.json`);
    await until(() => existsSync(begin), `challenge ${n}`);
    const got = JSON.parse(readFileSync(begin, 'utf8')) as {
      ok: boolean;
      result: { options: Parameters<typeof assertIn>[1] };
    };
    assert.ok(got.ok, JSON.stringify(got));
    await blankAt(keyA, origin + '/');
    const signed = await assertIn(keyA, got.result.options);
    writeFileSync(join(dir, `answer${n}.json`), JSON.stringify(signed));
  }
  await until(() => count('rc=') > before, 'the swap script');
  const out = since(mark);
  assert.match(out, /swapped="VLT-4007"/, out);
  assert.match(out, /bound="released"/, out);
});

// Every other command the session does not stand for (docs/commands.md,
// `unlock`), run as a planted hook would: on the unlocked terminal, stdin
// closed, the passphrase file the agent found in its environment. Each is
// refused with VLT-2055 naming the key, no page is raised, and nothing
// changed: the agent list, bot's scope and limits, Alpha's value, no key.
test(
  'from a hook in the session, each release or loosening is refused and changes nothing',
  { skip: skipChromium },
  async () => {
    const file = `VAULT_PASSPHRASE_FILE=${rig.passphraseFile}`;
    const envFile = join(rig.root, 'rotate.env');
    writeFileSync(envFile, 'Alpha=replaced-by-hook-4d2\n');
    const before = {
      agents: (await rig.owner(['agent', 'ls'])).stdout,
      bot: (await rig.owner(['agent', 'show', 'bot'])).stdout,
      keys: (await rig.owner(['key', 'ls'])).stdout,
    };
    const pages = urls().length;
    for (const cmd of [
      'vault-cli agent add evil --scope Alpha',
      'vault-cli agent scope bot --add Beta',
      'vault-cli agent limits bot --per-minute 50',
      'vault-cli run --agent bot -- sh -c "echo RAN-""UNDER-HOOK"',
      'vault-cli sweep',
      'vault-cli key add --no-browser',
      `vault-cli import --overwrite ${envFile}`,
    ]) {
      const mark = shell.output().length;
      const rc = await typed(`${file} ${cmd} </dev/null`);
      const out = since(mark);
      assert.equal(rc, 77, `${cmd}: ${out}`);
      assert.match(out, /VLT-2055/, cmd);
      assert.match(out, /hardware key/, cmd);
      assert.doesNotMatch(out, /RAN-UNDER-HOOK|replaced-by-hook/, cmd);
    }
    assert.equal(urls().length, pages, 'no page: no one can answer');
    assert.equal((await rig.owner(['agent', 'ls'])).stdout, before.agents);
    assert.equal((await rig.owner(['agent', 'show', 'bot'])).stdout, before.bot);
    assert.equal((await rig.owner(['key', 'ls'])).stdout, before.keys);
    const alpha = await rig.agent(['get', 'Alpha'], botToken);
    assert.equal(alpha.stdout.trim(), 'alpha-value-7f3', alpha.stderr);
  },
);
