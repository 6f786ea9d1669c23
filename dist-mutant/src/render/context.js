const LF = 0x0a;
const DQ = 0x22;
const SQ = 0x27;
const BT = 0x60;
const BS = 0x5c;
const HASH = 0x23;
const isSpace = (b) => b === 0x20 || b === 0x09;
class RawTracker {
    feed() { }
    context() {
        return 'raw';
    }
    atom() { }
}
class JsonTracker {
    s = 0; // outside, in string, after a backslash in string
    feed(text) {
        let s = this.s;
        for (let i = 0; i < text.length; i++) {
            const b = text[i];
            if (s === 0) {
                if (b === DQ)
                    s = 1;
            }
            else if (s === 1) {
                if (b === BS)
                    s = 2;
                else if (b === DQ)
                    s = 0;
            }
            else
                s = 1;
        }
        this.s = s;
    }
    context() {
        return this.s === 0 ? 'json.value' : 'json.string';
    }
    atom() { }
}
var Y;
(function (Y) {
    Y[Y["Plain"] = 0] = "Plain";
    Y[Y["Double"] = 1] = "Double";
    Y[Y["DoubleEsc"] = 2] = "DoubleEsc";
    Y[Y["Single"] = 3] = "Single";
    Y[Y["SingleQuote"] = 4] = "SingleQuote";
    Y[Y["Comment"] = 5] = "Comment";
})(Y || (Y = {}));
class YamlTracker {
    s = Y.Plain;
    /** Last non-blank byte on the line in plain state; LF at a line start. */
    lastSig = LF;
    prev = LF;
    atScalarStart() {
        const l = this.lastSig;
        if (l === LF || l === 0x5b || l === 0x7b || l === 0x2c)
            return true; // line start [ { ,
        return (l === 0x3a || l === 0x2d || l === 0x3f) && isSpace(this.prev); // `: ` `- ` `? `
    }
    feed(text) {
        for (let i = 0; i < text.length; i++) {
            const b = text[i];
            switch (this.s) {
                case Y.Double:
                    if (b === BS)
                        this.s = Y.DoubleEsc;
                    else if (b === DQ)
                        this.closed(b);
                    break;
                case Y.DoubleEsc:
                    this.s = Y.Double;
                    break;
                case Y.Single:
                    if (b === SQ)
                        this.s = Y.SingleQuote;
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
    closed(quote) {
        this.s = Y.Plain;
        this.lastSig = this.prev = quote;
    }
    plain(b) {
        if (b === LF)
            this.lastSig = LF;
        else if (b === HASH && (isSpace(this.prev) || this.prev === LF))
            this.s = Y.Comment;
        else if ((b === DQ || b === SQ) && this.atScalarStart()) {
            this.s = b === DQ ? Y.Double : Y.Single;
        }
        else if (!isSpace(b))
            this.lastSig = b;
        this.prev = b;
    }
    context() {
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
    atom() {
        if (this.s === Y.SingleQuote)
            this.closed(SQ);
        if (this.s === Y.Plain)
            this.lastSig = this.prev = 0x78; // as if a letter
    }
}
var T;
(function (T) {
    T[T["Plain"] = 0] = "Plain";
    T[T["OpenDouble"] = 1] = "OpenDouble";
    T[T["Basic"] = 2] = "Basic";
    T[T["BasicEsc"] = 3] = "BasicEsc";
    T[T["MlBasic"] = 4] = "MlBasic";
    T[T["MlBasicEsc"] = 5] = "MlBasicEsc";
    T[T["OpenSingle"] = 6] = "OpenSingle";
    T[T["Literal"] = 7] = "Literal";
    T[T["MlLiteral"] = 8] = "MlLiteral";
    T[T["Comment"] = 9] = "Comment";
})(T || (T = {}));
class TomlTracker {
    s = T.Plain;
    /** Quotes in a row: at an opening (1-3) or inside a multi-line string (closing at 3). */
    run = 0;
    feed(text) {
        for (let i = 0; i < text.length; i++)
            this.step(text[i]);
    }
    step(b) {
        switch (this.s) {
            case T.Plain:
                if (b === HASH)
                    this.s = T.Comment;
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
                if (b === BS)
                    this.s = T.BasicEsc;
                else if (b === DQ || b === LF)
                    this.s = T.Plain;
                return;
            case T.BasicEsc:
                this.s = T.Basic;
                return;
            case T.MlBasic:
                if (b === BS)
                    this.s = T.MlBasicEsc;
                else if (b === DQ) {
                    if (++this.run === 3)
                        this.s = T.Plain;
                    return;
                }
                this.run = 0;
                return;
            case T.MlBasicEsc:
                this.s = T.MlBasic;
                this.run = 0;
                return;
            case T.Literal:
                if (b === SQ || b === LF)
                    this.s = T.Plain;
                return;
            case T.MlLiteral:
                if (b === SQ) {
                    if (++this.run === 3)
                        this.s = T.Plain;
                    return;
                }
                this.run = 0;
                return;
            case T.Comment:
                if (b === LF)
                    this.s = T.Plain;
                return;
        }
    }
    context() {
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
    atom() {
        if (this.s === T.OpenDouble || this.s === T.OpenSingle) {
            this.s = this.run === 2 ? T.Plain : this.s === T.OpenDouble ? T.Basic : T.Literal;
        }
        this.run = 0;
    }
}
var E;
(function (E) {
    E[E["Key"] = 0] = "Key";
    E[E["Value0"] = 1] = "Value0";
    E[E["Bare"] = 2] = "Bare";
    E[E["Single"] = 3] = "Single";
    E[E["SingleEsc"] = 4] = "SingleEsc";
    E[E["Double"] = 5] = "Double";
    E[E["DoubleEsc"] = 6] = "DoubleEsc";
    E[E["Backtick"] = 7] = "Backtick";
    E[E["BacktickEsc"] = 8] = "BacktickEsc";
    E[E["After"] = 9] = "After";
    E[E["Comment"] = 10] = "Comment";
})(E || (E = {}));
/** .env as the `dotenv` package reads it: KEY=value, '…', "…", `…`, # comments. */
class EnvTracker {
    s = E.Key;
    keyStarted = false;
    feed(text) {
        for (let i = 0; i < text.length; i++) {
            const b = text[i];
            switch (this.s) {
                case E.Key:
                    if (b === LF)
                        this.keyStarted = false;
                    else if (b === HASH && !this.keyStarted)
                        this.s = E.Comment;
                    else if (b === 0x3d)
                        this.s = E.Value0;
                    else if (!isSpace(b))
                        this.keyStarted = true;
                    break;
                case E.Value0:
                    if (b === LF)
                        this.newLine();
                    else if (b === SQ)
                        this.s = E.Single;
                    else if (b === DQ)
                        this.s = E.Double;
                    else if (b === BT)
                        this.s = E.Backtick;
                    else if (b === HASH)
                        this.s = E.Comment;
                    else if (!isSpace(b))
                        this.s = E.Bare;
                    break;
                case E.Bare:
                case E.After:
                    if (b === LF)
                        this.newLine();
                    else if (b === HASH)
                        this.s = E.Comment;
                    break;
                case E.Single:
                case E.Double:
                case E.Backtick: {
                    const q = this.s === E.Single ? SQ : this.s === E.Double ? DQ : BT;
                    if (b === BS)
                        this.s++; // the matching *Esc state
                    else if (b === q)
                        this.s = E.After;
                    break;
                }
                case E.SingleEsc:
                case E.DoubleEsc:
                case E.BacktickEsc:
                    this.s--;
                    break;
                case E.Comment:
                    if (b === LF)
                        this.newLine();
                    break;
            }
        }
    }
    newLine() {
        this.s = E.Key;
        this.keyStarted = false;
    }
    context() {
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
    atom() {
        if (this.s === E.Value0)
            this.s = E.Bare;
        if (this.s === E.Key)
            this.keyStarted = true;
    }
}
export function tracker(format) {
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
