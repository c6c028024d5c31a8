// Extended JSON documents from a stream: find where each document's text ends, parse it with
// from_json(), and keep what an error message needs without paying for it on every document.
//
// Where the time goes. A document's text is handed to from_json() whole, so its end must be known
// first. Most input has one document a line (what `oid bson dump` and mongoexport write): the
// reader first tries the rest of the line as the document, found with memchr, and from_json()
// either accepts it (then it is exactly one object, and the brace scan below would have found the
// same end) or fails. Only then does the reader fall back to the byte-by-byte scan of balanced
// braces outside strings, which handles pretty-printed documents, several documents on one line,
// and errors, and parses again. A line is tried at most once, so the fallback costs at most one
// extra parse per line. Line and column are not tracked per document: the position of the first
// byte in the buffer is advanced only when bytes leave the buffer (a memchr per line and a
// word-at-a-time count of UTF-8 lead bytes on the last one), and an error's position is counted
// from there. On 275 MB of canonical DriverBench lines this took the reader's own share of
// `oid bson from-json` from about 60% of the time (a byte loop for the extent, and line/column
// bookkeeping on every byte) to a few percent.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <istream>
#include <oid/bson/json_stream_reader.hpp>
#include <string_view>
#include <vector>

namespace oid::bson {
namespace {

constexpr bool is_ws(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The number of UTF-8 lead (non-continuation) bytes in [p, p + n): the characters of a line.
std::size_t count_characters(const char* p, std::size_t n) noexcept {
  std::size_t continuation = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    // A continuation byte is 10xxxxxx: bit 7 set and bit 6 clear (shifted up into bit 7).
    continuation +=
        static_cast<std::size_t>(std::popcount(w & ~(w << 1) & std::uint64_t{0x8080808080808080}));
  }
  for (; i < n; ++i) continuation += (static_cast<unsigned char>(p[i]) & 0xC0) == 0x80;
  return n - continuation;
}

// The position just after the text [p, p + n) that starts at `at`.
text_position advance(text_position at, const char* p, std::size_t n) noexcept {
  const char* const end = p + n;
  const char* line = p;  // start of the last line
  for (const char* q = p; q != end;) {
    const void* nl = std::memchr(q, '\n', static_cast<std::size_t>(end - q));
    if (nl == nullptr) break;
    q = static_cast<const char*>(nl) + 1;
    ++at.line;
    at.column = 1;
    line = q;
  }
  at.column += count_characters(line, static_cast<std::size_t>(end - line));
  return at;
}

}  // namespace

struct json_stream_reader::impl {
  impl(std::istream& in, const json_read_options& options, std::size_t max_text)
      : in(in), options(options), max_text(std::max<std::size_t>(max_text, 16)) {
    buf.resize(std::min<std::size_t>(this->max_text, 1 << 20));
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
  std::size_t count = 0;  // documents read or attempted

  // Line and column: the position of buf[0], and of buf[mark], the last one worked out.
  text_position at_start;
  std::size_t mark = 0;
  text_position at_mark;
  text_position err_pos;

  // The line-at-a-time path: the stream offset of the next '\n' (when newline_found), or how far
  // the search for it has gone; and the end of the last line the path failed on.
  std::size_t newline = 0;
  bool newline_found = false;
  std::size_t failed_line = static_cast<std::size_t>(-1);

  std::size_t abs(std::size_t i) const noexcept { return base + i; }

  // The position of buf[i]: counted from the last position worked out when i is after it.
  text_position position(std::size_t i) noexcept {
    if (i < mark) {
      mark = 0;
      at_mark = at_start;
    }
    at_mark = advance(at_mark, buf.data() + mark, i - mark);
    mark = i;
    return at_mark;
  }

  // Reads more input after end, keeping buf[begin, end); false at end of input (or when the
  // buffer may not grow and is full). With `grow` false the buffer keeps its size.
  bool fill(bool grow = true) {
    if (eof) return false;
    if (begin > 0) {
      at_start = position(begin);
      std::memmove(buf.data(), buf.data() + begin, end - begin);
      end -= begin;
      base += begin;
      begin = 0;
      mark = 0;
      at_mark = at_start;
    }
    if (end == buf.size()) {
      if (!grow || buf.size() >= max_text) return false;
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

  error fail(errc code, std::size_t i, bool resumable) {
    err_pos = position(i);
    fatal = fatal || !resumable;
    return error{code, abs(i)};
  }

  // Skips whitespace; false at end of input.
  bool skip_ws() {
    for (;;) {
      while (begin != end && is_ws(buf[begin])) ++begin;
      if (begin != end) return true;
      if (!fill()) return false;
    }
  }

  // Skips the rest of the line at i (after an error in the sequence form).
  void skip_line(std::size_t i) {
    begin = i;
    for (;;) {
      const void* nl = std::memchr(buf.data() + begin, '\n', end - begin);
      if (nl != nullptr) {
        begin = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
        return;
      }
      begin = end;
      if (!fill()) return;
    }
  }

  // The end of the line that starts the document at begin: the index of its '\n', or end when
  // the input ends first. Fails (npos) when the line does not fit in the buffer as it is, so
  // that this path never makes the buffer grow, and when the unread bytes fill more than half of
  // it, so that moving them to the front costs no more than the read that follows.
  std::size_t line_end() {
    if (newline_found && newline >= abs(begin)) return newline - base;
    std::size_t from = begin;
    if (!newline_found && newline > abs(begin)) from = newline - base;
    for (;;) {
      const void* nl = std::memchr(buf.data() + from, '\n', end - from);
      if (nl != nullptr) {
        newline_found = true;
        newline = abs(static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()));
        return newline - base;
      }
      newline_found = false;
      newline = abs(end);
      const std::size_t searched = end - begin;
      if (eof) return in.bad() ? std::string_view::npos : end;
      if (searched > buf.size() / 2 || !fill(false)) {
        return eof && !in.bad() ? end : std::string_view::npos;
      }
      from = begin + searched;
    }
  }

  // Tries the rest of the line at begin (a '{') as one whole document: true when from_json()
  // accepts it. In the array form the line may end with the ',' or ']' after the document.
  bool try_line(document& out) {
    const std::size_t stop_at = line_end();
    if (stop_at == std::string_view::npos || abs(stop_at) == failed_line) return false;
    std::size_t stop = stop_at;
    while (stop > begin && is_ws(buf[stop - 1])) --stop;
    if (shape == form::array && stop > begin && (buf[stop - 1] == ',' || buf[stop - 1] == ']')) {
      --stop;
      while (stop > begin && is_ws(buf[stop - 1])) --stop;
    }
    if (buf[stop - 1] == '}') {
      auto doc = from_json(std::string_view(buf.data() + begin, stop - begin), options);
      if (doc) {
        begin = stop;
        out = std::move(*doc);
        return true;
      }
    }
    failed_line = abs(stop_at);
    return false;
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
        ++begin;
        if (!skip_ws()) return fail(errc::invalid_json, begin, false);
        if (buf[begin] == ']') {
          ++begin;
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
          ++begin;
          array_closed = true;
          return next(out);
        }
        if (buf[begin] != ',') return fail(errc::invalid_json, begin, false);
        ++begin;
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
    if (try_line(out)) return true;
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
          if (shape == form::sequence) begin = i + 1;
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
      begin = i;
      return e;
    }
    begin = i;
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
