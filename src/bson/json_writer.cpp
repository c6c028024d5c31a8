// Extended JSON v2 writer: BSON bytes to canonical or relaxed Extended JSON text.
//
// Speed comes from three choices. (1) Output goes through a raw cursor into one std::string that
// grows geometrically; each value reserves its worst case once and then writes without bounds
// checks. (2) Values are decoded straight from `element::raw_value()` (the view was validated, so
// the bytes are there) instead of through the `result<T>` getters. (3) Strings are scanned eight
// bytes at a time for the three kinds of byte JSON needs escaped, and runs of plain bytes are
// copied with memcpy. Nesting uses an explicit stack, so deep documents cannot exhaust the call
// stack whatever depth limit validation was given.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/type.hpp>
#include <oid/bson/view.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bson/detail/bytes.hpp"
#include "detail/base64.hpp"
#include "detail/hex.hpp"

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

namespace oid::bson {
namespace {

// ---- Reading validated bytes ------------------------------------------------------------------

using detail::load_le_u32;
using detail::load_le_u64;
using oid::detail::encode_base64;
using oid::detail::encode_hex;
using oid::detail::encode_hex12;

// A BSON string value (int32 length including the NUL, bytes, NUL) as a string_view.
std::string_view string_at(const std::uint8_t* p) noexcept {
  const std::uint32_t n = load_le_u32(p);
  return {reinterpret_cast<const char*>(p + 4), n - 1};
}

// ---- The output cursor ------------------------------------------------------------------------

// The text is written through a raw pointer into a scratch buffer that belongs to the thread and
// is kept between calls, then appended to the caller's string in one copy. Writing into the
// std::string directly would mean growing it with resize(), which fills the new space with zeros
// first (resize_and_overwrite is C++23); measured, that zero-filling cost more than the final copy.
class out_buffer {
 public:
  explicit out_buffer(std::size_t expected) : scratch_(thread_scratch()) {
    if (scratch_.size < expected) replace_scratch(expected, 0);
    p_ = scratch_.data.get();
    end_ = p_ + scratch_.size;
  }
  out_buffer(const out_buffer&) = delete;
  out_buffer& operator=(const out_buffer&) = delete;

  // Room for `n` more characters; returns where to write them. Hand back the new end with commit.
  // Inlined everywhere: it runs several times per element.
  [[gnu::always_inline]] char* reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) grow(n);
    return p_;
  }
  void commit(char* p) noexcept { p_ = p; }

  // Appends the text to `out`. A scratch buffer grown past 4 MiB by a huge document is released,
  // so that one document does not pin its memory to the thread for good.
  void finish(std::string& out) {
    out.append(scratch_.data.get(), used());
    if (scratch_.size > (std::size_t{4} << 20)) scratch_ = {};
  }

 private:
  struct scratch {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
  };
  static scratch& thread_scratch() {
    thread_local scratch s;
    return s;
  }

  std::size_t used() const noexcept { return static_cast<std::size_t>(p_ - scratch_.data.get()); }

  void replace_scratch(std::size_t size, std::size_t keep) {
    auto bigger = std::make_unique_for_overwrite<char[]>(size);
    if (keep != 0) std::memcpy(bigger.get(), scratch_.data.get(), keep);
    scratch_.data = std::move(bigger);
    scratch_.size = size;
  }

  [[gnu::noinline]] void grow(std::size_t n) {
    const std::size_t keep = used();
    replace_scratch(std::max(scratch_.size * 2, keep + n + 64), keep);
    p_ = scratch_.data.get() + keep;
    end_ = scratch_.data.get() + scratch_.size;
  }

  scratch& scratch_;
  char* p_ = nullptr;
  char* end_ = nullptr;
};

template <std::size_t N>
char* put(char* p, const char (&lit)[N]) noexcept {
  std::memcpy(p, lit, N - 1);
  return p + N - 1;
}

char* put(char* p, std::string_view s) noexcept {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// ---- Strings ----------------------------------------------------------------------------------

// What each byte becomes inside a JSON string: 0 = itself, 'u' = \u00XX, else the letter after
// the backslash. Only control characters, '"' and '\' need escaping; everything else (UTF-8
// included) is copied.
constexpr auto escape_table = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = 'u';
  t['\b'] = 'b';
  t['\f'] = 'f';
  t['\n'] = 'n';
  t['\r'] = 'r';
  t['\t'] = 't';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}();

// The index of the first byte at or after i that needs escaping, or n. Plain bytes are the
// common case by far, so they are skipped 16 (SSE2, part of x86-64) and then 8 (SWAR) at a time.
std::size_t find_escape(const char* s, std::size_t i, std::size_t n) noexcept {
#if defined(__SSE2__)
  // A byte needs escaping when it is below 0x20 (unsigned min(b, 0x1F) == b), '"' or backslash.
  const __m128i control_max = _mm_set1_epi8(0x1F);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i hits =
        _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(b, control_max), b),
                     _mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash)));
    if (const int m = _mm_movemask_epi8(hits)) {
      return i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(m)));
    }
  }
#endif
  if constexpr (std::endian::native == std::endian::little) {
    // SWAR: flag bytes below 0x20 and bytes equal to '"' or backslash. Borrows in these
    // subtractions only run towards higher bytes, so the lowest flagged byte (the first in memory
    // on a little-endian machine) is always a true match; later false positives do not matter.
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, s + i, 8);
      const std::uint64_t q = w ^ (ones * '"');
      const std::uint64_t bs = w ^ (ones * '\\');
      const std::uint64_t hits = ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs);
      if (const std::uint64_t m = hits & highs) {
        return i + static_cast<std::size_t>(std::countr_zero(m) >> 3);
      }
    }
  }
  while (i < n && escape_table[static_cast<unsigned char>(s[i])] == 0) ++i;
  return i;
}

void write_string(out_buffer& out, std::string_view s) {
  const std::size_t n = s.size();
  char* p = out.reserve(n + 2);
  *p++ = '"';
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = find_escape(s.data(), i, n);
    std::memcpy(p, s.data() + i, j - i);
    p += j - i;
    if (j == n) break;
    // An escape takes up to 6 characters for 1 byte: make room for it and the rest.
    out.commit(p);
    p = out.reserve(6 + (n - j - 1) + 1);
    const auto c = static_cast<unsigned char>(s[j]);
    const char e = escape_table[c];
    *p++ = '\\';
    if (e == 'u') {
      p = put(p, "u00");
      p = encode_hex(&c, 1, p);
    } else {
      *p++ = e;
    }
    i = j + 1;
  }
  *p++ = '"';
  out.commit(p);
}

// ---- Numbers ----------------------------------------------------------------------------------

// Longest double text: "-" + 17 digits + "." + "E-324" and change, or "0.0000" + 17 digits.
constexpr std::size_t max_double_chars = 32;

// Writes a finite double: the shortest digits that read back to the same value (std::to_chars),
// in plain notation when the decimal exponent is in [-4, 16), else as d.dddE+x. Plain notation
// always has a fraction, so the text reads back as a double rather than an integer.
char* write_finite_double(char* p, double v) noexcept {
  if (std::signbit(v)) {
    *p++ = '-';
    v = -v;
  }
  // Integers below 2^53 are exact, and their shortest round-trip digits are the integer itself.
  if (v < 9007199254740992.0 && v == std::floor(v)) {
    p = std::to_chars(p, p + 20, static_cast<std::uint64_t>(v)).ptr;
    return put(p, ".0");
  }
  char sci[max_double_chars];
  const char* const sci_end =
      std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific).ptr;
  // sci is "d[.ddd]e(+|-)xx": collect the digits and the exponent.
  char digits[20];
  int n = 0;
  const char* q = sci;
  for (; *q != 'e'; ++q) {
    if (*q != '.') digits[n++] = *q;
  }
  ++q;
  const bool negative_exponent = *q++ == '-';
  int exponent = 0;
  for (; q != sci_end; ++q) exponent = exponent * 10 + (*q - '0');
  if (negative_exponent) exponent = -exponent;

  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      const int whole = exponent + 1;
      if (n <= whole) {
        p = put(p, std::string_view(digits, static_cast<std::size_t>(n)));
        std::memset(p, '0', static_cast<std::size_t>(whole - n));
        p += whole - n;
        return put(p, ".0");
      }
      p = put(p, std::string_view(digits, static_cast<std::size_t>(whole)));
      *p++ = '.';
      return put(p, std::string_view(digits + whole, static_cast<std::size_t>(n - whole)));
    }
    p = put(p, "0.");
    std::memset(p, '0', static_cast<std::size_t>(-exponent - 1));
    p += -exponent - 1;
    return put(p, std::string_view(digits, static_cast<std::size_t>(n)));
  }
  *p++ = digits[0];
  if (n > 1) {
    *p++ = '.';
    p = put(p, std::string_view(digits + 1, static_cast<std::size_t>(n - 1)));
  }
  *p++ = 'E';
  *p++ = negative_exponent ? '-' : '+';
  return std::to_chars(p, p + 4, negative_exponent ? -exponent : exponent).ptr;
}

// ---- Dates ------------------------------------------------------------------------------------

constexpr std::int64_t max_iso_ms = 253402300799999;  // 9999-12-31T23:59:59.999Z

char* put2(char* p, unsigned v) noexcept {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
  return p + 2;
}

// "YYYY-MM-DDTHH:MM:SS[.mmm]Z" for 0 <= ms <= max_iso_ms.
char* write_iso_date(char* p, std::int64_t ms) noexcept {
  using namespace std::chrono;
  const std::int64_t day = ms / 86'400'000;
  auto rest = static_cast<unsigned>(ms % 86'400'000);
  const year_month_day ymd{sys_days{days{day}}};
  const auto y = static_cast<unsigned>(static_cast<int>(ymd.year()));
  p = put2(p, y / 100);
  p = put2(p, y % 100);
  *p++ = '-';
  p = put2(p, static_cast<unsigned>(ymd.month()));
  *p++ = '-';
  p = put2(p, static_cast<unsigned>(ymd.day()));
  *p++ = 'T';
  p = put2(p, rest / 3'600'000);
  rest %= 3'600'000;
  *p++ = ':';
  p = put2(p, rest / 60'000);
  rest %= 60'000;
  *p++ = ':';
  p = put2(p, rest / 1000);
  rest %= 1000;
  if (rest != 0) {
    *p++ = '.';
    *p++ = static_cast<char>('0' + rest / 100);
    p = put2(p, rest % 100);
  }
  *p++ = 'Z';
  return p;
}

// ---- Binary -----------------------------------------------------------------------------------

// ---- The writer -------------------------------------------------------------------------------

// Every fixed-size value with its wrapper fits in this many characters (the longest is a
// decimal128 wrapper, about 65 with pretty spacing).
constexpr std::size_t max_fixed_value = 128;

struct frame {
  document_iterator it;
  const std::uint8_t* end;  // the document's terminator, where `it` stops (its raw().data())
  bool array = false;
  bool first = true;
  bool close_wrapper = false;  // a code-with-scope scope: one more '}' after the document's own
};

// Storage for a frame that is not constructed until it is pushed: the writer keeps 32 of them on
// its own stack, and default-constructing them all would cost more than writing a small document.
union frame_slot {
  frame_slot() noexcept {}
  frame f;
};

// Canonical and Pretty are template parameters so that each of the four writers is a straight
// line of stores with its literals resolved at compile time.
template <bool Canonical, bool Pretty>
class writer {
 public:
  writer(out_buffer& out, int indent) : out_(out), indent_(static_cast<std::size_t>(indent)) {}

  void run(document_view doc) {
    open(doc, false, false);
    while (depth_ != 0) {
      frame& f = top();
      if (f.it->raw().data() == f.end) {
        close(f);
        continue;
      }
      const element e = *f.it;
      ++f.it;
      separator(f);
      if (!f.array) {
        write_string(out_, e.key());
        char* p = out_.reserve(2);
        out_.commit(Pretty ? put(p, ": ") : put(p, ":"));
      }
      value(e);
    }
  }

 private:
  // A literal in its compact or pretty spelling.
  template <std::size_t N, std::size_t M>
  static constexpr std::string_view lit(const char (&compact)[N], const char (&pretty)[M]) {
    if constexpr (Pretty) {
      return {pretty, M - 1};
    } else {
      return {compact, N - 1};
    }
  }

  // An int32 or int64 at `p`: canonical mode wraps it in `wrapper` ({"$numberInt":" or
  // {"$numberLong":") and "}, relaxed mode writes the bare number. Returns the end.
  template <class Int>
  static char* integer(char* p, std::string_view wrapper, Int n) noexcept {
    constexpr int digits = std::numeric_limits<Int>::digits10 + 2;  // sign and all digits
    if constexpr (Canonical) {
      p = put(p, wrapper);
      p = std::to_chars(p, p + digits, n).ptr;
      return put(p, "\"}");
    } else {
      return std::to_chars(p, p + digits, n).ptr;
    }
  }

  frame& top() noexcept { return frames_[depth_ - 1].f; }

  void open(document_view doc, bool array, bool close_wrapper) {
    char* p = out_.reserve(1);
    *p++ = array ? '[' : '{';
    out_.commit(p);
    if (depth_ == capacity_) grow_stack();
    new (&frames_[depth_++].f)
        frame{doc.begin(), doc.data() + doc.size() - 1, array, true, close_wrapper};
  }

  void close(const frame& f) {
    const bool empty = f.first;
    const char bracket = f.array ? ']' : '}';
    const bool close_wrapper = f.close_wrapper;
    --depth_;
    if (Pretty && !empty) newline_and_indent(depth_);
    char* p = out_.reserve(2);
    *p++ = bracket;
    if (close_wrapper) *p++ = '}';
    out_.commit(p);
  }

  void separator(frame& f) {
    if (!f.first) {
      char* p = out_.reserve(1);
      *p++ = ',';
      out_.commit(p);
    }
    f.first = false;
    if constexpr (Pretty) newline_and_indent(depth_);
  }

  void newline_and_indent(std::size_t level) {
    const std::size_t spaces = indent_ * level;
    char* p = out_.reserve(1 + spaces);
    *p++ = '\n';
    std::memset(p, ' ', spaces);
    out_.commit(p + spaces);
  }

  void grow_stack() {
    const std::size_t bigger = capacity_ * 2;
    auto next = std::make_unique<frame_slot[]>(bigger);
    for (std::size_t i = 0; i < depth_; ++i) new (&next[i].f) frame(frames_[i].f);
    heap_ = std::move(next);
    frames_ = heap_.get();
    capacity_ = bigger;
  }

  // "$wrapper": "text" } for the small string-valued wrappers.
  void wrapped_string(std::string_view opening, std::string_view s) {
    char* p = out_.reserve(opening.size());
    out_.commit(put(p, opening));
    write_string(out_, s);
    p = out_.reserve(1);
    *p++ = '}';
    out_.commit(p);
  }

  void value(const element& e) {
    const std::uint8_t* v = e.raw_value().data();
    char* p = out_.reserve(max_fixed_value);
    switch (e.type()) {
    case type::double_: {
      double d;
      const std::uint64_t bits = load_le_u64(v);
      std::memcpy(&d, &bits, 8);
      if (std::isfinite(d)) {
        if constexpr (Canonical) {
          p = put(p, lit("{\"$numberDouble\":\"", "{\"$numberDouble\": \""));
          p = write_finite_double(p, d);
          p = put(p, "\"}");
        } else {
          p = write_finite_double(p, d);
        }
      } else {
        p = put(p, lit("{\"$numberDouble\":\"", "{\"$numberDouble\": \""));
        p = put(p, std::isnan(d) ? std::string_view("NaN")
                   : d > 0       ? std::string_view("Infinity")
                                 : std::string_view("-Infinity"));
        p = put(p, "\"}");
      }
      break;
    }
    case type::string:
      out_.commit(p);
      write_string(out_, string_at(v));
      return;
    case type::document:
    case type::array:
      out_.commit(p);
      open(document_view::unchecked(e.raw_value()), e.type() == type::array, false);
      return;
    case type::binary: {
      const std::uint32_t size = load_le_u32(v);
      const std::uint8_t subtype = v[4];
      const std::uint8_t* bytes = v + 5;
      std::size_t n = size;
      // The old binary subtype repeats the length inside the payload; the JSON holds the bytes
      // after it (validation checked that it equals size - 4).
      if (subtype == binary_subtype::old_binary && n >= 4) {
        bytes += 4;
        n -= 4;
      }
      out_.commit(p);
      p = out_.reserve((n + 2) / 3 * 4 + max_fixed_value);
      p = put(p, lit("{\"$binary\":{\"base64\":\"", "{\"$binary\": {\"base64\": \""));
      p = encode_base64(bytes, n, p);
      p = put(p, lit("\",\"subType\":\"", "\", \"subType\": \""));
      p = encode_hex(&subtype, 1, p);
      p = put(p, "\"}}");
      break;
    }
    case type::undefined: p = put(p, lit("{\"$undefined\":true}", "{\"$undefined\": true}")); break;
    case type::object_id:
      p = put(p, lit("{\"$oid\":\"", "{\"$oid\": \""));
      encode_hex12(v, p);
      p += 24;
      p = put(p, "\"}");
      break;
    case type::boolean: p = v[0] != 0 ? put(p, "true") : put(p, "false"); break;
    case type::date_time: {
      const auto ms = static_cast<std::int64_t>(load_le_u64(v));
      if (!Canonical && ms >= 0 && ms <= max_iso_ms) {
        p = put(p, lit("{\"$date\":\"", "{\"$date\": \""));
        p = write_iso_date(p, ms);
        p = put(p, "\"}");
      } else {
        p = put(p, lit("{\"$date\":{\"$numberLong\":\"", "{\"$date\": {\"$numberLong\": \""));
        p = std::to_chars(p, p + 20, ms).ptr;
        p = put(p, "\"}}");
      }
      break;
    }
    case type::null: p = put(p, "null"); break;
    case type::regex: {
      const char* pattern = reinterpret_cast<const char*>(v);
      const std::size_t pattern_size = std::strlen(pattern);
      const char* options = pattern + pattern_size + 1;
      const std::size_t options_size = std::strlen(options);
      out_.commit(put(p, lit("{\"$regularExpression\":{\"pattern\":",
                             "{\"$regularExpression\": {\"pattern\": ")));
      write_string(out_, {pattern, pattern_size});
      p = out_.reserve(16);
      out_.commit(put(p, lit(",\"options\":", ", \"options\": ")));
      write_sorted_options({options, options_size});
      p = out_.reserve(2);
      p = put(p, "}}");
      break;
    }
    case type::db_pointer: {
      const std::string_view ref = string_at(v);
      out_.commit(put(p, lit("{\"$dbPointer\":{\"$ref\":", "{\"$dbPointer\": {\"$ref\": ")));
      write_string(out_, ref);
      p = out_.reserve(max_fixed_value);
      p = put(p, lit(",\"$id\":{\"$oid\":\"", ", \"$id\": {\"$oid\": \""));
      encode_hex12(v + 4 + ref.size() + 1, p);
      p += 24;
      p = put(p, "\"}}}");
      break;
    }
    case type::javascript:
      out_.commit(p);
      wrapped_string(lit("{\"$code\":", "{\"$code\": "), string_at(v));
      return;
    case type::symbol:
      out_.commit(p);
      wrapped_string(lit("{\"$symbol\":", "{\"$symbol\": "), string_at(v));
      return;
    case type::javascript_with_scope: {
      // int32 total length, string, document.
      const std::string_view code = string_at(v + 4);
      const std::uint8_t* scope = v + 4 + 4 + code.size() + 1;
      out_.commit(put(p, lit("{\"$code\":", "{\"$code\": ")));
      write_string(out_, code);
      p = out_.reserve(16);
      out_.commit(put(p, lit(",\"$scope\":", ", \"$scope\": ")));
      open(document_view::unchecked({scope, load_le_u32(scope)}), false, true);
      return;
    }
    case type::int32:
      p = integer(p, lit("{\"$numberInt\":\"", "{\"$numberInt\": \""),
                  static_cast<std::int32_t>(load_le_u32(v)));
      break;
    case type::timestamp: {
      const std::uint64_t ts = load_le_u64(v);
      p = put(p, lit("{\"$timestamp\":{\"t\":", "{\"$timestamp\": {\"t\": "));
      p = std::to_chars(p, p + 10, static_cast<std::uint32_t>(ts >> 32)).ptr;
      p = put(p, lit(",\"i\":", ", \"i\": "));
      p = std::to_chars(p, p + 10, static_cast<std::uint32_t>(ts)).ptr;
      p = put(p, "}}");
      break;
    }
    case type::int64:
      p = integer(p, lit("{\"$numberLong\":\"", "{\"$numberLong\": \""),
                  static_cast<std::int64_t>(load_le_u64(v)));
      break;
    case type::decimal128: {
      const decimal128 d{load_le_u64(v), load_le_u64(v + 8)};
      p = put(p, lit("{\"$numberDecimal\":\"", "{\"$numberDecimal\": \""));
      p = d.to_chars(p, p + decimal128::max_string_length).ptr;
      p = put(p, "\"}");
      break;
    }
    case type::min_key: p = put(p, lit("{\"$minKey\":1}", "{\"$minKey\": 1}")); break;
    case type::max_key: p = put(p, lit("{\"$maxKey\":1}", "{\"$maxKey\": 1}")); break;
    default:
      // Unreachable for validated bytes; write null rather than invent a value.
      p = put(p, "null");
      break;
    }
    out_.commit(p);
  }

  // The specification wants regex options in alphabetical order; BSON may hold them in any order
  // (the corpus's degenerate "flags not alphabetized" case). Real options are a few ASCII letters;
  // anything else is sorted by whole UTF-8 sequences, so that sorting cannot break a character
  // apart and make the JSON invalid UTF-8.
  void write_sorted_options(std::string_view options) {
    char local[32];
    const bool ascii = std::all_of(options.begin(), options.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii && options.size() <= sizeof local) {
      std::memcpy(local, options.data(), options.size());
      std::sort(local, local + options.size());
      write_string(out_, {local, options.size()});
      return;
    }
    // A unit is a byte and the continuation bytes (10xxxxxx) after it; byte order of whole units
    // is code point order for UTF-8.
    std::vector<std::string_view> units;
    for (std::size_t i = 0; i < options.size();) {
      std::size_t j = i + 1;
      while (j < options.size() && (static_cast<unsigned char>(options[j]) & 0xC0) == 0x80) ++j;
      units.push_back(options.substr(i, j - i));
      i = j;
    }
    std::sort(units.begin(), units.end());
    std::string sorted;
    sorted.reserve(options.size());
    for (const auto u : units) sorted += u;
    write_string(out_, sorted);
  }

  out_buffer& out_;
  std::size_t indent_;
  std::size_t depth_ = 0;
  // Frames for the first 32 levels live here; deeper documents move them to the heap.
  frame_slot inline_frames_[32];
  frame_slot* frames_ = inline_frames_;
  std::size_t capacity_ = 32;
  std::unique_ptr<frame_slot[]> heap_;
};

}  // namespace

void to_json(document_view doc, const json_options& options, std::string& out) {
  // Canonical JSON usually runs 1.5-3 times the BSON size; start at twice it and grow from there.
  out_buffer buf(doc.size() * 2 + 64);
  const int indent = std::clamp(options.indent, 0, 16);
  if (options.mode == json_mode::canonical) {
    if (options.pretty) {
      writer<true, true>(buf, indent).run(doc);
    } else {
      writer<true, false>(buf, indent).run(doc);
    }
  } else {
    if (options.pretty) {
      writer<false, true>(buf, indent).run(doc);
    } else {
      writer<false, false>(buf, indent).run(doc);
    }
  }
  buf.finish(out);
}

std::string to_json(document_view doc, const json_options& options) {
  std::string out;
  to_json(doc, options, out);
  return out;
}

}  // namespace oid::bson
