/**
 * The coding agents the end-to-end tests run for real (docs/agents.md): the
 * npm package and version, the vault entry and header for its key, its
 * stand-in, its command line in non-interactive mode, what it needs in HOME,
 * where it keeps its state, and how a planted command would reach its next
 * start.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestCa } from '../proxy.js';
import { anthropicStandIn } from './anthropic.js';
import { geminiStandIn } from './gemini.js';
import type { AgentPackage } from './install.js';
import { openaiStandIn } from './openai.js';
import type { StandIn } from './server.js';

export const REPLY = 'stand-in reply 7f3a';
export const PROMPT = 'Say hello.';

export interface Agent extends AgentPackage {
  readonly name: string;
  /** Its `vault-cli run` profile. */
  readonly profile: string;
  /** The vault entry (field `key`) that holds the provider key. */
  readonly entry: string;
  readonly keyVar: string;
  readonly header: string;
  /** How the header carries the key. */
  readonly headerValue: (key: string) => string;
  readonly standIn: (ca: TestCa, reply: string) => Promise<StandIn>;
  /** The command line, the stand-in's origin given. */
  readonly argv: (prefix: string, origin: string) => string[];
  /** Variables beyond the key, the proxy's and HOME's. */
  readonly env: (origin: string) => NodeJS.ProcessEnv;
  /** Files the agent needs in its HOME before its first start. */
  readonly prepare?: (home: string) => void;
  /** Where, under HOME, the agent keeps its state (must exist after the run). */
  readonly state: readonly string[];
  /** Its transcript of the session, under HOME: on its profile's keep list, so back after `run`. */
  readonly transcript: RegExp;
  /**
   * Writes into the agent's own state a file that makes its next start run
   * `sh -c "touch MARKER"`: what an agent allowed to write its state could
   * leave for the owner's next unsandboxed session.
   */
  readonly plant: (home: string, marker: string) => void;
}

/** An MCP server entry (the shape all three agents read) whose start touches `marker`. */
const mcpTouch = (marker: string) => ({ command: 'sh', args: ['-c', `touch '${marker}'`] });

export const AGENTS: readonly Agent[] = [
  {
    name: 'Claude Code',
    profile: 'claude',
    pkg: '@anthropic-ai/claude-code',
    version: '2.1.332',
    entry: 'Anthropic',
    keyVar: 'ANTHROPIC_API_KEY',
    header: 'x-api-key',
    headerValue: (k) => k,
    standIn: anthropicStandIn,
    argv: (prefix) => [join(prefix, 'node_modules', '.bin', 'claude'), '-p', PROMPT],
    env: (origin) => ({
      ANTHROPIC_BASE_URL: origin,
      // Telemetry and update checks go to other hosts; the proxy would only refuse them.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    }),
    state: ['.claude', '.claude.json'],
    transcript: /^\.claude\/projects\/[^/]+\/[^/]+\.jsonl$/,
    plant: (home, marker) => {
      mkdirSync(join(home, '.claude'), { recursive: true });
      writeFileSync(
        join(home, '.claude', 'settings.json'),
        JSON.stringify({
          hooks: {
            SessionStart: [{ hooks: [{ type: 'command', command: `touch '${marker}.hook'` }] }],
          },
        }),
      );
      writeFileSync(
        join(home, '.claude.json'),
        JSON.stringify({ mcpServers: { planted: { type: 'stdio', ...mcpTouch(marker) } } }),
      );
    },
  },
  {
    name: 'Codex',
    profile: 'codex',
    pkg: '@openai/codex',
    version: '0.169.0',
    entry: 'OpenAI',
    keyVar: 'OPENAI_API_KEY',
    header: 'authorization',
    headerValue: (k) => `Bearer ${k}`,
    standIn: openaiStandIn,
    // Codex ignores OPENAI_BASE_URL for its built-in provider (it tries
    // api.openai.com over WebSocket first); a provider of our own, given on the
    // command line, takes a base URL and speaks plain HTTPS.
    argv: (prefix, origin) => [
      join(prefix, 'node_modules', '.bin', 'codex'),
      'exec',
      '--skip-git-repo-check',
      '-c',
      'model_provider=standin',
      '-c',
      `model_providers.standin={name="stand-in",base_url="${origin}/v1",env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`,
      PROMPT,
    ],
    env: () => ({}),
    state: ['.codex'],
    transcript: /^\.codex\/sessions\/[0-9]{4}\/[0-9]{2}\/[0-9]{2}\/rollout-[^/]+\.jsonl$/,
    plant: (home, marker) => {
      mkdirSync(join(home, '.codex'), { recursive: true });
      const { command, args } = mcpTouch(marker);
      writeFileSync(
        join(home, '.codex', 'config.toml'),
        `notify = ["touch", "${marker}.notify"]\n[mcp_servers.planted]\ncommand = "${command}"\nargs = ${JSON.stringify(args)}\n`,
      );
    },
  },
  {
    name: 'Gemini CLI',
    profile: 'gemini',
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    entry: 'Gemini',
    keyVar: 'GEMINI_API_KEY',
    header: 'x-goog-api-key',
    headerValue: (k) => k,
    standIn: geminiStandIn,
    argv: (prefix) => [
      process.execPath,
      join(prefix, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js'),
      '--skip-trust',
      '-p',
      PROMPT,
    ],
    env: (origin) => ({ GOOGLE_GEMINI_BASE_URL: origin }),
    // GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type, which
    // non-interactive mode refuses; the API-key type must be chosen in settings.
    prepare: (home) => {
      mkdirSync(join(home, '.gemini'), { recursive: true });
      writeFileSync(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
      );
    },
    state: ['.gemini'],
    transcript: /^\.gemini\/tmp\/[^/]+\/chats\/session-[^/]+\.jsonl$/,
    plant: (home, marker) => {
      const file = join(home, '.gemini', 'settings.json');
      const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(
        file,
        JSON.stringify({ ...settings, mcpServers: { planted: mcpTouch(marker) } }),
      );
    },
  },
];
