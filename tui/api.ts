/**
 * What the dashboard needs from the vault, as one interface: `vault-cli
 * dashboard` and `vault-cli run` back it with owner calls to the vault host,
 * tests back it with a real host too (never a stand-in for our own modules).
 * Every call is an owner call; the passphrase stays with whoever built it.
 */
import type { AuditView } from '../src/core/audit.js';
import type { Limits } from '../src/core/policy.js';
import type { AgentSummary, EntrySummary } from '../src/core/protocol.js';

export type { AgentSummary, AuditView, EntrySummary, Limits };

export interface DashboardApi {
  /** Every agent with its state, distinct reads this minute and hour, and limits. */
  agents(): Promise<AgentSummary[]>;
  /** Entries by name, with field names and versions (never values). */
  entries(): Promise<EntrySummary[]>;
  /** The latest `limit` audit records, oldest first. */
  recentAudit(limit: number): Promise<AuditView[]>;
  /** Calls `onRecord` for each record committed from now on; the returned function stops it. */
  followAudit(onRecord: (r: AuditView) => void, onError: (e: Error) => void): () => void;
  /** Adds an entry or rotates a field: agents get the new value on their next read. */
  setField(entry: string, field: string, value: string): Promise<{ version: number }>;
  removeEntry(entry: string): Promise<void>;
  /** The new agent's token, to be shown once. */
  addAgent(
    name: string,
    kind: 'ai' | 'script',
    scope: string[],
    limits: Limits,
  ): Promise<{ token: string }>;
  revokeAgent(name: string): Promise<void>;
  changeScope(name: string, add: string[], rm: string[]): Promise<void>;
  changeLimits(name: string, perMinute?: number, perHour?: number): Promise<void>;
  /**
   * Runs the hardware-key unlock for a locked agent: `onUrl` receives the
   * ceremony page's address to show; resolves when the lock is lifted.
   */
  unlock(name: string, onUrl: (url: string) => void): Promise<'unlocked' | 'not-locked'>;
  /**
   * Runs the `key add` ceremony: `onUrl` receives each page's address (an
   * enrolled key confirms first, then the new one is enrolled); resolves with
   * the new key's name.
   */
  enrolKey(onUrl: (url: string) => void): Promise<{ name: string }>;
}
