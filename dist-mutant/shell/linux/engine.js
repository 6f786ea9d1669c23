/**
 * bubblewrap as a SandboxEngine (shell/engine.ts): the probe, the plan, the
 * relays, the command with its process limit (shell/linux/pids.ts), and the
 * placeholders removed after. The mechanics are in shell/linux/bubblewrap.ts.
 */
import { PROXY_PORT } from '../../src/commands/table.js';
import { bubblewrapPlan, looksLikePlaceholder, openRelays, probeBubblewrap, removePlaceholders, sandboxGone, sandboxLaunch, } from './bubblewrap.js';
/** A program the probe found: the engine is launched only with what its probe returned. */
function tool(tools, name) {
    const found = tools[name];
    if (found === undefined)
        throw new Error(`the bubblewrap engine was not given ${name}`);
    return found;
}
/**
 * The process limit's second half: a pids cgroup where one can be made
 * (shell/linux/pids.ts). As root it is the only half that holds, so its
 * absence is said.
 */
async function processLimit(max, warn) {
    const { pidsCgroup } = await import('./pids.js');
    const cgroup = pidsCgroup(max);
    if (cgroup === null && process.getuid?.() === 0)
        warn('vault-cli: warning: no process limit for the sandbox: RLIMIT_NPROC does not bind root, and no pids cgroup could be made here (docs/sandbox.md)');
    return cgroup;
}
export const bubblewrapEngine = {
    probe: probeBubblewrap,
    leftover: looksLikePlaceholder,
    plan: bubblewrapPlan,
    describe: (plan) => ({
        reads: '/ (everything not hidden below), read-only',
        scratch: ['/tmp (private to the sandbox)'],
        net: [
            `through the proxy (127.0.0.1:${PROXY_PORT}): any host but this machine's`,
            ...plan.routes.map((r) => `direct: ${r.host}:${r.port}`),
        ],
    }),
    open: openRelays,
    launch: async (plan, spec) => {
        const [bwrap, socat] = [tool(spec.tools, 'bwrap'), tool(spec.tools, 'socat')];
        const cgroup = await processLimit(spec.maxProcs, spec.warn);
        const { file, args } = sandboxLaunch({
            policy: plan,
            bwrap,
            socat,
            hostSocket: spec.hostSocket,
            command: spec.command,
            maxProcs: spec.maxProcs,
        }, cgroup?.procs ?? null);
        return { file, args, signalForeground: true, release: async () => cgroup?.remove() };
    },
    cleanup: async (plan) => {
        await removePlaceholders(plan);
        await sandboxGone(plan.cwd);
    },
};
