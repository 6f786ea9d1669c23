// Agent profiles as data and pure functions: which profile a command gets,
// what the owner's file changes, what the sandbox then opens (read through
// bubblewrap's arguments, where a later mount covers an earlier one), and
// what of an agent's private copy comes back to the owner.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import {
  chooseProfile,
  loadProfiles,
  keepMatcher,
  keepPattern,
  mergeKept,
  overlay,
  planState,
  type Kind,
} from '../../shell/profiles.js';
import { bubblewrapPlan, sandboxArgs } from '../../shell/linux/bubblewrap.js';
import { policyProbes, sandboxPolicy, type PolicyFacts } from '../../shell/sandbox-policy.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const HOME = '/home/u';
const SESSION = '/tmp/vault-cli-run-x';

function refused(f: () => unknown, code: string, message?: RegExp): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof VaultError);
    assert.equal(e.code, code);
    if (message !== undefined) assert.match(e.message, message);
    return true;
  });
}

test('the shipped profiles: each coding agent and a shell, chosen by the command name', () => {
  const profiles = loadProfiles(null);
  assert.deepEqual([...profiles.keys()].sort(), ['aider', 'claude', 'codex', 'gemini', 'shell']);
  assert.equal(chooseProfile(profiles, 'claude', undefined)?.name, 'claude');
  assert.equal(chooseProfile(profiles, 'codex', undefined)?.name, 'codex');
  assert.equal(chooseProfile(profiles, 'gemini', undefined)?.name, 'gemini');
  assert.equal(chooseProfile(profiles, 'bash', undefined)?.name, 'shell');
  assert.equal(chooseProfile(profiles, 'make', undefined), null);
  assert.equal(chooseProfile(profiles, 'node', 'gemini')?.name, 'gemini');
  assert.equal(chooseProfile(profiles, 'claude', 'none'), null);
  refused(() => chooseProfile(profiles, 'claude', 'clod'), 'VLT-1002', /claude, codex/);
  const keys = [...profiles.values()].map((p) => p.model && [p.model.variable, p.model.header]);
  assert.deepEqual(keys.slice(0, 3), [
    ['ANTHROPIC_API_KEY', 'x-api-key'],
    ['OPENAI_API_KEY', 'authorization'],
    ['GEMINI_API_KEY', 'x-goog-api-key'],
  ]);
});

test("the owner's file overrides a shipped profile field by field and adds new ones", () => {
  const profiles = loadProfiles({
    claude: { model: { host: 'localhost', variable: 'K', header: 'x', entry: 'E', field: 'f' } },
    mine: { commands: ['mine'], write: ['~/.mine/'] },
  });
  const claude = profiles.get('claude');
  assert.equal(claude?.model?.host, 'localhost');
  assert.deepEqual(claude?.write, ['~/.claude/']);
  assert.equal(chooseProfile(profiles, 'mine', undefined)?.write[0], '~/.mine/');
  assert.equal(profiles.get('mine')?.model, null);
  refused(() => loadProfiles([]), 'VLT-1002');
  refused(() => loadProfiles({ x: { write: '~/.x' } }), 'VLT-1002', /"write"/);
  refused(() => loadProfiles({ x: { writable: [] } }), 'VLT-1002', /unknown field/);
  refused(() => loadProfiles({ x: { model: { host: 'h' } } }), 'VLT-1002', /"model"/);
  refused(() => loadProfiles({ '../x': {} }), 'VLT-1002');
});

/** What exists: these paths, and their ancestors as directories. */
function fsOf(entries: Record<string, Kind>): (p: string) => Kind | null {
  const fs = new Map<string, Kind>(Object.entries(entries));
  for (const p of Object.keys(entries))
    for (let d = p; d !== '/';) {
      d = d.slice(0, d.lastIndexOf('/')) || '/';
      fs.set(d, 'dir');
    }
  return (p) => fs.get(p) ?? null;
}

const facts: PolicyFacts = {
  cwd: `${HOME}/proj`,
  home: HOME,
  uid: 1000,
  xdgRuntimeDir: undefined,
  sessionDir: SESSION,
  vaultPaths: [`${HOME}/.config/vault-cli`],
  readOnly: [],
  allowRead: [],
  allowWrite: [],
  allowNet: [],
};

/** The sandbox for `profile` on `fs`, the way `run` decides it (planned paths count as there). */
function sandboxFor(name: string, fs: (p: string) => Kind | null) {
  const profile = chooseProfile(loadProfiles(null), name, undefined);
  const plan = planState(profile, HOME, SESSION, fs);
  const f: PolicyFacts = {
    ...facts,
    readOnly: plan.readOnly.map((r) => r.path),
    privateFiles: [...plan.copies, ...plan.private],
  };
  const planned = new Map<string, Kind>([
    ...plan.write.map((w) => [w.path, 'dir'] as const),
    ...plan.readOnly.map((r) => [r.path, r.kind] as const),
    ...plan.private.map((p) => [p.path, 'file'] as const),
    ...plan.copies.map((c) => [c.path, c.dir ? ('dir' as const) : ('file' as const)] as const),
  ]);
  const found = new Map(policyProbes(f).map((p) => [p, fs(p) ?? planned.get(p) ?? null]));
  const policy = sandboxPolicy({ ...f, found });
  const args = sandboxArgs({
    policy: bubblewrapPlan(policy),
    bwrap: 'bwrap',
    socat: 'socat',
    maxProcs: 1024,
    hostSocket: 'h',
    command: [],
  });
  return { plan, policy, args };
}

/**
 * Whether the agent can write `path`: the last mount that covers it decides,
 * as in bubblewrap (a path under a bind is that bind's).
 */
function writable(args: readonly string[], path: string): boolean {
  let w = false;
  for (let i = 0; i < args.length; i++) {
    const op = args[i];
    const dest = op === '--bind' || op === '--ro-bind' ? args[i + 2] : undefined;
    if (dest === undefined) continue;
    if (path === dest || path.startsWith(`${dest}/`)) w = op === '--bind';
  }
  return w;
}

test("Claude Code's state is writable but what runs at its next start is not, existing or not", () => {
  const { plan, policy, args } = sandboxFor(
    'claude',
    fsOf({ [`${HOME}/.claude/settings.json`]: 'file', [`${HOME}/proj/x`]: 'file' }),
  );
  assert.ok(writable(args, `${HOME}/.claude/projects/p/session.jsonl`));
  assert.ok(writable(args, `${HOME}/.claude/backups/b`));
  for (const p of ['settings.json', 'commands/x.md', 'agents/a.md', 'plugins/p/hooks.json'])
    assert.ok(!writable(args, `${HOME}/.claude/${p}`), p);
  // settings.json exists; the rest are placeholders run makes and removes.
  assert.deepEqual(
    plan.readOnly.filter((r) => !r.create).map((r) => r.path),
    [`${HOME}/.claude/settings.json`],
  );
  assert.ok(plan.readOnly.some((r) => r.path === `${HOME}/.claude/commands` && r.kind === 'dir'));
  // ~/.claude.json is the session's copy, bound at its place; the owner's file is not.
  // ~/.claude is the session's copy too, bound at its place.
  assert.deepEqual(policy.privateFiles, [
    { path: `${HOME}/.claude`, copy: `${SESSION}/copy-0`, dir: true },
    { path: `${HOME}/.claude.json`, copy: `${SESSION}/private-0.json` },
  ]);
  const i = args.indexOf(`${SESSION}/private-0.json`);
  assert.deepEqual(args.slice(i - 1, i + 2), [
    '--bind',
    `${SESSION}/private-0.json`,
    `${HOME}/.claude.json`,
  ]);
  assert.ok(!writable(args, `${HOME}/.bashrc`));
});

test('Codex and Gemini CLI: config.toml and settings.json read-only inside a writable state directory', () => {
  const codex = sandboxFor('codex', fsOf({ [`${HOME}/proj/x`]: 'file' })).args;
  assert.ok(writable(codex, `${HOME}/.codex/sessions/2026/rollout.jsonl`));
  assert.ok(!writable(codex, `${HOME}/.codex/config.toml`));
  assert.ok(!writable(codex, `${HOME}/.codex/rules/default.rules`));
  const gemini = sandboxFor('gemini', fsOf({ [`${HOME}/.gemini/settings.json`]: 'file' })).args;
  assert.ok(writable(gemini, `${HOME}/.gemini/tmp/p/chats/s.jsonl`));
  for (const p of ['settings.json', '.env', 'commands/c.toml', 'extensions/e/x.json'])
    assert.ok(!writable(gemini, `${HOME}/.gemini/${p}`), p);
});

test('a placeholder only where the agent could create the path; a profile write path that is a vault path is refused', () => {
  const { plan } = sandboxFor('aider', fsOf({ [`${HOME}/proj/x`]: 'file' }));
  // ~/.aider.conf.yml is outside every writable path: nothing to make.
  assert.deepEqual(plan.readOnly, []);
  const profile = loadProfiles({ bad: { write: ['~/.config/vault-cli/'] } }).get('bad') ?? null;
  const p = planState(profile, HOME, SESSION, () => 'dir');
  const f = { ...facts, allowWrite: p.write.map((w) => w.path) };
  const found = new Map(policyProbes(f).map((x) => [x, 'dir' as const]));
  refused(() => sandboxPolicy({ ...f, found }), 'VLT-1002', /hides/);
});

test('--allow-write takes a file, and an existing one only', () => {
  const fs = fsOf({ [`${HOME}/notes.txt`]: 'file', [`${HOME}/proj/x`]: 'file' });
  const f = { ...facts, allowWrite: [`${HOME}/notes.txt`] };
  const found = new Map(policyProbes(f).map((p) => [p, fs(p)]));
  const policy = sandboxPolicy({ ...f, found });
  assert.deepEqual(policy.writable, [`${HOME}/notes.txt`]);
  const g = { ...facts, allowWrite: [`${HOME}/missing.txt`] };
  const none = new Map(policyProbes(g).map((p) => [p, fs(p)]));
  refused(() => sandboxPolicy({ ...g, found: none }), 'VLT-1002', /does not exist/);
});

const KEEPS = loadProfiles(null).get('claude')?.private[0]?.keep ?? [];

test('a private copy comes back by its keep keys alone: the rest is held and named', () => {
  const owner = {
    numStartups: 3,
    mcpServers: { mine: { command: 'my-server' } },
    projects: { '/p': { mcpServers: {}, lastCost: 1 } },
  };
  const copy = {
    numStartups: 4,
    userID: 'u',
    primaryApiKey: 'sk-x',
    skipDangerousModePermissionPrompt: true,
    mcpServers: { evil: { command: 'touch /x' } },
    projects: {
      '/p': { mcpServers: {}, lastCost: 2, hasClaudeMdExternalIncludesApproved: true },
      '/my.app': { lastCost: 5 },
    },
  };
  const m = mergeKept(owner, copy, KEEPS);
  assert.deepEqual(m.merged, {
    numStartups: 4,
    userID: 'u',
    mcpServers: { mine: { command: 'my-server' } },
    projects: { '/p': { mcpServers: {}, lastCost: 2 }, '/my.app': { lastCost: 5 } },
  });
  assert.deepEqual(m.dropped, [
    'primaryApiKey',
    'skipDangerousModePermissionPrompt',
    'mcpServers',
    'projects."/p".hasClaudeMdExternalIncludesApproved',
  ]);
  // Restoring the held keys gives the agent's values back, and nothing else changes.
  const back = overlay(m.merged, m.held) as Record<string, unknown>;
  assert.equal(back.primaryApiKey, 'sk-x');
  assert.deepEqual(Object.keys(back.mcpServers as object).sort(), ['evil', 'mine']);
  // A copy that is not an object leaves the owner's file as it was.
  assert.deepEqual(mergeKept(owner, [1], KEEPS).merged, owner);
  // `projects` turned into a string cannot replace the owner's.
  assert.deepEqual(mergeKept(owner, { ...owner, projects: 'x' }, KEEPS).merged, owner);
});

test('keep patterns: ~/ names inside a write path, * and ** only; they match no executable config', () => {
  assert.equal(keepPattern('~/.claude/todos/*.json', ['~/.claude/']), null);
  for (const bad of [
    '~/.claude/../.bashrc',
    '/etc/x',
    '~/.claude/x/',
    '~/.other/x',
    '~/.claude/**',
    '~/.claude/a?b',
  ])
    assert.notEqual(keepPattern(bad, ['~/.claude/']), null, bad);
  refused(
    () => loadProfiles({ x: { write: ['~/.x/'], keep: ['~/.x/../y'] } }),
    'VLT-1002',
    /"keep"/,
  );
  refused(
    () => loadProfiles({ x: { private: [{ path: '~/.x.json', ownerKeeps: [] }] } }),
    'VLT-1002',
    /ownerKeeps/,
  );
  const claude = loadProfiles(null).get('claude');
  const kept = keepMatcher(claude?.keep ?? [], HOME);
  assert.ok(kept(`${HOME}/.claude/projects/-home-u-proj/0b1c.jsonl`));
  assert.ok(kept(`${HOME}/.claude/history.jsonl`));
  for (const p of [
    'projects/-home-u-proj/memory/MEMORY.md',
    'projects/-home-u-proj/x.sh',
    'statusline-command.sh',
    'local/claude',
    'daemon.json',
    'jobs/x',
    'shell-snapshots/x',
    'session-env/x',
    'rules/x.md',
    'settings.json',
  ])
    assert.ok(!kept(`${HOME}/.claude/${p}`), p);
  const codex = keepMatcher(loadProfiles(null).get('codex')?.keep ?? [], HOME);
  assert.ok(codex(`${HOME}/.codex/sessions/2026/11/29/rollout-x.jsonl`));
  assert.ok(!codex(`${HOME}/.codex/work.config.toml`));
});

test('property: a keep pattern that passes names only paths inside its write path, with no ..', () => {
  const part = fc.constantFrom('a', '*', '**', '..', '.', 'x.jsonl', '', 'b*c');
  fc.assert(
    fc.property(
      fc.array(part, { minLength: 1, maxLength: 5 }),
      fc.array(part, { maxLength: 5 }),
      (ps, names) => {
        const pattern = `~/.s/${ps.join('/')}`;
        if (keepPattern(pattern, ['~/.s/']) !== null) return;
        assert.ok(!ps.includes('..') && !ps.includes('.') && !ps.includes(''));
        const path = `${HOME}/${names.join('/')}`;
        if (keepMatcher([pattern], HOME)(path)) assert.ok(path.startsWith(`${HOME}/.s/`), path);
      },
    ),
    { numRuns: RUNS },
  );
});

test("the owner's profile overrides one field of model and keeps the rest", () => {
  const p = loadProfiles({ claude: { model: { entry: 'ANTHROPIC_API_KEY', field: 'password' } } });
  assert.deepEqual(p.get('claude')?.model, {
    host: 'api.anthropic.com',
    variable: 'ANTHROPIC_API_KEY',
    header: 'x-api-key',
    entry: 'ANTHROPIC_API_KEY',
    field: 'password',
  });
  refused(() => loadProfiles({ mine: { model: { entry: 'E' } } }), 'VLT-1002', /"model"/);
});

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.constant(null),
    tie('object'),
  ),
  object: fc.dictionary(
    fc.constantFrom(
      'mcpServers',
      'hooks',
      'projects',
      '/p',
      'env',
      'history',
      'command',
      'lastCost',
      'numStartups',
      'userID',
    ),
    tie('value'),
    { maxKeys: 4, noNullPrototype: true },
  ),
}));

/** `v` without empty objects, bottom up. */
function pruned(v: unknown): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = pruned(x);
    if (typeof y === 'object' && y !== null && !Array.isArray(y) && Object.keys(y).length === 0)
      continue;
    out[k] = y;
  }
  return out;
}

/** `v` without what `paths` reach: what the owner's file keeps whatever the copy says. */
function strip(v: unknown, paths: readonly string[][]): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const here = paths.filter((p) => p[0] === '*' || p[0] === k);
    if (here.some((p) => p.length === 1)) continue;
    out[k] =
      here.length === 0
        ? x
        : strip(
            x,
            here.map((p) => p.slice(1)),
          );
  }
  return out;
}

test("property: outside the keep key paths the merged file is the owner's; an unchanged copy changes nothing", () => {
  const paths = KEEPS.map((k) => k.split('.'));
  fc.assert(
    fc.property(json.object, json.object, (owner, copy) => {
      const m = mergeKept(owner, copy, KEEPS);
      // The objects that hold a kept key are made for it; empty once it is stripped.
      assert.deepEqual(pruned(strip(m.merged, paths)), pruned(strip(owner, paths)));
      assert.deepEqual(mergeKept(owner, owner, KEEPS).dropped, []);
    }),
    { numRuns: RUNS },
  );
});

test('aws: a profile names the entry its AWS surrogate stands for; the owner may set or clear it; anything else is refused', () => {
  const profiles = loadProfiles({
    claude: { aws: 'AWS Dev' },
    mine: { commands: ['mine'] },
  });
  assert.equal(profiles.get('claude')?.aws, 'AWS Dev');
  // Field by field: the rest of the shipped profile stays.
  assert.equal(profiles.get('claude')?.model?.variable, 'ANTHROPIC_API_KEY');
  assert.equal(profiles.get('mine')?.aws, null);
  assert.equal(loadProfiles(null).get('codex')?.aws, null);
  assert.equal(loadProfiles({ claude: { aws: null } }).get('claude')?.aws, null);
  for (const aws of ['', 42, ['AWS']]) {
    assert.throws(
      () => loadProfiles({ claude: { aws } }),
      (e: unknown) => e instanceof VaultError && e.code === 'VLT-1002' && /"aws"/.test(e.message),
    );
  }
});
