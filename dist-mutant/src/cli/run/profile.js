// The agent's profile (shell/profiles.ts) and the model key reference it brings.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { chooseProfile, loadProfiles } from '../../../shell/profiles.js';
import { flagList, flagString } from '../context.js';
/**
 * The agent's profile (shell/profiles.ts): `--profile`, else the command's
 * name; the owner's profiles file extends the shipped ones.
 * @throws VaultError VLT-1002 for an unknown profile or a broken profiles file.
 */
export function profileFor(ctx, file) {
    let user = null;
    try {
        user = JSON.parse(readFileSync(ctx.paths.profilesFile, 'utf8'));
    }
    catch (err) {
        if (err.code !== 'ENOENT')
            throw new VaultError('VLT-1002', `${ctx.paths.profilesFile} is not a JSON object of profiles (docs/run.md).`);
    }
    return chooseProfile(loadProfiles(user, ctx.paths.profilesFile), basename(file), flagString(ctx, 'profile'));
}
/** A `vault://` reference to `entry`'s `field`. */
function refTo(entry, field) {
    return `vault://${entry.replaceAll('%', '%25').replaceAll('/', '%2F')}/${field}`;
}
/**
 * The model key as a reference: `--model-key ENTRY` (or `ENTRY/FIELD`), else
 * the profile's entry when the agent's scope holds it, else an entry named
 * as the key's variable (`ANTHROPIC_API_KEY`, field `password`: what `import
 * .env` makes) when the scope holds that. A reference the proxy would refuse
 * would cost the agent rate slots on every request. Null: the variable is
 * left as the environment has it.
 */
export function modelKeyRef(profile, named, scope) {
    const model = profile?.model ?? null;
    if (model === null || named === 'none')
        return null;
    if (named !== undefined) {
        const [entry, field] = named.split(/\/(?=[A-Za-z0-9_-]+$)/);
        if (entry === undefined || entry === '')
            return null;
        return { variable: model.variable, ref: refTo(entry, field ?? model.field), entry };
    }
    if (scope === null || scope.includes(model.entry))
        return { variable: model.variable, ref: refTo(model.entry, model.field), entry: model.entry };
    if (scope.includes(model.variable))
        return {
            variable: model.variable,
            ref: refTo(model.variable, IMPORTED_FIELD),
            entry: model.variable,
        };
    return null;
}
/** The field `import` gives a value of a `.env` file (src/import). */
const IMPORTED_FIELD = 'password';
/**
 * The variables the profile sets, and its model key variable: set after the
 * proxy block. NO_PROXY never names the model's host: a request that went
 * around the proxy would carry the bare reference and no key.
 */
export function profileVars(profile, key) {
    const vars = Object.entries(profile?.env ?? {});
    if (key !== null)
        vars.push([key.variable, key.ref]);
    const host = profile?.model?.host.replace(/:[0-9]+$/, '') ?? null;
    return { vars, throughProxy: host, aws: profile?.aws ?? null };
}
/**
 * The model key reference for this session: the agent's scope (asked of the
 * host with the owner's passphrase) decides whether the profile's entry is
 * passed; `--model-key` is passed as named; a reference already in the
 * variable is left to pass.
 */
export async function sessionModelKey(ctx, passphrase, agent, profile) {
    const named = flagString(ctx, 'model-key');
    if (profile?.model == null || named !== undefined)
        return modelKeyRef(profile, named, null);
    // A reference of the owner's own in the variable passes as it is (shell/env.ts) and wins.
    if (ctx.env[profile.model.variable]?.startsWith('vault://') === true)
        return null;
    const { scope } = await ctx.call('agent.show', { passphrase, name: agent });
    const narrowed = flagList(ctx, 'scope');
    const key = modelKeyRef(profile, undefined, scope.filter((e) => narrowed.length === 0 || narrowed.includes(e)));
    // Said before the agent starts: an agent without its key fails in ways that blame anything else.
    if (key === null) {
        const m = profile.model;
        ctx.stderr.write(`vault-cli: ${m.variable} is not set: the agent's scope holds neither ${JSON.stringify(m.entry)} nor ${JSON.stringify(m.variable)} (\`vault-cli agent scope ${agent} --add <entry>\`, or \`--model-key <entry>/<field>\`; docs/run.md)\n`);
    }
    return key;
}
