/**
 * Shows the dashboard full-screen on the streams it is given (the alternate
 * screen, so the terminal's own screen comes back as it was) and resolves when
 * the user leaves: q or Esc, Ctrl-] from anywhere, a host's own leave keys.
 * `vault-cli dashboard` and `run`'s Ctrl-] load this module lazily.
 */
import { render } from 'ink';
import { createElement } from 'react';
import { Dashboard } from './app.js';
/**
 * Renders the dashboard until the user leaves, then unmounts it: the primary
 * screen back, raw mode as it was, no listener left on the streams.
 */
export async function showDashboard(o) {
    if (o.signal?.aborted === true)
        return;
    const wasRaw = o.stdin.isRaw === true;
    let leave = () => { };
    const left = new Promise((resolve) => (leave = resolve));
    const instance = render(createElement(Dashboard, {
        api: o.api,
        now: o.now ?? Date.now,
        onLeave: () => leave(),
        ...(o.vault === undefined ? {} : { vault: o.vault }),
        leaveKeys: o.leaveKeys ?? [],
    }), {
        stdin: o.stdin,
        stdout: o.stdout,
        // Keys are the dashboard's: Ctrl-C leaves like q, it does not end the process.
        exitOnCtrlC: false,
        patchConsole: false,
        // A terminal was handed over: draw in it even where CI variables say otherwise.
        interactive: o.stdout.isTTY === true,
        alternateScreen: true,
    });
    const onAbort = () => leave();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    // A render that throws ends ink's app: that ends the dashboard too, with the error.
    const exited = instance.waitUntilExit();
    try {
        await Promise.race([left, exited]);
    }
    finally {
        o.signal?.removeEventListener('abort', onAbort);
        instance.unmount();
        try {
            await exited;
        }
        finally {
            instance.cleanup();
            // Ink turns raw mode off when it lets go of the input; a supervisor handed it over raw.
            if (wasRaw && o.stdin.isTTY === true)
                o.stdin.setRawMode?.(true);
        }
    }
}
