// The argv parser and help text, both driven by the one command table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { helpText, parseArgv, type Invocation } from '../../src/commands/argv.js';
import { parseDirect } from '../../src/commands/parse.js';
import { PIPE_SIDE } from '../../src/commands/pipe-side.js';
import { COMMANDS } from '../../src/commands/table.js';
import { VaultError } from '../../src/core/errors.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);

/** Asserts that `fn` throws the usage error VLT-1001 and returns its message. */
function usageError(fn: () => unknown): string {
  let caught: unknown = null;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof VaultError, `expected a VaultError, got ${String(caught)}`);
  assert.equal(caught.code, 'VLT-1001');
  return caught.message;
}

function path(inv: Invocation): string {
  return inv.command?.path.join(' ') ?? '(none)';
}

test('every command path in the table parses to its own definition', () => {
  // `help` is parsed as the help it asks for (below).
  for (const c of COMMANDS.filter((c) => c.path[0] !== 'help')) {
    const words = [...c.path];
    for (const a of c.args) if (a.optional !== true && a.rest !== true) words.push(`x-${a.name}`);
    const inv = parseArgv(words);
    assert.equal(inv.command, c, words.join(' '));
    assert.equal(inv.help, false);
    assert.deepEqual(inv.group, c.path);
    for (const a of c.args) {
      if (a.optional !== true && a.rest !== true) assert.equal(inv.args[a.name], `x-${a.name}`);
    }
  }
});

test('the longest matching path wins: daemon vs daemon stop', () => {
  assert.equal(path(parseArgv(['daemon'])), 'daemon');
  assert.equal(path(parseArgv(['daemon', 'stop'])), 'daemon stop');
  assert.equal(path(parseArgv(['daemon', 'status', '--json'])), 'daemon status');
});

test('positional arguments: get, entry set, agent add', () => {
  const get = parseArgv(['get', 'Stripe Prod']);
  assert.equal(path(get), 'get');
  assert.deepEqual(get.args, { entry: 'Stripe Prod' });
  assert.deepEqual(get.flags, {});

  const set = parseArgv(['entry', 'set', 'GitHub', '--field', 'totp', '--tier', 'ops']);
  assert.deepEqual(set.args, { entry: 'GitHub' });
  assert.deepEqual(set.flags, { field: 'totp', tier: 'ops' });

  const add = parseArgv(['agent', 'add', 'claude']);
  assert.deepEqual(add.args, { name: 'claude' });
});

test('--flag=value and --flag value give the same result', () => {
  const a = parseArgv(['get', 'GitHub', '--field=key']);
  const b = parseArgv(['get', 'GitHub', '--field', 'key']);
  assert.deepEqual(a.flags, { field: 'key' });
  assert.deepEqual(b.flags, a.flags);
  assert.deepEqual(b.args, a.args);
});

test('a flag may come before the positional argument', () => {
  const inv = parseArgv(['get', '--field', 'key', 'GitHub']);
  assert.deepEqual(inv.args, { entry: 'GitHub' });
  assert.deepEqual(inv.flags, { field: 'key' });
});

test('--flag=value keeps everything after the first = (including more = and nothing)', () => {
  assert.deepEqual(parseArgv(['get', 'e', '--field=a=b']).flags, { field: 'a=b' });
  assert.deepEqual(parseArgv(['get', 'e', '--field=']).flags, { field: '' });
});

test('a value that looks like a flag is taken when given after --flag', () => {
  assert.deepEqual(parseArgv(['get', 'e', '--field', '--json']).flags, { field: '--json' });
});

test('--scope is repeatable and keeps order; both spellings mix', () => {
  const inv = parseArgv([
    'agent',
    'add',
    'claude',
    '--scope',
    'Stripe Prod',
    '--scope=GitHub',
    '--scope',
    'Stripe Prod',
  ]);
  assert.deepEqual(inv.flags.scope, ['Stripe Prod', 'GitHub', 'Stripe Prod']);
  const scope = parseArgv(['agent', 'scope', 'claude', '--add', 'A', '--rm', 'B', '--add=C']);
  assert.deepEqual(scope.flags, { add: ['A', 'C'], rm: ['B'] });
});

test('a non-repeatable flag given twice is a usage error', () => {
  const msg = usageError(() => parseArgv(['get', 'e', '--field', 'a', '--field', 'b']));
  assert.match(msg, /--field/);
  usageError(() => parseArgv(['agent', 'add', 'x', '--kind', 'ai', '--kind=script']));
});

test('count flags are parsed as numbers of at least 1', () => {
  const inv = parseArgv(['agent', 'add', 'claude', '--per-minute', '5', '--per-hour=20']);
  assert.deepEqual(inv.flags, { 'per-minute': 5, 'per-hour': 20 });
  assert.equal(typeof inv.flags['per-minute'], 'number');
  const max = parseArgv(['agent', 'limits', 'claude', '--per-hour', '999999999']);
  assert.equal(max.flags['per-hour'], 999_999_999);
});

test('count flags refuse zero, negatives, fractions, words and overlong numbers', () => {
  for (const bad of ['0', '-1', '1.5', 'three', '', ' 3', '1e3', '0x10', '1234567890']) {
    const msg = usageError(() => parseArgv(['agent', 'limits', 'claude', `--per-minute=${bad}`]));
    assert.match(msg, /--per-minute/);
  }
  usageError(() => parseArgv(['agent', 'limits', 'claude', '--per-minute', '-1']));
});

test('boolean switches: present is true, a value is refused', () => {
  assert.deepEqual(parseArgv(['entry', 'ls', '--json']).flags, { json: true });
  assert.deepEqual(parseArgv(['vault', 'passwd', '--recovery']).flags, { recovery: true });
  usageError(() => parseArgv(['entry', 'ls', '--json=yes']));
});

test('a flag that needs a value at the end of argv is a usage error', () => {
  const msg = usageError(() => parseArgv(['get', 'e', '--field']));
  assert.match(msg, /--field/);
});

test('unknown flags, short flags and flags of another command are usage errors', () => {
  assert.match(
    usageError(() => parseArgv(['get', 'e', '--nope'])),
    /--nope/,
  );
  assert.match(
    usageError(() => parseArgv(['get', 'e', '-x'])),
    /-x/,
  );
  usageError(() => parseArgv(['get', 'e', '--json']));
  usageError(() => parseArgv(['entry', 'ls', '--scope', 'a']));
});

test('missing and extra positional arguments are usage errors', () => {
  assert.match(
    usageError(() => parseArgv(['get'])),
    /<entry>/,
  );
  assert.match(
    usageError(() => parseArgv(['get', 'a', 'b'])),
    /"b"/,
  );
  usageError(() => parseArgv(['agent', 'lock']));
  usageError(() => parseArgv(['entry', 'ls', 'extra']));
});

test('unknown commands are usage errors that name the word', () => {
  assert.match(
    usageError(() => parseArgv(['frobnicate'])),
    /frobnicate/,
  );
  assert.match(
    usageError(() => parseArgv(['entry', 'frob'])),
    /entry frob/,
  );
  usageError(() => parseArgv(['--json']));
});

test('-- ends options: what follows is positional, even when it starts with a dash', () => {
  const a = parseArgv(['get', '--', '--field']);
  assert.deepEqual(a.args, { entry: '--field' });
  assert.deepEqual(a.flags, {});
  const b = parseArgv(['get', '--field', 'key', '--', '-x']);
  assert.deepEqual(b.args, { entry: '-x' });
  assert.deepEqual(b.flags, { field: 'key' });
  const c = parseArgv(['entry', 'set', '--', '--']);
  assert.deepEqual(c.args, { entry: '--' });
  usageError(() => parseArgv(['get', '--', 'a', 'b']));
});

test('-- ends options for --help and -h too: an entry may be named --help', () => {
  const a = parseArgv(['get', '--', '--help']);
  assert.equal(a.help, false);
  assert.deepEqual(a.args, { entry: '--help' });
  const b = parseArgv(['get', '--', '-h']);
  assert.equal(b.help, false);
  assert.deepEqual(b.args, { entry: '-h' });
});

test('a lone - is a positional argument (stdin)', () => {
  assert.deepEqual(parseArgv(['get', '-']).args, { entry: '-' });
});

test('no words, --help or -h alone ask for the top-level help', () => {
  for (const argv of [[], ['--help'], ['-h']]) {
    const inv = parseArgv(argv);
    assert.equal(inv.help, true);
    assert.equal(inv.command, null);
    assert.deepEqual(inv.group, []);
  }
});

test('a group word alone or with --help asks for the group help', () => {
  for (const argv of [['entry'], ['entry', '--help'], ['agent', '-h'], ['vault']]) {
    const inv = parseArgv(argv);
    assert.equal(inv.help, true, argv.join(' '));
    assert.equal(inv.command, null);
    assert.deepEqual(inv.group, [argv[0]]);
  }
  const text = helpText(['entry']);
  for (const c of COMMANDS.filter((c) => c.path[0] === 'entry')) {
    assert.ok(text.includes(c.path.join(' ')), `entry help lists ${c.path.join(' ')}`);
  }
  assert.ok(!text.includes('agent add'));
});

test('--help on a command asks for that command’s help, wherever it stands', () => {
  for (const argv of [
    ['entry', 'set', '--help'],
    ['entry', 'set', 'x', '--help'],
    ['entry', 'set', '--nope', '--help'],
    ['entry', 'set', '-h'],
  ]) {
    const inv = parseArgv(argv);
    assert.equal(inv.help, true, argv.join(' '));
    assert.equal(path(inv), 'entry set');
    assert.deepEqual(inv.group, ['entry', 'set']);
  }
});

test('helpText for every command mentions every one of its flags and its arguments', () => {
  for (const c of COMMANDS) {
    const text = helpText(c.path);
    assert.ok(text.startsWith(`usage: vault-cli ${c.path.join(' ')}`), text);
    assert.ok(text.includes(c.summary), `${c.path.join(' ')}: summary`);
    for (const f of c.flags) {
      assert.match(
        text,
        new RegExp(`--${f.name}(?![\\w-])`),
        `${c.path.join(' ')} help names --${f.name}`,
      );
    }
    for (const a of c.args) assert.ok(text.includes(a.name), `${c.path.join(' ')}: ${a.name}`);
  }
});

test('the top-level help lists every command', () => {
  const text = helpText([]);
  for (const c of COMMANDS) assert.ok(text.includes(c.path.join(' ')), c.path.join(' '));
});

const words = fc.oneof(
  fc.constantFrom(
    ...new Set(COMMANDS.flatMap((c) => c.path)),
    ...new Set(COMMANDS.flatMap((c) => c.flags.map((f) => `--${f.name}`))),
    '--',
    '-',
    '-h',
    '--help',
    '--per-minute=0',
    '--scope=x',
    '--field=',
    '3',
    '',
    '__proto__',
    'constructor',
    '--__proto__',
    '--constructor',
    '--toString',
  ),
  fc.string(),
  fc.string({ unit: 'binary' }),
);

test('property: parseArgv returns or throws VLT-1001, never another exception', () => {
  fc.assert(
    fc.property(fc.array(words, { maxLength: 8 }), (argv) => {
      try {
        const inv = parseArgv(argv);
        if (!inv.help) assert.notEqual(inv.command, null);
      } catch (err) {
        if (!(err instanceof VaultError) || err.code !== 'VLT-1001') throw err;
      }
    }),
    { numRuns: RUNS * 5 },
  );
});

test('property: --field value and --field=value agree for arbitrary values', () => {
  // `--help` and `-h` anywhere ask for help, so they are not arbitrary values.
  const get = fc.tuple(
    fc.string({ minLength: 1 }).filter((s) => !s.startsWith('-')),
    fc.string().filter((s) => s !== '--help' && s !== '-h'),
  );
  fc.assert(
    fc.property(get, ([entry, field]) => {
      const a = parseArgv(['get', entry, '--field', field]);
      const b = parseArgv(['get', entry, `--field=${field}`]);
      assert.deepEqual(a.args, { entry });
      assert.deepEqual(a.flags, { field });
      assert.deepEqual(b.flags, a.flags);
    }),
    { numRuns: RUNS },
  );
});

test('help <command> is <command> --help; help alone is the top-level help', () => {
  for (const c of COMMANDS) {
    const viaHelp = parseArgv(['help', ...c.path]);
    const viaFlag = parseArgv([...c.path, '--help']);
    assert.equal(viaHelp.help, true, c.path.join(' '));
    assert.equal(viaHelp.command, viaFlag.command);
    assert.deepEqual(viaHelp.group, viaFlag.group);
  }
  assert.deepEqual(parseArgv(['help', 'entry']).group, ['entry']);
  assert.equal(parseArgv(['help', 'entry']).command, null);
  const top = parseArgv(['help']);
  assert.equal(top.help, true);
  assert.deepEqual(top.group, []);
  assert.match(
    usageError(() => parseArgv(['help', 'frobnicate'])),
    /frobnicate/,
  );
  assert.match(
    usageError(() => parseArgv(['help', 'get', 'extra'])),
    /get extra/,
  );
});

test('--version alone asks for the version; with a command it is an unknown option', () => {
  assert.equal(parseArgv(['--version']).version, true);
  usageError(() => parseArgv(['get', 'x', '--version']));
});

test('the top-level help groups the commands: owner, agents, host and set-up', () => {
  const text = helpText([]);
  const owner = text.indexOf('for the owner');
  const agents = text.indexOf('for agents');
  const host = text.indexOf('host and set-up');
  assert.ok(owner > 0 && agents > owner && host > agents, text);
  const section = (from: number, to: number) => text.slice(from, to);
  for (const c of COMMANDS) {
    const line = new RegExp(`^  ${c.path.join(' ')}(?: [<\\[]|\\s{2})`, 'm');
    const where =
      c.side === 'owner'
        ? section(owner, agents)
        : c.side === 'agent'
          ? section(agents, host)
          : section(host, text.length);
    assert.match(where, line, `${c.path.join(' ')} under its side (${c.side})`);
  }
  // They need the passphrase: the owner's, not "anyone's".
  for (const p of ['daemon stop', 'agent wrap']) {
    assert.match(section(owner, agents), new RegExp(`^  ${p}\\b`, 'm'), p);
  }
  assert.match(text, /--version/);
});

test('metavars say what a flag takes; (repeatable) once; examples and notes in every help', () => {
  for (const c of COMMANDS) {
    const name = c.path.join(' ');
    const text = helpText(c.path);
    for (const f of c.flags) {
      if (f.value === 'string') {
        assert.ok(f.metavar !== undefined, `${name} --${f.name} names what it takes`);
        assert.ok(text.includes(`--${f.name} ${f.metavar}  `), `${name} --${f.name} ${f.metavar}`);
      }
      if (f.value === 'count') assert.ok(text.includes(`--${f.name} <n>  `), name);
      assert.doesNotMatch(f.summary, /repeatable/, `${name} --${f.name}: the help adds it`);
    }
    assert.doesNotMatch(text, /\(repeatable\).*\(repeatable\)/, name);
    assert.ok(c.examples.length > 0, `${name} has examples`);
    assert.match(text, /\nexamples:\n {2}\S/, name);
  }
  const run = helpText(['run']);
  assert.match(run, /^usage: vault-cli run \[options\] -- <command>\.\.\.$/m);
  assert.match(
    run,
    /--allow-write <path> {2,}let the sandboxed agent write this directory or file too \(repeatable\)$/m,
  );
  assert.match(run, /--allow-net <host:port> /);
  assert.doesNotMatch(run, /<allow-write>|<allow-net>|<scope>|<agent>/);
  for (const p of [['get'], ['totp'], ['render']]) {
    assert.match(helpText(p), /stdout must be a pipe/, p.join(' '));
  }
});

/** The words of the `vault-cli ...` commands in a shell line, as the shell would pass them. */
function invocations(line: string): string[][] {
  const found: string[][] = [];
  for (const m of line.matchAll(/(?:^|[\s("])vault-cli /g)) {
    let i = (m.index ?? 0) + m[0].length;
    const words: string[] = [];
    let word: string | null = null;
    const push = () => {
      if (word !== null) words.push(word);
      word = null;
    };
    scan: while (i < line.length) {
      const ch = line[i] as string;
      if (ch === "'" || ch === '"') {
        const end = line.indexOf(ch, i + 1);
        if (end === -1) break; // the closing quote of an enclosing string
        word = (word ?? '') + line.slice(i + 1, end);
        i = end + 1;
      } else if (ch === '$' && line[i + 1] === '(') {
        const end = line.indexOf(')', i);
        word = (word ?? '') + line.slice(i, end + 1);
        i = end + 1;
      } else if (/\s/.test(ch)) {
        push();
        i++;
      } else if ('|&;)<>#'.includes(ch)) {
        break scan;
      } else {
        word = (word ?? '') + ch;
        i++;
      }
    }
    push();
    found.push(words);
  }
  return found;
}

test('every example in the help is a command line the parser takes, for its own command', () => {
  for (const c of COMMANDS) {
    const mine = c.examples.flatMap(invocations);
    assert.ok(mine.length > 0, `${c.path.join(' ')}: an example runs vault-cli`);
    for (const words of mine) {
      const inv = parseArgv(words);
      assert.ok(inv.command !== null, words.join(' '));
    }
    assert.ok(
      mine.some((w) => parseArgv(w).command === c || (c.path[0] === 'help' && w[0] === 'help')),
      `${c.path.join(' ')}: an example of the command itself`,
    );
  }
});

// src/cli/pipe-main.ts parses get, totp and render by pipe-side.ts alone (issue 39:
// their start-up loads no table); what it reads must be what the table reads.
test('get, totp and render are in the table, and no other command starts with their word', () => {
  for (const c of PIPE_SIDE) {
    assert.equal(c.path.length, 1, c.path.join(' '));
    assert.deepEqual(
      COMMANDS.filter((t) => t.path[0] === c.path[0]),
      [c],
      `${c.path[0]}: the table's own definition, alone`,
    );
  }
});

/** What a parse gives: its invocation, or the message of the usage error it throws. */
function outcome(parse: () => unknown): unknown {
  try {
    return parse();
  } catch (err) {
    assert.ok(err instanceof VaultError, String(err));
    return `${err.code}: ${err.message}`;
  }
}

test('property: parseDirect reads what parseArgv reads, or leaves it to parseArgv', () => {
  const words = fc.constantFrom(
    'get',
    'totp',
    'render',
    'GitHub',
    '-',
    '--',
    '--help',
    '-h',
    '--field',
    '--field=totp',
    '--format',
    'json',
    '--raw',
    '--raw=1',
    '--watch',
    '--version',
    '-x',
    '--nope',
    'help',
    'entry',
  );
  fc.assert(
    fc.property(fc.array(words, { maxLength: 6 }), (argv) => {
      const direct = outcome(() => parseDirect(argv, PIPE_SIDE));
      if (direct === null) {
        // Left to the table: anything but a pipe command without help, or --version.
        const named = PIPE_SIDE.some((c) => c.path[0] === argv[0]);
        const end = argv.indexOf('--');
        const options = end === -1 ? argv : argv.slice(0, end);
        assert.ok(!named || options.includes('--help') || options.includes('-h'), argv.join(' '));
        return;
      }
      assert.deepEqual(
        direct,
        outcome(() => parseArgv(argv)),
        argv.join(' '),
      );
    }),
    { numRuns: RUNS * 5 },
  );
});

test('parseDirect: --version alone, a pipe command, and nothing else', () => {
  assert.equal(parseDirect(['--version'], PIPE_SIDE)?.version, true);
  assert.equal(parseDirect(['get', 'GitHub'], PIPE_SIDE)?.command, PIPE_SIDE[0]);
  assert.equal(parseDirect(['get', 'GitHub', '--help'], PIPE_SIDE), null);
  assert.equal(parseDirect(['get', '--', '--help'], PIPE_SIDE)?.args.entry, '--help');
  assert.equal(parseDirect(['entry', 'get', 'GitHub'], PIPE_SIDE), null);
  assert.equal(parseDirect(['help', 'get'], PIPE_SIDE), null);
  assert.equal(parseDirect([], PIPE_SIDE), null);
});
