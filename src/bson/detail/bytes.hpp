// Private helpers of the BSON code: its little-endian loads and stores (BSON's integers are
// little-endian; the one implementation is oid/detail/endian.hpp) and the size of a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/detail/endian.hpp>

namespace oid::bson::detail {

using oid::detail::load_le_i32;
using oid::detail::load_le_u32;
using oid::detail::load_le_u64;
using oid::detail::store_le_u32;
using oid::detail::store_le_u64;

// The size of the value of type byte `t` that starts at `v`, reading nothing at or past `end`;
// SIZE_MAX when the type is unknown or the value's own lengths do not fit before `end`. Used by
// iteration (where validation has already guaranteed success) and as validation's first step.
inline constexpr std::size_t bad_size = static_cast<std::size_t>(-1);

std::size_t value_size(std::uint8_t t, const std::uint8_t* v, const std::uint8_t* end) noexcept;

}  // namespace oid::bson::detail
