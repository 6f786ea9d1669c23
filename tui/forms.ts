/**
 * The dashboard's forms as data (state.ts holds the open one): their fields,
 * the host call a completed form asks for, checked as the CLI checks the same
 * input, and what the owner is told when it is done.
 */
import { checkEntryName, checkFieldName, checkSimpleName } from '../src/core/names.js';
import { DEFAULT_LIMITS } from '../src/core/policy.js';
import type { Limits } from './api.js';

export type FieldKind = 'text' | 'secret' | 'number' | 'choice' | 'list';

export interface FormField {
  readonly id: string;
  readonly label: string;
  readonly kind: FieldKind;
  readonly value: string;
  /** For a choice field: what it can be. */
  readonly choices?: readonly string[];
}

export type FormKind = 'addEntry' | 'rotate' | 'addAgent' | 'scope' | 'limits';

export interface Form {
  readonly kind: FormKind;
  readonly title: string;
  /** The agent a scope or limits form is about. */
  readonly subject: string | null;
  readonly fields: readonly FormField[];
  readonly focus: number;
  /** Submitted, waiting for the vault. */
  readonly busy: boolean;
}

export type ApiCall =
  | {
      readonly op: 'setField';
      readonly entry: string;
      readonly field: string;
      readonly value: string;
    }
  | { readonly op: 'removeEntry'; readonly entry: string }
  | {
      readonly op: 'addAgent';
      readonly name: string;
      readonly kind: 'ai' | 'script';
      readonly scope: readonly string[];
      readonly limits: Limits;
    }
  | { readonly op: 'revokeAgent'; readonly name: string }
  | {
      readonly op: 'changeScope';
      readonly name: string;
      readonly add: readonly string[];
      readonly rm: readonly string[];
    }
  | {
      readonly op: 'changeLimits';
      readonly name: string;
      readonly perMinute?: number;
      readonly perHour?: number;
    };

function values(f: Form): Readonly<Record<string, string>> {
  return Object.fromEntries(f.fields.map((x) => [x.id, x.value]));
}

function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** Input a form cannot send: its message is shown as the owner typed it wrong. */
export class Invalid extends Error {}

function count(text: string | undefined, what: string, optional: boolean): number | undefined {
  if ((text ?? '') === '' && optional) return undefined;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text ?? '') || !Number.isSafeInteger(n) || n < 1) {
    throw new Invalid(`The ${what} limit is a whole number from 1.`);
  }
  return n;
}

/** The call a completed form asks for; throws VaultError or Invalid when the input is not valid. */
export function callOf(f: Form): ApiCall {
  const v = values(f);
  switch (f.kind) {
    case 'addEntry':
    case 'rotate': {
      const entry = checkEntryName(v.entry ?? '');
      const fieldName = checkFieldName(v.field ?? '');
      const value = v.value ?? '';
      if (value === '') throw new Invalid('Type the value first.');
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
      if (add.length + rm.length === 0) throw new Invalid('Name an entry to add or remove.');
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
export function done(call: ApiCall, version: number | undefined): string {
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
