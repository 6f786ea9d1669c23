/**
 * What the benches that time this tree against a baseline build share: the
 * baseline built from an earlier commit, a throwaway vault's directory and
 * environment, and a CLI call that must succeed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { liftValuesArgs, ok, PASSPHRASE, ROOT, type Rig } from '../test/support/rig.js';

/**
 * The tree at `ref`, exported with `git archive` into `into` and built there
 * against this tree's node_modules; returns its CLI script.
 */
export function buildBaseline(ref: string, into: string): string {
  execFileSync('sh', ['-c', `git -C "$0" archive "$1" | tar -x -C "$2"`, ROOT, ref, into]);
  symlinkSync(join(ROOT, 'node_modules'), join(into, 'node_modules'));
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: into,
  });
  return join(into, 'dist', 'src', 'cli', 'main.js');
}

/**
 * A vault's home in a new temp directory named from `prefix` (the caller
 * removes `root`): the owner's passphrase in a file, and the environment of a
 * CLI run there (`extra` added, e.g. VAULT_HOST_IDLE_MS).
 */
export function benchVault(
  prefix: string,
  extra: NodeJS.ProcessEnv,
): { root: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const passFile = join(root, 'pass');
  writeFileSync(passFile, PASSPHRASE + '\n', { mode: 0o600 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    LANG: 'C.UTF-8',
    VAULT_DIR: join(root, 'vault'),
    VAULT_CONFIG_DIR: join(root, 'config'),
    VAULT_PASSPHRASE_FILE: passFile,
    ...extra,
  };
  return { root, env };
}

/** `vault-cli args` by `script`, fed `input`; its stdout. Throws with its stderr when it fails. */
export function cli(script: string, env: NodeJS.ProcessEnv, args: string[], input = ''): string {
  const r = spawnSync(process.execPath, [script, ...args], { env, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vault-cli ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** How many names one import file holds: one import takes about 5,000 (its list of names under 512 KiB). */
export const IMPORT_BATCH = 4000;

/**
 * The .env file of entries `from` to the next batch (below `n`) in `root`,
 * as the 100,000-entry benches import them: its path.
 */
export function importBatch(root: string, from: number, n: number): string {
  const file = join(root, `bench-${from}.env`);
  const lines: string[] = [];
  for (let i = from; i < Math.min(n, from + IMPORT_BATCH); i++) {
    lines.push(`BENCH_KEY_${String(i).padStart(6, '0')}=value-${i}-${'x'.repeat(24)}`);
  }
  writeFileSync(file, lines.join('\n') + '\n', { mode: 0o600 });
  return file;
}

/**
 * A vault on `rig` (`create` takes `--store <url>` for a team vault) with one
 * entry, `db`, and `agents` agents scoped to it with their values-a-minute
 * limit lifted (a load run reaches it in a second): their tokens.
 */
export async function benchAgents(
  rig: Rig,
  agents: number,
  create: string[] = [],
): Promise<string[]> {
  ok(await rig.owner(['vault', 'create', ...create]));
  await rig.set('db', 'bench-value');
  const tokens: string[] = [];
  for (let i = 0; i < agents; i++) {
    tokens.push(await rig.addAgent(`bench${i}`, ['db']));
    ok(await rig.owner(liftValuesArgs(`bench${i}`)));
  }
  return tokens;
}
