"""oid.bson.dumps and loads without PyMongo's random documents (test_pymongo_roundtrip.py has
those): the plain Python types, error types, codes, offsets and paths, the depth and size limits,
objects that change while they are read, damaged input, and loads without PyMongo installed."""

import datetime
import random
import subprocess
import sys

import pytest

import oid
import oid.bson

UTC = datetime.timezone.utc


def test_plain_types_round_trip():
    doc = {"s": "é\x00", "i": -5, "big": 1 << 40, "f": 0.5, "t": True, "n": None, "b": b"\x00\xff",
           "l": [1, [2, {"x": []}]], "d": {}, "id": oid.ObjectId("4df2dcec2cdcd20936a8b817"),
           "at": datetime.datetime(2012, 12, 24, 12, 15, 30, 501000, tzinfo=UTC)}
    data = oid.bson.dumps(doc)
    assert oid.bson.validate(data) is None
    assert oid.bson.loads(data) == doc
    assert type(oid.bson.loads(data)["id"]) is oid.ObjectId
    assert oid.bson.to_json(oid.bson.dumps({"n": 1, "x": 1 << 31, "b": b"\x01"}), "canonical") == (
        '{"n":{"$numberInt":"1"},"x":{"$numberLong":"2147483648"},'
        '"b":{"$binary":{"base64":"AQ==","subType":"00"}}}')
    # A tuple is an array; _id goes first at the top level only.
    assert oid.bson.loads(oid.bson.dumps({"a": (1, 2), "_id": 3, "s": {"b": 1, "_id": 2}})) == {
        "_id": 3, "a": [1, 2], "s": {"b": 1, "_id": 2}}
    assert list(oid.bson.loads(oid.bson.dumps({"a": 1, "_id": 2}))) == ["_id", "a"]
    assert list(oid.bson.loads(oid.bson.dumps({"s": {"a": 1, "_id": 2}}))["s"]) == ["a", "_id"]


def test_datetimes():
    naive = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)  # floored: -1 ms
    data = oid.bson.dumps({"t": naive})
    assert data[-9:-1] == (-1).to_bytes(8, "little", signed=True)
    assert oid.bson.loads(data)["t"] == datetime.datetime(1969, 12, 31, 23, 59, 59, 999000,
                                                         tzinfo=UTC)
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    assert oid.bson.dumps({"t": datetime.datetime(1970, 1, 1, 2, tzinfo=plus2)}) == \
        oid.bson.dumps({"t": datetime.datetime(1970, 1, 1)})
    for ms in (-62135596800000, 253402300799999):  # datetime.min and max, to the millisecond
        got = oid.bson.loads(oid.bson.from_json('{"t": {"$date": {"$numberLong": "%d"}}}' % ms))
        assert oid.bson.dumps(got) == oid.bson.from_json(
            '{"t": {"$date": {"$numberLong": "%d"}}}' % ms)
    too_late = oid.bson.from_json('{"a": 1, "t": {"$date": {"$numberLong": "253402300800000"}}}')
    with pytest.raises(oid.Error) as info:
        oid.bson.loads(too_late)
    assert (info.value.code, info.value.offset) == ("time_out_of_range", 11)


@pytest.mark.parametrize(
    "doc, kind, code, where",
    [
        ({"a\x00b": 1}, oid.Error, "invalid_key", "['a\\x00b']"),
        ({"x": [{1: 2}]}, TypeError, None, "['x'][0]"),
        ({"x": {"y": object()}}, TypeError, None, "['x']['y']"),
        ({"x": [0, 1 << 63]}, OverflowError, None, "['x'][1]"),
        ({"x": -(1 << 63) - 1}, OverflowError, None, "['x']"),
        ({"s": "\ud800"}, oid.Error, "invalid_utf8", "['s']"),
        ({"d": datetime.date(2020, 1, 1)}, TypeError, None, "['d']"),
        ({"r": __import__("re").compile("a\x00")}, oid.Error, "invalid_value", "['r']"),
    ],
)
def test_dumps_errors_name_the_path(doc, kind, code, where):
    with pytest.raises(kind) as info:
        oid.bson.dumps(doc)
    assert str(info.value).endswith(" at " + where), str(info.value)
    if code is not None:
        assert info.value.code == code


def test_dumps_takes_only_mappings():
    for bad in ([("a", 1)], "{}", None, b"\x05\x00\x00\x00\x00"):
        with pytest.raises(TypeError):
            oid.bson.dumps(bad)


def nested(levels):
    doc = {}
    for _ in range(levels):
        doc = {"a": doc}
    return doc


def test_depth_limit_is_validates():
    data = oid.bson.dumps(nested(100))  # 100 embedded levels below the top: allowed
    assert oid.bson.validate(data) is None and oid.bson.loads(data) == nested(100)
    with pytest.raises(oid.Error) as info:
        oid.bson.dumps(nested(101))
    assert info.value.code == "too_deep"
    cycle = {}
    cycle["self"] = cycle
    with pytest.raises(oid.Error) as info:
        oid.bson.dumps(cycle)
    assert info.value.code == "too_deep"
    looped = []
    looped.append(looped)
    with pytest.raises(oid.Error) as info:
        oid.bson.dumps({"l": looped})
    assert info.value.code == "too_deep"


def test_size_limit():
    assert len(oid.bson.dumps({"s": "x" * (16 * 1024 * 1024 - 100)})) < 16 * 1024 * 1024
    with pytest.raises(oid.Error) as info:
        oid.bson.dumps({"a": "x" * (8 * 1024 * 1024), "b": "y" * (8 * 1024 * 1024)})
    assert (info.value.code, str(info.value).endswith("at ['b']")) == ("too_large", True)


class Shrinking(datetime.tzinfo):
    """A tzinfo whose utcoffset() empties a list and a dict while dumps reads them."""

    def __init__(self, victims):
        self.victims = victims

    def utcoffset(self, dt):
        for v in self.victims:
            v.clear()
        return datetime.timedelta(0)


def test_objects_changing_while_read():
    items = [1, 2, 3]
    items.insert(0, datetime.datetime(2020, 1, 1, tzinfo=Shrinking([items])))
    data = oid.bson.dumps({"l": items})  # the list's size is read again: no read past its end
    assert len(oid.bson.loads(data)["l"]) == 1
    doc = {"a": None, "b": 1}
    doc["a"] = datetime.datetime(2020, 1, 1, tzinfo=Shrinking([doc]))
    with pytest.raises(RuntimeError):
        oid.bson.dumps({"d": doc})


def test_loads_errors():
    with pytest.raises(TypeError):
        oid.bson.loads('{"n": 1}')
    for data, code, offset in [(b"", "truncated", 0),
                               (b"\x0c\x00\x00\x00\x10n\x00\x01\x00\x00\x00\x00\x00",
                                "trailing_bytes", 12),
                               (b"\x09\x00\x00\x00\x08b\x00\x02\x00", "invalid_bool", 7)]:
        with pytest.raises(oid.Error) as info:
            oid.bson.loads(data)
        assert (info.value.code, info.value.offset) == (code, offset)
    assert oid.bson.loads(bytearray(b"\x0c\x00\x00\x00\x10n\x00\x01\x00\x00\x00\x00")) == {"n": 1}
    assert oid.bson.loads(memoryview(b"\x05\x00\x00\x00\x00")) == {}


def test_damaged_documents_never_crash():
    """Every damaged copy of a rich document is either what validate() accepts, then loaded,
    or refused by loads with validate()'s own code and offset."""
    rng = random.Random(31)
    data = bytearray(oid.bson.from_json(
        '{"a": [1, {"b": "xyz"}, {"$numberLong": "5"}], "c": {"$binary": {"base64": "AQI=", '
        '"subType": "80"}}, "d": {"$date": "2020-01-01T00:00:00Z"}, "e": {"$oid": '
        '"4df2dcec2cdcd20936a8b817"}, "f": {"$regularExpression": {"pattern": "x", '
        '"options": "i"}}, "g": {"$code": "f", "$scope": {"x": 1}}}'))
    for _ in range(3000):
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            oid.bson.validate(damaged)
            expected = None
        except oid.Error as e:
            expected = (e.code, e.offset)
        try:
            oid.bson.loads(damaged)
            got = None
        except oid.Error as e:
            got = (e.code, e.offset)
            if e.code == "time_out_of_range":  # valid BSON, a date Python cannot hold
                got = None
        assert got == expected, bytes(damaged)


def test_loads_without_pymongo():
    """sys.modules["bson"] = None makes `import bson` fail: an int64 is then an int, and a type
    only PyMongo has raises ImportError naming its byte."""
    script = """
import sys
sys.modules["bson"] = None
import oid.bson
print(oid.bson.loads(oid.bson.from_json('{"n": {"$numberLong": "5"}, "b": {"$binary": {"base64": "", "subType": "00"}}}')))
try:
    oid.bson.loads(oid.bson.from_json('{"a": 1, "d": {"$numberDecimal": "1"}}'))
except ImportError as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["{'n': 5, 'b': b''}",
                   "loads: the decimal128 value at byte 11 needs PyMongo's bson package "
                   "(pip install pymongo)"]
