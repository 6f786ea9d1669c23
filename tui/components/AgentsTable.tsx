/**
 * Every agent: state (colour and a text marker, so it reads without colour),
 * distinct reads this minute and hour against its limits, scope size, and
 * the entries it may use only in requests its caveats allow (`agent caveats`).
 */
import { Box, Text } from 'ink';
import type { AgentSummary } from '../api.js';
import { cell, plain, stateLook, usageCell, windowOf } from '../format.js';
import { COLOR } from './tone.js';

export interface AgentsTableProps {
  readonly agents: readonly AgentSummary[];
  readonly selected: number;
  /** Rows for agents, header excluded. */
  readonly rows: number;
  readonly active: boolean;
  /** False until the first data arrives. */
  readonly loaded?: boolean;
}

const W = { name: 16, kind: 6, state: 20, minute: 7, hour: 7 };

export function AgentsTable({ agents, selected, rows, active, loaded = true }: AgentsTableProps) {
  const [start, end] = windowOf(agents.length, selected, Math.max(1, rows));
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text bold>
        {'  '}
        {cell('AGENT', W.name)} {cell('KIND', W.kind)} {cell('STATE', W.state)}{' '}
        {cell('MIN', W.minute)} {cell('HOUR', W.hour)} SCOPE
      </Text>
      {agents.length === 0 ? (
        <Text dimColor>{loaded ? ' no agents yet (n adds one)' : ' loading…'}</Text>
      ) : null}
      {agents.slice(start, end).map((a, i) => {
        const index = start + i;
        const look = stateLook(a.state);
        const minute = usageCell(a.usage.minute, a.limits.perMinute);
        const hour = usageCell(a.usage.hour, a.limits.perHour);
        const chosen = active && index === selected;
        return (
          <Text key={a.name} inverse={chosen}>
            {chosen ? '> ' : '  '}
            {cell(plain(a.name), W.name)} {cell(a.kind, W.kind)}{' '}
            <Text color={COLOR[look.tone]} bold={look.tone === 'alarm'}>
              {cell(`${look.marker} ${look.text}`, W.state)}
            </Text>{' '}
            <Text color={minute.full ? 'yellow' : undefined}>{cell(minute.text, W.minute)}</Text>{' '}
            <Text color={hour.full ? 'yellow' : undefined}>{cell(hour.text, W.hour)}</Text>{' '}
            {a.scope.length} {a.scope.length === 1 ? 'entry' : 'entries'}
            {caveatsNote(a)}
          </Text>
        );
      })}
    </Box>
  );
}

/** ` · caveats: GitHub (2 rules)`: the entries under request caveats (`agent show` lists the rules). */
function caveatsNote(a: AgentSummary): string {
  const all = a.caveats ?? [];
  if (all.length === 0) return '';
  const each = all.map(
    (c) => `${plain(c.entry)} (${c.rules.length} ${c.rules.length === 1 ? 'rule' : 'rules'})`,
  );
  return ` · caveats: ${each.join(', ')}`;
}
