/**
 * A supervisor with a stand-in dashboard, for the hand-over tests to drive
 * under a real terminal: `node --import tsx handover-harness.ts <dir> [plain]`.
 *
 * The agent is a bash loop that logs every line it reads to `<dir>/agent.log`
 * (the record of what reached it) and answers on screen: `got=<line>`,
 * `size=<rows> <cols>` for "size", INT-CAUGHT for Ctrl-C; "fullscreen" and
 * "leavefull" enter and leave the alternate screen; "modes" turns on mouse
 * reports and application cursor keys; "exit N" ends it
 * with N, and "exitwhen N" ends it with N once `<dir>/go` exists.
 *
 * The dashboard takes the alternate screen, shows DASHBOARD, the agent's last
 * lines and the keys it read (logged to `<dir>/dashboard.log`), and leaves on
 * 'q' or Ctrl-], or when the supervisor is told to stop. With "plain" there is no hand-over: Ctrl-] is the agent's.
 * The harness writes its pid to `<dir>/pid`, exits with the child's status
 * and writes its fate to `<dir>/result.json`.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { supervise, type HandOverIo } from '../../shell/supervisor.js';

const [, , dir = '', mode] = process.argv;
if (dir === '') throw new Error('usage: handover-harness.ts <dir> [plain]');
const plain = mode === 'plain';

const AGENT = String.raw`
trap 'echo INT-CAUGHT; echo "<INT>" >> "$DIR/agent.log"' INT
echo "agent ready"
while true; do
  if IFS= read -r line; then
    printf '%s\n' "$line" >> "$DIR/agent.log"
    case "$line" in
      size) echo "size=$(stty size)" ;;
      fullscreen) printf '\033[?1049h\033[H\033[2JFULL SCREEN APP\r\n' ;;
      leavefull) printf '\033[?1049l'; echo "back from full screen" ;;
      modes) printf '\033[?1000h\033[?1h'; echo "modes set" ;;
      "exit "*) set -- $line; exit "$2" ;;
      "exitwhen "*)
        while [ ! -e "$DIR/go" ]; do sleep 0.05; done
        echo "agent leaving"
        set -- $line; exit "$2" ;;
      *) echo "got=$line" ;;
    esac
  fi
done
`;

async function dashboard({ stdin, stdout, agent, exited, signal }: HandOverIo): Promise<void> {
  let keys = '';
  let fate = '';
  let open = true;
  const draw = () => {
    if (!open) return;
    const lines = agent.lastLines(4).map((l) => `agent| ${l}`);
    stdout.write(
      '\x1b[H\x1b[2J\x1b[7m DASHBOARD \x1b[0m\r\n' +
        `${lines.join('\r\n')}\r\n` +
        `keys: ${JSON.stringify(keys)}\r\n${fate}`,
    );
  };
  stdout.write('\x1b[?1049h\x1b[?25l');
  draw();
  void exited.then((r) => {
    fate = `agent exited ${r.status}`;
    draw();
  });
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer | string) => {
      const chunk = Buffer.from(d);
      appendFileSync(join(dir, 'dashboard.log'), chunk);
      const end = chunk.findIndex((b) => b === 0x71 /* q */ || b === 0x1d);
      keys += chunk.subarray(0, end < 0 ? chunk.length : end).toString('latin1');
      if (end < 0) {
        draw();
        return;
      }
      leave();
    };
    // The supervisor is told to stop: a dashboard leaves at once.
    const leave = () => {
      signal.removeEventListener('abort', leave);
      stdin.off('data', onData);
      stdin.pause();
      resolve();
    };
    signal.addEventListener('abort', leave);
    stdin.on('data', onData);
    stdin.resume();
  });
  open = false;
  stdout.write('\x1b[?25h\x1b[?1049l');
}

writeFileSync(join(dir, 'pid'), String(process.pid));
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
const result = await supervise({
  file: 'bash',
  args: ['--norc', '--noprofile', '-c', AGENT],
  env: { ...env, DIR: dir },
  cwd: dir,
  io: { stdin: process.stdin, stdout: process.stdout, signals: process },
  ...(plain ? {} : { handOver: { key: 0x1d, show: dashboard } }),
});
writeFileSync(join(dir, 'result.json'), JSON.stringify(result));
process.stdout.write(`harness: status=${result.status}\r\n`);
process.exitCode = result.status;
