// oid/objectid/object_id.hpp: `oid::object_id`, MongoDB's 12-byte ObjectId as a regular value type.
//
// Layout (MongoDB ObjectId specification): bytes 0-3 are Unix seconds, big-endian and unsigned (ids
// run until 2106-02-07T06:28:15Z); bytes 4-8 a random value chosen once per process; bytes 9-11 a
// big-endian counter. Because the time comes first, byte order is creation order, and the smallest
// and largest ids of a second bound a range query on `_id`.
//
// As the specification asks, the class has no accessors for the random value or the counter: read
// them with `oid::inspect()` (oid/objectid/inspect.hpp). Making ids is the job of
// oid/objectid/generator.hpp.
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <oid/detail/endian.hpp>
#include <oid/result.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace oid {

/// A MongoDB ObjectId: 12 bytes, trivially copyable, ordered by its bytes (so by creation time).
///
///     auto id = oid::object_id::from_hex("4df2dcec2cdcd20936a8b817");
///     if (id) std::cout << id->time() << ' ' << id->to_base64() << '\n';  // TfLc7Czc0gk2qLgX
class object_id {
 public:
  using bytes_type = std::array<std::uint8_t, 12>;
  static constexpr std::size_t size = 12;         ///< bytes in an ObjectId
  static constexpr std::size_t hex_size = 24;     ///< characters in its hex form
  static constexpr std::size_t base64_size = 16;  ///< characters in its base64 form

  /// The all-zero id.
  constexpr object_id() noexcept = default;
  /// The id with exactly these bytes.
  constexpr explicit object_id(const bytes_type& bytes) noexcept : bytes_(bytes) {}
  /// Parses 24 hex characters; throws `oid::exception` (invalid_length, invalid_hex) otherwise.
  explicit object_id(std::string_view hex) : object_id(from_hex(hex).value()) {}

  /// Parses exactly 24 hex digits, either case. Errors: `invalid_length` (offset 0) or
  /// `invalid_hex` (offset of the first bad character). Never throws, never allocates.
  static result<object_id> from_hex(std::string_view hex) noexcept;
  /// Parses exactly 16 characters of RFC 4648 standard base64 (A-Z a-z 0-9 + /). Twelve bytes fill
  /// four groups exactly, so padding never appears and `=` is an error. Errors: `invalid_length`,
  /// `invalid_base64` (offset of the bad character).
  static result<object_id> from_base64(std::string_view b64) noexcept;
  /// Accepts either text form, told apart by length (24: hex, 16: base64). Errors as above.
  static result<object_id> parse(std::string_view text) noexcept;
  /// Copies exactly 12 bytes. Errors: `invalid_length` when `bytes.size() != 12`.
  static result<object_id> from_bytes(std::span<const std::uint8_t> bytes) noexcept;

  /// The smallest id with timestamp `t` (zeros after the time): a `$gte` bound. Errors:
  /// `time_out_of_range` before 1970-01-01T00:00:00Z or after 2106-02-07T06:28:15Z.
  static result<object_id> min_for_time(std::chrono::sys_seconds t) noexcept;
  /// The largest id with timestamp `t` (0xFF after the time): an inclusive upper bound. Errors as
  /// `min_for_time`. For a half-open range [t1, t2) use `$gte min(t1)` and `$lt min(t2)`.
  static result<object_id> max_for_time(std::chrono::sys_seconds t) noexcept;
  /// `min_for_time` for a raw unsigned timestamp, which is always in range.
  static constexpr object_id min_for_timestamp(std::uint32_t t) noexcept {
    bytes_type b{};
    store_timestamp(b, t);
    return object_id(b);
  }
  /// `max_for_timestamp` for a raw unsigned timestamp, which is always in range.
  static constexpr object_id max_for_timestamp(std::uint32_t t) noexcept {
    bytes_type b;
    b.fill(0xFF);
    store_timestamp(b, t);
    return object_id(b);
  }

  /// The 12 bytes.
  constexpr const bytes_type& bytes() const noexcept { return bytes_; }
  /// Seconds since the Unix epoch: bytes 0-3, big-endian, unsigned.
  constexpr std::uint32_t timestamp() const noexcept {
    return std::uint32_t{bytes_[0]} << 24 | std::uint32_t{bytes_[1]} << 16 |
           std::uint32_t{bytes_[2]} << 8 | std::uint32_t{bytes_[3]};
  }
  /// The creation time, to the second.
  constexpr std::chrono::sys_seconds time() const noexcept {
    return std::chrono::sys_seconds{std::chrono::seconds{timestamp()}};
  }

  /// 24 lowercase hex characters.
  std::string to_hex() const;
  /// Writes 24 lowercase hex characters at `out` (no terminator) and returns `out + 24`.
  char* to_hex(char* out) const noexcept;
  /// 16 characters of standard base64.
  std::string to_base64() const;
  /// Writes 16 base64 characters at `out` (no terminator) and returns `out + 16`.
  char* to_base64(char* out) const noexcept;

  /// Equal bytes.
  friend constexpr bool operator==(const object_id& a, const object_id& b) noexcept {
    if (std::is_constant_evaluated()) return a.bytes_ == b.bytes_;
    // One 8-byte and one 4-byte word each, combined without a branch.
    std::uint64_t a0, b0;
    std::uint32_t a1, b1;
    std::memcpy(&a0, a.bytes_.data(), 8);
    std::memcpy(&b0, b.bytes_.data(), 8);
    std::memcpy(&a1, a.bytes_.data() + 8, 4);
    std::memcpy(&b1, b.bytes_.data() + 8, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  /// Byte order (memcmp order), so creation order to the second.
  friend constexpr std::strong_ordering operator<=>(const object_id& a,
                                                    const object_id& b) noexcept {
    if (std::is_constant_evaluated()) return a.bytes_ <=> b.bytes_;
    // Two big-endian words compare like the 12 bytes do, with two comparisons instead of a loop
    // (each load is one load and one byte swap).
    const auto* pa = a.bytes_.data();
    const auto* pb = b.bytes_.data();
    if (const auto c = detail::load_be_u64(pa) <=> detail::load_be_u64(pb); c != 0) return c;
    return detail::load_be_u32(pa + 8) <=> detail::load_be_u32(pb + 8);
  }

 private:
  static constexpr void store_timestamp(bytes_type& b, std::uint32_t t) noexcept {
    b[0] = static_cast<std::uint8_t>(t >> 24);
    b[1] = static_cast<std::uint8_t>(t >> 16);
    b[2] = static_cast<std::uint8_t>(t >> 8);
    b[3] = static_cast<std::uint8_t>(t);
  }

  bytes_type bytes_{};
};

static_assert(sizeof(object_id) == 12);

/// Writes the 24-character hex form.
std::ostream& operator<<(std::ostream& os, const object_id& id);

}  // namespace oid

/// Hashes the 12 bytes (all of them carry entropy, so a cheap mix is enough).
template <>
struct std::hash<oid::object_id> {
  std::size_t operator()(const oid::object_id& id) const noexcept {
    std::uint64_t a;
    std::uint32_t b;
    std::memcpy(&a, id.bytes().data(), 8);
    std::memcpy(&b, id.bytes().data() + 8, 4);
    std::uint64_t h = (a ^ (std::uint64_t{b} * 0x9E3779B97F4A7C15ull)) * 0xFF51AFD7ED558CCDull;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};
