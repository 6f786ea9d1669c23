// Issue 35: an agent under `run` that ends by leaving the owner's terminal in
// modes the output filter lets through (a scroll region of two lines at the
// bottom, the alternate screen, the DEC graphics charset shifted in, concealed
// text, modifyOtherKeys and kitty keyboard flags) hid `run`'s last lines: the
// one that says which project control it held scrolled away in the region,
// and the owner saw the agent's "Done." and a prompt. `run` now puts the
// terminal back before its last lines, and says the held ones last. A real
// terminal emulator (tmux) shows what the owner sees.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { installBin } from '../support/pty.js';
import { CLI, Rig } from '../support/rig.js';
import { Tmux } from '../support/tmux.js';

const tools = (() => {
  try {
    execFileSync('tmux', ['-V']);
  } catch {
    return false;
  }
  return existsSync('/usr/bin/bwrap');
})();
const skip = !tools && 'needs bubblewrap and tmux';

const rig = new Rig();
const project = join(rig.root, 'project');

/** Plants a control `run` holds, then leaves every hiding mode set, then says it is done. */
const AGENT = String.raw`mkdir -p ed && echo 'echo pwned' > ed/.envrc
printf '\033[?1049h\033[39;40r\033(0\033)0\016\033[8m\033[>4;2m\033[>1u\033[=5;1u\033[?6h'
printf 'Done. All tests pass.\n'
`;

before(async () => {
  await rig.create();
  await rig.addAgent('a', []);
  installBin(rig);
  mkdirSync(project);
  writeFileSync(join(project, 'agent.sh'), AGENT);
});
after(() => rig.dispose());

test(
  'an agent that ends with a two-line scroll region, another charset and hidden text: the held line is on the owner’s screen when run returns',
  { skip, timeout: 300_000 },
  async () => {
    const pane = new Tmux({
      dir: rig.root,
      command: [process.execPath, CLI, 'run', '--agent', 'a', '--', 'sh', 'agent.sh'],
      env: {
        ...rig.env,
        PATH: `${join(rig.root, 'bin')}:${process.env.PATH}`,
        TERM: 'xterm-256color',
      },
      cwd: project,
      cols: 160,
      rows: 40,
    });
    try {
      assert.equal(await pane.exited(), 0, pane.screen());
      const screen = pane.screen();
      assert.match(screen, /vault-cli: held \S*ed\/\.envrc/, screen);
      // The terminal is back: the main screen, and no keyboard protocol left on.
      assert.equal(pane.display('#{alternate_on}'), '0');
      assert.equal(pane.display('#{scroll_region_upper},#{scroll_region_lower}'), '0,39');
      // Origin mode may be on again (the cursor's restore sets it back), harmless with the whole screen as the region.
      assert.equal(pane.display('#{keypad_flag}'), '0');
    } finally {
      pane.kill();
    }
  },
);
