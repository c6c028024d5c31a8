// ids.cpp: oid.ObjectId and the functions that make and read ids.
//
// The Python type wraps `oid::object_id` by value (12 bytes in the instance, no pointer). It
// mirrors PyMongo's bson.ObjectId where Python code already has habits: ObjectId() makes a new
// id, ObjectId(str) parses hex, ObjectId(bytes) takes 12 bytes, str() is hex, `binary`,
// `generation_time`, equality and ordering by bytes, hash equal to bson.ObjectId's. It
// interoperates with bson.ObjectId without importing PyMongo: a bson.ObjectId can only be passed in
// when `bson` is already in sys.modules, so that is where it is looked for.
#include <Python.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "errors.hpp"

namespace oid::python {

namespace {

using namespace nb::literals;

std::string python_type_name(nb::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// --- Text forms ------------------------------------------------------------------------------

bool is_hex_char(Py_UCS4 c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_base64_char(Py_UCS4 c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// " 'g' at position 5": the character as Python would show it, and where, in characters.
std::string at_position(PyObject* str, std::size_t index) {
  std::string out;
  if (index < static_cast<std::size_t>(PyUnicode_GET_LENGTH(str))) {
    nb::object ch = nb::steal(PyUnicode_Substring(str, static_cast<Py_ssize_t>(index),
                                                  static_cast<Py_ssize_t>(index) + 1));
    if (!ch.is_valid()) throw nb::python_error();
    // Appended piecewise: g++ 12 warns (-Wrestrict, a false positive) on " " + std::string.
    out += ' ';
    out += nb::repr(ch).c_str();
  }
  out += " at position ";
  out += std::to_string(index);
  return out;
}

struct text_form {
  const char* name;  // "hex", "base64"
  std::size_t size;  // characters in an id's form
  errc bad_char;
  bool (*valid)(Py_UCS4);
  result<object_id> (*parse)(std::string_view) noexcept;
};
constexpr text_form hex_form{"hex", object_id::hex_size, errc::invalid_hex, is_hex_char,
                             &object_id::from_hex};
constexpr text_form base64_form{"base64", object_id::base64_size, errc::invalid_base64,
                                is_base64_char, &object_id::from_base64};

// Parses `text` (a str) in `form`, raising oid.Error with the position in characters. oid's
// parsers count UTF-8 bytes; Python code counts characters. The two agree up to the first
// non-ASCII character, and no such character is valid in an id, so ASCII text goes straight to
// the parser and only other text is checked here, character by character.
object_id parse_text(nb::handle text, const text_form& form) {
  PyObject* s = text.ptr();
  if (!PyUnicode_Check(s)) {
    raise(PyExc_TypeError, std::string("an ObjectId's ") + form.name + " form is a str, not " +
                               python_type_name(text));
  }
  const auto length = static_cast<std::size_t>(PyUnicode_GET_LENGTH(s));
  if (length != form.size) {
    raise_error(errc::invalid_length, " (" + std::to_string(length) + " characters; " + form.name +
                                          " ids have " + std::to_string(form.size) + ")");
  }
  if (PyUnicode_IS_ASCII(s)) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(s, &n);  // ASCII: the characters themselves
    if (p == nullptr) throw nb::python_error();
    auto id = form.parse({p, static_cast<std::size_t>(n)});
    if (!id) raise_error(id.error(), at_position(s, id.error().offset));
    return *id;
  }
  for (std::size_t i = 0; i < length; ++i) {
    if (!form.valid(PyUnicode_READ_CHAR(s, static_cast<Py_ssize_t>(i)))) {
      raise_error(oid::error{make_error_code(form.bad_char), i}, at_position(s, i));
    }
  }
  // Not reached: the text has a non-ASCII character, which the loop reports.
  raise_error(form.bad_char, "");
}

// --- bson.ObjectId ---------------------------------------------------------------------------

// The id of `h` when it is a bson.ObjectId (PyMongo's), else nothing. `bson` is not imported: an
// instance of its ObjectId exists only if it already was.
std::optional<object_id> from_bson_object_id(nb::handle h) {
  PyObject* bson = PyDict_GetItemString(PyImport_GetModuleDict(), "bson");  // borrowed
  if (bson == nullptr) return std::nullopt;
  nb::object cls = nb::steal(PyObject_GetAttrString(bson, "ObjectId"));
  if (!cls.is_valid()) {  // some other module named bson
    PyErr_Clear();
    return std::nullopt;
  }
  const int is = PyType_Check(cls.ptr()) ? PyObject_IsInstance(h.ptr(), cls.ptr()) : 0;
  if (is < 0) throw nb::python_error();
  if (is == 0) return std::nullopt;
  nb::object binary = nb::steal(PyObject_GetAttrString(h.ptr(), "binary"));
  if (!binary.is_valid()) throw nb::python_error();
  // A subclass may return anything: take only exactly 12 bytes.
  if (!PyBytes_Check(binary.ptr()) || PyBytes_GET_SIZE(binary.ptr()) != object_id::size) {
    raise(PyExc_TypeError, "bson.ObjectId.binary is not 12 bytes");
  }
  object_id::bytes_type b;
  std::memcpy(b.data(), PyBytes_AS_STRING(binary.ptr()), b.size());
  return object_id(b);
}

// The id of an oid.ObjectId or a bson.ObjectId; nothing for anything else.
std::optional<object_id> as_object_id(nb::handle h) {
  if (nb::isinstance<object_id>(h)) return *nb::inst_ptr<object_id>(h);
  return from_bson_object_id(h);
}

// ObjectId(x): what bson.ObjectId(x) accepts, plus bson.ObjectId itself.
object_id construct(nb::handle h) {
  if (h.is_none()) return oid::generate();
  if (PyUnicode_Check(h.ptr())) return parse_text(h, hex_form);
  if (PyBytes_Check(h.ptr())) {
    const auto n = static_cast<std::size_t>(PyBytes_GET_SIZE(h.ptr()));
    const auto* p = reinterpret_cast<const std::uint8_t*>(PyBytes_AS_STRING(h.ptr()));
    auto id = object_id::from_bytes({p, n});
    if (!id) raise_error(id.error(), " (" + std::to_string(n) + " bytes; an ObjectId has 12)");
    return *id;
  }
  if (auto id = as_object_id(h)) return *id;
  raise(PyExc_TypeError,
        "ObjectId() takes None, a str of 24 hex digits, 12 bytes, an oid.ObjectId or a "
        "bson.ObjectId, not " +
            python_type_name(h));
}

template <class Compare>
nb::object compare(const object_id& a, nb::handle b, Compare cmp) {
  const auto other = as_object_id(b);
  if (!other) return nb::borrow(Py_NotImplemented);  // Python then tries the other side
  return nb::bool_(cmp(a, *other));
}

nb::bytes to_bytes(const object_id& id) { return nb::bytes(id.bytes().data(), object_id::size); }

// --- Times -----------------------------------------------------------------------------------

// Unix seconds of a time given as a datetime (naive: UTC, as PyMongo reads it), a date
// (midnight UTC), int or float seconds, or a str that oid::parse_time reads (ISO-8601 or Unix
// seconds). Ids hold whole seconds: fractions are dropped toward the past (floor).
std::int64_t seconds_of(nb::handle t) {
  PyObject* p = t.ptr();
  if (PyBool_Check(p)) raise(PyExc_TypeError, "a time cannot be a bool");
  if (PyLong_Check(p)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0) raise_error(errc::time_out_of_range, "");
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    return v;
  }
  if (PyFloat_Check(p)) {
    const double v = std::floor(PyFloat_AS_DOUBLE(p));
    // 2^62 is far outside every id's range and inside int64's; NaN fails both comparisons.
    if (!(v > -0x1p62 && v < 0x1p62)) raise_error(errc::time_out_of_range, "");
    return static_cast<std::int64_t>(v);
  }
  if (PyUnicode_Check(p)) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(p, &n);
    if (s == nullptr) throw nb::python_error();
    auto parsed = oid::parse_time({s, static_cast<std::size_t>(n)});
    // Byte and character positions agree up to the first non-ASCII character, and the parser
    // stops there at the latest.
    if (!parsed) raise_error(parsed.error(), at_position(p, parsed.error().offset));
    return parsed->time_since_epoch().count();
  }
  nb::module_ datetime = nb::module_::import_("datetime");
  if (nb::isinstance(t, datetime.attr("datetime"))) {
    nb::object tz = t.attr("tzinfo");
    nb::object epoch = tz.is_none()
                           ? datetime.attr("datetime")(1970, 1, 1)
                           : datetime.attr("datetime")(1970, 1, 1, 0, 0, 0, 0,
                                                       datetime.attr("timezone").attr("utc"));
    // timedelta // timedelta is an exact floor division of integers: no float rounding.
    nb::object since = nb::steal(PyNumber_Subtract(p, epoch.ptr()));
    if (!since.is_valid()) throw nb::python_error();
    nb::object one = datetime.attr("timedelta")("seconds"_a = 1);
    nb::object seconds = nb::steal(PyNumber_FloorDivide(since.ptr(), one.ptr()));
    if (!seconds.is_valid()) throw nb::python_error();
    return seconds_of(seconds);
  }
  if (nb::isinstance(t, datetime.attr("date"))) {
    constexpr std::int64_t unix_epoch_ordinal = 719163;  // date(1970, 1, 1).toordinal()
    return (nb::cast<std::int64_t>(t.attr("toordinal")()) - unix_epoch_ordinal) * 86400;
  }
  raise(PyExc_TypeError,
        "a time is a datetime, a date, int or float Unix seconds, or an ISO-8601 str, not " +
            python_type_name(t));
}

object_id min_for(nb::handle t) {
  const std::int64_t s = seconds_of(t);
  if (s < 0 || s > std::numeric_limits<std::uint32_t>::max()) {
    raise_error(errc::time_out_of_range, " (" + std::to_string(s) + " Unix seconds)");
  }
  return object_id::min_for_timestamp(static_cast<std::uint32_t>(s));
}

nb::object utc_datetime(std::uint32_t seconds) {
  nb::module_ datetime = nb::module_::import_("datetime");
  return datetime.attr("datetime")
      .attr("fromtimestamp")(seconds, datetime.attr("timezone").attr("utc"));
}

// --- Batches ---------------------------------------------------------------------------------

// Releasing the GIL costs about as much as making a few hundred ids; below this it is not worth it.
constexpr std::size_t batch_release_gil_above = 64 * 1024;

std::size_t batch_size(Py_ssize_t n) {
  if (n < 0) raise(PyExc_ValueError, "generate_batch: n must be >= 0, not " + std::to_string(n));
  return static_cast<std::size_t>(n);
}

void fill(std::span<object_id> out) {
  if (out.size() > batch_release_gil_above) {
    nb::gil_scoped_release unlocked;
    oid::generate(out);
  } else {
    oid::generate(out);
  }
}

nb::object generate_batch(Py_ssize_t count, bool as_bytes) {
  const std::size_t n = batch_size(count);
  if (as_bytes) {
    if (n > static_cast<std::size_t>(PY_SSIZE_T_MAX) / object_id::size) {
      raise(PyExc_OverflowError, "generate_batch: n is too large");
    }
    nb::object out =
        nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n * object_id::size)));
    if (!out.is_valid()) throw nb::python_error();
    // Made in chunks and copied: the bytes object's buffer holds chars, not object_ids, and the
    // chunk bounds the extra memory.
    char* dst = PyBytes_AS_STRING(out.ptr());
    std::vector<object_id> chunk(std::min<std::size_t>(n, 8192));
    for (std::size_t done = 0; done < n;) {
      const std::size_t k = std::min(chunk.size(), n - done);
      fill(std::span(chunk.data(), k));
      std::memcpy(dst + done * object_id::size, chunk.data(), k * object_id::size);
      done += k;
    }
    return out;
  }
  std::vector<object_id> ids(n);
  fill(ids);
  nb::object list = nb::steal(PyList_New(static_cast<Py_ssize_t>(n)));
  if (!list.is_valid()) throw nb::python_error();
  for (std::size_t i = 0; i < n; ++i) {
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), nb::cast(ids[i]).release().ptr());
  }
  return list;
}

}  // namespace

void bind_ids(nb::module_& m) {
  static_assert(sizeof(object_id) == object_id::size);  // memcpy of a chunk above relies on it

  nb::class_<object_id> cls(m, "ObjectId", R"(A MongoDB ObjectId: 12 bytes, immutable.

The first 4 bytes are the creation time in Unix seconds (big-endian), then 5 random bytes chosen
once per process and a 3-byte counter. Ids compare by their bytes, so by creation time, and
compare, order and hash equal to PyMongo's bson.ObjectId with the same bytes.

    ObjectId()                            # a new id, as oid.generate()
    ObjectId("4df2dcec2cdcd20936a8b817")  # 24 hex digits, either case
    ObjectId(b"M\xf2\xdc\xec,\xdc\xd2\t6\xa8\xb8\x17")  # 12 bytes
    ObjectId(bson.ObjectId(...))          # the same bytes

Bad text raises oid.Error (a ValueError) with `code` and `offset`, the position of the first bad
character.)");
  // PyMongo's encoder (C and pure Python) writes any object whose `_type_marker` is 7 as an
  // ObjectId, reading its `binary`: so bson.encode({"_id": oid.ObjectId()}) works as is.
  cls.attr("_type_marker") = 7;
  cls.def(
         "__init__", [](object_id* self, nb::handle arg) { new (self) object_id(construct(arg)); },
         "oid"_a.none() = nb::none(),
         "A new id (no argument or None), or the id given as 24 hex digits, 12 bytes, an "
         "oid.ObjectId or a bson.ObjectId.")
      .def_static(
          "from_hex", [](nb::handle text) { return parse_text(text, hex_form); }, "text"_a,
          "Parses exactly 24 hex digits (either case). Raises oid.Error: invalid_length, or "
          "invalid_hex with `offset` the position of the first bad character.")
      .def_static(
          "from_base64", [](nb::handle text) { return parse_text(text, base64_form); }, "text"_a,
          "Parses exactly 16 characters of standard base64 (A-Z a-z 0-9 + /, no padding). Raises "
          "oid.Error: invalid_length, or invalid_base64 with the position of the bad character.")
      .def_static("from_datetime", &min_for, "time"_a,
                  "The smallest id of the second `time` falls in (zeros after the time), for a "
                  "$gte bound, as bson.ObjectId.from_datetime. `time`: a datetime (naive means "
                  "UTC), a date, Unix seconds or an ISO-8601 str. Raises oid.Error "
                  "(time_out_of_range) outside 1970-01-01T00:00:00Z..2106-02-07T06:28:15Z.")
      .def_static(
          "is_valid",
          [](nb::handle h) {
            if (PyUnicode_Check(h.ptr())) {
              Py_ssize_t n = 0;
              const char* p = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
              if (p == nullptr) {
                PyErr_Clear();  // lone surrogates: not an id either
                return false;
              }
              return object_id::from_hex({p, static_cast<std::size_t>(n)}).has_value();
            }
            if (PyBytes_Check(h.ptr())) return PyBytes_GET_SIZE(h.ptr()) == object_id::size;
            return as_object_id(h).has_value();
          },
          "oid"_a.none(),
          "True when ObjectId(oid) would succeed for this str, bytes or id (not None).")
      .def_prop_ro("binary", &to_bytes, "The 12 bytes, as bson.ObjectId.binary.")
      .def_prop_ro(
          "timestamp", [](const object_id& id) { return id.timestamp(); },
          "The creation time as unsigned Unix seconds (bytes 0-3).")
      .def_prop_ro(
          "generation_time", [](const object_id& id) { return utc_datetime(id.timestamp()); },
          "The creation time, to the second, as an aware datetime in UTC.")
      .def(
          "to_hex", [](const object_id& id) { return id.to_hex(); },
          "24 lowercase hex digits (also str(id)).")
      .def(
          "to_base64", [](const object_id& id) { return id.to_base64(); },
          "16 characters of standard base64.")
      .def(
          "to_bson",
          [](const object_id& id) {
            return nb::module_::import_("bson").attr("ObjectId")(to_bytes(id));
          },
          "The same id as a bson.ObjectId (imports PyMongo's bson; ImportError without it).")
      .def("__bytes__", &to_bytes)
      .def("__str__", [](const object_id& id) { return id.to_hex(); })
      .def("__repr__", [](const object_id& id) { return "ObjectId('" + id.to_hex() + "')"; })
      // bson.ObjectId hashes its bytes; equal objects must hash equal, across the two types too.
      .def("__hash__",
           [](const object_id& id) {
             const Py_hash_t h = PyObject_Hash(to_bytes(id).ptr());
             if (h == -1) throw nb::python_error();
             return h;
           })
      // With nb::is_operator, a call no overload takes (None, say) returns NotImplemented, and
      // compare() does the same for objects that are not ids: Python then asks the other side.
      .def(
          "__eq__",
          [](const object_id& a, nb::handle b) {
            return compare(a, b, std::equal_to<object_id>());
          },
          nb::is_operator())
      .def(
          "__ne__",
          [](const object_id& a, nb::handle b) {
            return compare(a, b, std::not_equal_to<object_id>());
          },
          nb::is_operator())
      .def(
          "__lt__",
          [](const object_id& a, nb::handle b) { return compare(a, b, std::less<object_id>()); },
          nb::is_operator())
      .def(
          "__le__",
          [](const object_id& a, nb::handle b) {
            return compare(a, b, std::less_equal<object_id>());
          },
          nb::is_operator())
      .def(
          "__gt__",
          [](const object_id& a, nb::handle b) { return compare(a, b, std::greater<object_id>()); },
          nb::is_operator())
      .def(
          "__ge__",
          [](const object_id& a, nb::handle b) {
            return compare(a, b, std::greater_equal<object_id>());
          },
          nb::is_operator())
      // Immutable: a copy is the same object.
      .def("__copy__", [](nb::handle self) { return nb::borrow(self); })
      .def(
          "__deepcopy__", [](nb::handle self, nb::handle) { return nb::borrow(self); }, "memo"_a)
      // Pickled as ObjectId(<12 bytes>), which every pickle protocol (0 to 5) can express.
      .def("__reduce__", [](nb::handle self) {
        return nb::make_tuple(self.type(), nb::make_tuple(to_bytes(nb::cast<object_id>(self))));
      });

  m.def(
      "generate", [] { return oid::generate(); },
      "A new ObjectId from the process-wide generator: thread-safe, and a child made by "
      "os.fork() draws its own random value, so it never repeats its parent's ids.");
  m.def("generate_batch", &generate_batch, "n"_a, nb::kw_only(), "as_bytes"_a = false,
        "n new ObjectIds with consecutive counters: a list, or with as_bytes=True one bytes "
        "object of 12 * n bytes (id i at [12*i, 12*i+12]). Releases the GIL for large n.");
  m.def(
      "from_hex", [](nb::handle text) { return parse_text(text, hex_form); }, "text"_a,
      "ObjectId.from_hex: 24 hex digits; oid.Error (invalid_length, invalid_hex at `offset`).");
  m.def(
      "from_base64", [](nb::handle text) { return parse_text(text, base64_form); }, "text"_a,
      "ObjectId.from_base64: 16 base64 characters; oid.Error (invalid_length, invalid_base64 at "
      "`offset`).");
  m.def(
      "range",
      [](nb::handle start, nb::handle end) { return nb::make_tuple(min_for(start), min_for(end)); },
      "start"_a, "end"_a,
      R"(The ids that bound the documents created in [start, end): a pair (lo, hi) for the
filter {"_id": {"$gte": lo, "$lt": hi}}. Each is the smallest id of its second; times are a
datetime (naive means UTC), a date (midnight UTC), Unix seconds or an ISO-8601 str such as
"2010-10-01" or "2010-10-01T02:00:00+02:00", and fractions of a second are dropped. Raises
oid.Error: invalid_time (with the position in the str), time_out_of_range.)");
}

}  // namespace oid::python
