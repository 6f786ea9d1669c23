/**
 * Whole hardware-key ceremonies for any front end (the CLI's `key add` and
 * `agent unlock`, the dashboard's unlock key): serve the page, get a challenge
 * from the host, wait for the browser's one answer, relay it to the host, and
 * report the host's verdict. The host decides; this only carries messages.
 */
import { VaultError } from '../core/errors.js';
import type { Op, Ops } from '../core/protocol.js';
import { CHALLENGE_TTL_MS, type KeySummary } from '../core/webauthn.js';
import { startPageServer, type Verdict } from './page-server.js';

/** What a front end supplies: its way to the host, and where the page's URL goes. */
export interface CeremonyHooks {
  call<O extends Op>(op: O, body: Ops[O]['req']): Promise<Ops[O]['res']>;
  /** The page is ready at `url`: show it, open a browser. */
  onUrl(url: string): void;
  /** How long the page waits for the browser; the challenge's lifetime by default. */
  readonly timeoutMs?: number;
}

export type UnlockOutcome = { readonly status: 'unlocked' } | { readonly status: 'not-locked' };

/**
 * Runs one ceremony: `begin` gets the options for the page's origin, the
 * page's result goes to `finish`; resolves with finish's result or rejects
 * with its error (a VaultError from the host).
 */
async function run<T>(
  title: string,
  kind: 'create' | 'get',
  hooks: CeremonyHooks,
  begin: (origin: string) => Promise<{ challengeId: string; options: unknown } | null>,
  finish: (challengeId: string, result: unknown) => Promise<T>,
  success: string,
): Promise<T | null> {
  const server = await startPageServer();
  try {
    const started = await begin(server.origin);
    if (started === null) return null;
    let outcome: { ok: true; value: T } | { ok: false; err: unknown } | null = null;
    const relay = async (result: unknown): Promise<Verdict> => {
      try {
        outcome = { ok: true, value: await finish(started.challengeId, result) };
        return { ok: true, message: success };
      } catch (err) {
        outcome = { ok: false, err };
        return { ok: false, message: err instanceof VaultError ? err.message : 'Refused.' };
      }
    };
    hooks.onUrl(
      server.publish(
        { kind, title, options: started.options },
        relay,
        hooks.timeoutMs ?? CHALLENGE_TTL_MS,
      ),
    );
    await server.closed;
    const done = outcome as { ok: true; value: T } | { ok: false; err: unknown } | null;
    if (done === null)
      throw new VaultError('VLT-4007', 'The ceremony page closed without a result.');
    if (!done.ok) throw done.err;
    return done.value;
  } finally {
    server.close();
  }
}

/**
 * Lifts agent `name`'s lockdown with an enrolled hardware key.
 * @throws VaultError VLT-4002 no such agent, VLT-4004 no key enrolled,
 *   VLT-4007 not accepted, VLT-4008 counter did not increase (possible clone).
 */
export async function unlockWithKey(name: string, hooks: CeremonyHooks): Promise<UnlockOutcome> {
  const done = await run(
    `Unlock agent ${name}`,
    'get',
    hooks,
    async (origin) => {
      const r = await hooks.call('unlock.begin', { name, origin });
      return 'notLocked' in r ? null : r;
    },
    (challengeId, result) => hooks.call('unlock.finish', { challengeId, result }),
    `Agent ${name} is unlocked. You can close this page.`,
  );
  return done === null ? { status: 'not-locked' } : { status: 'unlocked' };
}

/**
 * Enrols a hardware key under `name` (default `key-<n>`).
 * @throws VaultError VLT-3002 wrong passphrase, VLT-4006 name or key taken, VLT-4007 not accepted.
 */
export async function enrolKey(
  passphrase: string | undefined,
  name: string | undefined,
  hooks: CeremonyHooks,
): Promise<KeySummary> {
  let keyName = name ?? 'a hardware key';
  const done = await run(
    'Enrol a hardware key',
    'create',
    hooks,
    async (origin) => {
      const r = await hooks.call('key.begin', {
        passphrase,
        origin,
        ...(name === undefined ? {} : { name }),
      });
      keyName = r.options.user.name.replace(/^vault-cli /, '');
      return r;
    },
    (challengeId, result) => hooks.call('key.finish', { passphrase, challengeId, result }),
    'The key is enrolled. You can close this page.',
  );
  if (done === null) throw new VaultError('VLT-4007', `Could not enrol ${keyName}.`);
  return done;
}
