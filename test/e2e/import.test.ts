// `vault-cli import` end to end: a real vault, the built CLI, a real pty for
// the prompt, real gpg for a pass store. Most cases are a prompt-injected
// agent's: it can write the file the owner later imports (a `.env` in the
// project), so it tries to replace the owner's entries, to reach the owner's
// terminal with escapes through --dry-run, to make the import huge, and to
// point the file at the owner's SSH key.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords, hex } from '../support/e2e-helpers.js';
import { installBin, shellUnderPty, underPty, until } from '../support/pty.js';
import { PASSPHRASE, Rig, ok, runCli, type Result } from '../support/rig.js';
import { makeZip } from '../support/zip.js';

const rig = new Rig();
let n = 0;

before(async () => {
  await rig.create();
  installBin(rig);
});
after(() => rig.dispose());

/** A file in the rig's project directory, as an agent would leave it there. */
function file(name: string, content: string | Buffer): string {
  const dir = join(rig.root, 'project');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${++n}-${name}`);
  writeFileSync(path, content);
  return path;
}

async function reveal(entry: string, field = 'password'): Promise<string> {
  return ok(await rig.owner(['entry', 'show', entry, '--reveal', '--field', field])).slice(0, -1);
}

async function names(): Promise<string[]> {
  const listed = JSON.parse(ok(await rig.owner(['entry', 'ls', '--json']))) as { name: string }[];
  return listed.map((e) => e.name);
}

function everything(r: Result): string {
  return r.stdout + r.stderr;
}

test('a .env file: every variable an entry, values only in the vault, one audit record per field', async () => {
  const stripe = `sk_live_${hex()}`;
  const pem = `-----BEGIN KEY-----\n${hex(32)}\n-----END KEY-----`;
  const env = file(
    '.env',
    `# app\nexport DOTENV_STRIPE="${stripe}"\nDOTENV_PEM='${pem}'\nDOTENV_EMPTY=\n`,
  );
  const r = await rig.owner(['import', env, '--prefix', 'app-']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /imported 2 of 2 entries: 2 created/);
  assert.ok(!everything(r).includes(stripe) && !everything(r).includes(pem));
  assert.equal(await reveal('app-DOTENV_STRIPE'), stripe);
  assert.equal(await reveal('app-DOTENV_PEM'), pem);
  assert.ok(!(await names()).includes('app-DOTENV_EMPTY'));
  const added = (await auditRecords(rig)).filter(
    (a) => a.action === 'entry_add' && (a.entry ?? '').startsWith('app-DOTENV_'),
  );
  assert.equal(added.length, 2);
  const audit = ok(await rig.owner(['audit', '--json']));
  assert.ok(!audit.includes(stripe));
});

test('a name that exists is refused, naming it, and nothing of the file lands; --skip-existing and --overwrite decide', async () => {
  const owners = `sk_live_owner_${hex()}`;
  await rig.set('STRIPE_KEY', owners);
  const agents = `sk_live_agent_${hex()}`;
  const env = file('.env', `NEW_ONE=${hex()}\nSTRIPE_KEY=${agents}\n`);

  const refused = await rig.owner(['import', env]);
  const msg = assertRefused(refused, 'VLT-1012');
  assert.match(msg, /"STRIPE_KEY"/);
  assert.ok(!msg.includes('NEW_ONE'), 'only the names that exist');
  assert.ok(!everything(refused).includes(agents));
  assert.equal(await reveal('STRIPE_KEY'), owners);
  assert.ok(!(await names()).includes('NEW_ONE'), 'the import is all or nothing');

  const skipped = await rig.owner(['import', env, '--skip-existing']);
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.match(skipped.stderr, /1 created, 0 overwritten, 1 left as they were/);
  assert.match(skipped.stderr, /left as it was: "STRIPE_KEY"/);
  assert.equal(await reveal('STRIPE_KEY'), owners);
  assert.ok((await names()).includes('NEW_ONE'));

  const both = await rig.owner(['import', env, '--skip-existing', '--overwrite']);
  assertRefused(both, 'VLT-1001');

  const over = await rig.owner(['import', env, '--overwrite']);
  assert.equal(over.code, 0, over.stderr);
  assert.match(over.stderr, /overwritten: "STRIPE_KEY"/);
  assert.equal(await reveal('STRIPE_KEY'), agents);
});

test('--dry-run lists entry and field names only, needs no vault and no passphrase, and sends nothing', async () => {
  const secret = `dry_${hex()}`;
  const env = file('.env', `DRY_A=${secret}\nDRY_B="${secret}"\n`);
  const elsewhere = join(rig.root, 'no-vault-here');
  const r = await runCli(['import', env, '--dry-run'], {
    ...rig.env,
    VAULT_DIR: elsewhere,
    VAULT_PASSPHRASE_FILE: undefined,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /would import 2 entries \(dotenv\)/);
  assert.match(r.stdout, /^ {2}"DRY_A" {2}password$/m);
  assert.ok(!everything(r).includes(secret));
  assert.ok(!existsSync(elsewhere), 'no host started, no vault made');
  assert.ok(!(await names()).includes('DRY_A'));

  const json = await rig.owner(['import', env, '--dry-run', '--json']);
  assert.deepEqual(JSON.parse(json.stdout), {
    entries: [
      { name: 'DRY_A', fields: ['password'] },
      { name: 'DRY_B', fields: ['password'] },
    ],
    passedOver: 0,
  });
});

test('terminal escapes in names never reach the terminal: refused, shown as code points', async () => {
  const osc52 = '\u001b]52;c;cm0gLXJmIH4K\u0007';
  const csi = '\u009b2J';
  const cases = [
    file('escape.csv', `Title,Password\n"Bank${osc52}",p\n`),
    file('c1.csv', `Title,Password\n"Bank${csi}",p\n`),
    file('bidi.csv', `Title,Password\n"pay\u202elapyap",p\n`),
    file('escape.env', `A${osc52}=1\n`),
  ];
  for (const path of cases) {
    for (const args of [['--dry-run'], []]) {
      const r = await rig.owner(['import', path, ...args]);
      const msg = assertRefused(r, 'VLT-1011', path);
      assert.match(msg, /^line 2: the name holds a control or invisible character \(U\+|^line 1: /);
      assert.doesNotMatch(everything(r), /[\u001b\u0007\u009b\u202e]/u);
    }
  }
  assert.ok(!(await names()).some((name) => name.startsWith('Bank') || name.startsWith('pay')));
});

test('a symlink to the owner’s SSH key is refused before it is read; a pasted key is refused naming a line only', async () => {
  const ssh = join(rig.root, '.ssh');
  mkdirSync(ssh, { recursive: true, mode: 0o700 });
  const body = `b3BlbnNzaC1rZXktdjEAAAAA${hex(24)}`;
  const key = `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n-----END OPENSSH PRIVATE KEY-----\n`;
  writeFileSync(join(ssh, 'id_ed25519'), key, { mode: 0o600 });
  const link = join(rig.root, 'project', '.env');
  symlinkSync(join(ssh, 'id_ed25519'), link);
  for (const args of [['--dry-run'], [], ['--from', '1password-csv']]) {
    const r = await rig.owner(['import', link, ...args]);
    assert.match(assertRefused(r, 'VLT-1013'), /is a symbolic link/);
    assert.ok(!everything(r).includes(body));
  }
  const pasted = file('.env', key);
  const r = await rig.owner(['import', pasted]);
  assert.equal(assertRefused(r, 'VLT-1011'), 'line 1: not a NAME=value line.');
  assert.ok(!everything(r).includes(body));
});

test('gigantic or endless sources are refused without reading them: a 17 MiB file, /dev/zero, a FIFO', async () => {
  const big = file('big.env', '');
  truncateSync(big, 17 * 1024 * 1024);
  assert.match(assertRefused(await rig.owner(['import', big]), 'VLT-1013'), /larger than 16 MiB/);
  const zero = await rig.owner(['import', '/dev/zero', '--dry-run']);
  assert.match(assertRefused(zero, 'VLT-1013'), /not a regular file/);
  const fifo = join(rig.root, 'project', 'fifo.env');
  const made = spawnSync('mkfifo', [fifo]);
  assert.equal(made.status, 0);
  const r = await rig.owner(['import', fifo, '--dry-run']);
  assert.match(assertRefused(r, 'VLT-1013'), /not a regular file/);
  // A 1PUX whose export.data inflates past the cap: refused at the cap.
  const bomb = file('bomb.1pux', makeZip({ 'export.data': Buffer.alloc(80 * 1024 * 1024, 32) }));
  const b = await rig.owner(['import', bomb, '--dry-run']);
  assert.match(assertRefused(b, 'VLT-1011'), /export\.data is larger than/);
});

test('a 1PUX export: items become entries with their fields; a TOTP seed reads back through totp', async () => {
  const pw = `pw-${hex()}`;
  const data = {
    accounts: [
      {
        attrs: { accountName: 'me' },
        vaults: [
          {
            attrs: { name: 'Private' },
            items: [
              {
                state: 'active',
                overview: { title: 'OnePux GitHub', url: 'https://github.com' },
                details: {
                  loginFields: [
                    { value: 'octo', designation: 'username', name: 'username' },
                    { value: pw, designation: 'password', name: 'password' },
                  ],
                  sections: [
                    {
                      title: '',
                      fields: [
                        {
                          title: 'one-time password',
                          id: 'TOTP_x',
                          value: { totp: 'otpauth://totp/GitHub?secret=JBSWY3DPEHPK3PXP' },
                        },
                      ],
                    },
                  ],
                },
              },
              { state: 'archived', overview: { title: 'OnePux Old' }, details: { password: 'x' } },
            ],
          },
        ],
      },
    ],
  };
  const zip = file(
    'export.1pux',
    makeZip({
      'export.attributes': Buffer.from('{"version":3}'),
      'export.data': Buffer.from(JSON.stringify(data)),
      'files/attachment.bin': Buffer.alloc(1000, 7),
    }),
  );
  const dry = await rig.owner(['import', zip, '--dry-run']);
  assert.match(dry.stdout, /"OnePux GitHub" {2}username,password,url,totp/);
  assert.match(dry.stdout, /passed over: 1/);
  const r = await rig.owner(['import', zip]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await reveal('OnePux GitHub'), pw);
  assert.equal(await reveal('OnePux GitHub', 'username'), 'octo');
  const token = await rig.addAgent('otp-reader', ['OnePux GitHub']);
  const code = await rig.agent(['totp', 'OnePux GitHub'], token);
  assert.match(ok(code), /^\d{6}\n$/);
  assert.ok(!(await names()).includes('OnePux Old'));
});

test('a pass store, decrypted with gpg as pass does: password, fields, notes; a symlink in the store refuses it', async () => {
  const gnupg = join(rig.root, 'gnupg');
  mkdirSync(gnupg, { mode: 0o700 });
  const env = { ...rig.env, GNUPGHOME: gnupg } as NodeJS.ProcessEnv;
  const gpg = (args: string[], input?: string) => {
    const r = spawnSync('gpg', ['--batch', '--yes', ...args], { env, input });
    assert.equal(r.status, 0, r.stderr.toString());
  };
  try {
    gpg([
      '--passphrase',
      '',
      '--quick-gen-key',
      'Pass Test <pass@example.test>',
      'default',
      'default',
      'never',
    ]);
    const store = join(rig.root, 'password-store');
    mkdirSync(join(store, 'web'), { recursive: true });
    mkdirSync(join(store, '.git'));
    writeFileSync(join(store, '.gpg-id'), 'pass@example.test\n');
    const pw = `pass-${hex()}`;
    const enc = (path: string, plain: string) =>
      gpg(['-e', '-r', 'pass@example.test', '-o', join(store, path)], plain);
    enc('web/github.com.gpg', `${pw}\nuser: alice\nrecovery codes below\n`);
    enc('mail.gpg', `${pw}-mail\n`);
    writeFileSync(join(store, '.git', 'ignored.gpg'), 'not an entry');

    const passEnv = { env: { GNUPGHOME: gnupg, PASSWORD_STORE_DIR: store } };
    const dry = await rig.owner(
      ['import', '--from', 'pass', '--prefix', 'pass-', '--dry-run'],
      passEnv,
    );
    assert.equal(dry.code, 0, dry.stderr);
    assert.ok(!everything(dry).includes(pw));
    assert.match(
      dry.stdout,
      /"?pass-mail"? {2}password\n {2}"pass-web\/github\.com" {2}password,user,notes/,
    );

    const r = await rig.owner(['import', '--from', 'pass', '--prefix', 'pass-'], passEnv);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await reveal('pass-web/github.com'), pw);
    assert.equal(await reveal('pass-web/github.com', 'user'), 'alice');
    assert.equal(await reveal('pass-web/github.com', 'notes'), 'recovery codes below');
    assert.equal(await reveal('pass-mail'), `${pw}-mail`);

    symlinkSync(join(rig.root, '.ssh'), join(store, 'linked'));
    const linked = await rig.owner(['import', '--from', 'pass', '--dry-run'], passEnv);
    assert.match(
      assertRefused(linked, 'VLT-1013'),
      /"linked" in the pass store is a symbolic link/,
    );
  } finally {
    spawnSync('gpgconf', ['--kill', 'all'], { env });
  }
});

test('an import larger than one request: one passphrase prompt on the terminal for every chunk', async () => {
  // Five values of 900 KiB: over the 4 MiB a request may carry, so several requests.
  const value = (i: number) => `${i}`.repeat(900 * 1024);
  const env = file('big.env', [1, 2, 3, 4, 5].map((i) => `CHUNKED_${i}=${value(i)}`).join('\n'));
  const run = underPty(rig, ['import', env], { VAULT_PASSPHRASE_FILE: undefined });
  await until(() => run.output().includes('Vault passphrase: '), 'the prompt');
  for (const key of PASSPHRASE) run.pty.write(key);
  run.pty.write('\r');
  const fate = await run.exited;
  assert.equal(fate.exitCode, 0, fate.output);
  assert.equal(fate.output.split('Vault passphrase').length - 1, 1, fate.output);
  assert.match(fate.output, /imported 5 of 5 entries: 5 created/);
  for (const i of [1, 5]) assert.equal(await reveal(`CHUNKED_${i}`), value(i));
});

test('with the terminal’s owner session open, an import of several requests asks nothing', async () => {
  const shell = shellUnderPty(rig, { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined });
  const count = (text: string) => shell.output().split(text).length - 1;
  const typed = async (line: string, answer?: string): Promise<number> => {
    const before = count('rc=');
    const prompts = count('Vault passphrase');
    shell.pty.write(`${line}; echo "rc""=$?"\r`);
    if (answer !== undefined) {
      await until(() => count('Vault passphrase') > prompts, `a prompt for ${line}`);
      for (const key of answer) shell.pty.write(key);
      shell.pty.write('\r');
    }
    await until(() => count('rc=') > before, line);
    return Number(/^(\d+)/.exec(shell.output().split('rc=').at(-1) ?? '')?.[1] ?? NaN);
  };
  try {
    await until(() => shell.output().includes('$ '), 'the shell');
    assert.equal(await typed('vault-cli unlock', PASSPHRASE), 0);
    const prompts = count('Vault passphrase');
    const value = (i: number) => `s${i}`.repeat(450 * 1024);
    const env = file('session.env', [1, 2, 3].map((i) => `SESSION_${i}=${value(i)}`).join('\n'));
    assert.equal(await typed(`vault-cli import ${env}`), 0, shell.output());
    assert.equal(count('Vault passphrase'), prompts, 'the import asked for nothing');
    assert.match(shell.output(), /imported 3 of 3 entries: 3 created/);
    assert.equal(await typed('vault-cli lock'), 0);
  } finally {
    shell.pty.kill();
  }
  assert.equal(await reveal('SESSION_3'), 's3'.repeat(450 * 1024));
});

test('a value the vault refuses (a bad TOTP seed) refuses the whole import, naming the entry, not the value', async () => {
  const seed = `not-a-seed-${hex()}`;
  const csv = file('bad-seed.csv', `Title,Password,OTPAuth\nSeedGood,p1,\nSeedBad,p2,${seed}\n`);
  const r = await rig.owner(['import', csv]);
  const msg = assertRefused(r, 'VLT-1002');
  assert.match(msg, /^Entry 2 of the import \("SeedBad"\), field totp: /);
  assert.ok(!everything(r).includes(seed));
  const listed = await names();
  assert.ok(!listed.includes('SeedGood') && !listed.includes('SeedBad'), 'nothing landed');
});
