#!/usr/bin/env bash
# oid's client beside libmongoc 1.23, the Go driver (v1.17) and PyMongo 4 on DriverBench's single-
# and multi-document tasks (bench/client_driverbench.cpp and its peers), against FerretDB and
# against bench/canned_server.cpp, and with two threads sharing one client on the canned server.
# Prints one table: task x client, MB/s and CPU microseconds per operation, with oid's ratios.
#
#   scripts/bench-client.sh [--runs R] [--count N] [--iterations K] [--large-count L]
#                           [--ferret-count N] [--ferret-iterations K] [--ferret-large-count L]
#                           [--clients oid,libmongoc,go,pymongo] [--json FILE] [--only canned]
#                           [--tasks find_many,...]
#
# Every measurement is repeated R times (default 1; the table shows the median of the runs, and
# the runs' range of oid's ratio to libmongoc). Canned server: N operations per task (default 10,000, the specification's), L for the large-
# document tasks (default 10), K timed iterations after one warm-up (default 5). FerretDB is slow
# (SQLite): --ferret-count (default 100) and --ferret-iterations (default 3); the large-document
# tasks are left out there unless --ferret-large-count L is given (FerretDB needs close to a
# minute to store one 2.7 MB document on a busy machine). On FerretDB the client's CPU time per
# operation is the number to read: the server's own time dominates the wall time.
#
# Also, for oid and libmongoc: the same FerretDB tasks with authentication (SCRAM-SHA-256) and with
# TLS (and authentication: a client certificate is required) against a second FerretDB started
# with scripts/ferretdb.sh start-secure, and the cost of monitoring on the canned server: the
# single-document tasks with a single seed used directly (no monitor), with directConnection=false
# (a monitor thread, heartbeat every 10 s) and with heartbeatFrequencyMS=500 as well.
#
# --only canned leaves FerretDB out (no FerretDB is started; no FerretDB, authentication or TLS
# rows): the canned server's tables only. --tasks runs only the tasks named (the rows of the
# others are left out), e.g. find many with enough documents that the CPU clock's ticks do not
# blur the user and system split: --tasks find_many --count 100000 --ferret-count 40000.
#
# The two-thread table also gives the canned server's CPU time per operation (oid's and
# libmongoc's programs read the server's CPU clock, clock_getcpuclockid of its pid, around the
# same timed part as their own CPU time) and a "2-core bound": the most a second thread could give
# on this machine if the cores are the limit. One thread and its server thread cost C + S CPU us
# per operation (client + server, the one-thread run); the machine's cores can do at most
# cores * 1e6 / (C + S) operations a second, so two threads can reach at most
#   bound = min(2, (cores * 1e6 / (C + S)) / (one thread's operations a second))
#         = min(2, cores * (one thread's wall us per operation) / (C + S)).
# A bound near 1 means that one thread and its server thread already keep the cores busy; a
# scaling well below a bound near 2 points at the client (or the server) serializing the threads,
# or at other processes taking the cores: the table also gives the cores the client and the server
# used in the two-thread timed part ((client + server CPU us/op) x operations / wall us) and the
# machine's busy cores over the whole run, all processes (/proc/stat): when the machine is busy
# and ours are not, other processes had the cores, and the scaling says little.
#
# After every run the script checks that the work was done: the documents a find read, and after
# an insert task the documents in the server (count_documents on FerretDB, the canned server's
# cannedStats) against what the last iteration inserted.
#
# Builds what it needs: the bench preset (oid, canned_server, libmongoc), the Go program (Go from
# PATH or /usr/local/go, modules from the Go module proxy), PyMongo in a venv under build/.
# Starts its own FerretDB with scripts/ferretdb.sh (FERRETDB=path uses a built binary).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/lib/bench-common.sh  # bench_pymongo (its defaults are overridden below)

runs=1
count=10000
iterations=5
large_count=10
ferret_count=100
ferret_iterations=3
ferret_large_count=0
clients=oid,libmongoc,go,pymongo
json_out=""
only=all
tasks=all
while [ $# -gt 0 ]; do
  case "$1" in
  --runs) runs=${2:?}; shift 2 ;;
  --count) count=${2:?}; shift 2 ;;
  --iterations) iterations=${2:?}; shift 2 ;;
  --large-count) large_count=${2:?}; shift 2 ;;
  --ferret-count) ferret_count=${2:?}; shift 2 ;;
  --ferret-iterations) ferret_iterations=${2:?}; shift 2 ;;
  --ferret-large-count) ferret_large_count=${2:?}; shift 2 ;;
  --clients) clients=${2:?}; shift 2 ;;
  --json) json_out=${2:?}; shift 2 ;;
  --only) only=${2:?}; shift 2 ;;
  --tasks) tasks=${2:?}; shift 2 ;;
  -h | --help) sed -n '2,52p' "$0"; exit 0 ;;
  *) echo "bench-client: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "bench-client: $*" >&2; }
case "$only" in
all | canned) ;;
*) say "--only wants canned, not $only"; exit 2 ;;
esac

# ---- Build
./scripts/install-deps.sh
build=$root/build/bench
say "building the bench preset (client_driverbench, canned_server, libmongoc_driverbench)"
cmake --preset bench >/dev/null
nice -n 5 cmake --build --preset bench --target client_driverbench canned_server \
  libmongoc_driverbench >/dev/null
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then PATH=$PATH:/usr/local/go/bin; fi
if [[ ",$clients," == *",go,"* ]]; then
  say "building bench/go"
  (cd bench/go && GOFLAGS=-p=1 nice -n 5 go build -o "$build/go_driverbench" .)
fi
bench_pymongo
data=$(scripts/spec-data.sh)/driverbench/single_and_multi_document

# ---- Servers
tmp=$(mktemp -d)
ferret_pid=$tmp/ferretdb.pid
secure_pid=$tmp/ferretdb-secure.pid
canned_pid=""
cleanup() {
  [ -z "$canned_pid" ] || kill "$canned_pid" 2>/dev/null || true
  [ ! -f "$ferret_pid" ] || scripts/ferretdb.sh stop "$ferret_pid" >/dev/null 2>&1 || true
  [ ! -f "$secure_pid" ] || scripts/ferretdb.sh stop "$secure_pid" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$only" = all ]; then
  say "starting FerretDB"
  ferret_uri=$(scripts/ferretdb.sh start "$ferret_pid")
  say "starting FerretDB with authentication and TLS"
  secure_uris=$(scripts/ferretdb.sh start-secure "$secure_pid" "$tmp/certs")
  auth_uri=$(echo "$secure_uris" | sed -n 1p)
  tls_uri=$(echo "$secure_uris" | sed -n 2p)
fi
"$build/bench/canned_server" --docs "$count" >"$tmp/canned.uri" &
canned_pid=$!
for _ in $(seq 100); do grep -q mongodb "$tmp/canned.uri" && break; sleep 0.1; done
canned_uri=$(cat "$tmp/canned.uri")

command_of() {
  case "$1" in
  oid) echo "$build/bench/client_driverbench" ;;
  libmongoc) echo "$build/bench/libmongoc_driverbench" ;;
  go) echo "$build/go_driverbench --data $data" ;;
  pymongo) echo "$py $root/bench/pymongo_driverbench.py --data $data" ;;
  esac
}

# The documents in perftest.corpus (FerretDB) or received since the last drop (canned server).
server_count() {
  "$py" - "$1" "$2" <<'EOF'
import sys, pymongo
uri, kind = sys.argv[1], sys.argv[2]
c = pymongo.MongoClient(uri)
if kind.startswith("canned"):
    print(c.admin.command("cannedStats")["inserted"])
else:
    print(c.perftest.corpus.count_documents({}))
EOF
}

results=$tmp/results.jsonl
# run SERVER-KIND URI COUNT LARGE ITERATIONS THREADS CLIENT TASK
run() {
  local kind=$1 uri=$2 n=$3 l=$4 k=$5 threads=$6 client=$7 task=$8
  local out server=()
  say "$kind: $client $task (threads $threads)"
  # oid's and libmongoc's programs also measure the canned server's CPU time (--server-pid).
  if [[ "$kind" == canned* && ( "$client" == oid || "$client" == libmongoc ) ]]; then
    server=(--server-pid "$canned_pid")
  fi
  # The machine's CPU time (all processes: /proc/stat's first line) around the run, to tell how
  # busy the other processes kept the cores.
  local stat0 stat1
  stat0=$(head -1 /proc/stat)
  # shellcheck disable=SC2046
  out=$($(command_of "$client") --uri "$uri" --task "$task" --count "$n" --large-count "$l" \
    --iterations "$k" --warmup 1 --threads "$threads" "${server[@]}" --json) ||
    { say "$client failed on $task against $kind"; exit 1; }
  stat1=$(head -1 /proc/stat)
  local ops docs want
  ops=$(echo "$out" | "$py" -c 'import json,sys; print(json.loads(sys.stdin.read())["ops"])')
  docs=$(echo "$out" | "$py" -c 'import json,sys; print(json.loads(sys.stdin.read())["docs"])')
  want=$((ops * threads))
  [ "$docs" -eq "$want" ] ||
    { say "CHECK FAILED: $client $task on $kind reports $docs documents, not $want"; exit 1; }
  case "$task" in
  insert_*)
    local stored
    stored=$(server_count "$uri" "$kind")
    [ "$stored" -eq "$want" ] ||
      { say "CHECK FAILED: $kind holds $stored documents after $client $task, not $want"; exit 1; }
    ;;
  esac
  echo "$out" | "$py" -c "
import json, os, sys
d = json.loads(sys.stdin.read())
d['server'] = '$kind'
d['run'] = $run
# cpu user nice system idle iowait irq softirq steal: the busy share of the run, in cores.
a, b = ([int(x) for x in s.split()[1:9]] for s in ('$stat0', '$stat1'))
total = sum(b) - sum(a)
idle = (b[3] + b[4]) - (a[3] + a[4])
if total > 0:
    d['machine_busy_cores'] = round((total - idle) / total * (os.cpu_count() or 1), 3)
print(json.dumps(d))" >>"$results"
}

# True when TASK is to run (--tasks).
wanted() { [ "$tasks" = all ] || [[ ",$tasks," == *",$1,"* ]]; }

small_tasks=(run_command find_one insert_one_small find_many insert_many_small)
large_tasks=(insert_one_large insert_many_large)
IFS=, read -r -a client_list <<<"$clients"

ferret_tasks=("${small_tasks[@]}")
[ "$ferret_large_count" -eq 0 ] || ferret_tasks+=("${large_tasks[@]}")
for run in $(seq 1 "$runs"); do
  say "run $run of $runs"
  for task in "${small_tasks[@]}" "${large_tasks[@]}"; do
    wanted "$task" || continue
    for client in "${client_list[@]}"; do
      run canned "$canned_uri" "$count" "$large_count" "$iterations" 1 "$client" "$task"
    done
  done
  for task in "${small_tasks[@]}" "${large_tasks[@]}"; do
    wanted "$task" || continue
    for client in oid libmongoc; do
      [[ ",$clients," == *",$client,"* ]] || continue
      run canned "$canned_uri" "$count" "$large_count" "$iterations" 2 "$client" "$task"
    done
  done
  if [ "$only" = all ]; then
    for task in "${ferret_tasks[@]}"; do
      wanted "$task" || continue
      for client in "${client_list[@]}"; do
        run ferretdb "$ferret_uri" "$ferret_count" "$((ferret_large_count > 0 ? ferret_large_count : 1))" "$ferret_iterations" 1 \
          "$client" "$task"
      done
    done
    # Authentication and TLS (the connections are opened in the warm-up: the rows are the cost per
    # operation once connected).
    for task in "${small_tasks[@]}"; do
      wanted "$task" || continue
      for client in oid libmongoc; do
        [[ ",$clients," == *",$client,"* ]] || continue
        run ferretdb-auth "$auth_uri" "$ferret_count" 1 "$ferret_iterations" 1 "$client" "$task"
        run ferretdb-tls "$tls_uri" "$ferret_count" 1 "$ferret_iterations" 1 "$client" "$task"
      done
    done
  fi
  # Monitoring: a monitor thread per server (directConnection=false), at the default heartbeat
  # and every 500 ms, against the same server used directly.
  for task in run_command find_one insert_one_small; do
    wanted "$task" || continue
    for client in oid libmongoc; do
      [[ ",$clients," == *",$client,"* ]] || continue
      run canned-monitor "${canned_uri}?directConnection=false" "$count" "$large_count" \
        "$iterations" 1 "$client" "$task"
      run canned-monitor-500 "${canned_uri}?directConnection=false&heartbeatFrequencyMS=500" \
        "$count" "$large_count" "$iterations" 1 "$client" "$task"
    done
  done
done
[ -z "$json_out" ] || cp "$results" "$json_out"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
"$py" - "$results" "$clients" <<'EOF'
import json, os, sys

import statistics

rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    if "sys_us_per_op" in r:  # what the client's own code cost, the kernel's part apart
        r["user_us_per_op"] = r["cpu_us_per_op"] - r["sys_us_per_op"]
clients = sys.argv[2].split(",")
tasks = ["run_command", "find_one", "insert_one_small", "insert_one_large", "find_many",
         "insert_many_small", "insert_many_large"]
by_key = {}
for r in rows:
    by_key.setdefault((r["server"], r["threads"], r["task"], r["client"]), []).append(r)
# The median of the runs of each number; "runs" keeps every run for the ranges.
get = {}
for key, rs in by_key.items():
    m = dict(rs[0])
    for f in ("mbps", "cpu_us_per_op", "wall_s", "server_cpu_us_per_op", "sys_us_per_op",
              "user_us_per_op"):
        if all(f in r for r in rs):
            m[f] = statistics.median(r[f] for r in rs)
    m["runs"] = {r["run"]: r for r in rs}
    get[key] = m

def spread(server, task, peer, field):
    # oid's ratio to `peer` in each run: the range, "lo-hi".
    o, p = get.get((server, 1, task, "oid")), get.get((server, 1, task, peer))
    if not o or not p:
        return "-"
    rs = [o["runs"][k][field] / p["runs"][k][field] for k in o["runs"]
          if k in p["runs"] and field in o["runs"][k] and p["runs"][k].get(field)]
    return f"{min(rs):.2f}-{max(rs):.2f}" if len(rs) > 1 else "-"

def table(title, header, lines):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)]
    print(f"\n{title}")
    print("| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for l in lines:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(l, widths)) + " |")

for server, what in (("canned", "canned server (wall time is the driver's)"),
                     ("ferretdb", "FerretDB (read the CPU: the server's time dominates the wall)"),
                     ("ferretdb-auth", "FerretDB with authentication (SCRAM-SHA-256)"),
                     ("ferretdb-tls", "FerretDB with TLS and authentication")):
    lines = []
    shown = [c for c in clients if any(get.get((server, 1, t, c)) for t in tasks)]
    if not shown:
        continue
    header = ["task"] + [f"{c} MB/s" for c in shown] + [f"{c} CPU us/op" for c in shown] + \
             [f"oid/{p} MB/s" for p in shown if p != "oid"] + \
             [f"oid/{p} CPU" for p in shown if p != "oid"] + ["oid/libmongoc CPU, runs"]
    for t in tasks:
        rs = [get.get((server, 1, t, c)) for c in shown]
        if not any(rs):
            continue
        oid = get.get((server, 1, t, "oid"))
        line = [t] + [f"{r['mbps']:,.2f}" if r else "-" for r in rs] + \
               [f"{r['cpu_us_per_op']:,.2f}" if r else "-" for r in rs]
        for key in ("mbps", "cpu_us_per_op"):
            for p in [c for c in shown if c != "oid"]:
                r = get.get((server, 1, t, p))
                line.append(f"{oid[key] / r[key]:.2f}x" if oid and r and r[key] else "-")
        line.append(spread(server, t, "libmongoc", "cpu_us_per_op"))
        lines.append(line)
    table(f"1 thread, {what}: MB/s (higher is better), CPU us per operation (lower is better); "
          "oid/peer ratios: MB/s above 1 and CPU below 1 favour oid", header, lines)

    # The same runs' CPU split into user space (the client's own code) and system (the kernel:
    # receive copies, wake-ups, page faults), where the client reports both.
    split = [c for c in shown
             if any("user_us_per_op" in (get.get((server, 1, t, c)) or {}) for t in tasks)]
    if "oid" not in split:
        continue
    header = ["task"] + [f"{c} user / sys us/op" for c in split] + \
             [f"oid/{p} user" for p in split if p != "oid"] + \
             [f"oid/{p} CPU" for p in split if p != "oid"] + ["oid/libmongoc user, runs"]
    lines = []
    for t in tasks:
        rs = [get.get((server, 1, t, c)) for c in split]
        if not any(rs):
            continue
        oid = get.get((server, 1, t, "oid"))
        line = [t] + [f"{r['user_us_per_op']:,.2f} / {r['sys_us_per_op']:,.2f}"
                      if r and "user_us_per_op" in r else "-" for r in rs]
        for key in ("user_us_per_op", "cpu_us_per_op"):
            for p in [c for c in split if c != "oid"]:
                r = get.get((server, 1, t, p))
                ok = oid and r and r.get(key) and key in oid
                line.append(f"{oid[key] / r[key]:.2f}x" if ok else "-")
        line.append(spread(server, t, "libmongoc", "user_us_per_op"))
        lines.append(line)
    table(f"1 thread, {what}: CPU us per operation, user space / system (lower is better); "
          "oid/peer ratios below 1 favour oid", header, lines)

cores = os.cpu_count() or 1

def bound(one):
    # The most a second thread could give if the cores are the limit (the script's top comment):
    # cores * (one thread's wall us per operation) / (client + server CPU us per operation).
    if "server_cpu_us_per_op" not in one:
        return "-"
    cost = one["cpu_us_per_op"] + one["server_cpu_us_per_op"]
    wall_us = one["wall_s"] * 1e6 / one["ops"]
    return f"{min(2.0, cores * wall_us / cost):.2f}x" if cost > 0 else "-"

def cores_used(r):
    # The cores the client and the server kept busy in the timed part: CPU per wall time.
    if "server_cpu_us_per_op" not in r:
        return "-"
    ops = r["ops"] * r["threads"]
    return f"{(r['cpu_us_per_op'] + r['server_cpu_us_per_op']) * ops / (r['wall_s'] * 1e6):.2f}"

def busy(r):
    # Medians of the runs: the machine's busy cores over the whole run (setup included).
    vs = [x["machine_busy_cores"] for x in r["runs"].values() if "machine_busy_cores" in x]
    return f"{statistics.median(vs):.2f}" if vs else "-"

def server_cpu(r):
    return f"{r['server_cpu_us_per_op']:,.2f}" if "server_cpu_us_per_op" in r else "-"

header = ["task", "client", "1 thread MB/s", "2 threads MB/s", "scaling", "1 thread CPU us/op",
          "2 threads CPU us/op", "1 thread server CPU us/op", "2 threads server CPU us/op",
          f"{cores}-core bound", "2 threads: cores used (client + server)",
          "2 threads: machine busy cores (all processes)"]
lines = []
for t in tasks:
    for c in ("oid", "libmongoc"):
        one, two = get.get(("canned", 1, t, c)), get.get(("canned", 2, t, c))
        if one and two:
            lines.append([t, c, f"{one['mbps']:,.2f}", f"{two['mbps']:,.2f}",
                          f"{two['mbps'] / one['mbps']:.2f}x", f"{one['cpu_us_per_op']:,.2f}",
                          f"{two['cpu_us_per_op']:,.2f}", server_cpu(one), server_cpu(two),
                          bound(one), cores_used(two), busy(two)])
table("two threads sharing one client (libmongoc: one pool) on the canned server; server CPU: "
      f"the canned server's; {cores}-core bound: the most a second thread could give, "
      f"min(2, {cores} x 1-thread wall us/op / (client + server CPU us/op))", header, lines)

header = ["task", "client", "direct CPU us/op", "monitored CPU us/op", "heartbeat 500 ms CPU us/op",
          "monitoring cost us/op (500 ms)"]
lines = []
for t in tasks:
    for c in ("oid", "libmongoc"):
        d, m, m5 = (get.get((s, 1, t, c)) for s in ("canned", "canned-monitor", "canned-monitor-500"))
        if d and m and m5:
            lines.append([t, c, f"{d['cpu_us_per_op']:.2f}", f"{m['cpu_us_per_op']:.2f}",
                          f"{m5['cpu_us_per_op']:.2f}",
                          f"{m5['cpu_us_per_op'] - d['cpu_us_per_op']:+.2f}"])
if lines:
    table("monitoring on the canned server: a single seed used directly (no monitor) against "
          "directConnection=false (a monitor thread; default heartbeat 10 s) and heartbeatFrequencyMS=500",
          header, lines)

header = ["task"] + [c for c in ("oid", "libmongoc") if c in clients]
lines = []
for t in tasks:
    rs = [get.get(("canned", 1, t, c)) for c in header[1:]]
    if any(r and "allocs_per_op" in r for r in rs):
        lines.append([t] + [f"{r['allocs_per_op']:.2f}" if r and "allocs_per_op" in r else "-"
                            for r in rs])
table("allocations per operation on the canned server (oid: every operator new; libmongoc: "
      "bson_malloc and friends)", header, lines)
EOF
