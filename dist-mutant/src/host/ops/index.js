import { agentOps } from './agents.js';
import { auditOps } from './audit.js';
import { entryOps } from './entries.js';
import { hostOps } from './host.js';
import { importOps } from './import.js';
import { keyOps } from './keys.js';
import { ownerOps } from './owner.js';
import { readOps } from './reads.js';
import { sessionOps } from './sessions.js';
import { sweepOps } from './sweep.js';
import { vaultOps } from './vault.js';
import { watchOps } from './watch.js';
/** The areas, each a slice of the table; an operation in two is a mistake the test catches. */
export const AREAS = {
    host: hostOps,
    reads: readOps,
    vault: vaultOps,
    entries: entryOps,
    import: importOps,
    agents: agentOps,
    sessions: sessionOps,
    keys: keyOps,
    audit: auditOps,
    owner: ownerOps,
    watch: watchOps,
    sweep: sweepOps,
};
export const OPS = {
    ...hostOps,
    ...readOps,
    ...vaultOps,
    ...entryOps,
    ...importOps,
    ...agentOps,
    ...sessionOps,
    ...keyOps,
    ...auditOps,
    ...ownerOps,
    ...watchOps,
    ...sweepOps,
};
/**
 * Operations that change no agent, session or entry: the agents' own and the
 * owner's reads (the dashboard polls these). Any other clears the caller
 * cache before and after it runs (caller-cache.ts): a change to who may do
 * what is never met by keys kept from before it. (Each request checks the
 * records anyway; this is so they are not kept either.)
 */
export const CALLER_OPS = new Set([
    'whoami',
    'read',
    'resolve',
    'report',
    'sign',
    'ssh.keys',
    'ssh.sign',
    'status',
    'entry.show',
    'entry.ls',
    'agent.ls',
    'agent.show',
    'key.ls',
    'audit.list',
    'audit.verify',
    'owner.session',
    'owner.unlock',
    'owner.lock',
    'watch',
]);
/** The only operations a sandboxed session's socket serves. */
export const SANDBOX_OPS = new Set([
    'whoami',
    'read',
    'resolve',
    'ssh.keys',
    'ssh.sign',
    'watch',
]);
