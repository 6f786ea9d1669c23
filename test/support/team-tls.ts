/**
 * A team host that also listens for remote agents over TLS (docs/team.md,
 * "Remote agents"), and the environment of a remote machine that reaches it:
 * shared by the remote-agent tests.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './proxy.js';
import type { Rig } from './rig.js';

/** A self-signed certificate for 127.0.0.1, made by openssl in `dir`. */
export function certificate(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(made.status, 0, made.stderr);
  return { cert, key };
}

/**
 * Sets `rig`'s host to listen on a free loopback port with a new certificate
 * (the host must be started after: stop it first if it runs). Returns the
 * port, the certificate, and the environment of a remote machine (its own
 * HOME and an empty VAULT_DIR: no host, no store) that reaches it.
 */
export async function listenTls(
  rig: Rig,
): Promise<{ port: number; cert: string; remoteEnv: NodeJS.ProcessEnv }> {
  const tls = certificate(rig.root, 'host');
  const port = await freePort();
  rig.env.VAULT_LISTEN_TLS = `127.0.0.1:${port}`;
  rig.env.VAULT_TLS_CERT = tls.cert;
  rig.env.VAULT_TLS_KEY = tls.key;
  const remoteRoot = join(rig.root, 'remote');
  mkdirSync(join(remoteRoot, 'vault'), { recursive: true });
  const remoteEnv = {
    PATH: process.env.PATH,
    HOME: remoteRoot,
    LANG: 'C.UTF-8',
    VAULT_DIR: join(remoteRoot, 'vault'),
    VAULT_CONFIG_DIR: join(remoteRoot, 'config'),
    VAULT_HOST_URL: `tls://127.0.0.1:${port}`,
    VAULT_HOST_CA: tls.cert,
  };
  return { port, cert: tls.cert, remoteEnv };
}
