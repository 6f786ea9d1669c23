#!/usr/bin/env bash
# Runs every test file under node:test through tsx, with a spec reporter and a
# closing `N passed, N failed` line. Globs are expanded here, not by node.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s globstar nullglob
files=(test/**/*.test.ts test/**/*.test.tsx)
if [ "$#" -gt 0 ]; then files=("$@"); fi
exec node --import tsx --test \
  --test-concurrency="${TEST_CONCURRENCY:-2}" --test-timeout="${TEST_TIMEOUT_MS:-900000}" \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./test/support/summary-reporter.mjs --test-reporter-destination=stdout \
  "${files[@]}"
