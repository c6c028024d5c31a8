#!/usr/bin/env python3
"""BSON interoperability with a real peer: PyMongo's bson (Debian's python3-bson).

Python generates a few thousand random documents (every type Python can encode, nesting, unicode
keys and strings), writes them as a BSON stream and as canonical Extended JSON
(bson.json_util.dumps with CANONICAL_JSON_OPTIONS, one document a line). Then the built `oid`:

  1. `oid bson dump --mode canonical` of the BSON must give, document by document, the same JSON
     as Python (compared as parsed JSON: key order and duplicates kept; $numberDouble strings
     compared as the doubles they denote, since the corpus calls double text unportable);
  2. `oid bson from-json` of Python's JSON must give exactly Python's bytes.

Exit status 0: all equal; 1: a difference (the first few are printed); 77: skipped because
`import bson` failed (not in CI; with CI=true that is a failure).

BSON types Python cannot produce (undefined, DBPointer, symbol: it reads them as None, DBRef
and str) are covered by the BSON corpus instead.
"""

import argparse
import base64
import datetime
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile


def import_bson():
    """Imports bson; when this interpreter lacks it but Debian's does, re-runs under Debian's."""
    try:
        import bson  # noqa: F401
        import bson.json_util  # noqa: F401  (needs python3-pymongo for pymongo.errors)
        return True
    except ImportError as e:
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system) \
                and not os.environ.get("OID_INTEROP_REEXEC"):
            os.environ["OID_INTEROP_REEXEC"] = "1"
            os.execv(system, [system] + sys.argv)
        print(f"python_bson_interop: cannot import bson ({e}); install python3-bson and "
              "python3-pymongo (scripts/install-deps.sh)", file=sys.stderr)
        return False


if not import_bson():
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

import bson  # noqa: E402
from bson import SON, Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex  # noqa: E402
from bson import Timestamp  # noqa: E402
from bson import json_util  # noqa: E402

# ---- random documents ------------------------------------------------------------------------


def random_text(rng, max_len, allow_nul):
    """A string of random code points: ASCII, Latin, CJK, astral (emoji); no lone surrogates."""
    out = []
    for _ in range(rng.randrange(max_len + 1)):
        r = rng.random()
        if r < 0.55:
            c = rng.randrange(0x20, 0x7F)
        elif r < 0.65:
            c = rng.randrange(0x00, 0x20)  # control characters, escaped in JSON
            if c == 0 and not allow_nul:
                c = 0x41
        elif r < 0.8:
            c = rng.randrange(0xA0, 0x800)
        elif r < 0.92:
            c = rng.randrange(0x800, 0xD800)
        else:
            c = rng.randrange(0x10000, 0x110000)
        out.append(chr(c))
    return "".join(out)


def random_key(rng):
    # Keys hold no NUL (BSON keys are C strings) and do not start with "$": Extended JSON cannot
    # tell such keys from type wrappers (the specification's "Restrictions and limitations").
    k = random_text(rng, 12, allow_nul=False)
    return "_" + k if k.startswith("$") else k


def random_double(rng):
    r = rng.random()
    if r < 0.05:
        return rng.choice([float("nan"), float("inf"), float("-inf"), -0.0, 0.0])
    if r < 0.3:
        return float(rng.randrange(-10**6, 10**6))
    if r < 0.6:
        return rng.uniform(-1e6, 1e6)
    # Any bit pattern that is a finite double: exercises shortest round-trip text.
    while True:
        d = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(d):
            return d


def random_decimal(rng):
    r = rng.random()
    if r < 0.1:
        return Decimal128(rng.choice(["NaN", "Infinity", "-Infinity", "0", "-0", "0E-6176",
                                      "9.999999999999999999999999999999999E+6144"]))
    digits = str(rng.randrange(10 ** rng.randrange(1, 35)))
    sign = "-" if rng.random() < 0.3 else ""
    return Decimal128(f"{sign}{digits}E{rng.randrange(-200, 200)}")


def random_datetime(rng):
    # Milliseconds since the epoch across 0001-9999 (Python's datetime range).
    ms = rng.randrange(-62135596800000, 253402300799999)
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)


def random_value(rng, depth):
    kinds = ["double", "string", "binary", "oid", "bool", "date", "null", "regex", "code",
             "int32", "int64", "timestamp", "decimal", "minkey", "maxkey", "uuid"]
    if depth < 6:
        kinds += ["document", "array", "code_w_scope"] * 2
    kind = rng.choice(kinds)
    if kind == "double":
        return random_double(rng)
    if kind == "string":
        return random_text(rng, 40, allow_nul=True)
    if kind == "binary":
        # Not 0xFF: Debian's PyMongo 3.11 C extension fails to encode that subtype (SystemError).
        subtype = rng.choice([0, 1, 2, 3, 5, 6, 7, 8, 0x80, 0x9A, 0xFE])
        data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(40)))
        return Binary(data, subtype) if subtype != 0 else data
    if kind == "uuid":
        return Binary(bytes(rng.getrandbits(8) for _ in range(16)), 4)
    if kind == "oid":
        return ObjectId(bytes(rng.getrandbits(8) for _ in range(12)))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "date":
        return random_datetime(rng)
    if kind == "null":
        return None
    if kind == "regex":
        flags = "".join(f for f in "ilmsux" if rng.random() < 0.3)
        return Regex(random_text(rng, 10, allow_nul=False), flags)
    if kind == "code":
        return Code(random_text(rng, 30, allow_nul=True))
    if kind == "code_w_scope":
        return Code(random_text(rng, 30, allow_nul=True), random_document(rng, depth + 1, 4))
    if kind == "int32":
        return rng.randrange(-2**31, 2**31)
    if kind == "int64":
        return Int64(rng.randrange(-2**63, 2**63))
    if kind == "timestamp":
        return Timestamp(rng.randrange(2**32), rng.randrange(2**32))
    if kind == "decimal":
        return random_decimal(rng)
    if kind == "minkey":
        return MinKey()
    if kind == "maxkey":
        return MaxKey()
    if kind == "document":
        return random_document(rng, depth + 1, 6)
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(6))]


def random_document(rng, depth, width):
    return SON((random_key(rng), random_value(rng, depth)) for _ in range(rng.randrange(width + 1)))


# ---- comparison ------------------------------------------------------------------------------


def pairs(items):
    return ("object", items)  # keep order and duplicate keys


def normalise(v):
    """Parsed JSON with $numberDouble strings turned into comparable doubles."""
    if isinstance(v, tuple) and v[0] == "object":
        items = v[1]
        if len(items) == 1 and items[0][0] == "$numberDouble" and isinstance(items[0][1], str):
            d = float(items[0][1])
            return ("double", "nan" if math.isnan(d) else struct.pack("<d", d))
        return ("object", [(k, normalise(x)) for k, x in items])
    if isinstance(v, list):
        return [normalise(x) for x in v]
    return v


def parse(text):
    return normalise(json.loads(text, object_pairs_hook=pairs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oid", required=True, help="the oid binary")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    docs = [random_document(rng, 0, 12) for _ in range(args.count)]
    options = json_util.CANONICAL_JSON_OPTIONS
    bson_bytes = b"".join(bson.BSON.encode(d) for d in docs)
    json_lines = [json_util.dumps(d, json_options=options) for d in docs]

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        bson_path = os.path.join(tmp, "docs.bson")
        json_path = os.path.join(tmp, "docs.json")
        with open(bson_path, "wb") as f:
            f.write(bson_bytes)
        with open(json_path, "w", encoding="ascii") as f:
            f.write("\n".join(json_lines) + "\n")

        dump = subprocess.run([args.oid, "bson", "dump", "--mode", "canonical", bson_path],
                              capture_output=True)
        if dump.returncode != 0:
            print(f"oid bson dump failed ({dump.returncode}): {dump.stderr.decode()}")
            return 1
        # split("\n"), not splitlines(): strings may hold U+2028, U+0085 and other characters
        # that splitlines() takes for line ends (JSON escapes only the ASCII control characters).
        got_lines = dump.stdout.decode("utf-8").split("\n")
        if got_lines and got_lines[-1] == "":
            got_lines.pop()
        if len(got_lines) != len(docs):
            print(f"oid bson dump printed {len(got_lines)} documents, expected {len(docs)}")
            return 1
        for i, (got, want) in enumerate(zip(got_lines, json_lines)):
            if parse(got) != parse(want):
                failures += 1
                if failures <= 3:
                    print(f"document {i + 1}: oid and Python disagree\n  oid:    {got[:2000]}\n"
                          f"  python: {want[:2000]}")

        back = subprocess.run([args.oid, "bson", "from-json", json_path], capture_output=True)
        if back.returncode != 0:
            print(f"oid bson from-json failed ({back.returncode}): {back.stderr.decode()[:2000]}")
            return 1
        if back.stdout != bson_bytes:
            # Find the first document that differs.
            pos = 0
            for i, d in enumerate(docs):
                want = bson.BSON.encode(d)
                got = back.stdout[pos:pos + len(want)]
                if got != want:
                    print(f"from-json: document {i + 1} differs\n  oid:    {got.hex()[:400]}\n"
                          f"  python: {want.hex()[:400]}\n  json:   {json_lines[i][:400]}")
                    break
                pos += len(want)
            failures += 1

    kinds = len(bson_bytes)
    print(f"python_bson_interop: {len(docs)} documents ({kinds} bytes of BSON, seed {args.seed}):"
          f" {'all equal' if failures == 0 else f'{failures} differences'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
