// `run --print-policy`: what the agent would get, printed; nothing started.
import { homedir } from 'node:os';
import { proxyEnv } from '../../proxy/env.js';
import { flagList, flagString } from '../context.js';
import { modelKeyRef, profileVars } from './profile.js';
/** `run --print-policy`: what the agent would get, one fact a line; nothing is started or created. */
function printPolicy(ctx, p) {
    const home = homedir();
    const show = (x) => x === home || x.startsWith(`${home}/`) ? `~${x.slice(home.length)}` : x;
    const out = [];
    const line = (what, text) => out.push(`${what.padEnd(10)}${text}`);
    line('profile', p.profile === null ? 'none' : `${p.profile.name}: ${p.profile.summary}`);
    if (p.box === null) {
        line('sandbox', 'none (--no-sandbox): the agent reads, writes and reaches all you can');
    }
    else {
        const { policy: pol, engine } = p.box;
        line('read', engine.reads);
        line('write', `${show(pol.cwd)} (working directory)`);
        for (const s of engine.scratch)
            line('write', s);
        for (const w of pol.writable) {
            const made = p.plan.write.find((x) => x.path === w)?.create === true;
            line('write', `${show(w)}${made ? ' (created)' : ''}`);
        }
        for (const f of pol.privateFiles) {
            const keys = p.plan.private.find((x) => x.path === f.path)?.keep;
            const made = p.plan.write.find((x) => x.path === f.path)?.create === true;
            line('write', keys === undefined
                ? `${show(f.path)} (a private copy${made ? ', created' : ''}: only what the keep list names comes back, the rest is held)`
                : `${show(f.path)} (a private copy: only its ${keys.length} keep keys come back, the rest is held)`);
        }
        for (const k of p.plan.keep)
            line('keep', show(k));
        for (const r of pol.readOnly) {
            const made = p.plan.readOnly.find((x) => x.path === r)?.create === true;
            line('read-only', `${show(r)}${made ? ' (an empty placeholder while it runs)' : ''}`);
        }
        for (const h of pol.hidden)
            line('hidden', show(h.path));
        for (const n of engine.net)
            line('net', n);
    }
    if (p.profile?.model != null) {
        const m = p.profile.model;
        line('model', p.key === null
            ? `${m.variable} set to vault://${m.entry}/${m.field} if the agent's scope holds ${m.entry} (else vault://${m.variable}/password if it holds ${m.variable})`
            : `${p.key.variable}=${p.key.ref}`);
        line('', `the proxy fills ${m.header} for the hosts ${p.key?.entry ?? m.entry} is bound to (expected: ${m.host})`);
    }
    line('env', `passed: ${p.env.pass.join(' ') || '(none)'}`);
    line('env', `stripped: ${p.env.stripped.join(' ') || '(none)'}`);
    line('env', `set: ${p.env.set.join(' ')}`);
    ctx.stdout.write(`${out.join('\n')}\n`);
    return 0;
}
/** `--print-policy`: the environment as `run` would build it, with stand-ins for the session's values. */
export async function policyReport(ctx, profile, plan, box) {
    const { childEnv } = await import('../../../shell/env.js');
    const named = flagString(ctx, 'model-key');
    const key = named === undefined ? null : modelKeyRef(profile, named, null);
    const vars = profileVars(profile, key).vars;
    const built = childEnv({
        parent: ctx.env,
        sessionToken: 'session',
        proxy: vars,
        keep: flagList(ctx, 'keep-env'),
    });
    const block = proxyEnv('http://127.0.0.1', { proxyCa: '', proxyCaBundle: '', proxyCaDir: '' }, []);
    const set = new Set([
        'VAULT_TOKEN',
        ...block.map(([n]) => n),
        ...(box === null ? [] : ['VAULT_DIR']),
        ...vars.map(([n]) => n),
    ]);
    return printPolicy(ctx, {
        profile,
        plan,
        box: box === null ? null : { policy: box.policy, engine: box.engine.describe(box.policy) },
        key,
        env: {
            pass: Object.keys(built.env)
                .filter((n) => !set.has(n) && ctx.env[n] !== undefined)
                .sort(),
            stripped: built.stripped,
            set: [...set],
        },
    });
}
