/** The agent's token: VAULT_TOKEN for one process, else the file `init` stored. */
import { readFileSync } from 'node:fs';
import { VaultError } from '../core/errors.js';
import type { CliContext } from './context.js';

export function loadToken(ctx: CliContext): string {
  const fromEnv = ctx.env.VAULT_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv.trim();
  try {
    return readFileSync(ctx.paths.tokenFile, 'utf8').trim();
  } catch {
    throw new VaultError('VLT-2040', 'No token: run vault-cli init with the token from the owner.');
  }
}
