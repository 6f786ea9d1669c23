// `vault-cli shell-init`: a snippet sourced in a real bash defines a wrapper,
// and typing the wrapped command runs it under the supervisor (`run --agent`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CLI, Rig, ok } from '../support/rig.js';

const rig = new Rig();
const bin = join(rig.root, 'bin');

before(async () => {
  await rig.create();
  await rig.set('X', 'hunter2');
  await rig.addAgent('claude', ['X']);
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'vault-cli'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`,
  );
  // The wrapped tool: reads one value with whatever token it was given.
  writeFileSync(
    join(bin, 'mytool'),
    '#!/bin/sh\nprintf "args:%s token:%s value:%s\\n" "$*" "${VAULT_TOKEN:+set}" "$(vault-cli get X)"\n',
  );
  chmodSync(join(bin, 'vault-cli'), 0o755);
  chmodSync(join(bin, 'mytool'), 0o755);
});
after(() => rig.dispose());

function bash(script: string) {
  return spawnSync('bash', ['-c', script], {
    cwd: rig.root,
    encoding: 'utf8',
    env: { ...rig.env, PATH: `${bin}:${process.env.PATH}` },
    timeout: 60_000,
  });
}

test('agent wrap, then the sourced snippet runs the command under run --agent', async () => {
  ok(await rig.owner(['agent', 'wrap', 'claude', '--command', 'mytool']));
  const snippet = ok(await rig.owner(['shell-init', 'bash']));
  assert.match(
    snippet,
    /^mytool\(\) \{ command vault-cli run --agent 'claude' -- mytool "\$@"; \}$/m,
  );
  assert.match(snippet, /complete -F _vault_cli vault-cli/);

  // Without the snippet the tool has no token and is refused.
  const bare = bash('mytool a b');
  assert.match(bare.stdout, /token: value:\n/);

  const r = bash('eval "$(vault-cli shell-init bash)" && type -t mytool && mytool "a b" c');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^function\n/);
  assert.match(r.stdout.replace(/\r/g, ''), /args:a b c token:set value:hunter2\n/);
  // No init ran, so the only token the tool can have is run's session token.
});

for (const [shell, script] of [
  ['zsh', 'eval "$(vault-cli shell-init zsh)" && whence -w mytool _vault_cli'],
  [
    'fish',
    'vault-cli shell-init fish | source; and functions -q mytool; and complete -C "vault-cli ge"',
  ],
] as const) {
  const missing = spawnSync('sh', ['-c', `command -v ${shell}`]).status !== 0;
  test(
    `${shell}: the snippet loads completion and defines the wrapper`,
    { skip: missing && `${shell} is not installed (apt-get install ${shell})` },
    () => {
      const s = spawnSync(shell, ['-c', script], {
        cwd: rig.root,
        encoding: 'utf8',
        env: { ...rig.env, HOME: rig.root, PATH: `${bin}:${process.env.PATH}` },
      });
      assert.equal(s.status, 0, `${shell}: ${s.stderr}`);
      assert.equal(s.stderr, '', shell);
      assert.match(s.stdout, shell === 'zsh' ? /mytool: function\n_vault_cli: function/ : /^get\t/);
    },
  );
}

test('agent wrap --rm drops the wrapper; a command name that is not one is refused', async () => {
  ok(await rig.owner(['agent', 'wrap', 'claude', '--command', 'mytool', '--rm']));
  assert.doesNotMatch(ok(await rig.owner(['shell-init', 'bash'])), /mytool\(\)/);
  const bad = await rig.owner(['agent', 'wrap', 'claude', '--command', 'x; rm -rf ~']);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /^vault-cli: VLT-1001: cannot wrap/);
});

test('a wraps.json that is not JSON: one VLT-3007 line naming the file, and agent wrap leaves it alone', async () => {
  const file = join(rig.configDir, 'wraps.json');
  writeFileSync(file, '[{"agent": "claude", "command": ');
  try {
    for (const args of [
      ['shell-init', 'bash'],
      ['agent', 'wrap', 'claude', '--command', 'other'],
    ]) {
      const r = await rig.owner(args);
      assert.equal(r.code, 70, args.join(' '));
      assert.equal(r.stderr, `vault-cli: VLT-3007: ${file} is not a list of wraps.\n`);
    }
    assert.equal(readFileSync(file, 'utf8'), '[{"agent": "claude", "command": ');
  } finally {
    rmSync(file);
  }
});
