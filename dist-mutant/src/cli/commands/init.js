/**
 * `vault-cli init`: the token from stdin (or a prompt without echo), checked
 * locally and by the host before it is stored 0600. Nothing is written when
 * the token is bad. Then the guardrail skill for the coding agents found in
 * HOME (src/cli/skill.ts), unless --no-skill; --skill <agent> names one.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { parseToken } from '../../crypto/token.js';
import { flag, flagString } from '../context.js';
import { secretInput } from '../io.js';
import { SKILL_AGENTS, installSkills } from '../skill.js';
export const run = async (ctx) => {
    const forced = flagString(ctx, 'skill');
    if (forced !== undefined && !SKILL_AGENTS.includes(forced)) {
        throw new VaultError('VLT-1001', `unknown agent for --skill: use one of ${SKILL_AGENTS.join(', ')} (see vault-cli --help)`);
    }
    if (forced !== undefined && flag(ctx, 'no-skill')) {
        throw new VaultError('VLT-1001', '--skill and --no-skill together (see vault-cli --help)');
    }
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
    if (!flag(ctx, 'no-skill')) {
        for (const t of installSkills(ctx.paths.agentDirs, forced)) {
            ctx.stderr.write(`vault-cli: guardrails for ${t.agent} in ${t.file}\n`);
        }
    }
    return 0;
};
