/** The notice line (errors as `vault-cli: VLT-XXXX: message`) and the key footer, from the key table. */
import { Box, Text } from 'ink';
import { footerText, type Mode } from '../keys.js';
import type { Notice } from '../state.js';
import { plain } from '../format.js';

export function NoticeLine({ notice }: { readonly notice: Notice | null }) {
  if (notice === null) return <Text> </Text>;
  return (
    <Text color={notice.kind === 'error' ? 'red' : 'cyan'} wrap="truncate-end">
      {plain(notice.text)}
    </Text>
  );
}

export function Footer({
  mode,
  tokenShown,
}: {
  readonly mode: Mode;
  readonly tokenShown: boolean;
}) {
  return (
    <Box flexShrink={0}>
      <Text dimColor>{tokenShown ? 'any key: close' : footerText(mode)}</Text>
    </Box>
  );
}
