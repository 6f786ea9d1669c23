// The agent token files `run` knows of, and the long-lived tokens in them.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
/**
 * Every agent token file `run` can know of: the one of each config directory
 * (in use, and the defaults), and VAULT_TOKEN_FILE. Hidden from the sandbox,
 * and their tokens kept out of the child's environment: with a long-lived
 * token the agent would act beyond its session.
 */
export function tokenFiles(ctx) {
    const file = ctx.env.VAULT_TOKEN_FILE;
    return [
        ctx.paths.tokenFile,
        ...ctx.paths.defaultDirs.map((d) => join(d, 'token')),
        ...(file === undefined || file === '' ? [] : [resolve(file)]),
    ];
}
export function longLivedToken(path) {
    try {
        return [readFileSync(path, 'utf8').trim()];
    }
    catch {
        return [];
    }
}
