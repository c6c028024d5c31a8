// Buffered line input and output for the command: bounded memory per line, fast bulk writes.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <oid/error.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace oid::cli {

/// Reads lines from a stream through a fixed buffer. A line longer than `max_line` is not kept:
/// the reader skips to its end and reports it as too long, so a 10 MB line or binary garbage
/// without newlines costs no more memory than the buffer.
class line_reader {
 public:
  explicit line_reader(std::istream& in, std::size_t max_line = 4096);

  struct line {
    std::string_view text;   ///< without the newline and a trailing '\r'; valid until next()
    std::size_t number = 0;  ///< 1-based
    bool too_long = false;   ///< text is empty and the line exceeded max_line
  };

  /// The next line, or false at the end of input.
  bool next(line& out);

 private:
  bool fill();  // reads more; false at end of input
  std::istream& in_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::size_t number_ = 0;
  bool eof_ = false;
};

/// Collects output and writes it to the stream in large blocks.
class output_buffer {
 public:
  explicit output_buffer(std::ostream& out) : out_(out) { buf_.reserve(capacity); }
  ~output_buffer() { flush(); }
  output_buffer(const output_buffer&) = delete;
  output_buffer& operator=(const output_buffer&) = delete;

  /// Space for `n` more bytes at the end; call commit(n') with n' <= n after writing.
  char* reserve(std::size_t n);
  void commit(std::size_t n) { size_ += n; }
  void write(std::string_view s);
  void put(char c) { write(std::string_view(&c, 1)); }
  void flush();

  static constexpr std::size_t capacity = 1 << 16;

 private:
  std::ostream& out_;
  std::vector<char> buf_;
  std::size_t size_ = 0;
};

/// The input as a person should see it in an error message: quoted, non-printable bytes as \xNN,
/// cut to about 40 characters.
std::string quote(std::string_view input);

/// What is wrong with an ObjectId's text `input`, for a person: what was expected and where it
/// went wrong. `e` is the error `object_id::parse(input)` returned.
std::string explain_id_error(std::string_view input, const error& e);

}  // namespace oid::cli
