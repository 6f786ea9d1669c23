// The threat model's table against the tests. The project's rule is that a
// claim of docs/threat-model.md without a test is not held: every cell of the
// attack table that claims something (held, held if, in part, slowed) must be
// named in LEDGER below with the tests that show it, and every test named here
// must exist under that exact name. A cell that rests on reasoning alone says
// "not shown" and has no entry.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC = 'docs/threat-model.md';

type Mode = 'run' | 'sameUser' | 'hardened';
const MODES: readonly Mode[] = ['run', 'sameUser', 'hardened'];
const HEADER = ['attack', '`run`', 'same-user host', 'hardened host'];

/** A test file under the repository root and a test's name as its source spells it. */
type Proof = readonly [file: string, name: string];
type Entry = Partial<Record<Mode, readonly Proof[]>>;

/** The test tiers that run real processes, in the order a file is looked for. */
const TIERS = ['e2e', 'attack', 'host'] as const;
/** A test file by its base name, in whichever tier holds it (test/e2e if none does: reported missing). */
const tested = (file: string, name: string): Proof => {
  const tier = TIERS.find((t) => existsSync(join(ROOT, `test/${t}/${file}.test.ts`))) ?? 'e2e';
  return [`test/${tier}/${file}.test.ts`, name];
};

// Proofs cited by several rows.
const DISK_RESERVE = tested(
  'faults',
  'a file system another process filled: the store keeps room of its own, so reads go on, each audited, and the owner too',
);
const STORE_HIDDEN = tested(
  'sandbox',
  'the store, the config directory and the passphrase file cannot be read, copied or changed',
);
const SANDBOX_PROCESSES = tested(
  'sandbox',
  'neither run, nor the host, nor another agent can be seen, signalled or read',
);
const OWNER_POWER_INSIDE = tested(
  'sandbox',
  'daemon stop, owner operations and another token are refused inside',
);
const STORE_UNREADABLE = tested(
  'hardened-host',
  'as the user: the store, its directory and the host’s /proc are unreadable',
);
const HARDENED_READS = tested(
  'hardened-host',
  'an agent reads through the hardened host; its audit record carries the kernel’s pid and uid',
);
/** An LMDB host's memory does not grow with its audit log (issue 42; docs/benchmarks.md). */
const HOST_MEMORY_BOUND = tested(
  'host-memory',
  'a host under a growing audit log keeps its memory under the stated bound',
);
/** The main socket's connections are capped per process (issue 29's intake) and in all (crowd.ts). */
const MAIN_SOCKET_CAPPED = [
  tested(
    'host-intake',
    '100 held bodies stay within the pool, a process past 128 connections is refused, and the owner is served',
  ),
  tested(
    'host-intake',
    'many processes holding half-sent requests: the host keeps its descriptors, the largest holders pay, the owner and another agent go on',
  ),
];
/** Names an agent asked for, shown in the owner's audit. */
const NAMES_ESCAPED = tested(
  'audit',
  'names an agent asks for with terminal controls or bidi overrides reach the owner’s audit escaped, and read back exactly',
);
/** A file an agent wrote for the owner's `vault-cli import` (test/e2e/import.test.ts). */
const IMPORT_FILE = [
  tested(
    'import',
    'a name that exists is refused, naming it, and nothing of the file lands; --skip-existing and --overwrite decide',
  ),
  tested(
    'import',
    'terminal escapes in names never reach the terminal: refused, shown as code points',
  ),
  tested(
    'import',
    'a symlink to the owner’s SSH key is refused before it is read; a pasted key is refused naming a line only',
  ),
  tested(
    'import',
    'gigantic or endless sources are refused without reading them: a 17 MiB file, /dev/zero, a FIFO',
  ),
];
const AUDIT_EPOCH_WIPED = tested(
  'audit-seal-memory',
  'a dump of the host’s memory holds the current audit epoch’s key only: no ended epoch’s',
);
const GUESS_QUEUE = tested(
  'guess-throttle',
  '8 queued wrong guesses from one process: the owner’s command is answered while they still wait',
);
const HELD_BODIES = tested(
  'host-intake',
  '100 held bodies stay within the pool, a process past 128 connections is refused, and the owner is served',
);
/** The framed host channel's attacks (issue 28), each refused with the host serving on. */
const CHANNEL_ATTACKS = [
  tested(
    'host-channel',
    'frames in one write are each judged and answered by id; the audit names the connection’s peer, not what a frame claims',
  ),
  tested(
    'host-channel',
    'an oversize frame is refused (VLT-1002) before it is read, and its connection closed',
  ),
  tested(
    'host-channel',
    'garbage after the upgrade, an owner command and an unknown operation are refused; the host serves on',
  ),
  tested(
    'host-channel',
    'half frames then silence: beyond the pool refused (VLT-3012), small frames and the owner served, the silent ones closed',
  ),
  tested('host-channel', 'a process that holds 128 connections is refused the channel (VLT-3012)'),
];
const SAME_BYTES = tested(
  'errors',
  'an entry outside the scope and a missing entry give the same bytes',
);
const BURST = tested(
  'concurrency',
  'twenty reads sent at once by one process: three released, one violation, chain intact',
);
const LOCKS = tested(
  'errors',
  'a second distinct entry within the minute is refused; a second violation locks',
);
const SWEEP_FINDS = [
  tested('sweep', 'every released value is found where it was planted, in each form; no decoy is'),
  tested('sweep', '--redact: valid JSONL with references in place, and nothing left to find'),
  tested('sweep', 'the fields found are exposed until set anew'),
];
const SWEEP_TRAPS = [
  tested('sweep', 'an agent’s traps: a link out of the store, a FIFO, a huge file, a long line'),
];
const NO_AUDIT_NO_VALUE = [
  tested(
    'faults',
    'a full file system: reads stop with VLT-3004, and every released value was audited',
  ),
  tested('faults', 'a read-only store file: every mode refuses with VLT-3004'),
];
const NOT_ON_TERMINAL = [
  tested(
    'pipe-only',
    '${c.name}: a terminal (a real pty) is refused with VLT-2050, before the host is asked',
  ),
  tested('pipe-only', '${c.name}: a regular file is refused with VLT-2050 and stays empty'),
];
const BOUND_HOSTS = tested(
  'proxy-attacks',
  'an entry bound to other hosts: 403 VLT-2045, audited exfil (a violation); bound to this host it goes',
);
const FRONTING = tested(
  'proxy-pinning',
  'curl: a reference with a Host other than the CONNECT target is 400 VLT-2048, nothing upstream',
);
// Exfiltration attempts counted as violations (issue 27).
const EXFIL_STRIKES = [
  tested(
    'exfiltration',
    'a reference to a host its entry is not bound to is one violation; the second locks the agent',
  ),
  tested(
    'exfiltration',
    'a reference with a Host that is not the tunnel’s destination is one violation, reported by the proxy; the second locks',
  ),
  tested('exfiltration', 'the two kinds add up: an unbound host, then a Host mismatch, locks'),
];
const EXFIL_RUN = tested(
  'exfiltration',
  'run: a Host mismatch, then a reference to an unbound host, lock the agent; its next read inside is VLT-2043',
);
const FORGED_REPORTS = [
  tested(
    'exfiltration',
    'a forged report cannot lock another agent: garbage, another agent’s id with a wrong secret, a field naming it',
  ),
  tested(
    'exfiltration',
    'a flood of reports adds a bounded number of audit records, none after the lock',
  ),
];
const PLAIN_HTTP = [
  tested('proxy-pinning', 'plain HTTP: judged by what the name resolves to, sent to that address'),
  tested(
    'proxy-attacks',
    'plain HTTP in absolute form: filled to this machine, refused to any other',
  ),
];
const H2C = tested(
  'proxy-pinning',
  'Upgrade: h2c is not relayed as an upgrade: the upstream gets an ordinary request',
);
const STALE_UPSTREAM = [
  tested(
    'proxy-keepalive',
    'a POST with a body on a connection the upstream closes mid-request is not sent again: 502 VLT-3008',
  ),
  tested(
    'proxy-keepalive',
    'an upstream that closes every connection it reuses, and the retry too: one retry at most, then 502, one fill',
  ),
  tested(
    'proxy-keepalive',
    'absolute-form https:// without a tunnel: a GET on a pooled connection closed under it goes once more, filled once; a PUT with a body never twice; a retry closed too is 502',
  ),
  tested(
    'proxy-keepalive',
    'in a tunnel: a reply begun (1xx, part of a head) then closed is never followed by another copy: 502, one fill',
  ),
  tested(
    'proxy-keepalive',
    'absolute-form https:// and http://: a reply begun (1xx, part of a head) then closed is never followed by another copy: 502, one fill',
  ),
  tested(
    'proxy-retry-address',
    'in a tunnel: the retry goes to the address the kept connection reached, or is 502; never to the name’s other address',
  ),
  tested(
    'proxy-retry-address',
    'absolute-form https:// without a tunnel: the retry goes to the address the pooled connection reached, or is 502; never to the name’s other address',
  ),
  tested(
    'proxy-retry-address',
    'absolute-form plain HTTP: the retry goes to the address the name was judged by, or is 502; never to the name’s other address',
  ),
];
const POOLED = [
  tested(
    'proxy-isolation',
    'trailers are dropped and never reach the next response on the same connection',
  ),
  tested(
    'proxy-isolation',
    'caller B, after caller A on the same upstream: never sees A’s value, gets no record of it',
  ),
];
const WARM_TUNNEL = [
  tested('proxy-rules', 'an agent revoked mid-tunnel: the next request is 403 VLT-2040'),
  tested('proxy-rules', 'an agent locked mid-tunnel: the next request is 423 VLT-2043'),
  tested('proxy-rules', 'an entry taken out of scope mid-tunnel: the next request is 403 VLT-2041'),
  tested('proxy-rules', 'a session ended mid-tunnel: the next request is 403 VLT-2040'),
];
const BOUNDED = [
  tested(
    'bounded-requests',
    'a render naming more than 1,000 references is refused whole (VLT-1006), nothing audited',
  ),
  tested(
    'bounded-requests',
    '1,000 unknown names: refused, audited in 17 records, the store grows by a bounded amount',
  ),
];
const SEED_STAYS = [
  tested('otp-seed', 'get --field totp is refused with VLT-2052 and audited; totp gives a code'),
  tested('otp-seed', 'render refuses a template naming the seed, releasing nothing'),
  tested('otp-seed', 'a proxy fill naming the seed: 403 VLT-2052, nothing upstream'),
];
const GUESSES = tested(
  'owner-guess',
  'wrong passphrases are audited and counted across a host restart; an unlock resets the count',
);

const OWN_UNLOCK = tested(
  'unlock-owner',
  'the locked agent cannot start its own unlock: no page, refused on the socket, still locked',
);
const CHALLENGE_NAMES_AGENT = [
  tested('unlock-owner', 'the page and the signed challenge name the agent it unlocks'),
  tested('hardware-key', 'a challenge issued for another agent is refused'),
];
const KEY_VOUCHES = [
  tested(
    'unlock-owner',
    'the passphrase alone does not enrol a second key: an enrolled key must vouch',
  ),
  tested(
    'unlock-owner',
    'a lost key: the recovery key vouches for a new one instead, audited as such',
  ),
];

const REFERENCE_RECIPE = tested(
  'agents-real',
  'completes one prompt; the stand-in gets the key, the agent holds only the reference',
);

const SESSION_NOT_INSIDE_RUN = tested(
  'owner-session',
  'a process inside `vault-cli run --no-sandbox` on the unlocked terminal never gets the session',
);
const SESSION_SANDBOXED_RUN = tested(
  'owner-session',
  'a process inside a sandboxed `vault-cli run` on the unlocked terminal is refused before any prompt, and the session is not used',
);
const SESSION_NO_TERMINAL = tested(
  'owner-session',
  'with no terminal, an agent holding the passphrase file opens no session by itself',
);
const SESSION_NOT_FROM_FILE = tested(
  'owner-session',
  'a passphrase from VAULT_PASSPHRASE_FILE opens no session',
);
const HANDED_CONNECTION = [
  tested(
    'threat-handed-connection',
    'a handed-over connection whose pid now names a command on the unlocked terminal gets no owner session',
  ),
  tested(
    'threat-handed-connection',
    'a handed-over connection whose pid now names a sweep holding the owner key gets no values',
  ),
];
const OWNER_SESSION_TIGHTENS = [
  tested(
    'threat-owner-session',
    'a hook on the unlocked terminal gets no value, no token and no wider rule; narrowing still runs',
  ),
  tested(
    'threat-owner-session',
    'the owner at the terminal is asked once more, and the command runs',
  ),
];
const SESSION_OTHER_TERMINAL = [
  tested('owner-session', 'a command from another terminal is asked for the passphrase'),
  [
    'test/host/owner-unlock.test.ts',
    'bindingOf reads tty, session and leader start; refuses what may hold no session',
  ] as const,
];
const PROCESS_HOLD = [
  tested(
    'sweep-owner',
    '--watch: one derivation for the sweep, the audit follow and a mark per leak; the held key serves no other process',
  ),
  [
    'test/host/owner-unlock.test.ts',
    'a process hold serves its one process, not its terminal, and ends with it',
  ] as const,
];

// The host judges scope, limits, lock, audit and the seed in its own process,
// and the proxy is the same code in every mode: where a row is about those
// rules, the same-user test shows the other columns too, beside a test of
// that mode's own path (a session under `run`, an agent of another user
// through the hardened host).
/** Issue 36: the sealed state and keyed audit records against SQL a database holder runs. */
const TEAM_SEALED = [
  tested(
    'team-rollback',
    'an agent’s earlier rate record copied back after a lockdown: refused on every host, not unlocked, reported',
  ),
  tested(
    'team-rollback',
    'agent, entry and field rows from before `agent revoke` copied back: the revoked token stays refused, reported',
  ),
  tested('team-rollback', 'a record appended to the audit table by SQL fails audit --verify'),
];
/** A team host's file of digest shares (issue 37): it vouches for bytes, never for a row changed since. */
const TEAM_DIGEST_CHUNKS = [
  tested(
    'team-digest-file',
    'an entry’s bytes changed in the database between two starts: refused as without the file, no file written',
  ),
  tested(
    'team-digest-file',
    'a file replaced without the state key is ignored, and written anew by the next sound start',
  ),
  tested(
    'team-digest-chunks',
    'a row changed in the database between two starts is refused, though the file holds its chunk’s old share',
  ),
  tested(
    'team-digest-chunks',
    'a forged file is not trusted: a chunk tampered with is still caught',
  ),
];
const TEAM_DUMP = tested(
  'team',
  'two hosts on one database: limits, lockdown, revocation and one audit chain hold across both',
);

/** exec's command gets no VAULT_* variable (issue 35); the same code in every mode. */
const EXEC_ENV = tested(
  'threat-exec-env',
  'the command exec starts gets its value and no VAULT_* variable: no token, no token file',
);

/** run and sweep mark themselves not dumpable (issue 35). */
const NOT_DUMPABLE = [
  tested(
    'threat-dumpable',
    'run: a same-user process cannot open its /proc/<pid>/mem or environ; the agent it started can be',
  ),
  tested(
    'threat-dumpable',
    'sweep --watch: a same-user process cannot open its /proc/<pid>/mem or environ',
  ),
];

/** Request caveats (issue 40): refused before the value is released, counted, property-tested. */
const CAVEATS = [
  tested(
    'proxy-caveats-gh',
    'with caveats: reads go through, a DELETE is refused (VLT-2060) before any byte of it reaches the stand-in',
  ),
  tested(
    'proxy-caveats-gh',
    'a caveat refusal is a violation: the agent is locked by the second (VLT-2043), and stays so',
  ),
  [
    'test/unit/caveats.test.ts',
    'property: a path the rule allows is under /repos/acme however a server reads it',
  ],
] as const satisfies readonly Proof[];
const CAVEATS_FILL_ONLY = tested(
  'proxy-caveats-gh',
  'an entry under caveats is the proxy’s to fill only: get and render are refused (VLT-2061), audited, not counted',
);
/** OAuth (issue 40): the refresh token and client secret stay in the host. */
const OAUTH_HELD = [
  tested(
    'proxy-oauth',
    'get --field access_token releases the access token; the refresh token and client secret never (VLT-2064)',
  ),
  tested('proxy-oauth', 'the refresh token and client secret appear nowhere outside the host'),
] as const satisfies readonly Proof[];

const LEDGER: Record<string, Entry> = {
  "with a token bound to its host, send a request outside the agent's caveats for it (`DELETE`, another path, `..`, `%2e%2e`)":
    {
      run: [
        ...CAVEATS,
        tested(
          'run-caveats',
          'run: a request inside the caveats is filled, one outside is refused (VLT-2060) and told on run’s stderr',
        ),
      ],
      sameUser: CAVEATS,
      hardened: CAVEATS,
    },
  'read an entry under request caveats with `get` or `render`, to use it outside them': {
    run: [CAVEATS_FILL_ONLY],
    sameUser: [CAVEATS_FILL_ONLY],
    hardened: [CAVEATS_FILL_ONLY],
  },
  "read an OAuth entry's refresh token or client secret (`get`, a fill, `render`)": {
    run: OAUTH_HELD,
    sameUser: OAUTH_HELD,
    hardened: OAUTH_HELD,
  },
  // Team mode (docs/team.md): two hosts on one real PostgreSQL.
  'team mode: read past the limits, or keep reading after a lockdown, by spreading reads over several hosts of one PostgreSQL vault':
    {
      sameUser: [
        tested(
          'team',
          'two hosts on one database: limits, lockdown, revocation and one audit chain hold across both',
        ),
      ],
    },
  'team mode: from the network, hold 20,000 connections open on the TLS listener (no token, no handshake), so that the owner and the agents find no way in':
    {
      sameUser: [
        tested(
          'tls-flood',
          '20,000 connections on the TLS listener: the owner, a local agent and a remote agent are served',
        ),
      ],
    },
  "team mode: stall the database (a hung server, a lock a DBA holds) so that every host freezes, the owner's `agent lock` included":
    {
      sameUser: [
        tested(
          'team-stall',
          'a stopped database: refusals, status and the owner answered within the bound; served again after',
        ),
      ],
    },
  'team mode: read a value, an entry name or a token from the PostgreSQL database (a `pg_dump`)': {
    run: [TEAM_DUMP],
    sameUser: [TEAM_DUMP],
    hardened: [TEAM_DUMP],
  },
  'team mode, with the database password: put an agent’s earlier rate or lock rows back, or the rows from before `agent revoke`, or append an audit record by SQL':
    { run: TEAM_SEALED, sameUser: TEAM_SEALED, hardened: TEAM_SEALED },
  'team mode, with the database password: change a row between two starts of a host, so that its file of digest shares vouches for the old chunk; or, with that file writable too, put an old or forged one back':
    { run: TEAM_DIGEST_CHUNKS, sameUser: TEAM_DIGEST_CHUNKS, hardened: TEAM_DIGEST_CHUNKS },
  'read an entry outside the scope; guess names to learn which exist': {
    run: [
      tested('run', '--scope narrows the session: an entry of the agent outside it is refused'),
      SAME_BYTES,
    ],
    sameUser: [SAME_BYTES],
    hardened: [SAME_BYTES, HARDENED_READS],
  },
  'read more than the limits allow, or in a burst of 20 parallel readers': {
    run: [
      tested(
        'run',
        'a session shares the agent’s rate state: its read counts against the agent’s token',
      ),
      BURST,
    ],
    sameUser: [
      BURST,
      tested(
        'concurrency',
        '${TRIALS} trials on a vault made before: at most 3 of ${PROCESSES} released',
      ),
    ],
    hardened: [BURST, HARDENED_READS],
  },
  'keep reading after a lockdown, or restart the host to clear it': {
    run: [LOCKS],
    sameUser: [LOCKS],
    hardened: [LOCKS, HARDENED_READS],
  },
  'get a value released without an audit record (full or read-only disk)': {
    run: NO_AUDIT_NO_VALUE,
    sameUser: NO_AUDIT_NO_VALUE,
    hardened: [...NO_AUDIT_NO_VALUE, HARDENED_READS],
  },
  'a value it echoed through a pipe stays in its transcript or a shell history on disk, in plain, base64, URL or JSON-escaped form':
    {
      run: SWEEP_FINDS,
      sameUser: SWEEP_FINDS,
      hardened: SWEEP_FINDS,
    },
  "plant a link (to `/etc/shadow`, to the owner's files), a FIFO, a huge sparse file or an endless line in its transcript directory for the owner's sweep to follow, block on or drown in":
    {
      run: SWEEP_TRAPS,
      sameUser: SWEEP_TRAPS,
      hardened: SWEEP_TRAPS,
    },
  'echo a value into the transcript by accident (`get X` on the terminal, `> file`)': {
    run: [
      tested(
        'run',
        'the child gets a session token, reads in scope into a pipe (not onto its pty), and its exit status comes back',
      ),
    ],
    sameUser: NOT_ON_TERMINAL,
    hardened: NOT_ON_TERMINAL,
  },
  'a prompt-injected agent sends `vault://GitHub/token` through the proxy to a host the owner did not bind':
    {
      run: [BOUND_HOSTS],
      sameUser: [BOUND_HOSTS],
      hardened: [BOUND_HOSTS],
    },
  'inside a tunnel to its bound host, send a value with `Host: other.example` (domain fronting)': {
    run: [FRONTING],
    sameUser: [FRONTING],
    hardened: [FRONTING],
  },
  'keep sending references to hosts their entries are not bound to, or with a `Host` that is not the destination, until one gets through':
    {
      run: [EXFIL_RUN, ...EXFIL_STRIKES],
      sameUser: EXFIL_STRIKES,
      hardened: [...EXFIL_STRIKES, HARDENED_READS],
    },
  "lock another agent with forged exfiltration reports (garbage, another agent's id, a field naming it), or fill the audit log with reports":
    {
      run: [
        EXFIL_RUN,
        tested(
          'proxy-session',
          'run --scope GitHub: the long-lived token through the session proxy fills nothing (VLT-2051); the session token still works',
        ),
        ...FORGED_REPORTS,
      ],
      sameUser: FORGED_REPORTS,
      hardened: [...FORGED_REPORTS, HARDENED_READS],
    },
  'send a value over plain HTTP to `localhost` that resolves to another machine': {
    run: PLAIN_HTTP,
    sameUser: PLAIN_HTTP,
    hardened: PLAIN_HTTP,
  },
  'run `Upgrade: h2c` over a relayed connection, past the scrubber': {
    run: [H2C],
    sameUser: [H2C],
    hardened: [H2C],
  },
  "get another caller's value from a pooled upstream connection (its trailers, in the next head)": {
    run: POOLED,
    sameUser: POOLED,
    hardened: POOLED,
  },
  'as an upstream, close kept-alive connections under requests: to have a request with a body sent twice, the proxy retry (and fill) again and again, or the retry take the value to another address of the name':
    {
      run: STALE_UPSTREAM,
      sameUser: STALE_UPSTREAM,
      hardened: STALE_UPSTREAM,
    },
  'keep filling on a warm tunnel after a revoke, a lock, a narrowed scope or an ended session': {
    run: WARM_TUNNEL,
    sameUser: WARM_TUNNEL,
    hardened: WARM_TUNNEL,
  },
  "put terminal controls or bidi overrides in the names it asks for, so the owner's `audit` or dashboard acts on them (clears the screen, writes the clipboard) or reads as another line":
    {
      run: [NAMES_ESCAPED],
      sameUser: [NAMES_ESCAPED],
      hardened: [NAMES_ESCAPED],
    },
  'read anything from `vault.mdb` without a token or passphrase': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested('hygiene', 'the store file shows no entry name, value, seed, token or passphrase'),
    ],
    hardened: [STORE_UNREADABLE],
  },
  'move or alter a ciphertext into another slot': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested(
        'crash',
        'get of the doctored entry fails with VLT-3003; the source entry still reads',
      ),
      tested(
        'byte-flip',
        '${FLIPS} flips across the file, and 128 on the meta pages: each harmless or reported with a damage code; never a wrong value',
      ),
    ],
    hardened: [STORE_UNREADABLE],
  },
  'decrypt entries of its tiers outside its scope offline, with its own token or a `--scope` session':
    {
      run: [STORE_HIDDEN],
      sameUser: [
        tested(
          'crypto-scope',
          'an agent scoped to one entry decrypts that entry only from a store copy with its token',
        ),
        tested(
          'crypto-scope',
          'a run --scope session token decrypts its narrowed scope only from a store copy, and nothing once it ended',
        ),
      ],
      hardened: [STORE_UNREADABLE],
    },
  'open values rotated after `agent revoke`, or entries added later, with keys saved while the token was valid':
    {
      run: [STORE_HIDDEN],
      sameUser: [
        tested(
          'crypto-scope',
          'keys saved before agent revoke open nothing rotated after, nor entries added later',
        ),
        tested(
          'crypto-scope',
          'narrowing a scope rotates the entry lost: saved keys open nothing after',
        ),
      ],
      hardened: [STORE_UNREADABLE],
    },
  'ask the store or the host whether an entry exists': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested(
        'crypto-scope',
        'an agent scoped to one entry decrypts that entry only from a store copy with its token',
      ),
      SAME_BYTES,
    ],
    hardened: [STORE_UNREADABLE],
  },
  'widen its scope in the store': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested(
        'records',
        'a scope widened in the store: reads stay refused, and the owner’s run and agent changes refuse the record',
      ),
    ],
    hardened: [STORE_UNREADABLE],
  },
  'lift its own lockdown or raise its limits in the store (the host has no owner key to check the rate state with)':
    {
      run: [STORE_HIDDEN],
      hardened: [STORE_UNREADABLE],
    },
  'put back a consistent older copy of an entry, its fields and every grant of it together': {
    run: [STORE_HIDDEN],
    hardened: [STORE_UNREADABLE],
  },
  "swap name-index rows so `get A` prints B's value; roll a rotated field back": {
    run: [STORE_HIDDEN],
    sameUser: [
      tested(
        'records',
        'swapped rows of the agent’s name index: get C7 is refused with VLT-3022, not C11’s value',
      ),
      tested(
        'records',
        'swapped rows of the owner’s name index: entry show and set are refused with VLT-3022',
      ),
      tested(
        'records',
        'a rolled-back field record is refused with VLT-3020; so is a whole entry put back',
      ),
    ],
    hardened: [STORE_UNREADABLE],
  },
  'delete or rewrite audit records and re-chain them so `audit --verify` passes': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested('audit', 'a record deleted before the anchor and the rest re-chained is caught'),
      tested(
        'audit',
        'a re-chained rewrite before the anchor stays caught after more owner commands, verify included',
      ),
      tested('audit', 'a log cut before the anchor, its head moved back, is caught'),
      tested('audit', 'a re-chained log with the anchor removed is caught'),
      tested('audit', 'agent records after the last owner command are reported unanchored'),
    ],
    hardened: [STORE_UNREADABLE],
  },
  "kill the host, listen on `host.sock`, catch the owner's next passphrase (`daemon stop` needs it)":
    {
      run: [SANDBOX_PROCESSES, OWNER_POWER_INSIDE],
      sameUser: [
        tested('host-identity', 'a python squatter that even holds the host lock gets nothing'),
        tested('host-identity', 'a node squatter without the lock gets nothing'),
      ],
      hardened: [
        tested('hardened-host', 'as the user: the socket cannot be removed, renamed or shadowed'),
        tested(
          'hardened-host',
          'as the user: daemon stop is refused without the passphrase, and with a wrong one',
        ),
      ],
    },
  'the same, with a stand-in that takes the host lock, runs as `node` and rewrites its own argv and environment in memory (FFI)':
    {
      run: [STORE_HIDDEN, SANDBOX_PROCESSES],
      hardened: [
        STORE_UNREADABLE,
        tested('hardened-host', 'as the user: the socket cannot be removed, renamed or shadowed'),
      ],
    },
  'start the host itself under `faketime` or `NODE_OPTIONS=--inspect`': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested(
        'host-identity',
        'the real host started with NODE_OPTIONS=--inspect gets no passphrase',
      ),
      tested('host-identity', 'the real host started with NODE_COMPILE_CACHE gets no passphrase'),
      tested(
        'host-identity',
        'the real host under faketime gets no passphrase, VAULT_ACCEPT_FAKETIME=1 or not: only a test build accepts it',
      ),
    ],
    hardened: [STORE_UNREADABLE],
  },
  "read the host's memory (`/proc/<pid>/mem`, ptrace)": {
    run: [SANDBOX_PROCESSES],
    hardened: [STORE_UNREADABLE],
  },
  "with a dump of the host's memory and a copy of the store, read the entry names of audit records sealed before the current audit epoch":
    {
      run: [AUDIT_EPOCH_WIPED],
      sameUser: [AUDIT_EPOCH_WIPED],
      hardened: [AUDIT_EPOCH_WIPED],
    },
  'claim another pid as the audit source': {
    run: [
      tested(
        'threat-run-audit-source',
        'inside run, a request that claims pid 1 is audited with the kernel’s pid and uid',
      ),
    ],
    sameUser: [
      tested('host-identity', 'a client that claims pid 1 is audited with its real pid and uid'),
    ],
    hardened: [HARDENED_READS],
  },
  'race two host starts so an orphan host unlinks the live socket': {
    run: [STORE_HIDDEN],
    sameUser: [
      tested(
        'host-identity',
        '100 hosts started at once: exactly one serves, and its socket works',
      ),
      tested(
        'host-identity',
        'a host that loses the race, or stops after the winner started, never unlinks its socket',
      ),
    ],
    hardened: [
      STORE_UNREADABLE,
      tested(
        'host-identity',
        '100 hosts started at once: exactly one serves, and its socket works',
      ),
    ],
  },
  'stall every client with one `resolve` of 10,000 unknown references, or grow the store with it': {
    run: BOUNDED,
    sameUser: BOUNDED,
    hardened: BOUNDED,
  },
  'guess the owner passphrase through the host': {
    run: [OWNER_POWER_INSIDE],
    sameUser: [GUESSES],
    hardened: [GUESSES],
  },
  "keep wrong passphrase guesses queued so that the owner's own command (`agent lock`) waits behind them":
    {
      run: [OWNER_POWER_INSIDE],
      sameUser: [GUESS_QUEUE],
      hardened: [GUESS_QUEUE],
    },
  "hold many large request bodies or connections open to grow the host's memory until it dies, or to crowd out the owner":
    {
      run: [
        tested(
          'threat-run-resources',
          'inside run, 64 half-sent bodies of 2 MiB on the session socket: the host stays bounded, the owner and another agent are served',
        ),
      ],
      sameUser: [HELD_BODIES],
      hardened: [HELD_BODIES],
    },
  "on the proxy's framed host channel: claim another caller, send an oversize or half frame, garbage, an owner command, or more than the pool holds":
    {
      run: [
        tested(
          'threat-run-resources',
          'inside run, the session socket offers no framed channel: the upgrade is answered as an ordinary refused request',
        ),
      ],
      sameUser: CHANNEL_ATTACKS,
      hardened: CHANNEL_ATTACKS,
    },
  "read as fast as the limits allow, for days, so the audit log grows the host's memory until it dies":
    {
      run: [HOST_MEMORY_BOUND],
      sameUser: [HOST_MEMORY_BOUND],
      hardened: [HOST_MEMORY_BOUND],
    },
  "read `run`'s environment (`/proc/$PPID/environ`: the passphrase file) or other sessions' tokens":
    {
      run: [SANDBOX_PROCESSES],
      // The hardened test reads the /proc of a process of another uid (the
      // host's): the kernel's rule that keeps `run`'s environment from an
      // agent of another user.
      hardened: [STORE_UNREADABLE],
    },
  '`setsid` a child, SIGKILL `run`: the session token keeps working up to 12 hours': {
    run: [
      tested(
        'sandbox',
        'run killed by SIGKILL: a setsid grandchild dies and the session token is refused',
      ),
    ],
  },
  "rewrite the installed CLI, `wraps.json` or shell start-up files to hijack the owner's next command":
    {
      run: [
        tested(
          'sandbox',
          'the installed CLI and the shell start-up files are read-only; cwd, /tmp and --allow-write are writable',
        ),
      ],
    },
  'reach the network directly, around the proxy': {
    run: [tested('sandbox', 'no direct egress; --allow-net opens one destination')],
  },
  "reach a service on the owner's loopback through the session's proxy": {
    run: [
      tested(
        'sandbox',
        'loopback, unspecified and interface addresses are refused (VLT-2053) unless --allow-net names them',
      ),
      tested('run', 'the proxy’s refusals of the session are shown on run’s stderr, one line each'),
    ],
  },
  "read the owner's other credentials (`~/.ssh`, `~/.aws`, `~/.kube`, `~/.netrc`, browser profiles, ...)":
    {
      run: [
        tested(
          'sandbox',
          "the owner's other credentials and the sockets that lead outside are hidden; --allow-read shows one",
        ),
      ],
    },
  'start a process outside through a socket (`systemd-run --user` via `XDG_RUNTIME_DIR`, the Docker socket)':
    {
      run: [
        tested(
          'sandbox',
          "the owner's other credentials and the sockets that lead outside are hidden; --allow-read shows one",
        ),
      ],
    },
  'start its own unlock (`agent unlock`, `unlock.begin`) and wait for the owner to touch the key on the page it opened':
    {
      run: [OWNER_POWER_INSIDE, OWN_UNLOCK],
      sameUser: [OWN_UNLOCK],
      hardened: [OWN_UNLOCK],
    },
  'unlock itself with an assertion the owner made to unlock another agent': {
    run: CHALLENGE_NAMES_AGENT,
    sameUser: CHALLENGE_NAMES_AGENT,
    hardened: CHALLENGE_NAMES_AGENT,
  },
  'with the passphrase (a passphrase file it read), enrol a key of its own and lift a lockdown with it':
    {
      run: KEY_VOUCHES,
      sameUser: KEY_VOUCHES,
      hardened: KEY_VOUCHES,
    },
  'run a command outside later through the project (`git config core.fsmonitor`, `.git/hooks`, `.envrc`, `.vscode/`)':
    {
      run: [
        tested(
          'sandbox-wall',
          "git config, hooks, .envrc and editor tasks cannot be changed or made inside; the owner's git status runs nothing",
        ),
        tested(
          'threat-nested-project',
          'inside run, an existing nested repository’s config and hooks, and nested agent settings, cannot be changed',
        ),
        tested(
          'threat-nested-project',
          'after run, what the agent planted in new nested repositories is held: the owner’s git status, commit and log run nothing; a plain git init and commit survive',
        ),
        tested(
          'threat-nested-project',
          'inside run, a git planted in a project directory on the owner’s PATH is never what run’s own check runs',
        ),
        tested(
          'threat-nested-project',
          'an agent that floods the project past the walk’s bound: run says the check stopped there',
        ),
      ],
    },
  "point a linked worktree's `commondir` at a git directory of its own under `node_modules` (no `HEAD`; `core.fsmonitor`) for the owner's next `git status` there":
    {
      run: [
        tested(
          'threat-project-controls',
          'a linked worktree’s commondir pointed at a HEAD-less git directory under node_modules: the owner’s git status in the worktree runs nothing, and run names what it held',
        ),
        tested(
          'threat-project-controls',
          'git directories planted under node_modules (with and without HEAD, and a .git) are held: the owner’s git there runs nothing',
        ),
        tested(
          'threat-project-controls',
          'inside run, git commit, checkout -b and stash still work, and nothing of them is held',
        ),
        tested(
          'project-check',
          'a git directory is judged by what git writes for ordinary work: a linked worktree’s commondir led elsewhere, a file git does not know and a HEAD-less git directory under node_modules are held; commits, a stash, a new worktree and info/exclude are not',
        ),
      ],
    },
  "edit the hooks `core.hooksPath` names (husky's `.husky/_`, one set in the owner's global config) or a hook manager's config (`lefthook.yml`, `.pre-commit-config.yaml`)":
    {
      run: [
        tested(
          'threat-project-controls',
          'husky’s layout (core.hooksPath .husky/_), and a hooks directory set in the owner’s global config: the agent cannot edit the hooks, and the owner’s git commit runs nothing of the agent’s',
        ),
      ],
    },
  "change what the owner's tools run as code later (`package.json` scripts, `Makefile`, CI workflows, `.env*`, an `.envrc` opened with `--allow-write`)":
    {
      run: [
        tested(
          'threat-project-controls',
          'what runs later: one line each for changed package.json scripts, a Makefile and an opened .envrc; none for a package.json change outside scripts',
        ),
        tested(
          'project-check',
          'what runs later: named when the agent made or changed it (package.json only for its scripts, pyproject.toml only for its build system), never held',
        ),
      ],
    },
  "read a descriptor the owner's shell or CI runner left open (`exec 260<passfile`, then `cat <&260` inside)":
    {
      run: [
        tested('sandbox-wall', "a descriptor the owner's shell left open does not reach the agent"),
      ],
    },
  "exhaust the machine's processes (a fork bomb; 1,500 `sleep`s)": {
    run: [
      tested('sandbox-wall', '--max-procs bounds what the agent can start, on the machine too'),
    ],
  },
  "exhaust the host's descriptors with 10,000 half-sent requests": {
    run: [
      tested(
        'sandbox-wall',
        "10,000 half-sent requests from inside hold few of the host's descriptors; the owner and another agent go on",
      ),
    ],
    sameUser: MAIN_SOCKET_CAPPED,
    hardened: MAIN_SOCKET_CAPPED,
  },
  'fill the disk with refused requests (a loop of bad tokens, a locked agent asking again, a name out of scope asked again, an agent over its limit asking again) until the host refuses the owner too':
    {
      run: [
        tested(
          'threat-run-resources',
          'inside run, an agent asking 2,000 times for an entry out of scope, then 2,000 times with a garbage token: its refusals coalesced, the store bounded, others served',
        ),
      ],
      sameUser: [
        tested(
          'audit-flood',
          'a flood of garbage tokens is coalesced: bounded records, every refusal counted, others still served and recorded',
        ),
        tested(
          'audit-flood',
          'a locked agent asking again and again: its refusals coalesced as well',
        ),
        tested(
          'audit-flood',
          'an agent asking again and again for a name out of its scope: the first in full, the repeats coalesced',
        ),
        tested(
          'audit-flood',
          'an agent over its limit asking again and again while its violation is quiet: the violation in full, the repeats coalesced',
        ),
      ],
    },
  'fill the disk with reads it is allowed (re-reading its own entry in a loop: each release is audited) until the host refuses the owner too':
    {
      run: [
        tested(
          'threat-run-resources',
          'inside run, an agent re-reading its own entry 5,000 times: locked past its values a minute, the store bounded, the owner and another agent served',
        ),
      ],
      sameUser: [
        tested(
          'audit-flood',
          'an agent re-reading an entry it may read, again and again: locked past its values a minute, its records bounded',
        ),
      ],
    },
  'fill the disk with files of its own (the working directory is its to write) until the host refuses every release':
    {
      run: [DISK_RESERVE],
      sameUser: [DISK_RESERVE],
      hardened: [DISK_RESERVE],
    },
  'use a long-lived token from a token file (`VAULT_TOKEN_FILE`, a config directory not in use)': {
    run: [tested('sandbox-wall', 'VAULT_TOKEN_FILE, wherever it is, is hidden'), STORE_HIDDEN],
  },
  "plant a hook, MCP server, `notify` or custom command in its own state (`~/.claude/settings.json`, `~/.claude.json`, `~/.codex/config.toml`, `~/.gemini/settings.json`) for the owner's next unsandboxed start":
    {
      run: [
        tested(
          'run-profiles',
          "Claude Code: hooks, commands and MCP servers never reach the owner's files; its state does",
        ),
        tested(
          'run-profiles',
          'Codex: its state directory is made and writable, config.toml (notify, MCP servers) is not',
        ),
        tested(
          'run-profiles',
          "Gemini CLI: settings.json's MCP servers and custom commands stay the owner's",
        ),
      ],
    },
  "write a file the owner imports (`vault-cli import .env`): name the owner's entries to replace them, escapes in names, a link to `~/.ssh/id_ed25519`, a huge file":
    {
      run: IMPORT_FILE,
      sameUser: IMPORT_FILE,
      hardened: IMPORT_FILE,
    },
  'plant one in the project (`.mcp.json`, `.claude/settings.json`, `.gemini/settings.json`, `AGENTS.md` in the working directory)':
    {
      run: [
        tested(
          'threat-project-agent-config',
          'inside run, the project’s .mcp.json and .claude/ cannot be made: no placeholder is left',
        ),
        tested(
          'threat-project-agent-config',
          'inside run, the owner’s own .mcp.json and .claude/settings.json stay as they were',
        ),
        tested(
          'threat-project-agent-config',
          'inside run, Gemini CLI’s, Codex’s and Aider’s project settings and Claude’s hooks and skills cannot be made: no placeholder is left',
        ),
        tested(
          'threat-project-agent-config',
          'inside run, the owner’s own .gemini/settings.json, .codex/config.toml and .aider.conf.yml stay as they were',
        ),
      ],
    },
  'read the model key from its environment, state or transcript': {
    run: [
      tested(
        'run-profiles',
        "the agent holds vault://Anthropic/key; the profile's host gets the key in x-api-key",
      ),
      tested(
        'agents-real-run',
        'starts in the sandbox, writes its state, completes one prompt; the key reaches only the stand-in',
      ),
    ],
    sameUser: [REFERENCE_RECIPE],
    hardened: [REFERENCE_RECIPE],
  },
  "use the owner's session from inside `run` (its own pty and session, or sandbox)": {
    run: [OWNER_POWER_INSIDE, SESSION_NOT_INSIDE_RUN, SESSION_SANDBOXED_RUN],
    sameUser: [SESSION_NOT_INSIDE_RUN],
    hardened: [SESSION_NOT_INSIDE_RUN],
  },
  'open a session by itself: with no terminal, or with a passphrase file it found': {
    run: [SESSION_SANDBOXED_RUN],
    sameUser: [SESSION_NO_TERMINAL, SESSION_NOT_FROM_FILE],
    hardened: [SESSION_NO_TERMINAL, SESSION_NOT_FROM_FILE],
  },
  "get the owner to type the passphrase at a prompt its own owner command raised in the agent's terminal, so a session opens there":
    { run: [SESSION_SANDBOXED_RUN] },
  "start the host with a configuration that makes the owner's sessions last for days": {
    run: [OWNER_POWER_INSIDE],
    sameUser: [
      tested(
        'owner-session-config',
        'asks for 999999999 minutes: the session lasts 12 h at most, 1 h idle',
      ),
      [
        'test/unit/session-terms.test.ts',
        'a hostile configuration cannot make a session last longer than 12 h, or idle longer than 1 h',
      ],
    ],
  },
  "watch an entry outside its scope through `render --watch`'s change feed, to learn when (or whether) it changes":
    {
      run: [
        tested(
          'render-watch-run',
          'inside run, a name outside the session’s scope is never reported changed',
        ),
      ],
      sameUser: [
        tested(
          'render-watch-values',
          'a name outside the agent’s scope is never reported changed: watching it learns nothing',
        ),
      ],
    },
  "learn through `render --watch`'s change feed of another agent's activity (its reads, its revocation, the end of its `run` session re-keying a shared entry)":
    {
      run: [
        tested(
          'threat-run-watch',
          'inside run, another agent’s reads, the end of its run session, its narrowing and its revocation are never reported; the owner’s change is',
        ),
      ],
      sameUser: [
        tested(
          'render-watch-values',
          'a value the template uses is rotated: a new whole document; unrelated changes render nothing',
        ),
      ],
    },
  'rotate a watched value in a storm (with the owner’s powers) to make a watching render flap, or spend its agent’s limits until it locks':
    {
      run: [
        tested(
          'threat-run-watch',
          'inside run, a storm of owner writes is refused (VLT-2051): the value, the watching render and the limits stay',
        ),
      ],
      sameUser: [
        tested(
          'render-watch-values',
          'a rotation storm ends on the last value, with whole documents, and costs the agent nothing of its limits',
        ),
      ],
    },
  'a same-user process that puts itself on the terminal (`TIOCSTI`, ptrace, `setsid` + open the tty)':
    {
      run: [
        tested(
          'threat-run-terminal',
          'inside run, TIOCSTI, the owner’s tty by path, setsid and ptrace reach nothing of the owner’s terminal or shell',
        ),
        tested(
          'threat-run-terminal',
          'report requests an agent sends as it exits: nothing of the terminal’s answers is typed into the owner’s shell',
        ),
        tested(
          'threat-run-terminal',
          'modes an agent leaves set, which make the terminal type on its own (mouse, focus, paste), are off when run returns',
        ),
      ],
    },
  'a process the owner starts in the unlocked terminal (a git hook, a package script, an `.envrc` the agent wrote)':
    {
      sameUser: OWNER_SESSION_TIGHTENS,
      hardened: OWNER_SESSION_TIGHTENS,
    },
  'use it from another terminal, or a process with no terminal (cron, a daemon)': {
    run: SESSION_OTHER_TERMINAL,
    sameUser: SESSION_OTHER_TERMINAL,
    hardened: SESSION_OTHER_TERMINAL,
  },
  "hand a connected socket to another process (SCM_RIGHTS), exit, and wait until the pid names the owner's next command or a holding `sweep`":
    {
      sameUser: HANDED_CONNECTION,
      hardened: HANDED_CONNECTION,
    },
  'use the owner key the host holds for a sweep, from another process (of the same terminal, or a reused pid)':
    {
      sameUser: PROCESS_HOLD,
      hardened: PROCESS_HOLD,
    },
  'open its own scope offline with its own token (values and TOTP seeds), with no audit record and no limit':
    {
      run: [STORE_HIDDEN],
      hardened: [STORE_UNREADABLE],
    },
  "point its agent name row at another agent's record, so the owner's `run --agent claude` mints a session of `admin`":
    {
      run: [STORE_HIDDEN],
      sameUser: [
        tested(
          'name-rows',
          'a name row pointed at another agent: run, show, scope, limits, lock and revoke refuse with VLT-3021; check names the row',
        ),
      ],
      hardened: [STORE_UNREADABLE],
    },
  "make itself unrevokable: delete its name row, or bump a field's generation in its scope so the rotation fails":
    {
      run: [STORE_HIDDEN],
      sameUser: [
        tested(
          'name-rows',
          'an agent that deletes its own name row is still found: revoke by name says VLT-3021, by id revokes',
        ),
        tested(
          'name-rows',
          'a field generation bumped in its scope: revoke still revokes, then names the entry it could not rotate',
        ),
      ],
      hardened: [STORE_UNREADABLE],
    },
  "put an older owner anchor back and cut the log to it (records before the owner's last command erased)":
    {
      run: [STORE_HIDDEN],
      sameUser: [
        tested(
          'anchor-replay',
          'an old anchor put back with the log cut to it: the next owner command and audit --verify refuse with VLT-3003',
        ),
        tested(
          'anchor-replay',
          'a log cut back and written again past the remembered record is refused as well',
        ),
      ],
      hardened: [STORE_UNREADABLE],
    },
  'the same, with a stand-in under `unshare -Urm`, its script bind-mounted over main.js (cmdline, exe, lock, uid match)':
    {
      run: [STORE_HIDDEN, SANDBOX_PROCESSES],
      sameUser: [
        tested(
          'host-namespace',
          'a stand-in bind-mounted over main.js in its own namespaces gets VLT-3010 and never the passphrase',
        ),
      ],
      hardened: [
        STORE_UNREADABLE,
        tested('hardened-host', 'as the user: the socket cannot be removed, renamed or shadowed'),
      ],
    },
  "take the caller's token from the environment of the command `exec` starts (`-- env`, a tool it poisoned): the whole scope instead of one value":
    { run: [EXEC_ENV], sameUser: [EXEC_ENV], hardened: [EXEC_ENV] },
  'read the memory of `run` (the passphrase it keeps for the dashboard) or of a sweep (the values it fetched), by ptrace or `/proc/<pid>/mem`, where Yama is absent':
    { run: NOT_DUMPABLE, sameUser: NOT_DUMPABLE },
  "hide `run`'s last lines (what it held) by ending with a scroll region, the alternate screen, another charset, concealed text or a keyboard protocol left set":
    {
      run: [
        tested(
          'threat-run-terminal-restore',
          'an agent that ends with a two-line scroll region, another charset and hidden text: the held line is on the owner’s screen when run returns',
        ),
      ],
    },
  "take an AWS secret key the proxy signs with (`run --aws`, `proxy env --aws`) from its environment, the CLI's output or its files":
    {
      run: [
        tested(
          'proxy-sigv4',
          'under run --aws, sandboxed: the agent’s environment, output and files hold no secret key, and its aws CLI works',
        ),
      ],
      sameUser: [
        tested(
          'proxy-sigv4',
          'proxy env --aws gives a surrogate the CLI accepts; list-buckets is re-signed with the real key and audited as a fill',
        ),
        tested(
          'proxy-sigv4',
          'aws sts get-caller-identity with a session token: the surrogate token is replaced by the real one, signed',
        ),
      ],
    },
  'have a surrogate AWS key id minted for another session or agent re-signed': {
    run: [
      tested(
        'proxy-sigv4',
        'under run --aws, sandboxed: the agent’s environment, output and files hold no secret key, and its aws CLI works',
      ),
    ],
    sameUser: [
      tested(
        'proxy-sigv4',
        'a surrogate minted for another agent is refused (VLT-2058), audited, and nothing reaches the stand-in',
      ),
    ],
  },
  'get a surrogate-signed AWS request forwarded unsigned: malformed, presigned URL, SigV4A, aws-chunked':
    {
      sameUser: [
        tested(
          'proxy-sigv4',
          'a presigned URL made with the surrogate is refused (VLT-2057) and never reaches the stand-in',
        ),
        tested('proxy-sigv4', '${name}: ${code}, nothing reaches the stand-in'),
        [
          'test/unit/proxy-sigv4.test.ts',
          'fuzz: any Authorization holding a surrogate is read or refused (VLT-2056/2057), never passed, never a throw',
        ],
      ],
    },
  'have AWS requests re-signed past its limits, after a lockdown, or to a host the key pair is not bound to':
    {
      sameUser: [
        tested(
          'proxy-sigv4-limits',
          'rate limits charge re-signs: a second credential within the minute is 429 VLT-2042, and nothing reaches the stand-in',
        ),
        tested(
          'proxy-sigv4-limits',
          'a key pair bound to other hosts: each re-sign to this one is an exfil attempt; the second locks the agent, who then gets nothing re-signed',
        ),
      ],
    },
  'take the TOTP seed rather than a code (`get G --field totp`, `render`, a fill)': {
    run: SEED_STAYS,
    sameUser: SEED_STAYS,
    hardened: SEED_STAYS,
  }, // Issue 35: an agent's state by allow-list.
  "leave what the owner's next session runs in its own state (`~/.claude/statusline-command.sh`, `local/claude`, `jobs/`, `rules/`, `memory/MEMORY.md`; `~/.codex/w.config.toml`; `~/.gemini/skills/`)":
    {
      run: [
        tested(
          'threat-agent-state',
          'Claude Code: scripts, daemon and job files, rules and memory, and ~/.claude.json keys',
        ),
        tested(
          'threat-agent-state',
          'Codex: a profile layer with an MCP server is held; its session transcript comes back',
        ),
        tested('threat-agent-state', 'Gemini CLI: a skill is held'),
      ],
    },
  "add keys to `~/.claude.json` that a deny list misses (`primaryApiKey`, `skipDangerousModePermissionPrompt`, a project's `hasClaudeMdExternalIncludesApproved`)":
    {
      run: [
        tested(
          'threat-agent-state',
          'Claude Code: scripts, daemon and job files, rules and memory, and ~/.claude.json keys',
        ),
      ],
    },
  'get a plant through the keep list: a kept path turned into a link to `~/.bashrc`, an executable named as a transcript, a script beside the transcripts':
    {
      run: [
        tested(
          'threat-agent-state',
          'Claude Code: scripts, daemon and job files, rules and memory, and ~/.claude.json keys',
        ),
      ],
    },
  // SSH keys (docs/ssh.md): vault-cli ssh-agent against a real sshd.
  'take an SSH private key rather than a signature (`get K --field ssh_private_key`, `render`, a fill)':
    {
      run: [
        tested(
          'ssh-agent',
          'under run --ssh: ssh and git clone from inside the sandbox through the session’s agent; ~/.ssh hidden; the key itself refused',
        ),
      ],
      sameUser: [
        tested(
          'ssh-agent',
          'the private key is released to no agent: get, render and the key in no file, environment or memory',
        ),
      ],
    },
  'sign with an SSH key for a server whose host key its entry is not bound to, again and again': {
    sameUser: [
      tested(
        'ssh-agent',
        'an entry bound to another server’s host key: refused and counted; the second such attempt locks',
      ),
    ],
  },
  'sign with more distinct SSH keys than the limits allow': {
    sameUser: [
      tested(
        'ssh-agent',
        'an over-reading agent: signatures for more distinct keys than its limit are refused, then it is locked; then ssh fails at once',
      ),
    ],
  },
  'make up a session-bind, reuse one for another session, or sign through a forwarded agent (`ssh -A`)':
    {
      sameUser: [
        tested(
          'ssh-agent',
          'session-binds: a forged one, another session’s data, a forwarded agent: refused and audited; a bind the server signed signs',
        ),
      ],
    },
  'crash or bloat `vault-cli ssh-agent` with malformed, truncated or oversized agent messages': {
    sameUser: [
      tested(
        'ssh-agent',
        'malformed, truncated and oversized agent messages: FAILURE or a closed connection; the agent serves on',
      ),
      tested(
        'ssh-agent-flood',
        '300 half-sent 256 KiB messages: the agent keeps at most 64 connections and its budget of bytes, and answers a fresh client during and after',
      ),
      tested(
        'ssh-agent-flood',
        'session-binds: 64 KiB ones refused; 7 KiB ones kept within the budget; a real-sized one taken',
      ),
      tested(
        'ssh-agent-flood',
        'replies never read: 8 connections each pipelining 100,000 requests; the agent holds its budget, not the replies',
      ),
    ],
  },
  'with a hardware key enrolled, a process on the unlocked terminal (a hook) that has the passphrase, from a file the agent read or a prompt it raised':
    {
      sameUser: [
        tested(
          'owner-session-key',
          'the passphrase alone is refused in the session: with stdin closed (a hook), and at the terminal',
        ),
        tested(
          'owner-session-key',
          '`entry show --reveal` in the session needs the key, and works with it',
        ),
      ],
    },
  "replay a key's assertion made for one owner request (`agent add`) with another (`entry show --reveal`)":
    {
      sameUser: [tested('owner-session-key', 'an assertion made for another request is refused')],
    },
};

interface Row {
  attack: string;
  cells: Record<Mode, string>;
  line: number;
}

/** A table line's cells; a `\|` inside a cell is a pipe character, not a column. */
function cellsOf(line: string): string[] {
  return line
    .slice(1, line.trimEnd().length - 1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
}

/**
 * The attack rows of every table of the document with the attack table's
 * columns (the main one under "## Attacks", and any a later section adds),
 * section rows left out.
 */
function rows(): Row[] {
  const lines = readFileSync(join(ROOT, DOC), 'utf8').split('\n');
  const out: Row[] = [];
  let tables = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!(lines[i] ?? '').startsWith('|') || (lines[i - 1] ?? '').startsWith('|')) continue;
    const header = cellsOf(lines[i] ?? '');
    if (header[0] !== HEADER[0]) continue;
    assert.deepEqual(header, HEADER, `${DOC}:${i + 1}: an attack table's columns`);
    tables++;
    for (let k = i + 1; (lines[k] ?? '').startsWith('|'); k++) {
      const cells = cellsOf(lines[k] ?? '');
      if (cells.every((c) => /^-+$/.test(c))) continue;
      if (cells.slice(1).every((c) => c === '') && /^\*\*.*\*\*$/.test(cells[0] ?? '')) continue;
      assert.equal(cells.length, 4, `${DOC}:${k + 1}: ${cells.length} cells`);
      const [attack = '', run = '', sameUser = '', hardened = ''] = cells;
      out.push({ attack, cells: { run, sameUser, hardened }, line: k + 1 });
    }
  }
  assert.ok(tables >= 1 && out.length > 0, `${DOC} has no attack table`);
  return out;
}

/**
 * Whether a cell claims the attack fails. Every cell must say which: a claim
 * ("held", "held if", "in part", "slowed"), or none ("not held", "not shown"
 * for what rests on reasoning alone, "—" where the mode has no such thing).
 */
function claims(cell: string, where: string): boolean {
  if (/^(not held|not shown|—)/.test(cell)) return false;
  if (/^(held|in part|slowed)/.test(cell)) return true;
  assert.fail(`${where}: "${cell}" says neither held nor not held / not shown`);
}

/** The names of the tests of a file, as their source spells them. */
const namesCache = new Map<string, Set<string>>();
function testNames(file: string): Set<string> {
  let names = namesCache.get(file);
  if (!names) {
    const source = readFileSync(join(ROOT, file), 'utf8');
    names = new Set(
      [...source.matchAll(/\b(?:test|it)\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)].map(
        (m) => m[2] ?? '',
      ),
    );
    namesCache.set(file, names);
  }
  return names;
}

test('every claim of the threat model’s table has its tests in the ledger', () => {
  const all = rows();
  const seen = new Set<string>();
  for (const row of all) {
    assert.ok(!seen.has(row.attack), `${DOC}:${row.line}: a second row "${row.attack}"`);
    seen.add(row.attack);
  }
  const missing: string[] = [];
  for (const row of all) {
    const entry = LEDGER[row.attack] ?? {};
    for (const mode of MODES) {
      const where = `${DOC}:${row.line} (${mode})`;
      if (claims(row.cells[mode], where) && (entry[mode]?.length ?? 0) === 0)
        missing.push(`${where}: "${row.attack}" claims "${row.cells[mode]}" with no test`);
    }
  }
  assert.deepEqual(
    missing,
    [],
    'write the test and add it to LEDGER, or say "not shown" in the cell',
  );
});

test('the ledger names only rows and claims of the table', () => {
  const table = new Map(rows().map((r) => [r.attack, r]));
  for (const [attack, entry] of Object.entries(LEDGER)) {
    const row = table.get(attack);
    assert.ok(row, `LEDGER: "${attack}" is no row of ${DOC}`);
    for (const mode of MODES) {
      if (entry[mode] === undefined) continue;
      const where = `${DOC}:${row.line} (${mode})`;
      assert.ok(
        claims(row.cells[mode], where),
        `${where}: "${row.cells[mode]}" claims nothing, yet LEDGER cites tests`,
      );
    }
  }
});

test('every test the ledger cites exists under that exact name', () => {
  const wrong: string[] = [];
  for (const [attack, entry] of Object.entries(LEDGER)) {
    for (const mode of MODES) {
      for (const [file, name] of entry[mode] ?? []) {
        if (!existsSync(join(ROOT, file))) wrong.push(`${attack} (${mode}): no file ${file}`);
        else if (!testNames(file).has(name))
          wrong.push(`${attack} (${mode}): no test '${name}' in ${file}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('the ledger check reads test names as written, and a cell must take a side', () => {
  assert.ok(
    testNames('test/unit/threat-model.test.ts').has(
      'every test the ledger cites exists under that exact name',
    ),
  );
  assert.equal(
    testNames('test/unit/threat-model.test.ts').has('every test the ledger cites'),
    false,
  );
  assert.equal(claims('held if the agent’s user is not the owner’s', 'x'), true);
  assert.equal(claims('in part: the owner’s client refuses such a host', 'x'), true);
  assert.equal(claims('not shown (file permissions)', 'x'), false);
  assert.throws(() => claims('probably fine', 'x'));
});
