#!/usr/bin/env python3
"""DriverBench's single- and multi-document tasks with PyMongo 4 (C extensions), the Python peer
of bench/client_driverbench.cpp. Same tasks, options and output as that program (see its top
comment); scripts/bench-client.sh runs it from a venv under build/.

insert_one and insert_many add an `_id` to the dicts they are given, so each iteration inserts
fresh copies of the document, made in the before-task step (untimed).

  pymongo_driverbench.py --uri URI [--task NAME[,NAME...]|all] [--count N] [--large-count L]
                         [--iterations K] [--warmup W] [--threads T] [--data DIR] [--json]
"""
import argparse
import json
import os
import resource
import statistics
import sys
import threading
import time

import bson
import pymongo

HELLO_BYTES, TWEET_BYTES, SMALL_BYTES, LARGE_BYTES = 13, 1622, 275, 2_731_089


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def sys_seconds():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", default=os.environ.get("MONGODB_URI"))
    p.add_argument("--task", default="all")
    p.add_argument("--data", default=os.path.join(
        here, "../build/spec-data/driverbench/single_and_multi_document"))
    p.add_argument("--count", type=int, default=10_000)
    p.add_argument("--large-count", type=int, default=10)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if not a.uri:
        p.error("--uri (or MONGODB_URI) is needed")
    if not (pymongo.has_c() and bson.has_c()):
        sys.exit("pymongo_driverbench: PyMongo's C extensions are missing")

    def load(name):
        with open(os.path.join(a.data, name), encoding="utf-8") as f:
            return json.load(f)

    tweet, small, large = load("tweet.json"), load("small_doc.json"), load("large_doc.json")
    client = pymongo.MongoClient(a.uri)
    db = client["perftest"]
    coll = db["corpus"]
    n, l = a.count, a.large_count
    copies = {}  # per thread: the documents the next insert iteration uses

    def drop_database():
        client.drop_database("perftest")

    def recreate(doc, k):
        coll.drop()
        db.create_collection("corpus")
        for t in range(a.threads):
            copies[t] = [dict(doc) for _ in range(k)]

    def load_tweets(numbered):
        drop_database()
        docs = [({"_id": i + 1, **tweet} if numbered else dict(tweet)) for i in range(n)]
        if len(coll.insert_many(docs).inserted_ids) != n:
            sys.exit("pymongo_driverbench: setup: tweets not inserted")

    def run_command(t):
        for _ in range(n):
            db.command("hello", True)
        return n

    def find_one(t):
        found = 0
        for i in range(1, n + 1):
            if coll.find_one({"_id": i}) is not None:
                found += 1
        return found

    def insert_one(t):
        acked = 0
        for d in copies[t]:
            coll.insert_one(d)
            acked += 1
        return acked

    def insert_many(t):
        return len(coll.insert_many(copies[t], ordered=True).inserted_ids)

    def find_many(t):
        read = 0
        for _ in coll.find({}):
            read += 1
        return read

    def nothing():
        pass

    tasks = [
        ("run_command", HELLO_BYTES, n, nothing, nothing, run_command),
        ("find_one", TWEET_BYTES, n, lambda: load_tweets(True), nothing, find_one),
        ("insert_one_small", SMALL_BYTES, n, drop_database, lambda: recreate(small, n), insert_one),
        ("insert_one_large", LARGE_BYTES, l, drop_database, lambda: recreate(large, l), insert_one),
        ("find_many", TWEET_BYTES, n, lambda: load_tweets(False), nothing, find_many),
        ("insert_many_small", SMALL_BYTES, n, drop_database, lambda: recreate(small, n), insert_many),
        ("insert_many_large", LARGE_BYTES, l, drop_database, lambda: recreate(large, l), insert_many),
    ]
    names = [t[0] for t in tasks]
    wanted = names if a.task == "all" else a.task.split(",")
    if not wanted or any(w not in names for w in wanted):
        sys.exit(f"pymongo_driverbench: unknown task in {a.task!r}")

    for name, op_bytes, ops, setup, before, run in tasks:
        if name not in wanted:
            continue
        setup()
        walls, cpus, syss, docs = [], [], [], 0
        for i in range(a.warmup + a.iterations):
            before()
            results = [0] * a.threads
            cpu0, sys0, t0 = cpu_seconds(), sys_seconds(), time.perf_counter()
            if a.threads == 1:
                results[0] = run(0)
            else:
                def work(k):
                    results[k] = run(k)
                pool = [threading.Thread(target=work, args=(k,)) for k in range(a.threads)]
                for th in pool:
                    th.start()
                for th in pool:
                    th.join()
            t1, cpu1, sys1 = time.perf_counter(), cpu_seconds(), sys_seconds()
            docs = sum(results)
            if i >= a.warmup:
                walls.append(t1 - t0)
                cpus.append(cpu1 - cpu0)
                syss.append(sys1 - sys0)
        wall = statistics.median(walls)
        total_ops = ops * a.threads
        mb = op_bytes * total_ops / 1e6
        cpu_us = statistics.median(cpus) / total_ops * 1e6
        # The median iteration's CPU time, split as all the timed iterations' time splits (the
        # kernel counts user and system time by its clock's ticks: see client_driverbench.cpp).
        sys_us = cpu_us * sum(syss) / sum(cpus) if sum(cpus) > 0 else 0.0
        if a.json:
            print(json.dumps({"client": "pymongo", "task": name, "threads": a.threads, "ops": ops,
                              "iterations": a.iterations, "mb": mb, "wall_s": wall,
                              "mbps": mb / wall, "cpu_us_per_op": cpu_us, "sys_us_per_op": sys_us,
                              "docs": docs}),
                  flush=True)
        else:
            print(f"{name:<18} {mb / wall:8.2f} MB/s  wall {wall:9.4f} s  cpu {cpu_us:9.2f} us/op  "
                  f"({ops} ops x {a.threads} threads, median of {a.iterations}, {docs} docs)",
                  flush=True)
    client.close()


if __name__ == "__main__":
    main()
