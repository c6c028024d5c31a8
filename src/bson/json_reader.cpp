// Extended JSON v2 text to BSON, in one pass.
//
// Why a hand-written parser and not simdjson (which oid_bson links): the reader's job is not to
// build a JSON tree but BSON bytes, and the fastest path is to write each value straight into the
// output as it is scanned. With simdjson every string is first unescaped into simdjson's buffer
// and then copied into the BSON (two copies instead of one), the input must be copied into a
// padded buffer first, and the DOM API adds a tape in between. What decides it is errors:
// simdjson reports an error code with no reliable position (On-Demand's current_location() is
// only as precise as the last token it reached, and its lazy validation reports some syntax
// errors late or not at all for parts never visited), while this reader must report the exact
// byte of every problem, JSON or Extended JSON, so that `oid bson from-json` can say line and
// column. Duplicate keys and key order come for free here. Strings are scanned 16 bytes at a time
// (SSE2; 8 with SWAR elsewhere) for the four byte classes that need attention, and copied as they
// are scanned. On DriverBench's canonical flat/deep/full documents from_json() measured 4 to 8
// times as fast as libbson 1.23's bson_init_from_json (same process, same data, on a busy 2-core
// machine), at roughly a third of the speed of simdjson's DOM parse alone, which builds no BSON.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <istream>
#include <limits>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/type.hpp>
#include <string>
#include <vector>

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

namespace oid::bson {
namespace {

constexpr std::size_t depth_cap = 1000;

// ---- Output: BSON bytes in a growable buffer -------------------------------------------------

class out_buffer {
 public:
  explicit out_buffer(std::size_t initial) { buf_.resize(std::max<std::size_t>(initial, 64)); }

  std::size_t size() const noexcept { return size_; }
  std::uint8_t* at(std::size_t pos) noexcept { return buf_.data() + pos; }
  void truncate(std::size_t n) noexcept { size_ = n; }

  // Room for n more bytes; the pointer is valid until the next ensure().
  std::uint8_t* ensure(std::size_t n) {
    if (buf_.size() - size_ < n) [[unlikely]]
      grow(n);
    return buf_.data() + size_;
  }
  void put(std::uint8_t b) {
    *ensure(1) = b;
    ++size_;
  }
  void put(const void* p, std::size_t n) {
    std::memcpy(ensure(n), p, n);
    size_ += n;
  }
  void put_i32(std::int32_t v) { put_le(static_cast<std::uint32_t>(v)); }
  void put_i64(std::int64_t v) { put_le(static_cast<std::uint64_t>(v)); }
  void put_u64(std::uint64_t v) { put_le(v); }
  void put_double(double d) { put_le(std::bit_cast<std::uint64_t>(d)); }
  void patch_i32(std::size_t pos, std::int32_t v) noexcept {
    store_le(buf_.data() + pos, static_cast<std::uint32_t>(v));
  }
  void advance(std::size_t n) noexcept { size_ += n; }

  std::vector<std::uint8_t> take() && {
    buf_.resize(size_);
    return std::move(buf_);
  }

 private:
  template <class U>
  static void store_le(std::uint8_t* p, U v) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(p, &v, sizeof v);
    } else {
      for (std::size_t i = 0; i < sizeof v; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
  }
  template <class U>
  void put_le(U v) {
    store_le(ensure(sizeof v), v);
    size_ += sizeof v;
  }
  void grow(std::size_t n) { buf_.resize(std::max(buf_.size() * 2, size_ + n)); }

  // resize() zero-fills, but only when growing: the first allocation is sized from the text, so
  // a typical document grows at most once or twice.
  std::vector<std::uint8_t> buf_;
  std::size_t size_ = 0;
};

// ---- Small helpers ----------------------------------------------------------------------------

constexpr bool is_ws(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The type wrappers, keyed by their first key. The legacy ones only count when legacy is set.
enum class wrapper : std::uint8_t {
  none,
  oid,
  symbol,
  number_int,
  number_long,
  number_double,
  number_decimal,
  binary,
  uuid,
  code,
  scope,
  timestamp,
  regular_expression,
  db_pointer,
  date,
  min_key,
  max_key,
  undefined,
  legacy_regex,    // "$regex"
  legacy_options,  // "$options"
  legacy_type,     // "$type"
};

wrapper find_wrapper(const std::uint8_t* k, std::size_t n) noexcept {
  auto is = [&](std::string_view s) { return n == s.size() && std::memcmp(k, s.data(), n) == 0; };
  switch (n) {
  case 4: return is("$oid") ? wrapper::oid : wrapper::none;
  case 5:
    if (is("$date")) return wrapper::date;
    if (is("$code")) return wrapper::code;
    if (is("$uuid")) return wrapper::uuid;
    if (is("$type")) return wrapper::legacy_type;
    return wrapper::none;
  case 6:
    if (is("$scope")) return wrapper::scope;
    if (is("$regex")) return wrapper::legacy_regex;
    return wrapper::none;
  case 7:
    if (is("$binary")) return wrapper::binary;
    if (is("$symbol")) return wrapper::symbol;
    if (is("$minKey")) return wrapper::min_key;
    if (is("$maxKey")) return wrapper::max_key;
    return wrapper::none;
  case 8: return is("$options") ? wrapper::legacy_options : wrapper::none;
  case 10:
    if (is("$numberInt")) return wrapper::number_int;
    if (is("$timestamp")) return wrapper::timestamp;
    if (is("$undefined")) return wrapper::undefined;
    if (is("$dbPointer")) return wrapper::db_pointer;
    return wrapper::none;
  case 11: return is("$numberLong") ? wrapper::number_long : wrapper::none;
  case 13: return is("$numberDouble") ? wrapper::number_double : wrapper::none;
  case 14: return is("$numberDecimal") ? wrapper::number_decimal : wrapper::none;
  case 18: return is("$regularExpression") ? wrapper::regular_expression : wrapper::none;
  default: return wrapper::none;
  }
}

constexpr bool is_legacy(wrapper w) noexcept {
  return w == wrapper::legacy_regex || w == wrapper::legacy_options || w == wrapper::legacy_type;
}

// SWAR: which bytes of w need attention inside a JSON string ('"', '\\', a control character, or
// a non-ASCII byte that must be checked as UTF-8)? Returns a mask with the high bit of each such
// byte set. Borrows in the subtractions only run towards higher bytes, so the lowest set bit is
// always exact (higher ones may be false alarms, which is all the caller needs).
constexpr std::uint64_t ones = 0x0101010101010101ull;
constexpr std::uint64_t highs = 0x8080808080808080ull;
constexpr std::uint64_t attention_mask(std::uint64_t w) noexcept {
  const std::uint64_t q = w ^ (ones * '"');
  const std::uint64_t b = w ^ (ones * '\\');
  const std::uint64_t quote = (q - ones) & ~q;
  const std::uint64_t backslash = (b - ones) & ~b;
  const std::uint64_t control = (w - ones * 0x20) & ~w;
  return (quote | backslash | control | w) & highs;
}

// Eight bytes of text as a little-endian word, so that byte i of the text is bits 8i to 8i+7.
inline std::uint64_t load_word(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}

// Standard base64 with padding, decoded in place: the output (3 bytes per 4 characters) never
// overtakes the input. False on a character outside the alphabet, a length that is not a
// multiple of 4, or '=' anywhere but the last one or two places.
bool base64_decode_in_place(std::uint8_t* s, std::size_t len, std::size_t& size) noexcept {
  static constexpr auto table = [] {
    std::array<std::int8_t, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i)
      t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    return t;
  }();
  if (len % 4 != 0) return false;
  std::size_t pad = 0;
  if (len > 0 && s[len - 1] == '=') pad = s[len - 2] == '=' ? 2 : 1;
  std::size_t o = 0;
  for (std::size_t i = 0; i < len; i += 4) {
    const bool last = i + 4 == len;
    const int a = table[s[i]], b = table[s[i + 1]];
    const int c = last && pad == 2 ? 0 : table[s[i + 2]];
    const int d = last && pad >= 1 ? 0 : table[s[i + 3]];
    if ((a | b | c | d) < 0) return false;
    const std::uint32_t v = static_cast<std::uint32_t>(a << 18 | b << 12 | c << 6 | d);
    s[o++] = static_cast<std::uint8_t>(v >> 16);
    if (!(last && pad == 2)) s[o++] = static_cast<std::uint8_t>(v >> 8);
    if (!(last && pad >= 1)) s[o++] = static_cast<std::uint8_t>(v);
  }
  size = o;
  return true;
}

// RFC 3339 date-time (the relaxed $date form, and mongoexport's): YYYY-MM-DDTHH:MM:SS, an
// optional fraction of any length (digits past milliseconds are dropped), then Z or an offset
// written +HH:MM or +HHMM. Into milliseconds since the epoch.
bool parse_iso8601_ms(std::string_view s, std::int64_t& ms) noexcept {
  std::size_t i = 0;
  auto digits = [&](std::size_t n, int& v) {
    if (s.size() - i < n) return false;
    v = 0;
    for (std::size_t k = 0; k < n; ++k, ++i) {
      if (!is_digit(s[i])) return false;
      v = v * 10 + (s[i] - '0');
    }
    return true;
  };
  auto lit = [&](char c) {
    if (i >= s.size() || (s[i] != c && !(c == 'T' && s[i] == 't'))) return false;
    ++i;
    return true;
  };
  int y, mo, d, h, mi, sec;
  if (!digits(4, y) || !lit('-') || !digits(2, mo) || !lit('-') || !digits(2, d) || !lit('T') ||
      !digits(2, h) || !lit(':') || !digits(2, mi) || !lit(':') || !digits(2, sec))
    return false;
  int frac = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t start = i;
    int scale = 100;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      frac += (s[i] - '0') * scale;
      scale /= 10;
    }
    if (i == start) return false;
  }
  int offset_min = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i] == '-' ? -1 : 1;
    ++i;
    int oh, om;
    if (!digits(2, oh)) return false;
    if (i < s.size() && s[i] == ':') ++i;
    if (!digits(2, om) || oh > 23 || om > 59) return false;
    offset_min = sign * (oh * 60 + om);
  } else {
    return false;
  }
  if (i != s.size() || h > 23 || mi > 59 || sec > 59) return false;
  const std::chrono::year_month_day ymd{std::chrono::year{y},
                                        std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return false;
  const std::int64_t days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  ms = days * 86400000 + std::int64_t{h} * 3600000 + std::int64_t{mi} * 60000 +
       std::int64_t{sec} * 1000 + frac - std::int64_t{offset_min} * 60000;
  return true;
}

// ---- The parser -------------------------------------------------------------------------------

// Outcome of trying a legacy form that may turn out to be a plain document.
enum class attempt { matched, not_matched, failed };

class parser {
 public:
  parser(std::string_view text, const json_read_options& options)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        out_(text.size() + 16),
        legacy_(options.legacy),
        max_depth_(std::min(options.max_depth, depth_cap)),
        max_size_(std::min<std::size_t>(options.max_size, 0x7FFFFFFF)) {}

  result<std::vector<std::uint8_t>> run() {
    skip_ws();
    if (p_ == end_ || *p_ != '{') return error{errc::invalid_json, offset(p_)};
    ++p_;
    if (!parse_document_body(document_kind::top)) return err_;
    // Only the terminator can have crossed the limit since the last element's check.
    if (out_.size() > max_size_) return error{errc::too_large, offset(p_ - 1)};
    skip_ws();
    if (p_ != end_) return error{errc::invalid_json, offset(p_)};
    return std::move(out_).take();
  }

 private:
  // top: the top-level document (no type wrappers); scope: a $scope document (its own keys are
  // not wrappers either: it is a plain document by definition); nested: any other object value.
  enum class document_kind { top, scope, nested };

  std::size_t offset(const char* at) const noexcept {
    return static_cast<std::size_t>(at - begin_);
  }

  bool fail(errc code, const char* at) noexcept {
    err_ = error{code, offset(at)};
    return false;
  }
  bool fail_syntax() noexcept { return fail(errc::invalid_json, p_); }
  bool fail_ext(const char* at) noexcept { return fail(errc::invalid_extended_json, at); }

  void skip_ws() noexcept {
    while (p_ != end_ && is_ws(*p_)) ++p_;
  }
  bool expect(char c) noexcept {
    skip_ws();
    if (p_ == end_ || *p_ != c) return fail_syntax();
    ++p_;
    return true;
  }
  bool next_is(char c) noexcept { return p_ != end_ && *p_ == c; }

  // ---- strings --------------------------------------------------------------------------------

  // Parses the JSON string at p_ (which is '"') and appends its UTF-8 bytes to the output. For a
  // key, a NUL character is an error (BSON keys are C strings).
  bool parse_string(bool key) {
    ++p_;
    for (;;) {
      // Eight bytes at a time: copy the word to the output unconditionally (the buffer has room),
      // then keep only the bytes before the first one that needs attention. Short strings cost a
      // load, a store and a few ALU operations, with no call to memcpy.
#if defined(__SSE2__)
      // Sixteen at a time where SSE2 is there (every x86-64): one signed compare finds control
      // characters and non-ASCII bytes together, two more find '"' and '\\'.
      while (end_ - p_ >= 16) {
        std::uint8_t* d = out_.ensure(16);
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), v);
        const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                          _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                             _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        const auto m = static_cast<unsigned>(_mm_movemask_epi8(special));
        if (m == 0) {
          p_ += 16;
          out_.advance(16);
          continue;
        }
        const auto k = static_cast<std::size_t>(std::countr_zero(m));
        p_ += k;
        out_.advance(k);
        goto special;
      }
#endif
      while (end_ - p_ >= 8) {
        std::uint8_t* d = out_.ensure(8);
        std::memcpy(d, p_, 8);
        const std::uint64_t m = attention_mask(load_word(p_));
        if (m == 0) {
          p_ += 8;
          out_.advance(8);
          continue;
        }
        const auto k = static_cast<std::size_t>(std::countr_zero(m) / 8);
        p_ += k;
        out_.advance(k);
        break;
      }
      if (end_ - p_ < 8) {  // the last few bytes of the text
        const char* run = p_;
        while (p_ != end_) {
          const auto c = static_cast<unsigned char>(*p_);
          if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
          ++p_;
        }
        if (p_ != run) out_.put(run, static_cast<std::size_t>(p_ - run));
        if (p_ == end_) return fail_syntax();
      }
#if defined(__SSE2__)
    special:
#endif
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (!parse_escape(key)) return false;
      } else if (c < 0x20) {
        return fail_syntax();
      } else if (!copy_utf8_sequence()) {
        return false;
      }
    }
  }

  // A multi-byte UTF-8 sequence at p_: checked (no overlong forms, surrogates or code points
  // above U+10FFFF) and copied.
  bool copy_utf8_sequence() {
    const auto* s = reinterpret_cast<const unsigned char*>(p_);
    const std::size_t left = static_cast<std::size_t>(end_ - p_);
    const unsigned char c0 = s[0];
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c0 >= 0xC2 && c0 <= 0xDF) {
      n = 2;
    } else if (c0 >= 0xE0 && c0 <= 0xEF) {
      n = 3;
      if (c0 == 0xE0) lo = 0xA0;
      if (c0 == 0xED) hi = 0x9F;
    } else if (c0 >= 0xF0 && c0 <= 0xF4) {
      n = 4;
      if (c0 == 0xF0) lo = 0x90;
      if (c0 == 0xF4) hi = 0x8F;
    } else {
      return fail(errc::invalid_utf8, p_);
    }
    if (left < n || s[1] < lo || s[1] > hi) return fail(errc::invalid_utf8, p_);
    for (std::size_t i = 2; i < n; ++i) {
      if ((s[i] & 0xC0) != 0x80) return fail(errc::invalid_utf8, p_);
    }
    out_.put(s, n);
    p_ += n;
    return true;
  }

  bool read_hex4(unsigned& v) noexcept {
    if (end_ - p_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = hex_value(p_[i]);
      if (h < 0) return false;
      v = v << 4 | static_cast<unsigned>(h);
    }
    p_ += 4;
    return true;
  }

  bool parse_escape(bool key) {
    const char* start = p_;
    ++p_;
    if (p_ == end_) return fail_syntax();
    char c;
    switch (*p_) {
    case '"': c = '"'; break;
    case '\\': c = '\\'; break;
    case '/': c = '/'; break;
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
      ++p_;
      unsigned cp;
      if (!read_hex4(cp)) return fail(errc::invalid_json, start);
      if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(errc::invalid_utf8, start);
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned lo;
        if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return fail(errc::invalid_utf8, start);
        p_ += 2;
        if (!read_hex4(lo)) return fail(errc::invalid_json, p_ - 2);
        if (lo < 0xDC00 || lo > 0xDFFF) return fail(errc::invalid_utf8, start);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      }
      if (cp == 0 && key) return fail(errc::invalid_key, start);
      put_code_point(cp);
      return true;
    }
    default: return fail(errc::invalid_json, start);
    }
    ++p_;
    out_.put(static_cast<std::uint8_t>(c));
    return true;
  }

  void put_code_point(unsigned cp) {
    std::uint8_t b[4];
    std::size_t n;
    if (cp < 0x80) {
      b[0] = static_cast<std::uint8_t>(cp);
      n = 1;
    } else if (cp < 0x800) {
      b[0] = static_cast<std::uint8_t>(0xC0 | cp >> 6);
      b[1] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      b[0] = static_cast<std::uint8_t>(0xE0 | cp >> 12);
      b[1] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
      b[2] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
      n = 3;
    } else {
      b[0] = static_cast<std::uint8_t>(0xF0 | cp >> 18);
      b[1] = static_cast<std::uint8_t>(0x80 | ((cp >> 12) & 0x3F));
      b[2] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
      b[3] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
      n = 4;
    }
    out_.put(b, n);
  }

  // A BSON string value (int32 length, bytes, NUL) from the JSON string at p_.
  bool put_string_value() {
    const std::size_t len_pos = out_.size();
    out_.put_i32(0);
    if (!parse_string(false)) return false;
    out_.put(0);
    out_.patch_i32(len_pos, static_cast<std::int32_t>(out_.size() - len_pos - 4));
    return true;
  }

  // Parses the JSON string at p_ into the output's tail, for a wrapper to interpret; the caller
  // truncates the output afterwards. Anything but a string is a wrapper error at p_.
  bool scratch_string(std::size_t& pos, std::size_t& len) {
    skip_ws();
    if (!next_is('"')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    pos = out_.size();
    if (!parse_string(false)) return false;
    len = out_.size() - pos;
    return true;
  }
  std::string_view scratch_view(std::size_t pos, std::size_t len) noexcept {
    return {reinterpret_cast<const char*>(out_.at(pos)), len};
  }

  // ---- numbers --------------------------------------------------------------------------------

  struct number {
    const char* begin = nullptr;
    const char* end = nullptr;
    bool integer = false;   // no fraction, no exponent
    bool fits_i64 = false;  // integer and within int64
    std::int64_t i64 = 0;
  };

  // Scans a JSON number at p_ (strict RFC 8259 grammar).
  bool scan_number(number& n) {
    n.begin = p_;
    bool negative = false;
    if (next_is('-')) {
      negative = true;
      ++p_;
    }
    if (p_ == end_ || !is_digit(*p_)) return fail_syntax();
    const char* digits = p_;
    std::uint64_t mag = 0;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ != end_ && is_digit(*p_)) {
        mag = mag * 10 + static_cast<unsigned>(*p_ - '0');  // exact for up to 19 digits
        ++p_;
      }
    }
    const std::size_t ndigits = static_cast<std::size_t>(p_ - digits);
    bool integer = true;
    if (next_is('.')) {
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) return fail_syntax();
      while (p_ != end_ && is_digit(*p_)) ++p_;
      integer = false;
    }
    if (next_is('e') || next_is('E')) {
      ++p_;
      if (next_is('+') || next_is('-')) ++p_;
      if (p_ == end_ || !is_digit(*p_)) return fail_syntax();
      while (p_ != end_ && is_digit(*p_)) ++p_;
      integer = false;
    }
    n.end = p_;
    n.integer = integer;
    n.fits_i64 = false;
    if (integer && ndigits <= 19) {
      constexpr std::uint64_t limit = std::uint64_t{1} << 63;
      if (negative && mag <= limit) {
        n.fits_i64 = true;
        n.i64 = mag == limit ? std::numeric_limits<std::int64_t>::min()
                             : -static_cast<std::int64_t>(mag);
      } else if (!negative && mag < limit) {
        n.fits_i64 = true;
        n.i64 = static_cast<std::int64_t>(mag);
      }
    }
    return true;
  }

  // The double nearest to the number's text. Out of range: infinity or zero with its sign, as a
  // JSON number's value is a real number and those are the nearest doubles.
  static double to_double(const number& n) noexcept {
    double d = 0;
    const auto r = std::from_chars(n.begin, n.end, d);
    if (r.ec == std::errc::result_out_of_range) {
      const bool negative = *n.begin == '-';
      // The decimal exponent decides: overflow has many integer digits or a large exponent.
      const char* e = std::find_if(n.begin, n.end, [](char c) { return c == 'e' || c == 'E'; });
      long exp10 = 0;
      if (e != n.end) {
        const char* s = e + 1;
        const bool eneg = *s == '-';
        if (*s == '+' || *s == '-') ++s;
        for (; s != n.end && exp10 < 100000; ++s) exp10 = exp10 * 10 + (*s - '0');
        if (eneg) exp10 = -exp10;
      }
      const char* digits = n.begin + (negative ? 1 : 0);
      const char* int_end = std::find_if(digits, e, [](char c) { return c == '.'; });
      const bool leading_zero = *digits == '0';
      const long int_digits = leading_zero ? 0 : static_cast<long>(int_end - digits);
      const bool overflow = int_digits + exp10 > 0;
      d = overflow ? std::numeric_limits<double>::infinity() : 0.0;
      if (negative) d = -d;
    }
    return d;
  }

  // A relaxed-JSON number as a BSON value (int32, int64 or double); sets the type byte.
  bool put_number(std::size_t type_pos) {
    number n;
    if (!scan_number(n)) return false;
    if (n.fits_i64) {
      if (n.i64 >= std::numeric_limits<std::int32_t>::min() &&
          n.i64 <= std::numeric_limits<std::int32_t>::max()) {
        *out_.at(type_pos) = static_cast<std::uint8_t>(type::int32);
        out_.put_i32(static_cast<std::int32_t>(n.i64));
      } else {
        *out_.at(type_pos) = static_cast<std::uint8_t>(type::int64);
        out_.put_i64(n.i64);
      }
      return true;
    }
    *out_.at(type_pos) = static_cast<std::uint8_t>(type::double_);
    out_.put_double(to_double(n));
    return true;
  }

  // ---- values ---------------------------------------------------------------------------------

  bool literal(std::string_view word) noexcept {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::memcmp(p_, word.data(), word.size()) != 0)
      return fail_syntax();
    p_ += word.size();
    return true;
  }

  // Parses the value at p_ (whitespace skipped) for the element whose type byte is at type_pos
  // (key already written) and writes its value bytes.
  bool parse_value(std::size_t type_pos) {
    if (p_ == end_) return fail_syntax();
    std::uint8_t* t = out_.at(type_pos);
    switch (*p_) {
    case '"': *t = static_cast<std::uint8_t>(type::string); return put_string_value();
    case '{': return parse_object_value(type_pos);
    case '[': return parse_array(type_pos);
    case 't':
      *t = static_cast<std::uint8_t>(type::boolean);
      out_.put(1);
      return literal("true");
    case 'f':
      *t = static_cast<std::uint8_t>(type::boolean);
      out_.put(0);
      return literal("false");
    case 'n': *t = static_cast<std::uint8_t>(type::null); return literal("null");
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return put_number(type_pos);
    default: return fail_syntax();
    }
  }

  bool enter(const char* at) noexcept {
    if (++depth_ > max_depth_) return fail(errc::too_deep, at);
    return true;
  }

  // The members of an object whose '{' has been consumed, written as a BSON document (length,
  // elements, NUL) at the output's end.
  bool parse_document_body(document_kind kind) {
    const std::size_t start = out_.size();
    out_.put_i32(0);
    skip_ws();
    if (next_is('}')) {
      ++p_;
    } else {
      bool first = true;
      for (;;) {
        if (!next_is('"')) return fail_syntax();
        if (!parse_member(kind != document_kind::nested || first)) return false;
        first = false;
        skip_ws();
        if (next_is(',')) {
          ++p_;
          skip_ws();
          continue;
        }
        if (next_is('}')) {
          ++p_;
          break;
        }
        return fail_syntax();
      }
    }
    out_.put(0);
    out_.patch_i32(start, static_cast<std::int32_t>(out_.size() - start));
    return true;
  }

  // One "key": value member at p_. The size check counts the terminators still to come (one
  // per open document), so the error points at the member that made the document too large. A
  // wrapper key anywhere but first in a nested object breaks the specification's rule that a
  // wrapper object holds exactly its keys.
  bool parse_member(bool wrapper_keys_allowed) {
    const char* key_at = p_;
    const std::size_t type_pos = out_.size();
    out_.put(0);
    const std::size_t key_pos = out_.size();
    if (!parse_string(true)) return false;
    if (!wrapper_keys_allowed && *out_.at(key_pos) == '$') {
      const wrapper w = find_wrapper(out_.at(key_pos), out_.size() - key_pos);
      if (w != wrapper::none && !is_legacy(w)) return fail_ext(key_at);
    }
    out_.put(0);
    if (!expect(':')) return false;
    skip_ws();
    if (!parse_value(type_pos)) return false;
    if (out_.size() + depth_ + 1 > max_size_) [[unlikely]]
      return fail(errc::too_large, key_at);
    return true;
  }

  bool parse_array(std::size_t type_pos) {
    if (!enter(p_)) return false;
    *out_.at(type_pos) = static_cast<std::uint8_t>(type::array);
    ++p_;
    const std::size_t start = out_.size();
    out_.put_i32(0);
    skip_ws();
    if (next_is(']')) {
      ++p_;
    } else {
      for (std::uint32_t i = 0;; ++i) {
        const char* value_at = p_;
        const std::size_t elem = out_.size();
        char key[12];
        const auto r = std::to_chars(key, key + sizeof key, i);
        std::uint8_t* w = out_.ensure(static_cast<std::size_t>(r.ptr - key) + 2);
        w[0] = 0;
        std::memcpy(w + 1, key, static_cast<std::size_t>(r.ptr - key));
        w[1 + (r.ptr - key)] = 0;
        out_.advance(static_cast<std::size_t>(r.ptr - key) + 2);
        if (!parse_value(elem)) return false;
        if (out_.size() + depth_ + 1 > max_size_) [[unlikely]]
          return fail(errc::too_large, value_at);
        skip_ws();
        if (next_is(',')) {
          ++p_;
          skip_ws();
          continue;
        }
        if (next_is(']')) {
          ++p_;
          break;
        }
        return fail_syntax();
      }
    }
    out_.put(0);
    out_.patch_i32(start, static_cast<std::int32_t>(out_.size() - start));
    --depth_;
    return true;
  }

  // An object value at p_ ('{'): a type wrapper when its first key names one, else an embedded
  // document.
  bool parse_object_value(std::size_t type_pos) {
    const char* open = p_;
    ++p_;
    skip_ws();
    if (next_is('"') && end_ - p_ > 1 && (p_[1] == '$' || p_[1] == '\\')) {
      // Read the first key into the output's tail to look it up, then drop it again.
      const std::size_t mark = out_.size();
      if (!parse_string(true)) return false;
      const wrapper w = find_wrapper(out_.at(mark), out_.size() - mark);
      out_.truncate(mark);
      if (w != wrapper::none && (!is_legacy(w) || legacy_)) {
        if (!expect(':')) return false;
        skip_ws();
        const attempt a = parse_wrapper(w, type_pos);
        if (a == attempt::matched) return true;
        if (a == attempt::failed) return false;
        out_.truncate(mark);  // a legacy look-alike that is a plain document after all
      }
      p_ = open + 1;
    }
    if (!enter(open)) return false;
    *out_.at(type_pos) = static_cast<std::uint8_t>(type::document);
    if (!parse_document_body(document_kind::nested)) return false;
    --depth_;
    return true;
  }

  // ---- type wrappers ----------------------------------------------------------------------------

  void set_type(std::size_t type_pos, type t) noexcept {
    *out_.at(type_pos) = static_cast<std::uint8_t>(t);
  }

  // After a wrapper's last value: the object must end here.
  bool end_wrapper() {
    skip_ws();
    if (next_is('}')) {
      ++p_;
      return true;
    }
    if (next_is(',')) {
      ++p_;
      skip_ws();
      return fail_ext(p_);  // an extra key
    }
    return fail_syntax();
  }

  // The next key of a wrapper object, into `key` (false for '}', which is consumed).
  bool next_key(std::string& key, bool first, bool& done) {
    skip_ws();
    done = false;
    if (!first) {
      if (next_is('}')) {
        ++p_;
        done = true;
        return true;
      }
      if (!next_is(',')) return fail_syntax();
      ++p_;
      skip_ws();
    } else if (next_is('}')) {
      ++p_;
      done = true;
      return true;
    }
    if (!next_is('"')) return fail_syntax();
    const std::size_t mark = out_.size();
    if (!parse_string(true)) return false;
    key.assign(reinterpret_cast<const char*>(out_.at(mark)), out_.size() - mark);
    out_.truncate(mark);
    return expect(':') && (skip_ws(), true);
  }

  attempt result_of(bool ok) const noexcept { return ok ? attempt::matched : attempt::failed; }

  attempt parse_wrapper(wrapper w, std::size_t type_pos) {
    switch (w) {
    case wrapper::oid: return result_of(wrap_oid(type_pos));
    case wrapper::symbol: return result_of(wrap_symbol(type_pos));
    case wrapper::number_int: return result_of(wrap_number_int(type_pos));
    case wrapper::number_long: return result_of(wrap_number_long(type_pos));
    case wrapper::number_double: return result_of(wrap_number_double(type_pos));
    case wrapper::number_decimal: return result_of(wrap_number_decimal(type_pos));
    case wrapper::binary: return result_of(wrap_binary(type_pos));
    case wrapper::uuid: return result_of(wrap_uuid(type_pos));
    case wrapper::code: return result_of(wrap_code(type_pos));
    case wrapper::scope: return result_of(wrap_scope(type_pos));
    case wrapper::timestamp: return result_of(wrap_timestamp(type_pos));
    case wrapper::regular_expression: return result_of(wrap_regular_expression(type_pos));
    case wrapper::db_pointer: return result_of(wrap_db_pointer(type_pos));
    case wrapper::date: return result_of(wrap_date(type_pos));
    case wrapper::min_key: return result_of(wrap_key_bound(type_pos, type::min_key));
    case wrapper::max_key: return result_of(wrap_key_bound(type_pos, type::max_key));
    case wrapper::undefined: return result_of(wrap_undefined(type_pos));
    case wrapper::legacy_regex: return legacy_regex(type_pos, true);
    case wrapper::legacy_options: return legacy_regex(type_pos, false);
    case wrapper::legacy_type: return legacy_type_first(type_pos);
    case wrapper::none: break;
    }
    return attempt::not_matched;
  }

  // Decodes 24 hex digits at pos into 12 bytes at pos (in place: the write never overtakes the
  // read).
  bool hex_to_oid(std::size_t pos, std::size_t len, const char* at) {
    if (len != 24) return fail_ext(at);
    std::uint8_t* s = out_.at(pos);
    for (std::size_t i = 0; i < 12; ++i) {
      const int hi = hex_value(static_cast<char>(s[2 * i]));
      const int lo = hex_value(static_cast<char>(s[2 * i + 1]));
      if ((hi | lo) < 0) return fail_ext(at);
      s[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    out_.truncate(pos + 12);
    return true;
  }

  bool wrap_oid(std::size_t type_pos) {
    skip_ws();
    const char* at = p_;
    std::size_t pos, len;
    if (!scratch_string(pos, len) || !hex_to_oid(pos, len, at)) return false;
    set_type(type_pos, type::object_id);
    return end_wrapper();
  }

  bool wrap_symbol(std::size_t type_pos) {
    skip_ws();
    if (!next_is('"')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    if (!put_string_value()) return false;
    set_type(type_pos, type::symbol);
    return end_wrapper();
  }

  template <class Int>
  bool parse_int_string(std::size_t pos, std::size_t len, const char* at, Int& v) {
    const char* s = reinterpret_cast<const char*>(out_.at(pos));
    if (len == 0 || !(is_digit(s[0]) || (s[0] == '-' && len > 1 && is_digit(s[1]))))
      return fail_ext(at);
    const auto r = std::from_chars(s, s + len, v);
    if (r.ec != std::errc() || r.ptr != s + len) return fail_ext(at);
    return true;
  }

  bool wrap_number_int(std::size_t type_pos) {
    skip_ws();
    const char* at = p_;
    std::size_t pos, len;
    std::int32_t v;
    if (!scratch_string(pos, len) || !parse_int_string(pos, len, at, v)) return false;
    out_.truncate(pos);
    out_.put_i32(v);
    set_type(type_pos, type::int32);
    return end_wrapper();
  }

  bool number_long_value(std::int64_t& v) {
    skip_ws();
    const char* at = p_;
    std::size_t pos, len;
    if (!scratch_string(pos, len) || !parse_int_string(pos, len, at, v)) return false;
    out_.truncate(pos);
    return true;
  }

  bool wrap_number_long(std::size_t type_pos) {
    std::int64_t v;
    if (!number_long_value(v)) return false;
    out_.put_i64(v);
    set_type(type_pos, type::int64);
    return end_wrapper();
  }

  bool wrap_number_double(std::size_t type_pos) {
    skip_ws();
    const char* at = p_;
    std::size_t pos, len;
    if (!scratch_string(pos, len)) return false;
    const std::string_view s = scratch_view(pos, len);
    double d;
    if (s == "Infinity") {
      d = std::numeric_limits<double>::infinity();
    } else if (s == "-Infinity") {
      d = -std::numeric_limits<double>::infinity();
    } else if (s == "NaN") {
      d = std::numeric_limits<double>::quiet_NaN();
    } else {
      // Digits, a point, an exponent: what a JSON number (or C) would write; no "inf" or "nan".
      const std::size_t first = !s.empty() && s[0] == '-' ? 1 : 0;
      if (first >= s.size() || !(is_digit(s[first]) || s[first] == '.')) return fail_ext(at);
      const auto r = std::from_chars(s.data(), s.data() + s.size(), d);
      if (r.ptr != s.data() + s.size()) return fail_ext(at);
      if (r.ec == std::errc::result_out_of_range) {
        number n{s.data(), s.data() + s.size(), false, false, 0};
        d = to_double(n);
      } else if (r.ec != std::errc()) {
        return fail_ext(at);
      }
    }
    out_.truncate(pos);
    out_.put_double(d);
    set_type(type_pos, type::double_);
    return end_wrapper();
  }

  bool wrap_number_decimal(std::size_t type_pos) {
    skip_ws();
    const char* at = p_;
    std::size_t pos, len;
    if (!scratch_string(pos, len)) return false;
    const auto d = decimal128::from_string(scratch_view(pos, len));
    if (!d) return fail_ext(at);
    out_.truncate(pos);
    out_.put_u64(d->low);
    out_.put_u64(d->high);
    set_type(type_pos, type::decimal128);
    return end_wrapper();
  }

  // Decodes padded base64 text at pos (len bytes) in place; the bytes end at pos + returned size.
  bool base64_in_place(std::size_t pos, std::size_t len, const char* at, std::size_t& size) {
    return base64_decode_in_place(out_.at(pos), len, size) || fail_ext(at);
  }

  static bool subtype_from_hex(std::string_view s, std::uint8_t& subtype) noexcept {
    if (s.empty() || s.size() > 2) return false;
    unsigned v = 0;
    for (char c : s) {
      const int h = hex_value(c);
      if (h < 0) return false;
      v = v << 4 | static_cast<unsigned>(h);
    }
    subtype = static_cast<std::uint8_t>(v);
    return true;
  }

  // Writes the binary value's header at vstart (length, subtype) around payload bytes that
  // already sit at vstart + 5; the old subtype 0x02 gets its inner length.
  void finish_binary(std::size_t vstart, std::size_t payload, std::uint8_t subtype) {
    if (subtype == binary_subtype::old_binary) {
      out_.ensure(4);
      std::uint8_t* d = out_.at(vstart + 5);
      std::memmove(d + 4, d, payload);
      out_.advance(4);
      out_.patch_i32(vstart + 5, static_cast<std::int32_t>(payload));
      payload += 4;
    }
    out_.patch_i32(vstart, static_cast<std::int32_t>(payload));
    *out_.at(vstart + 4) = subtype;
  }

  bool wrap_binary(std::size_t type_pos) {
    const std::size_t vstart = out_.size();
    set_type(type_pos, type::binary);
    if (next_is('"')) {
      if (!legacy_) return fail_ext(p_);
      // Legacy: {"$binary": "<base64>", "$type": "<hex>"}.
      const char* b64_at = p_;
      out_.put_i32(0);
      out_.put(0);
      std::size_t pos, len, size;
      if (!scratch_string(pos, len) || !base64_in_place(pos, len, b64_at, size)) return false;
      out_.truncate(pos + size);
      skip_ws();
      if (!next_is(',')) return next_is('}') ? fail_ext(p_) : fail_syntax();
      ++p_;
      skip_ws();
      std::string key;
      bool done;
      if (!next_key(key, true, done)) return false;
      if (done || key != "$type") return fail_ext(p_);
      const char* type_at = p_;
      std::size_t tpos, tlen;
      std::uint8_t subtype;
      if (!scratch_string(tpos, tlen) || !subtype_from_hex(scratch_view(tpos, tlen), subtype))
        return fail_ext(type_at);
      out_.truncate(tpos);
      finish_binary(vstart, size, subtype);
      return end_wrapper();
    }
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const char* open = p_;
    ++p_;
    out_.put_i32(0);
    out_.put(0);
    bool have_data = false, have_subtype = false;
    std::uint8_t subtype = 0;
    std::size_t size = 0;
    std::string key;
    for (bool first = true;; first = false) {
      bool done;
      if (!next_key(key, first, done)) return false;
      if (done) break;
      const char* value_at = p_;
      if (key == "base64" && !have_data) {
        std::size_t pos, len;
        if (!scratch_string(pos, len) || !base64_in_place(pos, len, value_at, size)) return false;
        out_.truncate(pos + size);
        have_data = true;
      } else if (key == "subType" && !have_subtype) {
        std::size_t pos, len;
        if (!scratch_string(pos, len) || !subtype_from_hex(scratch_view(pos, len), subtype))
          return fail_ext(value_at);
        out_.truncate(pos);
        have_subtype = true;
      } else {
        return fail_ext(value_at);
      }
    }
    if (!have_data || !have_subtype) return fail_ext(open);
    finish_binary(vstart, size, subtype);
    return end_wrapper();
  }

  bool wrap_uuid(std::size_t type_pos) {
    skip_ws();
    const char* at = p_;
    const std::size_t vstart = out_.size();
    out_.put_i32(16);
    out_.put(binary_subtype::uuid);
    std::size_t pos, len;
    if (!scratch_string(pos, len)) return false;
    const std::uint8_t* s = out_.at(pos);
    std::uint8_t bytes[16];
    std::size_t n = 0;
    const bool hyphens = len == 36;
    if (!hyphens && len != 32) return fail_ext(at);
    for (std::size_t i = 0; i < len;) {
      if (hyphens && (i == 8 || i == 13 || i == 18 || i == 23)) {
        if (s[i] != '-') return fail_ext(at);
        ++i;
        continue;
      }
      const int hi = hex_value(static_cast<char>(s[i]));
      const int lo = hex_value(static_cast<char>(s[i + 1]));
      if ((hi | lo) < 0) return fail_ext(at);
      bytes[n++] = static_cast<std::uint8_t>(hi << 4 | lo);
      i += 2;
    }
    out_.truncate(vstart + 5);
    out_.put(bytes, 16);
    set_type(type_pos, type::binary);
    return end_wrapper();
  }

  // {"$code": s} or {"$code": s, "$scope": {...}}. The int32 total of code-with-scope is reserved
  // up front and dropped (one memmove of the code) when there is no scope.
  bool wrap_code(std::size_t type_pos) {
    skip_ws();
    if (!next_is('"')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const std::size_t vstart = out_.size();
    out_.put_i32(0);
    if (!put_string_value()) return false;
    skip_ws();
    if (next_is('}')) {
      ++p_;
      std::uint8_t* v = out_.at(vstart);
      std::memmove(v, v + 4, out_.size() - vstart - 4);
      out_.truncate(out_.size() - 4);
      set_type(type_pos, type::javascript);
      return true;
    }
    if (!next_is(',')) return fail_syntax();
    ++p_;
    skip_ws();
    std::string key;
    bool done;
    const char* key_at = p_;
    if (!next_key(key, true, done)) return false;
    if (done || key != "$scope") return fail_ext(key_at);
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    if (!parse_scope()) return false;
    out_.patch_i32(vstart, static_cast<std::int32_t>(out_.size() - vstart));
    set_type(type_pos, type::javascript_with_scope);
    return end_wrapper();
  }

  bool parse_scope() {
    const char* open = p_;
    if (!enter(open)) return false;
    ++p_;
    if (!parse_document_body(document_kind::scope)) return false;
    --depth_;
    return true;
  }

  // {"$scope": {...}, "$code": s}: the scope is written first, then the code, then the two are
  // swapped into BSON's order.
  bool wrap_scope(std::size_t type_pos) {
    skip_ws();
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const std::size_t vstart = out_.size();
    out_.put_i32(0);
    if (!parse_scope()) return false;
    const std::size_t code_pos = out_.size();
    skip_ws();
    if (!next_is(',')) return next_is('}') ? fail_ext(p_) : fail_syntax();
    ++p_;
    skip_ws();
    std::string key;
    bool done;
    const char* key_at = p_;
    if (!next_key(key, true, done)) return false;
    if (done || key != "$code") return fail_ext(key_at);
    if (!next_is('"')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    if (!put_string_value()) return false;
    std::rotate(out_.at(vstart + 4), out_.at(code_pos), out_.at(out_.size()));
    out_.patch_i32(vstart, static_cast<std::int32_t>(out_.size() - vstart));
    set_type(type_pos, type::javascript_with_scope);
    return end_wrapper();
  }

  // A JSON integer in [0, 2^32).
  bool uint32_value(std::uint32_t& v) {
    skip_ws();
    const char* at = p_;
    if (p_ == end_) return fail_syntax();
    if (!(is_digit(*p_) || *p_ == '-')) return fail_ext(at);
    number n;
    if (!scan_number(n)) return false;
    if (!n.integer || !n.fits_i64 || n.i64 < 0 || n.i64 > 0xFFFFFFFF) return fail_ext(at);
    v = static_cast<std::uint32_t>(n.i64);
    return true;
  }

  bool wrap_timestamp(std::size_t type_pos) {
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const char* open = p_;
    ++p_;
    bool have_t = false, have_i = false;
    std::uint32_t t = 0, i = 0;
    std::string key;
    for (bool first = true;; first = false) {
      bool done;
      if (!next_key(key, first, done)) return false;
      if (done) break;
      if (key == "t" && !have_t) {
        if (!uint32_value(t)) return false;
        have_t = true;
      } else if (key == "i" && !have_i) {
        if (!uint32_value(i)) return false;
        have_i = true;
      } else {
        return fail_ext(p_);
      }
    }
    if (!have_t || !have_i) return fail_ext(open);
    out_.put_i32(static_cast<std::int32_t>(i));
    out_.put_i32(static_cast<std::int32_t>(t));
    set_type(type_pos, type::timestamp);
    return end_wrapper();
  }

  // Regex options in alphabetical order, as the specification writes them. Real options are a
  // few ASCII letters; anything else is sorted by whole UTF-8 sequences (as the writer does), so
  // that sorting cannot break a character apart.
  static void sort_options(std::string& options) {
    if (std::all_of(options.begin(), options.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
      std::sort(options.begin(), options.end());
      return;
    }
    std::vector<std::string_view> units;
    for (std::size_t i = 0; i < options.size();) {
      std::size_t j = i + 1;
      while (j < options.size() && (static_cast<unsigned char>(options[j]) & 0xC0) == 0x80) ++j;
      units.push_back(std::string_view(options).substr(i, j - i));
      i = j;
    }
    std::sort(units.begin(), units.end());
    std::string sorted;
    for (const auto u : units) sorted += u;
    options = std::move(sorted);
  }

  // Writes a regex (pattern C string, options C string with the flags sorted) from two scratch
  // strings at the output's end.
  bool put_regex(std::size_t vstart, std::size_t ppos, std::size_t plen, const char* pat_at,
                 std::size_t opos, std::size_t olen, const char* opt_at) {
    if (std::memchr(out_.at(ppos), 0, plen) != nullptr) return fail_ext(pat_at);
    if (std::memchr(out_.at(opos), 0, olen) != nullptr) return fail_ext(opt_at);
    std::string pattern(scratch_view(ppos, plen));
    std::string options(scratch_view(opos, olen));
    sort_options(options);
    out_.truncate(vstart);
    out_.put(pattern.data(), pattern.size());
    out_.put(0);
    out_.put(options.data(), options.size());
    out_.put(0);
    return true;
  }

  bool wrap_regular_expression(std::size_t type_pos) {
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const char* open = p_;
    ++p_;
    const std::size_t vstart = out_.size();
    bool have_p = false, have_o = false;
    std::size_t ppos = 0, plen = 0, opos = 0, olen = 0;
    const char *pat_at = nullptr, *opt_at = nullptr;
    std::string key;
    for (bool first = true;; first = false) {
      bool done;
      if (!next_key(key, first, done)) return false;
      if (done) break;
      if (key == "pattern" && !have_p) {
        pat_at = p_;
        if (!scratch_string(ppos, plen)) return false;
        have_p = true;
      } else if (key == "options" && !have_o) {
        opt_at = p_;
        if (!scratch_string(opos, olen)) return false;
        have_o = true;
      } else {
        return fail_ext(p_);
      }
    }
    if (!have_p || !have_o) return fail_ext(open);
    if (!put_regex(vstart, ppos, plen, pat_at, opos, olen, opt_at)) return false;
    set_type(type_pos, type::regex);
    return end_wrapper();
  }

  // {"$oid": "<24 hex>"} at p_, into `id`.
  bool oid_object(std::uint8_t (&id)[12]) {
    skip_ws();
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const char* open = p_;
    ++p_;
    std::string key;
    bool done;
    if (!next_key(key, true, done)) return false;
    if (done || key != "$oid") return fail_ext(open);
    const char* at = p_;
    std::size_t pos, len;
    if (!scratch_string(pos, len) || !hex_to_oid(pos, len, at)) return false;
    std::memcpy(id, out_.at(pos), 12);
    out_.truncate(pos);
    return end_wrapper();
  }

  bool wrap_db_pointer(std::size_t type_pos) {
    if (!next_is('{')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
    const char* open = p_;
    ++p_;
    bool have_ref = false, have_id = false;
    std::uint8_t id[12];
    std::string key;
    for (bool first = true;; first = false) {
      bool done;
      if (!next_key(key, first, done)) return false;
      if (done) break;
      if (key == "$ref" && !have_ref) {
        if (!next_is('"')) return p_ == end_ ? fail_syntax() : fail_ext(p_);
        if (!put_string_value()) return false;
        have_ref = true;
      } else if (key == "$id" && !have_id) {
        if (!oid_object(id)) return false;
        have_id = true;
      } else {
        return fail_ext(p_);
      }
    }
    if (!have_ref || !have_id) return fail_ext(open);
    out_.put(id, 12);
    set_type(type_pos, type::db_pointer);
    return end_wrapper();
  }

  bool wrap_date(std::size_t type_pos) {
    std::int64_t ms;
    const char* at = p_;
    if (next_is('{')) {
      ++p_;
      std::string key;
      bool done;
      if (!next_key(key, true, done)) return false;
      if (done || key != "$numberLong") return fail_ext(at);
      if (!number_long_value(ms) || !end_wrapper()) return false;
    } else if (next_is('"')) {
      std::size_t pos, len;
      if (!scratch_string(pos, len)) return false;
      if (!parse_iso8601_ms(scratch_view(pos, len), ms)) return fail_ext(at);
      out_.truncate(pos);
    } else if (legacy_ && p_ != end_ && (is_digit(*p_) || *p_ == '-')) {
      number n;
      if (!scan_number(n)) return false;
      if (!n.integer || !n.fits_i64) return fail_ext(at);
      ms = n.i64;
    } else {
      return p_ == end_ ? fail_syntax() : fail_ext(at);
    }
    out_.put_i64(ms);
    set_type(type_pos, type::date_time);
    return end_wrapper();
  }

  bool wrap_key_bound(std::size_t type_pos, type t) {
    const char* at = p_;
    if (p_ == end_) return fail_syntax();
    if (!(is_digit(*p_) || *p_ == '-')) return fail_ext(at);
    number n;
    if (!scan_number(n)) return false;
    if (!n.integer || !n.fits_i64 || n.i64 != 1) return fail_ext(at);
    set_type(type_pos, t);
    return end_wrapper();
  }

  bool wrap_undefined(std::size_t type_pos) {
    if (p_ == end_) return fail_syntax();
    if (!next_is('t')) return fail_ext(p_);
    if (!literal("true")) return false;
    set_type(type_pos, type::undefined);
    return end_wrapper();
  }

  // Legacy {"$regex": "<pattern>", "$options": "<flags>"} in either order. Any other shape (the
  // $regex query operator with an object value, a missing $options, a third key) is a plain
  // document: not_matched, and the caller parses the object again as one.
  attempt legacy_regex(std::size_t type_pos, bool regex_first) {
    const std::size_t vstart = out_.size();
    std::size_t pos[2], len[2];
    const char* where[2];
    for (int k = 0; k < 2; ++k) {
      if (k == 1) {
        skip_ws();
        if (!next_is(',')) return attempt::not_matched;
        ++p_;
        skip_ws();
        std::string key;
        bool done;
        if (!next_key(key, true, done)) return attempt::failed;
        if (done || key != (regex_first ? "$options" : "$regex")) return attempt::not_matched;
      }
      skip_ws();
      if (!next_is('"')) return attempt::not_matched;
      where[k] = p_;
      if (!scratch_string(pos[k], len[k])) return attempt::failed;
    }
    skip_ws();
    if (!next_is('}')) return attempt::not_matched;
    const int pi = regex_first ? 0 : 1, oi = 1 - pi;
    if (!put_regex(vstart, pos[pi], len[pi], where[pi], pos[oi], len[oi], where[oi]))
      return attempt::failed;
    ++p_;
    set_type(type_pos, type::regex);
    return attempt::matched;
  }

  // Legacy {"$type": "<hex>", "$binary": "<base64>"}; anything else (the $type query operator)
  // is a plain document.
  attempt legacy_type_first(std::size_t type_pos) {
    if (!next_is('"')) return attempt::not_matched;
    const std::size_t vstart = out_.size();
    std::size_t tpos, tlen;
    if (!scratch_string(tpos, tlen)) return attempt::failed;
    std::uint8_t subtype;
    if (!subtype_from_hex(scratch_view(tpos, tlen), subtype)) return attempt::not_matched;
    out_.truncate(vstart);
    skip_ws();
    if (!next_is(',')) return attempt::not_matched;
    ++p_;
    skip_ws();
    std::string key;
    bool done;
    if (!next_key(key, true, done)) return attempt::failed;
    if (done || key != "$binary" || !next_is('"')) return attempt::not_matched;
    const char* b64_at = p_;
    out_.put_i32(0);
    out_.put(0);
    std::size_t pos, len, size;
    if (!scratch_string(pos, len)) return attempt::failed;
    if (!base64_in_place(pos, len, b64_at, size)) return attempt::failed;
    out_.truncate(pos + size);
    skip_ws();
    if (!next_is('}')) return attempt::not_matched;
    ++p_;
    finish_binary(vstart, size, subtype);
    set_type(type_pos, type::binary);
    return attempt::matched;
  }

  const char* const begin_;
  const char* p_;
  const char* const end_;
  out_buffer out_;
  const bool legacy_;
  const std::size_t max_depth_;
  const std::size_t max_size_;
  std::size_t depth_ = 0;
  error err_{};
};

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
