// `vault-cli sweep`: values released through get, render and a proxy fill,
// planted in a throwaway HOME in Claude Code's, Codex's, Gemini CLI's, Aider's
// and the shells' own transcript formats, in every form a transcript keeps
// them, among decoys.
// Every one is found where it was planted and nothing else is; --redact leaves
// valid JSONL with references in place; the field stays exposed until it is
// set anew; and a sentinel value appears in no output, file or audit record.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { watchOutput } from '../support/raw-host.js';
import { CLI, Rig, ok, terminate, type Result } from '../support/rig.js';

interface Finding {
  file: string;
  line: number;
  entry: string;
  field: string;
  form: string;
  redacted: boolean;
}

const findings = (r: Result): Finding[] =>
  r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Finding);

/** Every file under `dir` (links not followed), with its bytes. */
function everyFile(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) out.push(...everyFile(p));
    else if (st.isFile()) out.push({ path: p, bytes: readFileSync(p) });
  }
  return out;
}

/** The forms a transcript keeps a value in, each made by the encoder that writes it. */
function forms(v: string): { form: string; text: string }[] {
  return [
    { form: 'plain', text: v },
    { form: 'base64', text: Buffer.from(v).toString('base64') },
    { form: 'base64', text: Buffer.from('x' + v + 'y').toString('base64') },
    { form: 'base64', text: Buffer.from('xy' + v).toString('base64') },
    { form: 'base64url', text: Buffer.from('\xff\xfe' + v, 'latin1').toString('base64url') },
    { form: 'url', text: encodeURIComponent(v) },
    { form: 'url', text: new URLSearchParams({ q: v }).toString() },
  ];
}

describe('sweep', () => {
  const rig = new Rig();
  const home = rig.root;
  const tmp = join(home, 'tmp');
  // `_` and letters only: the same in plain and in a JSON string.
  const GH = `ghp_${hex(18)}`;
  const RENDERED = `rendered_${hex(12)}`;
  const FILLED = `filled_${hex(14)}`;
  // Quote, backslash and slash: a different shape in a JSON string, and JSON in JSON.
  const SENTINEL = `SENTINEL"\\/${hex(12)}`;
  const STORED = `stored_only_${hex(10)}`;
  const claudeFile = join(home, '.claude', 'projects', '-home-me-proj', `${hex(8)}.jsonl`);
  const codexFile = join(
    home,
    '.codex',
    'sessions',
    '2026',
    '11',
    '25',
    `rollout-2026-11-25T10-00-00-${hex(8)}.jsonl`,
  );
  // Gemini CLI: ~/.gemini/tmp/<sha256 of the project's path>/, the chats as
  // JSONL (session-<time>-<id>.jsonl, one record a line; `$set` updates the
  // session's metadata) or, before that, one pretty-printed JSON object
  // (session-*.json); logs.json (the prompts) and checkpoint-<tag>.json (the
  // model's history, tool results included), both pretty-printed JSON.
  const geminiProject = join(
    home,
    '.gemini',
    'tmp',
    createHash('sha256').update('/home/me/proj').digest('hex'),
  );
  const geminiChat = join(geminiProject, 'chats', `session-2026-11-25T10-00-${hex(4)}.jsonl`);
  const geminiLegacy = join(geminiProject, 'chats', `session-2026-11-24T09-00-${hex(4)}.json`);
  const geminiLogs = join(geminiProject, 'logs.json');
  const geminiCheckpoint = join(geminiProject, 'checkpoint-before-deploy.json');
  // Aider, in the repository it runs in (and the home): the chat as markdown,
  // the prompts in prompt_toolkit's history format.
  const aiderChat = join(home, '.aider.chat.history.md');
  const aiderInput = join(home, '.aider.input.history');
  const bashFile = join(home, '.bash_history');
  const zshFile = join(home, '.zsh_history');
  const outside = join(home, 'outside');
  /** file -> line -> the entry/field planted there. */
  const planted = new Map<string, Map<number, string>>();
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let token: string;
  const outputs: Result[] = [];

  async function sweep(args: string[]): Promise<Result> {
    const r = await rig.owner(['sweep', ...args], { env: { TMPDIR: tmp } });
    outputs.push(r);
    return r;
  }

  function plant(file: string, lines: { text: string; ref?: string }[]): void {
    mkdirSync(join(file, '..'), { recursive: true });
    const at = planted.get(file) ?? new Map<number, string>();
    let n = existsLines(file);
    for (const l of lines) {
      n++;
      if (l.ref !== undefined) at.set(n, l.ref);
    }
    planted.set(file, at);
    appendFileSync(file, lines.map((l) => l.text + '\n').join(''));
  }

  /**
   * Writes a file made by its tool's own writer (pretty-printed JSON, say),
   * and records each line on which a needle (a value as that writer put it)
   * occurs.
   */
  function plantWhole(file: string, text: string, needles: { text: string; ref: string }[]): void {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    const at = new Map<number, string>();
    for (const n of needles) {
      let found = false;
      for (let i = text.indexOf(n.text); i !== -1; i = text.indexOf(n.text, i + 1)) {
        at.set(text.slice(0, i).split('\n').length, n.ref);
        found = true;
      }
      assert.ok(found, `${n.ref} planted in ${file}`);
    }
    planted.set(file, at);
  }

  function existsLines(file: string): number {
    try {
      return readFileSync(file, 'utf8').split('\n').length - 1;
    } catch {
      return 0;
    }
  }

  /** A Claude Code transcript line: a tool result as the user turn that carries it. */
  function claudeLine(text: string): string {
    return JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      userType: 'external',
      cwd: '/home/me/proj',
      sessionId: 'b1d9c6f0-2f0a-4c53-9d6e-0f7b8f8a1c11',
      version: '2.0.14',
      type: 'user',
      message: {
        role: 'user',
        content: [{ tool_use_id: `toolu_${hex(6)}`, type: 'tool_result', content: text }],
      },
      uuid: `${hex(4)}-uuid`,
      timestamp: '2026-11-25T10:00:00.000Z',
    });
  }

  /** A Codex rollout line: a function call's output, itself JSON in a JSON string. */
  function codexLine(text: string): string {
    return JSON.stringify({
      timestamp: '2026-11-25T10:00:01.000Z',
      type: 'response_item',
      payload: {
        type: 'function_call_output',
        call_id: `call_${hex(6)}`,
        output: JSON.stringify({ output: text, metadata: { exit_code: 0, duration_seconds: 0.1 } }),
      },
    });
  }

  before(async () => {
    mkdirSync(tmp, { recursive: true });
    ca = makeTestCa(home);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('GitHub', GH, 'token');
    await rig.set('Rendered', RENDERED);
    await rig.set('Filled', FILLED, 'token');
    await rig.set('Sentinel', SENTINEL);
    await rig.set('Stored', STORED);
    token = await rig.addAgent(
      'claude',
      ['GitHub', 'Rendered', 'Filled', 'Sentinel'],
      ['--per-minute', '100', '--per-hour', '100'],
    );
    // Released: by get, by render, by a proxy fill.
    assert.equal(ok(await rig.agent(['get', 'GitHub', '--field', 'token'], token)), GH + '\n');
    assert.equal(ok(await rig.agent(['get', 'Sentinel'], token)), SENTINEL + '\n');
    const template = join(home, 'app.txt');
    writeFileSync(template, 'DB_PASSWORD=vault://Rendered/password\n');
    assert.equal(ok(await rig.agent(['render', template], token)), `DB_PASSWORD=${RENDERED}\n`);
    proxy = await startProxy(rig, token, ca);
    const ourCa = ok(await rig.agent(['proxy', 'ca'], token)).trim();
    const curl = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        'curl',
        [
          '-sS',
          '-o',
          '/dev/null',
          '--noproxy',
          '',
          '--proxy',
          proxy.url,
          '--cacert',
          ourCa,
          '-H',
          'Authorization: Bearer vault://Filled/token',
          `https://localhost:${up.port}/fill`,
        ],
        { env: { PATH: process.env.PATH, HOME: home }, stdio: 'ignore' },
      );
      child.on('error', reject);
      child.on('close', resolve);
    });
    assert.equal(curl, 0);
    const auth = up.seen.at(-1)?.rawHeaders.join('\n') ?? '';
    assert.ok(auth.includes(`Bearer ${FILLED}`), 'the upstream got the filled value');

    // Claude Code: each released value in each form, then decoys.
    const released = [
      { v: GH, ref: 'GitHub/token' },
      { v: RENDERED, ref: 'Rendered/password' },
      { v: FILLED, ref: 'Filled/token' },
      { v: SENTINEL, ref: 'Sentinel/password' },
    ];
    for (const { v, ref } of released) {
      plant(
        claudeFile,
        forms(v).map((f) => ({ text: claudeLine(`$ some command\n${f.text}\n`), ref })),
      );
    }
    const decoys = [
      // One character changed in the middle (a change in the last byte's low bits
      // can hide in base64, whose last character carries only the top six).
      GH.slice(0, 20) + (GH[20] === 'a' ? 'b' : 'a') + GH.slice(21),
      RENDERED.slice(1),
      FILLED.toUpperCase(),
      STORED,
      `ghp_${hex(18)}`,
    ];
    plant(
      claudeFile,
      decoys.flatMap((d) => forms(d).map((f) => ({ text: claudeLine(f.text) }))),
    );
    // Codex: JSON inside a JSON string.
    plant(codexFile, [
      {
        text: JSON.stringify({
          timestamp: '2026-11-25T10:00:00.000Z',
          type: 'session_meta',
          payload: { id: 'c0ffee', cwd: '/home/me/proj', originator: 'codex_cli_rs' },
        }),
      },
      { text: codexLine(`token=${GH}`), ref: 'GitHub/token' },
      { text: codexLine(`got ${SENTINEL} back`), ref: 'Sentinel/password' },
      { text: codexLine(`decoy ${decoys[0] as string}`) },
    ]);
    // Shells: bash's plain lines, zsh's extended history.
    plant(bashFile, [
      { text: 'ls -la' },
      { text: `export GITHUB_TOKEN=${GH}`, ref: 'GitHub/token' },
      { text: `echo '${SENTINEL}'`, ref: 'Sentinel/password' },
      { text: `export DECOY=${decoys[4] as string}` },
    ]);
    plant(zshFile, [
      { text: ': 1764064800:0;cd proj' },
      {
        text: `: 1764064801:0;curl -H "Authorization: Bearer ${FILLED}" https://x`,
        ref: 'Filled/token',
      },
    ]);
    // Gemini CLI's chat: a metadata record, the prompt, the model's turn with
    // its shell tool call (the output in the function response, and again as
    // displayed), a metadata update.
    const geminiTool = (command: string, output: string) => ({
      id: `run_shell_command-1764064800-${hex(4)}`,
      name: 'run_shell_command',
      args: { command },
      result: [
        {
          functionResponse: {
            id: `run_shell_command-1764064800-${hex(4)}`,
            name: 'run_shell_command',
            response: { output: `Command: ${command}\nDirectory: (root)\nOutput: ${output}` },
          },
        },
      ],
      status: 'success',
      timestamp: '2026-11-25T10:00:03.000Z',
      displayName: 'Shell',
      description: command,
      resultDisplay: output,
      renderOutputAsMarkdown: false,
    });
    const geminiTurn = (text: string, toolCalls: object[]) =>
      JSON.stringify({
        id: `${hex(4)}-msg`,
        timestamp: '2026-11-25T10:00:03.000Z',
        type: 'gemini',
        content: [{ text }],
        toolCalls,
        thoughts: [],
        tokens: { input: 812, output: 41, cached: 0, thoughts: 12, tool: 0, total: 865 },
        model: 'gemini-2.5-pro',
      });
    plant(geminiChat, [
      {
        text: JSON.stringify({
          sessionId: 'a1b2c3d4-e5f6-4890-abcd-ef1234567890',
          projectHash: geminiProject.split('/').at(-1),
          startTime: '2026-11-25T10:00:00.000Z',
          lastUpdated: '2026-11-25T10:00:00.000Z',
          kind: 'main',
        }),
      },
      {
        text: JSON.stringify({
          id: `${hex(4)}-msg`,
          timestamp: '2026-11-25T10:00:01.000Z',
          type: 'user',
          content: [{ text: 'why does the deploy fail?' }],
        }),
      },
      {
        text: geminiTurn('', [geminiTool('cat .env', `GITHUB_TOKEN=${GH}\n`)]),
        ref: 'GitHub/token',
      },
      {
        text: geminiTurn('', [geminiTool('printenv API_KEY', `${SENTINEL}\n`)]),
        ref: 'Sentinel/password',
      },
      { text: geminiTurn(`The token ${decoys[0] as string} looks expired.`, []) },
      { text: JSON.stringify({ $set: { lastUpdated: '2026-11-25T10:00:09.000Z' } }) },
    ]);
    // The older whole-file chat, logs.json and a checkpoint: pretty-printed JSON.
    const sentinelInJson = JSON.stringify(SENTINEL).slice(1, -1);
    plantWhole(
      geminiLegacy,
      JSON.stringify(
        {
          sessionId: 'b2c3d4e5-f6a7-4901-bcde-f12345678901',
          projectHash: geminiProject.split('/').at(-1),
          startTime: '2026-11-24T09:00:00.000Z',
          lastUpdated: '2026-11-24T09:05:00.000Z',
          messages: [
            {
              id: 'm1',
              timestamp: '2026-11-24T09:00:01.000Z',
              type: 'user',
              content: `the password is ${RENDERED}, and ${decoys[1] as string} was the old one`,
            },
            {
              id: 'm2',
              timestamp: '2026-11-24T09:00:05.000Z',
              type: 'gemini',
              content: '',
              toolCalls: [geminiTool('cat secrets.txt', `${SENTINEL}\n`)],
            },
          ],
        },
        null,
        2,
      ),
      [
        { text: RENDERED, ref: 'Rendered/password' },
        { text: sentinelInJson, ref: 'Sentinel/password' },
      ],
    );
    plantWhole(
      geminiLogs,
      JSON.stringify(
        [
          {
            sessionId: 'b2c3d4e5-f6a7-4901-bcde-f12345678901',
            messageId: 0,
            type: 'user',
            message: 'list the files',
            timestamp: '2026-11-24T09:00:01.000Z',
          },
          {
            sessionId: 'b2c3d4e5-f6a7-4901-bcde-f12345678901',
            messageId: 1,
            type: 'user',
            message: `use Bearer ${FILLED} for the API and ${decoys[2] as string} for staging`,
            timestamp: '2026-11-24T09:01:00.000Z',
          },
        ],
        null,
        2,
      ),
      [{ text: FILLED, ref: 'Filled/token' }],
    );
    const ghBase64 = Buffer.from(GH).toString('base64');
    plantWhole(
      geminiCheckpoint,
      JSON.stringify(
        [
          { role: 'user', parts: [{ text: 'encode the token for the k8s secret' }] },
          {
            role: 'model',
            parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'base64' } } }],
          },
          {
            role: 'user',
            parts: [
              {
                functionResponse: {
                  name: 'run_shell_command',
                  response: { output: `Output: ${ghBase64}\n` },
                },
              },
            ],
          },
        ],
        null,
        2,
      ),
      [{ text: ghBase64, ref: 'GitHub/token' }],
    );
    // Aider's chat: the prompts as `####` lines, tool output (a /run's, kept
    // in the chat) as `>` block quotes with markdown's two-space line breaks,
    // the model's answer as markdown with a fenced block.
    plantWhole(
      aiderChat,
      [
        '',
        '# aider chat started at 2026-11-25 10:00:00',
        '',
        '> /home/me/.local/bin/aider --model sonnet  ',
        '> Aider v0.86.1  ',
        '',
        '#### /run cat .env  ',
        '',
        '> Running cat .env  ',
        `> GITHUB_TOKEN=${GH}  `,
        `> API_KEY=${SENTINEL}  `,
        `> OLD_TOKEN=${decoys[0] as string}  `,
        '> Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y  ',
        '> Added 3 lines of output to the chat.  ',
        '',
        '#### why does the deploy fail?  ',
        '',
        'The request sends the wrong header. Try:',
        '',
        '```bash',
        `curl -H "Authorization: Bearer ${FILLED}" https://api.example.com/deploy`,
        '```',
        '',
        '',
      ].join('\n'),
      [
        { text: GH, ref: 'GitHub/token' },
        { text: SENTINEL, ref: 'Sentinel/password' },
        { text: FILLED, ref: 'Filled/token' },
      ],
    );
    plantWhole(
      aiderInput,
      [
        '',
        '# 2026-11-25 10:00:01.123456',
        '+/run cat .env',
        '',
        '# 2026-11-25 10:00:09.654321',
        `+export DB_PASSWORD=${RENDERED}`,
        `+export OLD=${decoys[1] as string}`,
        '+why does the deploy fail?',
        '',
      ].join('\n'),
      [{ text: RENDERED, ref: 'Rendered/password' }],
    );
    // A stored value never released, in a file of its own.
    plant(join(home, 'notes', 'stored.txt'), [{ text: `pw: ${STORED}` }]);
  });

  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('every released value is found where it was planted, in each form; no decoy is', async () => {
    const r = await sweep(['--json']);
    assert.equal(r.code, 1, r.stderr);
    const got = new Set(findings(r).map((f) => `${f.file}:${f.line}:${f.entry}/${f.field}`));
    const want = new Set(
      [...planted].flatMap(([file, lines]) =>
        [...lines].map(([line, ref]) => `${file}:${line}:${ref}`),
      ),
    );
    assert.deepEqual([...got].sort(), [...want].sort());
    // Each form was seen at least once.
    const seenForms = new Set(findings(r).map((f) => f.form));
    for (const f of ['plain', 'base64', 'url', 'json', 'json2']) {
      assert.ok(seenForms.has(f), `form ${f} found`);
    }
    assert.match(r.stderr, /marked exposed/);
  });

  test('--stored also finds a value never released', async () => {
    const r = await sweep(['--json', '--stored', '--paths-only', '--path', join(home, 'notes')]);
    assert.deepEqual(
      findings(r).map((f) => `${f.entry}/${f.field}:${f.line}`),
      ['Stored/password:1'],
    );
  });

  test('the fields found are exposed until set anew', async () => {
    const exposed = JSON.parse(ok(await rig.owner(['entry', 'exposed', '--json']))) as {
      entry: string;
      field: string;
    }[];
    assert.deepEqual(exposed.map((x) => `${x.entry}/${x.field}`).sort(), [
      'Filled/token',
      'GitHub/token',
      'Rendered/password',
      'Sentinel/password',
      'Stored/password',
    ]);
    assert.match(ok(await rig.owner(['entry', 'show', 'GitHub'])), /token .*EXPOSED/);
    assert.match(ok(await rig.owner(['entry', 'ls'])), /GitHub\s+default\s+token!/);
    await rig.set('Stored', `rotated_${hex(10)}`);
    const after = JSON.parse(ok(await rig.owner(['entry', 'exposed', '--json']))) as {
      entry: string;
    }[];
    assert.ok(!after.some((x) => x.entry === 'Stored'), 'rotated: off the checklist');
    assert.doesNotMatch(ok(await rig.owner(['entry', 'show', 'Stored'])), /EXPOSED/);
  });

  test('--redact: valid JSONL with references in place, and nothing left to find', async () => {
    const r = await sweep(['--json', '--redact']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(findings(r).length > 0 && findings(r).every((f) => f.redacted));
    for (const file of [claudeFile, codexFile]) {
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      for (const l of lines) JSON.parse(l);
    }
    const claude = readFileSync(claudeFile, 'utf8').split('\n');
    const first = JSON.parse(claude[0] as string) as {
      message: { content: { content: string }[] };
    };
    assert.equal(first.message.content[0]?.content, '$ some command\nvault://GitHub/token\n');
    const codex = readFileSync(codexFile, 'utf8').split('\n');
    const sentinelLine = JSON.parse(codex[2] as string) as { payload: { output: string } };
    assert.equal(
      (JSON.parse(sentinelLine.payload.output) as { output: string }).output,
      'got vault://Sentinel/password back',
    );
    assert.match(readFileSync(bashFile, 'utf8'), /^export GITHUB_TOKEN=vault:\/\/GitHub\/token$/m);
    // Gemini CLI: JSONL and pretty-printed JSON still parse, references in place.
    const chat = readFileSync(geminiChat, 'utf8').split('\n').filter(Boolean);
    const records = chat.map(
      (l) => JSON.parse(l) as { toolCalls?: { result: unknown[]; resultDisplay: string }[] },
    );
    const call = records[2]?.toolCalls?.[0];
    assert.equal(call?.resultDisplay, 'GITHUB_TOKEN=vault://GitHub/token\n');
    assert.deepEqual(call?.result, [
      {
        functionResponse: {
          id: (call?.result[0] as { functionResponse: { id: string } }).functionResponse.id,
          name: 'run_shell_command',
          response: {
            output:
              'Command: cat .env\nDirectory: (root)\nOutput: GITHUB_TOKEN=vault://GitHub/token\n',
          },
        },
      },
    ]);
    const legacy = JSON.parse(readFileSync(geminiLegacy, 'utf8')) as {
      messages: { content: string; toolCalls?: { resultDisplay: string }[] }[];
    };
    assert.match(
      legacy.messages[0]?.content ?? '',
      /^the password is vault:\/\/Rendered\/password, /,
    );
    assert.equal(legacy.messages[1]?.toolCalls?.[0]?.resultDisplay, 'vault://Sentinel/password\n');
    const logs = JSON.parse(readFileSync(geminiLogs, 'utf8')) as { message: string }[];
    assert.match(logs[1]?.message ?? '', /^use Bearer vault:\/\/Filled\/token for the API/);
    // The base64 form's characters are the value's own: the reference takes their place.
    const checkpoint = readFileSync(geminiCheckpoint, 'utf8');
    JSON.parse(checkpoint);
    assert.ok(!checkpoint.includes(Buffer.from(GH).toString('base64')));
    // Aider: the markdown keeps its shape, line for line.
    const aider = readFileSync(aiderChat, 'utf8').split('\n');
    assert.equal(aider[9], '> GITHUB_TOKEN=vault://GitHub/token  ');
    assert.equal(aider[10], '> API_KEY=vault://Sentinel/password  ');
    assert.equal(
      aider[20],
      'curl -H "Authorization: Bearer vault://Filled/token" https://api.example.com/deploy',
    );
    assert.match(
      readFileSync(aiderInput, 'utf8'),
      /^\+export DB_PASSWORD=vault:\/\/Rendered\/password$/m,
    );
    // No temporary file left beside them.
    for (const f of everyFile(home)) assert.doesNotMatch(f.path, /vault-sweep-/);
    const again = await sweep(['--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(findings(again), []);
  });

  test('the sentinel appears in no output, file, temporary file or audit record', async () => {
    const audit = ok(await rig.owner(['audit', '--json']));
    assert.match(audit, /"action":"sweep"/);
    assert.match(audit, /"action":"exposed"/);
    const once = JSON.stringify(SENTINEL).slice(1, -1);
    const needles = [
      SENTINEL,
      once,
      JSON.stringify(once).slice(1, -1),
      Buffer.from(SENTINEL).toString('base64'),
    ];
    for (const n of needles) {
      assert.ok(!audit.includes(n), 'audit');
      for (const o of outputs) {
        assert.ok(!o.stdout.includes(n) && !o.stderr.includes(n), 'sweep output');
      }
      // Every file under the throwaway HOME: transcripts (redacted), the vault, its log, TMPDIR.
      for (const f of everyFile(home)) {
        assert.ok(!f.bytes.includes(Buffer.from(n)), `${f.path} holds the sentinel`);
      }
    }
  });

  test('--backup keeps the original sealed; only the owner opens it', async () => {
    const file = join(home, 'notes', 'backed.log');
    const original = `line one\ntoken ${GH} and ${SENTINEL}\n`;
    writeFileSync(file, original);
    const backups = join(home, 'sweep-backups');
    const r = await sweep(['--paths-only', '--path', file, '--redact', '--backup', backups]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      readFileSync(file, 'utf8'),
      'line one\ntoken vault://GitHub/token and vault://Sentinel/password\n',
    );
    const [name, ...more] = readdirSync(backups);
    assert.equal(more.length, 0);
    const sealed = readFileSync(join(backups, name as string));
    for (const n of [GH, SENTINEL, Buffer.from(SENTINEL).toString('base64')]) {
      assert.ok(!sealed.includes(Buffer.from(n)), 'the backup holds no value in clear');
    }
    assert.equal(lstatSync(join(backups, name as string)).mode & 0o777, 0o600);
    // Opened through the host with the owner's passphrase: the original, byte for byte.
    const opened = await rig.owner(['sweep', '--open-backup', join(backups, name as string)]);
    assert.equal(opened.code, 0, opened.stderr);
    assert.equal(opened.stdout, original);
    assert.match(ok(await rig.owner(['audit'])), /sweep .* backup opened/);
    // A changed byte fails it.
    sealed[sealed.length - 5] = (sealed[sealed.length - 5] as number) ^ 1;
    writeFileSync(join(backups, 'changed.sweep-backup'), sealed);
    const changed = await rig.owner([
      'sweep',
      '--open-backup',
      join(backups, 'changed.sweep-backup'),
    ]);
    assert.match(changed.stderr, /VLT-3037/);
    assert.equal(changed.stdout, '');
  });

  test('an agent’s traps: a link out of the store, a FIFO, a huge file, a long line', async () => {
    const store = join(home, '.claude', 'projects', '-trap');
    mkdirSync(store, { recursive: true });
    mkdirSync(outside, { recursive: true });
    const secretFile = join(outside, 'owner-secret.txt');
    writeFileSync(secretFile, `mine: ${GH}\n`);
    symlinkSync(secretFile, join(store, 'link.jsonl'));
    symlinkSync(outside, join(store, 'linked-dir'));
    symlinkSync('/etc/shadow', join(store, 'shadow.jsonl'));
    const fifo = join(store, 'fifo.jsonl');
    await new Promise<void>((resolve, reject) => {
      const m = spawn('mkfifo', [fifo], { stdio: 'ignore' });
      m.on('error', reject);
      m.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo ${code}`))));
    });
    const huge = join(store, 'huge.jsonl');
    writeFileSync(huge, '');
    truncateSync(huge, 100 * 2 ** 30);
    // ~/.codex itself turned into a link to a place holding a value.
    const elsewhere = join(outside, 'codex-elsewhere');
    mkdirSync(join(elsewhere, 'sessions'), { recursive: true });
    writeFileSync(join(elsewhere, 'sessions', 'x.jsonl'), `${GH}\n`);
    renameSync(join(home, '.codex'), join(home, '.codex-real'));
    symlinkSync(elsewhere, join(home, '.codex'));
    // A name that is an escape sequence for the owner's terminal.
    const ansi = join(store, 'x\x1b]0;pwned\x07\x1b[2J.jsonl');
    writeFileSync(ansi, `${FILLED}\n`);
    // One that turns its line around (a right-to-left override) with a C1 CSI in it.
    const bidi = join(store, 'z\u202elnosj.\u009b2J.jsonl');
    writeFileSync(bidi, `${FILLED}\n`);
    symlinkSync('/etc/shadow', join(store, 'y\x1b[2J.jsonl'));
    const long = join(store, 'long.jsonl');
    writeFileSync(long, Buffer.concat([Buffer.alloc(8 << 20, 'a'), Buffer.from(GH)]));

    const r = await sweep(['--json', '--redact']);
    const files = findings(r).map((f) => `${f.file}:${f.line}`);
    assert.deepEqual(files.sort(), [`${ansi}:1`, `${bidi}:1`, `${long}:1`].sort());
    assert.doesNotMatch(r.stdout, /[\u0080-\u009f\u202a-\u202e]/u);
    const text = await sweep(['--paths-only', '--path', store, '--stored']);
    assert.doesNotMatch(text.stdout + text.stderr, /[\x1b\u0080-\u009f\u202a-\u202e]/u);
    assert.match(text.stderr, /y\\x1b\[2J\.jsonl: a symbolic link/);
    assert.match(r.stderr, /link\.jsonl: a symbolic link \(not followed\)/);
    assert.match(r.stderr, /linked-dir: a symbolic link \(not followed\)/);
    assert.match(r.stderr, /fifo\.jsonl: not a regular file/);
    assert.match(r.stderr, /huge\.jsonl: larger than/);
    assert.match(r.stderr, /\.codex is a symbolic link \(not followed\)/);
    assert.equal(readFileSync(join(elsewhere, 'sessions', 'x.jsonl'), 'utf8'), `${GH}\n`);
    // What the link pointed at is untouched, and still a file of its own.
    assert.equal(readFileSync(secretFile, 'utf8'), `mine: ${GH}\n`);
    assert.ok(lstatSync(join(store, 'link.jsonl')).isSymbolicLink());
  });

  test('--watch catches and redacts a line as it is written, values released since included', async () => {
    const child = spawn(process.execPath, [CLI, 'sweep', '--watch', '--redact', '--json'], {
      env: { ...rig.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { out: output, err: errors, until } = watchOutput(child, 'sweep --watch');
    try {
      await until(() => /watching/.test(errors()));
      const before = output().length;
      const written = Date.now();
      appendFileSync(claudeFile, claudeLine(`leaked again: ${FILLED}`) + '\n');
      await until(() => output().slice(before).includes('"Filled"'));
      const caught = Date.now() - written;
      const found = output()
        .slice(before)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Finding);
      assert.deepEqual(
        found.map((f) => [f.file, f.entry, f.redacted]),
        [[claudeFile, 'Filled', true]],
      );
      const last = readFileSync(claudeFile, 'utf8').trimEnd().split('\n').at(-1) as string;
      assert.match(
        JSON.parse(last).message.content[0].content,
        /leaked again: vault:\/\/Filled\/token/,
      );
      // Printed, not asserted: how long the leak stayed on disk.
      console.log(`# watch: caught and redacted ${caught} ms after the write`);
      // A value released after the watch began: set anew, read by the agent, leaked
      // at once (before the watch has fetched it): found all the same.
      const NEW = `rendered_again_${hex(12)}`;
      await rig.set('Rendered', NEW);
      assert.equal(ok(await rig.agent(['get', 'Rendered'], token)), NEW + '\n');
      const mark = output().length;
      appendFileSync(claudeFile, claudeLine(`new one: ${NEW}`) + '\n');
      await until(() => output().slice(mark).includes('"Rendered"'));
      const second = output()
        .slice(mark)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Finding);
      assert.deepEqual(
        second.map((f) => [f.file, f.entry, f.redacted]),
        [[claudeFile, 'Rendered', true]],
      );
      assert.ok(!readFileSync(claudeFile, 'utf8').includes(NEW), 'redacted');
    } finally {
      await terminate(child);
    }
    outputs.push({
      code: 0,
      signal: null,
      stdout: output(),
      stderr: errors(),
      stdoutBytes: Buffer.from(output()),
    });
  });
});
