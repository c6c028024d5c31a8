#!/usr/bin/env bash
# `oid mongo dump`, `restore`, `export` and `import` against PyMongo scripts doing the same work
# the way their users write them, on one collection of DriverBench tweets (each with its own
# ObjectId _id) on a FerretDB of its own: dump with RawBSONDocument (the bytes as the server sent
# them, written one after the other), restore with bson.decode_file_iter and insert_many batches
# of 1,000 (unordered, as oid restores), export with bson.json_util.dumps (relaxed Extended JSON, a
# document a line), import with json_util.loads a line and insert_many batches of 1,000. Every job
# is one child process, timed from a Python parent: its wall time and its CPU time (user + system
# from getrusage, the client's alone: the server is another process; PyMongo's includes Python's
# start-up, about 0.1 s). Prints one table with the CPU time per MB of
# BSON, the rates and oid's ratios, and issue 16's target for dump and restore (oid's client CPU at
# most 0.2x PyMongo's, wall time no worse).
#
#   scripts/bench-tools.sh [--mb MB] [--build-dir DIR] [--oid PATH]
#
# --mb (or BENCH_TOOLS_MB): the collection's size in MB of BSON (default 200; 1 makes a quick
# check of the script). --oid uses that oid binary instead of building the bench preset's.
# FerretDB is started with scripts/ferretdb.sh (FERRETDB=path uses a built binary) and stopped at
# the end. PyMongo 4 (with its C extensions) comes from PyPI into build/pymongo-venv, the venv
# scripts/bench-client.sh makes. After every job the script checks the work was done: the
# documents restored or imported (count_documents), the dumped file (the same documents as
# PyMongo's dump) and the exported lines.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
name=bench-tools
mb=${BENCH_TOOLS_MB:-200}
oid=""
. scripts/lib/bench-common.sh
bench_command_setup "$@"  # options, oid, PyMongo's venv, say, $tmp and a FerretDB at $uri

# The PyMongo side: one script, a job per argument list.
cat >"$tmp/pymongo_tools.py" <<'EOF'
import os, sys
import bson
from bson import json_util
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo import MongoClient

job, uri, ns, path = sys.argv[1:5]
db, coll = ns.split(".", 1)
client = MongoClient(uri)
c = client[db][coll]

def insert_batches(docs):
    batch, n = [], 0
    for d in docs:
        batch.append(d)
        if len(batch) == 1000:
            n += c.insert_many(batch, ordered=False).inserted_ids.__len__()
            batch = []
    if batch:
        n += len(c.insert_many(batch, ordered=False).inserted_ids)
    return n

if job == "dump":
    os.makedirs(os.path.join(path, db), exist_ok=True)
    raw = c.with_options(codec_options=CodecOptions(document_class=RawBSONDocument))
    with open(os.path.join(path, db, coll + ".bson"), "wb") as f:
        for doc in raw.find():
            f.write(doc.raw)
    meta = {"indexes": list(c.list_indexes()), "collectionName": coll, "type": "collection"}
    with open(os.path.join(path, db, coll + ".metadata.json"), "w") as f:
        f.write(json_util.dumps(meta, json_options=json_util.CANONICAL_JSON_OPTIONS))
elif job == "restore":
    with open(path, "rb") as f:
        insert_batches(bson.decode_file_iter(f))
elif job == "export":
    with open(path, "w") as f:
        for doc in c.find():
            f.write(json_util.dumps(doc, json_options=json_util.RELAXED_JSON_OPTIONS))
            f.write("\n")
elif job == "import":
    with open(path) as f:
        insert_batches(json_util.loads(line) for line in f if line.strip())
elif job == "count":
    print(c.count_documents({}))
elif job == "drop":
    client.drop_database(db)
else:
    sys.exit(f"unknown job {job}")
EOF
pytools() { "$py" "$tmp/pymongo_tools.py" "$@"; }

# ---- The collection: DriverBench's tweet, each copy with its own ObjectId _id
tweet=$(scripts/spec-data.sh)/driverbench/single_and_multi_document/tweet.json
[ -r "$tweet" ] || { say "$tweet is missing"; exit 1; }
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")))' \
  "$tweet" >"$tmp/tweet.json"
one=$("$oid" bson from-json --ensure-id "$tmp/tweet.json" | wc -c)
count=$(((mb * 1000000 + one - 1) / one))
mkdir -p "$tmp/src/bench_oid"
python3 -c 'import sys; sys.stdout.write(open(sys.argv[1]).read() * int(sys.argv[2]))' \
  "$tmp/tweet.json" "$count" | "$oid" bson from-json --ensure-id >"$tmp/tweets.bson"
bytes=$(stat -c %s "$tmp/tweets.bson")
# A hard link, not a symbolic one: restore refuses to follow symbolic links in a dump.
ln "$tmp/tweets.bson" "$tmp/src/bench_oid/tweets.bson"
say "collection: $count tweets, $bytes bytes of BSON ($one bytes each)"

results=$tmp/results.txt
: >"$results"
timed() { bench_timed "$@"; }  # scripts/lib/bench-common.sh
check() {  # check WHAT GOT WANT
  [ "$2" = "$3" ] || { say "CHECK FAILED: $1: $2, not $3"; exit 1; }
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
timed restore oid "$oid" mongo restore "$uri" "$tmp/src" --quiet
check "documents oid restored" "$(pytools count "$uri" bench_oid.tweets x)" "$count"
timed restore pymongo "$py" "$tmp/pymongo_tools.py" restore "$uri" bench_py.tweets "$tmp/tweets.bson"
check "documents PyMongo restored" "$(pytools count "$uri" bench_py.tweets x)" "$count"
pytools drop "$uri" bench_py.x x

# Both dump the collection oid restored: the same documents in the same order.
timed dump oid "$oid" mongo dump "$uri" --db bench_oid --collection tweets --out "$tmp/dump_oid" \
  --quiet
timed dump pymongo "$py" "$tmp/pymongo_tools.py" dump "$uri" bench_oid.tweets "$tmp/dump_py"
check "bytes oid dumped" "$(stat -c %s "$tmp/dump_oid/bench_oid/tweets.bson")" "$bytes"
cmp -s "$tmp/dump_oid/bench_oid/tweets.bson" "$tmp/dump_py/bench_oid/tweets.bson" ||
  { say "CHECK FAILED: the two dumps differ"; exit 1; }
rm -rf "$tmp/dump_oid" "$tmp/dump_py"

timed export oid "$oid" mongo export "$uri" bench_oid.tweets --out "$tmp/oid.json" --quiet
timed export pymongo "$py" "$tmp/pymongo_tools.py" export "$uri" bench_oid.tweets "$tmp/py.json"
check "lines oid exported" "$(wc -l <"$tmp/oid.json")" "$count"
check "lines PyMongo exported" "$(wc -l <"$tmp/py.json")" "$count"
rm -f "$tmp/py.json"

# Both import oid's export (the same input).
timed import oid "$oid" mongo import "$uri" bench_oid_i.tweets "$tmp/oid.json"
check "documents oid imported" "$(pytools count "$uri" bench_oid_i.tweets x)" "$count"
pytools drop "$uri" bench_oid_i.x x
timed import pymongo "$py" "$tmp/pymongo_tools.py" import "$uri" bench_py_i.tweets "$tmp/oid.json"
check "documents PyMongo imported" "$(pytools count "$uri" bench_py_i.tweets x)" "$count"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $load_before before, $load_after after"
python3 - "$results" "$bytes" "$count" <<'EOF'
import sys
sys.path.insert(0, "scripts/lib")
from markdown_table import print_table

results, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = {}
for line in open(results):
    job, client, wall, user, system, _rss = line.split()
    t[job, client] = (float(wall), float(user) + float(system))
mb = size / 1e6
lines, verdicts = [], []
for job in ("dump", "restore", "export", "import"):
    (ow, oc), (pw, pc) = t[job, "oid"], t[job, "pymongo"]
    cpu_ratio = oc / pc if pc else float("inf")
    wall_ratio = ow / pw if pw else float("inf")
    lines.append([job, f"{ow:.2f}", f"{pw:.2f}", f"{mb / ow:.2f}", f"{mb / pw:.2f}",
                  f"{oc:.3f}", f"{pc:.3f}", f"{1000 * oc / mb:.1f}", f"{1000 * pc / mb:.1f}",
                  f"{cpu_ratio:.3f}x", f"{wall_ratio:.2f}x"])
    if job in ("dump", "restore"):
        # Wall time "no worse": within 5%, the noise of a shared machine.
        ok = cpu_ratio <= 0.2 and wall_ratio <= 1.05
        verdicts.append(f"{job} {'met' if ok else 'NOT met'}")
print(f"\n{count:,} DriverBench tweets, {size:,} bytes of BSON ({mb:.1f} MB), on FerretDB; "
      "one run each; CPU is the client process's user + system time")
print_table(("job", "oid wall s", "PyMongo wall s", "oid MB/s", "PyMongo MB/s", "oid CPU s",
             "PyMongo CPU s", "oid CPU ms/MB", "PyMongo CPU ms/MB", "oid/PyMongo CPU",
             "oid/PyMongo wall"), lines)
print("\ntarget for dump and restore (oid's CPU <= 0.2x PyMongo's, wall <= 1.05x): " +
      ", ".join(verdicts))
EOF
