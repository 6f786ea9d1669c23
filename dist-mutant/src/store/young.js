/**
 * V8's young generation, held at the size it has or let grow (V8's default).
 * V8 doubles it while allocation keeps up, to 2 x 64 MiB on a machine of
 * 16 GB or more, and a host kept that resident: most of its memory under
 * load (issue 42, docs/benchmarks.md), and of a team host's first load
 * (issue 37). Node takes V8's size flags (`--max-semi-space-size`) only at
 * start, which a host never gets: a client refuses a host started with any.
 * `--semi-space-growth-factor` is read at each growth, so 1 holds the young
 * generation at its size from then on.
 */
import { setFlagsFromString } from 'node:v8';
let always = false;
let holds = 0;
function apply() {
    setFlagsFromString(`--semi-space-growth-factor=${always || holds > 0 ? 1 : 2}`);
}
/**
 * Held while a piece of work runs (a team host's first load); `release`
 * lets it grow again unless it is held for good.
 */
export function holdYoungGeneration() {
    holds++;
    apply();
    let released = false;
    return () => {
        if (released)
            return;
        released = true;
        holds--;
        apply();
    };
}
/**
 * Held for the rest of this process: a host. Its requests leave little alive,
 * so it keeps the young generation it starts with (two 1 MiB semi-spaces).
 */
export function holdYoungGenerationForGood() {
    always = true;
    apply();
}
