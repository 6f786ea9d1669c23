/**
 * The real agent CLIs, installed from the npm registry at a pinned version
 * into a directory of their own under the system temp directory, and kept
 * there for the next run. Not devDependencies: the three weigh about 890 MB
 * installed (Claude Code and Codex ship one native binary each, 400 MB
 * apiece), and every `npm ci` of the project would pay for them. npm runs
 * with a throwaway HOME and cache, so the install writes nowhere else.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface AgentPackage {
  readonly pkg: string;
  readonly version: string;
}

/**
 * The caller's way to the registry: proxies, CA files and npm's own settings
 * from the environment (a network behind a TLS-inspecting proxy needs them).
 * Nothing else of the caller's environment reaches npm.
 */
function network(): NodeJS.ProcessEnv {
  const pass = /^(https?_proxy|no_proxy|node_extra_ca_certs|ssl_cert_(file|dir)|npm_config_.*)$/i;
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => pass.test(k)));
}

/**
 * Where the installs go by default. A `run` sandbox has a /tmp of its own, so
 * the tests that start an agent inside one install under /var/tmp (`SHARED`),
 * which the sandbox shows read-only, as it would a real installation.
 */
export const PRIVATE = join(tmpdir(), 'vault-cli-agents');
export const SHARED = '/var/tmp/vault-cli-agents';

/** Where `pkg@version` is (or will be) installed under `root`: a prefix with its node_modules. */
export function agentPrefix(p: AgentPackage, root = PRIVATE): string {
  return join(root, `${p.pkg.replace('/', '+')}@${p.version}`);
}

/**
 * Installs `pkg@version` unless a finished install is already there; returns
 * its prefix. Installs go to a fresh directory renamed into place at the end,
 * so a run killed half-way or two test processes at once never leave a
 * broken install behind for the next.
 */
export async function installAgent(p: AgentPackage, root = PRIVATE): Promise<string> {
  const prefix = agentPrefix(p, root);
  const done = join(prefix, '.installed');
  if (existsSync(done)) return prefix;
  mkdirSync(root, { recursive: true });
  const work = mkdtempSync(`${prefix}.tmp-`);
  try {
    const env: NodeJS.ProcessEnv = {
      ...network(),
      PATH: process.env.PATH,
      HOME: work,
      npm_config_cache: join(work, '.npm-cache'),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
    await new Promise<void>((resolve, reject) => {
      execFile(
        'npm',
        ['install', '--prefix', join(work, 'p'), `${p.pkg}@${p.version}`],
        { env, maxBuffer: 16 << 20 },
        (err, _stdout, stderr) =>
          err ? reject(new Error(`npm install ${p.pkg}@${p.version}: ${stderr}`)) : resolve(),
      );
    });
    writeFileSync(join(work, 'p', '.installed'), `${p.pkg}@${p.version}\n`);
    try {
      renameSync(join(work, 'p'), prefix);
    } catch (e) {
      // Another process finished first: its install is as good as this one.
      if (!existsSync(done)) throw e;
    }
    return prefix;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
