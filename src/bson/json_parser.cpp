// Extended JSON text to BSON, the JSON part: strings, numbers, objects and arrays, written
// straight into the output in one pass (see bson/detail/json_parser.hpp for why by hand). Strings
// are scanned 16 bytes at a time (SSE2; 8 with SWAR elsewhere) for the four byte classes that
// need attention, and copied as they are scanned. The `$`-wrapper objects are json_wrappers.cpp.
#include "bson/detail/json_parser.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

#include "detail/hex.hpp"

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

namespace oid::bson::detail {
namespace {

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

}  // namespace

result<std::vector<std::uint8_t>> parser::run() {
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

// ---- strings ----------------------------------------------------------------------------------

// Parses the JSON string at p_ (which is '"') and appends its UTF-8 bytes to the output. For a
// key, a NUL character is an error (BSON keys are C strings).
bool parser::parse_string(bool key) {
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
      const std::uint64_t m = attention_mask(oid::detail::load_le_u64(p_));
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
inline bool parser::copy_utf8_sequence() {
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

inline bool parser::read_hex4(unsigned& v) noexcept {
  std::uint32_t u;
  if (end_ - p_ < 4 || !oid::detail::parse_hex_u32({p_, 4}, u)) return false;
  v = u;
  p_ += 4;
  return true;
}

inline bool parser::parse_escape(bool key) {
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

inline void parser::put_code_point(unsigned cp) {
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

// ---- numbers ----------------------------------------------------------------------------------

// Scans a JSON number at p_ (strict RFC 8259 grammar).
bool parser::scan_number(number& n) {
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
      n.i64 =
          mag == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(mag);
    } else if (!negative && mag < limit) {
      n.fits_i64 = true;
      n.i64 = static_cast<std::int64_t>(mag);
    }
  }
  return true;
}

// The double nearest to the number's text. Out of range: infinity or zero with its sign, as a
// JSON number's value is a real number and those are the nearest doubles.
double parser::to_double(const number& n) noexcept {
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
inline bool parser::put_number(std::size_t type_pos) {
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

// ---- values -----------------------------------------------------------------------------------

bool parser::literal(std::string_view word) noexcept {
  if (static_cast<std::size_t>(end_ - p_) < word.size() ||
      std::memcmp(p_, word.data(), word.size()) != 0)
    return fail_syntax();
  p_ += word.size();
  return true;
}

// Parses the value at p_ (whitespace skipped) for the element whose type byte is at type_pos
// (key already written) and writes its value bytes.
inline bool parser::parse_value(std::size_t type_pos) {
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

// A BSON document's frame at the output's end: begin_document() reserves the int32 length and
// returns where it is; end_document() writes the terminating NUL and the length.
inline std::size_t parser::begin_document() {
  const std::size_t start = out_.size();
  out_.put_i32(0);
  return start;
}
inline void parser::end_document(std::size_t start) {
  out_.put(0);
  out_.patch_i32(start, static_cast<std::int32_t>(out_.size() - start));
}

// The members of an object whose '{' has been consumed, written as a BSON document (length,
// elements, NUL) at the output's end.
bool parser::parse_document_body(document_kind kind) {
  const std::size_t start = begin_document();
  bool first = true;
  const bool ok = parse_items<'}'>([&] {
    if (!next_is('"')) return fail_syntax();
    const bool wrapper_keys_allowed = kind != document_kind::nested || first;
    first = false;
    return parse_member(wrapper_keys_allowed);
  });
  if (!ok) return false;
  end_document(start);
  return true;
}

// One "key": value member at p_. The size check counts the terminators still to come (one
// per open document), so the error points at the member that made the document too large. A
// wrapper key anywhere but first in a nested object breaks the specification's rule that a
// wrapper object holds exactly its keys.
inline bool parser::parse_member(bool wrapper_keys_allowed) {
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

inline bool parser::parse_array(std::size_t type_pos) {
  if (!enter(p_)) return false;
  *out_.at(type_pos) = static_cast<std::uint8_t>(type::array);
  ++p_;
  const std::size_t start = begin_document();
  std::uint32_t i = 0;
  const bool ok = parse_items<']'>([&] {
    // The element's type byte (set by parse_value) and its key, the index as a C string.
    const char* value_at = p_;
    const std::size_t elem = out_.size();
    char key[12];
    const auto n = static_cast<std::size_t>(std::to_chars(key, key + sizeof key, i++).ptr - key);
    std::uint8_t* w = out_.ensure(n + 2);
    w[0] = 0;
    std::memcpy(w + 1, key, n);
    w[1 + n] = 0;
    out_.advance(n + 2);
    if (!parse_value(elem)) return false;
    if (out_.size() + depth_ + 1 > max_size_) [[unlikely]]
      return fail(errc::too_large, value_at);
    return true;
  });
  if (!ok) return false;
  end_document(start);
  --depth_;
  return true;
}

// An object value at p_ ('{'): a type wrapper when its first key names one, else an embedded
// document.
inline bool parser::parse_object_value(std::size_t type_pos) {
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

}  // namespace oid::bson::detail
