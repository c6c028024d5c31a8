// Extended JSON v2 text to BSON: from_json(), position_of() and json_stream_reader. The parser
// itself is bson/detail/json_parser.hpp: JSON in json_parser.cpp, the `$`-wrappers in
// json_wrappers.cpp.
#include <algorithm>
#include <cstring>
#include <istream>
#include <oid/bson/json_reader.hpp>
#include <string>
#include <vector>

#include "bson/detail/json_parser.hpp"

namespace oid::bson {
namespace {

using detail::depth_cap;
using detail::is_ws;
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

// ---- json_stream_reader -----------------------------------------------------------------------

struct json_stream_reader::impl {
  impl(std::istream& in, const json_read_options& options, std::size_t max_text)
      : in(in), options(options), max_text(std::max<std::size_t>(max_text, 16)) {
    buf.resize(std::min<std::size_t>(this->max_text, 1 << 16));
  }

  std::istream& in;
  json_read_options options;
  std::size_t max_text;
  std::vector<char> buf;
  std::size_t begin = 0, end = 0;  // unread bytes are buf[begin, end)
  std::size_t base = 0;            // stream offset of buf[0]
  bool eof = false;
  enum class form { unknown, sequence, array } shape = form::unknown;
  bool array_closed = false;
  bool expect_comma = false;
  bool fatal = false;
  std::size_t count = 0;   // documents read or attempted
  text_position at_begin;  // position of buf[begin]
  text_position err_pos;

  std::size_t abs(std::size_t i) const noexcept { return base + i; }

  // Reads more input after end, keeping buf[begin, end); false at end of input (or when the
  // buffer may not grow and is full).
  bool fill() {
    if (eof) return false;
    if (begin > 0) {
      std::memmove(buf.data(), buf.data() + begin, end - begin);
      end -= begin;
      base += begin;
      begin = 0;
    }
    if (end == buf.size()) {
      if (buf.size() >= max_text) return false;
      buf.resize(std::min(buf.size() * 2, max_text));
    }
    in.read(buf.data() + end, static_cast<std::streamsize>(buf.size() - end));
    const auto n = static_cast<std::size_t>(in.gcount());
    end += n;
    if (n == 0) {
      eof = true;
      return false;
    }
    return true;
  }

  // Moves begin forward by n bytes, keeping the line and column of buf[begin].
  void consume(std::size_t n) noexcept {
    const std::string_view s(buf.data() + begin, n);
    const std::size_t nl = s.rfind('\n');
    if (nl != std::string_view::npos) {
      at_begin.line += static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
      at_begin.column = 1;
      const text_position t = position_of(s.substr(nl + 1), n);
      at_begin.column = t.column;
    } else {
      at_begin.column += position_of(s, n).column - 1;
    }
    begin += n;
  }

  // The position of buf[i] (i >= begin).
  text_position position(std::size_t i) const noexcept {
    const std::string_view s(buf.data() + begin, i - begin);
    const text_position t = position_of(s, s.size());
    if (t.line == 1) return {at_begin.line, at_begin.column + t.column - 1};
    return {at_begin.line + t.line - 1, t.column};
  }

  error fail(errc code, std::size_t i, bool resumable) {
    err_pos = position(i);
    fatal = fatal || !resumable;
    return error{code, abs(i)};
  }

  // Skips whitespace; false at end of input.
  bool skip_ws() {
    for (;;) {
      while (begin != end && is_ws(buf[begin])) consume(1);
      if (begin != end) return true;
      if (!fill()) return false;
    }
  }

  // Skips the rest of the line at i (after an error in the sequence form).
  void skip_line(std::size_t i) {
    consume(i - begin);
    for (;;) {
      const void* nl = std::memchr(buf.data() + begin, '\n', end - begin);
      if (nl != nullptr) {
        consume(static_cast<std::size_t>(static_cast<const char*>(nl) - (buf.data() + begin)) + 1);
        return;
      }
      consume(end - begin);
      if (!fill()) return;
    }
  }

  result<bool> next(document& out) {
    if (fatal) return error{errc::invalid_json, abs(begin)};
    if (!skip_ws()) {
      if (in.bad()) return fail(errc::io_error, begin, false);
      if (shape == form::array && !array_closed) return fail(errc::invalid_json, begin, false);
      return false;
    }
    if (shape == form::unknown) {
      if (buf[begin] == '[') {
        shape = form::array;
        consume(1);
        if (!skip_ws()) return fail(errc::invalid_json, begin, false);
        if (buf[begin] == ']') {
          consume(1);
          array_closed = true;
        }
      } else {
        shape = form::sequence;
      }
    }
    if (shape == form::array) {
      if (array_closed) {
        if (!skip_ws()) return false;
        return fail(errc::invalid_json, begin, false);  // text after the array
      }
      if (expect_comma) {
        if (buf[begin] == ']') {
          consume(1);
          array_closed = true;
          return next(out);
        }
        if (buf[begin] != ',') return fail(errc::invalid_json, begin, false);
        consume(1);
        if (!skip_ws()) return fail(errc::invalid_json, begin, false);
      }
      expect_comma = true;
    }
    ++count;
    if (buf[begin] != '{') {
      const std::size_t at = begin;
      const error e = fail(errc::invalid_json, at, shape == form::sequence);
      if (shape == form::sequence) skip_line(at);
      return e;
    }
    // Find the object's extent: balanced braces and brackets outside strings.
    std::size_t i = begin, depth = 0;
    bool in_string = false, escaped = false;
    for (;;) {
      if (i == end) {
        const std::size_t offset = i - begin;
        if (!fill()) {
          if (in.bad()) return fail(errc::io_error, end, false);
          if (end - begin >= max_text) return fail(errc::too_large, begin, false);
          return fail(errc::invalid_json, end, false);  // the input ends inside the object
        }
        i = begin + offset;
      }
      const char c = buf[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        } else if (c == '\n') {
          // A raw newline cannot be in a JSON string: report the unterminated string and, in the
          // one-per-line form, carry on with the next line.
          const error e = fail(errc::invalid_json, i, shape == form::sequence);
          if (shape == form::sequence) consume(i + 1 - begin);
          return e;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        ++i;
        break;
      }
      ++i;
    }
    const std::string_view text(buf.data() + begin, i - begin);
    auto doc = from_json(text, options);
    if (!doc) {
      const error e{doc.error().code, abs(begin) + doc.error().offset};
      err_pos = position(begin + std::min(doc.error().offset, text.size()));
      consume(text.size());
      return e;
    }
    consume(text.size());
    out = std::move(*doc);
    return true;
  }
};

json_stream_reader::json_stream_reader(std::istream& in, const json_read_options& options,
                                       std::size_t max_text)
    : impl_(std::make_unique<impl>(in, options, max_text)) {}
json_stream_reader::~json_stream_reader() = default;
result<bool> json_stream_reader::next(document& out) { return impl_->next(out); }
bool json_stream_reader::can_continue() const noexcept { return !impl_->fatal; }
text_position json_stream_reader::error_position() const noexcept { return impl_->err_pos; }
std::size_t json_stream_reader::index() const noexcept {
  return impl_->count == 0 ? 0 : impl_->count - 1;
}
std::size_t json_stream_reader::bytes_read() const noexcept { return impl_->abs(impl_->begin); }

}  // namespace oid::bson
