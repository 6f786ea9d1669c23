// Where `run` holds what an agent changed in its state (shell/held.ts).
import { homedir } from 'node:os';
import { join } from 'node:path';
/**
 * The held directory: under the vault's directory, which the sandbox hides;
 * with the hardened host (its directory is not the owner's to write), under
 * the owner's data directory, which `run` hides too (src/cli/run/sandbox.ts).
 */
export function heldRoot(ctx) {
    if (ctx.paths.systemHost === null)
        return join(ctx.paths.vaultDir, 'held');
    const data = ctx.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share');
    return join(data, 'vault-cli-held');
}
