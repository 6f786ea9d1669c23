// The guardrail skill `vault-cli init` leaves for the coding agents it finds in HOME.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { BEGIN_MARK, END_MARK } from '../../src/cli/skill.js';
import { Rig, type Result } from '../support/rig.js';

const rig = new Rig();
let token = '';

before(async () => {
  await rig.create();
  token = await rig.addAgent('claude', []);
});
after(() => rig.dispose());

/** A fresh HOME holding the given directories. */
function home(...dirs: string[]): string {
  const h = mkdtempSync(join(rig.root, 'home-'));
  for (const d of dirs) mkdirSync(join(h, d), { recursive: true });
  return h;
}

function init(h: string, more: string[] = []): Promise<Result> {
  return rig.agent(['init', ...more], undefined, { input: token + '\n', env: { HOME: h } });
}

/** Every file under `dir`, relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

function assertGuardrails(text: string, where: string): void {
  assert.ok(!text.includes(token), `${where}: holds the token`);
  assert.ok(!text.includes(token.slice(4, 20)), `${where}: holds part of the token`);
  for (const needle of [
    'One credential at a time',
    'Never loop over names, never enumerate',
    'Never echo a secret into the conversation',
    'vault-cli proxy env',
    'vault-cli render',
    'VLT-2041',
    'VLT-2042',
    'VLT-2043',
    'VLT-2050',
    'VLT-2045',
    'VLT-2048',
    'write only into a pipe',
    'locks the agent down',
  ]) {
    assert.ok(text.includes(needle), `${where}: lacks ${JSON.stringify(needle)}`);
  }
}

const cases = [
  {
    dir: '.claude',
    file: '.claude/skills/vault-cli/SKILL.md',
    head: /^---\nname: vault-cli\ndescription: .+\n---\n/,
  },
  { dir: '.codex', file: '.codex/AGENTS.md', head: null },
  {
    dir: '.cursor',
    file: '.cursor/rules/vault-cli.mdc',
    head: /^---\ndescription: .+\nglobs:\nalwaysApply: true\n---\n/,
  },
  { dir: '.gemini', file: '.gemini/GEMINI.md', head: null },
  { dir: '.agents', file: '.agents/AGENTS.md', head: null },
];

for (const c of cases) {
  test(`${c.dir} in HOME: init installs ${c.file} with the guardrails and no token, once`, async () => {
    const h = home(c.dir);
    const r = await init(h);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes(token));
    assert.match(r.stderr, new RegExp(`guardrails for \\w+ in ${join(h, c.file)}\\n`));
    assert.deepEqual(files(h), [c.file]);
    const first = readFileSync(join(h, c.file), 'utf8');
    assertGuardrails(first, c.file);
    if (c.head !== null) assert.match(first, c.head);
    else assert.equal(first.split(BEGIN_MARK).length, 2);

    assert.equal((await init(h)).code, 0);
    assert.equal(readFileSync(join(h, c.file), 'utf8'), first, 'a second init changes nothing');
  });
}

test('a shared file keeps what the user wrote; our section is replaced, not added', async () => {
  const h = home('.codex', '.gemini');
  writeFileSync(join(h, '.codex', 'AGENTS.md'), '# Mine\n\nUse tabs.\n');
  const stale = `# Top\n\n${BEGIN_MARK}\nold rules\n${END_MARK}\n\n# Bottom\n`;
  writeFileSync(join(h, '.gemini', 'GEMINI.md'), stale);
  assert.equal((await init(h)).code, 0);
  assert.equal((await init(h)).code, 0);
  const codex = readFileSync(join(h, '.codex', 'AGENTS.md'), 'utf8');
  assert.ok(codex.startsWith('# Mine\n\nUse tabs.\n\n' + BEGIN_MARK));
  assert.equal(codex.split(BEGIN_MARK).length, 2);
  const gemini = readFileSync(join(h, '.gemini', 'GEMINI.md'), 'utf8');
  assert.ok(gemini.startsWith('# Top\n\n' + BEGIN_MARK));
  assert.ok(gemini.endsWith(`${END_MARK}\n\n# Bottom\n`));
  assert.ok(!gemini.includes('old rules'));
  assert.equal(gemini.split(BEGIN_MARK).length, 2);
});

test('every agent at once; --no-skill installs nothing; no agent directory installs nothing', async () => {
  const all = home(...cases.map((c) => c.dir));
  assert.equal((await init(all)).code, 0);
  assert.deepEqual(files(all), cases.map((c) => c.file).sort());

  const skipped = home(...cases.map((c) => c.dir));
  const r = await init(skipped, ['--no-skill']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(files(skipped), []);
  assert.doesNotMatch(r.stderr, /guardrails/);

  const bare = home();
  assert.equal((await init(bare)).code, 0);
  assert.deepEqual(readdirSync(bare), []);
});

test('--skill <agent> installs that one only, creating its directory', async () => {
  const h = home('.claude');
  const r = await init(h, ['--skill', 'cursor']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(files(h), ['.cursor/rules/vault-cli.mdc']);
  const bad = await init(h, ['--skill', 'vim']);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /^vault-cli: VLT-1001: unknown agent for --skill/);
});
