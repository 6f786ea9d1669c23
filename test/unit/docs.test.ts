// The documentation against the code: the README stays a front door (small,
// the two set-up commands first, links that resolve), docs/commands.md
// documents every command and flag of the command table, and no doc speaks of
// an issue as still to come.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../src/commands/table.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

test('the README is under 12 KB, opens with the two set-up commands and names npm test', () => {
  const readme = read('README.md');
  assert.ok(Buffer.byteLength(readme) < 12 * 1024, `README is ${Buffer.byteLength(readme)} bytes`);
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme);
  assert.ok(firstBlock && readme.indexOf(firstBlock[0]) < 200, 'a shell block at the top');
  const commands = (firstBlock[1] ?? '').split('\n').map((l) => l.replace(/\s*#.*$/, '').trim());
  assert.deepEqual(commands.filter(Boolean), [
    'npm ci --loglevel=error && npm run demo',
    'bash .ci/run',
  ]);
  assert.match(readme, /npm test/);
  // CI installs as the README does: under Node 20, npm's engines check (made
  // against the Node running npm, not the Node 24 installed) is 40 false lines.
  assert.match(read('.ci/run'), /^npm ci --loglevel=error$/m);
});

test('every command of the command table has its section in docs/commands.md, with every flag', () => {
  const doc = read('docs/commands.md');
  const sections = doc.split(/^### /m).slice(1);
  for (const c of COMMANDS) {
    const name = ['vault-cli', ...c.path].join(' ');
    const section = sections.find((s) => {
      const head = s.slice(0, s.indexOf('\n'));
      return head === `\`${name}\`` || head.startsWith(`\`${name} `);
    });
    assert.ok(section !== undefined, `no "### \`${name}...\`" section`);
    for (const f of c.flags)
      assert.ok(section.includes(`--${f.name}`), `${name}: --${f.name} is not documented`);
  }
});

test('no doc speaks of an issue as still to come', () => {
  const promise =
    /still to come|open issues?\b|until it lands|not (?:built|done|implemented) yet|coming soon|\bTODO\b|\(later\)/i;
  for (const file of DOCS) {
    const lines = read(file).split('\n');
    lines.forEach((line, i) => assert.doesNotMatch(line, promise, `${file}:${i + 1}`));
  }
});

test('every relative link in the README and docs/ resolves', () => {
  // docs/sandbox.md (how `run` contains an agent) is written beside this on
  // another branch; every other target must exist here.
  const elsewhere = new Set([join(ROOT, 'docs', 'sandbox.md')]);
  for (const file of DOCS) {
    for (const m of read(file).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1] as string;
      if (/^[a-z]+:/.test(target)) continue;
      const path = resolve(join(ROOT, dirname(file)), target);
      if (elsewhere.has(path)) continue;
      assert.ok(existsSync(path), `${file}: ${target} does not exist`);
    }
  }
});
