"""MongoDB ObjectIds, BSON and Extended JSON at C++ speed: Python bindings of the oid library.

    >>> import oid
    >>> id = oid.generate()                  # an oid.ObjectId, like bson.ObjectId()
    >>> oid.ObjectId("4df2dcec2cdcd20936a8b817").generation_time
    datetime.datetime(2011, 6, 11, 3, 11, 40, tzinfo=datetime.timezone.utc)
    >>> lo, hi = oid.range("2010-10-01", "2010-11-01")   # {"_id": {"$gte": lo, "$lt": hi}}

BSON, Python objects and Extended JSON are in `oid.bson`, 64-bit ids in `oid.id64`. Bad input raises `oid.Error`, a ValueError with the
error's `code` and `offset`. The guide is docs/python.md in the repository.
"""

from . import _oid


class Error(ValueError):
    """Input that oid cannot accept: what is wrong and where.

    Attributes:
        code: the error's name, stable across versions: "invalid_hex", "invalid_length",
            "truncated", "bad_length_prefix", "invalid_json", ... (oid::errc in C++).
        offset: where reading stopped: the position of the character in an id's text, the byte
            in BSON, the byte in the UTF-8 form of Extended JSON text; 0 when there is none.
        index: for the stream readers (oid.bson.iter_file, iter_json_lines), the 0-based
            position of the document in the stream; None otherwise.
    """

    index = None

    def __init__(self, message: str, code: str, offset: int) -> None:
        super().__init__(message)
        self.code = code
        self.offset = offset

    def __reduce__(self):  # pickled with all three arguments, not only the message
        return (type(self), (self.args[0], self.code, self.offset))


_oid._set_error_class(Error)

ObjectId = _oid.ObjectId
generate = _oid.generate
generate_batch = _oid.generate_batch
from_hex = _oid.from_hex
from_base64 = _oid.from_base64
range = _oid.range  # noqa: A001 (shadows the builtin inside this module only, as the issue names it)

from . import bson, id64  # noqa: E402 (need Error registered first)

__all__ = [
    "Error",
    "ObjectId",
    "bson",
    "from_base64",
    "from_hex",
    "generate",
    "generate_batch",
    "id64",
    "range",
]
