// buffers.hpp: the bytes of a bytes-like argument, and running work without the GIL.
//
// A call that reads a buffer while Python code may run (the GIL released for a large input, or
// Python objects being made from it, whose constructors are Python code) must read bytes no other
// thread can change: a `bytes` object is immutable and is read in place; any other buffer
// (bytearray, memoryview, array) is copied first, since the readers trust bytes that validate()
// accepted and a write between the two could send them past the end.
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "errors.hpp"

namespace oid::python {

namespace nb = nanobind;

/// Above this many bytes the GIL is released: releasing and taking it back costs about a
/// microsecond when another thread waits for it, a few percent of validating 16 KiB.
inline constexpr std::size_t release_gil_above = 16 * 1024;

/// The bytes of a bytes-like argument (not str), read in place when it is a `bytes` object and
/// otherwise copied when larger than `copy_above` bytes.
class input_bytes {
 public:
  input_bytes(nb::handle obj, const char* function, std::size_t copy_above = release_gil_above) {
    if (PyUnicode_Check(obj.ptr())) {
      raise(PyExc_TypeError, std::string(function) + "() takes BSON as bytes, not str");
    }
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) throw nb::python_error();
    held_ = true;
    const auto* p = static_cast<const std::uint8_t*>(view_.buf);
    const auto n = static_cast<std::size_t>(view_.len);
    if (n > copy_above && !PyBytes_Check(obj.ptr())) {
      copy_.assign(p, p + n);
      bytes_ = copy_;
      PyBuffer_Release(&view_);
      held_ = false;
    } else {
      bytes_ = {p, n};
    }
  }
  ~input_bytes() {
    if (held_) PyBuffer_Release(&view_);
  }
  input_bytes(const input_bytes&) = delete;
  input_bytes& operator=(const input_bytes&) = delete;

  std::span<const std::uint8_t> bytes() const { return bytes_; }
  std::string_view text() const {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }
  bool large() const { return bytes_.size() > release_gil_above; }

 private:
  Py_buffer view_{};
  bool held_ = false;
  std::vector<std::uint8_t> copy_;
  std::span<const std::uint8_t> bytes_;
};

/// A new `bytes` object holding `data`; a failed allocation raises (MemoryError), never returns an
/// empty handle.
inline nb::object new_bytes(std::span<const std::uint8_t> data) {
  nb::object out = nb::steal(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(data.data()),
                                                       static_cast<Py_ssize_t>(data.size())));
  if (!out.is_valid()) throw nb::python_error();
  return out;
}

/// Runs `f` with the GIL released when `large`. `f` must not touch Python objects; a C++
/// exception it throws (std::bad_alloc) takes the GIL back on the way out.
template <class F>
auto run(bool large, F&& f) {
  if (large) {
    nb::gil_scoped_release unlocked;
    return f();
  }
  return f();
}

/// " at byte 12".
inline std::string at_byte(std::size_t offset) { return " at byte " + std::to_string(offset); }

}  // namespace oid::python
