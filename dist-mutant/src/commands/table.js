/**
 * Every command of vault-cli as plain data, in the order help lists them. The
 * argv parser, `--help` and the shell completions are all produced from this
 * one table, so they cannot drift. Each group of commands is a file of its own
 * beside this one; the shapes and shared flags are in types.ts.
 */
import { AGENT_SIDE } from './agent-side.js';
import { AGENTS } from './agents.js';
import { AUDIT } from './audit.js';
import { ENTRIES } from './entries.js';
import { LOCAL } from './local.js';
import { RUN } from './run.js';
import { VAULT } from './vault.js';
export * from './types.js';
export const COMMANDS = [
    ...AGENT_SIDE,
    ...RUN,
    ...VAULT,
    ...ENTRIES,
    ...AGENTS,
    ...AUDIT,
    ...LOCAL,
];
/** Groups of commands, for `vault-cli --help` and for completing the first word. */
export function topLevelWords(commands = COMMANDS) {
    return [...new Set(commands.map((c) => c.path[0] ?? ''))];
}
