#!/usr/bin/env bash
# oid's BSON against libbson on MongoDB's DriverBench documents: builds the `bench` preset
# (Release), runs bench/bson_driverbench several times and prints one table of medians across
# the runs with the oid/libbson ratio and the targets of issue 5.
#
#   scripts/bench-bson.sh [--runs N] [--iterations N] [--clock wall|cpu] [--json FILE]
#                         [--data DIR] [--build-dir DIR]
#
# Each run times 10,000 operations per iteration, 10 iterations after a warm-up (the
# specification's model); a row's score in a run is the specification's task size over the median
# iteration time. The table shows, per row, the median of the runs' scores. --clock wall is what
# the specification asks; --clock cpu times the thread's own CPU time, steadier on a machine whose
# cores are shared with other work. The documents are the DriverBench data that scripts/spec-data.sh
# fetches (or --data DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

name=bench-bson
. scripts/lib/bench-common.sh
iterations=10
clock=wall
data=""
declare -A bench_options=([--runs]=runs [--iterations]=iterations [--clock]=clock
  [--json]=json_out [--data]=data [--build-dir]=build_dir)
bench_parse_options "$@"
[ -n "$data" ] || data=$(scripts/spec-data.sh)/driverbench/extended_bson
data_args=(--data "$data")
bench_build bson_driverbench

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq 1 "$runs"); do
  echo "bench-bson: run $r of $runs ($iterations iterations per row, clock $clock; minutes)..." >&2
  "$build_dir/bench/bson_driverbench" "${data_args[@]}" --iterations "$iterations" \
    --clock "$clock" --json "$tmp/run$r.json" >"$tmp/run$r.txt" 2>"$tmp/run$r.err" ||
    { cat "$tmp/run$r.err" >&2; exit 1; }
done

python3 - "$tmp" "$runs" "$json_out" <<'EOF'
import json, statistics, sys

sys.path.insert(0, "scripts/lib")
from markdown_table import print_table

tmp, runs, json_out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
results = [json.load(open(f"{tmp}/run{r}.json")) for r in range(1, runs + 1)]
rows = []
for i, first in enumerate(results[0]["rows"]):
    per_run = [res["rows"][i] for res in results]
    oid = statistics.median(r["oid"]["mbps"] for r in per_run)
    lib = statistics.median(r["libbson"]["mbps"] for r in per_run)
    ratios = [r["ratio"] for r in per_run]
    ratio = oid / lib
    want = first["target_ratio"]
    rows.append({"doc": first["doc"], "task": first["task"], "oid_mbps": oid,
                 "libbson_mbps": lib, "ratio": ratio, "ratio_min": min(ratios),
                 "ratio_max": max(ratios), "target_ratio": want,
                 "met": None if want is None else ratio >= want, "note": first["note"],
                 "runs": per_run})

header = ("doc", "task", "oid MB/s", "libbson MB/s", "oid/libbson", "runs' ratios",
          "target", "met?")
lines = [[r["doc"], r["task"], f"{r['oid_mbps']:,.0f}", f"{r['libbson_mbps']:,.0f}",
          f"{r['ratio']:.2f}x", f"{r['ratio_min']:.2f}-{r['ratio_max']:.2f}",
          "-" if r["target_ratio"] is None else f">= {r['target_ratio']:g}x",
          {True: "yes", False: "NO", None: "- (note)"}[r["met"]]] for r in rows]
print_table(header, lines)
for r in rows:
    if r["note"]:
        print(f"\nnote ({r['doc']}/{r['task']}): {r['note']}.")
m = results[0]["machine"]
print(f"\n{m['cpu']}, {m['hardware_threads']} hardware threads; libbson {results[0]['libbson']}; "
      f"load average {m['load_before']} before, {results[-1]['machine']['load_after']} after; "
      f"medians of {runs} runs, each {results[0]['iterations']} iterations of "
      f"{results[0]['operations']:,} operations after a warm-up; clock: {results[0]['clock']}.")
if json_out:
    json.dump({"rows": rows, "machine": m, "libbson": results[0]["libbson"], "runs": runs,
               "clock": results[0]["clock"]}, open(json_out, "w"), indent=2)
    print(f"JSON written to {json_out}")
EOF
