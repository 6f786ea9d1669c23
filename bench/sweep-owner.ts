/**
 * What a `vault-cli sweep` costs the host in owner unlocks, on a vault with
 * the real Argon2id costs (not the tests' weak ones): MB (default 300) of
 * transcripts in FILES (default 200) files, a stored value planted in each, so
 * the sweep marks findings all along. Swept once with VAULT_PASSPHRASE_FILE and
 * no owner session, once in a terminal (a pty) holding an owner session. Prints
 * wall seconds and the passphrase derivations host.log counted for each;
 * asserts nothing.
 *
 *   node --import tsx bench/sweep-owner.ts [MB] [FILES]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellUnderPty, until } from '../test/support/pty.js';
import { PASSPHRASE, Rig, ok } from '../test/support/rig.js';

const MB = Number(process.argv[2] ?? 300);
const FILES = Number(process.argv[3] ?? 200);
const VALUES = 20;
const REAL = { VAULT_TEST_WEAK_KDF: undefined };

const derivations = (rig: Rig) =>
  readFileSync(join(rig.vaultDir, 'host.log'), 'utf8').split('owner passphrase derived').length - 1;

async function main(): Promise<void> {
  const rig = new Rig();
  try {
    ok(await rig.owner(['vault', 'create'], { env: REAL }));
    const values = Array.from(
      { length: VALUES },
      () => `sk_live_${randomBytes(18).toString('hex')}`,
    );
    const dotenv = join(rig.root, 'import.env');
    writeFileSync(dotenv, values.map((v, i) => `BENCH_${i}=${v}\n`).join(''));
    ok(await rig.owner(['import', dotenv], { env: REAL }));
    const dir = join(rig.root, 'transcripts');
    mkdirSync(dir);
    const per = Math.floor((MB * 1024 * 1024) / FILES);
    const filler = Buffer.alloc(per, 'the build passed; committing the change now. ');
    for (let i = 0; i < FILES; i++) {
      const at = Math.floor(per / 2);
      const planted = Buffer.from(`\n${values[i % VALUES]}\n`);
      writeFileSync(
        join(dir, `t${i}.jsonl`),
        Buffer.concat([filler.subarray(0, at), planted, filler.subarray(at)]),
      );
    }
    const args = ['sweep', '--stored', '--paths-only', '--path', dir, '--json'];

    const before = derivations(rig);
    const t0 = process.hrtime.bigint();
    const r = await rig.owner(args, { env: REAL });
    const fileSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const fileKdf = derivations(rig) - before;
    const found = r.stdout.split('\n').filter(Boolean).length;

    const shell = shellUnderPty(rig, { VAULT_PASSPHRASE_FILE: undefined, ...REAL });
    await until(() => shell.output().includes('$ '), 'the shell');
    shell.pty.write('vault-cli unlock; echo "un""locked=$?"\r');
    await until(() => shell.output().includes('Vault passphrase'), 'the prompt');
    shell.pty.write(PASSPHRASE + '\r');
    await until(() => shell.output().includes('unlocked=0'), 'the unlock');
    const mid = derivations(rig);
    shell.pty.write(
      `s=$(date +%s%N); vault-cli ${args.join(' ')} >/dev/null; ` +
        `echo "ms""=$(( ($(date +%s%N) - s) / 1000000 ))"\r`,
    );
    await until(() => /ms=\d+/.test(shell.output()), 'the sweep under the session');
    const sessionMs = Number(/ms=(\d+)/.exec(shell.output())?.[1]);
    const sessionKdf = derivations(rig) - mid;
    shell.pty.kill();

    console.log(`${MB} MB in ${FILES} files, ${found} findings (${VALUES} values, real Argon2id)`);
    console.log(
      `passphrase file: ${fileSeconds.toFixed(2)} s, ${fileKdf} passphrase derivation(s) in the host`,
    );
    console.log(
      `owner session:   ${(sessionMs / 1000).toFixed(2)} s, ${sessionKdf} passphrase derivation(s) in the host`,
    );
  } finally {
    await rig.dispose();
  }
}

await main();
