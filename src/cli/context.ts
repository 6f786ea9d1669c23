/** What a command receives from `main`: its parsed invocation, paths, streams and a host client. */
import type { Invocation } from '../commands/argv.js';
import { VaultError } from '../core/errors.js';
import type { Op, Ops } from '../core/protocol.js';
import type { ClientOptions } from '../client/options.js';
import type { Streams } from './io.js';
import type { Paths } from './paths.js';

export interface CliContext extends Streams {
  readonly inv: Invocation;
  readonly paths: Paths;
  readonly env: NodeJS.ProcessEnv;
  /** This script, to start `vault-cli daemon` with. */
  readonly script: string;
  /** Where the host is and how to start it. */
  readonly client: ClientOptions;
  call<O extends Op>(
    op: O,
    body: Ops[O]['req'],
    opts?: { autoStart?: boolean },
  ): Promise<Ops[O]['res']>;
}

/** A command returns its exit status; errors are thrown as VaultError. */
export type Command = (ctx: CliContext) => Promise<number>;

export function flag(ctx: CliContext, name: string): boolean {
  return ctx.inv.flags[name] === true;
}

export function flagString(ctx: CliContext, name: string): string | undefined {
  const v = ctx.inv.flags[name];
  return typeof v === 'string' ? v : undefined;
}

export function flagCount(ctx: CliContext, name: string): number | undefined {
  const v = ctx.inv.flags[name];
  return typeof v === 'number' ? v : undefined;
}

export function flagList(ctx: CliContext, name: string): string[] {
  const v = ctx.inv.flags[name];
  return Array.isArray(v) ? v : [];
}

export function arg(ctx: CliContext, name: string): string {
  const v = ctx.inv.args[name];
  return typeof v === 'string' ? v : '';
}

/**
 * The handler `table` holds for the invoked subcommand (the second word of
 * its path): a command made of subcommands keeps one handler each in a table.
 * @throws VaultError VLT-1001 when the table has none (the parser lets no
 * such invocation through).
 */
export function subcommand<H>(ctx: CliContext, table: Readonly<Record<string, H>>): H {
  const sub = ctx.inv.command?.path[1];
  const handler = sub !== undefined && Object.hasOwn(table, sub) ? table[sub] : undefined;
  if (handler === undefined) throw new VaultError('VLT-1001');
  return handler;
}
