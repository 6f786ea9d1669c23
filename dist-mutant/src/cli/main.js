#!/usr/bin/env node
/**
 * The process edge: argv in, one command run, exit status out. The only place
 * that sets the exit status; every error becomes one line on stderr,
 * `vault-cli: <code>: <message>`.
 *
 * Run it through bin/vault-cli, which picks the Node this installation was
 * installed with; `node` on PATH may be another (issue 25).
 */
// First: on a Node too old for vault-cli, nothing below is evaluated.
import './node-check.js';
import { parseDirect } from '../commands/parse.js';
import { PIPE_SIDE } from '../commands/pipe-side.js';
import { ERRORS, VaultError } from '../core/errors.js';
import { anchorMemory } from './anchors.js';
import { hostEnv, resolvePaths } from './paths.js';
import { ACCEPT_FAKETIME } from '../client/test-build.js';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
// What only other commands need (the command table and help, owner.ts with
// its prompts, the audit's time format) is imported where it is used:
// test/e2e/get-startup.test.ts holds the list of what a get loads.
const { readFileSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');
const { fileURLToPath } = process.getBuiltinModule('node:url');
/** `vault-cli <version>, Node <version> (<path>)`: which Node runs it is half the answer. */
function versionLine(script) {
    let dir = dirname(script);
    for (let i = 0; i < 5; i++) {
        try {
            const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
            if (pkg.name === 'vault-cli') {
                return `vault-cli ${pkg.version ?? '?'}, Node ${process.version} (${process.execPath})\n`;
            }
        }
        catch {
            // not here: one directory up
        }
        dir = dirname(dir);
    }
    return `vault-cli (version unknown), Node ${process.version} (${process.execPath})\n`;
}
/**
 * What the host's messages leave to the edge: the vault directory VLT-3001
 * means, and a retry time in local time to the second, as every time the CLI
 * prints (the host writes it as UTC ISO, for logs and the proxy's replies).
 */
async function presented(err, paths) {
    if (!(err instanceof VaultError))
        return err;
    if (err.code === 'VLT-3001' && err.message === ERRORS['VLT-3001'].message) {
        return new VaultError('VLT-3001', `No vault in ${paths.vaultDir}: create one with \`vault-cli vault create\`, or set VAULT_DIR to the directory of an existing vault.`, { cause: err });
    }
    if (err.code === 'VLT-2042') {
        const { localTimes } = await import('../core/audit.js');
        const message = localTimes(err.message);
        if (message !== err.message) {
            return new VaultError('VLT-2042', message, { cause: err, problems: err.problems });
        }
    }
    return err;
}
/**
 * What to run: get, totp and render read by their own definitions alone
 * (src/commands/pipe-side.ts), anything else by the whole command table.
 */
async function parse(argv) {
    return parseDirect(argv, PIPE_SIDE) ?? (await import('../commands/argv.js')).parseArgv(argv);
}
let stdoutReady = false;
/**
 * process.stdout, where a reader that goes away (`vault-cli audit | head`) is
 * not an error. Made on first use: a stream costs a start-up, and a get made
 * none before its value is in hand.
 */
function stdout() {
    if (!stdoutReady) {
        stdoutReady = true;
        process.stdout.on('error', (err) => {
            if (err.code === 'EPIPE')
                process.exit(0);
        });
    }
    return process.stdout;
}
async function main(argv) {
    const script = fileURLToPath(import.meta.url);
    const inv = await parse(argv);
    // Other commands may write to process.stdout itself: theirs is ready from the start.
    if (!PIPE_SIDE.includes(inv.command))
        stdout();
    if (inv.version === true) {
        stdout().write(versionLine(script));
        return 0;
    }
    if (inv.help || inv.command === null) {
        const { helpText } = await import('../commands/argv.js');
        stdout().write(helpText(inv.group));
        return 0;
    }
    const env = process.env;
    const paths = resolvePaths(env);
    const client = {
        vaultDir: paths.vaultDir,
        socketDir: paths.socketDir,
        daemon: { node: process.execPath, script, env: hostEnv(env, paths) },
        // A test build's (src/client/test-build.ts), never the environment's.
        acceptFaketime: ACCEPT_FAKETIME,
        // The hardened host runs as its own user: a client neither starts nor doubts it by pid.
        system: paths.systemHost,
        anchors: anchorMemory(paths.anchorsFile, paths.vaultDir),
        remote: paths.remoteHost,
    };
    const ctx = {
        inv,
        paths,
        env,
        script,
        // A getter: touching process.stdin sets up a stream, which `get` never needs.
        get stdin() {
            return process.stdin;
        },
        // Getters, as stdin: each stream is made when a command first writes to it.
        get stdout() {
            return stdout();
        },
        get stderr() {
            return process.stderr;
        },
        client,
        call: async (op, body, opts) => {
            const { call } = await import('../client/client.js');
            const to = { ...client, autoStart: opts?.autoStart ?? client.system === null };
            try {
                return await call(to, op, body);
            }
            catch (err) {
                // With a hardware key enrolled: a touch of the key, bound to this very request.
                if (err instanceof VaultError && err.code === 'VLT-2070') {
                    if (body.keyProof !== undefined)
                        throw err;
                    const { confirmByKey } = await import('./ceremony.js');
                    return call(to, op, { ...body, keyProof: await confirmByKey(ctx, op, body, err) });
                }
                // An owner session only tightens: what it does not prove is asked again, once.
                if (!(err instanceof VaultError && err.code === 'VLT-2055'))
                    throw err;
                const { proveAgain, sentWithoutPassphrase } = await import('./owner.js');
                if (!sentWithoutPassphrase(body))
                    throw err;
                return call(to, op, { ...body, passphrase: await proveAgain(ctx, err) });
            }
        },
    };
    try {
        // Before any prompt: inside `run`, the agent's terminal must never ask for the passphrase.
        if (inv.command.side === 'owner')
            await (await import('./owner.js')).refuseInsideRun(ctx);
        const mod = (await import(`./commands/${inv.command.module}.js`));
        return await mod.run(ctx);
    }
    catch (err) {
        throw await presented(err, paths);
    }
}
main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
}, async (err) => {
    const refused = err instanceof VaultError
        ? null
        : (await import('./unwritable.js')).unwritable(err, process.env);
    const e = err instanceof VaultError
        ? err
        : (refused ?? new VaultError('VLT-3007', undefined, { cause: err }));
    process.stderr.write(e.line() + '\n');
    if (!(err instanceof VaultError) && process.env.VAULT_DEBUG === '1')
        console.error(err);
    process.exitCode = e.exitCode;
});
