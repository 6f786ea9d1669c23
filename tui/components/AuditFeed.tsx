/**
 * The latest audit records: TIME ACTION ENTRY ACTOR OUTCOME. A record holds
 * metadata only, never a value. Violations and lockdowns stand out by colour
 * and by a marker in the action column.
 */
import { Box, Text } from 'ink';
import type { AuditView } from '../api.js';
import { alarmOf, cell, feedTime, plain, recordTarget } from '../format.js';

export interface AuditFeedProps {
  readonly records: readonly AuditView[];
  /** Rows for records, header excluded. */
  readonly rows: number;
  /** Records scrolled back from the latest. */
  readonly scroll?: number;
  /** False until the first data arrives. */
  readonly loaded?: boolean;
}

const W = { time: 14, action: 14, entry: 20, actor: 14 };

export function AuditFeed({ records, rows, scroll = 0, loaded = true }: AuditFeedProps) {
  const end = Math.max(0, records.length - scroll);
  const shown = records.slice(Math.max(0, end - Math.max(1, rows)), end);
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text bold>
        {cell('TIME', W.time)} {cell('ACTION', W.action)} {cell('ENTRY', W.entry)}{' '}
        {cell('ACTOR', W.actor)} OUTCOME
      </Text>
      {records.length === 0 ? (
        <Text dimColor>{loaded ? 'no audit records yet' : 'loading…'}</Text>
      ) : null}
      {shown.map((r) => {
        const alarm = alarmOf(r);
        const marker = alarm === 'locked' ? '■ ' : alarm === 'limited' ? '▲ ' : '';
        const color = alarm === 'locked' ? 'red' : alarm === 'limited' ? 'yellow' : undefined;
        return (
          <Text key={r.seq} color={color} bold={alarm !== null}>
            {cell(feedTime(r.at), W.time)} {cell(marker + r.action, W.action)}{' '}
            {cell(recordTarget(r), W.entry)} {cell(plain(r.actor), W.actor)}{' '}
            {r.outcome === 'ok' ? 'ok' : plain(r.outcome)}
          </Text>
        );
      })}
    </Box>
  );
}
