/**
 * What opens over a view: a form, a confirmation, the unlock ceremony, a new
 * agent's token (shown once), the help screen.
 */
import { Box, Text } from 'ink';
import { KEY_TABLE } from '../keys.js';
import { plain } from '../format.js';
import type { Confirm, Form, UnlockPanel as Unlock } from '../state.js';
import { TextInput } from './TextInput.js';

export function FormPanel({ form }: { readonly form: Form }) {
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{plain(form.title)}</Text>
      {form.fields.map((f, i) => (
        <TextInput key={f.id} field={f} focused={i === form.focus} />
      ))}
      {form.busy ? <Text dimColor>working…</Text> : null}
    </Box>
  );
}

const QUESTIONS: Readonly<Record<Confirm['kind'], (target: string) => string>> = {
  removeEntry: (t) => `Remove entry ${t} and all its fields? Agents lose it at once.`,
  revokeAgent: (t) => `Revoke agent ${t}? Its token stops working at once.`,
};

export function ConfirmPanel({ confirm }: { readonly confirm: Confirm }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text bold>{QUESTIONS[confirm.kind](plain(confirm.target))}</Text>
      <Text>{confirm.busy ? 'working…' : 'y: yes   n/Esc: no'}</Text>
    </Box>
  );
}

const UNLOCK_STATUS: Readonly<Record<Unlock['status'], string>> = {
  starting: 'Starting the ceremony page…',
  waiting: 'Waiting for the hardware key: open the page and touch your key.',
  unlocked: 'Unlocked.',
  'not-locked': 'The agent was not locked.',
  enrolled: 'Enrolled.',
  failed: 'Not unlocked.',
};

export function UnlockPanel({ unlock }: { readonly unlock: Unlock }) {
  const color =
    unlock.status === 'failed'
      ? 'red'
      : unlock.status === 'unlocked' || unlock.status === 'enrolled'
        ? 'green'
        : undefined;
  const enrol = unlock.kind === 'enrol';
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="red" paddingX={1}>
      <Text bold>
        {enrol
          ? 'Enrol a hardware key (a USB key or a platform passkey): it lifts locks'
          : `Unlock agent ${plain(unlock.agent)} with the hardware key`}
      </Text>
      {unlock.url === null ? null : <Text>Open {unlock.url}</Text>}
      <Text color={color}>
        {enrol && unlock.status === 'failed'
          ? 'Not enrolled.'
          : enrol && unlock.status === 'enrolled'
            ? `Enrolled ${plain(unlock.agent)}; \`vault-cli key add\` enrols a spare.`
            : UNLOCK_STATUS[unlock.status]}
      </Text>
      {unlock.error === null ? null : <Text color="red">{unlock.error}</Text>}
      <Text dimColor>Esc: close this panel</Text>
    </Box>
  );
}

export function TokenPanel({ agent, token }: { readonly agent: string; readonly token: string }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="green" paddingX={1}>
      <Text bold>Token of agent {plain(agent)}: shown once, copy it now</Text>
      <Text>{token}</Text>
      <Text dimColor>Any key: close (the token is not shown again)</Text>
    </Box>
  );
}

/** Every binding of the views with its help, from the key table. */
export function HelpPanel() {
  const views = ['agents', 'entries', 'audit'] as const;
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>Keys (any key closes this)</Text>
      {KEY_TABLE.filter((b) => b.modes.some((m) => views.some((v) => v === m))).map((b) => {
        const where = views.filter((v) => b.modes.includes(v));
        return (
          <Text key={`${b.action}:${b.label}`}>
            {b.label.padEnd(7)} {b.help}
            {where.length < views.length ? <Text dimColor> ({where.join(', ')} view)</Text> : null}
          </Text>
        );
      })}
      <Text dimColor>Forms: Tab/↓ next field, ↑ back, Enter submits on the last, Esc cancels.</Text>
    </Box>
  );
}
