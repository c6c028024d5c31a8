# Type stubs of oid.bson.
from typing import Literal, Optional, Union

from . import Error as Error

_Buffer = Union[bytes, bytearray, memoryview]

def validate(data: _Buffer) -> None:
    """Checks one BSON document; raises Error with `code` and byte `offset`."""

def to_json(
    data: _Buffer,
    mode: Literal["relaxed", "canonical"] = "relaxed",
    *,
    indent: Optional[int] = None,
) -> str:
    """The document as Extended JSON v2; validates first (errors as validate)."""

def from_json(text: Union[str, bytes, bytearray, memoryview], *, legacy: bool = False) -> bytes:
    """The BSON bytes of one Extended JSON object; Error with the byte offset in UTF-8."""

__all__: list[str]
