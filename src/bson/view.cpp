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
  const std::int32_t n = load_le_i32(v);
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
  if (const std::size_t fixed = fixed_value_size(t); fixed != not_fixed) {
    return fixed <= avail ? fixed : bad_size;
  }
  std::size_t n = bad_size;
  switch (static_cast<type>(t)) {
  case type::string:
  case type::javascript:
  case type::symbol: return string_size(v, end);
  case type::document:
  case type::array:
  case type::javascript_with_scope: {
    if (avail < 4) return bad_size;
    const std::int32_t len = load_le_i32(v);
    if (len < 5) return bad_size;
    n = static_cast<std::size_t>(len);
    break;
  }
  case type::binary: {
    if (avail < 5) return bad_size;
    const std::int32_t len = load_le_i32(v);
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
  default: break;  // an unknown type byte (the fixed sizes were taken above)
  }
  return n <= avail ? n : bad_size;
}

}  // namespace detail

// The general decoder, for what the inline load() leaves: regex, DBPointer, unknown types and
// malformed bytes (on which it ends the iteration). Same contract as load().
void document_iterator::load_slow(const std::uint8_t* p) noexcept {
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

// The getters not inline in the header: the rare types, which need a scan.

result<regex_view> element::get_regex() const noexcept {
  if (type() != bson::type::regex) return mismatch();
  const auto v = raw_value();
  const char* p = reinterpret_cast<const char*>(v.data());
  const std::size_t plen = std::strlen(p);  // the value holds two NULs (validated or built)
  return regex_view{{p, plen}, {p + plen + 1, v.size() - plen - 2}};
}

result<db_pointer_view> element::get_db_pointer() const noexcept {
  if (type() != bson::type::db_pointer) return mismatch();
  const auto v = raw_value();
  object_id::bytes_type b;
  std::memcpy(b.data(), v.data() + v.size() - 12, b.size());
  return db_pointer_view{string_at(v.data()), object_id(b)};
}

}  // namespace oid::bson
