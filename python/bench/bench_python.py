#!/usr/bin/env python3
"""oid's Python package against PyMongo's bson (json_util, encode/decode, ObjectId) and
python-bsonjs (libbson) on MongoDB's DriverBench documents (flat, deep, full), in one process:
Extended JSON to BSON, BSON to Extended JSON, Python objects to BSON and back, and ObjectId
generation. scripts/bench-python.sh runs it from a venv under build/ with pinned versions.

Each cell is the best of --repeats timings of one loop of calls lasting about --seconds, in
microseconds per call (per id for ids); ratios are the other library's time over oid's. Prints
one Markdown table, with the targets of issue 31 (Extended JSON both ways at least 5x
python-bsonjs and 50x json_util; ids at least 5x bson.ObjectId()) and whether each is met.

  bench_python.py [--data DIR] [--seconds S] [--repeats R] [--json FILE]
"""
import argparse
import json
import os
import platform
import sys
import time

import bson
from bson import json_util

import oid
import oid.bson

try:
    import bsonjs
except ImportError:  # the table says so
    bsonjs = None

RELAXED = json_util.JSONOptions(json_mode=json_util.JSONMode.RELAXED)
CANONICAL = json_util.JSONOptions(json_mode=json_util.JSONMode.CANONICAL)


def per_call(fn, seconds, repeats):
    """Microseconds per call of fn(): the best of `repeats` loops of about `seconds` each."""
    n = 1
    while True:  # calls per loop: enough for the loop to last about `seconds`
        start = time.perf_counter()
        for _ in range(n):
            fn()
        took = time.perf_counter() - start
        if took >= seconds / 4:
            break
        n *= 4
    n = max(1, int(n * seconds / took))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def rows(data_dir):
    """(row, {library: fn}, {library: target ratio}) for each measurement, oid first."""
    for name in ("flat", "deep", "full"):
        with open(os.path.join(data_dir, f"{name}_bson.json"), encoding="utf-8") as f:
            text = f.read()
        raw = oid.bson.from_json(text)
        # The same document each way (bson.encode moves _id first; the readers keep the text's
        # order, so the bytes may differ in order only).
        assert bson.decode(raw) == json_util.loads(text), name
        if bsonjs is not None:
            assert bsonjs.loads(text) == raw, name
        doc = bson.decode(raw)
        assert oid.bson.dumps(doc) == bson.encode(doc), name
        json_targets = {"python-bsonjs": 5, "json_util": 50}
        yield (f"{name}: Extended JSON to BSON", {
            "oid": lambda: oid.bson.from_json(text),
            "python-bsonjs": bsonjs and (lambda: bsonjs.loads(text)),
            "json_util": lambda: bson.encode(json_util.loads(text)),
        }, json_targets)
        yield (f"{name}: BSON to Extended JSON (relaxed)", {
            "oid": lambda: oid.bson.to_json(raw),
            "python-bsonjs": bsonjs and (lambda: bsonjs.dumps(raw)),
            "json_util": lambda: json_util.dumps(bson.decode(raw), json_options=RELAXED),
        }, json_targets)
        yield (f"{name}: BSON to Extended JSON (canonical)", {
            "oid": lambda: oid.bson.to_json(raw, "canonical"),
            "python-bsonjs": bsonjs and (lambda: bsonjs.dumps(raw, mode=bsonjs.CANONICAL)),
            "json_util": lambda: json_util.dumps(bson.decode(raw), json_options=CANONICAL),
        }, json_targets)
        yield (f"{name}: Python objects to BSON (dumps / bson.encode)", {
            "oid": lambda: oid.bson.dumps(doc),
            "bson": lambda: bson.encode(doc),
        }, {})
        yield (f"{name}: BSON to Python objects (loads / bson.decode)", {
            "oid": lambda: oid.bson.loads(raw),
            "bson": lambda: bson.decode(raw),
        }, {})
    yield ("ObjectId: one new id (oid.generate / bson.ObjectId())", {
        "oid": oid.generate,
        "bson": bson.ObjectId,
    }, {"bson": 5})
    yield ("ObjectId: 1,000 new ids per call, per id (generate_batch)", {
        "oid": lambda: oid.generate_batch(1000),
        "bson": lambda: [bson.ObjectId() for _ in range(1000)],
    }, {})


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=os.path.join(
        here, "../../build/spec-data/driverbench/extended_bson"))
    p.add_argument("--seconds", type=float, default=0.3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default="")
    args = p.parse_args()

    versions = (f"Python {platform.python_version()}, oid {_version('oid')}, "
                f"pymongo {_version('pymongo')} (C extensions: {bson.has_c()}), "
                f"python-bsonjs {_version('python-bsonjs') if bsonjs else 'not installed'}")
    print(versions, file=sys.stderr)
    results = []
    print("| task | oid µs | other µs | other / oid | target | met |")
    print("|---|---|---|---|---|---|")
    for row, fns, targets in rows(args.data):
        per_id = 1000 if "1,000" in row else 1
        ours = per_call(fns["oid"], args.seconds, args.repeats) / per_id
        for lib, fn in fns.items():
            if lib == "oid":
                continue
            if fn is None:
                print(f"| {row} | {ours:.3g} | {lib}: not installed | | | |")
                continue
            theirs = per_call(fn, args.seconds, args.repeats) / per_id
            ratio = theirs / ours
            target = targets.get(lib)
            met = "" if target is None else ("yes" if ratio >= target else "**no**")
            print(f"| {row} | {ours:.3g} | {lib}: {theirs:.3g} | {ratio:.1f}x | "
                  f"{'' if target is None else f'{target}x'} | {met} |", flush=True)
            results.append({"task": row, "library": lib, "oid_us": ours, "other_us": theirs,
                            "ratio": ratio, "target": target})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": versions, "rows": results}, f, indent=1)


def _version(dist):
    from importlib.metadata import version
    return version(dist)


if __name__ == "__main__":
    main()
