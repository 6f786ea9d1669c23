/** The top two lines: vault and time; the views (the current one marked) and the counts. */
import { Box, Text } from 'ink';
import { formatTime } from '../../src/core/audit.js';
import type { AgentSummary, EntrySummary } from '../api.js';
import { cell, plain } from '../format.js';
import { VIEWS, type View } from '../keys.js';

export interface HeaderProps {
  readonly vault: string;
  readonly now: number;
  readonly view: View;
  readonly agents: readonly AgentSummary[];
  readonly entries: readonly EntrySummary[];
  /** False until the first data: counts of an unread vault would read as an empty one. */
  readonly loaded?: boolean;
}

const TITLES: Readonly<Record<View, string>> = {
  agents: 'Agents',
  entries: 'Entries',
  audit: 'Audit',
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function Header({ vault, now, view, agents, entries, loaded = true }: HeaderProps) {
  const locked = agents.filter((a) => a.state === 'locked').length;
  const live = agents.filter((a) => a.state !== 'revoked');
  // Every live agent's recent violations, a locked one's too: "0 violations"
  // beside a lock that two of them caused read as a contradiction (issue 38).
  const violation = live.reduce((n, a) => n + a.violations.length, 0);
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Box justifyContent="space-between">
        <Text bold>{cell(`vault-cli · ${plain(vault)}`, 58).trimEnd()}</Text>
        <Text>{formatTime(now)}</Text>
      </Box>
      <Box justifyContent="space-between">
        <Box>
          {VIEWS.map((v) => (
            <Text key={v} inverse={v === view} bold={v === view}>
              {v === view ? `[${TITLES[v]}]` : ` ${TITLES[v]} `}
            </Text>
          ))}
        </Box>
        {loaded ? (
          <Text>
            {plural(live.length, 'agent', 'agents')} ·{' '}
            <Text color={locked > 0 ? 'red' : undefined}>{locked} locked</Text> ·{' '}
            <Text color={violation > 0 ? 'yellow' : undefined}>
              {plural(violation, 'violation', 'violations')}
            </Text>{' '}
            · {plural(entries.length, 'entry', 'entries')}
          </Text>
        ) : (
          <Text dimColor>loading…</Text>
        )}
      </Box>
    </Box>
  );
}
