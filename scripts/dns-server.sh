#!/usr/bin/env bash
# A real DNS server on loopback for the mongodb+srv:// tests: Debian's NSD (authoritative only),
# on a free unprivileged UDP/TCP port of 127.0.0.1, serving the SRV and TXT records of MongoDB's
# initial DNS seedlist discovery tests (tests/data/dns-seedlist.zone, zone build.10gen.cc) and
# any zone files given after the pid file.
#
#   scripts/dns-server.sh start PIDFILE [ZONEFILE...]
#       starts NSD, waits until it has loaded its zones, prints 127.0.0.1:PORT on stdout: the value
#       for OID_DNS_SERVER, which points oid's SRV/TXT lookups at this server. Each extra zone
#       file names its zone in a `$ORIGIN name.` line.
#   scripts/dns-server.sh stop PIDFILE
#       stops that server and removes its directory (recorded in PIDFILE.dir).
#
# Environment: DNS_SEEDLIST_ZONE (the seedlist tests' zone file, default
# tests/data/dns-seedlist.zone), DNS_WAIT_SECONDS (how long to wait for NSD, default 15).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

die() {
  echo "dns-server.sh: $*" >&2
  exit 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The zone a file holds: its first `$ORIGIN name.` line, without the final dot.
zone_origin() {
  sed -n 's/^\$ORIGIN[[:space:]]\{1,\}\([^[:space:];]*\)\..*/\1/p' "$1" | head -n 1
}

start() {
  local pidfile=$1
  shift
  local spec_zone=${DNS_SEEDLIST_ZONE:-$root/tests/data/dns-seedlist.zone}
  [ -f "$spec_zone" ] || die "no zone file at $spec_zone"
  command -v nsd >/dev/null || [ -x /usr/sbin/nsd ] ||
    die "nsd is not installed (scripts/install-deps.sh installs it)"
  local nsd checkzone
  nsd=$(command -v nsd || echo /usr/sbin/nsd)
  checkzone=$(command -v nsd-checkzone || echo /usr/sbin/nsd-checkzone)
  mkdir -p "$(dirname "$pidfile")"
  pidfile=$(cd "$(dirname "$pidfile")" && pwd)/$(basename "$pidfile")
  local dir port
  dir=$(mktemp -d "${TMPDIR:-/tmp}/oid-dns.XXXXXX")
  echo "$dir" >"$pidfile.dir"
  port=$(free_port)
  cat >"$dir/nsd.conf" <<CONF
server:
  ip-address: 127.0.0.1
  port: $port
  do-ip6: no
  username: ""
  chroot: ""
  pidfile: "$pidfile"
  database: ""
  zonelistfile: "$dir/zone.list"
  xfrdfile: "$dir/xfrd.state"
  xfrdir: "$dir"
  zonesdir: "$dir"
  logfile: "$dir/nsd.log"
  server-count: 1
  verbosity: 1
remote-control:
  control-enable: no
CONF
  local zone name
  for zone in "$spec_zone" "$@"; do
    [ -f "$zone" ] || die "no zone file at $zone"
    name=$(zone_origin "$zone")
    [ -n "$name" ] || die "$zone has no \$ORIGIN line naming its zone"
    "$checkzone" "$name" "$zone" >"$dir/checkzone.log" 2>&1 ||
      die "zone $name in $zone does not load: $(cat "$dir/checkzone.log")"
    zone=$(cd "$(dirname "$zone")" && pwd)/$(basename "$zone")
    printf 'zone:\n  name: "%s"\n  zonefile: "%s"\n' "$name" "$zone" >>"$dir/nsd.conf"
  done
  rm -f "$pidfile"
  "$nsd" -c "$dir/nsd.conf" >"$dir/start.log" 2>&1 || die "nsd did not start: $(cat "$dir/start.log")"
  local deadline=$((SECONDS + ${DNS_WAIT_SECONDS:-15}))
  until [ -s "$pidfile" ] && grep -q "zone .* serial .* is updated\|nsd started" "$dir/nsd.log" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "nsd did not come up; its log: $(cat "$dir/nsd.log" 2>/dev/null)"
    sleep 0.1
  done
  echo "127.0.0.1:$port"
}

stop() {
  local pidfile=$1 pid dir
  if [ -s "$pidfile" ]; then
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ -f "$pidfile.dir" ]; then
    dir=$(cat "$pidfile.dir")
    case $dir in */oid-dns.*) rm -rf "$dir" ;; esac
    rm -f "$pidfile.dir"
  fi
  rm -f "$pidfile"
}

case ${1:-} in
  start) [ $# -ge 2 ] || die "usage: $0 start PIDFILE [ZONEFILE...]"; shift; start "$@" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop PIDFILE"; stop "$2" ;;
  *) die "usage: $0 start PIDFILE [ZONEFILE...] | stop PIDFILE" ;;
esac
