// The coding agents users run (Claude Code, Codex, Gemini CLI), installed from
// npm at pinned versions, each completing one prompt in its non-interactive
// mode through the real `vault-cli proxy` to a local stand-in of its
// provider's API. The agent's key variable holds only a `vault://` reference;
// the stand-in must receive the real key in the provider's own header, and
// the key must appear nowhere the agent wrote. docs/agents.md records what
// each agent needs; agents-real-run.test.ts runs the same agents under
// `vault-cli run`, with their profiles and the sandbox.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import { makeTestCa, startProxy, type ProxyProcess, type TestCa } from '../support/proxy.js';
import { Rig, fate, ok, type Result } from '../support/rig.js';
import { AGENTS, REPLY } from '../support/standins/agents.js';
import { installAgent } from '../support/standins/install.js';
import type { StandIn } from '../support/standins/server.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

/** The variables `vault-cli proxy env` prints, as an object. */
function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.trim().split('\n')) {
    const m = /^export ([A-Za-z0-9_]+)=(.*)$/.exec(line);
    assert.ok(m, line);
    const v = m[2] as string;
    out[m[1] as string] = v.startsWith("'") ? v.slice(1, -1).replaceAll(`'\\''`, "'") : v;
  }
  return out;
}

/** Every regular file under `dir`, recursively (symbolic links not followed). */
function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * What the owner's real HOME holds at the agents' state paths (size and
 * mtime, or absent): an agent that ignored the throwaway HOME would change it.
 */
function ownerState(): string {
  const names = ['.claude', '.claude.json', '.codex', '.gemini'];
  return names
    .map((n) => {
      const p = join(homedir(), n);
      if (!existsSync(p)) return `${n}: absent`;
      const s = statSync(p);
      return `${n}: ${s.size} ${s.mtimeMs}`;
    })
    .join('\n');
}

/** Runs the agent with a deadline; its fate either way. */
function runAgent(argv: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Result> {
  const [cmd, ...args] = argv;
  const child = spawn(cmd as string, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return fate(child).finally(() => clearTimeout(timer));
}

for (const agent of AGENTS) {
  describe(`${agent.name} ${agent.version} through the real proxy`, () => {
    const rig = new Rig();
    const key = `sentinel-${hex(16)}`;
    const ref = `vault://${agent.entry}/key`;
    let prefix: string;
    let ca: TestCa;
    let standIn: StandIn;
    let proxy: ProxyProcess;
    let proxyEnv: Record<string, string>;
    let ownerBefore: string;

    before(async () => {
      ownerBefore = ownerState();
      prefix = await installAgent(agent);
      ca = makeTestCa(rig.root);
      standIn = await agent.standIn(ca, REPLY);
      await rig.create();
      await rig.set(agent.entry, key, 'key');
      ok(await rig.owner(['entry', 'hosts', agent.entry, 'localhost']));
      const token = await rig.addAgent('coder', [agent.entry], roomy);
      proxy = await startProxy(rig, token, ca);
      proxyEnv = parseEnv(
        ok(await rig.agent(['proxy', 'env', '--port', String(proxy.port)], token)),
      );
    });
    after(async () => {
      await proxy?.stop();
      await standIn?.close();
      await rig.dispose();
    });

    /**
     * Fresh HOME, XDG, TMPDIR and working directories under the rig, and the
     * agent's environment: those, the proxy's variables, its own base URL
     * and the key variable holding the reference.
     */
    function setUp(name: string, plant = false) {
      const dir = join(rig.root, name);
      const [home, work, tmp] = ['home', 'work', 'tmp'].map((d) => join(dir, d)) as [
        string,
        string,
        string,
      ];
      for (const d of [home, work, tmp]) mkdirSync(d, { recursive: true });
      agent.prepare?.(home);
      const marker = join(dir, 'planted-ran');
      if (plant) agent.plant(home, marker);
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        LANG: 'C.UTF-8',
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_CACHE_HOME: join(home, '.cache'),
        XDG_DATA_HOME: join(home, '.local', 'share'),
        XDG_STATE_HOME: join(home, '.local', 'state'),
        TMPDIR: tmp,
        ...proxyEnv,
        // The stand-in is on this machine; the printed NO_PROXY would send the agent around the proxy.
        NO_PROXY: '',
        no_proxy: '',
        ...agent.env(standIn.origin),
        [agent.keyVar]: ref,
      };
      const run = () => runAgent(agent.argv(prefix, standIn.origin), env, work);
      return { home, work, tmp, marker, run };
    }

    test('completes one prompt; the stand-in gets the key, the agent holds only the reference', async () => {
      const { home, work, tmp, run } = setUp('first');

      const r = await run();

      const log = `exit ${r.code} ${r.signal}\n${r.stdout}\n${r.stderr}\nproxy: ${proxy.stderr()}\nstand-in saw: ${standIn.paths().join(' ')}`;
      assert.equal(r.code, 0, log);
      assert.ok(r.stdout.includes(REPLY), log);
      const sent = standIn.header(agent.header);
      assert.ok(sent.length > 0, log);
      assert.deepEqual(new Set(sent), new Set([agent.headerValue(key)]), log);

      for (const s of agent.state) assert.ok(existsSync(join(home, s)), `${s} written in HOME`);
      const written = [home, work, tmp].flatMap(files);
      assert.ok(written.length > 0);
      for (const f of written) {
        assert.ok(!readFileSync(f).includes(key), `key in ${relative(rig.root, f)}`);
      }
      assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key));
      assert.equal(ownerState(), ownerBefore, "the owner's own agent state is untouched");
    });

    // What agent profiles must keep out of an agent's reach (docs/agents.md):
    // its own state files name commands it runs at its next start, outside
    // any sandbox when the owner starts it there.
    test('a command planted in its state files runs at its next start', async () => {
      const { marker, run } = setUp('planted', true);

      const r = await run();

      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      const ran = readdirSync(join(marker, '..')).filter((n) => n.startsWith('planted-ran'));
      assert.ok(ran.length > 0, 'no planted command ran');
    });
  });
}
