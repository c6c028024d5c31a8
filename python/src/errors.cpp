#include "errors.hpp"

#include <Python.h>

namespace oid::python {

namespace {
// A strong reference kept for the life of the process: the class outlives every call that could
// raise it, and releasing it at interpreter shutdown would race the module's own teardown.
PyObject* error_class = nullptr;
}  // namespace

void set_error_class(nb::handle cls) {
  if (!PyType_Check(cls.ptr()) || !PyObject_IsSubclass(cls.ptr(), PyExc_ValueError)) {
    raise(PyExc_TypeError, "the error class must be a ValueError subclass");
  }
  Py_XDECREF(error_class);
  error_class = nb::borrow(cls).release().ptr();
}

const char* errc_name(const std::error_code& code) noexcept {
  // A switch over every enumerator: a code added to oid::errc without a name here is a -Wswitch
  // warning (an error in CI), not a silent "unknown".
  switch (oid::errc_of(code)) {
  case errc::invalid_length: return "invalid_length";
  case errc::invalid_hex: return "invalid_hex";
  case errc::invalid_base64: return "invalid_base64";
  case errc::invalid_time: return "invalid_time";
  case errc::time_out_of_range: return "time_out_of_range";
  case errc::entropy_unavailable: return "entropy_unavailable";
  case errc::truncated: return "truncated";
  case errc::bad_length_prefix: return "bad_length_prefix";
  case errc::missing_terminator: return "missing_terminator";
  case errc::unknown_type: return "unknown_type";
  case errc::invalid_bool: return "invalid_bool";
  case errc::invalid_utf8: return "invalid_utf8";
  case errc::too_deep: return "too_deep";
  case errc::too_large: return "too_large";
  case errc::trailing_bytes: return "trailing_bytes";
  case errc::invalid_key: return "invalid_key";
  case errc::invalid_binary: return "invalid_binary";
  case errc::invalid_value: return "invalid_value";
  case errc::type_mismatch: return "type_mismatch";
  case errc::key_not_found: return "key_not_found";
  case errc::invalid_decimal128: return "invalid_decimal128";
  case errc::invalid_json: return "invalid_json";
  case errc::invalid_extended_json: return "invalid_extended_json";
  case errc::io_error: return "io_error";
  case errc::invalid_decimal: return "invalid_decimal";
  case errc::machine_id_out_of_range: return "machine_id_out_of_range";
  case errc::forked_machine_id: return "forked_machine_id";
  case errc::end_marker: break;
  }
  return "unknown";
}

namespace {
// A new oid.Error (or ValueError, when _oid is imported on its own) for `e`.
nb::object make_error(const oid::error& e, const std::string& detail) {
  const std::string message = e.message() + detail;
  if (error_class == nullptr) raise(PyExc_ValueError, message);
  PyObject* exc = PyObject_CallFunction(error_class, "ssn", message.c_str(), errc_name(e.code),
                                        static_cast<Py_ssize_t>(e.offset));
  if (exc == nullptr) throw nb::python_error();  // the constructor itself failed: report that
  return nb::steal(exc);
}

[[noreturn]] void raise_object(nb::handle exc) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}
}  // namespace

void raise_error(const oid::error& e, const std::string& detail) {
  raise_object(make_error(e, detail));
}

void raise_error(const oid::error& e, const std::string& detail, std::size_t index) {
  nb::object exc = make_error(e, detail);
  exc.attr("index") = index;
  raise_object(exc);
}

void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

}  // namespace oid::python
