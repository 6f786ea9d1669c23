/**
 * `vault-cli exec --env NAME=vault://entry/field [--env ...] -- <command> [args...]`:
 * for tools that read a credential only from their environment. An agent
 * command (the agent's token, like `render`): every reference of every
 * `--env` is resolved in one request through the host (scope, limits, audit
 * as for render), and only when all of them are released does the command
 * start, with the values in its environment and nowhere else: never in
 * vault-cli's argv (which holds the references), its environment or a log.
 *
 * The command replaces this process (execve) where Node can (22.15 and
 * later): its exit status, its death by a signal, signals sent to it and its
 * standard streams are then its own, with no vault-cli left holding the
 * values. On an older Node it runs as a child with the three streams
 * inherited, signals passed on, and its status returned (128 + the signal
 * number when a signal killed it, as a shell reports it).
 *
 * What the values are exposed to then (the child's /proc/<pid>/environ, its
 * own children) is in docs/threat-model.md. The caller's VAULT_* variables
 * (its token) are not passed on unless --keep-vault-env says so.
 */
import { spawn } from 'node:child_process';
import { constants as os } from 'node:os';
import { VaultError, quote } from '../../core/errors.js';
import { Collector, Renderer } from '../../render/render.js';
import { commandAfterDashes, findCommand } from '../find-command.js';
import { flag, flagList } from '../context.js';
import { malformed, report, resolveAll } from '../references.js';
/** A variable name a shell could export. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Where a variable's references were written, in its refusals. */
const where = (name) => `--env ${name}`;
/**
 * The `--env` options, each scanned; VLT-2046 refusals for malformed
 * references (or a value with none: `--env` is for vault values) come back in `bad`.
 * @throws VaultError VLT-1001 for an option that is not NAME=TEXT.
 */
function assignments(specs) {
    if (specs.length === 0)
        throw new VaultError('VLT-1001', 'Give at least one --env NAME=vault://entry/field.');
    const list = [];
    const bad = [];
    const seen = new Set();
    for (const spec of specs) {
        const eq = spec.indexOf('=');
        const name = eq === -1 ? spec : spec.slice(0, eq);
        if (eq === -1 || !ENV_NAME.test(name))
            throw new VaultError('VLT-1001', `--env takes NAME=vault://entry/field, NAME a variable name; not ${quote(name)}.`);
        if (seen.has(name))
            throw new VaultError('VLT-1001', `--env ${name} given twice.`);
        seen.add(name);
        const text = Buffer.from(spec.slice(eq + 1));
        const collector = new Collector('raw');
        collector.write(text);
        const collected = collector.end();
        bad.push(...malformed(collected.malformed, where(name)));
        if (collected.malformed.length === 0 && collected.refs.size === 0)
            bad.push({
                code: 'VLT-2046',
                where: where(name),
                written: spec.slice(eq + 1),
                reason: 'no vault:// reference in it',
            });
        list.push({ name, text, collected });
    }
    return { list, bad };
}
/**
 * Every distinct reference of every assignment, once: a refusal names the
 * first variable that uses it.
 */
function wanted(list) {
    const out = new Map();
    for (const a of list)
        for (const [key, w] of a.collected.refs)
            if (!out.has(key))
                out.set(key, { ...w, where: where(a.name) });
    return out;
}
const utf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * Each variable's text with its references replaced, or the variables whose
 * value cannot be an environment variable (a NUL byte ends it; an environment
 * is text, so bytes that are not UTF-8 would be changed on the way).
 */
function fill(list, values) {
    const out = {};
    const bad = [];
    for (const a of list) {
        const r = new Renderer('raw', values);
        const bytes = Buffer.concat([r.write(a.text), r.end()]);
        const written = a.text.toString('utf8');
        if (bytes.includes(0)) {
            bad.push({
                code: 'VLT-1002',
                where: where(a.name),
                written,
                reason: 'the value holds a NUL byte, which no environment variable can',
            });
        }
        else {
            try {
                out[a.name] = utf8.decode(bytes);
            }
            catch {
                bad.push({
                    code: 'VLT-1002',
                    where: where(a.name),
                    written,
                    reason: 'the value is not UTF-8 text',
                });
            }
        }
        // Best-effort: the string made of it is out of reach.
        bytes.fill(0);
    }
    return bad.length > 0 ? bad : out;
}
/** Signals a child started by `spawn` is sent when this process is. */
const PASSED_ON = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
/**
 * The fallback for a Node without process.execve: a child with the streams
 * inherited, this process's signals passed on to it, its status returned.
 */
function runChild(file, argv0, args, env) {
    return new Promise((resolve, reject) => {
        const child = spawn(file, args, { stdio: 'inherit', env, argv0 });
        const pass = (sig) => () => child.kill(sig);
        const handlers = PASSED_ON.map((sig) => [sig, pass(sig)]);
        for (const [sig, h] of handlers)
            process.on(sig, h);
        const done = () => {
            for (const [sig, h] of handlers)
                process.off(sig, h);
        };
        child.once('error', (err) => {
            done();
            reject(new VaultError('VLT-1004', `Command cannot be started: ${quote(file)}.`, { cause: err }));
        });
        child.once('exit', (code, signal) => {
            done();
            resolve(signal === null ? (code ?? 0) : 128 + (os.signals[signal] ?? 0));
        });
    });
}
/**
 * The environment the command starts with: the caller's, without any VAULT_*
 * variable unless --keep-vault-env. The command is meant to get the values
 * its --env names; VAULT_TOKEN or VAULT_TOKEN_FILE would hand it the whole
 * scope, and a prompt-injected tool would spend it.
 */
function commandEnv(ctx) {
    if (flag(ctx, 'keep-vault-env')) {
        ctx.stderr.write('vault-cli: warning: --keep-vault-env: the command gets this token and every VAULT_* variable\n');
        return { ...ctx.env };
    }
    return Object.fromEntries(Object.entries(ctx.env).filter(([name]) => !name.startsWith('VAULT_')));
}
export const run = async (ctx) => {
    const { command, file } = commandAfterDashes(ctx.inv.args.command);
    const { list, bad } = assignments(flagList(ctx, 'env'));
    if (bad.length > 0)
        return report(ctx, bad);
    // Before anything is read: a typo costs no read, no rate slot.
    const path = findCommand(file, ctx.env.PATH);
    if (path === null)
        throw new VaultError('VLT-1004', `Command not found: ${quote(file)}.`);
    const values = await resolveAll(ctx, wanted(list));
    if (Array.isArray(values))
        return report(ctx, values);
    let filled;
    try {
        filled = fill(list, values);
    }
    finally {
        for (const v of values.values())
            v.fill(0);
    }
    if (Array.isArray(filled))
        return report(ctx, filled);
    const env = { ...commandEnv(ctx), ...filled };
    if (typeof process.execve === 'function') {
        // Replaces this process; returns only by throwing (the file went away since findCommand).
        try {
            process.execve(path, [file, ...command.slice(1)], env);
        }
        catch (err) {
            throw new VaultError('VLT-1004', `Command cannot be started: ${quote(file)}.`, {
                cause: err,
            });
        }
    }
    return runChild(path, file, command.slice(1), env);
};
