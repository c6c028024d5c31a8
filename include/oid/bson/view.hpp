// oid/bson/view.hpp: reading BSON without copying: `document_view`, `element` and the value views.
//
// A `document_view` is a pointer and a length over the bytes of one BSON document; it owns nothing
// and is trivially copyable. The only way to get one over bytes you did not produce is
// `oid::bson::validate()` (oid/bson/validate.hpp), which checks everything once; after that,
// iteration and typed access are `noexcept` and cannot read outside the document. Arrays are
// document views too, with keys "0", "1", ...
//
//     auto doc = oid::bson::validate(bytes);          // result<document_view>
//     if (!doc) return report(doc.error());
//     for (const oid::bson::element& e : *doc) {
//       if (auto n = e.get_int32()) std::cout << e.key() << " = " << *n << '\n';
//     }
//     auto name = doc->find("name");                  // result<element>: key_not_found
//     std::string_view s = name ? name->get_string().value_or("") : "";
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/type.hpp>
#include <oid/detail/endian.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/result.hpp>
#include <span>
#include <string_view>

namespace oid::bson {

class document_view;
class document_iterator;
struct code_with_scope_view;

/// A binary value: its subtype and its bytes. For the old subtype 0x02, `bytes` is the payload
/// after the inner int32 length (which validation has checked equals the payload size).
struct binary_view {
  std::uint8_t subtype = binary_subtype::generic;  ///< see oid::bson::binary_subtype
  std::span<const std::uint8_t> bytes;             ///< the payload
};

/// A regular expression: its pattern and its options, both C strings (no NUL inside).
struct regex_view {
  std::string_view pattern;  ///< the pattern, without delimiters
  std::string_view options;  ///< option letters, e.g. "imsx"
};

/// A deprecated DBPointer: a collection name and an ObjectId.
struct db_pointer_view {
  std::string_view ref;  ///< namespace of the referenced document
  object_id id;          ///< its `_id`
};

/// A BSON timestamp (MongoDB's internal replication clock, not a date).
struct timestamp_value {
  std::uint32_t t = 0;  ///< seconds since the Unix epoch: the high 32 bits of the stored uint64
  std::uint32_t i = 0;  ///< increment within the second: the low 32 bits

  friend constexpr bool operator==(const timestamp_value&, const timestamp_value&) = default;
};

/// The time point of a BSON UTC datetime (milliseconds since the Unix epoch, signed).
constexpr std::chrono::sys_time<std::chrono::milliseconds> to_sys_time(std::int64_t ms) noexcept {
  return std::chrono::sys_time<std::chrono::milliseconds>{std::chrono::milliseconds{ms}};
}
/// The BSON UTC datetime (milliseconds since the Unix epoch) of a time point.
constexpr std::int64_t to_date_time(std::chrono::sys_time<std::chrono::milliseconds> t) noexcept {
  return static_cast<std::int64_t>(t.time_since_epoch().count());
}

namespace detail {
/// The bytes of the empty document, which a default `document_view` points at.
inline constexpr std::uint8_t empty_document_bytes[5] = {5, 0, 0, 0, 0};

// The first NUL in [p, end), or `end`; reads nothing at or past `end`. Keys are short (most are
// 1 to 10 bytes), where calling memchr costs more than the scan itself, so this tests eight bytes
// at a time while eight remain: (x - 0x01..01) & ~x & 0x80..80 sets the high bit of every zero
// byte, plus possibly of bytes after the first zero (a borrow), so its lowest set bit is exact.
inline const std::uint8_t* find_nul(const std::uint8_t* p, const std::uint8_t* end) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
  while (end - p >= 8) {
    const std::uint64_t x =
        oid::detail::load_le_u64(p);  // byte i in bits 8i..8i+7, whatever the host order
    const std::uint64_t zeros = (x - ones) & ~x & highs;
    if (zeros != 0) return p + std::countr_zero(zeros) / 8;
    p += 8;
  }
  while (p < end && *p != 0) ++p;
  return p;
}

/// What `fixed_value_size` returns for the types whose values carry their own length, and for
/// unknown type bytes.
inline constexpr std::size_t not_fixed = static_cast<std::size_t>(-1);

/// The value sizes the type byte fixes, 0xFF where it does not: a table, so that iteration pays
/// one load for them instead of a jump through a switch. Validation does not read it: it checks
/// each type's value (a boolean's byte, a string's length and NUL, ...) and the fixed sizes with
/// it.
inline constexpr auto fixed_value_sizes = [] {
  std::array<std::uint8_t, 256> sizes{};
  sizes.fill(0xFF);
  for (const type t : {type::undefined, type::null, type::min_key, type::max_key}) {
    sizes[static_cast<std::uint8_t>(t)] = 0;
  }
  sizes[static_cast<std::uint8_t>(type::boolean)] = 1;
  sizes[static_cast<std::uint8_t>(type::int32)] = 4;
  for (const type t : {type::double_, type::date_time, type::timestamp, type::int64}) {
    sizes[static_cast<std::uint8_t>(t)] = 8;
  }
  sizes[static_cast<std::uint8_t>(type::object_id)] = 12;
  sizes[static_cast<std::uint8_t>(type::decimal128)] = 16;
  return sizes;
}();

/// The size of a value of type byte `t` when the type fixes it (0 for null, 8 for a double, ...),
/// else `not_fixed`. Iteration (element sizes, `detail::value_size`) reads the sizes here.
constexpr std::size_t fixed_value_size(std::uint8_t t) noexcept {
  const std::uint8_t n = fixed_value_sizes[t];
  return n == 0xFF ? not_fixed : n;
}
}  // namespace detail

/// One element of a document: a type, a key and the value's bytes. It points into the document's
/// bytes and is valid as long as they are. Typed getters return `errc::type_mismatch` (offset 0)
/// when the element holds another type; they never throw.
class element {
 public:
  /// An element of no document (type byte 0, empty key). Iterators never yield one.
  constexpr element() noexcept = default;

  /// The type byte.
  bson::type type() const noexcept { return static_cast<bson::type>(*p_); }
  /// The key (a C string in the document, so it never holds NUL).
  std::string_view key() const noexcept {
    return {reinterpret_cast<const char*>(p_ + 1), key_size_};
  }
  /// The value's bytes as stored, after the key's NUL (e.g. 4 bytes for an int32, the whole
  /// length-prefixed string for a string). Empty for null, undefined, min key and max key.
  std::span<const std::uint8_t> raw_value() const noexcept {
    return {p_ + 2 + key_size_, value_size_};
  }
  /// The element's bytes: type byte, key, NUL and value.
  std::span<const std::uint8_t> raw() const noexcept { return {p_, 2 + key_size_ + value_size_}; }

  /// 0x01. Errors: type_mismatch.
  result<double> get_double() const noexcept;
  /// 0x02, without the terminating NUL (may contain NUL). Errors: type_mismatch.
  result<std::string_view> get_string() const noexcept;
  /// 0x03. Errors: type_mismatch.
  result<document_view> get_document() const noexcept;
  /// 0x04, as a document with keys "0", "1", ... Errors: type_mismatch.
  result<document_view> get_array() const noexcept;
  /// 0x05. Errors: type_mismatch.
  result<binary_view> get_binary() const noexcept;
  /// 0x07. Errors: type_mismatch.
  result<object_id> get_object_id() const noexcept;
  /// 0x08. Errors: type_mismatch.
  result<bool> get_bool() const noexcept;
  /// 0x09, milliseconds since the Unix epoch (see `to_sys_time`). Errors: type_mismatch.
  result<std::int64_t> get_date_time() const noexcept;
  /// 0x0B. Errors: type_mismatch.
  result<regex_view> get_regex() const noexcept;
  /// 0x0C. Errors: type_mismatch.
  result<db_pointer_view> get_db_pointer() const noexcept;
  /// 0x0D, the code. Errors: type_mismatch.
  result<std::string_view> get_javascript() const noexcept;
  /// 0x0E. Errors: type_mismatch.
  result<std::string_view> get_symbol() const noexcept;
  /// 0x0F. Errors: type_mismatch.
  result<code_with_scope_view> get_javascript_with_scope() const noexcept;
  /// 0x10. Errors: type_mismatch.
  result<std::int32_t> get_int32() const noexcept;
  /// 0x11. Errors: type_mismatch.
  result<timestamp_value> get_timestamp() const noexcept;
  /// 0x12. Errors: type_mismatch.
  result<std::int64_t> get_int64() const noexcept;
  /// 0x13. Errors: type_mismatch.
  result<decimal128> get_decimal128() const noexcept;

  /// Same type byte, key and value bytes.
  friend bool operator==(const element& a, const element& b) noexcept {
    const auto ra = a.raw(), rb = b.raw();
    return ra.size() == rb.size() && std::memcmp(ra.data(), rb.data(), ra.size()) == 0;
  }

 private:
  friend class document_iterator;
  static constexpr std::uint8_t no_bytes_[2] = {0, 0};

  const std::uint8_t* value() const noexcept { return p_ + 2 + key_size_; }
  // A length-prefixed string value at v: the iterator (or validation) checked its length >= 1.
  static std::string_view string_at(const std::uint8_t* v) noexcept {
    return {reinterpret_cast<const char*>(v + 4), oid::detail::load_le_u32(v) - 1};
  }
  static oid::error mismatch() noexcept { return {errc::type_mismatch, 0}; }

  const std::uint8_t* p_ = no_bytes_;  // the type byte
  std::uint32_t key_size_ = 0;
  std::uint32_t value_size_ = 0;
};

/// A forward iterator over the elements of a `document_view`, in document order. Incrementing never
/// reads past the document's terminator, even over bytes that were not validated (it stops early
/// instead).
class document_iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = element;
  using difference_type = std::ptrdiff_t;
  using pointer = const element*;
  using reference = const element&;

  /// A singular iterator.
  constexpr document_iterator() noexcept = default;
  /// The current element. Precondition: not the end.
  reference operator*() const noexcept { return e_; }
  /// The current element. Precondition: not the end.
  pointer operator->() const noexcept { return &e_; }
  /// Moves to the next element.
  document_iterator& operator++() noexcept {
    load(e_.p_ + 2 + e_.key_size_ + e_.value_size_);
    return *this;
  }
  /// Moves to the next element, returning the previous position.
  document_iterator operator++(int) noexcept {
    document_iterator old = *this;
    ++*this;
    return old;
  }
  /// Same position.
  friend bool operator==(const document_iterator& a, const document_iterator& b) noexcept {
    return a.e_.raw().data() == b.e_.raw().data();
  }

 private:
  friend class document_view;
  document_iterator(const std::uint8_t* p, const std::uint8_t* end) noexcept : end_(end) {
    load(p);
  }
  // Decodes the element at p, or becomes the end iterator when p is the terminator or the bytes
  // there do not form an element that ends before the terminator. Inline (below) for the common
  // types; load_slow() is the general decoder, which the inline path defers to for the rest.
  void load(const std::uint8_t* p) noexcept;
  void load_slow(const std::uint8_t* p) noexcept;

  element e_;
  const std::uint8_t* end_ = nullptr;  // the document's terminating NUL
};

/// A non-owning view of one BSON document (or array). Trivially copyable; valid as long as the
/// bytes it points at. The default view is the empty document.
class document_view {
 public:
  /// A forward iterator over the elements, in document order.
  using iterator = document_iterator;
  /// Same as `iterator`: elements are read-only.
  using const_iterator = document_iterator;

  /// The empty document (5 bytes: length 5, terminator).
  constexpr document_view() noexcept = default;

  /// A view of bytes that are known to be exactly one valid document because this library (or
  /// another trusted encoder) produced them, skipping validation. Bytes shorter than 5 give the
  /// empty document. Use `oid::bson::validate()` for anything else.
  static constexpr document_view unchecked(std::span<const std::uint8_t> bytes) noexcept {
    document_view v;
    if (bytes.size() >= 5) {
      v.data_ = bytes.data();
      v.size_ = bytes.size();
    }
    return v;
  }

  /// The first byte of the document (its length prefix).
  constexpr const std::uint8_t* data() const noexcept { return data_; }
  /// The document's size in bytes, as its length prefix says (at least 5).
  constexpr std::size_t size() const noexcept { return size_; }
  /// The document's bytes.
  constexpr std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }
  /// True when the document has no elements.
  constexpr bool empty() const noexcept { return size_ <= 5; }

  /// The first element.
  iterator begin() const noexcept { return document_iterator(data_ + 4, data_ + size_ - 1); }
  /// Past the last element.
  iterator end() const noexcept { return document_iterator(data_ + size_ - 1, data_ + size_ - 1); }

  /// The first element with this key. Errors: key_not_found (offset 0). O(number of elements).
  result<element> find(std::string_view key) const noexcept;
  /// True when some element has this key.
  bool contains(std::string_view key) const noexcept { return find(key).has_value(); }

  /// Byte-for-byte equality (so {a:1, b:2} != {b:2, a:1}, and 1 != 1.0).
  friend bool operator==(const document_view& a, const document_view& b) noexcept {
    return a.size_ == b.size_ && std::memcmp(a.data_, b.data_, a.size_) == 0;
  }

 private:
  const std::uint8_t* data_ = detail::empty_document_bytes;
  std::size_t size_ = 5;
};

/// A deprecated code-with-scope value: JavaScript code and the document of its variables.
struct code_with_scope_view {
  std::string_view code;  ///< the code, without its NUL
  document_view scope;    ///< the variables
};

// ---- The read path, inline ---------------------------------------------------------------------
// Iteration and the typed getters run once per value, so they are defined here: a caller that
// switches on type() then calls the matching getter compiles to a plain load, with no call, no
// second type test and no result<T> in memory. Each getter reads only inside raw_value(), whose
// size the iterator checked against the document's end.

// always_inline: GCC judges this too big to inline into a loop and calls it, which keeps the
// iterator in memory; inlined, the walk keeps it in registers (DriverBench deep_bson read +17%).
[[gnu::always_inline]] inline void document_iterator::load(const std::uint8_t* p) noexcept {
  if (p >= end_ || *p == 0) {  // the terminator (or a view's end()): become end()
    e_ = element{};
    e_.p_ = end_;
    return;
  }
  const std::uint8_t* nul = detail::find_nul(p + 1, end_);
  if (nul == end_) [[unlikely]] {
    load_slow(p);
    return;
  }
  const std::uint8_t* v = nul + 1;
  const auto avail = static_cast<std::size_t>(end_ - v);
  // The int32 prefix of the length-prefixed types, or -1 (a wrong length) when it does not fit.
  const std::int64_t len = avail >= 4 ? static_cast<std::int32_t>(oid::detail::load_le_u32(v)) : -1;
  std::size_t n = detail::not_fixed;  // not decoded here
  switch (static_cast<bson::type>(*p)) {
  case type::string:
  case type::javascript:
  case type::symbol:
    if (len >= 1) n = 4 + static_cast<std::size_t>(len);
    break;
  case type::document:
  case type::array:
  case type::javascript_with_scope:
    if (len >= 5) n = static_cast<std::size_t>(len);
    break;
  case type::binary:
    if (len >= 0) n = 5 + static_cast<std::size_t>(len);
    break;
  default:  // the fixed sizes; not_fixed for regex and DBPointer (rare) and unknown type bytes
    n = detail::fixed_value_size(*p);
    break;
  }
  // Anything not decoded above, a wrong length or a value running past the terminator: the
  // general decoder decides (an unknown type or bad bytes end the iteration there).
  if (n > avail) [[unlikely]] {
    load_slow(p);
    return;
  }
  e_.p_ = p;
  e_.key_size_ = static_cast<std::uint32_t>(nul - (p + 1));
  e_.value_size_ = static_cast<std::uint32_t>(n);
}

inline result<double> element::get_double() const noexcept {
  if (type() != bson::type::double_) return mismatch();
  return std::bit_cast<double>(oid::detail::load_le_u64(value()));
}
inline result<std::string_view> element::get_string() const noexcept {
  if (type() != bson::type::string) return mismatch();
  return string_at(value());
}
inline result<document_view> element::get_document() const noexcept {
  if (type() != bson::type::document) return mismatch();
  return document_view::unchecked(raw_value());
}
inline result<document_view> element::get_array() const noexcept {
  if (type() != bson::type::array) return mismatch();
  return document_view::unchecked(raw_value());
}
inline result<binary_view> element::get_binary() const noexcept {
  if (type() != bson::type::binary) return mismatch();
  const std::uint8_t* v = value();
  binary_view b{v[4], {v + 5, value_size_ - 5}};
  // The old subtype repeats the length inside the payload; validation checked it matches.
  if (b.subtype == binary_subtype::old_binary && b.bytes.size() >= 4) b.bytes = b.bytes.subspan(4);
  return b;
}
inline result<object_id> element::get_object_id() const noexcept {
  if (type() != bson::type::object_id) return mismatch();
  object_id::bytes_type b;
  std::memcpy(b.data(), value(), b.size());
  return object_id(b);
}
inline result<bool> element::get_bool() const noexcept {
  if (type() != bson::type::boolean) return mismatch();
  return *value() != 0;
}
inline result<std::int64_t> element::get_date_time() const noexcept {
  if (type() != bson::type::date_time) return mismatch();
  return static_cast<std::int64_t>(oid::detail::load_le_u64(value()));
}
inline result<std::string_view> element::get_javascript() const noexcept {
  if (type() != bson::type::javascript) return mismatch();
  return string_at(value());
}
inline result<std::string_view> element::get_symbol() const noexcept {
  if (type() != bson::type::symbol) return mismatch();
  return string_at(value());
}
inline result<code_with_scope_view> element::get_javascript_with_scope() const noexcept {
  if (type() != bson::type::javascript_with_scope) return mismatch();
  const auto v = raw_value();
  const std::string_view code = string_at(v.data() + 4);
  const std::size_t scope_at = 4 + 4 + code.size() + 1;
  return code_with_scope_view{code, document_view::unchecked(v.subspan(scope_at))};
}
inline result<std::int32_t> element::get_int32() const noexcept {
  if (type() != bson::type::int32) return mismatch();
  return static_cast<std::int32_t>(oid::detail::load_le_u32(value()));
}
inline result<timestamp_value> element::get_timestamp() const noexcept {
  if (type() != bson::type::timestamp) return mismatch();
  const std::uint64_t u = oid::detail::load_le_u64(value());
  return timestamp_value{static_cast<std::uint32_t>(u >> 32), static_cast<std::uint32_t>(u)};
}
inline result<std::int64_t> element::get_int64() const noexcept {
  if (type() != bson::type::int64) return mismatch();
  return static_cast<std::int64_t>(oid::detail::load_le_u64(value()));
}
inline result<decimal128> element::get_decimal128() const noexcept {
  if (type() != bson::type::decimal128) return mismatch();
  return decimal128{oid::detail::load_le_u64(value()), oid::detail::load_le_u64(value() + 8)};
}

}  // namespace oid::bson
