// oid/bson/json_stream_reader.hpp: many Extended JSON documents from a stream, one at a time.
//
// `json_stream_reader` reads the text `oid bson dump` and mongoexport write (one document a line,
// or one JSON array of documents) and turns each document into BSON with `from_json()`
// (json_reader.hpp), in bounded memory. Line and column are worked out only when an error is
// reported, so reading costs little beside the parse itself.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/result.hpp>

namespace oid::bson {

/// Reads Extended JSON documents from a stream, one at a time, in bounded memory: either a
/// sequence of JSON objects separated by whitespace (one per line, as mongoexport writes them, or
/// pretty-printed), or one JSON array of objects. The form is chosen by the first
/// non-whitespace character.
///
///     oid::bson::json_stream_reader reader(std::cin);
///     oid::bson::document doc;
///     for (;;) {
///       auto more = reader.next(doc);
///       if (!more) {
///         report(more.error(), reader.error_position());
///         if (!reader.can_continue()) break;
///         continue;
///       }
///       if (!*more) break;
///       use(doc);
///     }
class json_stream_reader {
 public:
  /// Reads from `in`, which must outlive the reader. `max_text` bounds the text of one document
  /// (and so the memory used); a longer document fails with too_large and ends the reading.
  explicit json_stream_reader(std::istream& in, const json_read_options& options = {},
                              std::size_t max_text = 64 * 1024 * 1024);
  ~json_stream_reader();
  json_stream_reader(const json_stream_reader&) = delete;
  json_stream_reader& operator=(const json_stream_reader&) = delete;

  /// Reads the next document into `out`: true when one was read, false at the end of the input.
  /// Errors are those of `from_json()` plus invalid_json for text between documents and io_error
  /// when the stream fails; their offset is absolute in the stream. After an error in one
  /// document whose extent was found (its braces balance), `can_continue()` is true and the next
  /// call reads the document after it; after any other error it is false.
  result<bool> next(document& out);

  /// False after an error the reader cannot resume from.
  bool can_continue() const noexcept;
  /// The line and column (1-based, in the whole stream) of the last error.
  text_position error_position() const noexcept;
  /// The 0-based index of the last document read or attempted.
  std::size_t index() const noexcept;
  /// Bytes consumed from the stream so far.
  std::size_t bytes_read() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace oid::bson
