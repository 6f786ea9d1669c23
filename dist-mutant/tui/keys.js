/**
 * The dashboard's one key table: every binding, in every mode, with the help
 * text the footer and the help screen show. Input handling looks keys up here
 * and nowhere else, so what the footer says is what the keys do.
 */
export const VIEWS = ['agents', 'entries', 'audit'];
const BROWSE = VIEWS;
const EVERYWHERE = [...VIEWS, 'form', 'confirm', 'panel'];
/** Every binding. Order is the order of the footer and the help screen. */
export const KEY_TABLE = [
    { keys: ['up', 'k'], label: '↑↓/jk', action: 'up', help: 'move up', modes: BROWSE },
    {
        keys: ['down', 'j'],
        label: '↓/j',
        action: 'down',
        help: 'move down',
        modes: BROWSE,
        footer: false,
    },
    {
        keys: ['tab'],
        label: 'Tab',
        action: 'nextView',
        help: 'next view: agents, entries, audit',
        modes: BROWSE,
    },
    {
        keys: ['u', 'return'],
        label: 'u',
        action: 'unlock',
        help: 'unlock the selected locked agent with the hardware key',
        modes: ['agents'],
    },
    { keys: ['n'], label: 'n', action: 'addAgent', help: 'new agent', modes: ['agents'] },
    {
        keys: ['x'],
        label: 'x',
        action: 'revokeAgent',
        help: 'revoke the selected agent',
        modes: ['agents'],
    },
    {
        keys: ['s'],
        label: 's',
        action: 'scope',
        help: "change the selected agent's scope",
        modes: ['agents'],
    },
    {
        keys: ['l'],
        label: 'l',
        action: 'limits',
        help: "change the selected agent's limits",
        modes: ['agents'],
    },
    {
        keys: ['a'],
        label: 'a',
        action: 'addEntry',
        help: 'add an entry (or a field)',
        modes: ['entries'],
    },
    {
        keys: ['r'],
        label: 'r',
        action: 'rotate',
        help: 'rotate a field of the selected entry',
        modes: ['entries'],
    },
    {
        keys: ['d'],
        label: 'd',
        action: 'removeEntry',
        help: 'remove the selected entry',
        modes: ['entries'],
    },
    {
        keys: ['e'],
        label: 'e',
        action: 'enrolKey',
        help: 'enrol a hardware key or passkey (only an enrolled key lifts a lock; add a spare)',
        modes: BROWSE,
        // The footer is full at 100 columns; `?` lists it.
        footer: false,
    },
    { keys: ['?'], label: '?', action: 'help', help: 'all keys', modes: BROWSE },
    { keys: ['q', 'escape'], label: 'q/Esc', action: 'leave', help: 'leave', modes: BROWSE },
    {
        keys: ['ctrl+]', 'ctrl+c'],
        label: 'Ctrl-]',
        action: 'leave',
        help: 'leave from anywhere, forms too (back to the agent under run)',
        modes: EVERYWHERE,
        footer: false,
    },
    {
        keys: ['tab', 'down'],
        label: 'Tab/↓',
        action: 'nextField',
        help: 'next field',
        modes: ['form'],
    },
    {
        keys: ['shift+tab', 'up'],
        label: '↑',
        action: 'prevField',
        help: 'previous field',
        modes: ['form'],
    },
    {
        keys: ['left', 'right'],
        label: '←/→',
        action: 'cycle',
        help: 'change a choice',
        modes: ['form'],
    },
    {
        keys: ['return'],
        label: 'Enter',
        action: 'submit',
        help: 'next field; on the last, submit',
        modes: ['form'],
    },
    {
        keys: ['backspace', 'delete'],
        label: 'Bksp',
        action: 'erase',
        help: 'erase a character',
        modes: ['form'],
    },
    { keys: ['ctrl+u'], label: 'Ctrl-U', action: 'clearField', help: 'clear field', modes: ['form'] },
    { keys: ['escape'], label: 'Esc', action: 'cancel', help: 'cancel', modes: ['form', 'confirm'] },
    { keys: ['y'], label: 'y', action: 'confirm', help: 'yes, do it', modes: ['confirm'] },
    { keys: ['n'], label: 'n', action: 'cancel', help: 'no', modes: ['confirm'] },
    { keys: ['escape', 'q'], label: 'Esc', action: 'cancel', help: 'close', modes: ['panel'] },
];
/** The binding of a key in a mode, or null when the key does nothing there. */
export function bindingFor(name, mode) {
    return KEY_TABLE.find((b) => b.modes.includes(mode) && b.keys.includes(name)) ?? null;
}
/** The bindings shown for a mode, in table order. */
export function bindingsFor(mode) {
    return KEY_TABLE.filter((b) => b.modes.includes(mode));
}
/** The help footer of a mode: `label help` pairs, from the table. */
export function footerText(mode) {
    return bindingsFor(mode)
        .filter((b) => b.footer !== false)
        .map((b) => `${b.label} ${shortHelp(b)}`)
        .join('  ');
}
/** The footer's short form of a binding's help: its first words. */
export function shortHelp(b) {
    const short = {
        up: 'move',
        down: 'down',
        nextView: 'view',
        unlock: 'unlock',
        enrolKey: 'enrol key',
        addAgent: 'new agent',
        revokeAgent: 'revoke',
        scope: 'scope',
        limits: 'limits',
        addEntry: 'add',
        rotate: 'rotate',
        removeEntry: 'remove',
        help: 'help',
        leave: 'leave',
        nextField: 'next',
        prevField: 'prev',
        cycle: 'choose',
        submit: 'submit',
        erase: 'erase',
        clearField: 'clear',
        cancel: b.modes.includes('panel') ? 'close' : b.keys.includes('n') ? 'no' : 'cancel',
        confirm: 'yes',
    };
    return short[b.action] ?? b.help;
}
/** The canonical name of a key press as ink's useInput reports it. */
export function keyName(input, key) {
    const named = (name) => ({ name, text: '' });
    if (key.upArrow === true)
        return named('up');
    if (key.downArrow === true)
        return named('down');
    if (key.leftArrow === true)
        return named('left');
    if (key.rightArrow === true)
        return named('right');
    if (key.tab === true)
        return named(key.shift === true ? 'shift+tab' : 'tab');
    if (key.return === true)
        return named('return');
    if (key.escape === true)
        return named('escape');
    if (key.backspace === true)
        return named('backspace');
    if (key.delete === true)
        return named('delete');
    if (key.ctrl === true)
        return named(`ctrl+${input}`);
    if (key.meta === true)
        return named(`meta+${input}`);
    return { name: input, text: input };
}
/**
 * The key presses in one read of the terminal. Keys typed fast, or pasted,
 * arrive together (`value\r`), and ink hands them over as one string: each
 * control character in it is a key of its own (Enter, Tab, Ctrl-]...), the
 * text between them is typed text, so a form is filled and then submitted.
 */
export function keyPresses(input, key) {
    const one = keyName(input, key);
    const controls = /[\x00-\x1f\x7f]/;
    if (one.text.length <= 1 || !controls.test(one.text))
        return [one];
    const presses = [];
    for (const part of one.text.match(/[\x00-\x1f\x7f]|[^\x00-\x1f\x7f]+/g) ?? []) {
        presses.push(controls.test(part) ? { name: rawKeyName(part), text: '' } : { name: part, text: part });
    }
    return presses;
}
/**
 * The canonical name of a key given as the bytes a terminal sends (`\x1d` for
 * Ctrl-], `\x1b` for Esc, `q`), for hosts that name their own leave keys.
 */
export function rawKeyName(seq) {
    if (seq === '\x1b')
        return 'escape';
    if (seq === '\r')
        return 'return';
    if (seq === '\t')
        return 'tab';
    if (seq === '\x7f' || seq === '\b')
        return 'backspace';
    if (seq.length === 1) {
        const c = seq.charCodeAt(0);
        if (c >= 1 && c <= 26)
            return `ctrl+${String.fromCharCode(c + 96)}`;
        if (c >= 27 && c <= 31)
            return `ctrl+${String.fromCharCode(c + 64)}`;
    }
    return seq;
}
