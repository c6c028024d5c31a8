#!/usr/bin/env bash
# Records the seeds of fuzz_hostile_server (fuzz/corpus/fuzz_hostile_server/) from a real server:
# each scenario's client conversation runs through the harness's recording proxy, which writes the
# scenario header and the server's replies in the harness's input format.
#
#   fuzz/record_hostile_server.sh REPLAY PLAIN_URI SECURE_URI OUTDIR
#
# REPLAY is the replay binary (build/ci/fuzz/fuzz_hostile_server_replay); PLAIN_URI is a server
# without authentication and SECURE_URI one with SCRAM (scripts/ferretdb.sh start and
# start-secure), both mongodb://[USER:PASSWORD@]HOST:PORT/ with an IPv4 address. Each holds
# fuzzdb.fuzzcoll and fuzzdb.other with a few documents (oid mongo insert). The recorded replies
# hold the servers' nonces, salts and signatures, which the replay does not need: the client's
# password there is another.
set -euo pipefail
replay=$1 plain=$2 secure=$3 out=$4
mkdir -p "$out"

address() { local a=${1#mongodb://}; a=${a#*@}; echo "${a%%/*}"; }
userinfo() { local a=${1#mongodb://}; [[ $a == *@* ]] && echo "${a%%@*}" || echo ""; }

# NAME URI HEADER(hex: scenario, operations low, operations high, batch size; see the harness)
record() {
  local name=$1 uri=$2 header=$3 info
  info=$(userinfo "$uri")
  local tmp
  tmp=$(mktemp)
  printf '%b' "$(sed 's/../\\x&/g' <<<"$header")" >"$tmp"
  OID_HOSTILE_RECORD=$(address "$uri") OID_HOSTILE_RECORD_OUT="$out/$name" \
    OID_HOSTILE_RECORD_USER=${info%%:*} OID_HOSTILE_RECORD_PASSWORD=${info#*:} \
    "$replay" "$tmp" >/dev/null
  rm -f "$tmp"
  echo "$name: $(wc -c <"$out/$name") bytes"
}

record plain-find-ping "$plain" 00620002            # find (batchSize 2: getMores), ping
record plain-dump "$plain" 00050001                 # dump (batchSize 1)
record plain-list "$plain" 00431700                 # listDatabases, listCollections, count+listIndexes, server
record scram-sha256-find "$secure" 02020002         # SCRAM-SHA-256, find
record scram-sha1-find "$secure" 01020002           # SCRAM-SHA-1, find
record scram-negotiated-dump "$secure" 03050001     # negotiated SCRAM, dump
