/**
 * What runs later (docs/sandbox.md, "What runs later"): the files in a
 * project that the owner's own tools execute as code, outside the sandbox:
 * npm's scripts, make, CI, direnv and dotenv loaders, task runners, build
 * scripts, package managers' settings. They are the agent's work product and
 * stay where it wrote them, but at the end of `run` each one the agent made
 * or changed is named in one line, so that the owner reads it before running
 * anything. The list is data, here and only here (docs/sandbox.md mirrors
 * it); the walk (shell/project-scan.ts) finds the files, shell/project-check.ts
 * compares them with the start.
 */
import { readFileSync } from 'node:fs';
/** `scripts` of a package.json, canonical; null when it has none. */
export function packageScripts(text) {
    let v;
    try {
        v = JSON.parse(text);
    }
    catch {
        return '\0unreadable'; // Unparsable: npm reads what it can't say here; named.
    }
    const s = v !== null && typeof v === 'object' ? v.scripts : undefined;
    if (s === undefined || s === null)
        return null;
    if (typeof s !== 'object' || Array.isArray(s))
        return JSON.stringify(s);
    const entries = Object.entries(s).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
    return entries.length === 0 ? null : JSON.stringify(entries);
}
/** The `[build-system]` table of a pyproject.toml, as written; null when it has none. */
export function buildSystem(text) {
    const lines = text.split(/\r?\n/);
    const at = lines.findIndex((l) => /^\s*\[\s*build-system\s*\]/.test(l));
    if (at < 0)
        return null;
    const end = lines.findIndex((l, i) => i > at && /^\s*\[/.test(l));
    return lines.slice(at, end < 0 ? undefined : end).join('\n');
}
/** The list (docs/sandbox.md, "What runs later"). */
export const RUNS_LATER = [
    { names: ['package.json'], why: 'its scripts (npm, yarn, pnpm run them)', part: packageScripts },
    {
        names: ['.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmfile.cjs'],
        why: 'a package manager runs or loads what it names',
    },
    { names: ['Makefile', 'makefile', 'GNUmakefile', '*.mk'], why: 'make runs its recipes' },
    {
        names: [
            '.github/workflows/*',
            '.gitlab-ci.yml',
            '.circleci/config.yml',
            'Jenkinsfile',
            '.travis.yml',
            'azure-pipelines.yml',
            '.buildkite/pipeline.yml',
        ],
        why: 'CI runs it',
    },
    {
        names: ['.envrc', '.env', '.env.*'],
        why: 'direnv or a dotenv loader reads it into your shell',
    },
    {
        names: [
            'justfile',
            'Justfile',
            '.justfile',
            'Taskfile.yml',
            'Taskfile.yaml',
            'Rakefile',
            'Gruntfile.js',
            'gulpfile.js',
        ],
        why: 'a task runner runs it',
    },
    { names: ['tox.ini', 'noxfile.py', 'setup.py', 'conftest.py'], why: 'Python tools run it' },
    {
        names: ['pyproject.toml'],
        why: 'its [build-system] (pip runs the build backend)',
        part: buildSystem,
    },
    {
        names: [
            'build.gradle',
            'build.gradle.kts',
            'settings.gradle',
            'settings.gradle.kts',
            'build.rs',
            'CMakeLists.txt',
            'meson.build',
        ],
        why: 'the build runs it',
    },
    {
        names: ['docker-compose*.yml', 'docker-compose*.yaml', 'compose.yml', 'compose.yaml'],
        why: 'docker compose runs what it names',
    },
];
const glob = (pattern) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 's');
const MATCHERS = RUNS_LATER.map((k) => ({
    kind: k,
    plain: k.names.filter((n) => !n.includes('/')).map(glob),
    inDir: k.names
        .filter((n) => n.includes('/'))
        .map((n) => ({
        dir: n.slice(0, n.lastIndexOf('/')),
        name: glob(n.slice(n.lastIndexOf('/') + 1)),
    })),
}));
/** The kind of file `name` is in directory `dir` (its path, latin1), or null. Pure. */
export function laterKind(dir, name) {
    for (const m of MATCHERS) {
        if (m.plain.some((re) => re.test(name)))
            return m.kind;
        if (m.inDir.some((d) => (dir === d.dir || dir.endsWith(`/${d.dir}`)) && d.name.test(name)))
            return m.kind;
    }
    return null;
}
/** A file's part that runs (its whole text when the kind has no part), or null when unreadable. */
export function laterPart(kind, path) {
    let text;
    try {
        text = readFileSync(path, 'utf8');
    }
    catch {
        return null;
    }
    return kind.part === undefined ? text : kind.part(text);
}
/** The most lines printed; the rest are counted in one. */
export const MAX_LATER_LINES = 50;
