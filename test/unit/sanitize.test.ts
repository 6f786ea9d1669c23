// Agent output shown inside the dashboard: no control sequence survives,
// printable text does, and nothing the agent writes can make it throw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { sanitizeTerminalText } from '../../src/terminal/sanitize.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);

/** ESC, C0 other than \n and \t, DEL, and C1 (U+0080-U+009F). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/u;

/** Pieces a hostile agent might assemble sequences from, mixed with any text at all. */
const fragments = fc.constantFrom(
  '\x1b',
  '[',
  ']',
  'P',
  '_',
  '^',
  'X',
  '\\',
  '?',
  ';',
  '1049',
  '52',
  'h',
  'H',
  'J',
  '(',
  '#',
  '\x07',
  '\x18',
  '\r',
  '\b',
  '\n',
  '\t',
  '\u009b',
  '\u009d',
  '\u009c',
  '\u0090',
  '\x7f',
  'é',
  '漢',
  '🙂',
);
const terminalish = fc
  .array(fc.oneof(fragments, fc.string({ unit: 'binary', maxLength: 8 })), { maxLength: 40 })
  .map((parts) => parts.join(''));
const anyText = fc.oneof(terminalish, fc.string({ unit: 'binary' }));
const printable = fc
  .string({ unit: 'binary' })
  .map((s) => s.replace(new RegExp(CONTROL.source, 'gu'), ''));

test('the output never holds ESC, a C0 control other than newline and tab, or a C1 control', () => {
  fc.assert(
    fc.property(anyText, (s) => {
      assert.doesNotMatch(sanitizeTerminalText(s), CONTROL);
    }),
    { numRuns: RUNS * 5 },
  );
});

test('sanitising is idempotent', () => {
  fc.assert(
    fc.property(anyText, (s) => {
      const once = sanitizeTerminalText(s);
      assert.equal(sanitizeTerminalText(once), once);
    }),
    { numRuns: RUNS * 5 },
  );
});

test('printable text, non-ASCII, newlines and tabs included, passes unchanged', () => {
  fc.assert(
    fc.property(printable, (s) => {
      assert.equal(sanitizeTerminalText(s), s);
    }),
    { numRuns: RUNS * 5 },
  );
  assert.equal(sanitizeTerminalText('naïve 漢字 🙂\tcol\nnext'), 'naïve 漢字 🙂\tcol\nnext');
});

test('text around a sequence is kept: the sequence goes, its neighbours stay', () => {
  fc.assert(
    fc.property(
      printable,
      fc.constantFrom('\x1b[2J', '\x1b]0;t\x07', '\u009b1;2H', '\x1bPq#0\x1b\\', '\x1b7', '\r'),
      printable,
      (a, seq, b) => {
        // `b` must not start with what would extend the sequence (a CSI parameter, an ST).
        fc.pre(!/^[\x20-\x3f\\]/.test(b));
        assert.equal(sanitizeTerminalText(a + seq + b), a + b);
      },
    ),
    { numRuns: RUNS },
  );
});

test('arbitrary strings, lone surrogates included, never throw', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary-ascii' }), (a, b) => {
      sanitizeTerminalText(a + '\ud800' + b + '\udfff');
    }),
    { numRuns: RUNS },
  );
});

test('a hostile set of sequences is neutralised', () => {
  const cases: [string, string][] = [
    // cursor moves, clear screen, scrolling
    ['a\x1b[10;20Hb', 'ab'],
    ['a\x1b[5Ab\x1b[3Cc', 'abc'],
    ['\x1b[2J\x1b[Hclean', 'clean'],
    ['\x1b[1;5rregion\x1bMup', 'regionup'],
    // OSC 52 clipboard write, BEL- and ST-terminated
    ['x\x1b]52;c;cm0gLXJmIH4=\x07y', 'xy'],
    ['x\x1b]52;p;cm0gLXJmIH4=\x1b\\y', 'xy'],
    // window title, and an OSC 8 hyperlink keeps its text only
    ['\x1b]0;pwned\x07title', 'title'],
    ['\x1b]2;pwned\x1b\\title', 'title'],
    ['\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\', 'link'],
    // DECSET: alternate screen, hidden cursor, mouse capture, bracketed paste
    ['\x1b[?1049h\x1b[?25l\x1b[?1000h\x1b[?2004hin', 'in'],
    // 8-bit CSI and OSC (as UTF-8 code points), and an 8-bit ST
    ['\u009b2J\u009b?1049hz', 'z'],
    ['\u009d52;c;Zm9v\u009cafter', 'after'],
    // DCS (DECRQSS, sixel), APC, PM, SOS
    ['\x1bP$qm\x1b\\d', 'd'],
    ['\x1bPq#0;2;0;0;0#0~~\x1b\\s', 's'],
    ['\x1b_Gf=100;AAAA\x1b\\k', 'k'],
    ['\x1b^private\x1b\\p', 'p'],
    ['\x1bXsos\x1b\\q', 'q'],
    // single-character and nF escapes: save/restore cursor, full reset, charsets, DECALN
    ['\x1b7\x1b8\x1bc\x1b(0\x1b)B\x1b#8\x1b=\x1b>ok', 'ok'],
    // C0: carriage return overprinting, backspace, bell, form feed, vertical tab, DEL
    ['safe\rEVIL', 'safeEVIL'],
    ['ab\b\bXY', 'abXY'],
    ['ring\x07\x0c\x0b\x7f', 'ring'],
    // device status and terminal id queries, whose replies would be typed into the agent
    ['\x1b[6n\x1b[c\x1b[>c\x1b[18t', ''],
    // malformed and unterminated: the open sequence swallows the rest, as a terminal would
    ['keep\x1b]0;never closed', 'keep'],
    ['keep\x1b[12', 'keep'],
    ['keep\x1b', 'keep'],
    ['\x1b[1\x1b[2Jx', 'x'],
    // a control inside a CSI is executed and the CSI goes on (VT500): `x` is its final
    ['\x1b[1;2\nx', '\n'],
  ];
  for (const [input, want] of cases)
    assert.equal(sanitizeTerminalText(input), want, JSON.stringify(input));
});
