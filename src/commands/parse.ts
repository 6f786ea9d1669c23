/**
 * The half of the argv parser that needs no command table: the words after a
 * command already found, read against its definition (its flags, then its
 * arguments). argv.ts finds the command in the table and hands it here;
 * src/cli/pipe-main.ts hands get, totp and render here directly (pipe-side.ts),
 * so their start-up loads neither the table nor the help. Pure, like argv.ts.
 */
import { VaultError, quote } from '../core/errors.js';
import { HELP_FLAG, VERSION_FLAG, type CommandDef, type FlagDef } from './types.js';

export type FlagValue = string | number | boolean | string[];

export interface Invocation {
  readonly command: CommandDef | null;
  readonly args: Readonly<Record<string, string | string[]>>;
  readonly flags: Readonly<Record<string, FlagValue>>;
  /** `--help`, `help <command>`, or a group word alone (`vault-cli entry`). */
  readonly help: boolean;
  /** `vault-cli --version`. */
  readonly version?: boolean;
  /** The group named when help was asked for a group, e.g. ['entry']. */
  readonly group: readonly string[];
}

/** Commands that read a secret from their prompt or stdin: an extra word may be one. */
const TAKES_VALUE_ON_STDIN = ['entry set', 'init'];

export function usage(message: string): VaultError {
  return new VaultError('VLT-1001', `${message} (see vault-cli --help)`);
}

/** Whether `--help` or `-h` comes before any `--` (words after it are arguments, even `--help`). */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  return options.includes('--help') || options.includes('-h');
}

/**
 * The words of `argv` after `command`'s path, bound to its flags and arguments.
 * @throws VaultError VLT-1001 for an unknown flag, a missing or extra argument.
 */
export function parseCommand(command: CommandDef, argv: readonly string[]): Invocation {
  const { flags, positionals } = readFlags(command, argv.slice(command.path.length));
  return { command, args: bindArgs(command, positionals), flags, help: false, group: command.path };
}

/** `vault-cli --version`, alone. */
export function versionAsked(argv: readonly string[]): Invocation | null {
  if (argv.length !== 1 || argv[0] !== `--${VERSION_FLAG.name}`) return null;
  return { command: null, args: {}, flags: {}, help: false, version: true, group: [] };
}

/**
 * What needs no table: `--version`, or a one-word command of `commands`
 * (get, totp, render) named first and asked no help. Null for anything else,
 * which argv.ts's parseArgv reads. The same as parseArgv's when no other
 * command of the table starts with that word (test/unit/argv.test.ts holds it).
 */
export function parseDirect(
  argv: readonly string[],
  commands: readonly CommandDef[],
): Invocation | null {
  const version = versionAsked(argv);
  if (version !== null) return version;
  const command = commands.find((c) => c.path.length === 1 && c.path[0] === argv[0]);
  if (command === undefined || wantsHelp(argv)) return null;
  return parseCommand(command, argv);
}

/** Flags by their definitions; every other word, and all after `--`, a positional. */
function readFlags(
  command: CommandDef,
  rest: readonly string[],
): { flags: Record<string, FlagValue>; positionals: string[] } {
  const flags: Record<string, FlagValue> = {};
  const positionals: string[] = [];
  const byName = new Map<string, FlagDef>(command.flags.map((f) => [f.name, f]));
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (word === '--') {
      positionals.push(...rest.slice(i + 1));
      break;
    }
    if (!word.startsWith('--')) {
      if (word.startsWith('-') && word.length > 1) throw usage(`unknown option ${quote(word)}`);
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const name = word.slice(2, eq === -1 ? undefined : eq);
    const def = byName.get(name);
    if (def === undefined || name === HELP_FLAG.name) throw usage(`unknown option ${quote(word)}`);
    if (def.value === undefined) {
      if (eq !== -1) throw usage(`option --${name} takes no value`);
      flags[name] = true;
      continue;
    }
    let value: string;
    if (eq !== -1) {
      value = word.slice(eq + 1);
    } else {
      const next = rest[i + 1];
      if (next === undefined) throw usage(`option --${name} needs a value`);
      value = next;
      i++;
    }
    setFlag(flags, def, value);
  }
  return { flags, positionals };
}

/** A flag's value, checked (a count is a whole number) and stored (a repeatable one appended). */
function setFlag(flags: Record<string, FlagValue>, def: FlagDef, value: string): void {
  const name = def.name;
  let parsed: string | number = value;
  if (def.value === 'count') {
    if (!/^[0-9]{1,9}$/.test(value) || Number(value) < 1) {
      throw usage(`option --${name} needs a whole number of at least 1`);
    }
    parsed = Number(value);
  }
  if (def.repeat === true) {
    const list = (flags[name] as string[] | undefined) ?? [];
    list.push(String(parsed));
    flags[name] = list;
  } else {
    if (name in flags) throw usage(`option --${name} given twice`);
    flags[name] = parsed;
  }
}

/** The positionals bound to the command's arguments, in order; one left over is refused. */
function bindArgs(
  command: CommandDef,
  positionals: readonly string[],
): Record<string, string | string[]> {
  const args: Record<string, string | string[]> = {};
  let p = 0;
  for (const a of command.args) {
    if (a.rest === true) {
      args[a.name] = positionals.slice(p);
      p = positionals.length;
      break;
    }
    const v = positionals[p];
    if (v === undefined) {
      if (a.optional === true) continue;
      throw usage(`missing <${a.name}> for ${command.path.join(' ')}`);
    }
    args[a.name] = v;
    p++;
  }
  if (p < positionals.length) {
    const path = command.path.join(' ');
    if (TAKES_VALUE_ON_STDIN.includes(path)) {
      // Not echoed: it may be the value itself, typed where it does not belong.
      throw usage(
        `unexpected argument after ${path} (not repeated here): if it was a value or a token, ` +
          `it is now in your shell history, so remove it there; ${path} reads it from its prompt or stdin`,
      );
    }
    throw usage(`unexpected argument ${quote(positionals[p] ?? '')}`);
  }
  return args;
}
