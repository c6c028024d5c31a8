// Private: MD5 (RFC 1321), used only to compute the legacy ObjectId machine id from the host name.
// Written here so that the ObjectId layer depends on nothing but the standard library and the OS;
// it is not used for anything that needs a secure hash.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace oid::detail {

/// The 16-byte MD5 digest of `data`.
std::array<std::uint8_t, 16> md5(std::string_view data) noexcept;

}  // namespace oid::detail
