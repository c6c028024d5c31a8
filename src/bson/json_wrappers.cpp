// Extended JSON text to BSON, the Extended JSON part: the `$`-wrapper objects that stand for the
// BSON types JSON lacks ({"$oid": ...}, {"$numberLong": ...}, {"$binary": {...}}, ...) and, with
// json_read_options::legacy, the legacy forms. Each wrap_* is called with p_ at the value of the
// wrapper's first key and writes the BSON value (and its type byte); the codecs they need (hex,
// base64, ISO-8601 dates, ObjectIds) are the library's one copy of each.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <oid/bson/decimal128.hpp>
#include <oid/objectid/object_id.hpp>

#include "bson/detail/json_parser.hpp"
#include "detail/base64.hpp"
#include "detail/hex.hpp"
#include "detail/iso8601.hpp"

namespace oid::bson::detail {
namespace {

attempt matched_if(bool ok) noexcept { return ok ? attempt::matched : attempt::failed; }

// A binary subtype: one or two hex digits.
bool subtype_from_hex(std::string_view s, std::uint8_t& subtype) noexcept {
  std::uint32_t v;
  if (s.size() > 2 || !oid::detail::parse_hex_u32(s, v)) return false;
  subtype = static_cast<std::uint8_t>(v);
  return true;
}

// Regex options in alphabetical order, as the specification writes them. Real options are a
// few ASCII letters; anything else is sorted by whole UTF-8 sequences (as the writer does), so
// that sorting cannot break a character apart.
void sort_options(std::string& options) {
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

}  // namespace

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

// After a wrapper's last value: the object must end here.
inline bool parser::end_wrapper() {
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

// The key of the member at p_ (which must be '"') into `key`, then its ':'; p_ ends at the value.
inline bool parser::read_key(std::string& key) {
  if (!next_is('"')) return fail_syntax();
  const std::size_t mark = out_.size();
  if (!parse_string(true)) return false;
  key.assign(reinterpret_cast<const char*>(out_.at(mark)), out_.size() - mark);
  out_.truncate(mark);
  if (!expect(':')) return false;
  skip_ws();
  return true;
}

// Is the next key `want`? Called after a '{' or ','. matched (p_ at its value), not_matched
// (another key, p_ at its value; or the object ended, p_ past the '}') or failed (a JSON error).
inline attempt parser::key_is(std::string_view want) {
  skip_ws();
  if (next_is('}')) {
    ++p_;
    return attempt::not_matched;
  }
  std::string key;
  if (!read_key(key)) return attempt::failed;
  return key == want ? attempt::matched : attempt::not_matched;
}

// key_is(want), where anything but `want` is a wrapper error at `at` (nullptr: where key_is
// stopped).
inline bool parser::require_key(std::string_view want, const char* at) {
  const attempt a = key_is(want);
  if (a == attempt::not_matched) return fail_ext(at != nullptr ? at : p_);
  return a == attempt::matched;
}

// The members of a wrapper's object value (`{"t": 1, "i": 2}`) whose '{' has been consumed:
// `each(key)` is called at each member's value and parses it.
template <class Each>
inline bool parser::for_each_key(Each&& each) {
  std::string key;
  return parse_items<'}'>([&] { return read_key(key) && each(key); });
}

attempt parser::parse_wrapper(wrapper w, std::size_t type_pos) {
  switch (w) {
  case wrapper::oid: return matched_if(wrap_oid(type_pos));
  case wrapper::symbol: return matched_if(wrap_symbol(type_pos));
  case wrapper::number_int: return matched_if(wrap_number_int(type_pos));
  case wrapper::number_long: return matched_if(wrap_number_long(type_pos));
  case wrapper::number_double: return matched_if(wrap_number_double(type_pos));
  case wrapper::number_decimal: return matched_if(wrap_number_decimal(type_pos));
  case wrapper::binary: return matched_if(wrap_binary(type_pos));
  case wrapper::uuid: return matched_if(wrap_uuid(type_pos));
  case wrapper::code: return matched_if(wrap_code(type_pos));
  case wrapper::scope: return matched_if(wrap_scope(type_pos));
  case wrapper::timestamp: return matched_if(wrap_timestamp(type_pos));
  case wrapper::regular_expression: return matched_if(wrap_regular_expression(type_pos));
  case wrapper::db_pointer: return matched_if(wrap_db_pointer(type_pos));
  case wrapper::date: return matched_if(wrap_date(type_pos));
  case wrapper::min_key: return matched_if(wrap_key_bound(type_pos, type::min_key));
  case wrapper::max_key: return matched_if(wrap_key_bound(type_pos, type::max_key));
  case wrapper::undefined: return matched_if(wrap_undefined(type_pos));
  case wrapper::legacy_regex: return legacy_regex(type_pos, true);
  case wrapper::legacy_options: return legacy_regex(type_pos, false);
  case wrapper::legacy_type: return legacy_type_first(type_pos);
  case wrapper::none: break;
  }
  return attempt::not_matched;
}

// Replaces the 24 hex digits of an ObjectId at pos (the scratch string of length len) with its 12
// bytes.
inline bool parser::put_object_id(std::size_t pos, std::size_t len, const char* at) {
  const auto id = object_id::from_hex(scratch_view(pos, len));
  if (!id) return fail_ext(at);
  out_.truncate(pos);
  out_.put(id->bytes().data(), object_id::size);
  return true;
}

inline bool parser::wrap_oid(std::size_t type_pos) {
  skip_ws();
  const char* at = p_;
  std::size_t pos, len;
  if (!scratch_string(pos, len) || !put_object_id(pos, len, at)) return false;
  set_type(type_pos, type::object_id);
  return end_wrapper();
}

inline bool parser::wrap_symbol(std::size_t type_pos) {
  skip_ws();
  if (!next_is('"')) return fail_value();
  if (!put_string_value()) return false;
  set_type(type_pos, type::symbol);
  return end_wrapper();
}

template <class Int>
inline bool parser::parse_int_string(std::size_t pos, std::size_t len, const char* at, Int& v) {
  const char* s = reinterpret_cast<const char*>(out_.at(pos));
  if (len == 0 || !(is_digit(s[0]) || (s[0] == '-' && len > 1 && is_digit(s[1]))))
    return fail_ext(at);
  const auto r = std::from_chars(s, s + len, v);
  if (r.ec != std::errc() || r.ptr != s + len) return fail_ext(at);
  return true;
}

inline bool parser::wrap_number_int(std::size_t type_pos) {
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

inline bool parser::number_long_value(std::int64_t& v) {
  skip_ws();
  const char* at = p_;
  std::size_t pos, len;
  if (!scratch_string(pos, len) || !parse_int_string(pos, len, at, v)) return false;
  out_.truncate(pos);
  return true;
}

inline bool parser::wrap_number_long(std::size_t type_pos) {
  std::int64_t v;
  if (!number_long_value(v)) return false;
  out_.put_i64(v);
  set_type(type_pos, type::int64);
  return end_wrapper();
}

inline bool parser::wrap_number_double(std::size_t type_pos) {
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

inline bool parser::wrap_number_decimal(std::size_t type_pos) {
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

// Decodes padded base64 text at pos (len bytes) in place; the bytes end at pos + size.
inline bool parser::base64_in_place(std::size_t pos, std::size_t len, const char* at,
                                    std::size_t& size) {
  const std::ptrdiff_t n =
      oid::detail::decode_base64(reinterpret_cast<const char*>(out_.at(pos)), len, out_.at(pos));
  if (n < 0) return fail_ext(at);
  size = static_cast<std::size_t>(n);
  return true;
}

// Writes the binary value's header at vstart (length, subtype) around payload bytes that
// already sit at vstart + 5; the old subtype 0x02 gets its inner length.
inline void parser::finish_binary(std::size_t vstart, std::size_t payload, std::uint8_t subtype) {
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

inline bool parser::wrap_binary(std::size_t type_pos) {
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
    if (!require_key("$type", nullptr)) return false;
    const char* type_at = p_;
    std::size_t tpos, tlen;
    std::uint8_t subtype;
    if (!scratch_string(tpos, tlen) || !subtype_from_hex(scratch_view(tpos, tlen), subtype))
      return fail_ext(type_at);
    out_.truncate(tpos);
    finish_binary(vstart, size, subtype);
    return end_wrapper();
  }
  if (!next_is('{')) return fail_value();
  const char* open = p_;
  ++p_;
  out_.put_i32(0);
  out_.put(0);
  bool have_data = false, have_subtype = false;
  std::uint8_t subtype = 0;
  std::size_t size = 0;
  const bool ok = for_each_key([&](const std::string& key) {
    const char* value_at = p_;
    std::size_t pos, len;
    if (key == "base64" && !have_data) {
      if (!scratch_string(pos, len) || !base64_in_place(pos, len, value_at, size)) return false;
      out_.truncate(pos + size);
      have_data = true;
    } else if (key == "subType" && !have_subtype) {
      if (!scratch_string(pos, len) || !subtype_from_hex(scratch_view(pos, len), subtype))
        return fail_ext(value_at);
      out_.truncate(pos);
      have_subtype = true;
    } else {
      return fail_ext(value_at);
    }
    return true;
  });
  if (!ok) return false;
  if (!have_data || !have_subtype) return fail_ext(open);
  finish_binary(vstart, size, subtype);
  return end_wrapper();
}

inline bool parser::wrap_uuid(std::size_t type_pos) {
  skip_ws();
  const char* at = p_;
  const std::size_t vstart = out_.size();
  out_.put_i32(16);
  out_.put(binary_subtype::uuid);
  std::size_t pos, len;
  if (!scratch_string(pos, len)) return false;
  const std::string_view s = scratch_view(pos, len);
  std::uint8_t bytes[16];
  // 32 hex digits, or the same in groups of 8-4-4-4-12 joined by hyphens.
  if (len == 36) {
    static constexpr std::size_t group_bytes[5] = {4, 2, 2, 2, 6};
    std::size_t i = 0, n = 0;
    for (const std::size_t g : group_bytes) {
      if (i != 0 && s[i++] != '-') return fail_ext(at);
      if (oid::detail::decode_hex(s.data() + i, g, bytes + n) >= 0) return fail_ext(at);
      i += 2 * g;
      n += g;
    }
  } else if (len != 32 || oid::detail::decode_hex(s.data(), 16, bytes) >= 0) {
    return fail_ext(at);
  }
  out_.truncate(vstart + 5);
  out_.put(bytes, 16);
  set_type(type_pos, type::binary);
  return end_wrapper();
}

// {"$code": s} or {"$code": s, "$scope": {...}}. The int32 total of code-with-scope is reserved
// up front and dropped (one memmove of the code) when there is no scope.
inline bool parser::wrap_code(std::size_t type_pos) {
  skip_ws();
  if (!next_is('"')) return fail_value();
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
  if (!require_key("$scope", p_)) return false;
  if (!next_is('{')) return fail_value();
  if (!parse_scope()) return false;
  out_.patch_i32(vstart, static_cast<std::int32_t>(out_.size() - vstart));
  set_type(type_pos, type::javascript_with_scope);
  return end_wrapper();
}

inline bool parser::parse_scope() {
  const char* open = p_;
  if (!enter(open)) return false;
  ++p_;
  if (!parse_document_body(document_kind::scope)) return false;
  --depth_;
  return true;
}

// {"$scope": {...}, "$code": s}: the scope is written first, then the code, then the two are
// swapped into BSON's order.
inline bool parser::wrap_scope(std::size_t type_pos) {
  skip_ws();
  if (!next_is('{')) return fail_value();
  const std::size_t vstart = out_.size();
  out_.put_i32(0);
  if (!parse_scope()) return false;
  const std::size_t code_pos = out_.size();
  skip_ws();
  if (!next_is(',')) return next_is('}') ? fail_ext(p_) : fail_syntax();
  ++p_;
  skip_ws();
  if (!require_key("$code", p_)) return false;
  if (!next_is('"')) return fail_value();
  if (!put_string_value()) return false;
  std::rotate(out_.at(vstart + 4), out_.at(code_pos), out_.at(out_.size()));
  out_.patch_i32(vstart, static_cast<std::int32_t>(out_.size() - vstart));
  set_type(type_pos, type::javascript_with_scope);
  return end_wrapper();
}

// A JSON integer in [0, 2^32).
inline bool parser::uint32_value(std::uint32_t& v) {
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

inline bool parser::wrap_timestamp(std::size_t type_pos) {
  if (!next_is('{')) return fail_value();
  const char* open = p_;
  ++p_;
  bool have_t = false, have_i = false;
  std::uint32_t t = 0, i = 0;
  const bool ok = for_each_key([&](const std::string& key) {
    if (key == "t" && !have_t) return have_t = uint32_value(t);
    if (key == "i" && !have_i) return have_i = uint32_value(i);
    return fail_ext(p_);
  });
  if (!ok) return false;
  if (!have_t || !have_i) return fail_ext(open);
  out_.put_i32(static_cast<std::int32_t>(i));
  out_.put_i32(static_cast<std::int32_t>(t));
  set_type(type_pos, type::timestamp);
  return end_wrapper();
}

// Writes a regex (pattern C string, options C string with the flags sorted) from two scratch
// strings at the output's end.
inline bool parser::put_regex(std::size_t vstart, std::size_t ppos, std::size_t plen,
                              const char* pat_at, std::size_t opos, std::size_t olen,
                              const char* opt_at) {
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

inline bool parser::wrap_regular_expression(std::size_t type_pos) {
  if (!next_is('{')) return fail_value();
  const char* open = p_;
  ++p_;
  const std::size_t vstart = out_.size();
  bool have_p = false, have_o = false;
  std::size_t ppos = 0, plen = 0, opos = 0, olen = 0;
  const char *pat_at = nullptr, *opt_at = nullptr;
  const bool ok = for_each_key([&](const std::string& key) {
    if (key == "pattern" && !have_p) {
      pat_at = p_;
      return have_p = scratch_string(ppos, plen);
    }
    if (key == "options" && !have_o) {
      opt_at = p_;
      return have_o = scratch_string(opos, olen);
    }
    return fail_ext(p_);
  });
  if (!ok) return false;
  if (!have_p || !have_o) return fail_ext(open);
  if (!put_regex(vstart, ppos, plen, pat_at, opos, olen, opt_at)) return false;
  set_type(type_pos, type::regex);
  return end_wrapper();
}

// {"$oid": "<24 hex>"} at p_, into `id`.
inline bool parser::oid_object(std::uint8_t (&id)[12]) {
  skip_ws();
  if (!next_is('{')) return fail_value();
  const char* open = p_;
  ++p_;
  if (!require_key("$oid", open)) return false;
  const char* at = p_;
  std::size_t pos, len;
  if (!scratch_string(pos, len) || !put_object_id(pos, len, at)) return false;
  std::memcpy(id, out_.at(pos), 12);
  out_.truncate(pos);
  return end_wrapper();
}

inline bool parser::wrap_db_pointer(std::size_t type_pos) {
  if (!next_is('{')) return fail_value();
  const char* open = p_;
  ++p_;
  bool have_ref = false, have_id = false;
  std::uint8_t id[12];
  const bool ok = for_each_key([&](const std::string& key) {
    if (key == "$ref" && !have_ref) {
      if (!next_is('"')) return fail_value();
      return have_ref = put_string_value();
    }
    if (key == "$id" && !have_id) return have_id = oid_object(id);
    return fail_ext(p_);
  });
  if (!ok) return false;
  if (!have_ref || !have_id) return fail_ext(open);
  out_.put(id, 12);
  set_type(type_pos, type::db_pointer);
  return end_wrapper();
}

inline bool parser::wrap_date(std::size_t type_pos) {
  std::int64_t ms;
  const char* at = p_;
  if (next_is('{')) {
    ++p_;
    if (!require_key("$numberLong", at)) return false;
    if (!number_long_value(ms) || !end_wrapper()) return false;
  } else if (next_is('"')) {
    std::size_t pos, len;
    if (!scratch_string(pos, len)) return false;
    const auto t =
        oid::detail::parse_iso8601_ms(scratch_view(pos, len), oid::detail::iso8601_form::rfc3339);
    if (!t) return fail_ext(at);
    ms = *t;
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

inline bool parser::wrap_key_bound(std::size_t type_pos, type t) {
  const char* at = p_;
  if (p_ == end_) return fail_syntax();
  if (!(is_digit(*p_) || *p_ == '-')) return fail_ext(at);
  number n;
  if (!scan_number(n)) return false;
  if (!n.integer || !n.fits_i64 || n.i64 != 1) return fail_ext(at);
  set_type(type_pos, t);
  return end_wrapper();
}

inline bool parser::wrap_undefined(std::size_t type_pos) {
  if (p_ == end_) return fail_syntax();
  if (!next_is('t')) return fail_ext(p_);
  if (!literal("true")) return false;
  set_type(type_pos, type::undefined);
  return end_wrapper();
}

// Legacy {"$regex": "<pattern>", "$options": "<flags>"} in either order. Any other shape (the
// $regex query operator with an object value, a missing $options, a third key) is a plain
// document: not_matched, and the caller parses the object again as one.
inline attempt parser::legacy_regex(std::size_t type_pos, bool regex_first) {
  const std::size_t vstart = out_.size();
  std::size_t pos[2], len[2];
  const char* where[2];
  for (int k = 0; k < 2; ++k) {
    if (k == 1) {
      skip_ws();
      if (!next_is(',')) return attempt::not_matched;
      ++p_;
      skip_ws();
      const attempt a = key_is(regex_first ? "$options" : "$regex");
      if (a != attempt::matched) return a;
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
inline attempt parser::legacy_type_first(std::size_t type_pos) {
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
  if (const attempt a = key_is("$binary"); a != attempt::matched) return a;
  if (!next_is('"')) return attempt::not_matched;
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

}  // namespace oid::bson::detail
