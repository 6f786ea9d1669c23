/**
 * The CLI's side of a hardware-key ceremony: where the page's URL goes
 * (stderr, and a browser unless --no-browser) and the way to the host. The
 * WebAuthn modules are loaded only here, only by the commands that run one.
 */
import { spawn } from 'node:child_process';
import type { CeremonyHooks } from '../webauthn/ceremony.js';
import { flag, flagCount, type CliContext } from './context.js';

/** Tries xdg-open; a machine without one still has the URL on stderr. */
export function openBrowser(url: string): void {
  try {
    const child = spawn('xdg-open', [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no browser opener: the URL is on stderr
  }
}

/** `--port N`: the page on a fixed port, for an owner who forwards it (ssh -L N:localhost:N). */
export function ceremonyHooks(ctx: CliContext, what: string): CeremonyHooks {
  const port = flagCount(ctx, 'port');
  return {
    call: (op, body) => ctx.call(op, body),
    onUrl: (url, step) => {
      ctx.stderr.write(`vault-cli: ${step ?? what}: open ${url} and touch your security key\n`);
      if (!flag(ctx, 'no-browser')) openBrowser(url);
    },
    ...(port === undefined ? {} : { port }),
  };
}
