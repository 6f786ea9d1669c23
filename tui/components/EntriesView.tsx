/**
 * Entries by name: fields with their versions and the hosts the proxy may send
 * them to. A field a transcript sweep found is marked `EXPOSED` until set anew.
 */
import { Box, Text } from 'ink';
import type { EntrySummary } from '../api.js';
import { cell, entryName, plain, windowOf } from '../format.js';

export interface EntriesViewProps {
  readonly entries: readonly EntrySummary[];
  readonly selected: number;
  readonly rows: number;
}

const W = { name: 24, fields: 32 };

export function EntriesView({ entries, selected, rows }: EntriesViewProps) {
  const [start, end] = windowOf(entries.length, selected, Math.max(1, rows));
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text bold>
        {'  '}
        {cell('ENTRY', W.name)} {cell('FIELDS (version)', W.fields)} HOSTS
      </Text>
      {entries.length === 0 ? <Text dimColor> no entries yet (a adds one)</Text> : null}
      {entries.slice(start, end).map((e, i) => {
        const chosen = start + i === selected;
        const fields = e.fields
          .map((f) => `${plain(f.name)} v${f.version}${f.exposed === undefined ? '' : ' EXPOSED'}`)
          .join(', ');
        const hosts = e.hosts.length === 0 ? 'any' : e.hosts.map(plain).join(', ');
        return (
          <Text key={e.name} inverse={chosen}>
            {chosen ? '> ' : '  '}
            {cell(entryName(e.name), W.name)} {cell(fields, W.fields)} {hosts}
          </Text>
        );
      })}
    </Box>
  );
}
