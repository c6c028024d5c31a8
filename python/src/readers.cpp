// readers.cpp: the stream readers behind oid.bson.iter_file and oid.bson.iter_json_lines.
//
// Each wraps one of oid's C++ stream readers (bson::stream_reader for concatenated BSON, as
// mongodump writes it; bson::json_stream_reader for Extended JSON, one document a line or one
// array) over a std::streambuf that reads the Python file object in 64 KiB chunks, so a file of
// any size is read in bounded memory. A Python exception raised by the file's read() is kept and
// raised again from __next__, after the C++ reader has seen an end of stream.
//
// Every call holds the GIL. Making a document's objects runs Python code (PyMongo's
// constructors), which may let another thread call __next__ on the same reader; that call would
// move the C++ reader and so free the bytes being read, so it is refused (ValueError) while a
// call is under way.
#include <Python.h>

#include <istream>
#include <memory>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/stream_reader.hpp>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "buffers.hpp"
#include "codec.hpp"
#include "errors.hpp"

namespace oid::python {

namespace {

using namespace nb::literals;

// A read-only streambuf over a Python file object's read(n): bytes, or with `text` also str
// (written out as UTF-8, for a file opened in text mode).
class python_file_buffer : public std::streambuf {
 public:
  python_file_buffer(nb::handle file, bool text) : read_(file.attr("read")), text_(text) {}

  // The exception read() raised (or the TypeError for what it returned), if any: raises it.
  void raise_pending() {
    if (pending_) {
      auto e = std::move(*pending_);
      pending_.reset();
      e.restore();
      throw nb::python_error();
    }
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (done_) return traits_type::eof();
    try {
      nb::object chunk = read_(chunk_size);
      std::string_view data;
      if (PyBytes_Check(chunk.ptr())) {
        data = {PyBytes_AS_STRING(chunk.ptr()),
                static_cast<std::size_t>(PyBytes_GET_SIZE(chunk.ptr()))};
      } else if (text_ && PyUnicode_Check(chunk.ptr())) {
        Py_ssize_t n = 0;
        const char* p = PyUnicode_AsUTF8AndSize(chunk.ptr(), &n);
        if (p == nullptr) throw nb::python_error();
        data = {p, static_cast<std::size_t>(n)};
      } else {
        raise(PyExc_TypeError, std::string("read() returned ") + Py_TYPE(chunk.ptr())->tp_name +
                                   (text_ ? ", not bytes or str"
                                          : ", not bytes (open the file in binary mode, \"rb\")"));
      }
      if (data.empty()) {
        done_ = true;
        return traits_type::eof();
      }
      buffer_.assign(data.begin(), data.end());
      setg(buffer_.data(), buffer_.data(), buffer_.data() + buffer_.size());
      return traits_type::to_int_type(*gptr());
    } catch (nb::python_error& e) {
      pending_.emplace(std::move(e));
      done_ = true;
      return traits_type::eof();
    }
  }

 private:
  static constexpr int chunk_size = 64 * 1024;
  nb::object read_;
  bool text_;
  bool done_ = false;
  std::vector<char> buffer_;
  std::optional<nb::python_error> pending_;
};

// What both readers share: the file (closed at the end when the reader opened it), the
// streambuf over it and the guard against a second call while one is under way.
class file_source {
 public:
  file_source(nb::handle file, bool owned, bool text)
      : file_(nb::borrow(file)), owned_(owned), buffer_(file, text), stream_(&buffer_) {}
  ~file_source() { close_quietly(); }

  std::istream& stream() { return stream_; }
  python_file_buffer& buffer() { return buffer_; }

  void close() {
    if (owned_ && file_.is_valid()) {
      nb::object f = std::move(file_);
      f.attr("close")();
    }
  }
  void close_quietly() {
    try {
      close();
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("closing the file of an oid.bson reader");
    }
  }

  // Marks a __next__ under way; a second one at the same time is a ValueError.
  class busy_guard {
   public:
    explicit busy_guard(bool& busy) : busy_(busy) {
      if (busy_) raise(PyExc_ValueError, "the reader is already running (in another thread?)");
      busy_ = true;
    }
    ~busy_guard() { busy_ = false; }
    busy_guard(const busy_guard&) = delete;
    busy_guard& operator=(const busy_guard&) = delete;

   private:
    bool& busy_;
  };
  bool busy = false;
  bool finished = false;

 private:
  nb::object file_;
  bool owned_;
  python_file_buffer buffer_;
  std::istream stream_;
};

std::string describe(std::size_t index) { return "document " + std::to_string(index); }

// decode_document, with `index` added to the oid.Error it may raise.
nb::object decode_at(oid::bson::document_view doc, std::uint64_t offset, std::size_t index) {
  try {
    return decode_document(doc, offset);
  } catch (nb::python_error& e) {
    nb::handle value = e.value();
    if (e.matches(PyExc_ValueError) && nb::hasattr(value, "code")) value.attr("index") = index;
    throw;
  }
}

// --- Concatenated BSON ------------------------------------------------------------------------

class bson_file_reader {
 public:
  bson_file_reader(nb::handle file, bool raw, bool owned)
      : source_(file, owned, false), reader_(source_.stream()), raw_(raw) {}

  nb::object next() {
    file_source::busy_guard guard(source_.busy);
    if (source_.finished) throw nb::stop_iteration();
    auto more = reader_.next();
    source_.buffer().raise_pending();  // read() failed: its own exception, not an end
    if (!more) {
      const auto& e = more.error();
      const std::size_t index = reader_.index();
      if (!reader_.can_continue()) finish();
      raise_error(e,
                  at_byte(e.offset) + " (" + describe(index) + ", which starts at byte " +
                      std::to_string(reader_.document_offset()) + ")",
                  index);
    }
    if (!*more) {
      finish();
      throw nb::stop_iteration();
    }
    const auto doc = reader_.current();
    if (raw_) {
      return new_bytes(doc.bytes());
    }
    return decode_at(doc, reader_.document_offset(), reader_.index());
  }

  void close() {
    source_.finished = true;
    source_.close();
  }

 private:
  void finish() {
    source_.finished = true;
    source_.close_quietly();
  }

  file_source source_;
  oid::bson::stream_reader reader_;
  bool raw_;
};

// --- Extended JSON ----------------------------------------------------------------------------

class json_lines_reader {
 public:
  json_lines_reader(nb::handle file, bool raw, bool legacy, bool owned)
      : source_(file, owned, true), reader_(source_.stream(), options(legacy)), raw_(raw) {}

  nb::object next() {
    file_source::busy_guard guard(source_.busy);
    if (source_.finished) throw nb::stop_iteration();
    auto more = reader_.next(doc_);
    source_.buffer().raise_pending();
    if (!more) {
      const auto& e = more.error();
      const auto pos = reader_.error_position();
      const std::size_t index = reader_.index();
      if (!reader_.can_continue()) finish();
      raise_error(e,
                  at_byte(e.offset) + " (line " + std::to_string(pos.line) + ", column " +
                      std::to_string(pos.column) + "; " + describe(index) + ")",
                  index);
    }
    if (!*more) {
      finish();
      throw nb::stop_iteration();
    }
    const auto bytes = doc_.bytes();
    if (raw_) {
      return new_bytes(bytes);
    }
    // The offset of an error in the dict's making (a datetime Python cannot hold) is in the
    // document's BSON form; the error's `index` names the document.
    return decode_at(doc_.view(), 0, reader_.index());
  }

  void close() {
    source_.finished = true;
    source_.close();
  }

 private:
  static oid::bson::json_read_options options(bool legacy) {
    oid::bson::json_read_options o;
    o.legacy = legacy;
    return o;
  }
  void finish() {
    source_.finished = true;
    source_.close_quietly();
  }

  file_source source_;
  oid::bson::json_stream_reader reader_;
  oid::bson::document doc_;
  bool raw_;
};

}  // namespace

void bind_readers(nb::module_& bson) {
  nb::class_<bson_file_reader>(bson, "_FileReader",
                               "What oid.bson.iter_file returns: an iterator of documents.")
      .def(nb::init<nb::handle, bool, bool>(), "file"_a, "raw"_a, "owned"_a)
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &bson_file_reader::next)
      .def("close", &bson_file_reader::close,
           "Stops reading; closes the file when the reader opened it.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](bson_file_reader& r, nb::args) { r.close(); });
  nb::class_<json_lines_reader>(bson, "_JsonReader",
                                "What oid.bson.iter_json_lines returns: an iterator of documents.")
      .def(nb::init<nb::handle, bool, bool, bool>(), "file"_a, "raw"_a, "legacy"_a, "owned"_a)
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &json_lines_reader::next)
      .def("close", &json_lines_reader::close,
           "Stops reading; closes the file when the reader opened it.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](json_lines_reader& r, nb::args) { r.close(); });
}

}  // namespace oid::python
