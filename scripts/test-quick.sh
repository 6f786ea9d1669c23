#!/usr/bin/env bash
# The fast tier (`npm run test:quick`): every unit test (pure), the host tier
# (the host's code in-process over a real store in a temp dir), and the
# cheapest end-to-end files that still walk each main path once through the
# built CLI and a real host: the first session (create, set, agent add, get),
# the owner's records, render and the proxy's rules (the rigs' test-only KDF
# switch included).
# `npm test` (CI) runs every tier: unit, host, e2e and attack (attacks,
# injected faults and fuzzing). Extra arguments are more test files to run.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
files=(test/unit/*.test.ts test/unit/*.test.tsx
  test/host/*.test.ts
  test/e2e/records.test.ts
  test/e2e/render.test.ts
  test/e2e/proxy-rules.test.ts
  test/e2e/session.test.ts)
exec bash scripts/test.sh "${files[@]}" "$@"
