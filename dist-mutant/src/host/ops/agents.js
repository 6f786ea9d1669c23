/** The owner's agents: add, list, show, scope, limits, lock, revoke. */
import { addAgent, groupAgent, listAgents, lockAgent, revokeAgent, scopeAgent, setCaveats, setLimits, showAgent, } from '../agent/agents.js';
import { bad } from '../../core/decode.js';
import { owner } from './op.js';
export const agentOps = {
    'agent.add': owner(async ({ ctx }, { body, source }, s) => {
        const { name, kind, scope, limits } = body;
        return addAgent(ctx, s, { name, kind, scope, limits }, source);
    }, { releases: 'A new agent token' }),
    'agent.ls': owner(async ({ ctx }, _req, s) => ({ agents: listAgents(ctx, s) })),
    'agent.show': owner(async ({ ctx }, { body }, s) => showAgent(ctx, s, body.name)),
    'agent.scope': owner(async ({ ctx }, { body, source }, s) => {
        const { name, add, rm } = body;
        return scopeAgent(ctx, s, { name, add, rm }, source);
    }),
    'agent.limits': owner(async ({ ctx }, { body, source }, s) => {
        const { name, perMinute, perHour, valuesPerMinute } = body;
        return setLimits(ctx, s, { name, perMinute, perHour, valuesPerMinute }, source);
    }),
    'agent.caveats': owner(async ({ ctx }, { body, source }, s) => {
        const { name, entry, rules, clear } = body;
        return setCaveats(ctx, s, { name, entry, rules, clear }, source);
    }),
    'agent.group': owner(async ({ ctx }, { body, source }, s) => {
        const { name, group, entries } = body;
        return groupAgent(ctx, s, { name, group, entries }, source);
    }),
    'agent.lock': owner(async ({ ctx }, { body, source }, s) => lockAgent(ctx, s, body.name, source)),
    'agent.revoke': owner(async ({ ctx }, { body, source }, s) => {
        const { name, id } = body;
        if ((name === undefined) === (id === undefined))
            throw bad('give name or id');
        return revokeAgent(ctx, s, id !== undefined ? { id } : { name: name }, source);
    }),
};
