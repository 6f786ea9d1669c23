/**
 * `vault-cli init`: the token from stdin (or a prompt without echo), checked
 * locally and by the host before it is stored 0600. Nothing is written when
 * the token is bad.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { parseToken } from '../../crypto/token.js';
import type { Command } from '../context.js';
import { secretInput } from '../io.js';

export const run: Command = async (ctx) => {
  const input = await secretInput(ctx.stdin, 'Token');
  const token = input.expose().toString('utf8').trim();
  input.wipe();
  if (parseToken(token) === null) {
    throw new VaultError('VLT-2040', 'Malformed token: check that it was copied whole.');
  }
  const { agent } = await ctx.call('whoami', { token });
  mkdirSync(dirname(ctx.paths.tokenFile), { recursive: true, mode: 0o700 });
  const tmp = `${ctx.paths.tokenFile}.${process.pid}.new`;
  writeFileSync(tmp, token + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(tmp, ctx.paths.tokenFile);
  ctx.stderr.write(`vault-cli: initialised as agent ${agent}\n`);
  return 0;
};
