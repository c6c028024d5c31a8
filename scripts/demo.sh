#!/usr/bin/env bash
# oid's main job, from a fresh checkout: build the command, make an ObjectId and inspect it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target oid_cli >/dev/null
oid=build/release/cli/oid
id=$("$oid")
echo "\$ oid"
echo "$id"
echo "\$ oid inspect $id"
"$oid" inspect "$id"
