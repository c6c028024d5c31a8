#include <cstring>
#include <oid/bson/view.hpp>

#include "bson/detail/bytes.hpp"

namespace oid::bson {

std::string_view to_string(type t) noexcept {
  switch (t) {
  case type::double_: return "double";
  case type::string: return "string";
  case type::document: return "document";
  case type::array: return "array";
  case type::binary: return "binary";
  case type::undefined: return "undefined";
  case type::object_id: return "objectId";
  case type::boolean: return "bool";
  case type::date_time: return "date";
  case type::null: return "null";
  case type::regex: return "regex";
  case type::db_pointer: return "dbPointer";
  case type::javascript: return "javascript";
  case type::symbol: return "symbol";
  case type::javascript_with_scope: return "javascriptWithScope";
  case type::int32: return "int";
  case type::timestamp: return "timestamp";
  case type::int64: return "long";
  case type::decimal128: return "decimal";
  case type::min_key: return "minKey";
  case type::max_key: return "maxKey";
  }
  return "unknown";
}

namespace detail {

namespace {
// A length-prefixed string: int32 length (>= 1, counting the NUL) and that many bytes.
std::size_t string_size(const std::uint8_t* v, const std::uint8_t* end) noexcept {
  const auto avail = static_cast<std::size_t>(end - v);
  if (avail < 4) return bad_size;
  const std::int32_t n = load_i32(v);
  if (n < 1 || static_cast<std::size_t>(n) > avail - 4) return bad_size;
  return 4 + static_cast<std::size_t>(n);
}
// A C string: bytes up to and including a NUL.
std::size_t cstring_size(const std::uint8_t* v, const std::uint8_t* end) noexcept {
  const void* nul = std::memchr(v, 0, static_cast<std::size_t>(end - v));
  if (nul == nullptr) return bad_size;
  return static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - v) + 1;
}
}  // namespace

std::size_t value_size(std::uint8_t t, const std::uint8_t* v, const std::uint8_t* end) noexcept {
  const auto avail = static_cast<std::size_t>(end - v);
  std::size_t n = bad_size;
  switch (static_cast<type>(t)) {
  case type::undefined:
  case type::null:
  case type::min_key:
  case type::max_key: return 0;
  case type::boolean: n = 1; break;
  case type::int32: n = 4; break;
  case type::double_:
  case type::date_time:
  case type::timestamp:
  case type::int64: n = 8; break;
  case type::object_id: n = 12; break;
  case type::decimal128: n = 16; break;
  case type::string:
  case type::javascript:
  case type::symbol: return string_size(v, end);
  case type::document:
  case type::array:
  case type::javascript_with_scope: {
    if (avail < 4) return bad_size;
    const std::int32_t len = load_i32(v);
    if (len < 5) return bad_size;
    n = static_cast<std::size_t>(len);
    break;
  }
  case type::binary: {
    if (avail < 5) return bad_size;
    const std::int32_t len = load_i32(v);
    if (len < 0) return bad_size;
    n = 5 + static_cast<std::size_t>(len);
    break;
  }
  case type::regex: {
    const std::size_t p = cstring_size(v, end);
    if (p == bad_size) return bad_size;
    const std::size_t o = cstring_size(v + p, end);
    if (o == bad_size) return bad_size;
    return p + o;
  }
  case type::db_pointer: {
    const std::size_t s = string_size(v, end);
    if (s == bad_size) return bad_size;
    n = s + 12;
    break;
  }
  }
  return n <= avail ? n : bad_size;
}

}  // namespace detail

void document_iterator::load(const std::uint8_t* p) noexcept {
  e_.p_ = end_;
  e_.key_size_ = 0;
  e_.value_size_ = 0;
  if (p >= end_ || *p == 0) return;
  const void* nul = std::memchr(p + 1, 0, static_cast<std::size_t>(end_ - (p + 1)));
  if (nul == nullptr) return;
  const auto* v = static_cast<const std::uint8_t*>(nul) + 1;
  const std::size_t n = detail::value_size(*p, v, end_);
  if (n == detail::bad_size) return;
  e_.p_ = p;
  e_.key_size_ = static_cast<std::uint32_t>(v - 1 - (p + 1));
  e_.value_size_ = static_cast<std::uint32_t>(n);
}

result<element> document_view::find(std::string_view key) const noexcept {
  for (const element& e : *this) {
    if (e.key() == key) return e;
  }
  return oid::error{errc::key_not_found, 0};
}

namespace {
constexpr oid::error mismatch{errc::type_mismatch, 0};

std::string_view string_at(const std::uint8_t* v) noexcept {
  // Validated: length >= 1 and the last byte is the NUL.
  return {reinterpret_cast<const char*>(v + 4), detail::load_u32(v) - 1};
}
}  // namespace

result<double> element::get_double() const noexcept {
  if (type() != bson::type::double_) return mismatch;
  double d;
  const std::uint64_t bits = detail::load_u64(raw_value().data());
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

result<std::string_view> element::get_string() const noexcept {
  if (type() != bson::type::string) return mismatch;
  return string_at(raw_value().data());
}

result<document_view> element::get_document() const noexcept {
  if (type() != bson::type::document) return mismatch;
  return document_view::unchecked(raw_value());
}

result<document_view> element::get_array() const noexcept {
  if (type() != bson::type::array) return mismatch;
  return document_view::unchecked(raw_value());
}

result<binary_view> element::get_binary() const noexcept {
  if (type() != bson::type::binary) return mismatch;
  const auto v = raw_value();
  binary_view b;
  b.subtype = v[4];
  b.bytes = v.subspan(5);
  // The old subtype repeats the length inside the payload; validation checked it matches.
  if (b.subtype == binary_subtype::old_binary && b.bytes.size() >= 4) b.bytes = b.bytes.subspan(4);
  return b;
}

result<object_id> element::get_object_id() const noexcept {
  if (type() != bson::type::object_id) return mismatch;
  object_id::bytes_type b;
  std::memcpy(b.data(), raw_value().data(), b.size());
  return object_id(b);
}

result<bool> element::get_bool() const noexcept {
  if (type() != bson::type::boolean) return mismatch;
  return raw_value()[0] != 0;
}

result<std::int64_t> element::get_date_time() const noexcept {
  if (type() != bson::type::date_time) return mismatch;
  return static_cast<std::int64_t>(detail::load_u64(raw_value().data()));
}

result<regex_view> element::get_regex() const noexcept {
  if (type() != bson::type::regex) return mismatch;
  const auto v = raw_value();
  const char* p = reinterpret_cast<const char*>(v.data());
  const std::size_t plen = std::strlen(p);  // the value holds two NULs (validated or built)
  return regex_view{{p, plen}, {p + plen + 1, v.size() - plen - 2}};
}

result<db_pointer_view> element::get_db_pointer() const noexcept {
  if (type() != bson::type::db_pointer) return mismatch;
  const auto v = raw_value();
  object_id::bytes_type b;
  std::memcpy(b.data(), v.data() + v.size() - 12, b.size());
  return db_pointer_view{string_at(v.data()), object_id(b)};
}

result<std::string_view> element::get_javascript() const noexcept {
  if (type() != bson::type::javascript) return mismatch;
  return string_at(raw_value().data());
}

result<std::string_view> element::get_symbol() const noexcept {
  if (type() != bson::type::symbol) return mismatch;
  return string_at(raw_value().data());
}

result<code_with_scope_view> element::get_javascript_with_scope() const noexcept {
  if (type() != bson::type::javascript_with_scope) return mismatch;
  const auto v = raw_value();
  const std::string_view code = string_at(v.data() + 4);
  const std::size_t scope_at = 4 + 4 + code.size() + 1;
  return code_with_scope_view{code, document_view::unchecked(v.subspan(scope_at))};
}

result<std::int32_t> element::get_int32() const noexcept {
  if (type() != bson::type::int32) return mismatch;
  return detail::load_i32(raw_value().data());
}

result<timestamp_value> element::get_timestamp() const noexcept {
  if (type() != bson::type::timestamp) return mismatch;
  const std::uint64_t u = detail::load_u64(raw_value().data());
  return timestamp_value{static_cast<std::uint32_t>(u >> 32), static_cast<std::uint32_t>(u)};
}

result<std::int64_t> element::get_int64() const noexcept {
  if (type() != bson::type::int64) return mismatch;
  return static_cast<std::int64_t>(detail::load_u64(raw_value().data()));
}

result<decimal128> element::get_decimal128() const noexcept {
  if (type() != bson::type::decimal128) return mismatch;
  const auto v = raw_value();
  return decimal128{detail::load_u64(v.data()), detail::load_u64(v.data() + 8)};
}

}  // namespace oid::bson
