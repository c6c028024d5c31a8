#include <algorithm>
#include <bit>
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

// True when `s` holds a NUL byte. Keys are short (a few bytes), and a word-at-a-time scan is
// several times cheaper for them than a call to memchr; building spends much of its time here.
// view.hpp's detail::find_nul scans the same way but also locates the NUL; used here, it made
// DriverBench's build rows 5-10% slower, so the hot path keeps this yes/no form and the error
// path below asks find_nul where the NUL is.
bool has_nul(std::string_view s) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101;
  constexpr std::uint64_t highs = 0x8080808080808080;
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    if (((w - ones) & ~w & highs) != 0) return true;  // the classic "has a zero byte" test
  }
  for (; n != 0; ++p, --n) {
    if (*p == 0) return true;
  }
  return false;
}

// The offset of the first NUL in `s`, which has one.
std::size_t nul_offset(std::string_view s) noexcept {
  const auto* begin = reinterpret_cast<const std::uint8_t*>(s.data());
  return static_cast<std::size_t>(detail::find_nul(begin, begin + s.size()) - begin);
}

std::uint8_t* put(std::uint8_t* out, const void* p, std::size_t n) noexcept {
  if (n != 0) std::memcpy(out, p, n);
  return out + n;
}
std::uint8_t* put_u32(std::uint8_t* out, std::uint32_t v) noexcept {
  detail::store_le_u32(out, v);
  return out + 4;
}
// A BSON string: int32 length counting the NUL, the bytes, the NUL.
std::uint8_t* put_string(std::uint8_t* out, std::string_view s) noexcept {
  out = put_u32(out, static_cast<std::uint32_t>(s.size() + 1));
  out = put(out, s.data(), s.size());
  *out = 0;
  return out + 1;
}

// Arguments may point into the builder's own buffer (a key or value read from `view()`), which
// growing moves and the element header overwrites. A guard notices such an argument and points
// it at a snapshot of the buffer as it was; other arguments pass through untouched.
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
    if (n == 0 || at < begin || at >= begin + buf_.size()) [[likely]]
      return bytes;
    if (copy_.empty()) copy_.assign(buf_.begin(), buf_.end());
    return copy_.data() + (at - begin);
  }

  const std::vector<std::uint8_t>& buf_;
  std::vector<std::uint8_t> copy_;
};
}  // namespace

// ---- Storage ---------------------------------------------------------------------------------
//
// `buf_` is storage, not the document: bytes [0, size_) are written and the rest is room, so an
// append writes into room it has checked for instead of resizing a vector (which would zero-fill
// every new byte and cost a call per element). The vector grows by doubling; extract() trims it
// to size_ and hands it to the document without a copy.

builder::builder() : builder(256) {}

builder::builder(std::size_t capacity) {
  buf_.resize(std::max<std::size_t>(capacity, 5));
  start_over();
}

builder::builder(builder&& other) noexcept
    : buf_(std::move(other.buf_)), size_(other.size_), open_(other.open_), depth_(other.depth_) {
  other.buf_.clear();  // the storage moved: the other builder must not write into it
  other.clear();
}

builder& builder::operator=(builder&& other) noexcept {
  if (this != &other) {
    buf_ = std::move(other.buf_);
    size_ = other.size_;
    open_ = other.open_;
    depth_ = other.depth_;
    other.buf_.clear();
    other.clear();
  }
  return *this;
}

void builder::start_over() noexcept {
  std::memcpy(buf_.data(), detail::empty_document_bytes, 5);
  size_ = 5;
  open_ = 0;
  depth_ = 0;
}

void builder::clear() noexcept {
  if (buf_.size() < 5) {
    size_ = 0;  // after extract(): the first append makes the storage
    depth_ = 0;
    return;
  }
  start_over();
}

void builder::reserve(std::size_t bytes) {
  if (bytes > buf_.size()) grow(bytes - size_);
}

void builder::grow(std::size_t n) {
  if (size_ == 0) {  // no storage since extract()
    buf_.resize(std::max<std::size_t>(n + 5, 256));
    start_over();
    return;
  }
  buf_.resize(std::max(2 * buf_.size(), size_ + n));
}

// Room for `n` more bytes of elements at the end of the open scope, or null (and err) when the
// document would grow past the size limit. At the top level the terminator moves to the new end.
std::uint8_t* builder::make_room(std::size_t n, oid::error& err) {
  // Everything below stays far from overflow: n is checked against INT32_MAX first.
  // Terminators still to come: one per open scope plus the top level's (present at depth 0).
  const std::size_t pending = depth_ == 0 ? 0 : depth_ + 1;
  if (n > max_document || size_ + n + pending > max_document) [[unlikely]] {
    err = oid::error{errc::too_large, 0};
    return nullptr;
  }
  if (buf_.size() - size_ < n) [[unlikely]]
    grow(n);  // may throw: nothing changed yet
  std::uint8_t* out;
  if (depth_ == 0) {
    out = buf_.data() + size_ - 1;
    size_ += n;
    buf_[size_ - 1] = 0;
    detail::store_le_u32(buf_.data(), static_cast<std::uint32_t>(size_));
  } else {
    out = buf_.data() + size_;
    size_ += n;
  }
  return out;
}

std::uint8_t* builder::start_element(type t, std::string_view key, std::size_t value_size,
                                     oid::error& err) {
  if (has_nul(key)) [[unlikely]] {
    err = oid::error{errc::invalid_key, nul_offset(key)};
    return nullptr;
  }
  if (key.size() > max_document || value_size > max_document) [[unlikely]] {
    err = oid::error{errc::too_large, 0};
    return nullptr;
  }
  alias_guard guard(buf_);
  key = guard.fix(key);
  std::uint8_t* out = make_room(2 + key.size() + value_size, err);
  if (out == nullptr) return nullptr;
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

template <class U>
result<void> builder::append_le(type t, std::string_view key, U v) {
  std::uint8_t b[sizeof(U)];
  oid::detail::store<std::endian::little>(b, v);
  return append_fixed(t, key, b, sizeof(U));
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
  return append_le(type::double_, key, std::bit_cast<std::uint64_t>(v));
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

result<std::span<std::uint8_t>> builder::try_append_binary_space(std::string_view key,
                                                                 std::uint8_t subtype,
                                                                 std::size_t size) {
  if (subtype == binary_subtype::old_binary) return oid::error{errc::invalid_value, 0};
  if (size > max_document - 9) return oid::error{errc::too_large, 0};
  oid::error err;
  std::uint8_t* out = start_element(type::binary, key, 5 + size, err);
  if (out == nullptr) return err;
  out = put_u32(out, static_cast<std::uint32_t>(size));
  *out++ = subtype;
  return std::span<std::uint8_t>(out, size);
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
  return append_le(type::date_time, key, static_cast<std::uint64_t>(ms));
}

result<void> builder::try_append_null(std::string_view key) {
  return append_fixed(type::null, key, nullptr, 0);
}

result<void> builder::try_append_regex(std::string_view key, std::string_view pattern,
                                       std::string_view options) {
  if (has_nul(pattern)) return oid::error{errc::invalid_value, nul_offset(pattern)};
  if (has_nul(options)) return oid::error{errc::invalid_value, nul_offset(options)};
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
  return append_le(type::int32, key, static_cast<std::uint32_t>(v));
}

result<void> builder::try_append_timestamp(std::string_view key, timestamp_value v) {
  return append_le(type::timestamp, key, std::uint64_t{v.t} << 32 | v.i);
}

result<void> builder::try_append_int64(std::string_view key, std::int64_t v) {
  return append_le(type::int64, key, static_cast<std::uint64_t>(v));
}

result<void> builder::try_append_decimal128(std::string_view key, decimal128 v) {
  std::uint8_t b[16];
  detail::store_le_u64(b, v.low);
  detail::store_le_u64(b + 8, v.high);
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

result<void> builder::try_append_elements(document_view doc) {
  if (doc.size() <= 5) return {};
  alias_guard guard(buf_);
  doc = guard.fix(doc);
  oid::error err;
  std::uint8_t* out = make_room(doc.size() - 5, err);
  if (out == nullptr) return err;
  put(out, doc.data() + 4, doc.size() - 5);  // the elements: no length prefix, no terminator
  return {};
}

// ---- Scopes ----------------------------------------------------------------------------------
//
// The open documents and arrays form a stack that lives in the buffer itself: while a scope is
// open, its length prefix (which close() fills in) holds a link to the scope that was open
// before it, so opening and closing never allocate. A link is `offset << 1`, the offset of the
// enclosing scope's length prefix. The scope of a code-with-scope value has two lengths to fill in,
// its own and the element's total: its link is `total_offset << 1 | 1`, and the total's slot holds
// the ordinary link to the enclosing scope. Offsets fit: a document is below 2^31 bytes.

void builder::push_scope(std::uint8_t* slot, std::uint32_t link) noexcept {
  detail::store_le_u32(slot, link);
  open_ = static_cast<std::uint32_t>(slot - buf_.data());
  ++depth_;
}

result<void> builder::open(type t, std::string_view key) {
  oid::error err;
  std::uint8_t* out = start_element(t, key, 4, err);
  if (out == nullptr) return err;
  if (depth_ == 0) --size_;  // the top level's terminator comes back at its close
  push_scope(out, open_ << 1);
  return {};
}

result<void> builder::try_open_document(std::string_view key) { return open(type::document, key); }

result<void> builder::try_open_array(std::string_view key) { return open(type::array, key); }

result<void> builder::try_open_javascript_with_scope(std::string_view key, std::string_view code) {
  if (code.size() >= max_document) return oid::error{errc::too_large, 0};
  alias_guard guard(buf_);
  code = guard.fix(code);
  oid::error err;
  // The total length, the code as a string, and the scope's length prefix.
  std::uint8_t* out =
      start_element(type::javascript_with_scope, key, 4 + 4 + code.size() + 1 + 4, err);
  if (out == nullptr) return err;
  if (depth_ == 0) --size_;
  const auto total_at = static_cast<std::uint32_t>(out - buf_.data());
  detail::store_le_u32(out, open_ << 1);
  push_scope(put_string(out + 4, code), total_at << 1 | 1);
  return {};
}

result<void> builder::try_close() {
  assert(depth_ != 0 && "builder::close() with no document or array open");
  if (depth_ == 0) return {};
  // start_element left room under the size limit for every pending terminator; the storage may
  // still need to grow by the one or two bytes written here.
  if (buf_.size() - size_ < 2) [[unlikely]]
    grow(2);
  std::uint8_t* const base = buf_.data();
  const std::uint32_t at = open_;
  std::uint32_t link = detail::load_le_u32(base + at);
  base[size_++] = 0;
  detail::store_le_u32(base + at, static_cast<std::uint32_t>(size_ - at));
  if ((link & 1) != 0) {  // a code-with-scope's scope: the element's total length too
    const std::uint32_t total_at = link >> 1;
    link = detail::load_le_u32(base + total_at);
    detail::store_le_u32(base + total_at, static_cast<std::uint32_t>(size_ - total_at));
  }
  open_ = link >> 1;
  if (--depth_ == 0) {
    base[size_++] = 0;
    detail::store_le_u32(base, static_cast<std::uint32_t>(size_));
  }
  return {};
}

document builder::extract() && {
  assert(depth_ == 0 && "builder::extract() with a document or array still open");
  if (size_ == 0) return document();
  buf_.resize(size_);  // shrinking: no allocation
  document d(document::trusted{}, std::move(buf_));
  buf_.clear();  // moved from: now certainly empty, and the next append makes new storage
  size_ = 0;
  return d;
}

}  // namespace oid::bson
