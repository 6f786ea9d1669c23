// `vault-cli completion install`: the script goes where each shell loads it,
// in a throwaway HOME; no dotfile changes without --rc, and running it again
// changes nothing.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../support/rig.js';

const root = mkdtempSync(join(tmpdir(), 'vault-cli-completion-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A home of its own for each test; XDG dirs unset, so the defaults under HOME apply. */
function home(name: string): { home: string; env: NodeJS.ProcessEnv } {
  const h = join(root, name);
  return { home: h, env: { PATH: process.env.PATH, HOME: h, LANG: 'C.UTF-8', SHELL: '/bin/bash' } };
}

async function install(env: NodeJS.ProcessEnv, ...args: string[]) {
  const r = await runCli(['completion', 'install', ...args], env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '');
  return r.stderr;
}

async function script(env: NodeJS.ProcessEnv, shell: string): Promise<string> {
  return (await runCli(['completion', shell], env)).stdout;
}

test('bash ($SHELL): bash-completion’s user dir, no dotfile; again: up to date, untouched', async () => {
  const { home: h, env } = home('bash');
  const file = join(h, '.local', 'share', 'bash-completion', 'completions', 'vault-cli');
  assert.match(await install(env), new RegExp(`^vault-cli: wrote ${file}\n`));
  assert.equal(readFileSync(file, 'utf8'), await script(env, 'bash'));
  assert.ok(!existsSync(join(h, '.bashrc')));
  const mtime = statSync(file).mtimeMs;
  assert.match(await install(env, 'bash'), /is up to date/);
  assert.equal(statSync(file).mtimeMs, mtime);
  assert.deepEqual(readdirSync(h), ['.local']);
});

test('XDG_DATA_HOME moves the bash file; fish goes to its completions dir', async () => {
  const { home: h, env } = home('xdg');
  await install({ ...env, XDG_DATA_HOME: join(h, 'data') }, 'bash');
  assert.ok(existsSync(join(h, 'data', 'bash-completion', 'completions', 'vault-cli')));
  await install(env, 'fish');
  const fish = join(h, '.config', 'fish', 'completions', 'vault-cli.fish');
  assert.equal(readFileSync(fish, 'utf8'), await script(env, 'fish'));
});

test('zsh: ~/.zfunc/_vault-cli; ~/.zshrc only with --rc, and its line only once', async () => {
  const { home: h, env } = home('zsh');
  const said = await install(env, 'zsh');
  assert.equal(readFileSync(join(h, '.zfunc', '_vault-cli'), 'utf8'), await script(env, 'zsh'));
  assert.ok(!existsSync(join(h, '.zshrc')));
  assert.match(said, /add to .*\.zshrc \(or run again with --rc\)/);

  await install(env, 'zsh', '--rc');
  await install(env, 'zsh', '--rc');
  const rc = readFileSync(join(h, '.zshrc'), 'utf8');
  const line = `fpath=('${join(h, '.zfunc')}' $fpath); autoload -Uz compinit && compinit`;
  assert.equal(rc, `# vault-cli completion\n${line}\n`);
});

test('an unknown shell is refused', async () => {
  const { env } = home('csh');
  const r = await runCli(['completion', 'install'], { ...env, SHELL: '/bin/csh' });
  assert.equal(r.code, 64, r.stderr);
  assert.match(r.stderr, /VLT-1001: unknown shell "csh"/);
});
