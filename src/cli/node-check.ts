/**
 * Imported first by main.ts, so it runs before any other module of the CLI:
 * `node main.js` on a Node older than vault-cli needs (bin/vault-cli never
 * does that) gets one clear line and exit 69, not a TypeError from a module
 * that calls `process.getBuiltinModule` (Node 22.3) at its top level, or a
 * crash deep in the proxy.
 */
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 3)) {
  process.stderr.write(
    `vault-cli: VLT-3005: needs Node 22.3 or later, and ${process.execPath} is Node ${process.version}; run bin/vault-cli (node_modules/.bin/vault-cli), which uses the Node installed with it.\n`,
  );
  process.exit(69);
}

export {};
