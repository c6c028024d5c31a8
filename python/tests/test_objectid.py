"""oid.ObjectId and the id functions: parsing with positions, interop with PyMongo's bson.ObjectId,
generation, time bounds."""

import copy
import datetime
import pickle

import pytest

import oid

bson = pytest.importorskip("bson")

UTC = datetime.timezone.utc
HEX = "4df2dcec2cdcd20936a8b817"
RAW = bytes.fromhex(HEX)


def test_constructors_agree():
    want = oid.ObjectId(RAW)
    assert want.binary == RAW
    for same in (
        oid.ObjectId(HEX),
        oid.ObjectId(HEX.upper()),
        oid.from_hex(HEX),
        oid.ObjectId.from_hex(HEX),
        oid.from_base64("TfLc7Czc0gk2qLgX"),
        oid.ObjectId.from_base64("TfLc7Czc0gk2qLgX"),
        oid.ObjectId(want),
        oid.ObjectId(bson.ObjectId(HEX)),
    ):
        assert same == want
        assert bytes(same) == RAW
    assert str(want) == want.to_hex() == HEX
    assert repr(want) == f"ObjectId('{HEX}')" == repr(bson.ObjectId(HEX))
    assert want.to_base64() == "TfLc7Czc0gk2qLgX"


@pytest.mark.parametrize(
    "text, code, offset",
    [
        ("", "invalid_length", 0),
        ("4df2dcec2cdcd20936a8b81", "invalid_length", 0),
        ("4df2dcec2cdcd20936a8b8170", "invalid_length", 0),
        ("4df2dcec2cdcd20936a8b81g", "invalid_hex", 23),
        ("g df2dcec2cdcd20936a8b81"[:24], "invalid_hex", 0),
        ("4df2dcec2cdcd209 6a8b817", "invalid_hex", 16),
        ("4df2dcec2cdcd20936a8b8\u00e97", "invalid_hex", 22),  # non-ASCII: a character, not bytes
        ("4df2dcec2\u00e9cdd20936a8b8z7", "invalid_hex", 9),
        ("4df2dcec2cdcd20936a8b8\U0001f6007", "invalid_hex", 22),
        ("\u00e9" * 24, "invalid_hex", 0),
        ("\u00e9" * 12, "invalid_length", 0),  # 24 bytes of UTF-8, but 12 characters
    ],
)
def test_from_hex_reports_code_and_position(text, code, offset):
    for parse in (oid.from_hex, oid.ObjectId.from_hex, oid.ObjectId):
        with pytest.raises(oid.Error) as info:
            parse(text)
        assert isinstance(info.value, ValueError)
        assert (info.value.code, info.value.offset) == (code, offset)
    if code == "invalid_hex":
        assert f"at position {offset}" in str(info.value)


def test_every_character_in_every_hex_position():
    good = set("0123456789abcdefABCDEF")
    for pos in (0, 11, 23):
        for c in map(chr, range(0x100)):
            text = HEX[:pos] + c + HEX[pos + 1 :]
            if c in good:
                assert oid.from_hex(text).binary == bytes.fromhex(text)
                continue
            with pytest.raises(oid.Error) as info:
                oid.from_hex(text)
            assert (info.value.code, info.value.offset) == ("invalid_hex", pos), repr(c)


@pytest.mark.parametrize(
    "text, code, offset",
    [
        ("TfLc7Czc0gk2qLg", "invalid_length", 0),
        ("TfLc7Czc0gk2qLgX=", "invalid_length", 0),
        ("TfLc7Czc0gk2qLg=", "invalid_base64", 15),
        ("TfLc-Czc0gk2qLgX", "invalid_base64", 4),
        ("TfLc7Czc0gk2q\u00e9gX", "invalid_base64", 13),
    ],
)
def test_from_base64_reports_code_and_position(text, code, offset):
    with pytest.raises(oid.Error) as info:
        oid.from_base64(text)
    assert (info.value.code, info.value.offset) == (code, offset)


def test_constructor_rejects_wrong_types_and_sizes():
    with pytest.raises(oid.Error) as info:
        oid.ObjectId(RAW[:11])
    assert info.value.code == "invalid_length"
    with pytest.raises(oid.Error) as info:
        oid.ObjectId(RAW + b"x")
    assert info.value.code == "invalid_length"
    assert oid.ObjectId(HEX.encode()[:12]).binary == HEX.encode()[:12]  # any 12 bytes are an id
    for bad in (12, 1.5, [RAW], bytearray(RAW)):
        with pytest.raises(TypeError):
            oid.ObjectId(bad)
    with pytest.raises(TypeError):
        oid.from_hex(HEX.encode())
    assert oid.ObjectId.is_valid(HEX) and oid.ObjectId.is_valid(RAW)
    assert not oid.ObjectId.is_valid(HEX[:-1] + "g")
    assert not oid.ObjectId.is_valid("\ud800" * 24)
    assert not oid.ObjectId.is_valid(None)


def test_error_pickles_with_code_and_offset():
    with pytest.raises(oid.Error) as info:
        oid.from_hex(HEX[:5] + "x" + HEX[6:])
    again = pickle.loads(pickle.dumps(info.value))
    assert (type(again), str(again), again.code, again.offset) == (
        oid.Error, str(info.value), "invalid_hex", 5)


def test_bson_interop_equality_ordering_hashing():
    ids = [oid.ObjectId(bytes([b]) * 12) for b in (0, 1, 0x7F, 0x80, 0xFF)]
    ids += [oid.ObjectId(bytes(11) + b"\x01"), oid.ObjectId(b"\x01" + bytes(11))]
    for a in ids:
        ba = bson.ObjectId(a.binary)
        assert a == ba and ba == a and not (a != ba)
        assert hash(a) == hash(ba)
        assert a.to_bson() == ba and type(a.to_bson()) is bson.ObjectId
        assert bson.ObjectId(bytes(a)) == ba
        for b in ids:
            bb = bson.ObjectId(b.binary)
            for x, y in ((a, b), (a, bb), (ba, b)):
                assert (x < y) == (a.binary < b.binary)
                assert (x <= y) == (a.binary <= b.binary)
                assert (x > y) == (a.binary > b.binary)
                assert (x >= y) == (a.binary >= b.binary)
                assert (x == y) == (a.binary == b.binary)
    assert sorted(ids) == sorted(ids, key=lambda i: i.binary)
    assert {ids[0]: 1}[bson.ObjectId(ids[0].binary)] == 1  # one key across the two types
    assert ids[0] != HEX and ids[0] != RAW and ids[0] != None  # noqa: E711 (unequal, no error)
    assert not (ids[0] == None)  # noqa: E711
    with pytest.raises(TypeError):
        ids[0] < HEX  # noqa: B015


def test_pymongo_encodes_oid_objectid_as_objectid():
    i = oid.generate()
    assert bson.encode({"_id": i}) == bson.encode({"_id": bson.ObjectId(i.binary)})
    assert bson.decode(bson.encode({"_id": i}))["_id"] == i


def test_copy_and_pickle():
    i = oid.generate()
    assert copy.copy(i) is i and copy.deepcopy(i) is i
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        j = pickle.loads(pickle.dumps(i, protocol))
        assert j == i and type(j) is oid.ObjectId


def test_generation_time_and_timestamp():
    for ts in (0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1307761900):
        i = oid.ObjectId(ts.to_bytes(4, "big") + bytes(8))
        assert i.timestamp == ts
        assert i.generation_time == datetime.datetime.fromtimestamp(ts, UTC)
        assert i.generation_time == bson.ObjectId(i.binary).generation_time


def test_generate_is_now_and_unique():
    before = int(datetime.datetime.now(UTC).timestamp())
    ids = [oid.generate() for _ in range(5000)] + [oid.ObjectId() for _ in range(5000)]
    after = int(datetime.datetime.now(UTC).timestamp())
    assert len(set(ids)) == len(ids)
    # The generator reads time(), the kernel's coarse clock, which may still show the previous
    # second for a few milliseconds after datetime.now() shows the next one.
    assert all(before - 1 <= i.timestamp <= after for i in ids)
    # One process: one random value, counters that follow one another in a thread.
    assert len({i.binary[4:9] for i in ids}) == 1
    counters = [int.from_bytes(i.binary[9:], "big") for i in ids[:100]]
    assert all((b - a) % (1 << 24) == 1 for a, b in zip(counters, counters[1:]))


@pytest.mark.parametrize("n", [0, 1, 7, 8192, 8193, 70000])
def test_generate_batch(n):
    ids = oid.generate_batch(n)
    raw = oid.generate_batch(n, as_bytes=True)
    assert type(ids) is list and type(raw) is bytes and len(raw) == 12 * n
    assert all(type(i) is oid.ObjectId for i in ids)
    both = ids + [oid.ObjectId(raw[k : k + 12]) for k in range(0, len(raw), 12)]
    assert len(set(both)) == 2 * n
    counters = [int.from_bytes(i.binary[9:], "big") for i in ids]
    assert all((b - a) % (1 << 24) == 1 for a, b in zip(counters, counters[1:]))


def test_generate_batch_rejects_negative():
    with pytest.raises(ValueError):
        oid.generate_batch(-1)
    with pytest.raises(OverflowError):
        oid.generate_batch(1 << 62, as_bytes=True)


def test_range_and_from_datetime():
    lo, hi = oid.range("2010-10-01", "2010-11-01")
    assert (str(lo), str(hi)) == ("4ca524800000000000000000", "4cce03000000000000000000")
    start = datetime.datetime(2010, 10, 1, tzinfo=UTC)
    end = datetime.datetime(2010, 11, 1, tzinfo=UTC)
    want = bson.ObjectId.from_datetime(start), bson.ObjectId.from_datetime(end)
    for a, b in [
        (start, end),
        (start.replace(tzinfo=None), end.replace(tzinfo=None)),  # naive: UTC
        (start.astimezone(datetime.timezone(datetime.timedelta(hours=2))), end),
        (start.date(), end.date()),
        (int(start.timestamp()), float(end.timestamp())),
        ("2010-10-01T02:00:00+02:00", "1288569600"),
    ]:
        assert oid.range(a, b) == want, (a, b)
    # Fractions of a second are dropped toward the past, as PyMongo's from_datetime does.
    t = datetime.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    with pytest.raises(oid.Error) as info:
        oid.ObjectId.from_datetime(t)
    assert info.value.code == "time_out_of_range"
    t = datetime.datetime(2020, 1, 1, 0, 0, 0, 999999, tzinfo=UTC)
    assert oid.ObjectId.from_datetime(t) == bson.ObjectId.from_datetime(t)
    assert oid.ObjectId.from_datetime(0xFFFFFFFF).binary == b"\xff" * 4 + bytes(8)
    for bad in (-1, 1 << 32, 1 << 80, float("nan"), float("inf"), "2106-02-07T06:28:16Z"):
        with pytest.raises(oid.Error) as info:
            oid.ObjectId.from_datetime(bad)
        assert info.value.code == "time_out_of_range", bad
    with pytest.raises(oid.Error) as info:
        oid.range("2010-10-01", "2010-13-01")
    assert info.value.code == "invalid_time" and info.value.offset == 5
    for bad in (True, None, b"2010-10-01", [1]):
        with pytest.raises(TypeError):
            oid.range(bad, 0)
