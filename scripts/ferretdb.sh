#!/usr/bin/env bash
# A real MongoDB-compatible server for the client's integration tests: FerretDB v1.24.2 with its
# embedded SQLite backend, on a free loopback port, in a fresh temporary directory.
#
#   scripts/ferretdb.sh install        builds build/tools/ferretdb when it is missing (Go module proxy)
#   scripts/ferretdb.sh start [PIDFILE] installs if needed, starts the server, waits until it accepts
#                                       connections, prints mongodb://127.0.0.1:PORT/ on stdout
#   scripts/ferretdb.sh stop [PIDFILE]  stops that server and removes its directory
#   scripts/ferretdb.sh start-rs PIDFILE [NAME]
#                                       the same as start with --repl-set-name=NAME (default rs0):
#                                       hello then reports that set name and the server as its one
#                                       member (a primary); prints
#                                       mongodb://127.0.0.1:PORT/?replicaSet=NAME
#   scripts/ferretdb.sh start-secure PIDFILE CERTDIR
#                                       the same with authentication and TLS: makes certificates in
#                                       CERTDIR (scripts/make-test-certs.sh), starts FerretDB with
#                                       its new authentication (SCRAM-SHA-1 and SCRAM-SHA-256
#                                       checked, a user needed for every command but hello, ping and
#                                       buildInfo) and a second, TLS-only listener that requires a
#                                       client certificate from CERTDIR/ca.pem; prints two URIs:
#                                       mongodb://USER:PASSWORD@127.0.0.1:PORT/ (plain) and
#                                       mongodb://USER:PASSWORD@127.0.0.1:TLSPORT/?tls=true&... (TLS).
#                                       The user is in admin; its password is random, written to
#                                       PIDFILE.password (0600) and inside the URIs. `stop` stops it.
#   scripts/ferretdb.sh start-rs-secure PIDFILE [NAME]
#                                       a one-member replica set (as start-rs) with authentication
#                                       (as start-secure, without TLS); prints
#                                       mongodb://USER:PASSWORD@127.0.0.1:PORT/?replicaSet=NAME
#   scripts/ferretdb.sh start-proxy PIDFILE URI
#                                       oid_failpoint_proxy (tests/unified/failpoint_proxy.cpp, a
#                                       configureFailPoint/failCommand proxy) in front of the
#                                       server at URI (one loopback host); prints the proxy's URI
#                                       with URI's credentials, path and options, e.g.
#                                       mongodb://127.0.0.1:PORT/?replicaSet=rs0 (the proxy
#                                       never sees the credentials: authentication passes
#                                       through it like any command). `stop PIDFILE`
#                                       stops it. FAILPOINT_PROXY: the binary (default
#                                       build/ci/tests/unified/oid_failpoint_proxy).
#
# PIDFILE defaults to build/ferretdb.pid; the server's directory is recorded beside it (PIDFILE.dir)
# and its log is PIDFILE.log. Environment: FERRETDB (a ferretdb binary to use instead),
# FERRETDB_WAIT_SECONDS (how long to wait for it to answer, default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
version=v1.24.2
tools=$root/build/tools
binary=${FERRETDB:-$tools/ferretdb}

die() {
  echo "ferretdb.sh: $*" >&2
  exit 1
}

install_ferretdb() {
  if [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; then return 0; fi
  [ -z "${FERRETDB:-}" ] || die "FERRETDB=$FERRETDB does not run"
  # Go's own installer puts it in /usr/local/go, often not on PATH. FerretDB v1.24.2 needs Go 1.24;
  # a Go from 1.21 on fetches that toolchain itself from the module proxy (GOTOOLCHAIN=auto).
  # Debian 12's golang-go (1.19) is too old.
  if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
    PATH=$PATH:/usr/local/go/bin
  fi
  command -v go >/dev/null ||
    die "go (1.21 or later) is not installed; it is needed to build FerretDB $version"
  mkdir -p "$tools"
  if [ ! -x "$binary" ]; then
    echo "ferretdb.sh: building FerretDB $version (a few minutes the first time)" >&2
    # One package at a time and at low priority: the machine is shared and has two cores.
    GOBIN=$tools GOFLAGS=-p=1 nice -n 10 \
      go install "github.com/FerretDB/FerretDB/cmd/ferretdb@$version" >&2 ||
      die "go install github.com/FerretDB/FerretDB/cmd/ferretdb@$version failed"
    [ -x "$binary" ] || die "go install finished but $binary is missing"
  fi
  # A `go install`ed v1.24.2 panics at start-up ("Invalid build/version/version.txt file content.
  # Please run `bin/task gen-version`."): the module embeds build/version/version.txt, which its
  # release process generates and the published module lacks. Build again from a copy of the same
  # module source with that file written; the Go build cache makes this second build quick.
  if ! "$binary" --version >/dev/null 2>&1; then
    local src work
    src=$(go mod download -json "github.com/FerretDB/FerretDB@$version" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
    work=$(mktemp -d "${TMPDIR:-/tmp}/oid-ferretdb-src.XXXXXX")
    cp -r "$src/." "$work/"
    chmod -R u+w "$work"
    echo "$version" >"$work/build/version/version.txt"
    (cd "$work" && GOFLAGS=-p=1 nice -n 10 go build -o "$binary" ./cmd/ferretdb) >&2 ||
      die "building FerretDB $version from $work failed"
    rm -rf "$work"
    "$binary" --version >/dev/null 2>&1 || die "$binary --version fails after the rebuild"
  fi
}

# A port nobody listens on now. The kernel picks it (bind to port 0), so concurrent runs do not
# collide; the small window before FerretDB binds it is acceptable for tests.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  local pidfile=$1
  shift
  install_ferretdb
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    die "a server from $pidfile is already running (pid $(cat "$pidfile")); stop it first"
  fi
  mkdir -p "$(dirname "$pidfile")"
  local dir port
  dir=$(mktemp -d "${TMPDIR:-/tmp}/oid-ferretdb.XXXXXX")
  port=$(free_port)
  launch "$pidfile" "$dir" "$port" "$@"
  echo "mongodb://127.0.0.1:$port/"
}

# start-rs PIDFILE NAME: a one-member replica set (FerretDB with --repl-set-name).
start_rs() {
  local pidfile=$1 name=$2 uri
  uri=$(start "$pidfile" --repl-set-name="$name")
  echo "${uri}?replicaSet=$name"
}

# launch PIDFILE DIR PORT [FLAG...]: runs FerretDB with its SQLite files and state in DIR, listening
# on 127.0.0.1:PORT, with the FLAGs added; records it in PIDFILE and waits until PORT answers.
launch() {
  local pidfile=$1 dir=$2 port=$3 pid
  shift 3
  "$binary" --handler=sqlite --sqlite-url="file:$dir/" --listen-addr="127.0.0.1:$port" \
    --state-dir="$dir" --debug-addr=- --telemetry=disable --log-level=warn "$@" \
    >"$pidfile.log" 2>&1 &
  pid=$!
  echo "$pid" >"$pidfile"
  echo "$dir" >"$pidfile.dir"
  wait_for "$pidfile" "$pid" "$port"
}

# start-secure PIDFILE CERTDIR: FerretDB with authentication on a plain and a TLS listener.
start_secure() {
  local pidfile=$1 certs=$2
  install_ferretdb
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    die "a server from $pidfile is already running (pid $(cat "$pidfile")); stop it first"
  fi
  "$root/scripts/make-test-certs.sh" "$certs"
  mkdir -p "$(dirname "$pidfile")"
  local dir port tls_port password user=oid-test
  dir=$(mktemp -d "${TMPDIR:-/tmp}/oid-ferretdb.XXXXXX")
  port=$(free_port)
  tls_port=$(free_port)
  [ "$port" != "$tls_port" ] || tls_port=$(free_port)
  password=$(openssl rand -hex 16)
  (umask 077 && echo "$password" >"$pidfile.password")
  # The password goes through the environment, not the command line (visible in ps).
  FERRETDB_SETUP_PASSWORD=$password launch "$pidfile" "$dir" "$port" \
    --listen-tls="127.0.0.1:$tls_port" \
    --listen-tls-cert-file="$certs/server.pem" --listen-tls-key-file="$certs/server.key" \
    --listen-tls-ca-file="$certs/ca.pem" \
    --test-enable-new-auth --setup-database=admin --setup-username="$user"
  wait_for "$pidfile" "$(cat "$pidfile")" "$tls_port"
  echo "mongodb://$user:$password@127.0.0.1:$port/"
  echo "mongodb://$user:$password@127.0.0.1:$tls_port/?tls=true&tlsCAFile=$certs/ca.pem&tlsCertificateKeyFile=$certs/client-bundle.pem"
}

# start-rs-secure PIDFILE NAME: a one-member replica set with authentication (no TLS listener).
start_rs_secure() {
  local pidfile=$1 name=$2
  install_ferretdb
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    die "a server from $pidfile is already running (pid $(cat "$pidfile")); stop it first"
  fi
  mkdir -p "$(dirname "$pidfile")"
  local dir port password user=oid-test
  dir=$(mktemp -d "${TMPDIR:-/tmp}/oid-ferretdb.XXXXXX")
  port=$(free_port)
  password=$(openssl rand -hex 16)
  (umask 077 && echo "$password" >"$pidfile.password")
  # The password goes through the environment, not the command line (visible in ps).
  FERRETDB_SETUP_PASSWORD=$password launch "$pidfile" "$dir" "$port" --repl-set-name="$name" \
    --test-enable-new-auth --setup-database=admin --setup-username="$user"
  echo "mongodb://$user:$password@127.0.0.1:$port/?replicaSet=$name"
}

# start-proxy PIDFILE URI: the fault-injecting proxy in front of URI's server.
start_proxy() {
  local pidfile=$1 uri=$2
  local proxy=${FAILPOINT_PROXY:-$root/build/ci/tests/unified/oid_failpoint_proxy}
  [ -x "$proxy" ] || die "$proxy is missing: build the target oid_failpoint_proxy first"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    die "a proxy from $pidfile is already running (pid $(cat "$pidfile")); stop it first"
  fi
  case $uri in
  mongodb://*) ;;
  *) die "start-proxy: not a mongodb:// connection string (not shown: it may hold a password)" ;;
  esac
  local rest=${uri#mongodb://} userinfo="" hostport suffix pid line waited=0
  hostport=${rest%%/*}
  suffix=${rest#"$hostport"} # "/..." or nothing
  suffix=${suffix:-/}
  if [[ $hostport == *@* ]]; then
    # Kept for the proxy's URI, never passed to the proxy; not echoed in messages either.
    userinfo=${hostport%@*}@
    hostport=${hostport##*@}
  fi
  case $hostport in
  *,* | "") die "start-proxy: the connection string must name one host" ;;
  esac
  mkdir -p "$(dirname "$pidfile")"
  "$proxy" --upstream "$hostport" >"$pidfile.uri" 2>"$pidfile.log" &
  pid=$!
  echo "$pid" >"$pidfile"
  until [ -s "$pidfile.uri" ] && line=$(head -n 1 "$pidfile.uri") && [ -n "$line" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$pidfile.log" >&2
      stop "$pidfile"
      die "the proxy exited before it listened (log above)"
    fi
    waited=$((waited + 1))
    if [ "$waited" -ge $((${FERRETDB_WAIT_SECONDS:-30} * 10)) ]; then
      stop "$pidfile"
      die "the proxy printed no URI within ${FERRETDB_WAIT_SECONDS:-30} s"
    fi
    sleep 0.1
  done
  line=${line%/}
  echo "mongodb://$userinfo${line#mongodb://}$suffix"
}

# wait_for PIDFILE PID PORT: until the server answers on PORT, or fail (and stop it).
wait_for() {
  local pidfile=$1 pid=$2 port=$3
  local waited=0 limit=$((${FERRETDB_WAIT_SECONDS:-30} * 10))
  until port_open "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$pidfile.log" >&2
      stop "$pidfile"
      die "FerretDB exited before it answered (log above)"
    fi
    waited=$((waited + 1))
    if [ "$waited" -ge "$limit" ]; then
      cat "$pidfile.log" >&2
      stop "$pidfile"
      die "FerretDB did not answer on 127.0.0.1:$port within ${FERRETDB_WAIT_SECONDS:-30} s"
    fi
    sleep 0.1
  done
}

stop() {
  local pidfile=$1
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile")
    if kill "$pid" 2>/dev/null; then
      # Give it a moment to close its SQLite files before the directory goes.
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  fi
  if [ -f "$pidfile.dir" ]; then
    local dir
    dir=$(cat "$pidfile.dir")
    case $dir in
    */oid-ferretdb.*) rm -rf "$dir" ;;
    esac
    rm -f "$pidfile.dir"
  fi
  rm -f "$pidfile.password" "$pidfile.uri"
}

command=${1:-}
pidfile=${2:-$root/build/ferretdb.pid}
case $command in
install) install_ferretdb ;;
start) start "$pidfile" ;;
stop) stop "$pidfile" ;;
start-rs)
  [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 start-rs PIDFILE [NAME]"
  start_rs "$pidfile" "${3:-rs0}"
  ;;
start-proxy)
  [ $# -eq 3 ] || die "usage: $0 start-proxy PIDFILE URI"
  start_proxy "$pidfile" "$3"
  ;;
start-rs-secure)
  [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 start-rs-secure PIDFILE [NAME]"
  start_rs_secure "$pidfile" "${3:-rs0}"
  ;;
start-secure)
  [ $# -eq 3 ] || die "usage: $0 start-secure PIDFILE CERTDIR"
  start_secure "$pidfile" "$3"
  ;;
*)
  echo "usage: $0 install | start [PIDFILE] | start-rs PIDFILE [NAME] | start-rs-secure PIDFILE [NAME] | start-secure PIDFILE CERTDIR | start-proxy PIDFILE URI | stop [PIDFILE]" >&2
  exit 2
  ;;
esac
