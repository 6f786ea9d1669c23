/** The agent's token: VAULT_TOKEN for one process, else the file `init` stored. */
import { VaultError } from '../core/errors.js';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { readFileSync } = process.getBuiltinModule('node:fs');
export function loadToken(ctx) {
    const fromEnv = ctx.env.VAULT_TOKEN;
    if (fromEnv !== undefined && fromEnv !== '')
        return fromEnv.trim();
    try {
        return readFileSync(ctx.paths.tokenFile, 'utf8').trim();
    }
    catch {
        throw new VaultError('VLT-2040', 'No token: run vault-cli init with the token from the owner.');
    }
}
