"""oid.bson: validate, to_json, from_json; error codes and byte offsets; inputs of every buffer
type; large inputs (the GIL is released for them) from several threads."""

import threading

import pytest

import oid
import oid.bson

from jsoncmp import parse

DOC = b"\x0c\x00\x00\x00\x10n\x00\x01\x00\x00\x00\x00"  # {"n": 1}


def test_round_trip_and_modes():
    text = '{"n": 1, "x": 0.5, "at": {"$date": "2012-12-24T12:15:30.501Z"}, "s": "\u00e9"}'
    data = oid.bson.from_json(text)
    assert type(data) is bytes
    assert oid.bson.validate(data) is None
    assert oid.bson.to_json(data) == '{"n":1,"x":0.5,"at":{"$date":"2012-12-24T12:15:30.501Z"},"s":"\u00e9"}'
    assert oid.bson.to_json(data, "relaxed") == oid.bson.to_json(data)
    canonical = oid.bson.to_json(data, mode="canonical")
    assert parse(canonical) == parse(
        '{"n":{"$numberInt":"1"},"x":{"$numberDouble":"0.5"},'
        '"at":{"$date":{"$numberLong":"1356351330501"}},"s":"\u00e9"}')
    assert oid.bson.from_json(canonical) == data
    assert oid.bson.from_json(canonical.encode()) == data  # UTF-8 bytes too
    pretty = oid.bson.to_json(data, indent=4)
    assert pretty.startswith('{\n    "n": 1,') and parse(pretty) == parse(oid.bson.to_json(data))


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_buffer_types(kind):
    assert oid.bson.validate(kind(DOC)) is None
    assert oid.bson.to_json(kind(DOC)) == '{"n":1}'
    assert oid.bson.from_json(kind(b'{"n": 1}')) == DOC


@pytest.mark.parametrize(
    "data, code, offset",
    [
        (b"", "truncated", 0),
        (b"\x05\x00\x00", "truncated", 0),
        (b"\x05\x00\x00\x00\x01", "missing_terminator", 4),
        (b"\x06\x00\x00\x00\x00\x00", "bad_length_prefix", 0),
        (b"\x0c\x00\x00\x00\x10n\x00\x01\x00\x00\x00\x00\x00", "trailing_bytes", 12),
        (b"\x0c\x00\x00\x00\x20n\x00\x01\x00\x00\x00\x00", "unknown_type", 4),
        (b"\x09\x00\x00\x00\x08b\x00\x02\x00", "invalid_bool", 7),
        (b"\x0e\x00\x00\x00\x02s\x00\x02\x00\x00\x00\xff\x00\x00", "invalid_utf8", 11),
        (b"\x0e\x00\x00\x00\x02s\x00\x03\x00\x00\x00a\x00\x00", "bad_length_prefix", 7),
    ],
)
def test_validate_reports_code_and_offset(data, code, offset):
    for call in (oid.bson.validate, oid.bson.to_json):
        with pytest.raises(oid.Error) as info:
            call(data)
        assert isinstance(info.value, ValueError)
        assert (info.value.code, info.value.offset) == (code, offset), call
        assert f"at byte {offset}" in str(info.value)


def test_too_deep():
    doc = b"\x05\x00\x00\x00\x00"
    for _ in range(101):
        doc = (len(doc) + 8).to_bytes(4, "little") + b"\x03a\x00" + doc + b"\x00"
    with pytest.raises(oid.Error) as info:
        oid.bson.validate(doc)
    assert info.value.code == "too_deep"


@pytest.mark.parametrize(
    "text, code, offset, line, column",
    [
        ("", "invalid_json", 0, 1, 1),
        ('{"n": 1,}', "invalid_json", 8, 1, 9),
        ('{"n":\n  1,]', "invalid_json", 10, 2, 5),
        ('{"\u00e9": x}', "invalid_json", 7, 1, 7),  # offset in UTF-8 bytes, column in characters
        ('{"a": {"$oid": "4df2dcec2cdcd20936a8b81"}}', "invalid_extended_json", 15, 1, 16),
        ('{"a": {"$numberInt": "2147483648"}}', "invalid_extended_json", 21, 1, 22),
        ('{"a\\u0000": 1}', "invalid_key", 3, 1, 4),  # at the escape
        ('{"a": 1} {}', "invalid_json", 9, 1, 10),
    ],
)
def test_from_json_reports_code_offset_line_column(text, code, offset, line, column):
    with pytest.raises(oid.Error) as info:
        oid.bson.from_json(text)
    assert (info.value.code, info.value.offset) == (code, offset)
    assert f"at byte {offset} (line {line}, column {column})" in str(info.value)


def test_from_json_legacy_forms():
    text = '{"b": {"$binary": "AQI=", "$type": "00"}}'
    with pytest.raises(oid.Error):
        oid.bson.from_json(text)
    assert oid.bson.to_json(oid.bson.from_json(text, legacy=True), "canonical") == (
        '{"b":{"$binary":{"base64":"AQI=","subType":"00"}}}')


def test_bad_arguments():
    with pytest.raises(TypeError):
        oid.bson.validate('{"n": 1}')
    with pytest.raises(TypeError):
        oid.bson.to_json(None)
    with pytest.raises(ValueError):
        oid.bson.to_json(DOC, mode="strict")
    with pytest.raises(ValueError):
        oid.bson.to_json(DOC, indent=17)
    with pytest.raises(UnicodeError):  # a lone surrogate has no UTF-8 form
        oid.bson.from_json('{"a": "\ud800"}')
    with pytest.raises(oid.Error) as info:
        oid.bson.from_json(b'{"a": "\xff"}')
    assert (info.value.code, info.value.offset) == ("invalid_utf8", 7)


def big_document(n):
    return oid.bson.from_json("{" + ", ".join(f'"k{i}": "{"v" * 40}"' for i in range(n)) + "}")


def test_large_inputs_from_threads():
    """Above 16 KiB the calls run without the GIL: threads at once must still get the same
    results, and a bytearray changed meanwhile must not change what was converted."""
    data = big_document(5000)
    assert len(data) > 100_000
    want = oid.bson.to_json(data, "canonical")
    assert oid.bson.from_json(want) == data
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                oid.bson.validate(data)
                text = oid.bson.to_json(bytearray(data), "canonical")
                results.append(text == want and oid.bson.from_json(text) == data)
        except Exception as e:  # reported below, with the thread's error
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [True] * 20
    broken = bytearray(data)
    broken[-1] = 1
    with pytest.raises(oid.Error) as info:
        oid.bson.validate(broken)
    assert (info.value.code, info.value.offset) == ("missing_terminator", len(data) - 1)
