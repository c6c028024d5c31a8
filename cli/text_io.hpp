// Buffered line input and output for the command: bounded memory per line, fast bulk writes.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <oid/bson/document.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/error.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace oid::cli {

struct context;

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
  /// Writes what is held and flushes the stream.
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

/// `text` made safe to show on a terminal, and in a line of its own: for text oid did not write
/// itself (a server's error message, a database or collection name, a host or replica set name
/// from a server, a field name or value from a file), so that it can neither move the cursor,
/// clear the screen, retitle the window or hide text, nor start a line of its own (a forged "all
/// collections verified OK"). Every such text a command prints, to standard output or error,
/// terminal or not, goes through it (or through document_output, for documents). Each C0 control
/// (U+0000-U+001F, the newline and the carriage return included unless `keep_newlines`) and DEL
/// is shown as \xNN (\t, \n and \r as such); each C1 control (U+0080-U+009F) and each
/// bidirectional formatting character (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) as
/// \uNNNN; each byte that is not part of valid UTF-8 as \xNN. Everything else, backslashes
/// included, is copied: this is for people, not a reversible encoding (Extended JSON output is).
/// Applied twice, it gives what it gave once. `keep_newlines` keeps '\n' (never '\r') for text
/// made of whole lines that oid wrote, each ending in a newline, around names already escaped.
std::string printable(std::string_view text, bool keep_newlines = false);

/// Extended JSON (as bson::to_json writes it) made safe to show on a terminal and still the same
/// JSON: DEL, each C1 control and each bidirectional formatting character (the characters
/// printable() escapes that JSON does not) written as a \uNNNN escape. JSON escapes C0 itself.
std::string terminal_safe_json(std::string_view json);

/// Appends `printable(text, keep_newlines)` to `out`.
void append_printable(std::string& out, std::string_view text, bool keep_newlines = false);

/// The one way a command writes to standard output (or to the file of its --out) what it made of
/// a server's or a file's documents: Extended JSON, and records of CSV. When standard output is a
/// terminal (context::out_is_terminal) each piece is escaped on its way, JSON by
/// terminal_safe_json (so it stays the same JSON), a record by printable() (its newlines
/// included), so that nothing in it moves the cursor, retitles the window, reorders text or
/// starts a line; to a file or a pipe the bytes are the writer's own (Extended JSON escapes C0
/// controls and newlines itself; C1 and bidirectional characters are JSON's characters there).
/// Names and messages in oid's own text go through printable() instead. Written in large blocks
/// (output_buffer): flush() or the destructor writes what is held.
class document_output {
 public:
  /// To ctx.out.
  explicit document_output(const context& ctx);
  /// To `out`: ctx.out, or a file a flag names.
  document_output(const context& ctx, std::ostream& out);
  document_output(const document_output&) = delete;
  document_output& operator=(const document_output&) = delete;

  /// `doc` as Extended JSON (`options`), then a newline.
  void json_line(bson::document_view doc, const bson::json_options& options = {});
  /// Extended JSON text as bson::to_json wrote it, or oid's punctuation around documents.
  void json(std::string_view text);
  /// One record of text made of a document's values (a CSV line), without its newline; the
  /// newline is added.
  void record(std::string_view text);
  /// Whole lines oid wrote, each ending in a newline, around a file's names already printable()
  /// (bson dump --type debug); on a terminal made printable() again, their newlines kept.
  void lines(std::string_view text);
  /// Writes what is held to the stream and flushes it: it shows now.
  void flush() { buffer_.flush(); }
  /// True when the output is escaped (standard output, and a terminal).
  bool escaped() const noexcept { return escape_; }

 private:
  output_buffer buffer_;
  bool escape_;
  std::string scratch_;
};

/// What is wrong with an ObjectId's text `input`, for a person: what was expected and where it
/// went wrong. `e` is the error `object_id::parse(input)` returned.
std::string explain_id_error(std::string_view input, const error& e);

}  // namespace oid::cli
