// The sandbox policy of `run` as a pure function: facts in, a decision out,
// with bubblewrap's plan of it (shell/linux/bubblewrap.ts: relays, addresses).
// The properties read the decision the way bubblewrap does, through
// sandboxArgs (a later mount covers an earlier one), so they hold for what
// the agent actually gets, not only for the lists.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { PROXY_PORT } from '../../src/commands/table.js';
import { VaultError } from '../../src/core/errors.js';
import { bubblewrapPlan, sandboxArgs, type BubblewrapPlan } from '../../shell/linux/bubblewrap.js';
import {
  CREDENTIAL_STORES,
  ESCAPE_SOCKETS,
  PROJECT_CONTROLS,
  policyProbes,
  sandboxPolicy,
  within,
  type PathKind,
  type PolicyFacts,
  type SandboxPolicy,
} from '../../shell/sandbox-policy.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const HOME = '/home/u';
const SESSION = '/tmp/vault-cli-run-x';
const VAULT = `${HOME}/.local/share/vault-cli`;
const CONFIG = `${HOME}/.config/vault-cli`;
const INSTALL = '/opt/vault-cli';

/** A file system: every path named, with its ancestors as directories. */
function fileSystem(entries: Record<string, PathKind>): Map<string, PathKind> {
  const fs = new Map<string, PathKind>();
  for (const [path, kind] of Object.entries(entries)) {
    fs.set(path, kind);
    for (let p = path; p !== '/';) {
      p = p.slice(0, p.lastIndexOf('/')) || '/';
      fs.set(p, 'dir');
    }
  }
  return fs;
}

const baseFacts: PolicyFacts = {
  cwd: `${HOME}/proj`,
  home: HOME,
  uid: 1000,
  xdgRuntimeDir: undefined,
  sessionDir: SESSION,
  vaultPaths: [VAULT, VAULT, CONFIG, VAULT, CONFIG],
  readOnly: [INSTALL, `${HOME}/.bashrc`, `${HOME}/.zshrc`],
  allowRead: [],
  allowWrite: [],
  allowNet: [],
};

/** The policy for `facts` on `fs`, the way `run` asks for it, as bubblewrap plans it. */
function decide(facts: PolicyFacts, fs: ReadonlyMap<string, PathKind>): BubblewrapPlan {
  const found = new Map(policyProbes(facts).map((p) => [p, fs.get(p) ?? null]));
  return bubblewrapPlan(sandboxPolicy({ ...facts, found }));
}

const usual = fileSystem({
  [`${HOME}/proj/src`]: 'dir',
  [`${VAULT}/vault.mdb`]: 'file',
  [`${CONFIG}/token`]: 'file',
  [`${HOME}/.ssh/id_ed25519`]: 'file',
  [`${HOME}/.netrc`]: 'file',
  [`${HOME}/.bashrc`]: 'file',
  '/run/user/1000/bus': 'file',
  [`${INSTALL}/dist/cli/main.js`]: 'file',
  [`${SESSION}/ca.pem`]: 'file',
});

function refused(fn: () => unknown, code: string, message?: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof VaultError, String(err));
    assert.equal(err.code, code);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

test('the vault, its configuration, the credential stores and the runtime directory that exist are hidden', () => {
  const p = decide(baseFacts, usual);
  assert.deepEqual(p.hidden, [
    { path: VAULT, dir: true },
    { path: CONFIG, dir: true },
    { path: `${HOME}/.ssh`, dir: true },
    { path: `${HOME}/.netrc`, dir: false },
    { path: '/run/user/1000', dir: true },
  ]);
  assert.deepEqual(p.readOnly, [INSTALL, `${HOME}/.bashrc`]);
  assert.deepEqual(p.writable, []);
  assert.equal(p.cwd, `${HOME}/proj`);
  assert.equal(p.proxySocket, `${SESSION}/proxy.sock`);
  assert.equal(p.hostSocket, `${SESSION}/host.sock`);
  assert.equal(p.hostsFile, null);
  assert.deepEqual([...p.confine], []);
});

test('a working directory inside a hidden path is refused', () => {
  refused(() => decide({ ...baseFacts, cwd: `${VAULT}` }, usual), 'VLT-1001', /outside the vault/);
  refused(() => decide({ ...baseFacts, cwd: `${HOME}/.ssh` }, usual), 'VLT-1001', /\.ssh/);
});

test('--allow-read shows a credential store, and only a credential store', () => {
  const p = decide({ ...baseFacts, allowRead: [`${HOME}/.ssh`] }, usual);
  assert.ok(!p.hidden.some((h) => h.path === `${HOME}/.ssh`));
  assert.ok(p.hidden.some((h) => h.path === `${HOME}/.netrc`));
  // Relative to the working directory, as the shell would hand it over.
  const relative = decide({ ...baseFacts, allowRead: ['../.ssh'] }, usual);
  assert.ok(!relative.hidden.some((h) => h.path === `${HOME}/.ssh`));
  // The agent may then work inside it.
  decide({ ...baseFacts, cwd: `${HOME}/.ssh`, allowRead: [`${HOME}/.ssh`] }, usual);
  refused(
    () => decide({ ...baseFacts, allowRead: ['/etc'] }, usual),
    'VLT-1002',
    /--allow-read takes one of the credential stores/,
  );
  refused(() => decide({ ...baseFacts, allowRead: [VAULT] }, usual), 'VLT-1002');
});

test('--allow-write takes an existing directory that no hidden path holds', () => {
  const p = decide({ ...baseFacts, allowWrite: ['src', HOME] }, usual);
  assert.deepEqual(p.writable, [`${HOME}/proj/src`, HOME]);
  // The home directory holds the vault: it stays hidden, mounted after.
  assert.ok(p.hidden.some((h) => h.path === VAULT));
  refused(() => decide({ ...baseFacts, allowWrite: ['missing'] }, usual), 'VLT-1002', /directory/);
  refused(() => decide({ ...baseFacts, allowWrite: [`${HOME}/.netrc`] }, usual), 'VLT-1002');
  refused(
    () => decide({ ...baseFacts, allowWrite: [`${VAULT}`] }, usual),
    'VLT-1002',
    /cannot open a path the sandbox hides/,
  );
  refused(() => decide({ ...baseFacts, allowWrite: [`${HOME}/.ssh`] }, usual), 'VLT-1002');
  // A store shown with --allow-read is the owner's to open.
  decide({ ...baseFacts, allowRead: [`${HOME}/.ssh`], allowWrite: [`${HOME}/.ssh`] }, usual);
});

test('the runtime directory: XDG_RUNTIME_DIR, else /run/user/<uid>; kept when the session or the work is in it', () => {
  const rt = fileSystem({ ...Object.fromEntries(usual), '/run/rt/bus': 'file' });
  const hiddenOf = (f: Partial<PolicyFacts>) => decide({ ...baseFacts, ...f }, rt).hidden;
  assert.ok(hiddenOf({ xdgRuntimeDir: '/run/rt' }).some((h) => h.path === '/run/rt'));
  assert.ok(!hiddenOf({ xdgRuntimeDir: '/run/rt' }).some((h) => h.path === '/run/user/1000'));
  assert.ok(
    !hiddenOf({ xdgRuntimeDir: '/run/rt', sessionDir: '/run/rt/s' }).some(
      (h) => h.path === '/run/rt',
    ),
  );
  assert.ok(
    !hiddenOf({ xdgRuntimeDir: '/run/rt', cwd: '/run/rt/w' }).some((h) => h.path === '/run/rt'),
  );
  assert.ok(!hiddenOf({ uid: 1001 }).some((h) => h.path.startsWith('/run/user')));
});

test('container engine sockets are hidden when they exist', () => {
  const fs = fileSystem({ ...Object.fromEntries(usual), '/run/docker.sock': 'file' });
  const p = decide(baseFacts, fs);
  assert.ok(p.hidden.some((h) => h.path === '/run/docker.sock' && !h.dir));
  assert.ok(!p.hidden.some((h) => h.path === '/var/run/docker.sock'));
  assert.ok(ESCAPE_SOCKETS.includes('/run/docker.sock'));
});

test('one mount per hidden tree: a passphrase file in the config directory is covered by it', () => {
  // bubblewrap cannot make a mount point inside a read-only tmpfs: it would fail to start.
  const fs = fileSystem({ ...Object.fromEntries(usual), [`${CONFIG}/passphrase`]: 'file' });
  const p = decide({ ...baseFacts, vaultPaths: [`${CONFIG}/passphrase`, CONFIG, VAULT] }, fs);
  assert.deepEqual(
    p.hidden
      .filter((h) => h.path.startsWith(`${HOME}/.`) && !h.path.startsWith(`${HOME}/.ssh`))
      .map((h) => h.path),
    [CONFIG, VAULT, `${HOME}/.netrc`],
  );
});

test('--allow-net: a relay per route, addresses and a hosts file inside, and the proxy may reach them', () => {
  const p = decide(
    {
      ...baseFacts,
      allowNet: [
        'GitHub.com:22',
        'localhost:5432',
        'github.com:443',
        'api.example:443',
        'github.com:22',
      ],
    },
    usual,
  );
  assert.deepEqual(
    p.routes.map((r) => [r.host, r.port, r.address, r.socket]),
    [
      ['github.com', 22, '127.0.0.2', `${SESSION}/net-0.sock`],
      ['localhost', 5432, '127.0.0.1', `${SESSION}/net-1.sock`],
      ['github.com', 443, '127.0.0.2', `${SESSION}/net-2.sock`],
      ['api.example', 443, '127.0.0.3', `${SESSION}/net-3.sock`],
    ],
  );
  assert.deepEqual(p.hostsFile, {
    path: `${SESSION}/hosts`,
    lines: ['127.0.0.2\tgithub.com', '127.0.0.3\tapi.example'],
  });
  assert.deepEqual(
    [...p.confine],
    ['github.com:22', 'localhost:5432', 'github.com:443', 'api.example:443'],
  );
  for (const bad of [
    '10.0.0.1:80',
    'github.com',
    'github.com:0',
    'a b:1',
    `localhost:${PROXY_PORT}`,
  ])
    refused(() => decide({ ...baseFacts, allowNet: [bad] }, usual), 'VLT-1002', /--allow-net/);
});

test('project controls: kept read-only, pinned, made as placeholders when absent in the working directory', () => {
  const proj = `${HOME}/proj`;
  const fs = fileSystem({
    ...Object.fromEntries(usual),
    [`${proj}/.git/config`]: 'file',
    [`${proj}/.git/hooks`]: 'dir',
    [`${proj}/.envrc`]: 'file',
    [`${HOME}/other/.vscode`]: 'dir',
  });
  const p = decide({ ...baseFacts, allowWrite: [`${HOME}/other`] }, fs);
  assert.deepEqual(p.controls.pinned, [`${proj}/.git`]);
  assert.deepEqual(p.controls.kept, [
    `${proj}/.git/config`,
    `${proj}/.git/hooks`,
    `${proj}/.envrc`,
    `${HOME}/other/.vscode`,
  ]);
  // Absent ones only in the working directory; the first missing component, never below it.
  const absent = p.controls.absent.map((a) => a.path);
  assert.ok(absent.includes(`${proj}/.git/modules`));
  assert.ok(absent.includes(`${proj}/.vscode`));
  assert.ok(absent.includes(`${proj}/.claude`));
  assert.ok(!absent.includes(`${proj}/.claude/settings.json`));
  assert.ok(!absent.some((a) => a.startsWith(`${HOME}/other`)));
  const m = mounts(p);
  for (const c of [...p.controls.kept, ...absent]) assert.notEqual(access(m, c), 'rw', c);
  assert.equal(access(m, `${proj}/.git/objects`), 'rw');
  // A worktree's .git file is kept; nothing is made under a file.
  const worktree = decide(
    baseFacts,
    fileSystem({ ...Object.fromEntries(usual), [`${proj}/.git`]: 'file' }),
  );
  assert.ok(worktree.controls.kept.includes(`${proj}/.git`));
  assert.ok(!worktree.controls.absent.some((a) => a.path.startsWith(`${proj}/.git/`)));
  // --allow-write naming a control opens it (run warns), and only it.
  const opened = decide({ ...baseFacts, allowWrite: ['.git/config', '.envrc'] }, fs);
  assert.deepEqual(opened.openedControls, [`${proj}/.git/config`, `${proj}/.envrc`]);
  assert.ok(!opened.controls.kept.includes(`${proj}/.git/config`));
  assert.ok(opened.controls.kept.includes(`${proj}/.git/hooks`));
  assert.deepEqual(opened.writable, []);
  // A control that is a link could be replaced: refused.
  const probes = policyProbes(baseFacts);
  refused(
    () =>
      sandboxPolicy({
        ...baseFacts,
        found: new Map(probes.map((x) => [x, fs.get(x) ?? null])),
        links: new Set([`${proj}/.envrc`]),
      }),
    'VLT-1001',
    /symbolic link/,
  );
});

test('nested project controls: kept read-only and pinned like the top ones, with no placeholders, and a link left to the end check', () => {
  const proj = `${HOME}/proj`;
  const fs = fileSystem({
    ...Object.fromEntries(usual),
    [`${proj}/lib/.git/config`]: 'file',
    [`${proj}/lib/.git/hooks`]: 'dir',
    [`${proj}/a/b/.envrc`]: 'file',
    [`${proj}/ln/.git`]: 'dir',
    [`${proj}/ln/.git/config`]: 'file',
  });
  const facts = { ...baseFacts, nested: [`${proj}/lib`, `${proj}/a/b`, `${proj}/ln`] };
  const found = new Map(policyProbes(facts).map((x) => [x, fs.get(x) ?? null]));
  const p = sandboxPolicy({ ...facts, found, links: new Set([`${proj}/ln/.git`]) });
  assert.ok(p.controls.pinned.includes(`${proj}/lib/.git`));
  for (const c of [`${proj}/lib/.git/config`, `${proj}/lib/.git/hooks`, `${proj}/a/b/.envrc`])
    assert.ok(p.controls.kept.includes(c), c);
  assert.ok(!p.controls.absent.some((a) => a.path.startsWith(`${proj}/lib/`)));
  assert.ok(!p.controls.absent.some((a) => a.path.startsWith(`${proj}/a/`)));
  assert.ok(![...p.controls.kept, ...p.controls.pinned].some((c) => c.startsWith(`${proj}/ln/`)));
  const m = mounts(p);
  assert.equal(access(m, `${proj}/lib/.git/config`), 'ro');
  assert.equal(access(m, `${proj}/lib/.git/objects`), 'rw');
  assert.equal(access(m, `${proj}/lib/src`), 'rw');
});

test('kept paths the start scan found (a worktree’s commondir, the core.hooksPath directory): read-only, with the directories up to the pinned .git pinned; outside the roots, behind a link or opened: left', () => {
  const proj = `${HOME}/proj`;
  const wt = `${proj}/.git/worktrees/w`;
  const fs = fileSystem({
    ...Object.fromEntries(usual),
    [`${proj}/.git/config`]: 'file',
    [`${wt}/commondir`]: 'file',
    [`${wt}/HEAD`]: 'file',
    [`${proj}/tools/hooks/pre-commit`]: 'file',
    [`${proj}/ln/x`]: 'file',
    [`${HOME}/elsewhere/hooks`]: 'dir',
  });
  const keep = [
    `${wt}/commondir`,
    `${proj}/tools/hooks`,
    `${proj}/ln/x`,
    `${HOME}/elsewhere/hooks`,
  ];
  const facts = { ...baseFacts, keep };
  const found = new Map(policyProbes(facts).map((x) => [x, fs.get(x) ?? null]));
  const p = sandboxPolicy({ ...facts, found, links: new Set([`${proj}/ln`]) });
  for (const k of [`${wt}/commondir`, `${proj}/tools/hooks`])
    assert.ok(p.controls.kept.includes(k), k);
  for (const d of [wt, `${proj}/.git/worktrees`, `${proj}/.git`])
    assert.ok(p.controls.pinned.includes(d), d);
  // No pinned directory above it: the end check finds what replaced it.
  assert.ok(!p.controls.pinned.includes(`${proj}/tools`));
  for (const k of [`${proj}/ln/x`, `${HOME}/elsewhere/hooks`])
    assert.ok(!p.controls.kept.includes(k), k);
  const m = mounts(p);
  assert.equal(access(m, `${wt}/commondir`), 'ro');
  assert.equal(access(m, `${wt}/HEAD`), 'rw');
  assert.equal(access(m, `${proj}/tools/hooks/pre-commit`), 'ro');
  const opened = sandboxPolicy({
    ...facts,
    allowWrite: [`${wt}/commondir`],
    found: new Map(
      policyProbes({ ...facts, allowWrite: [`${wt}/commondir`] }).map((x) => [
        x,
        fs.get(x) ?? null,
      ]),
    ),
  });
  assert.ok(!opened.controls.kept.includes(`${wt}/commondir`));
  assert.ok(opened.writable.includes(`${wt}/commondir`));
});

test('a path nobody looked at is a defect, never taken as absent', () => {
  assert.throws(
    () => sandboxPolicy({ ...baseFacts, found: new Map() }),
    (err: unknown) => err instanceof Error && !(err instanceof VaultError),
  );
});

/** What the agent gets at `p`, read from bubblewrap's arguments: the last mount that covers it wins. */
type Access = 'rw' | 'ro' | 'hidden' | 'fresh';
function mounts(policy: SandboxPolicy): { dest: string; access: Access }[] {
  const a = sandboxArgs({
    policy: bubblewrapPlan(policy),
    bwrap: 'bwrap',
    socat: 'socat',
    hostSocket: '/h.sock',
    command: ['x'],
    maxProcs: 64,
  });
  const out: { dest: string; access: Access }[] = [];
  for (let i = 0; i < a.length && a[i] !== '--'; i++) {
    const [op, x, y] = [a[i], a[i + 1] as string, a[i + 2] as string];
    if (op === '--bind') out.push({ dest: y, access: 'rw' });
    else if (op === '--ro-bind') out.push({ dest: y, access: x === '/dev/null' ? 'hidden' : 'ro' });
    else if (op === '--tmpfs' || op === '--dev' || op === '--proc')
      out.push({ dest: x, access: a[i + 2] === '--remount-ro' ? 'hidden' : 'fresh' });
    else continue;
    i += op === '--bind' || op === '--ro-bind' ? 2 : 1;
  }
  return out;
}
function access(m: readonly { dest: string; access: Access }[], p: string): Access {
  return m.findLast((x) => within(p, x.dest))?.access ?? 'ro';
}

// Random facts over a small tree where the interesting overlaps are likely.
const DIRS = [
  '/',
  HOME,
  `${HOME}/proj`,
  `${HOME}/proj/sub`,
  `${HOME}/proj/.git`,
  `${HOME}/proj/.git/hooks`,
  `${HOME}/.ssh`,
  `${HOME}/.config`,
  CONFIG,
  VAULT,
  '/v',
  '/v/vault',
  '/run/user/1000',
  SESSION,
  INSTALL,
];
const FILES = [
  `${HOME}/.netrc`,
  `${HOME}/.bashrc`,
  `${CONFIG}/pass`,
  '/v/vault/pass',
  `${HOME}/proj/pass`,
  `${HOME}/proj/.git/config`,
  `${HOME}/proj/.envrc`,
  '/run/docker.sock',
  `${HOME}/.ssh/id`,
];
const arbFacts = fc
  .record({
    existing: fc.subarray([...DIRS, ...FILES]),
    cwd: fc.constantFrom(...DIRS),
    vaultDir: fc.constantFrom(VAULT, '/v/vault', `${HOME}/proj/sub`),
    configDir: fc.constantFrom(CONFIG, '/v', HOME),
    passphraseFile: fc.constantFrom(null, `${CONFIG}/pass`, '/v/vault/pass', `${HOME}/proj/pass`),
    xdgRuntimeDir: fc.constantFrom(undefined, '', '/run/user/1000', `${HOME}/proj`),
    allowRead: fc.subarray([`${HOME}/.ssh`, `${HOME}/.netrc`, '.ssh']),
    allowWrite: fc.subarray([...DIRS, ...FILES, 'sub', '..', '/nowhere', '.envrc']),
  })
  .map((r) => {
    const fs = fileSystem(
      Object.fromEntries([
        ...r.existing.map((p): [string, PathKind] => [p, FILES.includes(p) ? 'file' : 'dir']),
        [r.cwd, 'dir'],
        [SESSION, 'dir'],
      ]),
    );
    const facts: PolicyFacts = {
      ...baseFacts,
      cwd: r.cwd,
      xdgRuntimeDir: r.xdgRuntimeDir,
      vaultPaths: [
        r.vaultDir,
        r.vaultDir,
        r.configDir,
        VAULT,
        CONFIG,
        ...(r.passphraseFile === null ? [] : [r.passphraseFile]),
      ],
      allowRead: r.allowRead,
      allowWrite: r.allowWrite,
    };
    return { facts, fs };
  });

/** The decision, or null when it refused with a usage code; anything else fails the property. */
function attempt(facts: PolicyFacts, fs: ReadonlyMap<string, PathKind>): SandboxPolicy | null {
  try {
    return decide(facts, fs);
  } catch (err) {
    assert.ok(
      err instanceof VaultError && ['VLT-1001', 'VLT-1002'].includes(err.code),
      String(err),
    );
    return null;
  }
}

test('property: nothing in the vault paths or a store not shown is reachable, whatever --allow-write says', () => {
  fc.assert(
    fc.property(arbFacts, ({ facts, fs }) => {
      const policy = attempt(facts, fs);
      if (policy === null) return;
      const m = mounts(policy);
      const shown = facts.allowRead.map((p) => (p.startsWith('/') ? p : `${facts.cwd}/${p}`));
      const protectedPaths = [
        ...facts.vaultPaths,
        ...CREDENTIAL_STORES.map((s) => `${HOME}/${s}`).filter((s) => !shown.includes(s)),
        ...ESCAPE_SOCKETS,
      ].filter((p) => fs.has(p));
      for (const p of protectedPaths)
        for (const q of [p, `${p}/x`])
          assert.equal(access(m, q), 'hidden', `${q} in ${JSON.stringify(m)}`);
      // And --allow-write never names one (it would not be writable: refused, not ignored).
      for (const w of policy.writable)
        for (const p of protectedPaths) assert.ok(!within(w, p), `${w} inside ${p}`);
      // The installation and start-up files stay out of reach of writes.
      for (const r of policy.readOnly) assert.notEqual(access(m, r), 'rw', r);
    }),
    { numRuns: RUNS },
  );
});

test('property: a project control of the working directory is never writable unless --allow-write names it', () => {
  const proj = `${HOME}/proj`;
  const candidates: Record<string, PathKind> = {
    [`${proj}/.git`]: 'dir',
    [`${proj}/.git/config`]: 'file',
    [`${proj}/.git/hooks/pre-commit`]: 'file',
    [`${proj}/.git/modules`]: 'dir',
    [`${proj}/.envrc`]: 'file',
    [`${proj}/.vscode/tasks.json`]: 'file',
    [`${proj}/.claude/settings.json`]: 'file',
    [`${proj}/.claude/todo`]: 'dir',
    [`${proj}/.mcp.json`]: 'file',
    [`${proj}/src`]: 'dir',
  };
  const arb = fc.record({
    existing: fc.subarray(Object.keys(candidates)),
    worktree: fc.boolean(),
    allowWrite: fc.subarray(['.envrc', '.git/config', '.git/hooks', 'src', '..', '.git']),
  });
  fc.assert(
    fc.property(arb, ({ existing, worktree, allowWrite }) => {
      const entries = Object.fromEntries(existing.map((p) => [p, candidates[p] as PathKind]));
      // A worktree: .git is a file naming the git directory, nothing is under it.
      const fs = fileSystem({
        ...Object.fromEntries(usual),
        ...(worktree
          ? {
              ...Object.fromEntries(
                Object.entries(entries).filter(([p]) => !p.startsWith(`${proj}/.git`)),
              ),
              [`${proj}/.git`]: 'file' as PathKind,
            }
          : entries),
      });
      const facts = { ...baseFacts, cwd: proj, allowWrite };
      const policy = attempt(facts, fs);
      if (policy === null) return;
      const m = mounts(policy);
      const opened = allowWrite.map((w) => (w.startsWith('/') ? w : `${proj}/${w}`));
      for (const c of PROJECT_CONTROLS) {
        const path = `${proj}/${c.replace(/\/$/, '')}`;
        // A listed directory that holds others is pinned, writable by design.
        if (PROJECT_CONTROLS.some((o) => o !== c && c.endsWith('/') && o.startsWith(c))) continue;
        if (opened.some((o) => within(path, o))) continue;
        // Under a file nothing can be made.
        if (fs.get(path.slice(0, path.lastIndexOf('/'))) === 'file') continue;
        for (const q of [path, `${path}/x`])
          assert.notEqual(access(m, q), 'rw', `${q} in ${JSON.stringify(m)}`);
      }
      if (worktree && !opened.includes(`${proj}/.git`))
        assert.notEqual(access(m, `${proj}/.git`), 'rw');
      // What the agent works on stays writable.
      assert.equal(access(m, `${proj}/src/x`), 'rw');
      if (!worktree && fs.get(`${proj}/.git`) === 'dir')
        assert.equal(access(m, `${proj}/.git/objects`), 'rw');
    }),
    { numRuns: RUNS },
  );
});

test('property: bubblewrap can make every mount point (none inside a read-only tmpfs)', () => {
  fc.assert(
    fc.property(arbFacts, ({ facts, fs }) => {
      const policy = attempt(facts, fs);
      if (policy === null) return;
      const m = mounts(policy);
      m.forEach((x, i) => {
        for (const earlier of m.slice(0, i))
          if (earlier.access === 'hidden' && earlier.dest !== x.dest)
            assert.ok(!within(x.dest, earlier.dest), `${x.dest} inside hidden ${earlier.dest}`);
      });
    }),
    { numRuns: RUNS },
  );
});
