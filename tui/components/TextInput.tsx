/**
 * One labelled input line. The typing itself is the reducer's; this only
 * shows it. A secret field shows a fixed mask and its length, never a
 * character of what was typed.
 */
import { Text } from 'ink';
import type { FormField } from '../state.js';
import { cell, plain } from '../format.js';

export interface TextInputProps {
  readonly field: FormField;
  readonly focused: boolean;
}

/** What a field shows of its value. */
export function shownValue(field: FormField): string {
  if (field.kind === 'secret') {
    const n = Array.from(field.value).length;
    return n === 0 ? '(hidden, nothing typed)' : `(hidden, ${n} ${n === 1 ? 'char' : 'chars'})`;
  }
  if (field.kind === 'choice')
    return (field.choices ?? []).map((c) => (c === field.value ? `[${c}]` : ` ${c} `)).join('');
  return plain(field.value);
}

export function TextInput({ field, focused }: TextInputProps) {
  return (
    <Text>
      <Text bold={focused}>
        {focused ? '> ' : '  '}
        {cell(field.label, 34)}
      </Text>{' '}
      <Text color={field.kind === 'secret' ? 'gray' : undefined}>{shownValue(field)}</Text>
      {focused && field.kind !== 'secret' && field.kind !== 'choice' ? (
        <Text inverse> </Text>
      ) : null}
    </Text>
  );
}
