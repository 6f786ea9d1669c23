/**
 * Imported first by main.ts, so it runs before any other module of the CLI:
 * `node main.js` on a Node older than vault-cli needs (bin/vault-cli never
 * does that) gets one clear line and exit 69, not a TypeError from a module
 * that calls `process.getBuiltinModule` (Node 22.3) at its top level, or a
 * crash deep in the proxy. The floor is the oldest Node every dependency
 * declares: chokidar 6 (the sweep's watcher) says 22.22.
 */
export const MIN_NODE = { major: 22, minor: 22 };
export function nodeFits(version) {
    const [major = 0, minor = 0] = version.split('.').map(Number);
    return major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor);
}
if (!nodeFits(process.versions.node)) {
    process.stderr.write(`vault-cli: VLT-3005: needs Node ${MIN_NODE.major}.${MIN_NODE.minor} or later, and ${process.execPath} is Node ${process.version}; run bin/vault-cli (node_modules/.bin/vault-cli), which uses the Node installed with it.\n`);
    process.exit(69);
}
