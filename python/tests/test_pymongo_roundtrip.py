"""Random documents of every common type, made and encoded by PyMongo's bson, through oid:
oid validates PyMongo's bytes, oid's canonical Extended JSON reads back to the same bytes in oid
and in PyMongo's json_util, and PyMongo's canonical Extended JSON reads to the same bytes in oid.
oid.bson.dumps writes the bytes bson.encode writes, byte for byte, and oid.bson.loads reads them
to what bson.decode gives (with tz_aware=True: oid's datetimes are aware). The seed is printed
with a failure (OID_TEST_SEED=<seed> repeats a run)."""

import collections
import datetime
import os
import random
import re

import pytest

import oid
import oid.bson

bson = pytest.importorskip("bson")
from bson import json_util  # noqa: E402
from bson.binary import Binary  # noqa: E402
from bson.code import Code  # noqa: E402
from bson.codec_options import CodecOptions  # noqa: E402
from bson.datetime_ms import DatetimeMS  # noqa: E402
from bson.dbref import DBRef  # noqa: E402
from bson.decimal128 import Decimal128  # noqa: E402
from bson.int64 import Int64  # noqa: E402
from bson.max_key import MaxKey  # noqa: E402
from bson.min_key import MinKey  # noqa: E402
from bson.regex import Regex  # noqa: E402
from bson.timestamp import Timestamp  # noqa: E402

UTC = datetime.timezone.utc
SEED = int(os.environ.get("OID_TEST_SEED", random.SystemRandom().randrange(1 << 32)))
AWARE = CodecOptions(tz_aware=True)
CANONICAL = json_util.JSONOptions(json_mode=json_util.JSONMode.CANONICAL, tz_aware=True,
                                  tzinfo=UTC)


def random_string(rng):
    pool = "abc xyz\"\\/\n\t\u0001\u00e9\u20ac\U0001f600\u0000"
    return "".join(rng.choice(pool) for _ in range(rng.randrange(8)))


def random_double(rng):
    return rng.choice([
        0.0, -0.0, 1.0, -1.5, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, float("inf"),
        float("-inf"), rng.uniform(-1e6, 1e6), rng.random() * 10 ** rng.randrange(-300, 300),
    ])


# Python values PyMongo encodes that are not what its decoder gives back: dumps must write them
# as bson.encode does, and loads read the bytes as bson.decode does.
PYTHON_KINDS = ["int", "bigint", "bytes", "naive", "offset", "pattern", "scope", "dbref", "tuple",
                "ordered", "datetime_ms"]


def random_python_value(rng, kind, depth):
    if kind == "int":
        return rng.choice([0, -1, (1 << 31) - 1, -(1 << 31), 1 << 31, -(1 << 31) - 1])
    if kind == "bigint":
        return rng.randrange(-(1 << 63), 1 << 63)
    if kind == "bytes":
        return rng.randbytes(rng.randrange(10))
    if kind == "naive":  # microseconds, floored to milliseconds by both
        return datetime.datetime(1, 1, 1) + datetime.timedelta(
            microseconds=rng.randrange(315537897600000000))
    if kind == "offset":
        tz = datetime.timezone(datetime.timedelta(minutes=rng.randrange(-1439, 1440)))
        return datetime.datetime(1000, 1, 2, tzinfo=tz) + datetime.timedelta(
            microseconds=rng.randrange(10 ** 17))
    if kind == "pattern":
        return re.compile(random_string(rng).replace("\u0000", "").replace("\\", ""),
                          rng.choice([0, re.I, re.M | re.S, re.X | re.I]))
    if kind == "scope":
        return Code(random_string(rng), random_document(rng, depth + 1) if depth < 3 else {})
    if kind == "dbref":
        return DBRef("coll", random_value(rng, 3), rng.choice([None, "db"]), n=1)
    if kind == "tuple":
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    if kind == "ordered":
        return collections.OrderedDict(random_document(rng, depth + 1))
    return DatetimeMS(rng.randrange(-(1 << 40), 1 << 40))


def random_value(rng, depth, python=False):
    kinds = ["int32", "int64", "double", "str", "bool", "none", "datetime", "oid", "binary",
             "decimal", "timestamp", "regex", "code", "minkey", "maxkey"]
    if depth < 3:
        kinds += ["doc", "list"]
    if python:
        kinds += PYTHON_KINDS
    kind = rng.choice(kinds)
    if kind in PYTHON_KINDS:
        return random_python_value(rng, kind, depth)
    if kind == "int32":
        return rng.randrange(-(1 << 31), 1 << 31)
    if kind == "int64":
        return Int64(rng.randrange(-(1 << 63), 1 << 63))
    if kind == "double":
        return random_double(rng)
    if kind == "str":
        return random_string(rng)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "datetime":  # milliseconds: what BSON keeps
        ms = rng.randrange(-62135596800000, 253402300800000)
        return datetime.datetime(1970, 1, 1, tzinfo=UTC) + datetime.timedelta(milliseconds=ms)
    if kind == "oid":
        return bson.ObjectId(rng.randbytes(12)) if rng.random() < 0.5 else oid.ObjectId(rng.randbytes(12))
    if kind == "binary":
        return Binary(rng.randbytes(rng.randrange(20)), rng.choice([0, 1, 5, 0x80]))
    if kind == "decimal":
        return Decimal128(rng.choice([
            "0", "-0", "1.5", "-1E+10", "NaN", "Infinity", "-Infinity", "1E-6176",
            f"{rng.randrange(10 ** 20)}E{rng.randrange(-100, 100)}"]))
    if kind == "timestamp":
        return Timestamp(rng.randrange(1 << 32), rng.randrange(1 << 32))
    if kind == "regex":
        return Regex(random_string(rng).replace("\u0000", ""), "".join(sorted(rng.sample("ilmsux", rng.randrange(4)))))
    if kind == "code":
        return Code(random_string(rng))
    if kind == "minkey":
        return MinKey()
    if kind == "maxkey":
        return MaxKey()
    if kind == "doc":
        return random_document(rng, depth + 1, python)
    return [random_value(rng, depth + 1, python) for _ in range(rng.randrange(4))]


def random_document(rng, depth=0, python=False):
    doc = {}
    for _ in range(rng.randrange(6)):
        doc[random_string(rng).replace("\u0000", "") or "k"] = random_value(rng, depth, python)
    if python and depth == 0 and rng.random() < 0.3:  # anywhere: both write it first
        doc["_id"] = random_value(rng, 2, python)
    return doc


def test_random_documents_round_trip_with_pymongo():
    rng = random.Random(SEED)
    for n in range(500):
        doc = random_document(rng)
        data = bson.encode(doc)
        context = f"seed {SEED}, document {n}: {doc!r}"
        assert oid.bson.validate(data) is None, context
        canonical = oid.bson.to_json(data, "canonical")
        assert oid.bson.from_json(canonical) == data, context
        assert bson.encode(json_util.loads(canonical, json_options=CANONICAL)) == data, context
        theirs = json_util.dumps(doc, json_options=CANONICAL)
        assert oid.bson.from_json(theirs) == data, context + f"\nPyMongo wrote {theirs}"
        # Relaxed text drops int64 and double types where values fit, so it cannot give the
        # same bytes back; it must be stable: read and written again, the same text.
        relaxed = oid.bson.to_json(data, "relaxed")
        assert oid.bson.to_json(oid.bson.from_json(relaxed), "relaxed") == relaxed, context


def test_dumps_and_loads_match_pymongo_byte_for_byte():
    rng = random.Random(SEED)
    for n in range(1000):
        doc = random_document(rng, python=n % 2 == 1)
        context = f"seed {SEED}, document {n}: {doc!r}"
        data = bson.encode(doc)
        assert oid.bson.dumps(doc) == data, context
        loaded = oid.bson.loads(data)
        assert loaded == bson.decode(data, codec_options=AWARE), context
        assert oid.bson.dumps(loaded) == data, context  # what loads makes, dumps writes back
        assert bson.encode(loaded) == data, context  # and so does PyMongo (oid.ObjectId too)


def test_binary_vectors_are_pymongo_binaries():
    """A binary vector (subtype 9) is a bson.Binary of subtype 9 both ways: PyMongo's
    Binary.from_vector makes one and as_vector reads it; oid writes and reads its bytes as they are,
    and its Extended JSON is an ordinary $binary with subType "09"."""
    from bson.binary import BinaryVectorDtype
    vectors = {
        "f": Binary.from_vector([127.0, -7.5], BinaryVectorDtype.FLOAT32),
        "i": Binary.from_vector([-128, 7], BinaryVectorDtype.INT8),
        "p": Binary.from_vector([127, 8], BinaryVectorDtype.PACKED_BIT, padding=3),
    }
    data = oid.bson.dumps(vectors)
    assert data == bson.encode(vectors)
    back = oid.bson.loads(data)
    for key, value in vectors.items():
        assert type(back[key]) is Binary and back[key].subtype == 9
        assert back[key].as_vector() == value.as_vector()
    assert oid.bson.to_json(oid.bson.dumps({"f": vectors["f"]}), "canonical") == (
        '{"f":{"$binary":{"base64":"JwAAAP5CAADwwA==","subType":"09"}}}')
    assert oid.bson.from_json(json_util.dumps(vectors, json_options=CANONICAL)) == data
