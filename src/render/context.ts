/**
 * Where in a file a reference stands: inside a quoted string or not, and which
 * kind of string. One small byte-level state machine per format, fed the text
 * between references; a reference itself is an opaque atom (its bytes, which
 * may contain quotes, never move the state).
 *
 * These are deliberately small lexers, not parsers: they track strings and
 * comments, which is all escaping needs. Known limits, documented in
 * docs/render.md (Formats): YAML block scalars (`|`, `>`) and multi-line plain scalars are not
 * recognised; a quote inside one is taken for a string start. The same input
 * always gives the same contexts, which is what lets render check every
 * (value, context) pair before it writes a byte.
 */
import type { Format } from './format.js';

export type Context =
  | 'raw'
  | 'comment'
  /** JSON outside a string: the reference is a whole value. */
  | 'json.value'
  | 'json.string'
  /** YAML plain, at the start of a scalar (after `key: `, `- `, line start). */
  | 'yaml.value'
  /** YAML plain, inside a scalar that has already begun (`url: x://u:vault://…`). */
  | 'yaml.plain'
  | 'yaml.double'
  | 'yaml.single'
  | 'toml.value'
  /** Basic string, one-line or multi-line: the same escapes work in both. */
  | 'toml.basic'
  | 'toml.literal'
  | 'toml.ml-literal'
  /** .env right after `KEY=`: the reference is the whole value. */
  | 'env.value'
  | 'env.bare'
  | 'env.single'
  | 'env.double'
  | 'env.backtick';

export interface Tracker {
  /** Advances over text that is not a reference. */
  feed(text: Buffer): void;
  /** Where a reference at the current position stands. */
  context(): Context;
  /** A reference was inserted here: it counts as one value character. */
  atom(): void;
}

const LF = 0x0a;
const DQ = 0x22;
const SQ = 0x27;
const BT = 0x60;
const BS = 0x5c;
const HASH = 0x23;
const isSpace = (b: number) => b === 0x20 || b === 0x09;

class RawTracker implements Tracker {
  feed(): void {}
  context(): Context {
    return 'raw';
  }
  atom(): void {}
}

class JsonTracker implements Tracker {
  private s: 0 | 1 | 2 = 0; // outside, in string, after a backslash in string

  feed(text: Buffer): void {
    let s = this.s;
    for (let i = 0; i < text.length; i++) {
      const b = text[i] as number;
      if (s === 0) {
        if (b === DQ) s = 1;
      } else if (s === 1) {
        if (b === BS) s = 2;
        else if (b === DQ) s = 0;
      } else s = 1;
    }
    this.s = s;
  }
  context(): Context {
    return this.s === 0 ? 'json.value' : 'json.string';
  }
  atom(): void {}
}

const enum Y {
  Plain,
  Double,
  DoubleEsc,
  Single,
  SingleQuote,
  Comment,
}

class YamlTracker implements Tracker {
  private s = Y.Plain;
  /** Last non-blank byte on the line in plain state; LF at a line start. */
  private lastSig = LF;
  private prev = LF;

  private atScalarStart(): boolean {
    const l = this.lastSig;
    if (l === LF || l === 0x5b || l === 0x7b || l === 0x2c) return true; // line start [ { ,
    return (l === 0x3a || l === 0x2d || l === 0x3f) && isSpace(this.prev); // `: ` `- ` `? `
  }

  feed(text: Buffer): void {
    for (let i = 0; i < text.length; i++) {
      const b = text[i] as number;
      switch (this.s) {
        case Y.Double:
          if (b === BS) this.s = Y.DoubleEsc;
          else if (b === DQ) this.closed(b);
          break;
        case Y.DoubleEsc:
          this.s = Y.Double;
          break;
        case Y.Single:
          if (b === SQ) this.s = Y.SingleQuote;
          break;
        case Y.SingleQuote:
          if (b === SQ) {
            this.s = Y.Single; // '' is a quote inside the string
            break;
          }
          this.closed(SQ);
          this.plain(b);
          break;
        case Y.Comment:
          if (b === LF) {
            this.s = Y.Plain;
            this.lastSig = this.prev = LF;
          }
          break;
        default:
          this.plain(b);
      }
    }
  }

  private closed(quote: number): void {
    this.s = Y.Plain;
    this.lastSig = this.prev = quote;
  }

  private plain(b: number): void {
    if (b === LF) this.lastSig = LF;
    else if (b === HASH && (isSpace(this.prev) || this.prev === LF)) this.s = Y.Comment;
    else if ((b === DQ || b === SQ) && this.atScalarStart()) {
      this.s = b === DQ ? Y.Double : Y.Single;
    } else if (!isSpace(b)) this.lastSig = b;
    this.prev = b;
  }

  context(): Context {
    switch (this.s) {
      case Y.Double:
      case Y.DoubleEsc:
        return 'yaml.double';
      case Y.Single:
        return 'yaml.single';
      case Y.Comment:
        return 'comment';
      case Y.SingleQuote:
        return 'yaml.plain';
      default:
        return this.atScalarStart() ? 'yaml.value' : 'yaml.plain';
    }
  }

  atom(): void {
    if (this.s === Y.SingleQuote) this.closed(SQ);
    if (this.s === Y.Plain) this.lastSig = this.prev = 0x78; // as if a letter
  }
}

const enum T {
  Plain,
  OpenDouble,
  Basic,
  BasicEsc,
  MlBasic,
  MlBasicEsc,
  OpenSingle,
  Literal,
  MlLiteral,
  Comment,
}

class TomlTracker implements Tracker {
  private s = T.Plain;
  /** Quotes in a row: at an opening (1-3) or inside a multi-line string (closing at 3). */
  private run = 0;

  feed(text: Buffer): void {
    for (let i = 0; i < text.length; i++) this.step(text[i] as number);
  }

  private step(b: number): void {
    switch (this.s) {
      case T.Plain:
        if (b === HASH) this.s = T.Comment;
        else if (b === DQ || b === SQ) {
          this.s = b === DQ ? T.OpenDouble : T.OpenSingle;
          this.run = 1;
        }
        return;
      case T.OpenDouble:
      case T.OpenSingle: {
        const q = this.s === T.OpenDouble ? DQ : SQ;
        if (b === q) {
          this.run++;
          if (this.run === 3) {
            this.s = q === DQ ? T.MlBasic : T.MlLiteral;
            this.run = 0;
          }
          return;
        }
        // One quote opened a one-line string; two were an empty string.
        this.s = this.run === 2 ? T.Plain : q === DQ ? T.Basic : T.Literal;
        this.run = 0;
        return this.step(b);
      }
      case T.Basic:
        if (b === BS) this.s = T.BasicEsc;
        else if (b === DQ || b === LF) this.s = T.Plain;
        return;
      case T.BasicEsc:
        this.s = T.Basic;
        return;
      case T.MlBasic:
        if (b === BS) this.s = T.MlBasicEsc;
        else if (b === DQ) {
          if (++this.run === 3) this.s = T.Plain;
          return;
        }
        this.run = 0;
        return;
      case T.MlBasicEsc:
        this.s = T.MlBasic;
        this.run = 0;
        return;
      case T.Literal:
        if (b === SQ || b === LF) this.s = T.Plain;
        return;
      case T.MlLiteral:
        if (b === SQ) {
          if (++this.run === 3) this.s = T.Plain;
          return;
        }
        this.run = 0;
        return;
      case T.Comment:
        if (b === LF) this.s = T.Plain;
        return;
    }
  }

  context(): Context {
    switch (this.s) {
      case T.OpenDouble:
        return this.run === 1 ? 'toml.basic' : 'toml.value';
      case T.OpenSingle:
        return this.run === 1 ? 'toml.literal' : 'toml.value';
      case T.Basic:
      case T.BasicEsc:
      case T.MlBasic:
      case T.MlBasicEsc:
        return 'toml.basic';
      case T.Literal:
        return 'toml.literal';
      case T.MlLiteral:
        return 'toml.ml-literal';
      case T.Comment:
        return 'comment';
      default:
        return 'toml.value';
    }
  }

  atom(): void {
    if (this.s === T.OpenDouble || this.s === T.OpenSingle) {
      this.s = this.run === 2 ? T.Plain : this.s === T.OpenDouble ? T.Basic : T.Literal;
    }
    this.run = 0;
  }
}

const enum E {
  Key,
  Value0,
  Bare,
  Single,
  SingleEsc,
  Double,
  DoubleEsc,
  Backtick,
  BacktickEsc,
  After,
  Comment,
}

/** .env as the `dotenv` package reads it: KEY=value, '…', "…", `…`, # comments. */
class EnvTracker implements Tracker {
  private s = E.Key;
  private keyStarted = false;

  feed(text: Buffer): void {
    for (let i = 0; i < text.length; i++) {
      const b = text[i] as number;
      switch (this.s) {
        case E.Key:
          if (b === LF) this.keyStarted = false;
          else if (b === HASH && !this.keyStarted) this.s = E.Comment;
          else if (b === 0x3d) this.s = E.Value0;
          else if (!isSpace(b)) this.keyStarted = true;
          break;
        case E.Value0:
          if (b === LF) this.newLine();
          else if (b === SQ) this.s = E.Single;
          else if (b === DQ) this.s = E.Double;
          else if (b === BT) this.s = E.Backtick;
          else if (b === HASH) this.s = E.Comment;
          else if (!isSpace(b)) this.s = E.Bare;
          break;
        case E.Bare:
        case E.After:
          if (b === LF) this.newLine();
          else if (b === HASH) this.s = E.Comment;
          break;
        case E.Single:
        case E.Double:
        case E.Backtick: {
          const q = this.s === E.Single ? SQ : this.s === E.Double ? DQ : BT;
          if (b === BS)
            this.s++; // the matching *Esc state
          else if (b === q) this.s = E.After;
          break;
        }
        case E.SingleEsc:
        case E.DoubleEsc:
        case E.BacktickEsc:
          this.s--;
          break;
        case E.Comment:
          if (b === LF) this.newLine();
          break;
      }
    }
  }

  private newLine(): void {
    this.s = E.Key;
    this.keyStarted = false;
  }

  context(): Context {
    switch (this.s) {
      case E.Value0:
        return 'env.value';
      case E.Single:
      case E.SingleEsc:
        return 'env.single';
      case E.Double:
      case E.DoubleEsc:
        return 'env.double';
      case E.Backtick:
      case E.BacktickEsc:
        return 'env.backtick';
      case E.Comment:
        return 'comment';
      default:
        return 'env.bare';
    }
  }

  atom(): void {
    if (this.s === E.Value0) this.s = E.Bare;
    if (this.s === E.Key) this.keyStarted = true;
  }
}

export function tracker(format: Format): Tracker {
  switch (format) {
    case 'json':
      return new JsonTracker();
    case 'yaml':
      return new YamlTracker();
    case 'toml':
      return new TomlTracker();
    case 'env':
      return new EnvTracker();
    case 'raw':
      return new RawTracker();
  }
}
