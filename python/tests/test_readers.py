"""oid.bson.iter_file and iter_json_lines: paths and file objects, dicts and raw bytes, errors
with the document's index, offset, line and column, going on after a bad document, read()
failures, files closed, and a stream larger than the readers' buffers."""

import io

import pytest

import oid
import oid.bson

DOCS = [{"n": i, "s": "é" * i, "l": [i, {"x": None}]} for i in range(50)]


def bson_stream(docs):
    return b"".join(oid.bson.dumps(d) for d in docs)


def test_iter_file_from_path_and_file(tmp_path):
    path = tmp_path / "c.bson"
    path.write_bytes(bson_stream(DOCS))
    assert list(oid.bson.iter_file(path)) == DOCS
    assert list(oid.bson.iter_file(str(path))) == DOCS
    with open(path, "rb") as f:
        assert list(oid.bson.iter_file(f, raw=True)) == [oid.bson.dumps(d) for d in DOCS]
        assert not f.closed  # a file given stays open
    assert list(oid.bson.iter_file(io.BytesIO(b""))) == []


def test_iter_file_large_stream():
    big = [{"i": i, "pad": "x" * 1000} for i in range(300)]  # ~300 KB: several 64 KiB reads
    assert list(oid.bson.iter_file(io.BytesIO(bson_stream(big)))) == big


def test_iter_file_bad_document_then_goes_on():
    first, second, third = (oid.bson.dumps(d) for d in DOCS[:3])
    bad = bytearray(second)
    bad[-1] = 1  # its terminator
    reader = oid.bson.iter_file(io.BytesIO(first + bytes(bad) + third))
    assert next(reader) == DOCS[0]
    with pytest.raises(oid.Error) as info:
        next(reader)
    e = info.value
    assert (e.code, e.offset, e.index) == ("missing_terminator", len(first) + len(second) - 1, 1)
    assert f"document 1, which starts at byte {len(first)}" in str(e)
    assert next(reader) == DOCS[2]  # the length was sane: the reader went past it
    assert list(reader) == []


def test_iter_file_truncated_ends_the_reader():
    data = bson_stream(DOCS[:2])
    reader = oid.bson.iter_file(io.BytesIO(data[:-3]))
    assert next(reader) == DOCS[0]
    with pytest.raises(oid.Error) as info:
        next(reader)
    assert (info.value.code, info.value.index) == ("truncated", 1)
    assert list(reader) == []


def test_iter_file_errors_of_the_file():
    with pytest.raises(FileNotFoundError):
        oid.bson.iter_file("/nonexistent/c.bson")
    with pytest.raises(TypeError):
        oid.bson.iter_file(42)
    with pytest.raises(TypeError, match="binary mode"):
        next(oid.bson.iter_file(io.StringIO("{}")))

    class Failing(io.RawIOBase):
        def read(self, n=-1):
            raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        next(oid.bson.iter_file(Failing()))


def test_iter_file_closes_what_it_opened(tmp_path, monkeypatch):
    path = tmp_path / "c.bson"
    path.write_bytes(bson_stream(DOCS[:2]))
    opened = []
    real_open = open

    def spy(*args, **kwargs):
        f = real_open(*args, **kwargs)
        opened.append(f)
        return f

    monkeypatch.setattr("builtins.open", spy)
    assert len(list(oid.bson.iter_file(path))) == 2
    with oid.bson.iter_file(path) as reader:
        next(reader)
    assert len(opened) == 2 and all(f.closed for f in opened)


LINES = '{"n": 1}\n{"n": {"$numberLong": "2"}, "at": {"$date": "2020-01-01T00:00:00Z"}}\n\n{"s": "é"}\n'


def test_iter_json_lines_text_binary_and_path(tmp_path):
    want = [oid.bson.loads(oid.bson.from_json(line)) for line in LINES.split("\n") if line]
    assert list(oid.bson.iter_json_lines(io.StringIO(LINES))) == want
    assert list(oid.bson.iter_json_lines(io.BytesIO(LINES.encode()))) == want
    path = tmp_path / "c.json"
    path.write_text(LINES, encoding="utf-8")
    assert list(oid.bson.iter_json_lines(path)) == want
    raw = list(oid.bson.iter_json_lines(path, raw=True))
    assert raw == [oid.bson.from_json(line) for line in LINES.split("\n") if line]
    assert list(oid.bson.iter_json_lines(io.StringIO('[{"a": 1}, {"a": 2}]'))) == [{"a": 1},
                                                                                   {"a": 2}]
    legacy = '{"d": {"$date": 0}}\n'
    with pytest.raises(oid.Error):
        next(oid.bson.iter_json_lines(io.StringIO(legacy)))
    assert next(oid.bson.iter_json_lines(io.StringIO(legacy), legacy=True))["d"].year == 1970


def test_iter_json_lines_error_line_column_and_goes_on():
    text = '{"a": 1}\n{"a": 2}\n{"a": {"$oid": "zz"}}\n{"a": 4}\n'
    reader = oid.bson.iter_json_lines(io.StringIO(text))
    assert [next(reader), next(reader)] == [{"a": 1}, {"a": 2}]
    with pytest.raises(oid.Error) as info:
        next(reader)
    e = info.value
    assert (e.code, e.offset, e.index) == ("invalid_extended_json", 33, 2)
    assert "(line 3, column 16; document 2)" in str(e)
    assert list(reader) == [{"a": 4}]
    # An object that never ends loses the documents' boundaries: the reader stops.
    reader = oid.bson.iter_json_lines(io.StringIO('{"a": 1}\n{"a": [1, 2\n'))
    assert next(reader) == {"a": 1}
    with pytest.raises(oid.Error):
        next(reader)
    assert list(reader) == []
