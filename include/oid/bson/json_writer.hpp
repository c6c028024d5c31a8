// oid/bson/json_writer.hpp: MongoDB Extended JSON v2 for BSON documents.
//
// `to_json` writes a document as canonical or relaxed Extended JSON, following MongoDB's Extended
// JSON specification (v2) and the strings of its BSON corpus:
//
//   * compact by default: no whitespace at all (`{"a":{"$numberInt":"1"}}`); with
//     `json_options::pretty`, each document and array member on its own line, indented, and
//     `": "` / `", "` inside type wrappers, which stay on one line;
//   * keys and values in document order, duplicate keys kept;
//   * strings: `"` `\` and control characters escaped (`\b \f \n \r \t`, others as `\u00XX`), every
//     other byte copied as is, so valid UTF-8 stays UTF-8 (and a document validated without UTF-8
//     checks can produce text that is not UTF-8);
//   * doubles: the shortest text that reads back to the same bits; plain notation for decimal
//     exponents -4 to 15 with at least one digit after the point ("1.0", "0.0001", "-0.0"),
//     otherwise one digit, an optional fraction and an exponent with its sign ("1.0E+16" is written
//     "1E+16", "1.5E-7"); "NaN", "Infinity" and "-Infinity" as `$numberDouble` strings;
//   * relaxed dates from 1970 to 9999 as `"1970-01-01T00:00:00Z"`, with ".mmm" only when the
//     milliseconds are not zero;
//   * regex options in alphabetical order, binary subtypes as two lower-case hex digits, ObjectIds
//     as lower-case hex.
//
// Writing cannot fail: the view was validated (or produced by oid), so every value is readable.
// Nothing is allocated per element: the text is written into a scratch buffer that each thread
// keeps between calls (released when a document needed more than 4 MiB) and appended to the
// caller's `std::string` in one copy.
#pragma once

#include <oid/bson/view.hpp>
#include <string>

namespace oid::bson {

/// The two output formats of Extended JSON v2.
enum class json_mode {
  canonical,  ///< every type in a wrapper (`{"$numberInt":"1"}`): reads back to the same BSON
  relaxed,    ///< plain JSON numbers and ISO-8601 dates where the specification allows
};

/// How `to_json` writes: the mode and the layout.
struct json_options {
  json_mode mode = json_mode::relaxed;  ///< canonical or relaxed
  bool pretty = false;                  ///< one member per line, indented (see the header)
  int indent = 2;                       ///< spaces per level when `pretty` (0 to 16)
};

/// Appends `doc` as Extended JSON to `out`, as `options` say. `out` keeps what it held, so many
/// documents can be streamed into one buffer. O(size of the document).
///
///     std::string line;
///     for (auto doc : docs) { line.clear(); oid::bson::to_json(doc, {}, line); line += '\n'; ... }
void to_json(document_view doc, const json_options& options, std::string& out);

/// Appends `doc` as compact Extended JSON in `mode` to `out`.
inline void to_json(document_view doc, json_mode mode, std::string& out) {
  to_json(doc, json_options{mode}, out);
}

/// `doc` as Extended JSON, as `options` say.
std::string to_json(document_view doc, const json_options& options);

/// `doc` as compact Extended JSON in `mode` (relaxed by default, as the specification asks).
///
///     oid::bson::builder b;
///     b.append_int32("n", 1).append_double("x", 0.5);
///     oid::bson::to_json(b.view());                                // {"n":1,"x":0.5}
///     oid::bson::to_json(b.view(), oid::bson::json_mode::canonical);
///     // {"n":{"$numberInt":"1"},"x":{"$numberDouble":"0.5"}}
inline std::string to_json(document_view doc, json_mode mode = json_mode::relaxed) {
  return to_json(doc, json_options{mode});
}

}  // namespace oid::bson
