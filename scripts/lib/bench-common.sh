# Shared by the scripts/bench-*.sh scripts (sourced, not run): their option parsing and build,
# and for scripts/bench-bson-dump.sh and scripts/bench-bson-from-json.sh also the DriverBench
# .bson file they both start from, one timed run and the table of medians. The caller sets `name`
# (for messages) first, and `size` (its default) when it uses bench_setup.

runs=3
json_out=""
data_dir=""  # --data; default: the DriverBench documents that scripts/spec-data.sh fetches
build_dir=build/bench

# bench_parse_options ARGS...: parses options that each take one value, as the caller's
# associative array `bench_options` maps them to variables (e.g. [--runs]=runs); --help prints
# the caller's top comment (its lines from 2 to the first that is not a comment).
bench_parse_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
    esac
    local var=""
    [ -z "$1" ] || var=${bench_options[$1]:-}
    [ -n "$var" ] || { echo "$name: unknown argument $1 (see --help)" >&2; exit 2; }
    [ $# -ge 2 ] || { echo "$name: $1 needs a value (see --help)" >&2; exit 2; }
    printf -v "$var" '%s' "$2"
    shift 2
  done
}

# bench_setup TARGET ARGS...: for the scripts that compare oid with a libbson program on the
# DriverBench documents: parses --size, --runs, --data and --build-dir, checks the documents are
# there, builds oid_cli and TARGET (sets `oid`) and makes the .bson file (bench_driverbench_bson).
bench_setup() {
  local target=$1
  shift
  declare -gA bench_options=([--size]=size [--runs]=runs [--data]=data_dir [--build-dir]=build_dir)
  bench_parse_options "$@"
  [ -n "$data_dir" ] || data_dir=$(scripts/spec-data.sh)/driverbench/extended_bson
  for f in flat deep full; do
    [ -r "$data_dir/${f}_bson.json" ] ||
      { echo "$name: $data_dir/${f}_bson.json is missing (pass --data DIR)" >&2; exit 1; }
  done
  bench_build oid_cli "$target"
  bench_driverbench_bson
}

# bench_build TARGET...: installs the dependencies and builds the targets with the `bench` preset
# (Release) in $build_dir; sets `oid` to the command's path there.
bench_build() {
  ./scripts/install-deps.sh
  cmake --preset bench -B "$build_dir" >/dev/null
  cmake --build "$build_dir" --target "$@" -j2 >/dev/null
  oid=$build_dir/cli/oid
}

# bench_pymongo: PyMongo 4 with its C extensions, from PyPI into build/pymongo-venv (made once);
# sets `py` to that venv's python. Needs `root` and `say`.
bench_pymongo() {
  local venv=$root/build/pymongo-venv
  if ! "$venv/bin/python" -c 'import pymongo, bson; assert pymongo.has_c() and bson.has_c()' 2>/dev/null; then
    say "installing PyMongo 4 into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'pymongo>=4.9,<5'
  fi
  py=$venv/bin/python
}

# Sets `work` and `bson_file`: the DriverBench documents (flat, deep, full) as BSON, concatenated
# over and over up to $size bytes, generated under the build directory once (never committed).
bench_driverbench_bson() {
  work=$build_dir/bson-bench
  mkdir -p "$work"
  bson_file=$work/driverbench-$size.bson
  [ -f "$bson_file" ] && return
  echo "$name: generating $bson_file ($size bytes)..." >&2
  for f in flat deep full; do cat "$data_dir/${f}_bson.json"; echo; done |
    "$oid" bson from-json >"$work/unit.bson"
  python3 - "$work/unit.bson" "$bson_file" "$size" <<'PY'
import os, sys
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
os.replace(out + ".tmp", out)
PY
}

# bench_time FILE COMMAND...: runs COMMAND once with stdout to /dev/null and appends its wall
# seconds, user+sys seconds and max RSS (kB) to FILE.
bench_time() {
  local into=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >/dev/null
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$work/time.txt" >>"$into"
}

# bench_runs OID_FILE LIBBSON_FILE: empties both files, then for each run times `oid_cmd` into the
# first and `libbson_cmd` (arrays set by the caller) into the second. Sets load_before/_after.
bench_runs() {
  : >"$1"
  : >"$2"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  for r in $(seq 1 "$runs"); do
    echo "$name: run $r of $runs..." >&2
    bench_time "$1" "${oid_cmd[@]}"
    bench_time "$2" "${libbson_cmd[@]}"
  done
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
}

# bench_table OID_FILE OID_LABEL LIBBSON_FILE LIBBSON_LABEL BYTES TARGET: the medians as a
# Markdown table, the ratio by CPU and by wall time, and whether the ratio meets TARGET.
bench_table() {
  python3 - "$@" "$load_before" "$load_after" <<'PY'
import statistics, sys
def load(p):
    rows = [list(map(float, l.split())) for l in open(p) if l.strip()]
    return ([r[0] for r in rows], [r[1] for r in rows], max(r[2] for r in rows))
ofile, olabel, lfile, llabel, size, target, before, after = sys.argv[1:]
ow, oc, om = load(ofile)
lw, lc, lm = load(lfile)
size, target = int(size), float(target)
mw, mc = statistics.median(ow), statistics.median(oc)
bw, bc = statistics.median(lw), statistics.median(lc)
print("| program | wall s | CPU s | MB/s (CPU) | max RSS |")
print("|---|---|---|---|---|")
print(f"| {olabel} | {mw:.2f} | {mc:.2f} | {size / 1e6 / mc:,.0f} | {om / 1024:.1f} MiB |")
print(f"| {llabel} | {bw:.2f} | {bc:.2f} | {size / 1e6 / bc:,.0f} | {lm / 1024:.1f} MiB |")
ratio = bc / mc
print(f"\ninput {size:,} bytes; medians of {len(ow)} runs; oid is {ratio:.2f}x faster by CPU time "
      f"({bw / mw:.2f}x by wall time); target >= {target:g}x: "
      f"{'met' if ratio >= target else 'NOT met'}; load average {before} before, {after} after.")
PY
}

# bench_command_setup ARGS...: for the benchmarks of the `oid mongo` command against PyMongo
# (bench-tools, bench-gridfs): parses --mb, --build-dir and --oid (defaults in $mb and $oid), builds
# the oid command unless --oid named one, makes PyMongo's venv, defines `say`, and gives a work
# directory ($tmp) and a FerretDB of its own ($uri), both gone when the script exits.
bench_command_setup() {
  declare -gA bench_options=([--mb]=mb [--build-dir]=build_dir [--oid]=oid)
  bench_parse_options "$@"
  say() { echo "$name: $*" >&2; }
  [[ "$mb" =~ ^[0-9]+$ ]] && [ "$mb" -ge 1 ] ||
    { echo "$name: --mb needs a whole number >= 1" >&2; exit 2; }
  if [ -z "$oid" ]; then
    echo "$name: building oid (bench preset)" >&2
    bench_build oid_cli
  fi
  oid=$(realpath "$oid")
  bench_pymongo
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
  ferret_pid=$tmp/ferretdb.pid
  trap bench_command_cleanup EXIT
  echo "$name: starting FerretDB" >&2
  uri=$(scripts/ferretdb.sh start "$ferret_pid")
}

bench_command_cleanup() {
  [ ! -f "$ferret_pid" ] || scripts/ferretdb.sh stop "$ferret_pid" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}

# bench_timed JOB CLIENT COMMAND...: runs COMMAND (its standard output and error to files in $tmp)
# and appends "JOB CLIENT" and its wall seconds, user and system CPU seconds (getrusage of the
# child) and peak RSS (KiB) to $results. A failure prints the command's standard error and exits.
bench_timed() {
  local job=$1 client=$2
  shift 2
  echo "$name: $job: $client" >&2
  python3 -c '
import resource, subprocess, sys, time
start = time.monotonic()
status = subprocess.run(sys.argv[2:]).returncode
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{wall:.6f} {r.ru_utime:.6f} {r.ru_stime:.6f} {r.ru_maxrss}\n")
sys.exit(status)' "$tmp/time.txt" "$@" >"$tmp/$job-$client.out" 2>"$tmp/$job-$client.err" ||
    { echo "$name: $client $job failed:" >&2; cat "$tmp/$job-$client.err" >&2; exit 1; }
  echo "$job $client $(cat "$tmp/time.txt")" >>"$results"
}
