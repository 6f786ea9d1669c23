/**
 * A real PostgreSQL for a test file: a cluster made by initdb in a temp dir,
 * listening on a Unix socket in that dir only (no TCP), run by an OS user the
 * rig creates when the tests run as root (the server refuses to run as root)
 * and removes after. One cluster per test file; each test takes a database
 * of its own in it (`database()`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';

/** Where Debian's postgresql package puts its programs (the newest first), else PATH. */
export function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(base, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path.slice(0, path.lastIndexOf('/')) : null;
}

const SUPERUSER = 'vault';

export class Postgres {
  private server: ChildProcess | null = null;
  private exited: Promise<unknown> = Promise.resolve();
  private databases = 0;

  /** The data directory the server runs on (a standby's, after `promote`). */
  private dataDir: string;

  private constructor(
    readonly bin: string,
    readonly dir: string,
    /** The OS user the server runs as (created here when running as root), or null: ours. */
    readonly osUser: string | null,
    private readonly ids: { uid: number; gid: number } | null,
  ) {
    this.dataDir = join(dir, 'data');
  }

  get socketDir(): string {
    return join(this.dir, 'sock');
  }

  private get data(): string {
    return this.dataDir;
  }

  /** The server's pid (the postmaster), while it runs. */
  get pid(): number | null {
    return this.server?.pid ?? null;
  }

  /**
   * A synchronous standby of this cluster (pg_basebackup, streaming, on a
   * socket of its own at port 5433), and the primary made to wait for it at
   * every commit (synchronous_standby_names). For bench/team-standby.ts.
   */
  async startStandby(): Promise<ChildProcess> {
    const data = join(this.dir, 'standby');
    const sock = join(this.dir, 'standby-sock');
    mkdirSync(sock, { mode: 0o700 });
    if (this.ids !== null) chownSync(sock, this.ids.uid, this.ids.gid);
    this.run('pg_basebackup', [
      '-h',
      this.socketDir,
      '-U',
      SUPERUSER,
      '-D',
      data,
      // A fast checkpoint: the default spread one waits minutes for an idle cluster.
      '--checkpoint=fast',
      '-R',
      '-X',
      'stream',
    ]);
    const standby = spawn(
      join(this.bin, 'postgres'),
      [
        '-D',
        data,
        '-k',
        sock,
        '-p',
        '5433',
        '-c',
        'listen_addresses=',
        '-c',
        'cluster_name=standby',
      ],
      {
        cwd: this.dir,
        ...(this.ids ?? {}),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
        stdio: 'ignore',
      },
    );
    this.psql('postgres', "ALTER SYSTEM SET synchronous_standby_names = '*'");
    this.psql('postgres', 'SELECT pg_reload_conf()');
    for (let i = 0; i < 200; i++) {
      const n = this.psql(
        'postgres',
        "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'",
      );
      if (n.trim() === '1') return standby;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the standby did not become synchronous');
  }

  /**
   * After the primary died: promotes the standby started by `startStandby`,
   * stops it, and starts it again as this cluster, on the primary's socket,
   * so the hosts' URL reaches it unchanged.
   */
  async promoteStandby(standby: ChildProcess): Promise<void> {
    const data = join(this.dir, 'standby');
    this.run('pg_ctl', ['promote', '-w', '-D', data]);
    const gone = once(standby, 'exit');
    standby.kill('SIGINT');
    await gone;
    this.server = null;
    this.dataDir = data;
    // Its own replication settings no longer apply: it serves alone now.
    await this.resume();
    this.psql('postgres', "ALTER SYSTEM SET synchronous_standby_names = ''");
    this.psql('postgres', 'SELECT pg_reload_conf()');
  }

  /** SIGKILL to the postmaster, as a machine's crash would end it; its backends follow. */
  async crash(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null || server.exitCode !== null) return;
    server.kill('SIGKILL');
    await this.exited;
  }

  /**
   * Makes and starts a cluster.
   * @throws when no PostgreSQL is installed (.ci/run installs it).
   */
  static async start(): Promise<Postgres> {
    const bin = postgresBin();
    if (bin === null) throw new Error('no initdb found; .ci/run installs the postgresql package');
    const dir = mkdtempSync(join(tmpdir(), 'vault-pg-'));
    let osUser: string | null = null;
    let ids: { uid: number; gid: number } | null = null;
    if (process.getuid?.() === 0) {
      osUser = `vtpg${randomBytes(4).toString('hex')}`;
      // Test files run in parallel: useradd may find /etc/passwd locked by another's.
      let made = spawnSync('true', { encoding: 'utf8' });
      for (let attempt = 0; attempt < 20; attempt++) {
        made = spawnSync(
          'useradd',
          ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', osUser],
          { encoding: 'utf8' },
        );
        if (made.status === 0) break;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
      if (made.status !== 0) throw new Error(`useradd failed: ${String(made.stderr)}`);
      const uid = Number(spawnSync('id', ['-u', osUser], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', osUser], { encoding: 'utf8' }).stdout.trim());
      ids = { uid, gid };
      chownSync(dir, uid, gid);
    }
    const pg = new Postgres(bin, dir, osUser, ids);
    try {
      mkdirSync(pg.socketDir, { mode: 0o700 });
      if (ids !== null) chownSync(pg.socketDir, ids.uid, ids.gid);
      pg.run('initdb', [
        '-D',
        pg.data,
        '-U',
        SUPERUSER,
        '-A',
        'trust',
        '--no-sync',
        '-E',
        'UTF8',
        '--locale',
        'C',
      ]);
      await pg.resume();
    } catch (err) {
      await pg.stop();
      throw err;
    }
    return pg;
  }

  /** Runs one of the cluster's programs as its user; its stdout. */
  run(program: string, args: readonly string[]): string {
    const out = spawnSync(join(this.bin, program), args, {
      encoding: 'utf8',
      cwd: this.dir,
      ...(this.ids ?? {}),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (out.status !== 0) throw new Error(`${program} failed: ${out.stderr}`);
    return out.stdout;
  }

  /** Starts the server (again, after `halt`), and waits until it takes connections. */
  async resume(): Promise<void> {
    const server = spawn(
      join(this.bin, 'postgres'),
      [
        '-D',
        this.data,
        '-k',
        this.socketDir,
        '-c',
        'listen_addresses=',
        '-c',
        'max_connections=60',
        '-c',
        'shared_buffers=16MB',
      ],
      {
        cwd: this.dir,
        ...(this.ids ?? {}),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let log = '';
    server.stderr?.on('data', (d: Buffer) => {
      if (log.length < 20_000) log += d.toString();
    });
    this.server = server;
    this.exited = once(server, 'exit');
    for (let i = 0; i < 300; i++) {
      const ready = spawnSync(
        join(this.bin, 'pg_isready'),
        ['-h', this.socketDir, '-U', SUPERUSER, '-d', 'postgres'],
        { encoding: 'utf8' },
      );
      if (ready.status === 0) return;
      if (server.exitCode !== null) throw new Error(`postgres exited: ${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`postgres did not start: ${log}`);
  }

  /** Stops the server (fast shutdown: sessions ended, data kept) and waits for it. */
  async halt(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null || server.exitCode !== null) return;
    server.kill('SIGINT');
    await this.exited;
  }

  /** A new, empty database of this cluster, and the store URL naming it (no password). */
  database(): { name: string; url: string } {
    const name = `vault${++this.databases}`;
    this.psql('postgres', `CREATE DATABASE ${name}`);
    return { name, url: this.url(name) };
  }

  url(database: string): string {
    return `postgresql://${SUPERUSER}@/${database}?host=${encodeURIComponent(this.socketDir)}`;
  }

  /** One SQL statement's rows, unaligned, as psql prints them. */
  psql(database: string, sql: string): string {
    return this.run('psql', [
      '-h',
      this.socketDir,
      '-U',
      SUPERUSER,
      '-d',
      database,
      '-X',
      '-A',
      '-t',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      sql,
    ]);
  }

  /** The whole database as pg_dump writes it (plain SQL, bytea as hex). */
  dump(database: string): string {
    return this.run('pg_dump', ['-h', this.socketDir, '-U', SUPERUSER, '-d', database]);
  }

  /** Stops the server, removes its files and the OS user made for it. */
  async stop(): Promise<void> {
    await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
    if (this.osUser !== null) {
      for (let attempt = 0; attempt < 20; attempt++) {
        if (spawnSync('userdel', [this.osUser]).status === 0) break;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  }
}
