/**
 * Small real file systems for fault tests: a tmpfs of a few MiB that fills up,
 * and read-only bind mounts. Needs mount privileges (root in this sandbox
 * and in CI); `canMount()` says whether the tests can run.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function sh(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

let probed: boolean | null = null;

export function canMount(): boolean {
  if (probed !== null) return probed;
  const dir = mkdtempSync(join(tmpdir(), 'vault-cli-mount-probe-'));
  probed = sh('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
  if (probed) sh('umount', [dir]);
  rmdirSync(dir);
  return probed;
}

export function mountTmpfs(dir: string, kib: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!sh('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir])) {
    throw new Error(`cannot mount a tmpfs on ${dir}`);
  }
}

export function remount(dir: string, mode: 'ro' | 'rw'): void {
  if (!sh('mount', ['-o', `remount,${mode}`, dir]))
    throw new Error(`cannot remount ${dir} ${mode}`);
}

/** Makes one file read-only in place: a read-only bind mount of it over itself. */
export function bindReadOnly(file: string): void {
  if (!sh('mount', ['--bind', file, file]) || !sh('mount', ['-o', 'remount,bind,ro', file])) {
    throw new Error(`cannot make ${file} read-only`);
  }
}

/** Lazy unmount: the files a killed host left open do not keep it busy. */
export function unmount(dir: string): void {
  sh('umount', ['-l', dir]);
}
