// The facts `run` gathers for the sandbox policy (shell/sandbox-policy.ts),
// and the box the agent starts in: the policy as the chosen engine
// (shell/sandbox-engine.ts) carries it out.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { DEFAULT_MAX_PROCS } from '../../commands/table.js';
import { VaultError } from '../../core/errors.js';
import { cwdControls, policyProbes, sandboxPolicy, within, } from '../../../shell/sandbox-policy.js';
import { projectStart } from '../../../shell/project-check.js';
import { gitAtStart } from '../../../shell/git-config.js';
import { which } from '../../../shell/which.js';
import { flagList, flagString } from '../context.js';
import { heldRoot } from './held.js';
import { tokenFiles } from './token-files.js';
/** What is at `p`: a directory, a file, or nothing. */
export function kind(p) {
    try {
        return statSync(p).isDirectory() ? 'dir' : 'file';
    }
    catch {
        return null;
    }
}
/**
 * The sandbox for this invocation: the facts are gathered here (what exists,
 * where vault-cli is installed and found, the project controls below the
 * writable roots), the decision is the policy's. `project` is what the end of
 * the session compares with (shell/project-check.ts).
 */
export function policyFor(ctx, sessionDir, engine, plan) {
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
            // What agents' sessions left held: never in reach of the next one.
            ...(ctx.paths.systemHost === null ? [] : [heldRoot(ctx)]),
        ],
        readOnly: [
            resolve(dirname(ctx.script), '..', '..', '..'),
            ...(onPath === null ? [] : [onPath, realpathSync(onPath)]),
            ...p.shellStartup,
            ...plan.readOnly.map((r) => r.path),
        ],
        allowRead: flagList(ctx, 'allow-read'),
        allowWrite: flagList(ctx, 'allow-write'),
        allowNet: flagList(ctx, 'allow-net'),
        privateFiles: [...plan.copies, ...plan.private],
    };
    const roots = [facts.cwd, ...facts.allowWrite.map((w) => resolve(facts.cwd, w))];
    const git = gitAtStart(which('git', ctx.env.PATH), roots);
    const hooks = hooksPathAt(git?.path ?? null, facts.cwd, ctx.env);
    const project = projectStart(roots.filter((r) => kind(r) === 'dir'), [...facts.vaultPaths.map((v) => resolve(facts.cwd, v)), sessionDir], Date.now(), hooks !== null && roots.some((r) => within(hooks, r)) ? hooks : null);
    const probes = policyProbes({ ...facts, nested: project.nested, keep: project.keep });
    // What an earlier session's engine left is made again and removed after, like an absent path.
    const controls = new Set(cwdControls(facts.cwd));
    const left = (f) => controls.has(f) && engine.leftover(f);
    // What `run` creates before the agent starts counts as there already.
    const planned = new Map([
        ...plan.write.map((w) => [w.path, 'dir']),
        ...plan.readOnly.map((r) => [r.path, r.kind]),
        ...plan.private.map((f) => [f.path, 'file']),
        ...plan.copies.map((c) => [c.path, c.dir ? 'dir' : 'file']),
    ]);
    const policy = sandboxPolicy({
        ...facts,
        nested: project.nested,
        keep: project.keep,
        found: new Map(probes.map((f) => [f, left(f) ? null : (kind(f) ?? planned.get(f) ?? null)])),
        links: new Set(probes.filter(isLink)),
        unwritable: new Set(probes.map((f) => dirname(f)).filter((d) => !writableDir(d))),
    });
    const writable = [policy.cwd, ...policy.writable, ...policy.privateFiles.map((f) => f.path)];
    return { policy, project, git: gitAtStart(which('git', ctx.env.PATH), writable) };
}
/**
 * The directory the owner's git runs hooks from in `cwd`, asked of git itself
 * before the agent starts, with the owner's environment (so every config git
 * reads counts: system, global under the owner's HOME and XDG, the
 * repository's, `config.worktree`, includes and includeIf), absolute; null
 * outside a repository or without a git outside the project. `rev-parse`
 * reads configuration and runs nothing.
 */
export function hooksPathAt(git, cwd, env) {
    if (git === null)
        return null;
    const r = spawnSync(git, ['rev-parse', '--path-format=absolute', '--git-path', 'hooks'], {
        cwd,
        env: { ...env, GIT_OPTIONAL_LOCKS: '0' },
        encoding: 'utf8',
        timeout: 10_000,
        stdio: ['ignore', 'pipe', 'ignore'],
    });
    const out = r.status === 0 ? r.stdout.trim() : '';
    return out.startsWith('/') && !out.includes('\n') ? out : null;
}
/** Whether this process may create entries in directory `d` (false when it is no directory). */
function writableDir(d) {
    try {
        accessSync(d, constants.W_OK);
        return statSync(d).isDirectory();
    }
    catch {
        return false;
    }
}
function isLink(p) {
    try {
        return lstatSync(p).isSymbolicLink();
    }
    catch {
        return false;
    }
}
/** One warning line per project control the owner opened with --allow-write: an explicit, visible choice. */
export function warnOpened(ctx, policy) {
    for (const p of policy.openedControls)
        ctx.stderr.write(`vault-cli: warning: --allow-write ${p}: the agent may change what your own tools run there, outside the sandbox (docs/sandbox.md)\n`);
}
/**
 * `--max-procs N`, checked: the sandbox's own start script and relays need a
 * few, so fewer than 16 could not start an agent at all.
 * @throws VaultError VLT-1002 for anything but a whole number from 16 up.
 */
export function maxProcs(ctx) {
    const text = flagString(ctx, 'max-procs');
    if (text === undefined)
        return DEFAULT_MAX_PROCS;
    const n = /^[0-9]{1,9}$/.test(text) ? Number(text) : NaN;
    if (!(n >= 16))
        throw new VaultError('VLT-1002', `--max-procs takes a whole number from 16 up, not ${JSON.stringify(text)}.`);
    return n;
}
/**
 * The box for this invocation: the policy (`policyFor`) in the engine's
 * terms, with what its probe found and the process limit.
 * @throws VaultError as `policyFor` and `maxProcs` do.
 */
export function boxFor(ctx, sessionDir, sandbox, plan) {
    const { policy, project, git } = policyFor(ctx, sessionDir, sandbox.engine, plan);
    return {
        policy: sandbox.engine.plan(policy),
        project,
        git,
        engine: sandbox.engine,
        tools: sandbox.tools,
        maxProcs: maxProcs(ctx),
    };
}
