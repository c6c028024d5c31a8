#!/usr/bin/env bash
# oid's Python package against PyMongo's bson (json_util, encode/decode, ObjectId) and
# python-bsonjs on MongoDB's DriverBench documents (flat, deep, full), in one run: Extended JSON
# to BSON and back, Python objects to BSON and back, and ObjectId generation. Prints one Markdown
# table with the ratios and the targets of issue 31 (python/bench/bench_python.py says how it
# times).
#
#   scripts/bench-python.sh [--seconds S] [--repeats R] [--json FILE] [--data DIR]
#
# It makes (once) a venv in build/bench-python-venv with the pinned PyMongo and python-bsonjs,
# installs ./python into it (a Release build, as the package always is) and runs the benchmark.
# The documents are the DriverBench data that scripts/spec-data.sh fetches (or --data DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

name=bench-python
seconds=0.3
repeats=3
json_out=""
data_dir=""
venv=build/bench-python-venv
. scripts/lib/bench-common.sh
declare -A bench_options=([--seconds]=seconds [--repeats]=repeats [--json]=json_out
  [--data]=data_dir)
bench_parse_options "$@"
[ -n "$data_dir" ] || data_dir=$(scripts/spec-data.sh)/driverbench/extended_bson

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# Pinned, as python/pyproject.toml pins the test dependencies.
"$venv/bin/pip" install -q pymongo==4.20.1 python-bsonjs==0.7.0
"$venv/bin/pip" install -q ./python

args=(--data "$data_dir" --seconds "$seconds" --repeats "$repeats")
[ -z "$json_out" ] || args+=(--json "$json_out")
"$venv/bin/python" python/bench/bench_python.py "${args[@]}"
