/**
 * The dashboard's forms as data (state.ts holds the open one): their fields,
 * the host call a completed form asks for, checked as the CLI checks the same
 * input, and what the owner is told when it is done.
 */
import { checkEntryName, checkFieldName, checkSimpleName } from '../src/core/names.js';
import { DEFAULT_LIMITS } from '../src/core/policy.js';
function values(f) {
    return Object.fromEntries(f.fields.map((x) => [x.id, x.value]));
}
function list(text) {
    return (text ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
}
/** Input a form cannot send: its message is shown as the owner typed it wrong. */
export class Invalid extends Error {
}
function count(text, what, optional) {
    if ((text ?? '') === '' && optional)
        return undefined;
    const n = Number(text);
    if (!/^[0-9]+$/.test(text ?? '') || !Number.isSafeInteger(n) || n < 1) {
        throw new Invalid(`The ${what} limit is a whole number from 1.`);
    }
    return n;
}
/** The call a completed form asks for; throws VaultError or Invalid when the input is not valid. */
export function callOf(f) {
    const v = values(f);
    switch (f.kind) {
        case 'addEntry':
        case 'rotate': {
            const entry = checkEntryName(v.entry ?? '');
            const fieldName = checkFieldName(v.field ?? '');
            const value = v.value ?? '';
            if (value === '')
                throw new Invalid('Type the value first.');
            return { op: 'setField', entry, field: fieldName, value };
        }
        case 'addAgent': {
            const name = checkSimpleName('agent', v.name ?? '');
            const kind = v.kind === 'script' ? 'script' : 'ai';
            const perMinute = count(v.perMinute, 'per-minute', false) ?? DEFAULT_LIMITS.perMinute;
            const perHour = count(v.perHour, 'per-hour', false) ?? DEFAULT_LIMITS.perHour;
            return { op: 'addAgent', name, kind, scope: list(v.scope), limits: { perMinute, perHour } };
        }
        case 'scope': {
            const add = list(v.add);
            const rm = list(v.rm);
            if (add.length + rm.length === 0)
                throw new Invalid('Name an entry to add or remove.');
            return { op: 'changeScope', name: f.subject ?? '', add, rm };
        }
        case 'limits': {
            const perMinute = count(v.perMinute, 'per-minute', true);
            const perHour = count(v.perHour, 'per-hour', true);
            return {
                op: 'changeLimits',
                name: f.subject ?? '',
                ...(perMinute === undefined ? {} : { perMinute }),
                ...(perHour === undefined ? {} : { perHour }),
            };
        }
    }
}
/** What the owner is told once the host did `call`. */
export function done(call, version) {
    switch (call.op) {
        case 'setField':
            return `Set ${call.entry} field ${call.field}${version === undefined ? '' : ` (version ${version})`}; agents see it on their next read.`;
        case 'removeEntry':
            return `Removed ${call.entry}.`;
        case 'addAgent':
            return `Added agent ${call.name}.`;
        case 'revokeAgent':
            return `Revoked agent ${call.name}.`;
        case 'changeScope':
            return `Changed the scope of ${call.name}.`;
        case 'changeLimits':
            return `Changed the limits of ${call.name}.`;
    }
}
