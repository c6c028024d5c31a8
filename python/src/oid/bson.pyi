# Type stubs of oid.bson.
import os
from typing import IO, Any, Iterator, Literal, Mapping, Optional, Union, overload

from . import Error as Error

_Buffer = Union[bytes, bytearray, memoryview]
_Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]

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

def dumps(doc: Mapping[str, Any]) -> bytes:
    """The BSON bytes of a dict, as bson.encode writes them (_id first at the top level)."""

def loads(data: _Buffer) -> dict[str, Any]:
    """The dict of one BSON document, as bson.decode reads it with aware datetimes and
    oid.ObjectIds; validates first (errors as validate)."""

class _FileReader:
    """An iterator of the documents of a .bson stream (what iter_file returns)."""

    def __iter__(self) -> _FileReader: ...
    def __next__(self) -> Any: ...
    def close(self) -> None: ...
    def __enter__(self) -> _FileReader: ...
    def __exit__(self, *args: object) -> None: ...

class _JsonReader:
    """An iterator of the documents of Extended JSON text (what iter_json_lines returns)."""

    def __iter__(self) -> _JsonReader: ...
    def __next__(self) -> Any: ...
    def close(self) -> None: ...
    def __enter__(self) -> _JsonReader: ...
    def __exit__(self, *args: object) -> None: ...

@overload
def iter_file(source: Union[_Path, IO[bytes]], *, raw: Literal[False] = False) -> _FileReader: ...
@overload
def iter_file(source: Union[_Path, IO[bytes]], *, raw: Literal[True]) -> _FileReader: ...
def iter_file(source: Union[_Path, IO[bytes]], *, raw: bool = False) -> _FileReader:
    """Concatenated BSON documents (a mongodump .bson file), one at a time: dicts, or bytes with
    raw=True. Errors: Error with `code`, `offset` (byte in the stream) and `index`."""

def iter_json_lines(
    source: Union[_Path, IO[str], IO[bytes]], *, raw: bool = False, legacy: bool = False
) -> _JsonReader:
    """Extended JSON documents, one a line (or one array), one at a time: dicts, or BSON bytes
    with raw=True. Errors: Error with `code`, `offset`, `index`, line and column."""

__all__: list[str]
