// The real coding agents (Claude Code, Codex, Gemini CLI, from npm at pinned
// versions) under `vault-cli run`: the sandbox, the agent's profile and the
// session's proxy, each completing one prompt in its non-interactive mode
// against a local stand-in of its provider's API. The profile gives the agent
// its key variable as `vault://<Entry>/key`; the stand-in must receive the
// real key in the provider's header, and the agent's state, its output and
// its environment must hold only the reference.
//
// How the stand-in takes the provider's place: the owner's profiles file
// (the rig's) sets the profile's model host to `localhost`, so `run` keeps
// localhost out of NO_PROXY and the agent's requests go through the proxy;
// the agent's own base-URL setting points at https://localhost:<port>;
// `--allow-net localhost:<port>` lets the session's proxy reach it (VLT-2053
// otherwise) and `--upstream-ca` makes the proxy trust its certificate.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadProfiles } from '../../shell/profiles.js';
import { hex } from '../support/e2e-helpers.js';
import { makeTestCa, type TestCa } from '../support/proxy.js';
import { installBin, underPty, type PtyFate } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';
import { AGENTS, REPLY } from '../support/standins/agents.js';
import { SHARED, installAgent } from '../support/standins/install.js';
import type { StandIn } from '../support/standins/server.js';

/** Every regular file under `dir`, recursively (symbolic links not followed). */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

for (const agent of AGENTS) {
  describe(`${agent.name} ${agent.version} under vault-cli run`, () => {
    const rig = new Rig();
    const key = `sentinel-${hex(16)}`;
    const work = join(rig.root, 'work');
    let prefix: string;
    let ca: TestCa;
    let standIn: StandIn;

    before(async () => {
      // Under /var/tmp: the sandbox's /tmp is its own, and an installation elsewhere is seen read-only.
      prefix = await installAgent(agent, SHARED);
      ca = makeTestCa(rig.root);
      standIn = await agent.standIn(ca, REPLY);
      await rig.create();
      await rig.set(agent.entry, key, 'key');
      ok(await rig.owner(['entry', 'hosts', agent.entry, 'localhost']));
      await rig.addAgent('coder', [agent.entry], ['--per-minute', '1000', '--per-hour', '1000']);
      installBin(rig);
      const model = loadProfiles(null).get(agent.profile)?.model;
      assert.ok(model);
      mkdirSync(rig.configDir, { recursive: true, mode: 0o700 });
      writeFileSync(
        join(rig.configDir, 'profiles.json'),
        JSON.stringify({ [agent.profile]: { model: { ...model, host: 'localhost' } } }),
      );
      mkdirSync(work, { recursive: true });
      agent.prepare?.(rig.root);
    });
    after(async () => {
      await standIn?.close();
      await rig.dispose();
    });

    test('starts in the sandbox, writes its state, completes one prompt; the key reaches only the stand-in', async () => {
      const argv = agent.argv(prefix, standIn.origin);
      // Gemini CLI runs as `node gemini.js`: its profile is named, the others come from the command.
      const profile =
        basename(argv[0] as string) === agent.profile ? [] : ['--profile', agent.profile];
      const args = [
        'run',
        '--agent',
        'coder',
        ...profile,
        '--upstream-ca',
        join(rig.root, 'ca.pem'),
        '--allow-net',
        `localhost:${standIn.port}`,
        '--',
        ...argv,
      ];
      const running = underPty(rig, args, agent.env(standIn.origin), work);
      const timer = setTimeout(() => running.pty.kill('SIGKILL'), 180_000);
      const r: PtyFate = await running.exited.finally(() => clearTimeout(timer));

      const log = `exit ${r.exitCode}\n${r.output}\nstand-in saw: ${standIn.paths().join(' ')}`;
      assert.equal(r.exitCode, 0, log);
      assert.ok(r.output.includes(REPLY), log);
      const sent = standIn.header(agent.header);
      assert.ok(sent.length > 0, log);
      assert.deepEqual(new Set(sent), new Set([agent.headerValue(key)]), log);
      assert.ok(!r.output.includes(key));
      // Its own clients' traffic (Codex's update and plugin checks, a client
      // that drops the proxy token) is none of the vault's: no refusal line.
      assert.doesNotMatch(r.output, /the proxy refused: /, log);

      // Its transcript came back (its profile's keep list), and nothing it needs was held.
      const home = files(rig.root).map((f) => relative(rig.root, f));
      assert.ok(
        home.some((f) => agent.transcript.test(f)),
        `transcript in HOME\n${home.join('\n')}`,
      );
      const held = r.output.split(/\r?\n/).filter((l) => l.includes('vault-cli: held '));
      assert.ok(!held.some((l) => /\.jsonl|history/.test(l)), held.join('\n'));
      // Its state, written through the profile's paths, is on the owner's side now.
      for (const s of agent.state) assert.ok(existsSync(join(rig.root, s)), `${s} written in HOME`);
      const written = [...agent.state.map((s) => join(rig.root, s)), work].flatMap((p) =>
        p.endsWith('.json') ? (existsSync(p) ? [p] : []) : files(p),
      );
      assert.ok(written.length > 0);
      for (const f of written)
        assert.ok(!readFileSync(f).includes(key), `key in ${relative(rig.root, f)}`);
      // What it kept of its environment (Codex snapshots it) names the reference, never the key.
      const env = written.filter((f) => f.includes('shell_snapshots'));
      for (const f of env) assert.match(readFileSync(f, 'utf8'), /vault:\/\//);
      // A private copy (Claude Code's ~/.claude.json) came back with what the agent wrote.
      for (const f of agent.state.filter((s) => s.endsWith('.json'))) {
        const state = JSON.parse(readFileSync(join(rig.root, f), 'utf8')) as object;
        assert.ok('userID' in state, f);
      }
    });
  });
}
