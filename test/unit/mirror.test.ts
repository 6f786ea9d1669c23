// The agent's screen mirror: its repaint, written to a second terminal that
// stands for the user's (after a dashboard drew over it), must give back the
// agent's screen: text, colours, cursor, alternate screen and modes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
// eslint-disable-next-line no-restricted-imports -- a second terminal stands in for the user's
import xtermHeadless from '@xterm/headless';
// eslint-disable-next-line no-restricted-imports -- a second terminal stands in for the user's
import xtermSerialize from '@xterm/addon-serialize';
import { ScreenMirror } from '../../shell/mirror.js';

type Term = InstanceType<typeof xtermHeadless.Terminal>;

/** The user's terminal: a headless xterm with a serializer to compare screens by. */
class UserTerminal {
  readonly term: Term;
  private readonly serializer = new xtermSerialize.SerializeAddon();
  constructor(cols: number, rows: number) {
    this.term = new xtermHeadless.Terminal({ cols, rows, allowProposedApi: true });
    this.term.loadAddon(this.serializer as unknown as Parameters<Term['loadAddon']>[0]);
  }
  write(data: string): Promise<void> {
    return new Promise((resolve) => this.term.write(data, resolve));
  }
  /** The visible screen, styles and all, as xterm would serialize it. */
  picture(): string {
    return this.serializer.serialize({ scrollback: 0 });
  }
  rows(): string[] {
    const b = this.term.buffer.active;
    const out: string[] = [];
    for (let y = b.baseY; y < b.baseY + this.term.rows; y++)
      out.push(b.getLine(y)?.translateToString(true) ?? '');
    return out;
  }
  state() {
    const b = this.term.buffer.active;
    const core = (this.term as unknown as { _core: { coreService: { isCursorHidden: boolean } } })
      ._core;
    return {
      buffer: b.type,
      cursor: [b.cursorX, b.cursorY],
      hidden: core.coreService.isCursorHidden,
      modes: { ...this.term.modes },
    };
  }
}

/** A mirror and a user terminal fed the same agent output, as the supervisor feeds them. */
async function pair(cols: number, rows: number, agent: string) {
  const mirror = new ScreenMirror(cols, rows);
  const user = new UserTerminal(cols, rows);
  const reference = new UserTerminal(cols, rows);
  mirror.write(agent);
  await user.write(agent);
  await reference.write(agent);
  return { mirror, user, reference };
}

/** What dashboards do to a terminal: the alternate screen, a hidden cursor, a mode or two. */
const DASHBOARD_LEAVING =
  '\x1b[?1049h\x1b[H\x1b[2J\x1b[7mDASHBOARD\x1b[0m\r\nrow\x1b[?25l\x1b[?1049l';
const DASHBOARD_STAYING =
  '\x1b[?1049h\x1b[H\x1b[2J\x1b[44mDASHBOARD\x1b[?25l\x1b[?2004h\x1b[?1000h\x1b[3;5r\x1b[9;9H';

async function handOver(user: UserTerminal, mirror: ScreenMirror, dashboard: string) {
  await user.write(dashboard);
  await user.write(await mirror.repaint());
}

/** The user's terminal shows what a terminal that never left the agent shows. */
function assertSame(user: UserTerminal, reference: UserTerminal) {
  assert.deepEqual(user.rows(), reference.rows());
  assert.equal(user.picture(), reference.picture());
  assert.deepEqual(user.state(), reference.state());
}

const COLOURED =
  'plain \x1b[31mred\x1b[0m and \x1b[1;38;5;208mbold orange\x1b[0m\r\n' +
  '\x1b[44;97m on blue \x1b[0m\r\n\x1b[4munderlined\x1b[24m $ ';

for (const [name, dashboard] of [
  ['leaves its alternate screen', DASHBOARD_LEAVING],
  ['stays on the alternate screen with modes set', DASHBOARD_STAYING],
] as const) {
  test(`text and colours come back after a dashboard that ${name}`, async () => {
    const { mirror, user, reference } = await pair(60, 12, COLOURED);
    await handOver(user, mirror, dashboard);
    assertSame(user, reference);
    assert.equal(user.rows()[0], 'plain red and bold orange');
    mirror.dispose();
  });
}

test('the cursor returns to its cell, and the agent carries on from there', async () => {
  const { mirror, user, reference } = await pair(40, 10, 'one\r\ntwo\r\nthree\x1b[2;8H');
  await handOver(user, mirror, DASHBOARD_STAYING);
  assert.deepEqual(user.state().cursor, [7, 1]);
  assertSame(user, reference);
  const more = 'X\x1b[5;1Hfive\x1b[31m red pen';
  await user.write(more);
  await reference.write(more);
  assertSame(user, reference);
  mirror.dispose();
});

test('the pen the agent left set stays set', async () => {
  const { mirror, user, reference } = await pair(40, 10, 'a\x1b[1;32m');
  await handOver(user, mirror, DASHBOARD_LEAVING);
  await user.write('green');
  await reference.write('green');
  assertSame(user, reference);
  mirror.dispose();
});

const FULL_SCREEN =
  'shell$ vim notes.txt\r\n' +
  '\x1b[?1049h\x1b[?1h\x1b=\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[H\x1b[2J' +
  Array.from({ length: 9 }, (_, i) => `\x1b[${i + 1};1H\x1b[34m~\x1b[0m line ${i}`).join('') +
  '\x1b[10;1H\x1b[7m"notes.txt" 9L\x1b[0m' +
  '\x1b[2;9r\x1b[?25l\x1b[4;6H';

test('an agent in the alternate screen gets it back, with its scroll region, modes and hidden cursor', async () => {
  const { mirror, user, reference } = await pair(40, 10, FULL_SCREEN);
  await handOver(user, mirror, DASHBOARD_LEAVING);
  assertSame(user, reference);
  const s = user.state();
  assert.equal(s.buffer, 'alternate');
  assert.equal(s.hidden, true);
  assert.equal(s.modes.applicationCursorKeysMode, true);
  assert.equal(s.modes.bracketedPasteMode, true);
  assert.equal(s.modes.mouseTrackingMode, 'vt200');
  // The scroll region is back: a reverse index at the region's top scrolls rows 2-9 only.
  const scroll = '\x1b[2;1H\x1bMnew top\x1b[4;6H';
  await user.write(scroll);
  await reference.write(scroll);
  assertSame(user, reference);
  assert.match(user.rows()[9] ?? '', /notes\.txt/);
  // And when the program ends, the shell's screen is underneath with the cursor where it was.
  const leave = '\x1b[r\x1b[?25h\x1b[?1049l$ ';
  await user.write(leave);
  await reference.write(leave);
  assertSame(user, reference);
  assert.equal(user.rows()[0], 'shell$ vim notes.txt');
  mirror.dispose();
});

test('a resize reaches the mirror: the repaint is of the new size', async () => {
  const { mirror, user, reference } = await pair(
    80,
    24,
    Array.from({ length: 30 }, (_, i) => `line ${i} ${'='.repeat(50)}`).join('\r\n'),
  );
  mirror.resize(40, 8);
  user.term.resize(40, 8);
  reference.term.resize(40, 8);
  await handOver(user, mirror, DASHBOARD_STAYING);
  assertSame(user, reference);
  assert.equal(user.term.cols, 40);
  mirror.dispose();
});

test('a long scrollback repaints only the screen, and lastLines reads its end', async () => {
  const lines = Array.from({ length: 5000 }, (_, i) => `row ${i}`);
  const { mirror, user, reference } = await pair(30, 6, lines.join('\r\n'));
  const picture = await mirror.repaint();
  assert.doesNotMatch(picture, /row 4993\b/);
  assert.match(picture, /row 4994/);
  await user.write(DASHBOARD_STAYING + picture);
  assertSame(user, reference);
  assert.deepEqual(mirror.lastLines(3), ['row 4997', 'row 4998', 'row 4999']);
  mirror.dispose();
});

test('repaint waits for output still being parsed', async () => {
  const mirror = new ScreenMirror(20, 5);
  // Large enough that xterm parses it over several turns of the event loop.
  mirror.write('x'.repeat(2_000_000));
  mirror.write('\r\nthe end');
  const picture = await mirror.repaint();
  assert.match(picture, /the end/);
  assert.deepEqual(mirror.lastLines(1), ['the end']);
  mirror.dispose();
});

test('bytes split inside a UTF-8 character are joined, as a pty delivers them', async () => {
  const mirror = new ScreenMirror(20, 5);
  const bytes = Buffer.from('naïve 漢字');
  for (const b of bytes) mirror.write(Buffer.from([b]));
  await mirror.repaint();
  assert.deepEqual(mirror.lastLines(1), ['naïve 漢字']);
  mirror.dispose();
});

test('lastLines: non-empty lines only, wrapped lines joined, no control left, the alternate screen when active', async () => {
  const mirror = new ScreenMirror(10, 6);
  mirror.write('first\r\n\r\n   \r\n0123456789abcdef\r\nbell\x07 \x1b]0;title\x07done');
  await mirror.repaint();
  assert.deepEqual(mirror.lastLines(10), ['first', '0123456789abcdef', 'bell done']);
  assert.deepEqual(mirror.lastLines(1), ['bell done']);
  mirror.write('\x1b[?1049h\x1b[H\x1b[2Jfull\x1b[3;1Hscreen');
  await mirror.repaint();
  assert.deepEqual(mirror.lastLines(10), ['full', 'screen']);
  mirror.dispose();
});
