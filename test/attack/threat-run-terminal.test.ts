// The owner's terminal, attacked from inside a sandboxed `vault-cli run` by an
// agent with a shell (docs/threat-model.md, "a same-user process that puts
// itself on the terminal"): the owner's shell runs in a tmux pane (a real
// terminal emulator, which answers report requests as xterm does), starts
// `run` from there, and is asked afterwards what it was typed. The agent
// pushes a command with TIOCSTI on every terminal it holds, opens the owner's
// terminal by path, starts a session of its own to take a terminal, looks for
// `run` and the owner's shell to ptrace them, and asks the terminal for
// reports just before it exits. Each attack has its control: the same thing
// done by the owner's shell itself does reach the terminal.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import { installBin, said } from '../support/pty.js';
import { Rig } from '../support/rig.js';
import { Tmux } from '../support/tmux.js';

const tools = (() => {
  try {
    execFileSync('tmux', ['-V']);
    execFileSync('python3', ['-c', '']);
  } catch {
    return false;
  }
  return existsSync('/usr/bin/bwrap');
})();
const skip = !tools && 'needs bubblewrap, tmux and python3';

const rig = new Rig();
/** `run`'s working directory: the agent may write here, and reads the scripts from here. */
const project = join(rig.root, 'project');
/** Outside the sandbox (its /tmp is a tmpfs of its own): only a process outside can write here. */
const outside = join(rig.root, 'outside');

/**
 * The agent's attack, as a python3 script: each outcome a `name=value` line
 * in `results` (errno names for failures). `outside` runs it in the owner's
 * shell as the control.
 */
const ATTACK = String.raw`
import ctypes, errno, fcntl, os, select, sys, termios
where, outer_tty, run_pid, shell_pid, marker, results = sys.argv[1:7]
line = ('touch %s\n' % marker).encode()
out = open(results, 'w')
def say(k, v):
    out.write('%s=%s\n' % (k, v)); out.flush()
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))
def sti(fd):
    try:
        for b in line:
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([b]))
        return 'ok'
    except OSError as e:
        return name(e)
def opened(path, flags=os.O_RDWR | os.O_NOCTTY):
    try:
        return os.open(path, flags), 'ok'
    except OSError as e:
        return None, name(e)
# (a) TIOCSTI on the controlling terminal and on /dev/tty.
say('sti-stdin', sti(0))
if where == 'outside':
    sys.exit(0)
fd, r = opened('/dev/tty')
say('sti-devtty', sti(fd) if fd is not None else 'open-' + r)
# Where a pushed line went: to this process's own terminal, read back here.
got = b''
while select.select([0], [], [], 2)[0]:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    got += chunk
    if got.count(line) >= 2:
        break
say('own-input', got.count(line))
# (b) The owner's terminal by its path, and what /dev/pts holds here.
say('pts', ','.join(sorted(os.listdir('/dev/pts'))))
fd, r = opened(outer_tty)
say('outer-open', r)
if fd is not None:
    say('outer-sti', sti(fd))
    os.write(fd, b'\x1b]2;PWNED-outer\x07')
# Every terminal it can open: a title written to each (run drops titles).
for path in ['/dev/tty', '/dev/console', '/proc/self/fd/0']:
    fd, r = opened(path, os.O_WRONLY | os.O_NOCTTY)
    if fd is not None:
        os.write(fd, ('\x1b]2;PWNED-%s\x07' % path).encode())
# (c) A session of its own, then a terminal to make its own and push into.
child = os.fork()
if child == 0:
    os.setsid()
    for key, path in [('tty', '/dev/tty'), ('console', '/dev/console'), ('outer', outer_tty)]:
        fd, r = opened(path, os.O_RDWR)
        if fd is None:
            say('setsid-' + key, 'open-' + r)
            continue
        try:
            fcntl.ioctl(fd, termios.TIOCSCTTY, 1)
            steal = 'ok'
        except OSError as e:
            steal = name(e)
        say('setsid-' + key, 'steal-%s,sti-%s' % (steal, sti(fd)))
    os._exit(0)
os.waitpid(child, 0)
# (d) run and the owner's shell: in /proc, and to ptrace.
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
for key, pid in [('run', run_pid), ('shell', shell_pid)]:
    say('proc-' + key, 'seen' if os.path.exists('/proc/%s' % pid) else 'absent')
    rc = libc.ptrace(16, int(pid), None, None)  # PTRACE_ATTACH
    say('ptrace-' + key, 'ok' if rc == 0 else errno.errorcode.get(ctypes.get_errno()))
say('done', 1)
`;

/**
 * Run in the owner's shell after something may have left answers for it: asks
 * the terminal for a DSR 5 and reads, raw, everything typed before its answer
 * (a terminal answers in order), then prints it as hex, or `nothing`.
 */
const PROBE = String.raw`
import os, signal, sys, termios, tty
signal.alarm(20)
fd = 0
saved = termios.tcgetattr(fd)
tty.setraw(fd, termios.TCSANOW)  # TCSANOW: what is already typed stays to be read
os.write(1, b'\x1b[5n')
buf = b''
while b'\x1b[0n' not in buf:
    buf += os.read(fd, 1024)
termios.tcsetattr(fd, termios.TCSANOW, saved)
typed = buf[:buf.index(b'\x1b[0n')]
print('typed-%s=%s' % (sys.argv[1], typed.hex() or 'nothing'))
`;

/**
 * Report requests, each answered by xterm or tmux into the terminal's input;
 * not DSR 5, the probe's own.
 */
const REQUESTS = String.raw`\033[6n\033[c\033[>c\033[21t\033]52;c;?\007\033]11;?\007\033[?6n`;

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.set('X', `x-${hex(8)}`);
  await rig.addAgent('a', ['X'], ['--per-minute', '100', '--per-hour', '100']);
  installBin(rig);
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, 'attack.py'), ATTACK);
  writeFileSync(join(project, 'probe.py'), PROBE);
  writeFileSync(join(project, 'requests.sh'), `printf '${REQUESTS}'\n`);
});
after(() => rig.dispose());

/** The owner's interactive bash in a tmux pane, in the project directory. */
function ownerShell(): Tmux {
  const env: NodeJS.ProcessEnv = {
    ...rig.env,
    PATH: `${join(rig.root, 'bin')}:${process.env.PATH}`,
    TERM: 'xterm-256color',
  };
  return new Tmux({
    dir: rig.root,
    command: ['bash', '--norc', '--noprofile', '-i'],
    env,
    cwd: project,
    cols: 200,
    rows: 50,
  });
}

/**
 * Types `command` and waits until the shell has run it and then a line after
 * it: input left in the terminal before that line has been read and run by then.
 */
async function typed(sh: Tmux, command: string): Promise<void> {
  const tag = hex(4);
  sh.line(`${command}; echo "synced-${tag}=$((6*7))"`);
  await sh.waitFor(new RegExp(`synced-${tag}=42`), command, 120_000);
}

test(
  'inside run, TIOCSTI, the owner’s tty by path, setsid and ptrace reach nothing of the owner’s terminal or shell',
  { skip, timeout: 300_000 },
  async (t) => {
    const sh = ownerShell();
    try {
      await typed(sh, 'true'); // the shell is up
      const outerTty = sh.display('#{pane_tty}');
      const shellPid = sh.display('#{pane_pid}');

      // Controls: the owner's shell can push a line into its own terminal
      // (root, or dev.tty.legacy_tiocsti=1) and a title shows on its terminal.
      const control = join(outside, `control-${hex(4)}`);
      const controlOut = join(project, 'control.txt');
      await typed(
        sh,
        `python3 attack.py outside ${outerTty} 0 0 ${control} ${controlOut}; printf '\\033]2;CONTROL-TITLE\\007'`,
      );
      const sti = said(readFileSync(controlOut, 'utf8')).get('sti-stdin');
      t.diagnostic(
        `TIOCSTI in the owner's own shell: ${sti}; legacy_tiocsti=${readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim()}`,
      );
      if (sti === 'ok') await typed(sh, 'true'); // the pushed line is run after the probe's own
      assert.equal(existsSync(control), sti === 'ok', 'the control’s pushed line ran in the shell');
      assert.equal(sh.display('#{pane_title}'), 'CONTROL-TITLE');

      // The attack, from inside run: `exec` makes $$ run's pid.
      const marker = join(outside, `pwned-${hex(4)}`);
      const results = join(project, 'results.txt');
      await typed(
        sh,
        `sh -c 'exec vault-cli run --agent a -- python3 attack.py inside "$(tty)" "$$" ${shellPid} ${marker} ${results}'; echo "run=$?"`,
      );
      const m = said(readFileSync(results, 'utf8'));
      t.diagnostic(JSON.stringify(Object.fromEntries(m)));
      assert.equal(m.get('done'), '1', JSON.stringify([...m]));
      // (a) Pushed into the agent's own terminal, if anywhere: it read the line back itself.
      const pushed = ['sti-stdin', 'sti-devtty'].filter((k) => m.get(k) === 'ok').length;
      assert.equal(m.get('own-input'), String(pushed), JSON.stringify([...m]));
      // (b) The sandbox's /dev/pts is a new instance: no terminal of the machine's is there.
      assert.equal(m.get('pts'), 'ptmx');
      assert.equal(m.get('outer-open'), 'ENOENT');
      // (c) A new session takes no terminal: not the agent's, not the owner's.
      assert.equal(m.get('setsid-tty'), 'open-ENXIO');
      assert.doesNotMatch(m.get('setsid-console') ?? '', /ok/);
      assert.equal(m.get('setsid-outer'), 'open-ENOENT');
      // (d) run and the owner's shell are not in the sandbox's process table.
      for (const k of ['run', 'shell']) {
        assert.equal(m.get(`proc-${k}`), 'absent', k);
        assert.equal(m.get(`ptrace-${k}`), 'ESRCH', k);
      }
      // Outside, afterwards: the owner's shell ran nothing the agent pushed,
      // and the agent's titles reached no terminal.
      assert.match(sh.screen(), /run=0/);
      await typed(sh, 'true');
      assert.equal(existsSync(marker), false, 'the owner’s shell ran the agent’s line');
      assert.equal(sh.display('#{pane_title}'), 'CONTROL-TITLE');
    } finally {
      sh.kill();
    }
  },
);

test(
  'report requests an agent sends as it exits: nothing of the terminal’s answers is typed into the owner’s shell',
  { skip, timeout: 300_000 },
  async () => {
    const sh = ownerShell();
    try {
      await typed(sh, 'true'); // the shell is up
      // Control: the same requests from the owner's shell are answered into its input.
      await typed(sh, `sh requests.sh; python3 probe.py control`);
      const control = /typed-control=([0-9a-f]+|nothing)/.exec(sh.screen())?.[1] ?? '';
      assert.notEqual(control, 'nothing', 'tmux answered the owner’s own requests');
      // DA1 (ESC [ ? ... c) and the cursor position (ESC [ row ; col R) among them.
      assert.match(Buffer.from(control, 'hex').toString('latin1'), /\x1b\[\?[0-9;]*c/);
      assert.match(Buffer.from(control, 'hex').toString('latin1'), /\x1b\[[0-9]+;[0-9]+R/);

      await typed(
        sh,
        `vault-cli run --agent a -- sh requests.sh; echo "run=$?"; python3 probe.py run`,
      );
      assert.match(sh.screen(), /run=0/);
      const got = /typed-run=([0-9a-f]+|nothing)/.exec(sh.screen())?.[1];
      assert.equal(got, 'nothing', Buffer.from(got ?? '', 'hex').toString('latin1'));
    } finally {
      sh.kill();
    }
  },
);

test(
  'modes an agent leaves set, which make the terminal type on its own (mouse, focus, paste), are off when run returns',
  { skip, timeout: 300_000 },
  async () => {
    // Mouse tracking in every form, SGR encoding, focus and paste reports: left
    // on, each click, focus change or paste types a report into the owner's shell.
    // (tmux keeps one tracking mode at a time: the last, 1000, clicks.)
    const modes = String.raw`\033[?9h\033[?1003h\033[?1002h\033[?1000h\033[?1006h\033[?1004h\033[?2004h`;
    writeFileSync(join(project, 'modes.sh'), `printf '${modes}'\n`);
    const flags = '#{mouse_standard_flag}#{mouse_sgr_flag}';
    const sh = ownerShell();
    try {
      await typed(sh, 'true'); // the shell is up
      // Control: the owner's own printf sets them, as tmux reports.
      await typed(sh, 'sh modes.sh');
      assert.equal(sh.display(flags), '11');
      await typed(sh, String.raw`printf '\033[?1000l\033[?1006l'`);
      assert.equal(sh.display(flags), '00');

      await typed(sh, 'vault-cli run --agent a -- sh modes.sh; echo "run=$?"');
      assert.match(sh.screen(), /run=0/);
      assert.equal(sh.display(flags), '00', 'mouse reports left on in the owner’s terminal');
      // Without a pty (stdin not a terminal), the agent's stdout and stderr are the owner's terminal.
      for (const redirect of ['', ' 1>&2']) {
        await typed(sh, `echo | vault-cli run --agent a -- sh -c 'sh modes.sh${redirect}'`);
        assert.equal(sh.display(flags), '00', `without a pty${redirect}`);
      }
    } finally {
      sh.kill();
    }
  },
);
