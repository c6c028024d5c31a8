// Extended JSON v2 text to BSON: from_json() and position_of(). The parser itself is
// bson/detail/json_parser.hpp: JSON in json_parser.cpp, the `$`-wrappers in json_wrappers.cpp;
// the reader of a stream of documents is json_stream_reader.cpp.
#include <algorithm>
#include <oid/bson/json_reader.hpp>
#include <vector>

#include "bson/detail/json_parser.hpp"

namespace oid::bson {
namespace {

using detail::depth_cap;
using detail::parser;
}  // namespace

result<document> from_json(std::string_view text, const json_read_options& options) {
  parser p(text, options);
  auto bytes = p.run();
  if (!bytes) return bytes.error();
    // The parser writes valid BSON only (the fuzzer checks it), so the bytes become a document
    // through the unchecked view meant for bytes the library produced: a copy instead of a second
    // walk over the document. Debug builds validate anyway.
#ifndef NDEBUG
  validate_options v;
  v.check_utf8 = false;  // every string was checked while it was read
  v.max_depth = depth_cap;
  v.max_size = 0x7FFFFFFF;
  if (!validate(*bytes, v)) return error{errc::invalid_extended_json, 0};  // a reader bug
#endif
  return document(document_view::unchecked(*bytes));
}

text_position position_of(std::string_view text, std::size_t offset) noexcept {
  text_position pos;
  const std::size_t n = std::min(offset, text.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++pos.line;
      pos.column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++pos.column;
    }
  }
  return pos;
}

}  // namespace oid::bson
