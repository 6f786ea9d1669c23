/**
 * Finding a live agent by the name the owner typed. The name rows
 * (`agent-name/<name>`) are covered by no MAC, and a same-user agent can write
 * the store: a row pointed at another agent's record would make the owner's
 * `run --agent claude` mint a session of `admin`, and a deleted row would hide
 * an agent from `agent revoke`. So a row is only a hint: the record it leads to
 * must carry the name itself (the name is under the record's owner MAC, which
 * the callers that change a record check), and a name no row leads to is
 * looked for among the records before it is called unknown.
 */
import { VaultError, quote } from '../../core/errors.js';
import { didYouMean } from '../../core/suggest.js';
/** What the owner can do when a name no longer finds its agent. */
const BY_ID = '`vault-cli agent ls --json` shows each agent’s id, and `vault-cli agent revoke --id <id>` revokes one';
/**
 * The live agent named `name`.
 * @throws VaultError VLT-4002 no live agent of that name; VLT-3021 the name
 *   index leads elsewhere or nowhere while a record of that name exists
 *   (changed outside vault-cli).
 */
export function agentByName(tx, name) {
    const id = tx.agentIdByName(name);
    const a = id === null ? null : tx.agent(id);
    if (a !== null && a.revoked === null && a.name === name)
        return a;
    const named = tx.agents().some((r) => r.revoked === null && r.name === name);
    if (a !== null && a.revoked === null) {
        // A row that leads to a live record of another name was moved there.
        throw new VaultError('VLT-3021', `The name index leads ${quote(name)} to another agent’s record (changed outside vault-cli): ${BY_ID}.`);
    }
    if (named) {
        throw new VaultError('VLT-3021', `No name index row leads to agent ${quote(name)} (changed outside vault-cli): ${BY_ID}.`);
    }
    const live = tx
        .agents()
        .filter((r) => r.revoked === null)
        .map((r) => r.name);
    throw new VaultError('VLT-4002', `No such agent: ${quote(name)}${didYouMean(name, live)}.`);
}
/**
 * The live agent with this id (hex), for when its name no longer finds it.
 * @throws VaultError VLT-4002 no live agent with that id.
 */
export function agentById(tx, id) {
    const a = /^[0-9a-f]{1,64}$/.test(id) ? tx.agent(id) : null;
    if (a === null || a.revoked !== null || a.id !== id) {
        throw new VaultError('VLT-4002', `No agent with id ${quote(id)}.`);
    }
    return a;
}
