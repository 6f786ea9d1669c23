/**
 * Any command, parsed by the whole command table (main.ts sends here all but
 * get, totp, render and --version, which pipe-main.ts runs, and pipe-main.ts
 * sends here what it does not run: their --help). The owner's commands
 * prove themselves again here when the host asks (a hardware key's touch, the
 * passphrase an owner session does not stand for).
 */
import { parseDirect, type Invocation } from '../commands/parse.js';
import { PIPE_SIDE } from '../commands/pipe-side.js';
import type { CommandDef } from '../commands/types.js';
import { VaultError } from '../core/errors.js';
import type { Command } from './context.js';
import { context, finish, runIn, stdout, versionLine, type Via } from './edge.js';

/**
 * What to run: get, totp and render read by their own definitions alone
 * (src/commands/pipe-side.ts), anything else by the whole command table.
 */
async function parse(argv: readonly string[]): Promise<Invocation> {
  return parseDirect(argv, PIPE_SIDE) ?? (await import('../commands/argv.js')).parseArgv(argv);
}

/** The host client, and the owner's proof asked again when the host wants it. */
const via: Via = async (ctx, to, op, body) => {
  const { call } = await import('../client/client.js');
  try {
    return await call(to, op, body);
  } catch (err) {
    // With a hardware key enrolled: a touch of the key, bound to this very request.
    if (err instanceof VaultError && err.code === 'VLT-2070') {
      if ((body as { keyProof?: unknown }).keyProof !== undefined) throw err;
      const { confirmByKey } = await import('./ceremony.js');
      return call(to, op, { ...body, keyProof: await confirmByKey(ctx, op, body, err) });
    }
    // An owner session only tightens: what it does not prove is asked again, once.
    if (!(err instanceof VaultError && err.code === 'VLT-2055')) throw err;
    const { proveAgain, sentWithoutPassphrase } = await import('./owner.js');
    if (!sentWithoutPassphrase(body)) throw err;
    return call(to, op, { ...body, passphrase: await proveAgain(ctx, err) });
  }
};

async function main(argv: readonly string[], script: string): Promise<number> {
  const inv = await parse(argv);
  // Other commands may write to process.stdout itself: theirs is ready from the start.
  if (!PIPE_SIDE.includes(inv.command as CommandDef)) stdout();
  if (inv.version === true) {
    stdout().write(versionLine(script));
    return 0;
  }
  if (inv.help || inv.command === null) {
    const { helpText } = await import('../commands/argv.js');
    stdout().write(helpText(inv.group));
    return 0;
  }
  const command = inv.command;
  const ctx = context(inv, script, via);
  return runIn(ctx, async () => {
    // Before any prompt: inside `run`, the agent's terminal must never ask for the passphrase.
    if (command.side === 'owner') await (await import('./owner.js')).refuseInsideRun(ctx);
    const mod = (await import(`./commands/${command.module}.js`)) as { run: Command };
    return mod.run(ctx);
  });
}

/** Runs `argv`; `script` is main.js, which a host this starts runs as `daemon`. */
export function start(argv: readonly string[], script: string): void {
  finish(main(argv, script));
}
