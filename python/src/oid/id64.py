"""64-bit ids (one BIGINT) in the compact64, Snowflake and Sonyflake layouts, made by oid's C++
generator from a machine id you assign.

    >>> import oid.id64
    >>> gen = oid.id64.Generator("snowflake", 17)      # worker 17
    >>> id = gen.next()                                 # an int
    >>> oid.id64.decode(id, "snowflake")
    Fields(units=..., time=datetime.datetime(...), machine=17, counter=0)
    >>> lo, hi = oid.id64.range("2024-01-01", "2024-02-01", "snowflake")

Layouts (time is always the highest field, so ids order by creation time):

    compact64  32 time | 8 machine | 24 counter            1 s    epoch 1970-01-01
    snowflake  1 zero | 41 time | 10 worker | 12 sequence  1 ms   epoch 2010-11-04T01:42:54.657Z
    sonyflake  1 zero | 39 time | 8 sequence | 16 machine  10 ms  epoch 2014-09-01

Errors raise oid.Error with `code`. The guide is docs/python.md; the C++ side docs/objectid.md.
"""

from . import _oid

Layout = _oid.id64.Layout
Generator = _oid.id64.Generator
Fields = _oid.id64.Fields
decode = _oid.id64.decode
min_for_time = _oid.id64.min_for_time
max_for_time = _oid.id64.max_for_time
range = _oid.id64.range  # noqa: A001 (as oid.range)
parse = _oid.id64.parse
to_hex = _oid.id64.to_hex

__all__ = [
    "Fields",
    "Generator",
    "Layout",
    "decode",
    "max_for_time",
    "min_for_time",
    "parse",
    "range",
    "to_hex",
]
