// oid/detail/endian.hpp: fixed-width integer loads and stores in a given byte order.
//
// Not public API: installed only because public headers with inline code (oid/bson/view.hpp)
// use it. Names and signatures may change in any release.
//
// BSON, the wire protocol and Extended JSON's scanners read little-endian integers; ObjectIds and
// the order of their bytes are big-endian. Each function copies through memcpy (never a pointer
// cast), so any alignment is fine and no type is punned, and swaps the bytes when the host's order
// differs: g++ and clang compile each to one load or store (plus a `bswap` where needed).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace oid::detail {

/// The value `v` with its bytes in order `to` when they are in the host's order, and back.
template <std::endian to, class U>
inline U host_to(U v) noexcept {
  if constexpr (std::endian::native == to || sizeof(U) == 1) {
    return v;
  } else if constexpr (sizeof(U) == 2) {
    return __builtin_bswap16(v);
  } else if constexpr (sizeof(U) == 4) {
    return __builtin_bswap32(v);
  } else {
    static_assert(sizeof(U) == 8, "8, 16, 32 or 64-bit unsigned integers only");
    return __builtin_bswap64(v);
  }
}

/// The unsigned integer whose bytes in order `order` start at `p` (any alignment).
template <class U, std::endian order>
inline U load(const void* p) noexcept {
  U v;
  std::memcpy(&v, p, sizeof v);
  return host_to<order>(v);
}

/// Writes `v` at `p` (any alignment) with its bytes in order `order`.
template <std::endian order, class U>
inline void store(void* p, U v) noexcept {
  v = host_to<order>(v);
  std::memcpy(p, &v, sizeof v);
}

inline std::uint32_t load_le_u32(const void* p) noexcept {
  return load<std::uint32_t, std::endian::little>(p);
}
inline std::int32_t load_le_i32(const void* p) noexcept {
  return static_cast<std::int32_t>(load_le_u32(p));
}
inline std::uint64_t load_le_u64(const void* p) noexcept {
  return load<std::uint64_t, std::endian::little>(p);
}
inline void store_le_u32(void* p, std::uint32_t v) noexcept { store<std::endian::little>(p, v); }
inline void store_le_u64(void* p, std::uint64_t v) noexcept { store<std::endian::little>(p, v); }

inline std::uint32_t load_be_u32(const void* p) noexcept {
  return load<std::uint32_t, std::endian::big>(p);
}
inline std::uint64_t load_be_u64(const void* p) noexcept {
  return load<std::uint64_t, std::endian::big>(p);
}
inline void store_be_u32(void* p, std::uint32_t v) noexcept { store<std::endian::big>(p, v); }
inline void store_be_u64(void* p, std::uint64_t v) noexcept { store<std::endian::big>(p, v); }

}  // namespace oid::detail
