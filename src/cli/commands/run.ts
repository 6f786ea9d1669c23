/**
 * `vault-cli run [--agent <name>] [--scope <entry>]... [--keep-env NAME]...
 * [--allow-write DIR]... [--allow-read PATH]... [--allow-net HOST:PORT]...
 * [--no-sandbox] -- <command> [args...]`.
 * An owner command: it decides the agent's sandbox (shell/sandbox-policy.ts,
 * docs/sandbox.md) before anything is asked; with the owner's passphrase it
 * asks the host for a session token for the agent and holds the session on a
 * connection of its own (the host ends the session when that connection
 * ends, even if `run` is killed); serves a proxy that knows the session by
 * the URL's user-info (with a CA that lives in memory only); runs the command
 * in the sandbox under the supervisor in a scrubbed environment, shows the
 * dashboard on Ctrl-], ends the session when the command ends, and exits
 * with the command's status. Without a terminal (a script) or with
 * `--no-pty`, the command gets pipes instead of a pty: its stdout and stderr
 * reach ours apart, bytes intact. On stderr `run` says what it starts, which
 * variables it did not pass, the proxy's refusals, and what the session did.
 * The vault host stays a process of its own (docs/decisions.md: Supervisor).
 */
import {
  accessSync,
  constants,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_MAX_PROCS, PROXY_PORT } from '../../core/commands.js';
import { VaultError } from '../../core/errors.js';
import { NO_PROXY, proxyEnv, upstreamRoots } from '../../proxy/env.js';
import {
  cwdControls,
  policyProbes,
  sandboxPolicy,
  type PathKind,
  type SandboxPolicy,
} from '../../../shell/sandbox-policy.js';
import {
  chooseProfile,
  loadProfiles,
  planState,
  type Profile,
  type StatePlan,
} from '../../../shell/profiles.js';
import type { AuditView } from '../../core/audit.js';
import { flag, flagList, flagString, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';
import type * as Sandbox from '../../../shell/sandbox.js';
import type { ChildEnv } from '../../../shell/env.js';
import type { SuperviseOptions } from '../../../shell/supervisor.js';
import { findCommand } from '../find-command.js';
import type { DashboardApi } from '../../../tui/api.js';
import type { RefusalHook } from '../../proxy/refusal.js';
import type { Signal } from '../../proxy/policy.js';

/**
 * Every agent token file `run` can know of: the one of each config directory
 * (in use, and the defaults), and VAULT_TOKEN_FILE. Hidden from the sandbox,
 * and their tokens kept out of the child's environment: with a long-lived
 * token the agent would act beyond its session.
 */
function tokenFiles(ctx: CliContext): string[] {
  const file = ctx.env.VAULT_TOKEN_FILE;
  return [
    ctx.paths.tokenFile,
    ...ctx.paths.defaultDirs.map((d) => join(d, 'token')),
    ...(file === undefined || file === '' ? [] : [resolve(file)]),
  ];
}

function longLivedToken(path: string): string[] {
  try {
    return [readFileSync(path, 'utf8').trim()];
  } catch {
    return [];
  }
}

/** What is at `p`: a directory, a file, or nothing. */
function kind(p: string): PathKind | null {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'file';
  } catch {
    return null;
  }
}

/** Ctrl-]: hands the terminal to the dashboard and back, as telnet and docker attach use it. */
const HAND_OVER_KEY = 0x1d;

/**
 * The sandbox for this invocation: the facts are gathered here (what exists,
 * where vault-cli is installed and found), the decision is the policy's.
 */
function policyFor(
  ctx: CliContext,
  sessionDir: string,
  sandbox: Pick<typeof Sandbox, 'which' | 'looksLikePlaceholder'>,
  plan: StatePlan,
): SandboxPolicy {
  const { which } = sandbox;
  const p = ctx.paths;
  const onPath = which('vault-cli', ctx.env.PATH);
  const facts = {
    cwd: process.cwd(),
    home: homedir(),
    uid: process.getuid?.() ?? null,
    xdgRuntimeDir: ctx.env.XDG_RUNTIME_DIR,
    sessionDir,
    vaultPaths: [
      p.vaultDir,
      p.socketDir,
      p.configDir,
      ...p.defaultDirs,
      ...[p.passphraseFile, p.newPassphraseFile].filter((f) => f !== null),
      ...tokenFiles(ctx),
    ],
    readOnly: [
      resolve(dirname(ctx.script), '..', '..', '..'),
      ...(onPath === null ? [] : [onPath, realpathSync(onPath)]),
      ...p.shellStartup,
      ...plan.readOnly.map((r) => r.path),
    ],
    allowRead: flagList(ctx, 'allow-read'),
    allowWrite: [...flagList(ctx, 'allow-write'), ...plan.write.map((w) => w.path)],
    allowNet: flagList(ctx, 'allow-net'),
    privateFiles: plan.private,
  };
  const probes = policyProbes(facts);
  // A placeholder an earlier session left is made again and removed after, like an absent path.
  const controls = new Set(cwdControls(facts.cwd));
  const left = (f: string) => controls.has(f) && sandbox.looksLikePlaceholder(f);
  // What `run` creates before the agent starts counts as there already.
  const planned = new Map<string, PathKind>([
    ...plan.write.map((w) => [w.path, 'dir'] as const),
    ...plan.readOnly.map((r) => [r.path, r.kind] as const),
    ...plan.private.map((f) => [f.path, 'file'] as const),
  ]);
  return sandboxPolicy({
    ...facts,
    found: new Map(probes.map((f) => [f, left(f) ? null : (kind(f) ?? planned.get(f) ?? null)])),
    links: new Set(probes.filter(isLink)),
    unwritable: new Set(probes.map((f) => dirname(f)).filter((d) => !writableDir(d))),
  });
}

/** Whether this process may create entries in directory `d` (false when it is no directory). */
function writableDir(d: string): boolean {
  try {
    accessSync(d, constants.W_OK);
    return statSync(d).isDirectory();
  } catch {
    return false;
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** One warning line per project control the owner opened with --allow-write: an explicit, visible choice. */
function warnOpened(ctx: CliContext, policy: SandboxPolicy): void {
  for (const p of policy.openedControls)
    ctx.stderr.write(
      `vault-cli: warning: --allow-write ${p}: the agent may change what your own tools run there, outside the sandbox (docs/sandbox.md)\n`,
    );
}

/**
 * The agent's profile (shell/profiles.ts): `--profile`, else the command's
 * name; the owner's profiles file extends the shipped ones.
 * @throws VaultError VLT-1002 for an unknown profile or a broken profiles file.
 */
function profileFor(ctx: CliContext, file: string): Profile | null {
  let user: unknown = null;
  try {
    user = JSON.parse(readFileSync(ctx.paths.profilesFile, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new VaultError(
        'VLT-1002',
        `${ctx.paths.profilesFile} is not a JSON object of profiles (docs/run.md).`,
      );
  }
  return chooseProfile(
    loadProfiles(user, ctx.paths.profilesFile),
    basename(file),
    flagString(ctx, 'profile'),
  );
}

/**
 * The model key as a reference: `--model-key ENTRY` (or `ENTRY/FIELD`), else
 * the profile's entry when the agent's scope holds it (a reference the proxy
 * would refuse would cost the agent rate slots on every request). Null: the
 * variable is left as the environment has it.
 */
function modelKeyRef(
  profile: Profile | null,
  named: string | undefined,
  scope: readonly string[] | null,
): { variable: string; ref: string } | null {
  const model = profile?.model ?? null;
  if (model === null || named === 'none') return null;
  const [entry, field] =
    named === undefined ? [model.entry, model.field] : named.split(/\/(?=[A-Za-z0-9_-]+$)/);
  if (entry === undefined) return null;
  if (named === undefined && scope !== null && !scope.includes(entry)) return null;
  const enc = entry.replaceAll('%', '%25').replaceAll('/', '%2F');
  return { variable: model.variable, ref: `vault://${enc}/${field ?? model.field}` };
}

/**
 * The variables the profile sets, and its model key variable: set after the
 * proxy block. NO_PROXY never names the model's host: a request that went
 * around the proxy would carry the bare reference and no key.
 */
function profileVars(
  profile: Profile | null,
  key: { variable: string; ref: string } | null,
): { vars: [string, string][]; throughProxy: string | null } {
  const vars: [string, string][] = Object.entries(profile?.env ?? {});
  if (key !== null) vars.push([key.variable, key.ref]);
  const host = profile?.model?.host.replace(/:[0-9]+$/, '') ?? null;
  return { vars, throughProxy: host };
}

/** `run --print-policy`: what the agent would get, one fact a line; nothing is started or created. */
function printPolicy(
  ctx: CliContext,
  p: {
    profile: Profile | null;
    plan: StatePlan;
    policy: SandboxPolicy | null;
    key: { variable: string; ref: string } | null;
    env: { pass: readonly string[]; stripped: readonly string[]; set: readonly string[] };
  },
): number {
  const home = homedir();
  const show = (x: string) =>
    x === home || x.startsWith(`${home}/`) ? `~${x.slice(home.length)}` : x;
  const out: string[] = [];
  const line = (what: string, text: string) => out.push(`${what.padEnd(10)}${text}`);
  line('profile', p.profile === null ? 'none' : `${p.profile.name}: ${p.profile.summary}`);
  if (p.policy === null) {
    line('sandbox', 'none (--no-sandbox): the agent reads, writes and reaches all you can');
  } else {
    const pol = p.policy;
    line('read', '/ (everything not hidden below), read-only');
    line('write', `${show(pol.cwd)} (working directory)`);
    line('write', '/tmp (private to the sandbox)');
    for (const w of pol.writable) {
      const made = p.plan.write.find((x) => x.path === w)?.create === true;
      line('write', `${show(w)}${made ? ' (created)' : ''}`);
    }
    for (const f of pol.privateFiles) {
      const keeps = p.plan.private.find((x) => x.path === f.path)?.ownerKeeps ?? [];
      line(
        'write',
        `${show(f.path)} (a private copy, merged back on exit but for ${keeps.length} keys that can run commands: ${keeps.slice(0, 3).join(', ')}, ...)`,
      );
    }
    for (const r of pol.readOnly) {
      const made = p.plan.readOnly.find((x) => x.path === r)?.create === true;
      line('read-only', `${show(r)}${made ? ' (an empty placeholder while it runs)' : ''}`);
    }
    for (const h of pol.hidden) line('hidden', show(h.path));
    line('net', `through the proxy (127.0.0.1:${PROXY_PORT}): any host but this machine's`);
    for (const r of pol.routes) line('net', `direct: ${r.host}:${r.port}`);
  }
  if (p.profile?.model != null) {
    const m = p.profile.model;
    line(
      'model',
      p.key === null
        ? `${m.variable} set to vault://${m.entry}/${m.field} if the agent's scope holds ${m.entry}`
        : `${p.key.variable}=${p.key.ref}`,
    );
    line(
      '',
      `the proxy fills ${m.header} for the hosts ${m.entry} is bound to (expected: ${m.host})`,
    );
  }
  line('env', `passed: ${p.env.pass.join(' ') || '(none)'}`);
  line('env', `stripped: ${p.env.stripped.join(' ') || '(none)'}`);
  line('env', `set: ${p.env.set.join(' ')}`);
  ctx.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

/**
 * The session's proxy: PROXY_PORT when free, any free port otherwise; its CA
 * is made for this session and its certificate lives in `dir` until the
 * session ends.
 */
async function sessionProxy(
  ctx: CliContext,
  dir: string,
  sessionToken: string,
  confine: ReadonlySet<string> | undefined,
  onRefusal: RefusalHook,
) {
  const [{ startProxy, proxyUrl }, { Authority }, { HostChannel }] = await Promise.all([
    import('../../proxy/server.js'),
    import('../../proxy/ca.js'),
    import('../../client/client.js'),
  ]);
  // Kept-alive connections to the host: the proxy calls it on every fill.
  const host = new HostChannel(ctx.client);
  const files = {
    cert: join(dir, 'ca.pem'),
    bundle: join(dir, 'ca-bundle.pem'),
    systemRoots: ctx.paths.systemRoots,
  };
  const authority = Authority.ephemeral(files);
  // SSL_CERT_DIR: a directory of the session CA alone (Go and rustls read every
  // file in it; OpenSSL, which wants hashed names, has SSL_CERT_FILE).
  const certDir = join(dir, 'certs');
  mkdirSync(certDir, { mode: 0o700 });
  copyFileSync(files.cert, join(certDir, 'vault-cli-session-ca.pem'));
  const options = {
    authority,
    upstreamCa: upstreamRoots(ctx.paths.systemRoots, flagList(ctx, 'upstream-ca')),
    requireCaller: true,
    sessionToken,
    ...(confine === undefined ? {} : { confine }),
    onRefusal,
    resolve: async (
      refs: readonly { entry: string; field: string }[],
      to: string,
      caller: string | null,
    ) => {
      if (caller === null) throw new VaultError('VLT-2040');
      const { values } = await host.call('resolve', { token: caller, refs: [...refs], host: to });
      return values.map((v) => Buffer.from(v, 'base64'));
    },
    // A tunnel opens only for a token the host knows: an ended session's gets 403 at CONNECT.
    admit: async (caller: string) => {
      await host.call('whoami', { token: caller });
    },
    // An attempt it refused that counts against the session's agent: the host decides and records.
    report: async (signal: Signal, caller: string | null) => {
      if (caller === null) throw new VaultError('VLT-2040');
      return host.call('report', { token: caller, ...signal, refs: [...signal.refs] });
    },
  };
  const proxy = await startProxy({ ...options, port: PROXY_PORT }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      return startProxy({ ...options, port: 0 });
    },
  );
  return {
    proxy,
    host,
    files: { ...files, dir: certDir },
    url: (token: string) => proxyUrl(proxy.port, token),
  };
}

/** The sandbox `run` starts the agent in: what the policy decided, and what carries it out. */
interface Box {
  readonly policy: SandboxPolicy;
  readonly programs: { readonly bwrap: string; readonly socat: string };
  readonly sandbox: typeof Sandbox;
  readonly maxProcs: number;
}

/**
 * The agent's environment (shell/env.ts): the session token, and the proxy
 * block pointing at the session's proxy; inside the sandbox, at its loopback
 * end, with the allowed routes reached directly and VAULT_DIR at the session
 * directory, where the client finds the session's socket as it would the host's.
 */
async function agentEnv(
  ctx: CliContext,
  s: {
    token: string;
    dir: string;
    proxy: Awaited<ReturnType<typeof sessionProxy>>;
    box: Box | null;
    profile: ReturnType<typeof profileVars>;
  },
): Promise<ChildEnv> {
  const { files } = s.proxy;
  const url = s.proxy.url(s.token);
  // Inside, the proxy's loopback is the sandbox's own: always the documented port.
  const inside = s.box === null ? url : url.replace(/:[0-9]+$/, `:${PROXY_PORT}`);
  const noProxy = [...NO_PROXY, ...(s.box?.policy.routes.map((r) => r.host) ?? [])].filter(
    (h) => h !== s.profile.throughProxy,
  );
  const ca = { proxyCa: files.cert, proxyCaBundle: files.bundle, proxyCaDir: files.dir };
  const { childEnv } = await import('../../../shell/env.js');
  return childEnv({
    parent: ctx.env,
    sessionToken: s.token,
    proxy: [
      ...proxyEnv(inside, ca, noProxy),
      ...(s.box === null ? [] : [['VAULT_DIR', s.dir] as [string, string]]),
      ...s.profile.vars,
    ],
    keep: flagList(ctx, 'keep-env'),
    forbiddenValues: [
      ...tokenFiles(ctx).flatMap(longLivedToken),
      ...(ctx.env.VAULT_TOKEN === undefined ? [] : [ctx.env.VAULT_TOKEN]),
    ],
  });
}

/**
 * Ctrl-] to the dashboard and back. While it is shown the proxy's refusals
 * are only counted: the dashboard lists them itself, and a line on its
 * screen (or on the agent's, which is repainted on return) would be torn or lost.
 */
function dashboardHandOver(
  ctx: CliContext,
  api: DashboardApi,
  report: Refusals,
): NonNullable<SuperviseOptions['handOver']> {
  return {
    key: HAND_OVER_KEY,
    show: async (io) => {
      const { showDashboard } = await import('../../../tui/index.js');
      report.hold();
      try {
        await showDashboard({
          api,
          stdin: io.stdin,
          stdout: io.stdout,
          signal: io.signal,
          vault: ctx.paths.vaultDir,
        });
      } finally {
        report.resume();
      }
    },
    onError: (err) => {
      ctx.stderr.write(
        `vault-cli: ${err instanceof VaultError ? `${err.code}: ${err.message}` : 'the dashboard failed'}\r\n`,
      );
    },
  };
}

/**
 * `--max-procs N`, checked: the sandbox's own start script and relays need a
 * few, so fewer than 16 could not start an agent at all.
 * @throws VaultError VLT-1002 for anything but a whole number from 16 up.
 */
function maxProcs(ctx: CliContext): number {
  const text = flagString(ctx, 'max-procs');
  if (text === undefined) return DEFAULT_MAX_PROCS;
  const n = /^[0-9]{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 16))
    throw new VaultError(
      'VLT-1002',
      `--max-procs takes a whole number from 16 up, not ${JSON.stringify(text)}.`,
    );
  return n;
}

/**
 * The process limit's second half: a pids cgroup where one can be made
 * (shell/sandbox-pids.ts). As root it is the only half that holds, so its
 * absence is said.
 */
async function processLimit(ctx: CliContext, max: number) {
  const { pidsCgroup } = await import('../../../shell/sandbox-pids.js');
  const cgroup = pidsCgroup(max);
  if (cgroup === null && process.getuid?.() === 0)
    ctx.stderr.write(
      'vault-cli: warning: no process limit for the sandbox: RLIMIT_NPROC does not bind root, and no pids cgroup could be made here (docs/sandbox.md)\n',
    );
  return cgroup;
}

/**
 * Descriptors `run` inherited (an `exec 260<file` in the owner's shell, an
 * IDE's or CI runner's leftovers) must reach no child: marked close-on-exec
 * before anything is started.
 */
async function dropInheritedFds(): Promise<void> {
  const { closeOnExecAbove2 } = await import('../../kernel/fds.js');
  closeOnExecAbove2();
}

/** A held session: the agent's command under the supervisor, with the proxy (and sandbox) around it. */
async function supervised(
  ctx: CliContext,
  s: {
    command: readonly string[];
    dir: string;
    /** Absent: the terminal's owner session stands for it. */
    passphrase: string | undefined;
    token: string;
    agent: string;
    pty: boolean;
    report: Refusals;
    box: (Box & { hostSocket: string }) | null;
    profile: ReturnType<typeof profileVars>;
  },
): Promise<number> {
  const { box, token } = s;
  let proxy: Awaited<ReturnType<typeof sessionProxy>> | undefined;
  let relays: { close(): void } | undefined;
  let cgroup: { procs: string; remove(): Promise<void> } | null = null;
  try {
    // Sandboxed, the proxy is the agent's only way out: not back into this machine,
    // except to what the owner allowed with --allow-net.
    proxy = await sessionProxy(ctx, s.dir, token, box?.policy.confine, (code, detail) =>
      s.report.refused(new VaultError(code, detail)),
    );
    relays = box === null ? undefined : await box.sandbox.openRelays(box.policy, proxy.proxy);
    const { env, stripped } = await agentEnv(ctx, {
      token,
      dir: s.dir,
      proxy,
      box,
      profile: s.profile,
    });
    const { strippedLine } = await import('../../../shell/env.js');
    const told = strippedLine(stripped);
    if (told !== null) ctx.stderr.write(told + '\n');
    ctx.stderr.write(startLine(s.command, s.agent, box !== null, s.pty) + '\n');
    const [{ supervise }, { dashboardApi }] = await Promise.all([
      import('../../../shell/supervisor.js'),
      import('./dashboard.js'),
    ]);
    const api = s.pty ? await dashboardApi(ctx, s.passphrase) : null;
    if (box !== null) cgroup = await processLimit(ctx, box.maxProcs);
    const launch =
      box === null
        ? { file: s.command[0] as string, args: s.command.slice(1) }
        : box.sandbox.sandboxLaunch(
            {
              ...box.programs,
              policy: box.policy,
              hostSocket: box.hostSocket,
              command: s.command,
              maxProcs: box.maxProcs,
            },
            cgroup?.procs ?? null,
          );
    const result = await supervise({
      pty: s.pty,
      ...launch,
      env,
      cwd: process.cwd(),
      signalForeground: box !== null,
      output: { allowTitle: flag(ctx, 'allow-title') },
      io: { stdin: ctx.stdin, stdout: ctx.stdout, stderr: ctx.stderr, signals: process },
      ...(api === null ? {} : { handOver: dashboardHandOver(ctx, api, s.report) }),
    });
    return result.status;
  } finally {
    if (box !== null) await box.sandbox.removePlaceholders(box.policy);
    await cgroup?.remove();
    relays?.close();
    await proxy?.proxy.close();
    proxy?.host.close();
  }
}

/**
 * The model key reference for this session: the agent's scope (asked of the
 * host with the owner's passphrase) decides whether the profile's entry is
 * passed; `--model-key` is passed as named; a reference already in the
 * variable is left to pass.
 */
async function sessionModelKey(
  ctx: CliContext,
  passphrase: string | undefined,
  agent: string,
  profile: Profile | null,
): Promise<{ variable: string; ref: string } | null> {
  const named = flagString(ctx, 'model-key');
  if (profile?.model == null || named !== undefined) return modelKeyRef(profile, named, null);
  // A reference of the owner's own in the variable passes as it is (shell/env.ts) and wins.
  if (ctx.env[profile.model.variable]?.startsWith('vault://') === true) return null;
  const { scope } = await ctx.call('agent.show', { passphrase, name: agent });
  const narrowed = flagList(ctx, 'scope');
  return modelKeyRef(
    profile,
    undefined,
    scope.filter((e) => narrowed.length === 0 || narrowed.includes(e)),
  );
}

/** `--print-policy`: the environment as `run` would build it, with stand-ins for the session's values. */
async function policyReport(
  ctx: CliContext,
  profile: Profile | null,
  plan: StatePlan,
  box: Box | null,
): Promise<number> {
  const { childEnv } = await import('../../../shell/env.js');
  const named = flagString(ctx, 'model-key');
  const key = named === undefined ? null : modelKeyRef(profile, named, null);
  const vars = profileVars(profile, key).vars;
  const built = childEnv({
    parent: ctx.env,
    sessionToken: 'session',
    proxy: vars,
    keep: flagList(ctx, 'keep-env'),
  });
  const block = proxyEnv(
    'http://127.0.0.1',
    { proxyCa: '', proxyCaBundle: '', proxyCaDir: '' },
    [],
  );
  const set = new Set([
    'VAULT_TOKEN',
    ...block.map(([n]) => n),
    ...(box === null ? [] : ['VAULT_DIR']),
    ...vars.map(([n]) => n),
  ]);
  return printPolicy(ctx, {
    profile,
    plan,
    policy: box?.policy ?? null,
    key,
    env: {
      pass: Object.keys(built.env)
        .filter((n) => !set.has(n) && ctx.env[n] !== undefined)
        .sort(),
      stripped: built.stripped,
      set: [...set],
    },
  });
}

/**
 * A pty only for a person at a terminal: a script that captures or pipes
 * `run`'s output (or feeds its input) gets the command's bytes and streams
 * as they are, as it would without `run`.
 */
function wantsPty(ctx: CliContext): boolean {
  return !flag(ctx, 'no-pty') && ctx.stdin.isTTY === true && ctx.stdout.isTTY === true;
}

/** What `run` is about to start, said once on stderr before it does. */
function startLine(
  command: readonly string[],
  agent: string,
  sandboxed: boolean,
  pty: boolean,
): string {
  const where = sandboxed ? 'in the sandbox' : 'NOT sandboxed';
  const keys = pty ? '; Ctrl-] shows the dashboard' : '';
  return `vault-cli: running ${JSON.stringify(basename(command[0] ?? ''))} as agent ${JSON.stringify(agent)}, ${where}${keys}`;
}

/** The session proxy's refusals as `run` shows them on its stderr. */
interface Refusals {
  refused(err: VaultError): void;
  /** Only count (the dashboard holds the terminal). */
  hold(): void;
  /** Lines again; what was held back is counted in the next line of its code. */
  resume(): void;
  /** The counts of what was held back and never told (the session has ended). */
  flush(): void;
}

/** At most one line a second per code: an agent in a retry loop does not flood the owner's terminal. */
const REFUSAL_EVERY_MS = 1_000;

/**
 * One line per refusal, at most one a second per code; those held back are
 * counted in the next line of their code, or when the session ends. A
 * refusal's message names the code, the destination and the reference as
 * written, never a value (src/proxy/refusal.ts).
 */
export function refusalReport(write: (line: string) => void, now = Date.now): Refusals {
  const codes = new Map<string, { at: number; held: number }>();
  let holding = false;
  const more = (n: number) => (n === 0 ? '' : ` (${n} more before it)`);
  return {
    refused(err) {
      const c = codes.get(err.code) ?? { at: -Infinity, held: 0 };
      codes.set(err.code, c);
      if (holding || now() - c.at < REFUSAL_EVERY_MS) {
        c.held++;
        return;
      }
      write(
        `vault-cli: the proxy refused: ${err.line().replace(/^vault-cli: /, '')}${more(c.held)}`,
      );
      c.at = now();
      c.held = 0;
    },
    hold() {
      holding = true;
    },
    resume() {
      holding = false;
    },
    flush() {
      holding = false;
      for (const [code, c] of codes)
        if (c.held > 0) {
          write(`vault-cli: the proxy refused ${c.held} more with ${code}`);
          c.held = 0;
        }
    },
  };
}

/**
 * Ends the session with its own token, then lets go of the hold. In this
 * order: the hold's end revokes the session too, and a `session.end` sent
 * after it would present a revoked token (a `denied` record after every
 * session). Returns whether the host confirmed the token revoked.
 */
async function endSession(
  ctx: CliContext,
  token: string,
  held: { release(): void },
): Promise<boolean> {
  try {
    await ctx.call('session.end', { token });
    return true;
  } catch {
    // The host is gone or ended it already (the hold broke): the token is refused either way.
    return false;
  } finally {
    held.release();
  }
}

/**
 * What the session did, from the audit: reads and refusals as the agent
 * between this `run`'s session_start and session_end (the host records the
 * caller's pid as the source). Concurrent use of the same agent elsewhere
 * counts too: the audit does not tell sessions of one agent apart.
 */
async function summaryLine(
  ctx: CliContext,
  s: {
    passphrase: string | undefined;
    agent: string;
    since: number;
    revoked: boolean;
    status: number;
  },
): Promise<string> {
  const end = `exit status ${s.status}; session token ${s.revoked ? 'revoked' : 'ended with the host'}`;
  let records: AuditView[];
  try {
    ({ records } = await ctx.call('audit.list', {
      passphrase: s.passphrase,
      agent: s.agent,
      since: s.since,
    }));
  } catch {
    return `vault-cli: session ended: ${end}`;
  }
  const ours = (r: AuditView, action: string) =>
    r.action === action && r.subject === s.agent && r.source.startsWith(`pid:${process.pid} `);
  const from = records.find((r) => ours(r, 'session_start'))?.seq;
  const to = records.findLast((r) => ours(r, 'session_end'))?.seq ?? Infinity;
  const during = records.filter(
    (r) => from !== undefined && r.seq > from && r.seq < to && r.actor === `cli:${s.agent}`,
  );
  const reads = during.filter((r) => r.outcome === 'ok').length;
  const refusals = during.length - reads;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `vault-cli: session ended: ${plural(reads, 'read')}, ${plural(refusals, 'refusal')}; ${end}`;
}

export const run: Command = async (ctx) => {
  const words = ctx.inv.args.command;
  const command = Array.isArray(words) ? words : [];
  const file = command[0];
  if (file === undefined || file === '')
    throw new VaultError('VLT-1001', 'Give the command to run after --.');
  // Checked before a session is minted, so a typo costs no token.
  if (findCommand(file, ctx.env.PATH) === null)
    throw new VaultError('VLT-1004', `Command not found: ${JSON.stringify(file)}.`);
  await dropInheritedFds();
  const agent = flagString(ctx, 'agent') ?? basename(file);
  const profile = profileFor(ctx, file);
  const sandboxed = !flag(ctx, 'no-sandbox');
  // No silent fallback: a sandbox that cannot start is an error before anything is asked.
  const sandbox = sandboxed ? await import('../../../shell/sandbox.js') : null;
  const programs = sandbox?.probeSandbox(process.platform, ctx.env.PATH) ?? null;
  if (!sandboxed && !flag(ctx, 'print-policy'))
    ctx.stderr.write(
      'vault-cli: warning: --no-sandbox: the agent runs as you, with your files, processes and network (docs/sandbox.md)\n',
    );
  const dir = mkdtempSync(join(tmpdir(), 'vault-cli-run-'));
  try {
    // Decided before the passphrase is asked: a path the sandbox cannot honour costs no session.
    // Without the sandbox the agent writes your files directly: nothing to bind, copy or merge.
    const plan = planState(sandboxed ? profile : null, homedir(), dir, kind);
    const box =
      sandbox === null || programs === null
        ? null
        : {
            policy: policyFor(ctx, dir, sandbox, plan),
            programs,
            sandbox,
            maxProcs: maxProcs(ctx),
          };
    if (flag(ctx, 'print-policy')) return await policyReport(ctx, profile, plan, box);
    if (box !== null) warnOpened(ctx, box.policy);
    // Kept for the dashboard's owner calls while the command runs; see docs/threat-model.md.
    const passphrase = await ownerPassphrase(ctx);
    // The session's records are at or after this (the summary counts them).
    const asked = Date.now();
    const started = await ctx.call('session.start', {
      passphrase,
      agent,
      scope: flagList(ctx, 'scope'),
      sandbox: sandboxed,
    });
    const { token } = started;
    const { hold } = await import('../../client/client.js');
    // From here the session ends when this process does, however it ends.
    const held = await hold(ctx.client, token);
    const pty = wantsPty(ctx);
    const report = refusalReport((line) => ctx.stderr.write(line + (pty ? '\r\n' : '\n')));
    let status: number | null = null;
    try {
      const hostSocket = started.socket;
      if (box !== null && hostSocket === undefined)
        throw new VaultError(
          'VLT-1005',
          'The agent sandbox cannot start: the vault host gave the session no socket of its own (an older host? `vault-cli daemon stop`, then run again).',
        );
      const key = await sessionModelKey(ctx, passphrase, agent, profile);
      const { applyState, finishState } = await import('../../../shell/agent-state.js');
      applyState(plan);
      try {
        status = await supervised(ctx, {
          command,
          dir,
          passphrase,
          token,
          agent,
          pty,
          report,
          box: box === null || hostSocket === undefined ? null : { ...box, hostSocket },
          profile: profileVars(profile, key),
        });
      } finally {
        for (const said of finishState(plan)) ctx.stderr.write(`vault-cli: ${said}\n`);
      }
      return status;
    } finally {
      report.flush();
      const revoked = await endSession(ctx, token, held);
      if (status !== null)
        ctx.stderr.write(
          (await summaryLine(ctx, { passphrase, agent, since: asked, revoked, status })) + '\n',
        );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
