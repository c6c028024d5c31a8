// codec.hpp: BSON documents to and from Python objects (codec.cpp), shared by oid.bson.loads,
// dumps and the stream readers (readers.cpp).
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <oid/bson/view.hpp>

namespace oid::python {

namespace nb = nanobind;

/// Largest document dumps() writes and loads() reads, as validate()'s default: MongoDB's 16 MiB.
inline constexpr std::size_t max_document_size = 16 * 1024 * 1024;
/// Deepest nesting, as validate()'s default: the top-level document is depth 0, each embedded
/// document, array or code-with-scope scope adds 1.
inline constexpr std::size_t max_document_depth = 100;

/// The BSON datetime (Unix milliseconds) of a datetime.datetime: naive means UTC (as PyMongo
/// reads it), an aware one is moved to UTC by its utcoffset(); microseconds are floored to
/// milliseconds, as PyMongo does. Raises what utcoffset() raises.
std::int64_t datetime_ms(PyObject* datetime);

/// An aware datetime in UTC for Unix milliseconds, or an invalid object when `ms` is outside
/// datetime's years 1 to 9999.
nb::object utc_datetime(std::int64_t ms);

/// The dict of a document that validate() accepted (or that oid built), its values as loads()
/// documents them. `stream_offset` is the absolute offset of the document's first byte in the
/// caller's input, for error offsets. Raises oid.Error (time_out_of_range, for a datetime outside
/// Python's years 1 to 9999, at the value's offset) and ImportError (a type that needs PyMongo's
/// bson package when it is not installed). The bytes must not change while it runs: it makes
/// Python objects, and so runs Python code that may let other threads run.
nb::object decode_document(oid::bson::document_view doc, std::uint64_t stream_offset);

}  // namespace oid::python
