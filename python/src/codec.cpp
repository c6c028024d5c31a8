// codec.cpp: oid.bson.dumps and oid.bson.loads, between Python objects and BSON bytes.
//
// dumps walks the Python objects straight into one oid::bson::builder; loads validates the whole
// input first (validate(), the one door for untrusted bytes) and then walks the document view,
// making each Python object as it goes. Both write and read what PyMongo's bson.encode and
// bson.decode do, so that the bytes are the same byte for byte (docs/python.md has the table):
// the types Python lacks are PyMongo's (bson.Int64, Decimal128, Binary, Timestamp, Regex, Code,
// MinKey, MaxKey, DBRef), recognised on the way in by the `_type_marker` PyMongo's classes carry,
// as PyMongo's own encoder does, so dumps never imports PyMongo; loads imports it the first time
// a document holds such a value.
//
// Hostile input: loads reads only what validate() accepted, and both directions stop at the
// limits validate() enforces (nesting 100 deep, 16 MiB), so the C++ recursion is at most 101
// frames deep and a cyclic Python structure is too_deep rather than a stack overflow. Python
// objects can run Python code while they are read (a dict's keys' __eq__, a Mapping's items(),
// a datetime's tzinfo): every object read is held by a strong reference while it is used, and a
// list or dict that changes size meanwhile is an error, not a read past its end.
#include "codec.hpp"

#include <Python.h>
#include <datetime.h>
#include <nanobind/stl/string.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>
#include <oid/detail/endian.hpp>
#include <oid/objectid/object_id.hpp>
#include <string>
#include <string_view>

#include "bindings.hpp"
#include "buffers.hpp"
#include "errors.hpp"

namespace oid::python {

namespace {

using namespace nb::literals;
using oid::bson::element;
using oid::bson::type;

// --- Classes ----------------------------------------------------------------------------------

// Python objects the codec compares with or calls, kept for the life of the process (as
// errors.cpp keeps oid.Error): releasing them at interpreter shutdown would race the module's
// own teardown.
struct python_objects {
  PyTypeObject* object_id = nullptr;  // oid.ObjectId
  PyObject* mapping = nullptr;        // collections.abc.Mapping
  PyObject* pattern = nullptr;        // re.Pattern
  PyObject* type_marker = nullptr;    // "_type_marker"
  PyObject* id_key = nullptr;         // "_id"
};
python_objects objects;

// PyMongo's classes, imported the first time loads needs one.
struct pymongo_classes {
  bool tried = false;
  bool available = false;
  PyObject* int64 = nullptr;
  PyObject* decimal128 = nullptr;
  PyObject* binary = nullptr;
  PyObject* timestamp = nullptr;
  PyObject* regex = nullptr;
  PyObject* code = nullptr;
  PyObject* dbref = nullptr;
  PyObject* min_key = nullptr;
  PyObject* max_key = nullptr;
};
pymongo_classes pymongo;

// Imports PyMongo's bson once. Its absence (ImportError, or a module of that name without the
// classes) is remembered; any other failure while importing it is raised.
const pymongo_classes& pymongo_types() {
  if (pymongo.tried) return pymongo;
  nb::object module = nb::steal(PyImport_ImportModule("bson"));
  if (!module.is_valid()) {
    if (!PyErr_ExceptionMatches(PyExc_ImportError)) throw nb::python_error();
    PyErr_Clear();
    pymongo.tried = true;
    return pymongo;
  }
  PyObject** slots[] = {&pymongo.int64,     &pymongo.decimal128, &pymongo.binary,
                        &pymongo.timestamp, &pymongo.regex,      &pymongo.code,
                        &pymongo.dbref,     &pymongo.min_key,    &pymongo.max_key};
  const char* names[] = {"Int64", "Decimal128", "Binary", "Timestamp", "Regex",
                         "Code",  "DBRef",      "MinKey", "MaxKey"};
  bool all = true;
  for (std::size_t i = 0; i < std::size(slots); ++i) {
    *slots[i] = PyObject_GetAttrString(module.ptr(), names[i]);  // kept: see python_objects
    if (*slots[i] == nullptr) {
      PyErr_Clear();
      all = false;
    }
  }
  pymongo.tried = true;
  pymongo.available = all;
  return pymongo;
}

std::string type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

// --- Times ------------------------------------------------------------------------------------

// datetime.min and datetime.max in Unix milliseconds: 0001-01-01 and 9999-12-31T23:59:59.999.
constexpr std::int64_t min_datetime_ms = -62135596800000;
constexpr std::int64_t max_datetime_ms = 253402300799999;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

std::int64_t datetime_ms(PyObject* o) {
  using namespace std::chrono;
  const sys_days day =
      year{PyDateTime_GET_YEAR(o)} / PyDateTime_GET_MONTH(o) / PyDateTime_GET_DAY(o);
  std::int64_t us = (static_cast<std::int64_t>(day.time_since_epoch().count()) * 86400 +
                     PyDateTime_DATE_GET_HOUR(o) * 3600 + PyDateTime_DATE_GET_MINUTE(o) * 60 +
                     PyDateTime_DATE_GET_SECOND(o)) *
                        1000000 +
                    PyDateTime_DATE_GET_MICROSECOND(o);
  const auto* dt = reinterpret_cast<PyDateTime_DateTime*>(o);
  if (dt->hastzinfo && dt->tzinfo != Py_None && dt->tzinfo != PyDateTime_TimeZone_UTC) {
    nb::object offset = nb::steal(PyObject_CallMethod(o, "utcoffset", nullptr));
    if (!offset.is_valid()) throw nb::python_error();
    if (!offset.is_none()) {
      if (!PyDelta_Check(offset.ptr())) {
        raise(PyExc_TypeError, "utcoffset() returned " + type_name(offset.ptr()));
      }
      us -= (static_cast<std::int64_t>(PyDateTime_DELTA_GET_DAYS(offset.ptr())) * 86400 +
             PyDateTime_DELTA_GET_SECONDS(offset.ptr())) *
                1000000 +
            PyDateTime_DELTA_GET_MICROSECONDS(offset.ptr());
    }
  }
  return floor_div(us, 1000);
}

nb::object utc_datetime(std::int64_t ms) {
  using namespace std::chrono;
  if (ms < min_datetime_ms || ms > max_datetime_ms) return {};
  const sys_time<milliseconds> t{milliseconds{ms}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  nb::object out = nb::steal(PyDateTimeAPI->DateTime_FromDateAndTime(
      static_cast<int>(ymd.year()), static_cast<int>(static_cast<unsigned>(ymd.month())),
      static_cast<int>(static_cast<unsigned>(ymd.day())), static_cast<int>(hms.hours().count()),
      static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
      static_cast<int>(hms.subseconds().count()) * 1000, PyDateTime_TimeZone_UTC,
      PyDateTimeAPI->DateTimeType));
  if (!out.is_valid()) throw nb::python_error();
  return out;
}

namespace {

// --- Encoding ---------------------------------------------------------------------------------

// A value dumps() cannot write. Thrown inside the walk and caught once per enclosing element on
// the way out, each adding its key, so that the message names the path ('["a"][3]') at no cost
// when nothing fails.
struct encode_failure {
  PyObject* type;  // the Python exception class; nullptr for oid.Error with `error`
  oid::error error;
  std::string message;
  std::string path;
};

[[noreturn]] void fail(PyObject* type, std::string message) {
  throw encode_failure{type, {}, std::move(message), {}};
}
[[noreturn]] void fail(const oid::error& e, std::string message = {}) {
  throw encode_failure{nullptr, e, std::move(message), {}};
}

void check(const result<void>& r) {
  if (!r) fail(r.error());
}

// The UTF-8 form of a str (cached inside it by CPython). A lone surrogate has none.
std::string_view utf8(PyObject* s) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (p == nullptr) {
    PyErr_Clear();
    fail(oid::error{errc::invalid_utf8, 0}, " (a str with a lone surrogate has no UTF-8 form)");
  }
  return {p, static_cast<std::size_t>(n)};
}

std::string_view bytes_of(PyObject* b) {
  return {PyBytes_AS_STRING(b), static_cast<std::size_t>(PyBytes_GET_SIZE(b))};
}

std::span<const std::uint8_t> as_span(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

nb::object attr(PyObject* o, const char* name) {
  nb::object v = nb::steal(PyObject_GetAttrString(o, name));
  if (!v.is_valid()) throw nb::python_error();
  return v;
}

// A Python int as int64; an int beyond int64 is the OverflowError PyMongo raises.
std::int64_t int64_of(PyObject* o) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0) fail(PyExc_OverflowError, "BSON holds ints up to 8 bytes (-2**63 to 2**63-1)");
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

std::uint32_t uint32_of(PyObject* o, const char* what) {
  const std::int64_t v = int64_of(o);
  if (v < 0 || v > std::numeric_limits<std::uint32_t>::max()) {
    fail(PyExc_ValueError, std::string(what) + " must be 0 to 2**32-1, not " + std::to_string(v));
  }
  return static_cast<std::uint32_t>(v);
}

// The option letters of a Python re flags int, as PyMongo writes them: i l m s u x.
std::string regex_options(std::int64_t flags) {
  std::string out;
  constexpr std::pair<int, char> letters[] = {{2, 'i'},  {4, 'l'},  {8, 'm'},
                                              {16, 's'}, {32, 'u'}, {64, 'x'}};
  for (const auto& [bit, letter] : letters) {
    if ((flags & bit) != 0) out += letter;
  }
  return out;
}

// PyMongo's _type_marker values.
enum marker : long {
  no_marker = -1,
  binary_marker = 5,
  object_id_marker = 7,
  datetime_ms_marker = 9,
  regex_marker = 11,
  code_marker = 13,
  timestamp_marker = 17,
  int64_marker = 18,
  decimal128_marker = 19,
  dbref_marker = 100,
  raw_document_marker = 101,
  max_key_marker = 127,
  min_key_marker = 255,
};

long marker_of(PyObject* o) {
  nb::object m = nb::steal(PyObject_GetAttr(o, objects.type_marker));
  if (!m.is_valid()) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw nb::python_error();
    PyErr_Clear();
    return no_marker;
  }
  if (!PyLong_CheckExact(m.ptr())) return no_marker;
  const long v = PyLong_AsLong(m.ptr());
  if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  return v;
}

bool is_instance(PyObject* o, PyObject* cls) {
  const int r = PyObject_IsInstance(o, cls);
  if (r < 0) throw nb::python_error();
  return r == 1;
}

oid::bson::document_view raw_document(PyObject* o) {
  nb::object raw = attr(o, "raw");
  if (!PyBytes_Check(raw.ptr())) fail(PyExc_TypeError, "RawBSONDocument.raw must be bytes");
  auto view = oid::bson::validate(as_span(bytes_of(raw.ptr())));
  if (!view) fail(view.error(), " in a RawBSONDocument" + at_byte(view.error().offset));
  return *view;  // raw is immutable bytes and the owner holds it
}

class encoder {
 public:
  nb::object dumps(PyObject* doc) {
    try {
      if (marker_of_document(doc) == raw_document_marker) {
        nb::object raw = attr(doc, "raw");
        (void)raw_document(doc);
        nb::object copy = nb::steal(
            PyBytes_FromStringAndSize(PyBytes_AS_STRING(raw.ptr()), PyBytes_GET_SIZE(raw.ptr())));
        if (!copy.is_valid()) throw nb::python_error();
        return copy;
      }
      if (!PyDict_Check(doc) && !is_instance(doc, objects.mapping)) {
        raise(PyExc_TypeError, "dumps() takes a dict or another Mapping, not " + type_name(doc));
      }
      elements(doc, true, 0);
    } catch (encode_failure& f) {
      const std::string where = f.path.empty() ? "" : " at " + f.path;
      if (f.type == nullptr) raise_error(f.error, f.message + where);
      raise(f.type, f.message + where);
    }
    return new_bytes(b_.view().bytes());
  }

 private:
  static long marker_of_document(PyObject* doc) {
    return PyDict_CheckExact(doc) ? no_marker : marker_of(doc);
  }

  // The elements of a mapping into the open document. At the top level `_id` goes first, as
  // PyMongo writes it.
  void elements(PyObject* m, bool top, std::size_t depth) {
    if (PyDict_CheckExact(m)) {
      if (top) {
        nb::object id = nb::borrow(PyDict_GetItemWithError(m, objects.id_key));
        if (id.is_valid()) {
          member(objects.id_key, id.ptr(), depth);
        } else if (PyErr_Occurred()) {
          throw nb::python_error();
        }
      }
      const Py_ssize_t size = PyDict_GET_SIZE(m);
      Py_ssize_t pos = 0;
      PyObject* k = nullptr;
      PyObject* v = nullptr;
      while (PyDict_Next(m, &pos, &k, &v)) {
        nb::object key = nb::borrow(k), value = nb::borrow(v);  // held while Python code runs
        if (top && is_id(k)) continue;
        member(k, v, depth);
        if (PyDict_GET_SIZE(m) != size) raise(PyExc_RuntimeError, "dictionary changed size");
      }
      return;
    }
    if (top) {
      const int has = PySequence_Contains(m, objects.id_key);
      if (has < 0) throw nb::python_error();
      if (has == 1) {
        nb::object id = nb::steal(PyObject_GetItem(m, objects.id_key));
        if (!id.is_valid()) throw nb::python_error();
        member(objects.id_key, id.ptr(), depth);
      }
    }
    nb::object items = nb::steal(PyMapping_Items(m));  // a new list of (key, value) pairs
    if (!items.is_valid()) throw nb::python_error();
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.ptr()); ++i) {
      PyObject* pair = PyList_GET_ITEM(items.ptr(), i);
      if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        raise(PyExc_TypeError, "items() of " + type_name(m) + " must give (key, value) pairs");
      }
      PyObject* k = PyTuple_GET_ITEM(pair, 0);
      if (top && is_id(k)) continue;
      member(k, PyTuple_GET_ITEM(pair, 1), depth);
    }
  }

  static bool is_id(PyObject* k) {
    if (!PyUnicode_Check(k)) return false;
    const int eq = PyUnicode_Compare(k, objects.id_key);
    if (eq == -1 && PyErr_Occurred()) throw nb::python_error();
    return eq == 0;
  }

  // One key and value of a mapping; a failure below adds the key to its path.
  void member(PyObject* k, PyObject* v, std::size_t depth) {
    if (!PyUnicode_Check(k)) {
      nb::object r = nb::steal(PyObject_Repr(k));
      fail(PyExc_TypeError, "documents have only str keys, not " + type_name(k) + " (" +
                                (r.is_valid() ? nb::cast<std::string>(r) : "?") + ")");
    }
    try {
      value(utf8(k), v, depth);
      check_size();
    } catch (encode_failure& f) {
      nb::object r = nb::steal(PyObject_Repr(k));
      if (!r.is_valid()) throw nb::python_error();
      f.path.insert(0, "[" + nb::cast<std::string>(r) + "]");
      throw;
    }
  }

  // Checked after each element: the memory used stays within one element of the limit.
  void check_size() const {
    if (b_.size() > max_document_size) {
      fail(oid::error{errc::too_large, 0},
           " (over " + std::to_string(max_document_size) + " bytes)");
    }
  }

  // The items of a list or tuple into the open array, keys "0", "1", ...
  void items(PyObject* seq, std::size_t depth) {
    char key[24];
    for (Py_ssize_t i = 0;; ++i) {
      // Re-read every time: the list may change while an item's conversion runs Python code.
      if (i >= PySequence_Fast_GET_SIZE(seq)) break;
      nb::object item = nb::borrow(PySequence_Fast_GET_ITEM(seq, i));
      const auto end = std::to_chars(key, key + sizeof key, i).ptr;
      try {
        value({key, static_cast<std::size_t>(end - key)}, item.ptr(), depth);
        check_size();
      } catch (encode_failure& f) {
        f.path.insert(0, "[" + std::to_string(i) + "]");
        throw;
      }
    }
  }

  // A document, array or scope nested in one at `depth` is one level deeper.
  static void check_depth(std::size_t depth) {
    if (depth + 1 > max_document_depth) {
      fail(oid::error{errc::too_deep, 0},
           " (more than " + std::to_string(max_document_depth) + " levels; a cycle?)");
    }
  }

  void open_nested(type t, std::string_view key, std::size_t depth) {
    check_depth(depth);
    check(t == type::array ? b_.try_open_array(key) : b_.try_open_document(key));
  }

  void document(std::string_view key, PyObject* m, std::size_t depth) {
    open_nested(type::document, key, depth);
    elements(m, false, depth + 1);
    check(b_.try_close());
  }

  void array(std::string_view key, PyObject* seq, std::size_t depth) {
    open_nested(type::array, key, depth);
    // A list as it is (its size re-read for each item), a tuple as it is; anything else a list.
    items(seq, depth + 1);
    check(b_.try_close());
  }

  void integer(std::string_view key, PyObject* o) {
    const std::int64_t v = int64_of(o);
    if (v >= std::numeric_limits<std::int32_t>::min() &&
        v <= std::numeric_limits<std::int32_t>::max()) {
      check(b_.try_append_int32(key, static_cast<std::int32_t>(v)));
    } else {
      check(b_.try_append_int64(key, v));
    }
  }

  void regex(std::string_view key, PyObject* o) {
    nb::object pattern = attr(o, "pattern");
    nb::object flags = attr(o, "flags");
    std::string_view p;
    if (PyUnicode_Check(pattern.ptr())) {
      p = utf8(pattern.ptr());
    } else if (PyBytes_Check(pattern.ptr())) {
      p = bytes_of(pattern.ptr());
      if (auto ok = oid::bson::check_utf8(p); !ok) fail(ok.error(), " in a regex pattern");
    } else {
      fail(PyExc_TypeError,
           "a regex pattern must be str or bytes, not " + type_name(pattern.ptr()));
    }
    if (!PyLong_Check(flags.ptr())) fail(PyExc_TypeError, "regex flags must be an int");
    check(b_.try_append_regex(key, p, regex_options(int64_of(flags.ptr()))));
  }

  void code(std::string_view key, PyObject* o, std::size_t depth) {
    nb::object scope = attr(o, "scope");
    const std::string_view text = utf8(o);
    if (scope.is_none()) {
      check(b_.try_append_javascript(key, text));
      return;
    }
    if (!PyDict_Check(scope.ptr()) && !is_instance(scope.ptr(), objects.mapping)) {
      fail(PyExc_TypeError, "a Code scope must be a Mapping, not " + type_name(scope.ptr()));
    }
    check_depth(depth);
    check(b_.try_open_javascript_with_scope(key, text));
    elements(scope.ptr(), false, depth + 1);
    check(b_.try_close());
  }

  // A value of one of PyMongo's classes, by its marker; false for an unknown marker.
  bool marked(std::string_view key, PyObject* o, long m, std::size_t depth) {
    switch (m) {
    case binary_marker: {
      if (!PyBytes_Check(o)) return false;
      nb::object subtype = attr(o, "subtype");
      const std::int64_t s = int64_of(subtype.ptr());
      if (s < 0 || s > 255) fail(PyExc_ValueError, "a Binary subtype must be 0 to 255");
      check(b_.try_append_binary(key, static_cast<std::uint8_t>(s), as_span(bytes_of(o))));
      return true;
    }
    case object_id_marker: {
      nb::object binary = attr(o, "binary");
      if (!PyBytes_Check(binary.ptr())) fail(PyExc_TypeError, "ObjectId.binary must be bytes");
      auto id = oid::object_id::from_bytes(as_span(bytes_of(binary.ptr())));
      if (!id)
        fail(id.error(),
             " (ObjectId.binary has " + std::to_string(PyBytes_GET_SIZE(binary.ptr())) + " bytes)");
      check(b_.try_append_object_id(key, *id));
      return true;
    }
    case datetime_ms_marker: {
      nb::object ms = nb::steal(PyNumber_Long(o));
      if (!ms.is_valid()) throw nb::python_error();
      check(b_.try_append_date_time(key, int64_of(ms.ptr())));
      return true;
    }
    case regex_marker: regex(key, o); return true;
    case code_marker:
      if (!PyUnicode_Check(o)) return false;
      code(key, o, depth);
      return true;
    case timestamp_marker: {
      const std::uint32_t t = uint32_of(attr(o, "time").ptr(), "Timestamp.time");
      const std::uint32_t i = uint32_of(attr(o, "inc").ptr(), "Timestamp.inc");
      check(b_.try_append_timestamp(key, {t, i}));
      return true;
    }
    case int64_marker:
      if (!PyLong_Check(o)) return false;
      check(b_.try_append_int64(key, int64_of(o)));
      return true;
    case decimal128_marker: {
      nb::object bid = attr(o, "bid");
      if (!PyBytes_Check(bid.ptr()) || PyBytes_GET_SIZE(bid.ptr()) != 16) {
        fail(PyExc_TypeError, "Decimal128.bid must be 16 bytes");
      }
      const auto* p = reinterpret_cast<const std::uint8_t*>(PyBytes_AS_STRING(bid.ptr()));
      oid::bson::decimal128 d;
      d.low = oid::detail::load_le_u64(p);
      d.high = oid::detail::load_le_u64(p + 8);
      check(b_.try_append_decimal128(key, d));
      return true;
    }
    case dbref_marker: {
      nb::object doc = nb::steal(PyObject_CallMethod(o, "as_doc", nullptr));
      if (!doc.is_valid()) throw nb::python_error();
      document(key, doc.ptr(), depth);
      return true;
    }
    case raw_document_marker: {
      check_depth(depth);
      nb::object raw = attr(o, "raw");  // holds the bytes the view reads
      check(b_.try_append_document(key, raw_document(o)));
      return true;
    }
    case max_key_marker: check(b_.try_append_max_key(key)); return true;
    case min_key_marker: check(b_.try_append_min_key(key)); return true;
    default: return false;
    }
  }

  void value(std::string_view key, PyObject* o, std::size_t depth) {
    PyTypeObject* t = Py_TYPE(o);
    // The exact built-in types first (the common case: one pointer comparison each), then
    // oid.ObjectId, then PyMongo's markers, then subclasses of the built-in types, in PyMongo's
    // order.
    if (t == &PyUnicode_Type) {
      check(b_.try_append_string(key, utf8(o)));
    } else if (t == &PyLong_Type) {
      integer(key, o);
    } else if (t == &PyFloat_Type) {
      check(b_.try_append_double(key, PyFloat_AS_DOUBLE(o)));
    } else if (t == &PyBool_Type) {
      check(b_.try_append_bool(key, o == Py_True));
    } else if (o == Py_None) {
      check(b_.try_append_null(key));
    } else if (t == &PyDict_Type) {
      document(key, o, depth);
    } else if (t == &PyList_Type || t == &PyTuple_Type) {
      array(key, o, depth);
    } else if (t == objects.object_id) {
      check(b_.try_append_object_id(key, *nb::inst_ptr<oid::object_id>(o)));
    } else if (t == PyDateTimeAPI->DateTimeType) {
      check(b_.try_append_date_time(key, datetime_ms(o)));
    } else if (t == &PyBytes_Type) {
      check(b_.try_append_binary(key, 0, as_span(bytes_of(o))));
    } else if (!marked(key, o, marker_of(o), depth)) {
      subclass(key, o, depth);
    }
  }

  void subclass(std::string_view key, PyObject* o, std::size_t depth) {
    if (PyLong_Check(o)) {  // bool cannot be subclassed
      integer(key, o);
    } else if (PyFloat_Check(o)) {
      check(b_.try_append_double(key, PyFloat_AS_DOUBLE(o)));
    } else if (PyUnicode_Check(o)) {
      check(b_.try_append_string(key, utf8(o)));
    } else if (PyBytes_Check(o)) {
      check(b_.try_append_binary(key, 0, as_span(bytes_of(o))));
    } else if (PyDateTime_Check(o)) {
      check(b_.try_append_date_time(key, datetime_ms(o)));
    } else if (PyDict_Check(o) || is_instance(o, objects.mapping)) {
      document(key, o, depth);
    } else if (PyList_Check(o) || PyTuple_Check(o)) {
      nb::object seq = nb::steal(PySequence_Fast(o, "a list"));  // a list subclass as it is
      if (!seq.is_valid()) throw nb::python_error();
      array(key, seq.ptr(), depth);
    } else if (is_instance(o, objects.pattern)) {
      regex(key, o);
    } else if (PyObject_TypeCheck(o, objects.object_id)) {
      check(b_.try_append_object_id(key, *nb::inst_ptr<oid::object_id>(o)));
    } else {
      fail(PyExc_TypeError, "cannot encode an object of type " + type_name(o) + " as BSON");
    }
  }

  oid::bson::builder b_{256};
};

// --- Decoding ---------------------------------------------------------------------------------

class decoder {
 public:
  decoder(const std::uint8_t* base, std::uint64_t stream_offset)
      : base_(base), stream_offset_(stream_offset) {}

  // `dbref`: a document with "$ref" may be a DBRef (an embedded document or an array's item; not
  // the top level, nor a code-with-scope scope, as PyMongo reads them).
  nb::object document(oid::bson::document_view doc, bool dbref) {
    nb::object dict = nb::steal(PyDict_New());
    if (!dict.is_valid()) throw nb::python_error();
    bool has_ref = false;
    for (const element& e : doc) {
      const auto k = e.key();
      nb::object key = text(k);
      nb::object v = value(e);
      if (PyDict_SetItem(dict.ptr(), key.ptr(), v.ptr()) != 0) throw nb::python_error();
      has_ref = has_ref || k == "$ref";
    }
    if (has_ref && dbref) return maybe_dbref(std::move(dict));
    return dict;
  }

 private:
  std::uint64_t offset_of(const element& e) const {
    return stream_offset_ + static_cast<std::uint64_t>(e.raw().data() - base_);
  }

  static nb::object text(std::string_view s) {
    nb::object out =
        nb::steal(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict"));
    if (!out.is_valid()) throw nb::python_error();  // validate() checked: not expected
    return out;
  }

  static nb::object bytes(std::span<const std::uint8_t> b) { return new_bytes(b); }

  static nb::object checked(PyObject* o) {
    if (o == nullptr) throw nb::python_error();
    return nb::steal(o);
  }

  // PyMongo's classes, or ImportError naming the value that needs them.
  const pymongo_classes& need_pymongo(const element& e, const char* what) const {
    const auto& p = pymongo_types();
    if (!p.available) {
      raise(PyExc_ImportError, std::string("loads: the ") + what + " at byte " +
                                   std::to_string(offset_of(e)) +
                                   " needs PyMongo's bson package (pip install pymongo)");
    }
    return p;
  }

  // A subdocument with "$ref" (a str) and "$id" (and "$db" a str or absent) is a DBRef, as
  // PyMongo reads it; any other shape stays a dict.
  static nb::object maybe_dbref(nb::object dict) {
    const auto& p = pymongo_types();
    if (!p.available) return dict;
    PyObject* ref = PyDict_GetItemString(dict.ptr(), "$ref");
    PyObject* id = PyDict_GetItemString(dict.ptr(), "$id");
    PyObject* db = PyDict_GetItemString(dict.ptr(), "$db");
    if (ref == nullptr || !PyUnicode_Check(ref) || id == nullptr ||
        (db != nullptr && !PyUnicode_Check(db))) {
      return dict;
    }
    nb::object r = nb::borrow(ref), i = nb::borrow(id);
    nb::object d = db == nullptr ? nb::none() : nb::borrow(db);
    for (const char* k : {"$ref", "$id", "$db"}) {
      if (PyDict_GetItemString(dict.ptr(), k) != nullptr && PyDict_DelItemString(dict.ptr(), k)) {
        throw nb::python_error();
      }
    }
    return checked(
        PyObject_CallFunctionObjArgs(p.dbref, r.ptr(), i.ptr(), d.ptr(), dict.ptr(), nullptr));
  }

  nb::object array(oid::bson::document_view arr) {
    nb::object list = nb::steal(PyList_New(0));
    if (!list.is_valid()) throw nb::python_error();
    for (const element& e : arr) {
      nb::object v = value(e);
      if (PyList_Append(list.ptr(), v.ptr()) != 0) throw nb::python_error();
    }
    return list;
  }

  nb::object object_id(const oid::object_id& id) const {
    nb::object out = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(objects.object_id)));
    new (nb::inst_ptr<oid::object_id>(out)) oid::object_id(id);
    nb::inst_mark_ready(out);
    return out;
  }

  // Each case reads the value with the getter of the type it switched on, which cannot fail for
  // a validated document.
  nb::object value(const element& e) {
    switch (e.type()) {
    case type::double_: return checked(PyFloat_FromDouble(*e.get_double()));
    case type::string: return text(*e.get_string());
    case type::document: return document(*e.get_document(), true);
    case type::array: return array(*e.get_array());
    case type::binary: {
      const auto b = *e.get_binary();
      if (b.subtype == 0) return bytes(b.bytes);
      const auto& p = need_pymongo(e, "binary value");
      return checked(PyObject_CallFunction(p.binary, "Ni", bytes(b.bytes).release().ptr(),
                                           static_cast<int>(b.subtype)));
    }
    case type::undefined:
    case type::null: return nb::none();
    case type::object_id: return object_id(*e.get_object_id());
    case type::boolean: return nb::bool_(*e.get_bool());
    case type::date_time: {
      const std::int64_t ms = *e.get_date_time();
      nb::object dt = utc_datetime(ms);
      if (!dt.is_valid()) {
        raise_error(oid::error{errc::time_out_of_range, static_cast<std::size_t>(offset_of(e))},
                    " (a datetime of " + std::to_string(ms) +
                        " ms, outside Python's years 1 to 9999) at byte " +
                        std::to_string(offset_of(e)));
      }
      return dt;
    }
    case type::regex: {
      const auto r = *e.get_regex();
      const auto& p = need_pymongo(e, "regular expression");
      return checked(PyObject_CallFunctionObjArgs(p.regex, text(r.pattern).ptr(),
                                                  text(r.options).ptr(), nullptr));
    }
    case type::db_pointer: {
      const auto d = *e.get_db_pointer();
      const auto& p = need_pymongo(e, "DBPointer");
      return checked(
          PyObject_CallFunctionObjArgs(p.dbref, text(d.ref).ptr(), object_id(d.id).ptr(), nullptr));
    }
    case type::javascript: {
      const auto& p = need_pymongo(e, "JavaScript code");
      return checked(PyObject_CallOneArg(p.code, text(*e.get_javascript()).ptr()));
    }
    case type::symbol: return text(*e.get_symbol());
    case type::javascript_with_scope: {
      const auto c = *e.get_javascript_with_scope();
      const auto& p = need_pymongo(e, "JavaScript code with scope");
      return checked(PyObject_CallFunctionObjArgs(p.code, text(c.code).ptr(),
                                                  document(c.scope, false).ptr(), nullptr));
    }
    case type::int32: return checked(PyLong_FromLong(*e.get_int32()));
    case type::timestamp: {
      const auto ts = *e.get_timestamp();
      const auto& p = need_pymongo(e, "timestamp");
      return checked(PyObject_CallFunction(p.timestamp, "kk", static_cast<unsigned long>(ts.t),
                                           static_cast<unsigned long>(ts.i)));
    }
    case type::int64: {
      nb::object v = checked(PyLong_FromLongLong(*e.get_int64()));
      const auto& p = pymongo_types();
      if (!p.available) return v;  // a plain int without PyMongo
      return checked(PyObject_CallOneArg(p.int64, v.ptr()));
    }
    case type::decimal128: {
      const auto& p = need_pymongo(e, "decimal128 value");
      return checked(
          PyObject_CallMethod(p.decimal128, "from_bid", "N", bytes(e.raw_value()).release().ptr()));
    }
    case type::min_key: return checked(PyObject_CallNoArgs(need_pymongo(e, "MinKey").min_key));
    case type::max_key: return checked(PyObject_CallNoArgs(need_pymongo(e, "MaxKey").max_key));
    }
    // validate() admits no other type byte.
    raise_error(oid::error{errc::unknown_type, static_cast<std::size_t>(offset_of(e))},
                at_byte(offset_of(e)));
  }

  const std::uint8_t* base_;
  std::uint64_t stream_offset_;
};

nb::object dumps(nb::handle doc) { return encoder().dumps(doc.ptr()); }

nb::object loads(nb::handle data) {
  // Copied unless it is bytes, whatever its size: making the objects runs Python code, which
  // may let another thread change a bytearray under the reader (buffers.hpp).
  input_bytes in(data, "loads", 0);
  const auto view = run(in.large(), [&] { return oid::bson::validate(in.bytes()); });
  if (!view) raise_error(view.error(), at_byte(view.error().offset));
  return decode_document(*view, 0);
}

}  // namespace

nb::object decode_document(oid::bson::document_view doc, std::uint64_t stream_offset) {
  return decoder(doc.data(), stream_offset).document(doc, false);
}

void bind_codec(nb::module_& bson) {
  PyDateTime_IMPORT;
  if (PyDateTimeAPI == nullptr) throw nb::python_error();
  objects.object_id = reinterpret_cast<PyTypeObject*>(nb::type<oid::object_id>().ptr());
  objects.mapping =
      nb::object(nb::module_::import_("collections.abc").attr("Mapping")).release().ptr();
  objects.pattern = nb::object(nb::module_::import_("re").attr("Pattern")).release().ptr();
  objects.type_marker = PyUnicode_InternFromString("_type_marker");
  objects.id_key = PyUnicode_InternFromString("_id");
  if (objects.type_marker == nullptr || objects.id_key == nullptr) throw nb::python_error();

  bson.def("dumps", &dumps, "doc"_a,
           R"(The BSON bytes of `doc`, a dict (or another Mapping), as PyMongo's bson.encode
writes them: `_id` first at the top level; str, int (int32 when it fits, else int64),
float, bool, None, dict and other Mappings, list and tuple, bytes (binary subtype 0),
datetime (naive means UTC; milliseconds, floored), oid.ObjectId and re.Pattern, and
PyMongo's ObjectId, Int64, Decimal128, Binary, Timestamp, Regex, Code, MinKey, MaxKey,
DBRef, DatetimeMS and RawBSONDocument (recognised without importing PyMongo). Raises
TypeError (a key that is not a str, a value of another type), OverflowError (an int beyond
int64) and oid.Error: invalid_key (NUL in a key), invalid_value (NUL in a regex),
invalid_utf8 (a lone surrogate), too_deep (over 100 levels, or a cycle), too_large (over
16 MiB). Messages name the path of the value, e.g. ["a"][3].)");
  bson.def("loads", &loads, "data"_a,
           R"(The dict of one BSON document (bytes or another buffer), as PyMongo's
bson.decode reads it except that datetimes are aware (UTC) and ObjectIds are oid.ObjectId
(equal to, and encoded by PyMongo as, bson.ObjectId). Validates the whole input first:
errors as validate(), with `code` and the byte `offset`; a datetime outside years 1 to 9999
raises oid.Error time_out_of_range at its byte. Types Python lacks are PyMongo's (Int64,
Decimal128, Binary for subtypes other than 0, Timestamp, Regex, Code, MinKey, MaxKey, DBRef);
without PyMongo, an int64 is an int and the others raise ImportError naming the byte.)");
}

}  // namespace oid::python
