#!/usr/bin/env bash
# `oid bson from-json` against a small libbson program (bench/libbson_from_json.cpp: getline +
# bson_init_from_json per line) on canonical Extended JSON lines: the DriverBench documents
# (flat, deep, full) as a mongodump-style file of --size bytes of BSON (200 MB by default, about
# 275 MB of JSON), printed with `oid bson dump --mode canonical`. Both files are generated under
# the build directory, never committed. Checks that both programs write the same bytes (and the
# .bson file the text came from), then prints the wall and CPU time, the rate and the peak memory
# (max RSS) of each, and the ratio against issue 11's target (oid at least 4x faster).
#
#   scripts/bench-bson-from-json.sh [--size BYTES] [--runs N] [--data DIR] [--build-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
name=bench-bson-from-json
size=200000000
. scripts/lib/bench-common.sh
bench_setup libbson_from_json "$@"
libbson_from_json=$build_dir/bench/libbson_from_json
json_file=${bson_file%.bson}.canonical.json
if [ ! -f "$json_file" ]; then
  echo "$name: generating $json_file..." >&2
  "$oid" bson dump --mode canonical "$bson_file" >"$json_file.tmp"
  mv "$json_file.tmp" "$json_file"
fi

echo "$name: checking that both write the same bytes..." >&2
cmp <("$oid" bson from-json "$json_file") <("$libbson_from_json" "$json_file")
cmp <("$oid" bson from-json "$json_file") "$bson_file"
echo "$name: identical output, $(stat -c %s "$bson_file") bytes" >&2

oid_cmd=("$oid" bson from-json "$json_file")
libbson_cmd=("$libbson_from_json" "$json_file")
bench_runs "$work/from-json-oid.txt" "$work/from-json-libbson.txt"
bench_table "$work/from-json-oid.txt" "oid bson from-json" "$work/from-json-libbson.txt" \
  "libbson_from_json (bson_init_from_json a line)" "$(stat -c %s "$json_file")" 4
