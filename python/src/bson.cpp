// bson.cpp: the submodule oid._oid.bson (validate, to_json, from_json), re-exported as oid.bson.
//
// BSON goes in and out as bytes, Extended JSON as str (or UTF-8 bytes). Each function checks its
// input with oid's one door for the format (bson::validate, bson::from_json) and raises oid.Error
// with the code and the byte offset where reading stopped.
//
// Large inputs are processed with the GIL released, so that other Python threads run meanwhile.
// That needs bytes no other thread can change: a `bytes` object (immutable) or a `str` (its
// UTF-8 form is cached inside it, immutable too) is read in place; any other buffer is copied
// first (buffers.hpp).
#include <Python.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "buffers.hpp"
#include "errors.hpp"

namespace oid::python {

namespace {

using namespace nb::literals;

oid::bson::json_options json_options_of(std::string_view mode, nb::handle indent) {
  oid::bson::json_options options;
  if (mode == "relaxed") {
    options.mode = oid::bson::json_mode::relaxed;
  } else if (mode == "canonical") {
    options.mode = oid::bson::json_mode::canonical;
  } else {
    raise(PyExc_ValueError,
          "mode must be \"relaxed\" or \"canonical\", not \"" + std::string(mode) + "\"");
  }
  if (!indent.is_none()) {
    if (!PyLong_Check(indent.ptr()) || PyBool_Check(indent.ptr())) {
      raise(PyExc_TypeError, "indent must be None or an int");
    }
    const long n = PyLong_AsLong(indent.ptr());
    if (n == -1 && PyErr_Occurred()) throw nb::python_error();
    if (n < 0 || n > 16) {
      raise(PyExc_ValueError, "indent must be 0 to 16, not " + std::to_string(n));
    }
    options.pretty = true;
    options.indent = static_cast<int>(n);
  }
  return options;
}

void validate(nb::handle data) {
  input_bytes in(data, "validate");
  const auto view = run(in.large(), [&] { return oid::bson::validate(in.bytes()); });
  if (!view) raise_error(view.error(), at_byte(view.error().offset));
}

nb::object to_json(nb::handle data, std::string_view mode, nb::handle indent) {
  const auto options = json_options_of(mode, indent);
  input_bytes in(data, "to_json");
  std::string text;
  const auto view = run(in.large(), [&] {
    auto v = oid::bson::validate(in.bytes());
    if (v) oid::bson::to_json(*v, options, text);
    return v;
  });
  if (!view) raise_error(view.error(), at_byte(view.error().offset));
  // validate() checked every string and key for UTF-8, so this decodes; were it ever not so, the
  // result would be a UnicodeDecodeError, not a crash.
  nb::object out =
      nb::steal(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "strict"));
  if (!out.is_valid()) throw nb::python_error();
  return out;
}

nb::object from_json(nb::handle text, bool legacy) {
  oid::bson::json_read_options options;
  options.legacy = legacy;
  auto convert = [&](std::string_view s, bool large) {
    auto doc = run(large, [&] { return oid::bson::from_json(s, options); });
    if (!doc) {
      const auto pos = oid::bson::position_of(s, doc.error().offset);
      raise_error(doc.error(), at_byte(doc.error().offset) + " (line " + std::to_string(pos.line) +
                                   ", column " + std::to_string(pos.column) + ")");
    }
    return new_bytes(doc->bytes());
  };
  if (PyUnicode_Check(text.ptr())) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(text.ptr(), &n);  // lone surrogates: UnicodeError
    if (p == nullptr) throw nb::python_error();
    const std::string_view s(p, static_cast<std::size_t>(n));
    return convert(s, s.size() > release_gil_above);
  }
  input_bytes in(text, "from_json");
  return convert(in.text(), in.large());
}

}  // namespace

nb::module_ bind_bson(nb::module_& m) {
  nb::module_ bson = m.def_submodule("bson", "BSON bytes and MongoDB Extended JSON.");
  bson.def("validate", &validate, "data"_a,
           R"(Checks that `data` (bytes or another buffer) is exactly one valid BSON document:
every length, terminator, type byte, boolean, UTF-8 string and key, nesting up to 100 levels,
at most 16 MiB. Returns None; raises oid.Error with `code` (e.g. "bad_length_prefix") and
`offset`, the byte where the first problem is. Releases the GIL above 16 KiB.)");
  bson.def("to_json", &to_json, "data"_a, "mode"_a = "relaxed", nb::kw_only(),
           "indent"_a = nb::none(),
           R"(The BSON document `data` as MongoDB Extended JSON v2: mode "relaxed" (plain
numbers and ISO-8601 dates where the specification allows) or "canonical" (every type in its
wrapper, reads back to the same bytes). Compact by default; `indent` (0 to 16) puts each member
on its own line. Validates first: errors as validate(). Releases the GIL above 16 KiB.)");
  bson.def("from_json", &from_json, "text"_a, nb::kw_only(), "legacy"_a = false,
           R"(The BSON bytes of one Extended JSON object (canonical or relaxed; str, or UTF-8
bytes). `legacy=True` also takes the legacy forms ({"$binary": "...", "$type": "00"},
{"$regex": ..., "$options": ...}, {"$date": <ms>}). Raises oid.Error: invalid_json,
invalid_extended_json, invalid_utf8, invalid_key, too_deep, too_large, with `offset` the byte in
the UTF-8 text and its line and column in the message. Releases the GIL above 16 KiB.)");
  return bson;
}

}  // namespace oid::python
