/**
 * A real OpenSSH server for the SSH agent tests: a user made for the test
 * (useradd; removed after), Debian's /usr/sbin/sshd on a random loopback
 * port with its host key, config and authorized_keys in a temp directory,
 * and an ssh client config that trusts that host key only and offers only
 * the agent's key (IdentitiesOnly with the public key file: ssh then signs
 * through SSH_AUTH_SOCK, never with a key file of its own).
 *
 * It needs root (the CI runs as root); `sshdSkip()` says why not otherwise.
 * Besides its temp directory and the user (passwd, group, shadow), it makes
 * sshd's privilege-separation directory /run/sshd when missing (a path
 * compiled into sshd) and removes it after.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface Sshd {
  readonly user: string;
  readonly home: string;
  readonly port: number;
  /** The server host key's fingerprint (SHA256:...). */
  readonly hostKeyFingerprint: string;
  /** The server's host private key file (a test signs session-binds with it, as the server does). */
  readonly hostKeyFile: string;
  /** The server host key's public line (type and base64), for a known_hosts of one's own. */
  readonly hostKeyLine: string;
  /** Where authorized_keys is read from; write the vault key's public line here. */
  readonly authorizedKeys: string;
  /** The ssh client config (`ssh -F`), for host alias `target`. */
  clientConfig(identityPub: string): string;
  /** `ssh -F <config>`, for GIT_SSH_COMMAND. */
  sshCommand(identityPub: string): string;
  /** What sshd logged so far. */
  log(): string;
  stop(): Promise<void>;
}

export function sshdSkip(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (useradd, sshd)';
  if (!existsSync('/usr/sbin/sshd')) return 'no /usr/sbin/sshd';
  return false;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitListening(child: ChildProcess, logs: Buffer[]): Promise<void> {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${Buffer.concat(logs).toString()}`);
    if (/Server listening/.test(Buffer.concat(logs).toString())) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sshd did not listen: ${Buffer.concat(logs).toString()}`);
}

/** Starts sshd for a new user `user`; stop() ends it and removes the user and the files. */
export async function startSshd(user: string): Promise<Sshd> {
  const dir = mkdtempSync('/tmp/vault-sshd-');
  // The user's home and sshd's files must be reachable by the user sshd switches to.
  chmodSync(dir, 0o755);
  const home = join(dir, 'home');
  const madeRunDir = !existsSync('/run/sshd');
  if (madeRunDir) mkdirSync('/run/sshd', { mode: 0o755 });
  execFileSync('useradd', ['-M', '-d', home, '-s', '/bin/sh', user]);
  // An account with `!` as its password is locked, and sshd refuses it even a key.
  execFileSync('usermod', ['-p', '*', user]);
  mkdirSync(home);
  execFileSync('chown', [`${user}:`, home]);
  const hostKey = join(dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  const fp = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKey}.pub`], {
    encoding: 'utf8',
  }).split(' ')[1] as string;
  const authorizedKeys = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeys, '', { mode: 0o644 });
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      `AllowUsers ${user}`,
      'AllowAgentForwarding yes',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${readFileSync(`${hostKey}.pub`, 'utf8')}`);
  const logs: Buffer[] = [];
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (c: Buffer) => logs.push(c));
  try {
    await waitListening(child, logs);
  } catch (err) {
    child.kill('SIGKILL');
    execFileSync('userdel', [user]);
    throw err;
  }
  const clientConfig = (identityPub: string): string => {
    const path = join(dir, `ssh_config_${identityPub.replace(/[^A-Za-z0-9]/g, '_').slice(-40)}`);
    writeFileSync(
      path,
      [
        'Host target',
        '  HostName 127.0.0.1',
        `  Port ${port}`,
        `  User ${user}`,
        `  UserKnownHostsFile ${knownHosts}`,
        '  GlobalKnownHostsFile /dev/null',
        '  StrictHostKeyChecking yes',
        '  UpdateHostKeys no',
        '  BatchMode yes',
        '  PasswordAuthentication no',
        '  IdentitiesOnly yes',
        `  IdentityFile ${identityPub}`,
        '  LogLevel ERROR',
        '',
      ].join('\n'),
    );
    return path;
  };
  return {
    user,
    home,
    port,
    hostKeyFingerprint: fp,
    hostKeyFile: hostKey,
    hostKeyLine: readFileSync(`${hostKey}.pub`, 'utf8').trim(),
    authorizedKeys,
    clientConfig,
    sshCommand: (pub) => `ssh -F ${clientConfig(pub)}`,
    log: () => Buffer.concat(logs).toString(),
    stop: async () => {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      try {
        execFileSync('userdel', [user], { stdio: 'ignore' });
      } catch {
        // A session process of the user still ending: remove the account anyway.
        execFileSync('userdel', ['-f', user]);
      }
      rmSync(dir, { recursive: true, force: true });
      if (madeRunDir) rmSync('/run/sshd', { recursive: true, force: true });
    },
  };
}
