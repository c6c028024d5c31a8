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

size=1000000000
runs=3
data_dir=../shared/data/driverbench/extended_bson
build_dir=build/bench
while [ $# -gt 0 ]; do
  case "$1" in
  --size) size=${2:?--size needs a number of bytes}; shift 2 ;;
  --runs) runs=${2:?--runs needs a number}; shift 2 ;;
  --data) data_dir=${2:?--data needs a directory}; shift 2 ;;
  --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
  -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
  *) echo "bench-bson-dump: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for f in flat deep full; do
  [ -r "$data_dir/${f}_bson.json" ] ||
    { echo "bench-bson-dump: $data_dir/${f}_bson.json is missing (pass --data DIR)" >&2; exit 1; }
done

./scripts/install-deps.sh
cmake --preset bench -B "$build_dir" >/dev/null
cmake --build "$build_dir" --target oid_cli libbson_dump -j2 >/dev/null
oid=$build_dir/cli/oid
libbson_dump=$build_dir/bench/libbson_dump

work=$build_dir/dump-bench
mkdir -p "$work"
file=$work/driverbench-$size.bson
if [ ! -f "$file" ]; then
  echo "bench-bson-dump: generating $file ($size bytes)..." >&2
  for f in flat deep full; do cat "$data_dir/${f}_bson.json"; echo; done |
    "$oid" bson from-json >"$work/unit.bson"
  python3 - "$work/unit.bson" "$file" "$size" <<'EOF'
import sys
unit, out, size = open(sys.argv[1], "rb").read(), sys.argv[2], int(sys.argv[3])
block = unit * max(1, (1 << 20) // len(unit))   # about 1 MiB of whole document triples
with open(out + ".tmp", "wb") as f:
    written = 0
    while written + len(block) <= size:
        f.write(block)
        written += len(block)
    while written + len(unit) <= size:
        f.write(unit)
        written += len(unit)
import os
os.replace(out + ".tmp", out)
EOF
fi
bytes=$(stat -c %s "$file")

echo "bench-bson-dump: checking that both print the same lines..." >&2
head -c 2000000 "$file" >"$work/check.bson.full"
# Cut at a document boundary: whole triples only.
python3 - "$work/check.bson.full" "$work/check.bson" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
pos = 0
while pos + 4 <= len(data):
    n = struct.unpack_from("<i", data, pos)[0]
    if pos + n > len(data):
        break
    pos += n
open(sys.argv[2], "wb").write(data[:pos])
EOF
"$oid" bson dump --mode canonical "$work/check.bson" >"$work/check.oid.json"
"$libbson_dump" "$work/check.bson" >"$work/check.libbson.json"
python3 - "$work/check.oid.json" "$work/check.libbson.json" <<'EOF'
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
EOF

# One timed run: wall seconds, user+sys seconds, max RSS in kB.
measure() {
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >/dev/null
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$work/time.txt"
}
: >"$work/oid.txt"
: >"$work/libbson.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$runs"); do
  echo "bench-bson-dump: run $r of $runs..." >&2
  measure "$oid" bson dump --mode canonical "$file" >>"$work/oid.txt"
  measure "$libbson_dump" "$file" >>"$work/libbson.txt"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$work/oid.txt" "$work/libbson.txt" "$bytes" "$load_before" "$load_after" <<'EOF'
import statistics, sys
def load(p):
    rows = [list(map(float, l.split())) for l in open(p) if l.strip()]
    return ([r[0] for r in rows], [r[1] for r in rows], max(r[2] for r in rows))
ow, oc, om = load(sys.argv[1])
lw, lc, lm = load(sys.argv[2])
size = int(sys.argv[3])
mw, mc = statistics.median(ow), statistics.median(oc)
bw, bc = statistics.median(lw), statistics.median(lc)
print(f"| program | wall s | CPU s | MB/s (CPU) | max RSS |")
print(f"|---|---|---|---|---|")
print(f"| oid bson dump --mode canonical | {mw:.2f} | {mc:.2f} | {size / 1e6 / mc:,.0f} | {om / 1024:.1f} MiB |")
print(f"| libbson_dump (bson_reader + canonical) | {bw:.2f} | {bc:.2f} | {size / 1e6 / bc:,.0f} | {lm / 1024:.1f} MiB |")
ratio = bc / mc
print(f"\nfile {size:,} bytes; medians of {len(ow)} runs; oid is {ratio:.2f}x faster by CPU time "
      f"({bw / mw:.2f}x by wall time); target >= 5x: {'met' if ratio >= 5 else 'NOT met'}; "
      f"load average {sys.argv[4]} before, {sys.argv[5]} after.")
EOF
