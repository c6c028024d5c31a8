"""oid.id64: layouts, generation (order, batches, machine ids), decoding, time bounds, text."""

import datetime

import pytest

import oid
import oid.id64

UTC = datetime.timezone.utc


def test_layouts():
    c, s, y = (oid.id64.Layout.from_name(n) for n in ("compact64", "snowflake", "sonyflake"))
    assert (c.name, c.time_bits, c.machine_bits, c.counter_bits, c.unit_ms) == (
        "compact64", (32, 32), (24, 8), (0, 24), 1000)
    assert (s.time_bits, s.machine_bits, s.counter_bits, s.unit_ms, s.max_machine,
            s.ids_per_unit) == ((22, 41), (12, 10), (0, 12), 1, 1023, 4096)
    assert (y.time_bits, y.machine_bits, y.counter_bits, y.unit_ms) == ((24, 39), (0, 16),
                                                                        (16, 8), 10)
    assert s.first_time == datetime.datetime(2010, 11, 4, 1, 42, 54, 657000, tzinfo=UTC)
    assert c.first_time == datetime.datetime(1970, 1, 1, tzinfo=UTC)
    assert oid.id64.Layout.snowflake() == s and oid.id64.Layout.snowflake(epoch_ms=0) != s
    assert repr(oid.id64.Layout.snowflake(epoch_ms=5)) == "Layout.snowflake(epoch_ms=5)"
    with pytest.raises(oid.Error) as info:
        oid.id64.Layout.from_name("flake")
    assert info.value.code == "invalid_value"
    with pytest.raises(TypeError):
        oid.id64.decode(1, 3)


@pytest.mark.parametrize("name, machine", [("compact64", 255), ("snowflake", 17),
                                           ("sonyflake", 65535)])
def test_generate_and_decode(name, machine):
    gen = oid.id64.Generator(name, machine)
    assert (gen.layout.name, gen.machine_id) == (name, machine)
    before = datetime.datetime.now(UTC)
    ids = [gen.next() for _ in range(1000)] + gen.batch(5000) + [gen()]
    after = datetime.datetime.now(UTC)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(type(i) is int and 0 < i < 1 << 64 for i in ids)
    unit = datetime.timedelta(milliseconds=gen.layout.unit_ms)
    for i in (ids[0], ids[-1]):
        f = oid.id64.decode(i, name)
        assert f.machine == machine
        # The id's time is the clock's unit, or later when the counter ran out.
        assert before - unit < f.time <= after + datetime.timedelta(seconds=2)
        assert gen.layout.make(f.units, f.machine, f.counter) == i
    assert gen.batch(0) == []


def test_machine_and_field_limits():
    with pytest.raises(oid.Error) as info:
        oid.id64.Generator("compact64", 256)
    assert info.value.code == "machine_id_out_of_range"
    with pytest.raises(oid.Error) as info:
        oid.id64.Layout.snowflake().make(0, 0, 4096)
    assert info.value.code == "invalid_value"
    with pytest.raises(oid.Error) as info:
        oid.id64.decode(1 << 63, "snowflake")  # the zero bit set
    assert info.value.code == "invalid_value"
    with pytest.raises(OverflowError):
        oid.id64.decode(1 << 64, "compact64")
    with pytest.raises(TypeError):
        oid.id64.decode("5", "compact64")


def test_decode_known_ids():
    # Made here from the format: milliseconds since Twitter's epoch << 22 | worker << 12 | seq.
    at = datetime.datetime(2022, 6, 28, 16, 7, 40, 105000, tzinfo=UTC)
    ms = (at - datetime.datetime(2010, 11, 4, 1, 42, 54, 657000, tzinfo=UTC)) // \
        datetime.timedelta(milliseconds=1)
    f = oid.id64.decode(ms << 22 | 378 << 12 | 4095, "snowflake")
    assert (f.units, f.time, f.machine, f.counter) == (ms, at, 378, 4095)
    # Sonyflake: 10 ms units << 24 | sequence << 16 | machine.
    f = oid.id64.decode(1000 << 24 | 3 << 16 | 65535, "sonyflake")
    assert (f.time, f.machine, f.counter) == (
        datetime.datetime(2014, 9, 1, 0, 0, 10, tzinfo=UTC), 65535, 3)
    f = oid.id64.decode((1700000000 << 32) | (7 << 24) | 9, "compact64")
    assert (f.units, f.machine, f.counter) == (1700000000, 7, 9)
    assert f.time == datetime.datetime.fromtimestamp(1700000000, UTC)


def test_time_bounds_and_text():
    lo, hi = oid.id64.range("2024-01-01", datetime.datetime(2024, 2, 1), "compact64")
    assert lo == 1704067200 << 32 and hi == 1706745600 << 32
    assert oid.id64.max_for_time(1704067200, "compact64") == (1704067201 << 32) - 1
    assert oid.id64.min_for_time(datetime.date(2024, 1, 1), "compact64") == lo
    assert oid.id64.min_for_time(1704067200.5, "snowflake") == oid.id64.min_for_time(
        datetime.datetime(2024, 1, 1, 0, 0, 0, 500000), "snowflake")
    with pytest.raises(oid.Error) as info:
        oid.id64.min_for_time("2000-01-01", "snowflake")  # before Twitter's epoch
    assert info.value.code == "time_out_of_range"
    assert oid.id64.parse("1541815603606036480") == 1541815603606036480
    assert oid.id64.parse(oid.id64.to_hex(1541815603606036480)) == 1541815603606036480
    assert oid.id64.to_hex(255) == "00000000000000ff"
    with pytest.raises(oid.Error) as info:
        oid.id64.parse("12a4")
    assert (info.value.code, info.value.offset) == ("invalid_decimal", 2)
