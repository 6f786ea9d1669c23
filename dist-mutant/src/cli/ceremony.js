/**
 * The CLI's side of a hardware-key ceremony: where the page's URL goes
 * (stderr, and a browser unless --no-browser) and the way to the host. The
 * WebAuthn modules are loaded only here, only by the commands that run one.
 */
import { spawn } from 'node:child_process';
import { VaultError } from '../core/errors.js';
import { flag, flagCount } from './context.js';
/** Tries xdg-open; a machine without one still has the URL on stderr. */
export function openBrowser(url) {
    try {
        const child = spawn('xdg-open', [url], { detached: true, stdio: 'ignore' });
        child.on('error', () => { });
        child.unref();
    }
    catch {
        // no browser opener: the URL is on stderr
    }
}
/** `--port N`: the page on a fixed port, for an owner who forwards it (ssh -L N:localhost:N). */
export function ceremonyHooks(ctx, what) {
    const port = flagCount(ctx, 'port');
    return {
        call: (op, body) => ctx.call(op, body),
        onUrl: (url, step) => {
            ctx.stderr.write(`vault-cli: ${step ?? what}: open ${url} and touch your security key\n`);
            if (!flag(ctx, 'no-browser'))
                openBrowser(url);
        },
        ...(port === undefined ? {} : { port }),
    };
}
/**
 * A touch of an enrolled key for request `op` (VLT-2070: an owner session
 * with a hardware key enrolled). The owner is told which command asks, as
 * proveAgain tells it for the passphrase; the page names the request as the
 * host read it.
 * @throws VaultError VLT-2055 when no one can answer here (stdin is not a
 *   terminal: a git hook, a pipe, a daemon). Nothing was done.
 */
export async function confirmByKey(ctx, op, body, refusal) {
    const command = ['vault-cli', ...(ctx.inv.command?.path ?? [])].join(' ');
    if (ctx.stdin.isTTY !== true) {
        throw new VaultError('VLT-2055', `${command}: ${refusal.message.replace(/\.$/, '')}; there is no terminal on stdin to ask on, so nothing was done. Run it yourself at a terminal.`, { cause: refusal });
    }
    ctx.stderr.write(`vault-cli: ${command}: ${refusal.message}\n`);
    const { confirmRequest } = await import('../webauthn/ceremony.js');
    return confirmRequest(op, body, ceremonyHooks(ctx, `${command}: confirm with your key`));
}
