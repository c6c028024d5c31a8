"""BSON bytes and MongoDB Extended JSON v2, checked and converted by oid's C++ code.

    >>> import oid.bson
    >>> data = oid.bson.from_json('{"n": 1, "at": {"$date": "2012-12-24T12:15:30.501Z"}}')
    >>> oid.bson.validate(data)
    >>> oid.bson.to_json(data, mode="canonical")
    '{"n":{"$numberInt":"1"},"at":{"$date":{"$numberLong":"1356351330501"}}}'

Errors raise oid.Error (a ValueError) with `code` and the byte `offset`.
"""

from . import Error, _oid

validate = _oid.bson.validate
to_json = _oid.bson.to_json
from_json = _oid.bson.from_json

__all__ = ["Error", "from_json", "to_json", "validate"]
