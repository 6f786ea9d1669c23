// The framed host channel (issue 28) holds every check an HTTP request meets:
// the caller is the connection's peer as the kernel recorded it, a frame is at
// most 4 MiB and drawn from the intake pool before it is read, a frame begun
// must arrive whole, a process past 128 connections is refused, and owner
// commands never go on it. Each attack below leaves the host serving.
import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HostChannel } from '../../src/client/channel.js';
import { VaultError } from '../../src/core/errors.js';
import { alive, hostPid } from '../support/e2e-helpers.js';
import { CLI, Rig, ok } from '../support/rig.js';

const MiB = 1024 * 1024;

interface Answer {
  readonly ok: boolean;
  readonly code?: string;
  readonly result?: { values?: string[]; agent?: string };
}

/** A request frame written by hand: length, id, op name, JSON body (or raw bytes). */
function frame(id: number, op: string, body: object | Buffer): Buffer {
  const json = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const name = Buffer.from(op);
  const head = Buffer.alloc(9);
  head.writeUInt32BE(1 + name.length + json.length, 0);
  head.writeUInt32BE(id, 4);
  head[8] = name.length;
  return Buffer.concat([head, name, json]);
}

/** A connection to the host that asked for the channel: its HTTP answer, then the frames it gets. */
class Raw {
  head = '';
  readonly replies = new Map<number, Answer>();
  closed = false;
  private buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;

  private constructor(readonly sock: Socket) {
    sock.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.parse();
      this.wake?.();
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  static async open(path: string): Promise<Raw> {
    const raw = new Raw(connect(path));
    raw.sock.write(
      'GET /v1/channel HTTP/1.1\r\nHost: vault-host\r\nConnection: Upgrade\r\nUpgrade: vault-channel/1\r\n\r\n',
    );
    await raw.until(() => raw.head !== '' || raw.closed);
    return raw;
  }

  private parse(): void {
    if (this.head === '') {
      const split = this.buf.indexOf('\r\n\r\n');
      if (split < 0) return;
      this.head = this.buf.subarray(0, split).toString('latin1');
      this.buf = this.buf.subarray(split + 4);
      if (!this.head.startsWith('HTTP/1.1 101 ')) return;
    }
    if (!this.head.startsWith('HTTP/1.1 101 ')) return;
    while (this.buf.length >= 8) {
      const length = this.buf.readUInt32BE(0);
      if (this.buf.length < 8 + length) return;
      const id = this.buf.readUInt32BE(4);
      const json = this.buf.subarray(8, 8 + length).toString('utf8');
      this.buf = this.buf.subarray(8 + length);
      this.replies.set(id, JSON.parse(json) as Answer);
    }
  }

  /** What came after the head, when the host answered with plain HTTP. */
  get body(): string {
    return this.buf.toString('utf8');
  }

  async until(done: () => boolean): Promise<void> {
    while (!done()) {
      await new Promise<void>((r) => {
        this.wake = r;
        // Polled too: a reply or a close may come between the check and the wait.
        setTimeout(r, 50);
      });
      this.wake = null;
    }
  }

  /** The reply to `id`; fails the test when the connection closes without one. */
  async reply(id: number): Promise<Answer> {
    await this.until(() => this.replies.has(id) || this.closed);
    const r = this.replies.get(id);
    assert.ok(r !== undefined, `no reply to frame ${id} before the connection closed`);
    return r;
  }
}

/** A resolve through the channel as the proxy makes it, on a fresh connection: the host is serving. */
async function served(rig: Rig, token: string): Promise<void> {
  const raw = await Raw.open(join(rig.vaultDir, 'host.sock'));
  raw.sock.write(frame(1, 'resolve', { token, refs: [{ entry: 'A', field: 'password' }] }));
  const r = await raw.reply(1);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(Buffer.from(r.result?.values?.[0] ?? '', 'base64').toString(), 'value-a');
  raw.sock.destroy();
}

describe('the framed host channel', () => {
  const rig = new Rig();
  let sock = '';
  let token = '';
  before(async () => {
    await rig.create();
    await rig.set('A', 'value-a');
    await rig.set('B', 'value-b');
    token = await rig.addAgent('chan', ['A'], ['--per-minute', '10000', '--per-hour', '10000']);
    sock = join(rig.vaultDir, 'host.sock');
  });
  after(() => rig.dispose());

  test('frames in one write are each judged and answered by id; the audit names the connection’s peer, not what a frame claims', async () => {
    const raw = await Raw.open(sock);
    assert.match(raw.head, /^HTTP\/1\.1 101 /);
    const claim = { source: 'pid:1 uid:0', pid: 1, uid: 0 };
    raw.sock.write(
      Buffer.concat([
        frame(7, 'resolve', { token, refs: [{ entry: 'A', field: 'password' }], ...claim }),
        frame(9, 'resolve', { token, refs: [{ entry: 'B', field: 'password' }] }),
        frame(11, 'whoami', { token }),
      ]),
    );
    const [a, b, who] = await Promise.all([raw.reply(7), raw.reply(9), raw.reply(11)]);
    assert.equal(Buffer.from(a.result?.values?.[0] ?? '', 'base64').toString(), 'value-a');
    assert.deepEqual([b.ok, b.code], [false, 'VLT-2041']);
    assert.equal(who.result?.agent, 'chan');
    raw.sock.destroy();
    const records = ok(await rig.owner(['audit', '--agent', 'chan', '--json']))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; entry: string; source: string });
    const fill = records.find((r) => r.action === 'fill' && r.entry === 'A');
    assert.equal(fill?.source, `pid:${process.pid} uid:${process.getuid?.()}`);
    assert.ok(!records.some((r) => r.source.startsWith('pid:1 ')));
    assert.ok(records.some((r) => r.action === 'denied' && r.entry === 'B'));
  });

  test('an oversize frame is refused (VLT-1002) before it is read, and its connection closed', async () => {
    const raw = await Raw.open(sock);
    const head = Buffer.alloc(8);
    head.writeUInt32BE(64 * MiB, 0);
    head.writeUInt32BE(3, 4);
    raw.sock.write(Buffer.concat([head, Buffer.alloc(64 * 1024, 0x41)]));
    const r = await raw.reply(3);
    assert.deepEqual([r.ok, r.code], [false, 'VLT-1002']);
    await raw.until(() => raw.closed);
    await served(rig, token);
  });

  test('garbage after the upgrade, an owner command and an unknown operation are refused; the host serves on', async () => {
    const pid = await hostPid(rig);
    // An owner command with a passphrase: never served on the channel, never done.
    const owner = await Raw.open(sock);
    owner.sock.write(
      Buffer.concat([
        frame(1, 'agent.lock', { name: 'chan', passphrase: 'x'.repeat(16) }),
        frame(2, 'no.such', {}),
        frame(3, 'resolve', Buffer.from('{"token": not json')),
        frame(4, 'resolve', Buffer.from('[1,2]')),
      ]),
    );
    for (const id of [1, 2, 3, 4]) {
      const r = await owner.reply(id);
      assert.deepEqual([r.ok, r.code], [false, 'VLT-1001'], `frame ${id}`);
    }
    owner.sock.destroy();
    const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'chan', '--json']))) as {
      state: string;
    };
    assert.equal(shown.state, 'active');
    // Bytes that are no frame at all: a length beyond the limit, or a payload that means nothing.
    for (const junk of [
      Buffer.from('\xff\xfe\xfd\xfc garbage garbage garbage', 'latin1'),
      Buffer.from('GET / HTTP/1.1\r\n\r\n'),
      Buffer.from([0, 0, 0, 1, 0, 0, 0, 5, 0]),
      Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]),
    ]) {
      const raw = await Raw.open(sock);
      raw.sock.write(junk);
      // Answered as a refusal, or cut: either way no value and no crash.
      await raw.until(() => raw.closed || raw.replies.size > 0);
      for (const r of raw.replies.values()) assert.equal(r.ok, false);
      raw.sock.destroy();
    }
    assert.ok(alive(pid));
    assert.equal(await hostPid(rig), pid);
    await served(rig, token);
  });

  test('half frames then silence: beyond the pool refused (VLT-3012), small frames and the owner served, the silent ones closed', async () => {
    // Eight connections each announce a 4 MiB frame, send 1 KiB of it and
    // fall silent: together they draw the 32 MiB pool down.
    const held: Raw[] = [];
    for (let i = 0; i < 8; i++) {
      const raw = await Raw.open(sock);
      const f = frame(1, 'resolve', Buffer.alloc(4 * MiB - 20, 0x20));
      raw.sock.write(f.subarray(0, 1024));
      held.push(raw);
    }
    // A ninth large frame finds no room: read, dropped and refused.
    const ninth = await Raw.open(sock);
    ninth.sock.write(frame(5, 'resolve', Buffer.alloc(4 * MiB - 20, 0x20)));
    const refused = await ninth.reply(5);
    assert.deepEqual([refused.ok, refused.code], [false, 'VLT-3012']);
    // A small one is served all along, and so is the owner.
    await served(rig, token);
    ok(await rig.owner(['entry', 'ls']));
    // The silent ones are closed by the host, and what they held is free again.
    for (const raw of held) await raw.until(() => raw.closed);
    ninth.sock.destroy();
    const tenth = await Raw.open(sock);
    tenth.sock.write(frame(6, 'resolve', Buffer.alloc(4 * MiB - 20, 0x20)));
    const kept = await tenth.reply(6);
    // Read whole this time: a body of spaces is no request (VLT-1001), not a full pool.
    assert.deepEqual([kept.ok, kept.code], [false, 'VLT-1001']);
    tenth.sock.destroy();
  });

  test('an idle channel is closed by the host with its goodbye; HostChannel then opens a new one', async () => {
    const channel = new HostChannel({
      vaultDir: rig.vaultDir,
      daemon: { node: process.execPath, script: CLI, env: rig.env },
      autoStart: false,
    });
    const raw = await Raw.open(sock);
    try {
      assert.deepEqual(await channel.call('whoami', { token }), { agent: 'chan' });
      // Nothing sent: the host says goodbye (id 0) and closes, so an idle proxy keeps no host alive.
      await raw.until(() => raw.closed);
      assert.equal(raw.replies.get(0)?.ok, true);
      // The channel's own connection went the same way; the next call is served on a new one.
      const r = await channel.call('resolve', { token, refs: [{ entry: 'A', field: 'password' }] });
      assert.equal(Buffer.from(r.values[0] ?? '', 'base64').toString(), 'value-a');
    } finally {
      channel.close();
      raw.sock.destroy();
    }
  });

  test('a process that holds 128 connections is refused the channel (VLT-3012)', async () => {
    const crowd: Socket[] = [];
    try {
      for (let i = 0; i < 128; i++) {
        const s = connect(sock);
        await new Promise<void>((r, j) => {
          s.once('connect', r);
          s.once('error', j);
        });
        crowd.push(s);
      }
      const raw = await Raw.open(sock);
      assert.match(raw.head, /^HTTP\/1\.1 200 /);
      await raw.until(() => raw.closed || raw.body.includes('}'));
      assert.match(raw.body, /"code":"VLT-3012"/);
      raw.sock.destroy();
    } finally {
      for (const s of crowd) s.destroy();
    }
    // The host counts a connection until it has handled its close, a moment
    // after the client's: the process is given the channel again once it has
    // (at once, seen under load, this fresh connection was still refused).
    for (let tries = 0; tries < 50; tries++) {
      const probe = await Raw.open(sock);
      probe.sock.destroy();
      if (probe.head.startsWith('HTTP/1.1 101 ')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await served(rig, token);
  });
});

test('HostChannel sends an owner’s command as a checked one-off call: an impostor on the socket gets no passphrase', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vault-chan-'));
  const got: Buffer[] = [];
  const impostor = createServer((c) => {
    c.on('data', (d: Buffer) => got.push(d));
    c.on('error', () => undefined);
  });
  await new Promise<void>((r) => impostor.listen(join(dir, 'host.sock'), r));
  const channel = new HostChannel({
    vaultDir: dir,
    daemon: { node: process.execPath, script: CLI, env: { HOME: dir } },
    autoStart: false,
  });
  const sentinel = `owner-pass-${process.pid}-${Date.now()}`;
  try {
    await assert.rejects(
      channel.call('agent.lock', { name: 'x', passphrase: sentinel } as never),
      (err: unknown) => err instanceof VaultError,
    );
    assert.ok(!Buffer.concat(got).toString('latin1').includes(sentinel));
  } finally {
    channel.close();
    impostor.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
