/**
 * What the agent sandbox of `vault-cli run` hides, keeps read-only and opens
 * (docs/sandbox.md), decided by one pure function over plain facts: the paths
 * in play, what exists at each, the owner's flags. `run` gathers the facts
 * (`policyProbes` names the paths to look at). The decision is in no
 * engine's terms: an engine (shell/engine.ts, chosen by
 * shell/sandbox-engine.ts) carries it out, bubblewrap's on Linux
 * (shell/linux/).
 *
 * The invariant it guards: a protected path (the vault's own directories and
 * passphrase files, a credential store that --allow-read does not name, a
 * socket that leads outside) is hidden, whatever --allow-write says. A
 * writable directory inside one is refused, and one that holds one is covered
 * again after it (the hidden paths are mounted last). So is a working
 * directory inside one: the agent could not work there.
 */
import { isIP } from 'node:net';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { PROXY_PORT } from '../src/commands/table.js';
import { VaultError } from '../src/core/errors.js';
/**
 * Where the owner's other credentials usually are, under the home directory:
 * SSH and GPG keys, cloud and cluster logins, registry and Git tokens, password
 * stores, browser profiles. A sandbox hides those that exist unless the owner
 * names one with --allow-read: an agent reads the whole file system, and these
 * are what it would take instead of going through the vault.
 */
export const CREDENTIAL_STORES = [
    '.ssh',
    '.gnupg',
    '.aws',
    '.azure',
    '.config/gcloud',
    '.kube',
    '.docker',
    '.netrc',
    '.git-credentials',
    '.config/git/credentials',
    '.npmrc',
    '.pypirc',
    '.config/gh',
    '.config/hub',
    '.password-store',
    '.vault-token',
    '.cargo/credentials',
    '.cargo/credentials.toml',
    '.terraform.d/credentials.tfrc.json',
    '.local/share/keyrings',
    '.mozilla',
    '.config/google-chrome',
    '.config/chromium',
];
/**
 * Unix sockets that lead out of the sandbox: a read-only bind does not stop a
 * connect(), and a new network namespace hides only abstract sockets. Through
 * the user's runtime directory (XDG_RUNTIME_DIR: the service manager and
 * session bus, where `systemd-run --user` starts a process outside any
 * sandbox; ssh and gpg agents) or a container engine's socket, an agent would
 * act as the owner, or as root, outside. The runtime directory comes from the
 * environment; these are the fixed ones.
 */
export const ESCAPE_SOCKETS = [
    '/var/run/docker.sock',
    '/run/docker.sock',
    '/run/podman/podman.sock',
    '/run/containerd/containerd.sock',
];
/**
 * Paths inside a writable directory that make the owner's own tools run
 * something later, outside the sandbox: git's configuration (core.fsmonitor,
 * core.hooksPath, aliases, filters), hooks and submodule repositories, a
 * worktree's `.git` file (it names the git directory), direnv's `.envrc`,
 * editor tasks and settings, dev containers, the MCP servers, hooks, skills
 * and commands of Claude Code, Gemini CLI (`.gemini/`: settings, commands,
 * extensions) and Codex (`.codex/config.toml`, rules), and Aider's
 * `.aider.conf.yml` (`lint-cmd` and `test-cmd` run after each edit). Read-only for the agent, at the top of the working directory
 * and of each --allow-write directory; one that does not exist yet cannot be
 * created in the working directory either. A name ending in `/` is a
 * directory; a listed directory that holds other listed paths (`.git/`,
 * `.claude/`) stays writable, only what is listed in it is kept. The owner
 * lifts one with --allow-write naming it (warned). Extend it here
 * (docs/sandbox.md says what each is for).
 */
export const PROJECT_CONTROLS = [
    '.git/',
    '.git/config',
    '.git/config.worktree',
    '.git/hooks/',
    '.git/modules/',
    '.gitmodules',
    '.envrc',
    '.vscode/',
    '.idea/',
    '.devcontainer/',
    '.mcp.json',
    '.claude/',
    '.claude/settings.json',
    '.claude/settings.local.json',
    '.claude/commands/',
    '.claude/agents/',
    '.claude/hooks/',
    '.claude/skills/',
    '.gemini/',
    '.codex/',
    '.aider.conf.yml',
    // Hook managers: what they name runs at the owner's next commit (husky's `.husky/_` is
    // core.hooksPath, its scripts are `.husky/<hook>`).
    '.husky/',
    'lefthook.yml',
    'lefthook.yaml',
    'lefthook.json',
    'lefthook.toml',
    'lefthook-local.yml',
    'lefthook-local.yaml',
    '.lefthook.yml',
    '.lefthook.yaml',
    '.lefthook-local.yml',
    '.lefthook-local.yaml',
    '.lefthook/',
    '.pre-commit-config.yaml',
];
/** Whether `p` is `dir` or inside it. */
export function within(p, dir) {
    const r = relative(dir, p);
    return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}
/**
 * `--allow-net host:port`, checked.
 * @throws VaultError VLT-1002 for anything but a host name and a port, or the proxy's own.
 */
export function parseRoute(text) {
    const m = /^([A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(text);
    const port = Number(m?.[2]);
    const host = (m?.[1] ?? '').toLowerCase();
    // A name is mapped to a loopback address inside; an address cannot be (no such interface there).
    if (m === null || port < 1 || port > 65535 || isIP(host) !== 0)
        throw new VaultError('VLT-1002', `--allow-net takes host:port with a host name (or localhost), not ${JSON.stringify(text)}.`);
    if (host === 'localhost' && port === PROXY_PORT)
        throw new VaultError('VLT-1002', `--allow-net: localhost:${PROXY_PORT} is the vault proxy inside.`);
    return { host, port };
}
/**
 * The --allow-net routes, each once, and the destinations the session's proxy
 * may reach on this machine.
 * @throws VaultError VLT-1002 for a route `parseRoute` refuses.
 */
function allowedRoutes(allowNet) {
    // A route named twice is one route (an engine would relay it once).
    const routes = [
        ...new Map(allowNet.map(parseRoute).map((r) => [`${r.host}:${r.port}`, r])).values(),
    ];
    return { routes, confine: new Set(routes.map((r) => `${r.host}:${r.port}`)) };
}
/** The runtime directory, unless the session's own files or the agent's work are in it. */
function runtimeDir(input) {
    const runtime = resolve(input.cwd, input.xdgRuntimeDir ?? `/run/user/${input.uid ?? ''}`);
    return within(input.sessionDir, runtime) || within(input.cwd, runtime) ? [] : [runtime];
}
const stores = (home) => CREDENTIAL_STORES.map((f) => join(home, f));
/** The directories that hold `p` below the root of `roots` it is in (the nearest first). */
function holders(p, roots) {
    const root = roots.find((r) => within(p, r));
    const out = [];
    if (root === undefined)
        return out;
    for (let d = dirname(p); d !== root && within(d, root); d = dirname(d))
        out.push(d);
    return out;
}
/** Every path the policy asks about: `found` must say what is at each. */
export function policyProbes(input) {
    const at = (p) => resolve(input.cwd, p);
    return [
        ...new Set([
            ...input.vaultPaths,
            ...stores(input.home),
            ...runtimeDir(input),
            ...ESCAPE_SOCKETS,
            ...input.allowWrite,
            ...input.readOnly,
            ...controlProbes([input.cwd, ...input.allowWrite.map(at), ...(input.nested ?? [])]),
            ...(input.keep ?? []).flatMap((k) => [
                k,
                ...holders(at(k), [input.cwd, ...input.allowWrite.map(at)]),
            ]),
            ...(input.privateFiles ?? []).map((f) => f.path),
        ].map(at)),
    ];
}
/** The project controls under `root`, as absolute paths with their kinds. */
function controlsUnder(root) {
    return PROJECT_CONTROLS.map((c) => ({
        path: join(root, c.replace(/\/$/, '')),
        dir: c.endsWith('/'),
    }));
}
/**
 * The project controls of the working directory: where what an engine left
 * in an earlier session (bubblewrap's placeholder) may be found, which `run`
 * then takes for absent (the engine makes it again, and removes it after).
 */
export function cwdControls(cwd) {
    return controlsUnder(cwd).map((c) => c.path);
}
/** Every path the project controls ask about: each control and its ancestors up to the root. */
function controlProbes(roots) {
    return roots.flatMap((root) => controlsUnder(root).map((c) => c.path));
}
/** The paths of `allowWrite` (absolute) that are project controls of the working directory or of another of them. */
function controlsOpened(cwd, allowWrite) {
    const controls = new Set([cwd, ...allowWrite].flatMap((r) => controlsUnder(r).map((c) => c.path)));
    return [...new Set(allowWrite.filter((p) => controls.has(p)))];
}
/**
 * The project controls for the writable roots (the working directory first):
 * what is pinned, kept read-only, and guarded in the working directory
 * because it does not exist yet. A control under a path that
 * exists as a file cannot come to exist and needs nothing; one the owner
 * opened with --allow-write is left writable. The `nested` directories' controls
 * are kept the same way, but a link there is left to the check at the end of
 * the session (shell/project-check.ts) rather than refused: the owner may
 * not even know of it.
 * @throws VaultError VLT-1001 for a control of a root that is a symbolic
 * link: the link itself could be replaced.
 */
function planControls(roots, nested, cwd, kind, links, unwritable, openedControls, hidden) {
    const pinned = new Set();
    const kept = new Set();
    const absent = new Map();
    const isRoot = new Set(roots);
    for (const root of [...roots, ...nested]) {
        const all = controlsUnder(root);
        for (const c of all) {
            if (openedControls.some((o) => within(c.path, o)))
                continue;
            if (hidden.some((h) => within(c.path, h.path)))
                continue;
            // A mount through a link would land on its target, and the link could be replaced.
            if (!isRoot.has(root) && all.some((o) => links.has(o.path) && within(c.path, o.path)))
                continue;
            if (links.has(c.path))
                throw new VaultError('VLT-1001', `${c.path} is a symbolic link: the sandbox can keep a file or directory read-only, not a link. Replace it by what it points to, or name it with --allow-write.`);
            const holds = all.some((o) => o.path !== c.path && within(o.path, c.path));
            const k = kind(c.path);
            if (k === 'dir' && holds)
                pinned.add(c.path);
            else if (k !== null)
                kept.add(c.path);
            else if (root === cwd) {
                // The first missing component: under a file nothing can be made, and a
                // guard deeper down (a placeholder) would stop the agent from making its parent.
                const parent = dirname(c.path);
                if ((parent === root || kind(parent) === 'dir') && !unwritable.has(parent))
                    absent.set(c.path, c.dir || holds);
            }
        }
    }
    return {
        pinned: [...pinned],
        kept: [...kept],
        absent: [...absent].map(([path, dir]) => ({ path, dir })),
    };
}
/**
 * What the agent may neither read nor write: the vault's own paths, the
 * credential stores --allow-read does not name, the sockets that lead
 * outside; only those that exist, and one entry per hidden tree (an engine
 * may make nothing inside a hidden one: bubblewrap cannot make a mount point
 * inside a read-only tmpfs).
 * @throws VaultError VLT-1001 when the working directory is inside one;
 * VLT-1002 for an --allow-read that names no credential store.
 */
function hiddenPaths(input, kind) {
    const { cwd } = input;
    const at = (p) => resolve(cwd, p);
    let hidden = [];
    const hide = (path) => {
        const k = kind(path);
        if (k === null || hidden.some((h) => within(path, h.path) && (h.dir || h.path === path)))
            return;
        if (k === 'dir')
            hidden = hidden.filter((h) => !within(h.path, path));
        hidden.push({ path, dir: k === 'dir' });
    };
    const vault = [...new Set(input.vaultPaths.map(at))];
    for (const p of vault)
        hide(p);
    if (hidden.some((h) => within(cwd, h.path)))
        throw new VaultError('VLT-1001', 'Run the agent from a directory outside the vault and configuration directories.');
    // The owner's other credentials: hidden unless named with --allow-read.
    const home = stores(input.home);
    const shown = input.allowRead.map((p) => {
        const full = at(p);
        if (!home.includes(full))
            throw new VaultError('VLT-1002', `--allow-read takes one of the credential stores a sandbox hides (${CREDENTIAL_STORES.map((f) => `~/${f}`).join(', ')}), not ${JSON.stringify(p)}.`);
        return full;
    });
    // The stores not shown, and the sockets that lead outside.
    const outside = [
        ...home.filter((s) => !shown.includes(s)),
        ...runtimeDir(input),
        ...ESCAPE_SOCKETS,
    ];
    for (const path of outside.map(at)) {
        if (kind(path) === null)
            continue;
        if (within(cwd, path))
            throw new VaultError('VLT-1001', `Run the agent from a directory outside ${path} (the sandbox hides it), or name it with --allow-read.`);
        hide(path);
    }
    return hidden;
}
/**
 * What the agent may write besides its working directory: the --allow-write
 * paths and the profile's private files, and the project controls
 * --allow-write opened (warned) instead of making them writable roots.
 * @throws VaultError VLT-1002 for a path that does not exist or that a
 * hidden path holds, or a private file that is a directory.
 */
function openedPaths(input, kind, hidden) {
    const { cwd } = input;
    const at = (p) => resolve(cwd, p);
    // --allow-write naming a project control opens that control (warned), and makes no writable root.
    const openedControls = controlsOpened(cwd, input.allowWrite.map(at));
    const allowWrite = input.allowWrite.filter((d) => !openedControls.includes(at(d)));
    const opened = (d, what) => {
        const full = at(d);
        // Opening nothing would let the agent create it in the owner's directory
        // (bubblewrap makes a mount point there).
        if (kind(full) === null)
            throw new VaultError('VLT-1002', `${what} takes an existing directory or file: ${JSON.stringify(d)} does not exist.`);
        // A directory holding one of them is fine: they are covered again after it.
        if (hidden.some((h) => within(full, h.path)))
            throw new VaultError('VLT-1002', `${what} cannot open a path the sandbox hides (the vault, configuration, a credential store): ${JSON.stringify(d)}.`);
        return full;
    };
    const privateFiles = (input.privateFiles ?? []).map((f) => {
        const path = opened(f.path, "A profile's private file");
        if (kind(path) !== (f.dir === true ? 'dir' : 'file'))
            throw new VaultError('VLT-1002', `A profile's private copy is not what ${path} is.`);
        return { path, copy: f.copy, ...(f.dir === true ? { dir: true } : {}) };
    });
    // A private copy stays private even where --allow-write names the file: the copy is what comes back.
    const writable = [...new Set(allowWrite.map((d) => opened(d, '--allow-write')))].filter((w) => !privateFiles.some((f) => f.path === w));
    return { writable, privateFiles, openedControls };
}
/**
 * The sandbox for these facts.
 * @throws VaultError VLT-1001 when the working directory is inside a path the
 * sandbox hides; VLT-1002 for an --allow-net, --allow-read or --allow-write it
 * cannot honour. Nothing is started before it returns.
 */
export function sandboxPolicy(input) {
    const { cwd, sessionDir } = input;
    const at = (p) => resolve(cwd, p);
    const kind = (p) => {
        const k = input.found.get(p);
        if (k === undefined)
            throw new Error(`sandbox policy: nothing is known about ${p}`);
        return k;
    };
    const net = allowedRoutes(input.allowNet);
    const hidden = hiddenPaths(input, kind);
    const { writable, privateFiles, openedControls } = openedPaths(input, kind, hidden);
    const readOnly = [...new Set(input.readOnly.map(at))].filter((p) => kind(p) !== null);
    const roots = [cwd, ...writable];
    const controls = planControls(roots, (input.nested ?? []).filter((n) => !roots.includes(n)), cwd, kind, input.links ?? new Set(), input.unwritable ?? new Set(), openedControls, hidden);
    const kept = new Set(controls.kept);
    const pinned = new Set(controls.pinned);
    const links = input.links ?? new Set();
    for (const k of (input.keep ?? []).map(at)) {
        const up = holders(k, roots);
        if (kind(k) === null ||
            [k, ...up].some((p) => links.has(p)) ||
            !roots.some((r) => within(k, r)) ||
            openedControls.some((o) => within(k, o)) ||
            // Named with --allow-write (itself or a directory inside another root that holds it): opened.
            writable.some((w) => within(k, w) && roots.some((r) => r !== w && within(w, r))) ||
            hidden.some((h) => within(k, h.path)))
            continue;
        kept.add(k);
        // Its directories up to a pinned one (the `.git` that holds it) are pinned too, or the agent
        // would rename one away with it inside; elsewhere the end check finds what replaced it.
        const to = up.findIndex((d) => controls.pinned.includes(d));
        for (const d of up.slice(0, Math.max(to, 0)))
            if (kind(d) === 'dir')
                pinned.add(d);
    }
    return {
        cwd,
        writable,
        privateFiles,
        readOnly,
        controls: { ...controls, pinned: [...pinned], kept: [...kept] },
        openedControls,
        hidden,
        sessionDir,
        ...net,
    };
}
