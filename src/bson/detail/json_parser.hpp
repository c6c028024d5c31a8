// Private: the Extended JSON parser behind `from_json()` (oid/bson/json_reader.hpp).
//
// Why a hand-written parser and not simdjson: the reader's job is not to build a JSON tree but
// BSON bytes, and the fastest path is to write each value straight into the output as it is
// scanned. With simdjson every string is first unescaped into simdjson's buffer and then copied
// into the BSON (two copies instead of one), the input must be copied into a padded buffer first,
// and the DOM API adds a tape in between. What decides it is errors: simdjson reports an error
// code with no reliable position (On-Demand's current_location() is only as precise as the last
// token it reached, and its lazy validation reports some syntax errors late or not at all for
// parts never visited), while this reader must report the exact byte of every problem, JSON or
// Extended JSON, so that `oid bson from-json` can say line and column. Duplicate keys and key
// order come for free here. On DriverBench's canonical flat/deep/full documents from_json()
// measured 4 to 8 times as fast as libbson 1.23's bson_init_from_json (same process, same data,
// on a busy 2-core machine), at roughly a third of the speed of simdjson's DOM parse alone, which
// builds no BSON.
//
// One class, two files: json_parser.cpp is plain JSON to BSON (strings, numbers, objects,
// arrays), json_wrappers.cpp the `$`-wrapper objects of Extended JSON ($oid, $numberLong,
// $binary, ...) and the legacy forms.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/type.hpp>
#include <oid/detail/endian.hpp>
#include <oid/error.hpp>
#include <oid/result.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace oid::bson::detail {

/// The deepest nesting `json_read_options::max_depth` can ask for.
inline constexpr std::size_t depth_cap = 1000;

constexpr bool is_ws(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

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
  void put_i32(std::int32_t v) { put_u32(static_cast<std::uint32_t>(v)); }
  void put_u32(std::uint32_t v) {
    oid::detail::store_le_u32(ensure(4), v);
    size_ += 4;
  }
  void put_i64(std::int64_t v) { put_u64(static_cast<std::uint64_t>(v)); }
  void put_u64(std::uint64_t v) {
    oid::detail::store_le_u64(ensure(8), v);
    size_ += 8;
  }
  void put_double(double d) { put_u64(std::bit_cast<std::uint64_t>(d)); }
  void patch_i32(std::size_t pos, std::int32_t v) noexcept {
    oid::detail::store_le_u32(buf_.data() + pos, static_cast<std::uint32_t>(v));
  }
  void advance(std::size_t n) noexcept { size_ += n; }

  std::vector<std::uint8_t> take() && {
    buf_.resize(size_);
    return std::move(buf_);
  }

 private:
  void grow(std::size_t n) { buf_.resize(std::max(buf_.size() * 2, size_ + n)); }

  // resize() zero-fills, but only when growing: the first allocation is sized from the text, so
  // a typical document grows at most once or twice.
  std::vector<std::uint8_t> buf_;
  std::size_t size_ = 0;
};

// ---- Type wrappers ---------------------------------------------------------------------------

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

/// The wrapper a key (n bytes at k) names, or `none`.
wrapper find_wrapper(const std::uint8_t* k, std::size_t n) noexcept;

constexpr bool is_legacy(wrapper w) noexcept {
  return w == wrapper::legacy_regex || w == wrapper::legacy_options || w == wrapper::legacy_type;
}

// Outcome of trying a form that may turn out to be something else (a legacy wrapper that is a
// plain document after all, a key that is not the one expected).
enum class attempt { matched, not_matched, failed };

// ---- The parser ------------------------------------------------------------------------------

// Speed across two files: the class is hidden (the library is position-independent code, where
// a function another object could interpose is not inlined) and each file marks `inline` the
// members only it calls, so that the compiler inlines them as it did when the class was local to
// one file. The split without these measured 10-20% slower in DriverBench's json_to_bson rows;
// with them, on par.
class [[gnu::visibility("hidden")]] parser {
 public:
  parser(std::string_view text, const json_read_options& options)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        out_(text.size() + 16),
        legacy_(options.legacy),
        max_depth_(std::min(options.max_depth, depth_cap)),
        max_size_(std::min<std::size_t>(options.max_size, 0x7FFFFFFF)) {}

  /// The BSON bytes of the one JSON object the text holds.
  result<std::vector<std::uint8_t>> run();

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
  // A wrapper's value is not of the JSON type it must be: a syntax error at the end of the text,
  // else a wrapper error here.
  bool fail_value() noexcept { return p_ == end_ ? fail_syntax() : fail_ext(p_); }

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

  // The items of a JSON object or array whose opening bracket has been consumed, up to and
  // including `Close`: `item()` is called at the first character of each (whitespace skipped)
  // and parses it; the commas between items are handled here. The one loop for documents,
  // arrays and wrapper objects.
  template <char Close, class Item>
  bool parse_items(Item && item) {
    skip_ws();
    if (next_is(Close)) {
      ++p_;
      return true;
    }
    for (;;) {
      if (!item()) return false;
      skip_ws();
      if (next_is(',')) {
        ++p_;
        skip_ws();
        continue;
      }
      if (next_is(Close)) {
        ++p_;
        return true;
      }
      return fail_syntax();
    }
  }

  // ---- json_parser.cpp: JSON to BSON ----------------------------------------------------------

  bool parse_string(bool key);
  bool copy_utf8_sequence();
  bool read_hex4(unsigned& v) noexcept;
  bool parse_escape(bool key);
  void put_code_point(unsigned cp);
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
  bool scratch_string(std::size_t & pos, std::size_t & len) {
    skip_ws();
    if (!next_is('"')) return fail_value();
    pos = out_.size();
    if (!parse_string(false)) return false;
    len = out_.size() - pos;
    return true;
  }
  std::string_view scratch_view(std::size_t pos, std::size_t len) noexcept {
    return {reinterpret_cast<const char*>(out_.at(pos)), len};
  }

  struct number {
    const char* begin = nullptr;
    const char* end = nullptr;
    bool integer = false;   // no fraction, no exponent
    bool fits_i64 = false;  // integer and within int64
    std::int64_t i64 = 0;
  };
  bool scan_number(number & n);
  static double to_double(const number& n) noexcept;
  bool put_number(std::size_t type_pos);

  bool literal(std::string_view word) noexcept;
  bool parse_value(std::size_t type_pos);
  bool enter(const char* at) noexcept {
    if (++depth_ > max_depth_) return fail(errc::too_deep, at);
    return true;
  }
  std::size_t begin_document();
  void end_document(std::size_t start);
  bool parse_document_body(document_kind kind);
  bool parse_member(bool wrapper_keys_allowed);
  bool parse_array(std::size_t type_pos);
  bool parse_object_value(std::size_t type_pos);

  // ---- json_wrappers.cpp: Extended JSON's type wrappers ---------------------------------------

  void set_type(std::size_t type_pos, type t) noexcept {
    *out_.at(type_pos) = static_cast<std::uint8_t>(t);
  }
  bool end_wrapper();
  bool read_key(std::string & key);
  attempt key_is(std::string_view want);
  bool require_key(std::string_view want, const char* at);
  template <class Each>
  bool for_each_key(Each && each);

  attempt parse_wrapper(wrapper w, std::size_t type_pos);
  bool put_object_id(std::size_t pos, std::size_t len, const char* at);
  bool wrap_oid(std::size_t type_pos);
  bool wrap_symbol(std::size_t type_pos);
  template <class Int>
  bool parse_int_string(std::size_t pos, std::size_t len, const char* at, Int& v);
  bool wrap_number_int(std::size_t type_pos);
  bool number_long_value(std::int64_t & v);
  bool wrap_number_long(std::size_t type_pos);
  bool wrap_number_double(std::size_t type_pos);
  bool wrap_number_decimal(std::size_t type_pos);
  bool base64_in_place(std::size_t pos, std::size_t len, const char* at, std::size_t& size);
  void finish_binary(std::size_t vstart, std::size_t payload, std::uint8_t subtype);
  bool wrap_binary(std::size_t type_pos);
  bool wrap_uuid(std::size_t type_pos);
  bool wrap_code(std::size_t type_pos);
  bool parse_scope();
  bool wrap_scope(std::size_t type_pos);
  bool uint32_value(std::uint32_t & v);
  bool wrap_timestamp(std::size_t type_pos);
  bool put_regex(std::size_t vstart, std::size_t ppos, std::size_t plen, const char* pat_at,
                 std::size_t opos, std::size_t olen, const char* opt_at);
  bool wrap_regular_expression(std::size_t type_pos);
  bool oid_object(std::uint8_t(&id)[12]);
  bool wrap_db_pointer(std::size_t type_pos);
  bool wrap_date(std::size_t type_pos);
  bool wrap_key_bound(std::size_t type_pos, type t);
  bool wrap_undefined(std::size_t type_pos);
  attempt legacy_regex(std::size_t type_pos, bool regex_first);
  attempt legacy_type_first(std::size_t type_pos);

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

}  // namespace oid::bson::detail
