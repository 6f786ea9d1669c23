/** The owner's passphrase for one command: VAULT_PASSPHRASE_FILE, else a prompt on the terminal. */
import type { CliContext } from './context.js';
import { passphrase } from './io.js';

export async function ownerPassphrase(ctx: CliContext, confirm = false): Promise<string> {
  const s = await passphrase(ctx.paths.passphraseFile, 'Vault passphrase', confirm);
  const text = s.expose().toString('utf8');
  s.wipe();
  return text;
}

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i] ?? 0) : c)).join('  '))
    .join('\n')
    .concat('\n');
}
