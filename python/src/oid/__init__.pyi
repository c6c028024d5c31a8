# Type stubs of the package `oid` (the extension oid._oid and its Python wrapper).
import datetime
from typing import Any, Literal, Optional, Union, overload

from . import bson as bson
from . import id64 as id64

_Time = Union[datetime.datetime, datetime.date, int, float, str]

class Error(ValueError):
    """Input oid cannot accept: `code` names what is wrong, `offset` says where."""

    code: str
    offset: int
    index: Optional[int]
    def __init__(self, message: str, code: str, offset: int) -> None: ...

class ObjectId:
    """A MongoDB ObjectId: 12 bytes, immutable, ordered and hashed like bson.ObjectId."""

    _type_marker: int
    def __init__(self, oid: Union[str, bytes, ObjectId, Any, None] = None) -> None:
        """A new id (None), or 24 hex digits, 12 bytes, an oid.ObjectId or a bson.ObjectId."""
    @staticmethod
    def from_hex(text: str) -> ObjectId:
        """24 hex digits; Error invalid_length, or invalid_hex at the bad character's position."""
    @staticmethod
    def from_base64(text: str) -> ObjectId:
        """16 standard base64 characters; Error invalid_length or invalid_base64."""
    @staticmethod
    def from_datetime(time: _Time) -> ObjectId:
        """The smallest id of that second (naive datetimes are UTC); Error time_out_of_range."""
    @staticmethod
    def is_valid(oid: object) -> bool:
        """True when ObjectId(oid) would succeed (None excluded)."""
    @property
    def binary(self) -> bytes:
        """The 12 bytes."""
    @property
    def timestamp(self) -> int:
        """Creation time, unsigned Unix seconds."""
    @property
    def generation_time(self) -> datetime.datetime:
        """Creation time to the second, aware, UTC."""
    def to_hex(self) -> str:
        """24 lowercase hex digits, as str(id)."""
    def to_base64(self) -> str:
        """16 characters of standard base64."""
    def to_bson(self) -> Any:
        """The same id as a bson.ObjectId (needs PyMongo)."""
    def __bytes__(self) -> bytes: ...
    def __hash__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...
    def __lt__(self, other: Any) -> bool: ...
    def __le__(self, other: Any) -> bool: ...
    def __gt__(self, other: Any) -> bool: ...
    def __ge__(self, other: Any) -> bool: ...
    def __copy__(self) -> ObjectId: ...
    def __deepcopy__(self, memo: Any) -> ObjectId: ...
    def __reduce__(self) -> tuple[type[ObjectId], tuple[bytes]]: ...

def generate() -> ObjectId:
    """A new ObjectId; thread-safe, and a forked child never repeats its parent's ids."""

@overload
def generate_batch(n: int, *, as_bytes: Literal[False] = False) -> list[ObjectId]: ...
@overload
def generate_batch(n: int, *, as_bytes: Literal[True]) -> bytes: ...
def generate_batch(n: int, *, as_bytes: bool = False) -> Union[list[ObjectId], bytes]:
    """n new ids with consecutive counters: a list, or 12 * n bytes with as_bytes=True."""

def from_hex(text: str) -> ObjectId:
    """ObjectId.from_hex."""

def from_base64(text: str) -> ObjectId:
    """ObjectId.from_base64."""

def range(start: _Time, end: _Time) -> tuple[ObjectId, ObjectId]:
    """(lo, hi) for {"_id": {"$gte": lo, "$lt": hi}}: the documents created in [start, end)."""

__all__: list[str]
