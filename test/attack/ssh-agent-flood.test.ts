// Floods against a real `vault-cli ssh-agent` (issue 41: "hold no more
// memory than a stated bound"). 300 connections each state a message of
// 256 KiB - 1 (the largest taken) and send 200 KiB of it, never the rest.
// Before, the agent kept 64 of them open and refused every further
// connection, and its RSS grew by 58 MiB: the copies made growing each
// connection's buffer and the socket's reads were dead but waited for V8's
// collector. Now every byte it holds for clients is within one budget
// (src/cli/ssh-agent.ts, BUFFER_BUDGET), the largest holder closed past it;
// buffers are freed as soon as they are dead; a connection past the 64th
// closes the least recently active one. So a fresh client is answered during
// and after, and the RSS grows by the budget plus an allowance (below). The
// same holds for session-binds (each was kept whatever its size) and for
// replies a client never reads (they piled up unsent), and SIGTERM ends the
// agent while clients hold connections (before, it waited on them forever).
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { encodeRequest, frame } from '../../src/core/ssh-wire.js';
import { ok, Rig, terminate } from '../support/rig.js';
import { startSshAgentProcess } from '../support/ssh-agent.js';

/** The agent's budget for bytes of messages (BUFFER_BUDGET in src/cli/ssh-agent.ts). */
const BUDGET_MIB = 1;
/**
 * What the agent's RSS may grow past the budget, none of it bytes the agent
 * keeps for a client (those are counted, BUFFER_BUDGET): V8's young
 * generation, which grows under a flood's garbage (socket objects, events,
 * parsed messages) before it is collected, up to 6 MiB here; and malloc
 * keeping freed native blocks (each read's 64 KiB buffer, each socket's
 * handle) for reuse rather than giving them back, up to about 10 MiB. Measured
 * on this build: 4-6 MiB for the 300 half-sent messages, 12-13 MiB for the
 * binds, 14-15 MiB for the unread replies. Before the fix: 55-58, 69.5 and
 * 500 MiB (and 65 MiB for the first with the budget but without freeing
 * buffers at once).
 */
const ALLOWANCE_MIB = 20;
const FLOOD = 300;
const DECLARED = 256 * 1024 - 1;
const SENT = 200 * 1024;
const MAX_CONNECTIONS = 64;

const rig = new Rig();
let token = '';
const agents: ChildProcess[] = [];
const open = new Set<Socket>();

before(async () => {
  await rig.create();
  const key = join(rig.root, 'deploy');
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'deploy', '-f', key]);
  assert.equal(r.status, 0, String(r.stderr));
  ok(await rig.owner(['entry', 'import-ssh', 'deploy', key]));
  token = await rig.addAgent('flooder', ['deploy']);
});

after(async () => {
  // Nothing here waits on a peer: sockets are destroyed, each agent gets
  // SIGTERM and, 15 s later, SIGKILL (terminate), the host `daemon stop`.
  for (const c of open) c.destroy();
  try {
    await Promise.allSettled(agents.map((a) => terminate(a)));
  } finally {
    await rig.dispose();
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `vault-cli ssh-agent` offering `deploy`; resolves with the process and its socket. */
async function startAgent(): Promise<{ child: ChildProcess; pid: number; sock: string }> {
  const { child, sock } = await startSshAgentProcess(rig, token, ['deploy']);
  agents.push(child);
  assert.ok(child.pid !== undefined);
  return { child, pid: child.pid, sock };
}

/** A field of /proc/<pid>/status in KiB (VmRSS, VmHWM). */
function statusKib(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
    readFileSync(`/proc/${pid}/status`, 'utf8'),
  );
  assert.ok(m !== null, `${field} of ${pid}`);
  return Number(m[1]);
}

/** The agent's open sockets: the listener, its link to the host and the clients it keeps. */
const socketFds = (pid: number): number =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;

/** Sends `request` on a fresh connection: the reply's type (12 identities, 6 success) or what went wrong. */
function ask(sock: string, request: Buffer = encodeRequest.identities()): Promise<number | string> {
  return new Promise((resolve) => {
    const c = connect(sock);
    const got: Buffer[] = [];
    const timer = setTimeout(() => {
      c.destroy();
      resolve('no answer in 10 s');
    }, 10_000);
    const done = (v: number | string) => {
      clearTimeout(timer);
      c.destroy();
      resolve(v);
    };
    c.on('data', (d: Buffer) => {
      got.push(d);
      const all = Buffer.concat(got);
      if (all.length >= 4 && all.length >= 4 + all.readUInt32BE(0)) done(all[4] ?? -1);
    });
    c.on('error', (e) => done(`error: ${e.message}`));
    c.on('close', () => done('closed unanswered'));
    c.write(request);
  });
}

/**
 * Opens a connection kept open (in `open` until the agent closes it) and
 * writes `bytes`; resolves once written or closed, or when `replies` replies
 * have come back.
 */
function hold(sock: string, bytes: Buffer, replies = 0): Promise<void> {
  return new Promise((resolve) => {
    const c = connect(sock);
    open.add(c);
    let got = 0;
    c.on('error', () => c.destroy());
    c.on('close', () => {
      open.delete(c);
      resolve();
    });
    if (replies > 0) {
      c.on('data', (d: Buffer) => {
        got += d.length;
        if (got >= 5 * replies) resolve();
      });
      c.write(bytes);
    } else c.write(bytes, () => resolve());
  });
}

/** Opens `n` held connections, 20 at a time. */
async function holdMany(n: number, make: () => Promise<void>): Promise<void> {
  for (let i = 0; i < n; i += 20)
    await Promise.all(Array.from({ length: Math.min(20, n - i) }, make));
}

function closeAll(): void {
  for (const c of open) c.destroy();
  open.clear();
}

/** Waits until the agent's RSS has not moved by more than 256 KiB over half a second (at most 15 s). */
async function settle(pid: number): Promise<void> {
  let last = statusKib(pid, 'VmRSS');
  for (let i = 0; i < 60; i++) {
    await sleep(250);
    const now = statusKib(pid, 'VmRSS');
    if (Math.abs(now - last) < 256 && i > 1) return;
    last = now;
  }
}

interface Flooded {
  /** The growth of the agent's peak RSS over the flood, MiB. */
  growth: number;
  /**
   * Connections of the flood not seen closed by the client (one that never
   * reads sees no close), and the agent's own sockets, the measure.
   */
  kept: number;
  fds: number;
  /** A fresh client's reply during the flood and after it. */
  during: number | string;
  afterwards: number | string;
  /** RSS above the start once the flood's connections are closed, MiB. */
  rest: number;
}

/**
 * Runs `flood` against a fresh agent, after `warm` (the same on a small
 * scale, so that the RSS measured from is the code's, not the flood's).
 */
async function flooded(
  t: { diagnostic(s: string): void },
  warm: (sock: string) => Promise<void>,
  flood: (sock: string) => Promise<void>,
): Promise<Flooded> {
  const { pid, sock } = await startAgent();
  assert.equal(await ask(sock), 12);
  await warm(sock);
  closeAll();
  await sleep(500);
  await settle(pid);
  const base = statusKib(pid, 'VmRSS');
  // The peak from here on (VmHWM), as the kernel counts it.
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  await flood(sock);
  await settle(pid);
  const during = await ask(sock);
  const kept = open.size;
  const fds = socketFds(pid);
  const growth = (statusKib(pid, 'VmHWM') - base) / 1024;
  closeAll();
  await sleep(500);
  await settle(pid);
  const afterwards = await ask(sock);
  const rest = (statusKib(pid, 'VmRSS') - base) / 1024;
  t.diagnostic(
    `RSS ${(base / 1024).toFixed(1)} MiB before; peak growth ${growth.toFixed(1)} MiB, ` +
      `${rest.toFixed(1)} MiB once closed; ${kept} connections kept open, ` +
      `${fds} sockets in the agent; a fresh client during: ${during}, after: ${afterwards}`,
  );
  return { growth, kept, fds, during, afterwards, rest };
}

function assertBounded(r: Flooded): void {
  const bound = BUDGET_MIB + ALLOWANCE_MIB;
  assert.ok(r.growth < bound, `RSS grew ${r.growth.toFixed(1)} MiB, past ${bound} MiB`);
  assert.ok(r.kept <= MAX_CONNECTIONS, `${r.kept} connections kept`);
  // The listener and the link to the host besides the clients.
  assert.ok(r.fds <= MAX_CONNECTIONS + 4, `${r.fds} sockets open in the agent`);
  assert.equal(r.during, 12, 'a fresh client is answered during the flood');
  assert.equal(r.afterwards, 12, 'and after it');
  assert.ok(r.rest < bound, `RSS ${r.rest.toFixed(1)} MiB above the start once closed`);
}

test('300 half-sent 256 KiB messages: the agent keeps at most 64 connections and its budget of bytes, and answers a fresh client during and after', async (t) => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(DECLARED);
  const half = Buffer.concat([head, Buffer.alloc(SENT, 0x41)]);
  const r = await flooded(
    t,
    (sock) => holdMany(8, () => hold(sock, half)),
    (sock) => holdMany(FLOOD, () => hold(sock, half)),
  );
  assertBounded(r);
});

/** A session-bind as the wire carries it, its host key `size` bytes (the agent checks none of it; the host would). */
const bind = (size: number): Buffer =>
  encodeRequest.bind({
    hostKey: Buffer.alloc(size, 0x42),
    sessionId: Buffer.alloc(32, 0x43),
    signature: Buffer.alloc(100, 0x44),
    forwarding: false,
  });

test('session-binds: 64 KiB ones refused; 7 KiB ones kept within the budget; a real-sized one taken', async (t) => {
  const big = Buffer.concat(Array.from({ length: 16 }, () => bind(64 * 1024)));
  const full = Buffer.concat(Array.from({ length: 16 }, () => bind(7 * 1024)));
  let real: number | string = '';
  const r = await flooded(
    t,
    (sock) => holdMany(4, () => hold(sock, big, 16)),
    async (sock) => {
      // Before: 32 x 16 x 64 KiB kept, 32 MiB; then 64 x 16 x 7 KiB, 7 MiB.
      await holdMany(32, () => hold(sock, big, 16));
      await holdMany(64, () => hold(sock, full, 16));
      real = await ask(sock, bind(51));
    },
  );
  assert.equal(real, 6, 'a session-bind of a real size is taken (SUCCESS)');
  assertBounded(r);
});

test('replies never read: 8 connections each pipelining 100,000 requests; the agent holds its budget, not the replies', async (t) => {
  const many = Buffer.concat(Array.from({ length: 100_000 }, () => encodeRequest.identities()));
  // Before: each connection's 100,000 replies (about 8 MB) queued unsent.
  const r = await flooded(
    t,
    (sock) => hold(sock, many.subarray(0, 50_000)),
    (sock) => holdMany(8, () => hold(sock, many)),
  );
  assertBounded(r);
});

test('SIGTERM ends the agent at once while clients hold connections half-sent', async (t) => {
  const { child, sock } = await startAgent();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(DECLARED);
  await holdMany(3, () => hold(sock, Buffer.concat([head, Buffer.alloc(1024)])));
  await holdMany(3, () => hold(sock, frame(Buffer.from([11])).subarray(0, 3)));
  const exited = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  child.kill('SIGTERM');
  const gone = await exited;
  if (!gone) child.kill('SIGKILL');
  assert.ok(gone, 'the agent exited within 10 s of SIGTERM');
  // By its handler, not SIGTERM's default action: once, of many runs under
  // load, the signal came between the SSH_AUTH_SOCK line and the handler.
  t.diagnostic(`exit ${child.exitCode} ${child.signalCode}`);
  assert.deepEqual([child.exitCode, child.signalCode], [0, null]);
});
