/**
 * The one place that chooses the sandbox engine (shell/engine.ts) for the
 * platform: bubblewrap on Linux (shell/linux/), none elsewhere yet, with the
 * reason said. Loaded lazily, as `run` loads the engine only when it
 * sandboxes.
 */
import { VaultError } from '../src/core/errors.js';
/** The engine for `platform`, or why there is none. */
export async function chooseEngine(platform) {
    if (platform !== 'linux')
        return { refused: `it needs Linux (bubblewrap), and this is ${platform}` };
    const { bubblewrapEngine } = await import('./linux/engine.js');
    return { engine: bubblewrapEngine };
}
/**
 * The engine for `platform`, checked that it can start here before any
 * session is minted, with the programs it found on `path`.
 * @throws VaultError VLT-1005 naming what is missing and how to fix it.
 */
export async function sandboxEngine(platform, path) {
    const missing = (what) => new VaultError('VLT-1005', `The agent sandbox cannot start: ${what}. Or run without it: --no-sandbox (docs/sandbox.md).`);
    const chosen = await chooseEngine(platform);
    if ('refused' in chosen)
        throw missing(chosen.refused);
    const probed = chosen.engine.probe(path);
    if (!probed.ok)
        throw missing(probed.why);
    return { engine: chosen.engine, tools: probed.tools };
}
