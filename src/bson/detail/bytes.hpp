// Little-endian loads and stores for the BSON code: assembled with shifts and memcpy, never by
// casting pointers, so they are correct on any alignment and any host byte order.
#pragma once

#include <cstdint>
#include <cstring>

namespace oid::bson::detail {

inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
inline std::int32_t load_i32(const std::uint8_t* p) noexcept {
  return static_cast<std::int32_t>(load_u32(p));
}
inline std::uint64_t load_u64(const std::uint8_t* p) noexcept {
  return std::uint64_t{load_u32(p)} | std::uint64_t{load_u32(p + 4)} << 32;
}
inline void store_u32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}
inline void store_u64(std::uint8_t* p, std::uint64_t v) noexcept {
  store_u32(p, static_cast<std::uint32_t>(v));
  store_u32(p + 4, static_cast<std::uint32_t>(v >> 32));
}

// The size of the value of type byte `t` that starts at `v`, reading nothing at or past `end`;
// SIZE_MAX when the type is unknown or the value's own lengths do not fit before `end`. Used by
// iteration (where validation has already guaranteed success) and as validation's first step.
inline constexpr std::size_t bad_size = static_cast<std::size_t>(-1);

std::size_t value_size(std::uint8_t t, const std::uint8_t* v, const std::uint8_t* end) noexcept;

}  // namespace oid::bson::detail
