#!/usr/bin/env bash
# MongoDB's specification test suites and the DriverBench data sets, fetched from package
# registries at pinned versions, checked by SHA-256 and unpacked into build/spec-data (never
# committed: the suites are not the project's to ship). The tests (tests/support/spec_data.hpp)
# and the benchmarks (bench/, scripts/bench-*.sh) read them there.
#
#   scripts/spec-data.sh [fetch]   fetches and unpacks what is missing; prints the directory
#   scripts/spec-data.sh dir       prints the directory without fetching
#
# Where they come from, and why two sources:
# - the specification suites from PyMongo's source distribution (Apache-2.0), whose test/ carries
#   the suites as the driver runs them. Of the two registry packages that carry the suites it is
#   the closer to the specification's current text: against the copy the tests were first written
#   for, 4 of its files differ (3 newer, 1 older: CMAP's pool-create-min-size-error.json) and it
#   adds 14 (credential-disclosure.json, 13 DNS seedlist cases), where about 160 files of the Go
#   driver's v1.17 module differ (SDAM, max staleness, URI options, CMAP, ...).
# - the DriverBench data sets (testdata/single_and_multi_document, testdata/extended_bson,
#   gzipped) from the Go driver's module (Apache-2.0): PyMongo's source distribution has none.
#   From the same module, the one CMAP file PyMongo leaves out (wait-queue-fairness.json).
#   The BSON documents (extended_bson) are the original release's, in legacy Extended JSON
#   ({"$binary": "...", "$type": "00"}, {"$regex": ..., "$options": ...}), which oid's reader does
#   not take: they are kept as extended_bson_legacy, and extended_bson gets the same documents in
#   canonical Extended JSON v2, converted by PyMongo's bson.json_util (Debian's python3-bson).
#
# Environment: OID_SPEC_DATA_DIR (where to unpack, default build/spec-data),
# OID_SPEC_ARCHIVES (a directory that already holds the two archives under the names below:
# they are checked by hash and used instead of downloading).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# The pinned versions, in this one place; each archive's SHA-256 is checked before it is opened.
pymongo_version=4.20.1
pymongo_archive=pymongo-$pymongo_version.tar.gz
pymongo_sha256=1ac112b3ffa3d010cfc2fc54e3ae677a12c63d18c6115db4451df64f1a1175eb
pymongo_url=https://files.pythonhosted.org/packages/55/f8/a2aa941595375bab103fa23b91c8d0425289ba05537f0701b7102f01159d/$pymongo_archive
godriver_version=v1.17.10
godriver_archive=mongo-driver-$godriver_version.zip
godriver_sha256=ae1905601f487aa1adde722d8496603026f5a781e8d5dc9a8d94f379d5c12005
godriver_url=https://proxy.golang.org/go.mongodb.org/mongo-driver/@v/$godriver_version.zip

dest=${OID_SPEC_DATA_DIR:-$root/build/spec-data}
# The layout number changes when the list of suites below does, so that a cached copy is redone.
stamp="layout 4, pymongo $pymongo_version $pymongo_sha256, mongo-driver $godriver_version $godriver_sha256"

die() {
  echo "spec-data.sh: $*" >&2
  exit 1
}

# fetch_archive NAME URL SHA256: puts NAME into $dest/archives (from OID_SPEC_ARCHIVES or URL)
# and checks its hash; a file that does not match is removed, never used.
fetch_archive() {
  local name=$1 url=$2 sha=$3 file=$dest/archives/$1
  mkdir -p "$dest/archives"
  if [ ! -f "$file" ]; then
    if [ -n "${OID_SPEC_ARCHIVES:-}" ] && [ -f "$OID_SPEC_ARCHIVES/$name" ]; then
      cp "$OID_SPEC_ARCHIVES/$name" "$file.part"
    else
      command -v curl >/dev/null || die "curl is not installed (scripts/install-deps.sh installs it)"
      curl -sSfL --retry 3 -o "$file.part" "$url" || die "downloading $name failed"
    fi
    mv "$file.part" "$file"
  fi
  local got
  got=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    rm -f "$file"
    die "$name has SHA-256 $got, expected $sha: removed, not used"
  fi
}

fetch() {
  if [ -f "$dest/STAMP" ] && [ "$(cat "$dest/STAMP")" = "$stamp" ]; then
    echo "$dest"
    return
  fi
  local started=$SECONDS
  fetch_archive "$pymongo_archive" "$pymongo_url" "$pymongo_sha256"
  fetch_archive "$godriver_archive" "$godriver_url" "$godriver_sha256"
  local work=$dest.new
  rm -rf "$work"
  mkdir -p "$work"
  # Each suite under the name the tests use (the specification's own, shortened), from the
  # archive's directory for it. Python's tarfile/zipfile: no unzip needed, and members are checked
  # to stay inside the directory they are unpacked to.
  python3 - "$dest/archives/$pymongo_archive" "$dest/archives/$godriver_archive" "$work" \
    "pymongo-$pymongo_version" "go.mongodb.org/mongo-driver@$godriver_version" <<'PY'
import gzip, os, sys, tarfile, zipfile

tgz, gozip, out, py_top, go_top = sys.argv[1:]
# suite directory (under `out`) <- directory of PyMongo's test/ (only its .json files, not
# its subdirectories, unless the whole tree is wanted: True)
pymongo = {
    "bson-corpus": ("bson_corpus", False),
    "connection-string": ("connection_string/test", False),
    "uri-options": ("uri_options", False),
    "sdam/single": ("discovery_and_monitoring/single", False),
    "sdam/rs": ("discovery_and_monitoring/rs", False),
    "sdam/sharded": ("discovery_and_monitoring/sharded", False),
    "sdam/errors": ("discovery_and_monitoring/errors", False),
    "sdam/load-balanced": ("discovery_and_monitoring/load-balanced", False),
    "sdam/monitoring": ("sdam_monitoring", False),
    "server-selection": ("server_selection", True),
    "max-staleness": ("max_staleness", True),
    "cmap-format": ("connection_monitoring", False),
    "auth": ("auth/legacy", False),
    "dns-seedlist": ("srv_seedlist", True),
    # MongoDB's unified test format: the format's own tests (valid-pass, valid-fail, invalid),
    # and the suites written in it that tests/unified runs against FerretDB.
    "unified-format": ("unified-test-format", True),
    "crud": ("crud/unified", False),
    "retryable-reads": ("retryable_reads/unified", False),
    "retryable-writes": ("retryable_writes/unified", False),
    "command-monitoring": ("command_monitoring", True),
    "sessions": ("sessions", False),
    "index-management": ("index_management", False),
    "collection-management": ("collection_management", False),
    "run-command": ("run_command/unified", False),
    "transactions": ("transactions/unified", False),
    "transactions-convenient-api": ("transactions-convenient-api/unified", False),
    "csot": ("csot", False),
    "gridfs": ("gridfs", False),
    "change-streams": ("change_streams/unified", False),
    "load-balancer": ("load_balancer", False),
    "causal-consistency": ("causal_consistency", False),
    "read-write-concern": ("read_write_concern", True),
    "auth-unified": ("auth/unified", False),
    "client-backpressure": ("client-backpressure", False),
    "client-side-encryption": ("client-side-encryption/spec/unified", False),
    "command-logging": ("command_logging", False),
    "connection-logging": ("connection_logging", False),
    "sdam-unified": ("discovery_and_monitoring/unified", False),
    "handshake": ("handshake/unified", False),
    "server-selection-logging": ("server_selection_logging", False),
    "versioned-api": ("versioned-api", False),
    "data-lake": ("data_lake/unified", False),
    # BSON's binary vector subtype (9): JSON tests of their own, not in the unified format.
    "bson-binary-vector": ("bson_binary_vector", False),
}
go = {  # gzipped directories of the module
    "driverbench/single_and_multi_document": "testdata/single_and_multi_document",
    "driverbench/extended_bson": "testdata/extended_bson",
}
go_files = {  # single files of the module
    "cmap-format/wait-queue-fairness.json":
        "testdata/connection-monitoring-and-pooling/wait-queue-fairness.json",
}

def target(rel):
    path = os.path.normpath(os.path.join(out, rel))
    if not path.startswith(os.path.normpath(out) + os.sep):
        sys.exit(f"spec-data.sh: {rel} would unpack outside {out}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path

count = 0
with tarfile.open(tgz, "r:gz") as t:
    for m in t.getmembers():
        if not m.isfile() or not m.name.endswith(".json"):
            continue
        for suite, (src, deep) in pymongo.items():
            prefix = f"{py_top}/test/{src}/"
            if not m.name.startswith(prefix):
                continue
            rest = m.name[len(prefix):]
            if "/" in rest and not deep:
                continue
            with open(target(f"{suite}/{rest}"), "wb") as f:
                f.write(t.extractfile(m).read())
            count += 1
with zipfile.ZipFile(gozip) as z:
    for suite_file, src in go_files.items():
        with open(target(suite_file), "wb") as f:
            f.write(z.read(f"{go_top}/{src}"))
        count += 1
    for name in z.namelist():
        for suite, src in go.items():
            prefix = f"{go_top}/{src}/"
            if name.startswith(prefix) and name.endswith(".json.gz") and "/" not in name[len(prefix):]:
                base = name[len(prefix):-len(".gz")]
                with open(target(f"{suite}/{base}"), "wb") as f:
                    f.write(gzip.decompress(z.read(name)))
                count += 1
for suite in list(pymongo) + list(go):
    if not os.path.isdir(os.path.join(out, suite)):
        sys.exit(f"spec-data.sh: the archives have nothing for {suite}")
print(f"spec-data.sh: {count} files unpacked", file=sys.stderr)
PY
  local py=""
  for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import bson.json_util' 2>/dev/null; then py=$candidate; break; fi
  done
  [ -n "$py" ] || die "no python3 with bson.json_util (python3-bson; scripts/install-deps.sh installs it)"
  mv "$work/driverbench/extended_bson" "$work/driverbench/extended_bson_legacy"
  mkdir -p "$work/driverbench/extended_bson"
  "$py" - "$work/driverbench/extended_bson_legacy" "$work/driverbench/extended_bson" <<'PY'
import os, sys
from bson import json_util

src, out = sys.argv[1:]
for name in sorted(os.listdir(src)):
    with open(os.path.join(src, name), encoding="utf-8") as f:
        doc = json_util.loads(f.read())
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(json_util.dumps(doc, json_options=json_util.CANONICAL_JSON_OPTIONS))
PY
  echo "$stamp" >"$work/STAMP"
  rm -rf "$dest.old"
  mkdir -p "$work/archives"
  mv "$dest/archives/$pymongo_archive" "$dest/archives/$godriver_archive" "$work/archives/"
  [ ! -d "$dest" ] || mv "$dest" "$dest.old"
  mv "$work" "$dest"
  rm -rf "$dest.old"
  echo "spec-data.sh: fetched into $dest in $((SECONDS - started)) s" >&2
  echo "$dest"
}

case ${1:-fetch} in
  fetch) fetch ;;
  dir) echo "$dest" ;;
  *) die "usage: $0 [fetch | dir]" ;;
esac
