#!/usr/bin/env bash
# GridFS upload and download: `oid mongo files put` and `get` against a PyMongo script doing the
# same with gridfs.GridFSBucket (upload_from_stream, download_to_stream), on one file of random
# bytes and a FerretDB of its own. Every job is one child process, timed from a Python parent: its
# wall time, its CPU time (user + system from getrusage: the client's alone, the server is another
# process; PyMongo's includes Python's start-up, about 0.1 s) and its peak resident memory. After
# each download the file is compared with the original, byte for byte. Prints one table with the
# client CPU per MB, the rates, the peak RSS and oid's ratios, and issue 29's target (oid's client
# CPU at most 0.25x PyMongo's).
#
#   scripts/bench-gridfs.sh [--mb MB] [--build-dir DIR] [--oid PATH]
#
# --mb (or BENCH_GRIDFS_MB): the file's size in MiB (default 1024: 1 GiB; 1 makes a quick check of
# the script). --oid uses that oid binary instead of building the bench preset's. FerretDB is
# started with scripts/ferretdb.sh and stopped at the end. PyMongo 4 (with its C extensions) comes
# from PyPI into build/pymongo-venv, the venv scripts/bench-client.sh makes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
name=bench-gridfs
mb=${BENCH_GRIDFS_MB:-1024}
oid=""
. scripts/lib/bench-common.sh
bench_command_setup "$@"  # options, oid, PyMongo's venv, say, $tmp and a FerretDB at $uri

cat >"$tmp/pymongo_gridfs.py" <<'EOF'
import sys
from gridfs import GridFSBucket
from pymongo import MongoClient

# FerretDB v1 does not cut a getMore's batch at 16 MiB as MongoDB does: the rest of a large file's
# chunks come in one reply, which PyMongo refuses (above maxMessageSizeBytes). Read the chunks 32
# at a time (8 MiB), as oid does; against MongoDB this changes nothing.
try:
    import gridfs.synchronous.grid_file as grid_file
except ImportError:  # PyMongo before 4.9
    import gridfs.grid_file as grid_file
_iterator = getattr(grid_file, "GridOutChunkIterator", None) or grid_file._GridOutChunkIterator
_create_cursor = _iterator._create_cursor
def _create_cursor_in_batches(self):
    _create_cursor(self)
    self._cursor.batch_size(32)
_iterator._create_cursor = _create_cursor_in_batches

job, uri, db, path = sys.argv[1:5]
bucket = GridFSBucket(MongoClient(uri)[db])
if job == "put":
    with open(path, "rb") as f:
        bucket.upload_from_stream("file.bin", f)
elif job == "get":
    with open(path, "wb") as f:
        bucket.download_to_stream_by_name("file.bin", f)
else:
    sys.exit(f"unknown job {job}")
EOF

say "making a file of $mb MiB"
head -c "$((mb * 1024 * 1024))" /dev/urandom >"$tmp/file.bin"
bytes=$(stat -c %s "$tmp/file.bin")

results=$tmp/results.txt
: >"$results"
timed() { bench_timed "$@"; }  # scripts/lib/bench-common.sh
same() {  # same WHAT FILE: FILE is the original, byte for byte
  cmp -s "$tmp/file.bin" "$2" || { say "CHECK FAILED: $1 differs from the original"; exit 1; }
  rm -f "$2"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
timed put oid "$oid" mongo files put "$uri" bench_oid "$tmp/file.bin" --quiet
timed get oid "$oid" mongo files get "$uri" bench_oid file.bin --out "$tmp/oid.bin" --quiet
same "oid's download" "$tmp/oid.bin"
timed put pymongo "$py" "$tmp/pymongo_gridfs.py" put "$uri" bench_py "$tmp/file.bin"
timed get pymongo "$py" "$tmp/pymongo_gridfs.py" get "$uri" bench_py "$tmp/py.bin"
same "PyMongo's download" "$tmp/py.bin"
# Each read the other's file: the two write the same GridFS.
timed get oid-of-pymongo "$oid" mongo files get "$uri" bench_py file.bin --out "$tmp/x.bin" --quiet
same "oid's download of PyMongo's file" "$tmp/x.bin"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $load_before before, $load_after after"
python3 - "$results" "$bytes" <<'EOF'
import sys
sys.path.insert(0, "scripts/lib")
from markdown_table import print_table

results, size = sys.argv[1], int(sys.argv[2])
t = {}
for line in open(results):
    job, client, wall, user, system, rss = line.split()
    t[job, client] = (float(wall), float(user) + float(system), int(rss), float(user))
mb = size / 1e6
rows, verdicts = [], []
for job in ("put", "get"):
    (ow, oc, orss, ou), (pw, pc, prss, pu) = t[job, "oid"], t[job, "pymongo"]
    ratio = oc / pc if pc else float("inf")
    rows.append([f"files {job}",
                 f"{ow:.2f}", f"{pw:.2f}", f"{mb / ow:.1f}", f"{mb / pw:.1f}",
                 f"{1000 * oc / mb:.2f}", f"{1000 * pc / mb:.2f}", f"{ratio:.3f}x",
                 f"{1000 * ou / mb:.2f}", f"{1000 * pu / mb:.2f}",
                 f"{orss / 1024:.0f}", f"{prss / 1024:.0f}"])
    verdicts.append(f"{job} {'met' if ratio <= 0.25 else 'NOT met'}")
print(f"\nOne file of {size:,} bytes ({mb:.0f} MB) on FerretDB, chunks of 255 KiB; one run each; "
      "CPU is the client process's user + system time (user: its own code; system: the kernel's "
      "copies to and from the socket and the file, about the same for both); RSS its peak "
      "resident memory")
print_table(["job", "oid s", "PyMongo s", "oid MB/s", "PyMongo MB/s", "oid CPU ms/MB",
             "PyMongo CPU ms/MB", "CPU oid/PyMongo", "oid user ms/MB", "PyMongo user ms/MB",
             "oid peak RSS MiB", "PyMongo peak RSS MiB"],
            rows)
print(f"\nTarget (issue 29: oid's client CPU at most 0.25x PyMongo's): {', '.join(verdicts)}")
EOF
