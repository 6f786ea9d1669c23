/**
 * Agent output made safe to show inside the dashboard (DESIGN §9, issue 7).
 *
 * An agent writes whatever bytes it likes; shown verbatim inside the dashboard
 * they could move the cursor over the dashboard's own lines, clear it, retitle
 * the window, or write the owner's clipboard (OSC 52). So every terminal
 * control is removed, not escaped: CSI, OSC, DCS/SOS/PM/APC strings and
 * single-character escapes with all their parameters, C1 controls in their
 * 8-bit form (U+0080-U+009F), and C0 controls other than newline and tab.
 * Printable text, non-ASCII included, passes unchanged.
 *
 * The output holds no ESC, C0 (but \n, \t) or C1 character at all, so no
 * sequence can be assembled from what is left: sanitising twice is sanitising
 * once. A sequence left open at the end of the text swallows the rest of it,
 * as a terminal would.
 */

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
/** The 8-bit forms of the introducers and of the string terminator. */
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;

type Kind = 'csi' | 'osc' | 'string';

/** What a 7-bit `ESC x` or an 8-bit C1 character opens, if anything but itself. */
function opens(c: number): Kind | null {
  switch (c) {
    case 0x5b: // [
    case C1_CSI:
      return 'csi';
    case 0x5d: // ]
    case C1_OSC:
      return 'osc';
    case 0x50: // P
    case 0x58: // X
    case 0x5e: // ^
    case 0x5f: // _
    case C1_DCS:
    case C1_SOS:
    case C1_PM:
    case C1_APC:
      return 'string';
    default:
      return null;
  }
}

const isC1 = (c: number) => c >= 0x80 && c <= 0x9f;
const isC0 = (c: number) => c < 0x20 || c === 0x7f;

/**
 * Index just past the control sequence of `kind` whose body starts at `i`.
 * CSI: parameter and intermediate bytes, then a final byte; any other
 * character ends it early (the malformed sequence is still dropped, and that
 * character is looked at afresh). OSC: up to BEL or ST. DCS, SOS, PM, APC: up
 * to ST. CAN and SUB cancel any of them, as in a terminal.
 */
function skipSequence(s: string, i: number, kind: Kind): number {
  if (kind === 'csi') {
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (c >= 0x40 && c <= 0x7e) return i + 1;
      if (c < 0x20 || c > 0x3f) return i;
      i++;
    }
    return i;
  }
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === CAN || c === SUB || c === C1_ST) return i + 1;
    if (kind === 'osc' && c === BEL) return i + 1;
    if (c === ESC) return s.charCodeAt(i + 1) === 0x5c ? i + 2 : i;
    i++;
  }
  return i;
}

/**
 * `s` with every terminal control sequence and control character removed but
 * newline and tab. Pure and total: never throws, whatever the input.
 */
export function sanitizeTerminalText(s: string): string {
  let out = '';
  let kept = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (!isC0(c) && !isC1(c)) {
      i++;
      continue;
    }
    if (c === 0x0a || c === 0x09) {
      i++;
      continue;
    }
    out += s.slice(kept, i);
    if (c === ESC) {
      i = skipEscape(s, i + 1);
    } else {
      const kind = isC1(c) ? opens(c) : null;
      i = kind === null ? i + 1 : skipSequence(s, i + 1, kind);
    }
    kept = i;
  }
  return out + s.slice(kept);
}

/** Index just past an escape whose ESC was at `i - 1`. */
function skipEscape(s: string, i: number): number {
  if (i >= s.length) return i;
  const c = s.charCodeAt(i);
  const kind = c < 0x80 ? opens(c) : null;
  if (kind !== null) return skipSequence(s, i + 1, kind);
  // nF escapes: intermediates (ESC ( B, ESC # 8, ESC SP F), then a final byte.
  let j = i;
  while (j < s.length && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++;
  if (j < s.length && s.charCodeAt(j) >= 0x30 && s.charCodeAt(j) <= 0x7e) return j + 1;
  // An intermediate run cut short, or ESC before a control or non-ASCII: drop what was seen.
  return j;
}
