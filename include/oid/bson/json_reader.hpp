// oid/bson/json_reader.hpp: reading MongoDB Extended JSON v2 text into BSON.
//
// `from_json()` is the one door from Extended JSON text to a `bson::document`. It accepts the
// canonical and the relaxed formats of the Extended JSON specification (every type wrapper:
// `$oid`, `$numberInt`, `$numberLong`, `$numberDouble`, `$numberDecimal`, `$binary`, `$uuid`,
// `$code`/`$scope`, `$timestamp`, `$regularExpression`, `$dbPointer`, `$date`, `$minKey`,
// `$maxKey`, `$undefined`, `$symbol`) and, when `json_read_options::legacy` is set, the legacy
// forms the specification lists (`{"$binary": "<base64>", "$type": "<hex>"}`, `{"$regex": ...,
// "$options": ...}`, `{"$date": <milliseconds>}`). Key order and duplicate keys are kept as
// written. Errors carry the byte offset in the text; `position_of()` turns it into a line and a
// column for messages. `json_stream_reader` reads many documents (one per line, or one JSON
// array of documents) from a stream in bounded memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/result.hpp>
#include <string_view>

namespace oid::bson {

/// What `from_json()` accepts beyond the Extended JSON v2 specification's fixed rules.
struct json_read_options {
  /// Also accept the legacy forms: `{"$binary": "<base64>", "$type": "<hex>"}` (either key
  /// first), `{"$regex": "<pattern>", "$options": "<flags>"}` (either key first; any other shape,
  /// such as the `$regex` query operator with an object value, stays a plain document) and
  /// `{"$date": <integer milliseconds>}`. Off by default, as the specification asks: strict v2
  /// rejects `{"$date": 42}` and the legacy `$binary` form.
  bool legacy = false;
  /// Deepest allowed BSON nesting, counted as `validate_options::max_depth` counts it (the
  /// top-level document is depth 0; each embedded document, array or code-with-scope scope adds
  /// 1; type wrapper objects add nothing). Values above 1000 act as 1000.
  std::size_t max_depth = 100;
  /// Largest allowed BSON document, in bytes (MongoDB's limit is 16 MiB).
  std::size_t max_size = 16 * 1024 * 1024;
};

/// Parses `text`, which must hold exactly one JSON object (whitespace around it is allowed), as
/// Extended JSON and returns the BSON document. JSON numbers: an integer becomes an int32 when it
/// fits, else an int64 when it fits, else a double; a number with a fraction or exponent becomes
/// a double (correctly rounded). Errors, each at the byte offset in `text` where the problem is:
///
///   invalid_json           not JSON: a syntax error, a bad escape, a control character in a
///                          string, anything after the object, or no object at all
///   invalid_utf8           ill-formed UTF-8 in a string, or a `\u` escape of a lone surrogate
///   invalid_key            a key with a NUL character (`\u0000`), which BSON cannot store
///   invalid_extended_json  a type wrapper with a missing or extra key, a value of the wrong
///                          JSON type, or a value its type rejects (a 23-digit `$oid`, an int32
///                          out of range, unpadded base64, an unknown date format, a decimal128
///                          that would need rounding, NUL in a regex) at the offending key or value
///   too_deep               nesting beyond `max_depth` (at the `{` or `[` that goes too deep)
///   too_large              a document beyond `max_size` (at the element that crossed it)
///
/// Complexity: O(text.size()), one pass, no intermediate tree.
///
///     auto doc = oid::bson::from_json(R"({"_id": {"$oid": "4df2dcec2cdcd20936a8b817"}, "n": 1})");
///     if (!doc) report(doc.error());   // code + byte offset; see position_of()
result<document> from_json(std::string_view text, const json_read_options& options = {});

/// A 1-based line and column in a text.
struct text_position {
  std::size_t line = 1;    ///< lines are separated by '\n'
  std::size_t column = 1;  ///< counted in characters (UTF-8 code points), a tab counts as one

  friend bool operator==(const text_position&, const text_position&) = default;
};

/// The line and column of byte `offset` in `text` (an offset past the end counts as the end).
/// Complexity: O(offset).
text_position position_of(std::string_view text, std::size_t offset) noexcept;

/// Reads Extended JSON documents from a stream, one at a time, in bounded memory: either a
/// sequence of JSON objects separated by whitespace (one per line, as mongoexport writes them, or
/// pretty-printed), or one JSON array of objects. The form is chosen by the first
/// non-whitespace character.
///
///     oid::bson::json_stream_reader reader(std::cin);
///     oid::bson::document doc;
///     for (;;) {
///       auto more = reader.next(doc);
///       if (!more) { report(more.error(), reader.error_position()); if (!reader.can_continue())
///       break; continue; } if (!*more) break; use(doc);
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
