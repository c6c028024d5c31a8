#!/usr/bin/env bash
# `oid bson dump --mode canonical` against a small libbson program (bench/libbson_dump.cpp:
# bson_reader + bson_as_canonical_extended_json) on one mongodump-style file: the DriverBench
# documents (flat, deep, full) as BSON, concatenated over and over up to --size bytes (1 GB by
# default). The file is generated under the build directory, never committed. Prints the wall and
# CPU time, the rate and the peak memory (max RSS) of each, the ratio and issue 5's target (oid at
# least 5x faster, in bounded memory), and checks that both print the same lines.
#
#   scripts/bench-bson-dump.sh [--size BYTES] [--runs N] [--data DIR] [--build-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
name=bench-bson-dump
size=1000000000
. scripts/lib/bench-common.sh
bench_setup libbson_dump "$@"
libbson_dump=$build_dir/bench/libbson_dump

echo "$name: checking that both print the same lines..." >&2
head -c 2000000 "$bson_file" >"$work/check.bson.full"
# Cut at a document boundary: whole triples only.
python3 - "$work/check.bson.full" "$work/check.bson" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
pos = 0
while pos + 4 <= len(data):
    n = struct.unpack_from("<i", data, pos)[0]
    if pos + n > len(data):
        break
    pos += n
open(sys.argv[2], "wb").write(data[:pos])
PY
"$oid" bson dump --mode canonical "$work/check.bson" >"$work/check.oid.json"
"$libbson_dump" "$work/check.bson" >"$work/check.libbson.json"
python3 - "$work/check.oid.json" "$work/check.libbson.json" <<'PY'
import json, sys
a, b = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
assert len(a) == len(b) and a, f"line counts differ: oid {len(a)}, libbson {len(b)}"
for i, (x, y) in enumerate(zip(a, b)):
    # Compared as parsed JSON, with each $numberDouble string read as the double it spells:
    # libbson writes 4837384839313709056.0 where oid writes the shortest form 4.837384839313709E+18.
    def norm(d):
        return {"$numberDouble": float(d["$numberDouble"])} if list(d) == ["$numberDouble"] else d
    px, py = json.loads(x, object_hook=norm), json.loads(y, object_hook=norm)
    if px != py:
        sys.exit(f"line {i + 1} differs in meaning")
print(f"bench-bson-dump: {len(a)} lines agree", file=sys.stderr)
PY

oid_cmd=("$oid" bson dump --mode canonical "$bson_file")
libbson_cmd=("$libbson_dump" "$bson_file")
bench_runs "$work/dump-oid.txt" "$work/dump-libbson.txt"
bench_table "$work/dump-oid.txt" "oid bson dump --mode canonical" \
  "$work/dump-libbson.txt" "libbson_dump (bson_reader + canonical)" "$(stat -c %s "$bson_file")" 5
