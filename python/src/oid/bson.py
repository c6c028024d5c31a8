"""BSON bytes, Python objects and MongoDB Extended JSON v2, converted by oid's C++ code.

    >>> import oid.bson
    >>> data = oid.bson.from_json('{"n": 1, "at": {"$date": "2012-12-24T12:15:30.501Z"}}')
    >>> oid.bson.validate(data)
    >>> oid.bson.to_json(data, mode="canonical")
    '{"n":{"$numberInt":"1"},"at":{"$date":{"$numberLong":"1356351330501"}}}'
    >>> oid.bson.loads(oid.bson.dumps({"n": 1}))
    {'n': 1}
    >>> for doc in oid.bson.iter_file("dump/db/coll.bson"): ...

Errors raise oid.Error (a ValueError) with `code` and the byte `offset`; the readers' errors also
have `index`, the document's position in the stream.
"""

import os

from . import Error, _oid

validate = _oid.bson.validate
to_json = _oid.bson.to_json
from_json = _oid.bson.from_json
dumps = _oid.bson.dumps
loads = _oid.bson.loads


def _open(source, what):
    """(file, owned): a path (str, bytes, os.PathLike) opened in binary mode, or the file given."""
    if isinstance(source, (str, bytes, os.PathLike)):
        return open(source, "rb"), True
    if not hasattr(source, "read"):
        raise TypeError(f"{what}() takes a path or a file object, not {type(source).__name__}")
    return source, False


def iter_file(source, *, raw=False):
    """The documents of a file of concatenated BSON documents (as mongodump writes a .bson
    file), one at a time in bounded memory: dicts as loads() makes them, or with raw=True each
    document's bytes.

    `source` is a path, which the iterator opens and closes (at the end, on close() or when it
    is collected), or a binary file object (anything with read(n) -> bytes), which stays open.
    Each document is validated. A bad one raises oid.Error with `code`, `offset` (the byte in
    the stream) and `index` (the document's 0-based position); when its length prefix was sane
    the iterator can go on to the next document (call next() again), otherwise it ends. The
    iterator is also a context manager that closes the file it opened.
    """
    file, owned = _open(source, "iter_file")
    return _oid.bson._FileReader(file, raw, owned)


def iter_json_lines(source, *, raw=False, legacy=False):
    """The documents of Extended JSON text, one at a time in bounded memory: one document a
    line (as mongoexport and `oid bson dump` write them; any whitespace between documents is
    fine) or one JSON array of documents. Yields dicts as loads() makes them, or with raw=True
    each document's BSON bytes; legacy=True also takes the legacy forms, as from_json().

    `source` is a path (opened in binary mode, read as UTF-8, closed at the end), or a file
    object in text mode (read() -> str) or binary mode (read() -> UTF-8 bytes). A bad document
    raises oid.Error with `code`, `offset` (the byte in the UTF-8 text), `index`, and the line
    and column in its message; when the document's extent was found (its braces balance) the
    iterator can go on to the next one, otherwise it ends.
    """
    file, owned = _open(source, "iter_json_lines")
    return _oid.bson._JsonReader(file, raw, legacy, owned)


__all__ = [
    "Error",
    "dumps",
    "from_json",
    "iter_file",
    "iter_json_lines",
    "loads",
    "to_json",
    "validate",
]
