#!/usr/bin/env bash
# The fleet test: K simulated containers, each a process in its own PID and UTS namespace with the
# host name "localhost" and pid 1 inside, fork into P processes of T threads that all make N ids
# at the same moment; `oid check-unique --binary` then counts the duplicates among all of them.
# Run once with oid's default generator (must give 0 duplicates) and once with the legacy layout
# (host name hash and pid: must collide), and print the bytes 4-8 the containers share.
#
#   scripts/fleet.sh                 # 16 containers x 2 processes x 2 threads, 200,000,000 ids each run
#   scripts/fleet.sh -k 96 -n 12500  # the small fleet that ctest runs (fleet_small)
#   scripts/fleet.sh --id64 compact64 # 64-bit ids instead (fleet_small_id64): once with assigned
#                                    # machine ids (must give 0 duplicates), once with machine ids
#                                    # drawn at random (the processes that share one must collide,
#                                    # and the sharing pairs must be what the birthday bound says)
#
# Options: -k K  -p P  -t T  -n N (ids per thread; default: 200,000,000 in total)
#          --oid PATH --worker PATH   binaries to use (default: build them in build/release)
#          --work DIR                 scratch directory (default: a new one under $TMPDIR or /tmp)
#          --memory MIB               memory for check-unique (default 512)
#          --id64 LAYOUT              compact64, snowflake or sonyflake: the 64-bit mode
# Needs root for unshare. Exit status 0: modern 0 duplicates and legacy > 0; 1: otherwise;
# 77: unshare is not available here (only outside CI: with CI=true that is a failure).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

K=16 P=2 T=2 N="" OID="" WORKER="" WORK="" MEMORY=512 ID64=
while [ $# -gt 0 ]; do
  case "$1" in
    -k) K=$2; shift 2 ;;
    -p) P=$2; shift 2 ;;
    -t) T=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    --oid) OID=$2; shift 2 ;;
    --worker) WORKER=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --memory) MEMORY=$2; shift 2 ;;
    --id64) ID64=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "fleet: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$N" ] || N=$(( (200000000 + K * P * T - 1) / (K * P * T) ))

name=fleet
. "$root/scripts/lib/skip.sh"
command -v unshare >/dev/null || skip_test "unshare (util-linux) is not installed"
if ! out=$(unshare --pid --fork --uts --mount-proc sh -c 'hostname localhost && echo $$' 2>&1) ||
   [ "$out" != 1 ]; then
  skip_test "cannot make PID and UTS namespaces here (needs root): unshare said: $out"
fi

if [ -z "$OID" ] || [ -z "$WORKER" ]; then
  "$root/scripts/install-deps.sh"
  cmake --preset release >/dev/null
  cmake --build --preset release --target oid_cli oid_fleet_worker
  OID=${OID:-$root/build/release/cli/oid}
  WORKER=${WORKER:-$root/build/release/tools/fleet/oid_fleet_worker}
fi

if [ -z "$WORK" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/oid-fleet.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

now_ns() { date +%s%N; }
total=$(( K * P * T * N ))
echo "fleet: $K containers x $P processes x $T threads x $N ids = $total ids per layout"

# run LAYOUT: starts the K containers, all to begin at the same moment; prints the seconds taken.
run() {
  local layout=$1 flags=() pids=() c
  [ "$layout" = legacy ] && flags=(--legacy)
  [ "$layout" = random ] && flags=(--id64 "$ID64" --machines random)
  # Start just after a whole second, far enough away for every container to be waiting by then
  # (about 20 ms to start each), so that a short run stays within one second, as the collisions
  # of the legacy layout need. A worker that comes late says so in the log.
  local start=$(( (($(now_ns) + 1000000000 + K * 20000000) / 1000000000 + 1) * 1000000000 + 50000000 ))
  for c in $(seq 1 "$K"); do
    unshare --pid --fork --uts --mount-proc \
      sh -c 'hostname localhost && exec "$0" "$@"' "$WORKER" \
      --out "$WORK/$layout-$c.bin" -p "$P" -t "$T" -n "$N" --start-at "$start" "${flags[@]}" \
      $([ "$layout" = assigned ] && echo --id64 "$ID64" --machines assigned --machine-base $(( (c - 1) * P ))) \
      2>>"$WORK/$layout.log" &
    pids+=($!)
  done
  local failed=0 pid
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ $failed -ne 0 ]; then
    cat "$WORK/$layout.log" >&2
    echo "fleet: a container failed" >&2
    exit 1
  fi
  local end; end=$(now_ns)
  if [ "$(grep -c 'pid 1: [0-9]* processes' "$WORK/$layout.log")" -ne "$K" ]; then
    echo "fleet: expected every worker to be pid 1 in its container:" >&2
    cat "$WORK/$layout.log" >&2
    exit 1
  fi
  grep -h 'late' "$WORK/$layout.log" >&2 || true
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", (e - s) / 1e9 }'
}

# check LAYOUT: oid check-unique over all containers' records; prints its summary line.
check() {
  cat "$WORK/$1"-*.bin |
    "$OID" check-unique --binary --limit 3 --memory "$MEMORY" --temp-dir "$WORK" >"$WORK/$1.check" ||
    true
  sed 's/^/    /' "$WORK/$1.check" >&2
  tail -n 1 "$WORK/$1.check"
}

# middle LAYOUT: bytes 4-8 of the first id of every process of every container, counted.
middle() {
  local c p
  for c in $(seq 1 "$K"); do
    for p in $(seq 0 $(( P - 1 ))); do
      od -An -tx1 -j $(( p * T * N * 12 + 4 )) -N5 "$WORK/$1-$c.bin" | tr -d ' \n'
      echo
    done
  done | sort | uniq -c | sort -rn
}

# machines LAYOUT: the machine ids the processes of a 64-bit run took, as "count id", most shared
# first.
machines() {
  sed -n 's/^oid_fleet_worker: machine \([0-9]*\)$/\1/p' "$WORK/$1.log" | sort -n | uniq -c | sort -rn
}

# id64_runs: the 64-bit mode, once with assigned and once with random machine ids.
id64_runs() {
  local bits n layout secs summary dups pairs distinct expected sd p_any formula
  case "$ID64" in
    compact64) bits=8 ;;
    snowflake) bits=10 ;;
    sonyflake) bits=16 ;;
    *) echo "fleet: --id64 takes compact64, snowflake or sonyflake" >&2; exit 2 ;;
  esac
  n=$(( K * P ))
  if [ "$n" -gt $(( 1 << bits )) ]; then
    echo "fleet: $n processes cannot have distinct $bits-bit machine ids" >&2
    exit 2
  fi
  for layout in assigned random; do
    secs=$(run "$layout")
    echo "fleet: $ID64 $layout machine ids: made $total ids in $secs s; checking"
    summary=$(check "$layout")
    dups=$(sed -n 's/.* \([0-9]*\) duplicates.*/\1/p' <<<"$summary")
    echo "fleet: $ID64 $layout machine ids: $dups duplicates among $total ids"
    # Pairs of processes that share a machine id, against the birthday bound: C(n,2) / 2^bits
    # pairs expected, and P(at least one) = 1 - prod (1 - i / 2^bits).
    read -r pairs distinct < <(machines "$layout" |
      awk '{ pairs += $1 * ($1 - 1) / 2; distinct++ } END { print pairs + 0, distinct + 0 }')
    read -r expected sd p_any < <(awk -v n="$n" -v b="$bits" 'BEGIN {
      N = 2 ^ b; m = n * (n - 1) / 2 / N; p = 1
      for (i = 1; i < n; i++) p *= 1 - i / N
      printf "%.2f %.2f %.4f\n", m, sqrt(m * (1 - 1 / N)), 1 - p }')
    formula="formula for random ids: $expected +- $sd pairs expected; P(any pair) = $p_any"
    echo "    $n processes, $distinct distinct machine ids, $pairs pairs sharing one ($formula)"
    if [ "$layout" = assigned ] && { [ "$dups" != 0 ] || [ "$pairs" != 0 ]; }; then
      fail "assigned machine ids made duplicates"
    fi
    if [ "$layout" = random ]; then
      # Every sharing pair collides: both start their counters at 0 in the same time units.
      if { [ "$pairs" != 0 ] && [ "$dups" = 0 ]; } || { [ "$pairs" = 0 ] && [ "$dups" != 0 ]; }; then
        fail "$pairs pairs share a machine id but $dups duplicates"
      fi
      if awk -v o="$pairs" -v m="$expected" -v s="$sd" 'BEGIN { exit !(s > 0 && (o - m) ^ 2 > 25 * s * s) }'; then
        fail "$pairs sharing pairs is more than 5 sigma from the formula's $expected"
      fi
    fi
    rm -f "$WORK/$layout"-*.bin
  done
}

status=0
fail() {
  echo "fleet: FAIL: $*" >&2
  status=1
}
layouts="modern legacy"
if [ -n "$ID64" ]; then
  id64_runs
  layouts=""
fi
for layout in $layouts; do
  secs=$(run "$layout")
  start_check=$(now_ns)
  echo "fleet: $layout: made $total ids in $secs s; checking"
  summary=$(check "$layout")
  check_secs=$(awk -v s="$start_check" -v e="$(now_ns)" 'BEGIN { printf "%.1f", (e - s) / 1e9 }')
  dups=$(sed -n 's/.* \([0-9]*\) duplicates.*/\1/p' <<<"$summary")
  echo "fleet: $layout: $dups duplicates among $total ids (check took $check_secs s)"
  values=$(middle "$layout")
  echo "fleet: $layout: bytes 4-8 of the first id of each of the $(( K * P )) processes, by count:"
  if [ "$layout" = modern ]; then
    echo "    $(wc -l <<<"$values") distinct random values (each process draws its own)"
  else
    sed 's/^ */    /' <<<"$values"
    machine=$(printf localhost | md5sum | cut -c1-6)
    echo "    (machine id $machine is the first 3 bytes of MD5(\"localhost\"); then the pid)"
  fi
  if [ "$layout" = modern ] && [ "$dups" != 0 ]; then
    fail "oid's default generator made duplicates"
  fi
  if [ "$layout" = legacy ] && [ "$dups" = 0 ]; then
    fail "the legacy layout made no duplicates (fleet too small?)"
  fi
  rm -f "$WORK/$layout"-*.bin
done
[ $status -eq 0 ] && echo "fleet: PASS"
exit $status
