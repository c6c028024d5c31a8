# Sourced by the tests that need something a machine may not offer (scripts/fleet.sh: namespaces;
# tests/syscall_test.sh: strace). The caller sets `name` (for messages) first.

# skip_test REASON: ends the script as skipped (exit 77, which ctest reports as skipped), except
# under CI=true, where the test must run and a missing requirement fails it.
skip_test() {
  if [ "${CI:-}" = "true" ]; then
    echo "$name: FAIL: $1 (CI=true: this test must run in CI)" >&2
    exit 1
  fi
  echo "$name: SKIPPED: $1" >&2
  exit 77
}
