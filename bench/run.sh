#!/usr/bin/env bash
# Every benchmark, printing figures beside its baseline. Nothing here asserts.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build --silent
node --import tsx bench/get.ts "$@"
node --import tsx bench/render.ts
node --import tsx bench/proxy.ts
node --import tsx bench/resolve.ts
node --import tsx bench/run.ts
