#!/usr/bin/env bash
# `get` and the proxy of this tree beside a baseline checkout, in one run:
# bench/get.ts interleaves both builds' `get`; bench/proxy.ts --baseline runs
# its cells against this tree's build and then the baseline's, twice, so load
# drifts reach both alike. Prints figures; asserts nothing.
#
#   bash bench/before-after.sh <baseline checkout with node_modules and dist/> [seconds per proxy cell]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: bench/before-after.sh <baseline checkout> [seconds]}"
secs="${2:-2}"
base="$(cd "$base" && pwd)"
export PATH="$PWD/node_modules/.bin:$PATH"
npm run build --silent
echo "== get: this tree vs $(git -C "$base" rev-parse --short HEAD) (interleaved)"
node --import tsx bench/get.ts 40 --baseline "$base/dist"
for round in 1 2; do
  echo "== proxy, round $round"
  node --import tsx bench/proxy.ts "$secs" --baseline "$base"
done
