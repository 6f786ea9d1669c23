/**
 * The real DashboardApi: owner calls to the vault host over the client, the
 * audit feed over `follow`, unlocks through the hardware-key ceremony. The
 * passphrase stays in this closure; nothing here shows or logs it.
 */
import { call, follow, type ClientOptions } from '../src/client/client.js';
import type { AuditView } from '../src/core/audit.js';
import { VaultError } from '../src/core/errors.js';
import { unlockWithKey } from '../src/webauthn/ceremony.js';
import type { DashboardApi } from './api.js';

export interface DashboardHooks {
  /** Also told the ceremony page's URL (to open a browser); the dashboard shows it either way. */
  readonly onUrl?: (url: string) => void;
  /** How long the ceremony page waits for the browser. */
  readonly timeoutMs?: number;
}

/** How long the audit feed waits before following again after the host went away. */
const RECONNECT_MS = 1000;

/**
 * The dashboard's api over a vault host. Every call is an owner call with
 * `passphrase`; errors are the host's VaultErrors (VLT-3002 wrong passphrase,
 * VLT-3005 no host...), thrown from the promise that made the call.
 */
export function hostDashboardApi(
  client: ClientOptions,
  passphrase: string,
  hooks: DashboardHooks = {},
): DashboardApi {
  /** The latest record this api has handed out: the feed follows from there, no gap, no replay. */
  let lastSeq: number | null = null;
  const seen = (records: readonly AuditView[]) => {
    const last = records[records.length - 1];
    if (last !== undefined && (lastSeq === null || last.seq > lastSeq)) lastSeq = last.seq;
  };
  const allAudit = async () => (await call(client, 'audit.list', { passphrase })).records;

  return {
    agents: async () => (await call(client, 'agent.ls', { passphrase })).agents,
    entries: async () => (await call(client, 'entry.ls', { passphrase })).entries,
    recentAudit: async (limit) => {
      const records = await allAudit();
      seen(records);
      return records.slice(Math.max(0, records.length - limit));
    },
    followAudit: (onRecord, onError) => {
      const stopped = new AbortController();
      const { signal } = stopped;
      // Each feed keeps its own place: run's dashboard comes and goes on one api.
      let after = lastSeq;
      const onLine = (line: string) => {
        let record: AuditView;
        try {
          record = JSON.parse(line) as AuditView;
        } catch {
          onError(new VaultError('VLT-3007', 'The vault host sent a malformed audit record.'));
          return;
        }
        if (after !== null && record.seq <= after) return;
        after = record.seq;
        seen([record]);
        onRecord(record);
      };
      void (async () => {
        // One error per outage: the feed keeps trying, the dashboard shows it once.
        let reported = false;
        while (!signal.aborted) {
          try {
            if (after === null) after = (await allAudit()).at(-1)?.seq ?? 0;
            if (signal.aborted) return;
            await follow(
              client,
              'audit.follow',
              { passphrase, afterSeq: after },
              (line) => {
                reported = false;
                onLine(line);
              },
              signal,
            );
            if (signal.aborted) return;
            throw new VaultError(
              'VLT-3005',
              'The vault host ended the audit feed; following again.',
            );
          } catch (err) {
            if (signal.aborted) return;
            if (!reported) onError(err instanceof Error ? err : new Error(String(err)));
            reported = true;
            await new Promise<void>((resolve) => {
              const timer = setTimeout(done, RECONNECT_MS);
              function done() {
                clearTimeout(timer);
                signal.removeEventListener('abort', done);
                resolve();
              }
              signal.addEventListener('abort', done, { once: true });
            });
          }
        }
      })();
      return () => stopped.abort();
    },
    setField: async (entry, field, value) => {
      const { version } = await call(client, 'entry.set', {
        passphrase,
        entry,
        field,
        value: Buffer.from(value, 'utf8').toString('base64'),
      });
      return { version };
    },
    removeEntry: async (entry) => {
      await call(client, 'entry.rm', { passphrase, entry });
    },
    addAgent: async (name, kind, scope, limits) =>
      call(client, 'agent.add', { passphrase, name, kind, scope, limits }),
    revokeAgent: async (name) => {
      await call(client, 'agent.revoke', { passphrase, name });
    },
    changeScope: async (name, add, rm) => {
      await call(client, 'agent.scope', { passphrase, name, add, rm });
    },
    changeLimits: async (name, perMinute, perHour) => {
      await call(client, 'agent.limits', {
        passphrase,
        name,
        ...(perMinute === undefined ? {} : { perMinute }),
        ...(perHour === undefined ? {} : { perHour }),
      });
    },
    unlock: async (name, onUrl) => {
      const outcome = await unlockWithKey(name, passphrase, {
        call: (op, body) => call(client, op, body),
        onUrl: (url) => {
          onUrl(url);
          hooks.onUrl?.(url);
        },
        ...(hooks.timeoutMs === undefined ? {} : { timeoutMs: hooks.timeoutMs }),
      });
      return outcome.status;
    },
  };
}
