#!/usr/bin/env bash
# The whole test suite, as CI runs it: plain build and tests (warnings are errors), every public
# header compiled alone, formatting, then the same tests under AddressSanitizer and
# UndefinedBehaviorSanitizer, the code threads share under ThreadSanitizer, then each fuzzer for a
# bounded time.
#
#   scripts/test.sh           everything, as CI runs it (the README's test command)
#   scripts/test.sh --quick   the developer loop: the ci build, the servers and every test once;
#                             no benchmark, no sanitizers, no fuzzing (a few minutes when the
#                             build is warm)
#   FUZZ_SECONDS  seconds per fuzzer (default 20: one run per fuzz/fuzz_*.cpp, eighteen, about six
#                 minutes, and CI has a time budget)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

# Each step says how long the run has taken so far, so a slow CI run shows where its time went.
step() { printf '\n==== %s  [%d s]\n' "$*" "$SECONDS"; }

step "dependencies"
scripts/install-deps.sh

step "nothing reads the directory beside the checkout"
# The specification suites and DriverBench data come from scripts/spec-data.sh, the DNS zone from
# tests/data: a user's clone has nothing beside it, so no file of the repository may name it.
if git grep -n -I -e '\.\.[/]shared' -e 'OID_SHARED[_]DIR' -- . ; then
  echo "test.sh: the files above name the directory beside the checkout, which a user's clone lacks" >&2
  exit 1
fi

step "specification test data (scripts/spec-data.sh: pinned, hash-checked, cached in build/)"
# Under CI=true a suite whose data is missing fails its test rather than skipping.
scripts/spec-data.sh

step "build (ci preset: -O2, -Werror)"
cmake --preset ci >/dev/null
cmake --build --preset ci
cmake --build --preset ci --target all_verify_interface_header_sets

step "FerretDB for the MongoDB client's integration tests"
# MONGODB_URI from the environment points the tests at another server (a real mongod, say).
# MONGODB_AUTH_URI (a user with its password, on a server that checks it) does the same for the
# authentication tests; by default a second FerretDB with --test-enable-new-auth (ferretdb.sh
# start-secure), whose first line is the plain-TCP connection string.
stops=()
dns_pidfile=""
stop_servers() {
  for pidfile in "${stops[@]}"; do scripts/ferretdb.sh stop "$pidfile" || true; done
  if [ -n "$dns_pidfile" ]; then scripts/dns-server.sh stop "$dns_pidfile" || true; fi
}
trap stop_servers EXIT
if [ -z "${MONGODB_URI:-}" ]; then
  MONGODB_URI=$(scripts/ferretdb.sh start "$root/build/ferretdb.pid")
  stops+=("$root/build/ferretdb.pid")
fi
export MONGODB_URI
echo "MONGODB_URI=$MONGODB_URI"
# MONGODB_TLS_URI (the same user over TLS with a client certificate) and MONGODB_TLS_CERTS (the
# directory of scripts/make-test-certs.sh whose CA the server trusts) are for the TLS tests: by
# default the second line of start-secure, and its certificate directory.
if [ -z "${MONGODB_AUTH_URI:-}" ]; then
  secure=$(scripts/ferretdb.sh start-secure "$root/build/ferretdb-secure.pid" "$root/build/test-certs")
  stops+=("$root/build/ferretdb-secure.pid")
  MONGODB_AUTH_URI=$(head -n 1 <<<"$secure")
  if [ -z "${MONGODB_TLS_URI:-}" ]; then
    MONGODB_TLS_URI=$(sed -n 2p <<<"$secure")
    MONGODB_TLS_CERTS=$root/build/test-certs
  fi
fi
export MONGODB_AUTH_URI MONGODB_TLS_URI="${MONGODB_TLS_URI:-}" MONGODB_TLS_CERTS="${MONGODB_TLS_CERTS:-}"
echo "MONGODB_AUTH_URI=${MONGODB_AUTH_URI%%:*}://...  (password not shown)"
echo "MONGODB_TLS_URI=${MONGODB_TLS_URI%%:*}://...  (password not shown), MONGODB_TLS_CERTS=$MONGODB_TLS_CERTS"
# MONGODB_RS_URI: a replica set (mongodb://HOST:PORT/?replicaSet=NAME) for the discovery tests; by
# default a third FerretDB with --repl-set-name=rs0, whose hello names the set and its one member.
if [ -z "${MONGODB_RS_URI:-}" ]; then
  MONGODB_RS_URI=$(scripts/ferretdb.sh start-rs "$root/build/ferretdb-rs.pid" rs0)
  stops+=("$root/build/ferretdb-rs.pid")
fi
export MONGODB_RS_URI
echo "MONGODB_RS_URI=$MONGODB_RS_URI"
# MONGODB_PROXY_URI, MONGODB_RS_PROXY_URI: the fault-injecting proxy (tests/unified, with
# configureFailPoint/failCommand) in front of MONGODB_URI and MONGODB_RS_URI, for the unified
# test format's runner. A server the proxy cannot front (not on loopback, with credentials)
# leaves them unset, said here.
for proxied in MONGODB_URI MONGODB_RS_URI; do
  var=${proxied%_URI}_PROXY_URI
  [ -z "${!var:-}" ] || continue
  pidfile=$root/build/failpoint-proxy.pid
  [ "$proxied" = MONGODB_URI ] || pidfile=$root/build/failpoint-proxy-rs.pid
  if uri=$(scripts/ferretdb.sh start-proxy "$pidfile" "${!proxied}"); then
    stops+=("$pidfile")
    printf -v "$var" '%s' "$uri"
  else
    echo "test.sh: no failCommand proxy in front of $proxied (above); $var stays unset" >&2
  fi
done
export MONGODB_PROXY_URI="${MONGODB_PROXY_URI:-}" MONGODB_RS_PROXY_URI="${MONGODB_RS_PROXY_URI:-}"
echo "MONGODB_PROXY_URI=$MONGODB_PROXY_URI MONGODB_RS_PROXY_URI=$MONGODB_RS_PROXY_URI"
# MONGODB_RS_AUTH_PROXY_URI: a replica set with authentication behind its own proxy, for the
# unified tests that ask for authentication (auth: true; the handshake error retries of SCRAM's
# saslContinue); by default a fourth FerretDB (ferretdb.sh start-rs-secure).
if [ -z "${MONGODB_RS_AUTH_PROXY_URI:-}" ]; then
  rs_auth=$(scripts/ferretdb.sh start-rs-secure "$root/build/ferretdb-rs-auth.pid" rs0)
  stops+=("$root/build/ferretdb-rs-auth.pid")
  if MONGODB_RS_AUTH_PROXY_URI=$(scripts/ferretdb.sh start-proxy \
    "$root/build/failpoint-proxy-rs-auth.pid" "$rs_auth"); then
    stops+=("$root/build/failpoint-proxy-rs-auth.pid")
  else
    echo "test.sh: no failCommand proxy in front of the authenticated replica set" >&2
    MONGODB_RS_AUTH_PROXY_URI=
  fi
fi
export MONGODB_RS_AUTH_PROXY_URI
echo "MONGODB_RS_AUTH_PROXY_URI=${MONGODB_RS_AUTH_PROXY_URI%%:*}://...  (password not shown)"

step "DNS server for the mongodb+srv:// tests"
# OID_DNS_SERVER (IPV4:PORT) points oid's SRV and TXT lookups at a DNS server serving
# tests/data/dns-seedlist.zone; by default NSD on loopback (scripts/dns-server.sh).
if [ -z "${OID_DNS_SERVER:-}" ]; then
  dns_pidfile=$root/build/dns-server.pid
  OID_DNS_SERVER=$(scripts/dns-server.sh start "$dns_pidfile")
fi
export OID_DNS_SERVER
echo "OID_DNS_SERVER=$OID_DNS_SERVER"

# No test prints the authenticated server's password: every message, exception text and
# command event a test shows lands in ctest's log, which is searched for it (start-secure's
# password is hex, so its percent-encoded form is the same text).
password_in_log() {
  local log=$1 password var
  for var in MONGODB_AUTH_URI MONGODB_RS_AUTH_PROXY_URI; do
    password=$(sed -nE 's|^[a-z+]+://[^:/@]+:([^@]+)@.*|\1|p' <<<"${!var}")
    [ -n "$password" ] || continue
    if grep -qF -- "$password" "$log"; then
      echo "test.sh: $log holds the password of $var: a test printed it" >&2
      exit 1
    fi
  done
  echo "no test printed the test servers' passwords ($(basename "$(dirname "$(dirname "$(dirname "$log")")")"))"
}

step "tests"
ctest --preset ci
password_in_log build/ci/Testing/Temporary/LastTest.log
# What the unified test format suites did (docs/conformance.md keeps the table).
python3 scripts/conformance.py build/ci/tests/unified

step "the Python package (python/): built into a venv from PyPI's pinned tools, then pytest"
# The BSON corpus, PyMongo round trips and fork safety through the Python API (docs/python.md).
# Under CI=true the corpus test fails rather than skips when build/spec-data lacks it.
python3 -m venv build/python-venv
build/python-venv/bin/pip install -q pytest==8.4.2 pymongo==4.20.1
build/python-venv/bin/pip install -q -C cmake.define.OID_WARNINGS_AS_ERRORS=ON ./python
build/python-venv/bin/python -m pytest -q -p no:cacheprovider python/tests

if $quick; then
  step "formatting (clang-format 14)"
  git ls-files -- '*.hpp' '*.cpp' | xargs clang-format-14 --dry-run -Werror
  step "quick run passed (the whole suite: scripts/test.sh)"
  exit 0
fi

step "client benchmark, once and tiny (bench/client_driverbench; the full run is scripts/bench-client.sh)"
# The large-document tasks take FerretDB (SQLite) close to a minute per document, so against the
# test server the benchmark runs its other tasks; the canned server takes every task.
bench=build/ci/bench
if [ -x "$bench/client_driverbench" ] && [ -x "$bench/canned_server" ]; then
  tiny=(--count 20 --large-count 1 --iterations 1 --warmup 0)
  "$bench/client_driverbench" --uri "$MONGODB_URI" "${tiny[@]}" \
    --task run_command,find_one,insert_one_small,find_many,insert_many_small
  canned_log=$(mktemp)
  "$bench/canned_server" --docs 20 >"$canned_log" &
  canned_pid=$!
  for _ in $(seq 50); do grep -q mongodb "$canned_log" && break; sleep 0.1; done
  "$bench/client_driverbench" --uri "$(cat "$canned_log")" "${tiny[@]}" --threads 2 ||
    { kill "$canned_pid"; exit 1; }
  kill "$canned_pid"
  rm -f "$canned_log"
fi
if [ -x "$bench/connect_bench" ]; then
  # What opening a connection costs with SCRAM (first vs later: the salted-password cache) and TLS.
  "$bench/connect_bench" --uri "$MONGODB_AUTH_URI" --count 3
  [ -z "$MONGODB_TLS_URI" ] || "$bench/connect_bench" --uri "$MONGODB_TLS_URI" --count 3
fi

step "formatting (clang-format 14)"
git ls-files -- '*.hpp' '*.cpp' | xargs clang-format-14 --dry-run -Werror

step "tests under AddressSanitizer and UndefinedBehaviorSanitizer"
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan
password_in_log build/asan/Testing/Temporary/LastTest.log

step "ThreadSanitizer: the code threads share (generators, the client's pools and monitors)"
# Only the test programs with shared state, and of the id tests only those with threads or fork:
# the single-threaded stress tests take minutes under TSan and find nothing it looks for.
cmake --preset tsan >/dev/null
# The client's test programs but the command's (the tsan preset builds no CLI).
mongo_kinds=(mongo_unit_tests mongo_scripted_tests mongo_server_tests)
cmake --build --preset tsan --target objectid_tests "${mongo_kinds[@]}" mongo_cmap_tests
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
build/tsan/tests/objectid_tests --gtest_filter='*Thread*:*Fork*' --gtest_brief=1
for kind in "${mongo_kinds[@]}"; do build/tsan/tests/$kind --gtest_brief=1; done
build/tsan/tests/mongo_cmap_tests --gtest_brief=1
unset TSAN_OPTIONS

step "fuzzers (${FUZZ_SECONDS:-20} s each)"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
for fuzzer in build/fuzz/fuzz/fuzz_*; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer")
  work=$(mktemp -d)
  cp -r "$root/fuzz/corpus/$name/." "$work/" 2>/dev/null || true
  echo "-- $name"
  "$fuzzer" -max_total_time="${FUZZ_SECONDS:-20}" -print_final_stats=0 -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix="$root/build/fuzz/$name-" "$work" 2>&1 | tail -n 3
  rm -rf "$work"
done

step "all passed"
