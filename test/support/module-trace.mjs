// Loaded with `--import` into a vault-cli process by test/e2e/get-startup.test.ts:
// writes every module the process loaded through the ESM loader (one URL a
// line) to the file VAULT_TEST_MODULE_TRACE names, when the process exits,
// then each public built-in loaded by any means (import, require,
// getBuiltinModule) as `builtin:<name>`, from process.moduleLoadList.
// node:fs by getBuiltinModule: an import here would hide the CLI's own import of it.
const { writeFileSync } = process.getBuiltinModule('node:fs');
import { registerHooks } from 'node:module';

const out = process.env.VAULT_TEST_MODULE_TRACE;
const seen = [];
registerHooks({
  load(url, context, next) {
    seen.push(url);
    return next(url, context);
  },
});
const builtins = () =>
  process.moduleLoadList
    .filter((m) => m.startsWith('NativeModule ') && !m.startsWith('NativeModule internal/'))
    .map((m) => `builtin:${m.slice('NativeModule '.length)}`);
if (out !== undefined)
  process.on('exit', () => writeFileSync(out, `${[...seen, ...builtins()].join('\n')}\n`));
