#!/usr/bin/env bash
# No system call per id: counts, with `strace -f -c`, the system calls syscall_probe makes while
# making 1,000,000 ids in each mode (one per call, batches, two threads, in a forked child), and
# fails if making them added more than one per 10,000 ids to what the same mode makes for 0 ids
# (program start and exit, thread creation, fork: fixed costs, not per id).
#
# Also runs a control that makes one getpid() per id, as libbson's default context does, and
# fails unless strace sees those calls: a test that can count to zero is no test.
#
# Usage: syscall_test.sh PATH/TO/syscall_probe. Exits 77 (ctest: skipped) when strace is missing
# or may not trace here (some sandboxes forbid ptrace), except under CI=true, where that fails.
set -euo pipefail

probe=${1:?usage: syscall_test.sh PATH/TO/syscall_probe}
ids=1000000
limit=$((ids / 10000))
control_ids=20000

name=syscall_test
. "$(dirname "$0")/../scripts/lib/skip.sh"
command -v strace >/dev/null || skip_test "strace is not installed (scripts/install-deps.sh installs it)"
strace -f -c -o /dev/null true 2>/dev/null || skip_test "strace cannot trace processes here (ptrace not permitted)"

# LeakSanitizer cannot run under a tracer; leaks are checked by the other tests.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count MODE N: system calls of `syscall_probe MODE N` and its threads and children.
count() {
  strace -f -c -o "$tmp/summary" "$probe" "$1" "$2" >/dev/null
  # The last line is the total: "100.00  SECONDS  USECS/CALL  CALLS  [ERRORS]  total".
  awk '$NF == "total" { print $4 }' "$tmp/summary"
}

status=0
printf '%-8s %12s %12s %10s\n' mode "calls(0)" "calls($ids)" "extra"
for mode in one batch threads fork; do
  base=$(count "$mode" 0)
  made=$(count "$mode" "$ids")
  extra=$((made - base))
  printf '%-8s %12s %12s %10s\n' "$mode" "$base" "$made" "$extra"
  if [ "$extra" -gt "$limit" ]; then
    echo "FAIL: $mode: $extra system calls for $ids ids (limit $limit, one per 10,000 ids)" >&2
    sed 's/^/  /' "$tmp/summary" >&2
    status=1
  fi
done

base=$(count control 0)
made=$(count control "$control_ids")
extra=$((made - base))
printf '%-8s %12s %12s %10s\n' control "$base" "$made" "$extra"
if [ "$extra" -lt "$control_ids" ]; then
  echo "FAIL: control: strace saw $extra extra calls for $control_ids getpid() calls:" \
    "the count does not see system calls" >&2
  status=1
fi
exit "$status"
