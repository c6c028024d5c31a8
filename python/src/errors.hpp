// errors.hpp: how the bindings turn an `oid::error` into a Python exception.
//
// Every failure of oid's parsers becomes `oid.Error`, a `ValueError` subclass defined in Python
// (oid/__init__.py) with the error's code name ("invalid_hex") and offset as attributes, so that
// Python code can catch `ValueError` as it does for int("x") and still learn what and where.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <oid/error.hpp>
#include <string>
#include <string_view>

namespace oid::python {

namespace nb = nanobind;

/// Remembers the class `raise_error` instantiates (oid.Error; called once by oid/__init__.py).
void set_error_class(nb::handle cls);

/// The errc's enumerator name, e.g. "invalid_hex": the stable `code` of an oid.Error.
const char* errc_name(const std::error_code& code) noexcept;

/// Raises oid.Error for `e` with the message "<the code's message><detail>" and throws
/// `nb::python_error` so that nanobind returns to Python. `detail` says where, in the unit the
/// caller knows (" at position 5", " at byte 12 (line 1, column 13)"), or why.
[[noreturn]] void raise_error(const oid::error& e, const std::string& detail);

/// `raise_error` for the document at 0-based `index` of a stream (oid.bson.iter_file,
/// iter_json_lines): the exception also has the attribute `index`.
[[noreturn]] void raise_error(const oid::error& e, const std::string& detail, std::size_t index);

/// `raise_error` for a code without an offset.
[[noreturn]] inline void raise_error(oid::errc code, const std::string& detail) {
  raise_error(oid::error{make_error_code(code), 0}, detail);
}

/// Sets a Python exception of type `type` with `message` and throws `nb::python_error`.
[[noreturn]] void raise(PyObject* type, const std::string& message);

}  // namespace oid::python
