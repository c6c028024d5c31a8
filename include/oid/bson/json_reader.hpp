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
// column for messages. `json_stream_reader` (json_stream_reader.hpp) reads many documents from a
// stream.
#pragma once

#include <cstddef>
#include <cstdint>
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

}  // namespace oid::bson
