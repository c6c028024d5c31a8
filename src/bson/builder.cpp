#include <climits>
#include <cstdint>
#include <cstring>
#include <oid/bson/builder.hpp>
#include <span>
#include <vector>

#include "bson/detail/bytes.hpp"

namespace oid::bson {

namespace {
constexpr std::size_t max_document = INT32_MAX;

// The offset of the first NUL in `s`, or npos.
std::size_t find_nul(std::string_view s) noexcept {
  const void* p = std::memchr(s.data(), 0, s.size());
  return p == nullptr ? std::string_view::npos
                      : static_cast<std::size_t>(static_cast<const char*>(p) - s.data());
}

std::uint8_t* put(std::uint8_t* out, const void* p, std::size_t n) noexcept {
  if (n != 0) std::memcpy(out, p, n);
  return out + n;
}
std::uint8_t* put_u32(std::uint8_t* out, std::uint32_t v) noexcept {
  detail::store_u32(out, v);
  return out + 4;
}
// Arguments may point into the builder's own buffer (a key or value read from `view()`), which
// the next resize moves and the element header overwrites. A guard notices such an argument and
// points it at a snapshot of the buffer as it was; other arguments pass through untouched.
class alias_guard {
 public:
  explicit alias_guard(const std::vector<std::uint8_t>& buf) noexcept : buf_(buf) {}

  std::string_view fix(std::string_view s) {
    return {reinterpret_cast<const char*>(rebase(s.data(), s.size())), s.size()};
  }
  std::span<const std::uint8_t> fix(std::span<const std::uint8_t> s) {
    return {rebase(s.data(), s.size()), s.size()};
  }
  document_view fix(document_view v) {
    return document_view::unchecked({rebase(v.data(), v.size()), v.size()});
  }

 private:
  const std::uint8_t* rebase(const void* p, std::size_t n) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const auto begin = reinterpret_cast<std::uintptr_t>(buf_.data());
    const auto* bytes = static_cast<const std::uint8_t*>(p);
    if (n == 0 || at < begin || at >= begin + buf_.size()) return bytes;
    if (copy_.empty()) copy_.assign(buf_.begin(), buf_.end());
    return copy_.data() + (at - begin);
  }

  const std::vector<std::uint8_t>& buf_;
  std::vector<std::uint8_t> copy_;
};

// A BSON string: int32 length counting the NUL, the bytes, the NUL.
std::uint8_t* put_string(std::uint8_t* out, std::string_view s) noexcept {
  out = put_u32(out, static_cast<std::uint32_t>(s.size() + 1));
  out = put(out, s.data(), s.size());
  *out = 0;
  return out + 1;
}
}  // namespace

builder::builder() : builder(64) {}

builder::builder(std::size_t capacity) {
  buf_.reserve(capacity < 5 ? 5 : capacity);
  buf_.assign(std::begin(detail::empty_document_bytes), std::end(detail::empty_document_bytes));
}

void builder::clear() noexcept {
  // Shrinking a vector of bytes neither allocates nor throws.
  buf_.resize(5);
  std::memcpy(buf_.data(), detail::empty_document_bytes, 5);
  stack_.clear();
}

std::uint8_t* builder::start_element(type t, std::string_view key, std::size_t value_size,
                                     oid::error& err) {
  if (const std::size_t nul = find_nul(key); nul != std::string_view::npos) {
    err = oid::error{errc::invalid_key, nul};
    return nullptr;
  }
  // Everything below stays far from overflow: each term is checked against INT32_MAX first.
  if (key.size() > max_document || value_size > max_document) {
    err = oid::error{errc::too_large, 0};
    return nullptr;
  }
  const std::size_t elem = 2 + key.size() + value_size;
  const std::size_t old = buf_.size();
  // Terminators still to come: one per open scope plus the top level's (present at depth 0).
  const std::size_t pending = stack_.empty() ? 0 : stack_.size() + 1;
  if (old + elem + pending > max_document) {
    err = oid::error{errc::too_large, 0};
    return nullptr;
  }
  alias_guard guard(buf_);
  key = guard.fix(key);
  buf_.resize(old + elem);  // the strong guarantee: unchanged if this throws
  std::uint8_t* out = buf_.data() + old;
  if (stack_.empty()) {
    // The element takes the terminator's place; the terminator moves to the new end.
    --out;
    buf_.back() = 0;
    detail::store_u32(buf_.data(), static_cast<std::uint32_t>(buf_.size()));
  }
  *out++ = static_cast<std::uint8_t>(t);
  out = put(out, key.data(), key.size());
  *out++ = 0;
  return out;
}

result<void> builder::append_fixed(type t, std::string_view key, const void* p, std::size_t n) {
  oid::error err;
  std::uint8_t* out = start_element(t, key, n, err);
  if (out == nullptr) return err;
  put(out, p, n);
  return {};
}

result<void> builder::append_string_like(type t, std::string_view key, std::string_view v) {
  alias_guard guard(buf_);
  v = guard.fix(v);
  oid::error err;
  if (v.size() >= max_document) return oid::error{errc::too_large, 0};
  std::uint8_t* out = start_element(t, key, 4 + v.size() + 1, err);
  if (out == nullptr) return err;
  put_string(out, v);
  return {};
}

result<void> builder::append_document_like(type t, std::string_view key, document_view v) {
  alias_guard guard(buf_);
  v = guard.fix(v);
  return append_fixed(t, key, v.data(), v.size());
}

result<void> builder::try_append_double(std::string_view key, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  std::uint8_t b[8];
  detail::store_u64(b, bits);
  return append_fixed(type::double_, key, b, 8);
}

result<void> builder::try_append_string(std::string_view key, std::string_view v) {
  return append_string_like(type::string, key, v);
}

result<void> builder::try_append_document(std::string_view key, document_view v) {
  return append_document_like(type::document, key, v);
}

result<void> builder::try_append_array(std::string_view key, document_view v) {
  return append_document_like(type::array, key, v);
}

result<void> builder::try_append_binary(std::string_view key, std::uint8_t subtype,
                                        std::span<const std::uint8_t> bytes) {
  alias_guard guard(buf_);
  bytes = guard.fix(bytes);
  const bool old = subtype == binary_subtype::old_binary;
  if (bytes.size() > max_document - 9) return oid::error{errc::too_large, 0};
  const std::size_t payload = bytes.size() + (old ? 4 : 0);
  oid::error err;
  std::uint8_t* out = start_element(type::binary, key, 5 + payload, err);
  if (out == nullptr) return err;
  out = put_u32(out, static_cast<std::uint32_t>(payload));
  *out++ = subtype;
  if (old) out = put_u32(out, static_cast<std::uint32_t>(bytes.size()));
  put(out, bytes.data(), bytes.size());
  return {};
}

result<void> builder::try_append_undefined(std::string_view key) {
  return append_fixed(type::undefined, key, nullptr, 0);
}

result<void> builder::try_append_object_id(std::string_view key, const object_id& v) {
  return append_fixed(type::object_id, key, v.bytes().data(), object_id::size);
}

result<void> builder::try_append_bool(std::string_view key, bool v) {
  const std::uint8_t b = v ? 1 : 0;
  return append_fixed(type::boolean, key, &b, 1);
}

result<void> builder::try_append_date_time(std::string_view key, std::int64_t ms) {
  std::uint8_t b[8];
  detail::store_u64(b, static_cast<std::uint64_t>(ms));
  return append_fixed(type::date_time, key, b, 8);
}

result<void> builder::try_append_null(std::string_view key) {
  return append_fixed(type::null, key, nullptr, 0);
}

result<void> builder::try_append_regex(std::string_view key, std::string_view pattern,
                                       std::string_view options) {
  if (const std::size_t nul = find_nul(pattern); nul != std::string_view::npos) {
    return oid::error{errc::invalid_value, nul};
  }
  if (const std::size_t nul = find_nul(options); nul != std::string_view::npos) {
    return oid::error{errc::invalid_value, nul};
  }
  if (pattern.size() > max_document || options.size() > max_document) {
    return oid::error{errc::too_large, 0};
  }
  alias_guard guard(buf_);
  pattern = guard.fix(pattern);
  options = guard.fix(options);
  oid::error err;
  std::uint8_t* out = start_element(type::regex, key, pattern.size() + options.size() + 2, err);
  if (out == nullptr) return err;
  out = put(out, pattern.data(), pattern.size());
  *out++ = 0;
  out = put(out, options.data(), options.size());
  *out = 0;
  return {};
}

result<void> builder::try_append_db_pointer(std::string_view key, std::string_view ref,
                                            const object_id& id) {
  if (ref.size() >= max_document) return oid::error{errc::too_large, 0};
  alias_guard guard(buf_);
  ref = guard.fix(ref);
  oid::error err;
  std::uint8_t* out = start_element(type::db_pointer, key, 4 + ref.size() + 1 + 12, err);
  if (out == nullptr) return err;
  out = put_string(out, ref);
  put(out, id.bytes().data(), object_id::size);
  return {};
}

result<void> builder::try_append_javascript(std::string_view key, std::string_view code) {
  return append_string_like(type::javascript, key, code);
}

result<void> builder::try_append_symbol(std::string_view key, std::string_view v) {
  return append_string_like(type::symbol, key, v);
}

result<void> builder::try_append_javascript_with_scope(std::string_view key, std::string_view code,
                                                       document_view scope) {
  if (code.size() >= max_document || scope.size() > max_document) {
    return oid::error{errc::too_large, 0};
  }
  const std::size_t total = 4 + 4 + code.size() + 1 + scope.size();
  alias_guard guard(buf_);
  code = guard.fix(code);
  scope = guard.fix(scope);
  oid::error err;
  std::uint8_t* out = start_element(type::javascript_with_scope, key, total, err);
  if (out == nullptr) return err;
  out = put_u32(out, static_cast<std::uint32_t>(total));
  out = put_string(out, code);
  put(out, scope.data(), scope.size());
  return {};
}

result<void> builder::try_append_int32(std::string_view key, std::int32_t v) {
  std::uint8_t b[4];
  detail::store_u32(b, static_cast<std::uint32_t>(v));
  return append_fixed(type::int32, key, b, 4);
}

result<void> builder::try_append_timestamp(std::string_view key, timestamp_value v) {
  std::uint8_t b[8];
  detail::store_u64(b, std::uint64_t{v.t} << 32 | v.i);
  return append_fixed(type::timestamp, key, b, 8);
}

result<void> builder::try_append_int64(std::string_view key, std::int64_t v) {
  std::uint8_t b[8];
  detail::store_u64(b, static_cast<std::uint64_t>(v));
  return append_fixed(type::int64, key, b, 8);
}

result<void> builder::try_append_decimal128(std::string_view key, decimal128 v) {
  std::uint8_t b[16];
  detail::store_u64(b, v.low);
  detail::store_u64(b + 8, v.high);
  return append_fixed(type::decimal128, key, b, 16);
}

result<void> builder::try_append_min_key(std::string_view key) {
  return append_fixed(type::min_key, key, nullptr, 0);
}

result<void> builder::try_append_max_key(std::string_view key) {
  return append_fixed(type::max_key, key, nullptr, 0);
}

result<void> builder::try_append_element(std::string_view key, const element& e) {
  alias_guard guard(buf_);
  const auto v = guard.fix(e.raw_value());
  return append_fixed(e.type(), key, v.data(), v.size());
}

result<void> builder::open(type t, std::string_view key) {
  // Room for the new scope first, so that nothing below can fail after the buffer changed.
  if (stack_.size() == stack_.capacity()) stack_.reserve(stack_.empty() ? 8 : 2 * stack_.size());
  oid::error err;
  std::uint8_t* out = start_element(t, key, 4, err);
  if (out == nullptr) return err;
  if (stack_.empty()) buf_.pop_back();  // the top level's terminator comes back at its close
  stack_.push_back(static_cast<std::size_t>(out - buf_.data()));
  return {};
}

result<void> builder::try_open_document(std::string_view key) { return open(type::document, key); }

result<void> builder::try_open_array(std::string_view key) { return open(type::array, key); }

result<void> builder::try_close() {
  assert(!stack_.empty() && "builder::close() with no document or array open");
  if (stack_.empty()) return {};
  // start_element left room for every pending terminator, so this cannot exceed the limit.
  const std::size_t at = stack_.back();
  buf_.push_back(0);
  detail::store_u32(buf_.data() + at, static_cast<std::uint32_t>(buf_.size() - at));
  stack_.pop_back();
  if (stack_.empty()) {
    buf_.push_back(0);
    detail::store_u32(buf_.data(), static_cast<std::uint32_t>(buf_.size()));
  }
  return {};
}

document builder::extract() && {
  assert(stack_.empty() && "builder::extract() with a document or array still open");
  document d(document::trusted{}, std::move(buf_));
  buf_.assign(std::begin(detail::empty_document_bytes), std::end(detail::empty_document_bytes));
  stack_.clear();
  return d;
}

}  // namespace oid::bson
