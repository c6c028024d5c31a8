"""MongoDB's BSON corpus through the Python API, as tests/bson_corpus_test.cpp runs it in C++:

  valid:        validate(cB); to_json(cB, canonical) = cEJ; to_json(cB, relaxed) = rEJ;
                from_json(cEJ) = cB unless lossy; dB validates and writes cEJ and rEJ;
                from_json(dEJ) = cB unless lossy; to_json(from_json(rEJ), relaxed) = rEJ;
                converted_bson writes converted_extjson and reads back from it.
  decodeErrors: validate() raises oid.Error.
  parseErrors:  from_json() raises oid.Error (decimal128 files: as the value of $numberDecimal).

The corpus comes from scripts/spec-data.sh (build/spec-data/bson-corpus, or OID_SPEC_DATA_DIR);
without it the tests are skipped, and fail under CI=true.
"""

import json
import os
import pathlib

import pytest

import oid
import oid.bson

from jsoncmp import parse

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("OID_SPEC_DATA_DIR", ROOT / "build" / "spec-data")) / "bson-corpus"
FILES = sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []


def test_corpus_is_there():
    if not FILES:
        message = f"BSON corpus not found at {CORPUS} (scripts/spec-data.sh fetches it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    assert len(FILES) >= 30


def raises_oid_error(call, *args):
    try:
        call(*args)
    except oid.Error as e:
        return isinstance(e.code, str) and isinstance(e.offset, int)
    return False


def check_valid(case, problems):
    cb = bytes.fromhex(case["canonical_bson"])
    cej = case["canonical_extjson"]
    rej = case.get("relaxed_extjson")
    lossy = case.get("lossy", False)

    def expect_json(got, want, what):
        if parse(got) != parse(want):
            problems.append(f"{what}: {got} != {want}")

    def expect(ok, what):
        if not ok:
            problems.append(what)

    oid.bson.validate(cb)
    expect_json(oid.bson.to_json(cb, "canonical"), cej, "to_json(canonical_bson, canonical)")
    if rej is not None:
        expect_json(oid.bson.to_json(cb, "relaxed"), rej, "to_json(canonical_bson, relaxed)")
    if not lossy:
        expect(oid.bson.from_json(cej) == cb, "from_json(canonical_extjson) != canonical_bson")
    if "degenerate_bson" in case:
        db = bytes.fromhex(case["degenerate_bson"])
        expect_json(oid.bson.to_json(db, "canonical"), cej, "to_json(degenerate_bson, canonical)")
        if rej is not None:
            expect_json(oid.bson.to_json(db, "relaxed"), rej, "to_json(degenerate_bson, relaxed)")
    if "degenerate_extjson" in case and not lossy:
        expect(oid.bson.from_json(case["degenerate_extjson"]) == cb,
               "from_json(degenerate_extjson) != canonical_bson")
    if rej is not None:
        expect_json(oid.bson.to_json(oid.bson.from_json(rej), "relaxed"), rej,
                    "to_json(from_json(relaxed_extjson), relaxed)")
    if "converted_bson" in case:
        conv = bytes.fromhex(case["converted_bson"])
        expect_json(oid.bson.to_json(conv, "canonical"), case["converted_extjson"],
                    "to_json(converted_bson, canonical)")
        expect(oid.bson.from_json(case["converted_extjson"]) == conv,
               "from_json(converted_extjson) != converted_bson")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_corpus_file(path):
    suite = json.loads(path.read_text(encoding="utf-8"))
    decimal = suite.get("bson_type") == "0x13"
    run, failures = 0, []
    for case in suite.get("valid", []):
        problems = []
        try:
            check_valid(case, problems)
        except oid.Error as e:
            problems.append(f"raised {e.code} at {e.offset}: {e}")
        run += 1
        failures += [f"valid {case['description']!r}: {p}" for p in problems]
    for case in suite.get("decodeErrors", []):
        run += 1
        if not raises_oid_error(oid.bson.validate, bytes.fromhex(case["bson"])):
            failures.append(f"decodeErrors {case['description']!r}: validate() accepts it")
    for case in suite.get("parseErrors", []):
        run += 1
        text = case["string"]
        if decimal:
            text = json.dumps({"d": {"$numberDecimal": text}})
        if not raises_oid_error(oid.bson.from_json, text):
            failures.append(f"parseErrors {case['description']!r}: from_json() accepts {text}")
    assert run > 0, f"{path.name} has no cases"
    assert failures == [], "\n".join(failures)
