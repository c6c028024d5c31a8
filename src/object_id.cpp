#include <cstring>
#include <oid/detail/endian.hpp>
#include <oid/objectid/object_id.hpp>
#include <ostream>

#include "detail/base64.hpp"
#include "detail/hex.hpp"

namespace oid {

result<object_id> object_id::from_hex(std::string_view hex) noexcept {
  if (hex.size() != hex_size) return error{errc::invalid_length, 0};
  bytes_type b;
  const int bad = detail::decode_hex12(hex.data(), b.data());
  if (bad >= 0) return error{errc::invalid_hex, static_cast<std::size_t>(bad)};
  return object_id(b);
}

result<object_id> object_id::from_base64(std::string_view b64) noexcept {
  if (b64.size() != base64_size) return error{errc::invalid_length, 0};
  // 16 characters are 4 groups of 4 characters (24 bits, 3 bytes) each: no padding, no leftover.
  // A bad character has the value -1; OR-ing every value together finds out whether there was
  // one with a single test at the end, instead of a branch per character. (decode_base64_group
  // does the same per group; this loop, with one OR across all 16, measured ~25% faster.)
  int bad = 0;
  std::uint32_t group[4];
  for (std::size_t g = 0; g < 4; ++g) {
    const char* c = b64.data() + 4 * g;
    const int v0 = detail::base64_value(c[0]), v1 = detail::base64_value(c[1]);
    const int v2 = detail::base64_value(c[2]), v3 = detail::base64_value(c[3]);
    bad |= v0 | v1 | v2 | v3;
    // Unsigned shifts: a -1 here is garbage that `bad` throws away, never undefined behaviour.
    const auto u = [](int v) { return static_cast<std::uint32_t>(v); };
    group[g] = (u(v0) << 18 | u(v1) << 12 | u(v2) << 6 | u(v3)) & 0xFFFFFF;
  }
  if (bad < 0) {  // rare: find where, for the error report
    for (std::size_t i = 0; i < base64_size; ++i) {
      if (detail::base64_value(b64[i]) < 0) return error{errc::invalid_base64, i};
    }
  }
  // The 12 bytes as a big-endian 8-byte word and 4-byte word, stored with two byte swaps rather
  // than twelve single-byte stores.
  const std::uint64_t head =
      std::uint64_t{group[0]} << 40 | std::uint64_t{group[1]} << 16 | group[2] >> 8;
  const std::uint32_t tail = (group[2] & 0xFF) << 24 | group[3];
  bytes_type b;
  detail::store_be_u64(b.data(), head);
  detail::store_be_u32(b.data() + 8, tail);
  return object_id(b);
}

result<object_id> object_id::parse(std::string_view text) noexcept {
  if (text.size() == base64_size) return from_base64(text);
  return from_hex(text);
}

result<object_id> object_id::from_bytes(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() != size) return error{errc::invalid_length, 0};
  bytes_type b;
  std::memcpy(b.data(), bytes.data(), size);
  return object_id(b);
}

namespace {
bool in_id_range(std::chrono::sys_seconds t) noexcept {
  const auto s = t.time_since_epoch().count();
  return s >= 0 && s <= 0xFFFFFFFFll;
}
}  // namespace

result<object_id> object_id::min_for_time(std::chrono::sys_seconds t) noexcept {
  if (!in_id_range(t)) return error{errc::time_out_of_range, 0};
  return min_for_timestamp(static_cast<std::uint32_t>(t.time_since_epoch().count()));
}

result<object_id> object_id::max_for_time(std::chrono::sys_seconds t) noexcept {
  if (!in_id_range(t)) return error{errc::time_out_of_range, 0};
  return max_for_timestamp(static_cast<std::uint32_t>(t.time_since_epoch().count()));
}

char* object_id::to_hex(char* out) const noexcept {
  detail::encode_hex12(bytes_.data(), out);
  return out + hex_size;
}

std::string object_id::to_hex() const {
  std::string s(hex_size, '\0');
  to_hex(s.data());
  return s;
}

char* object_id::to_base64(char* out) const noexcept {
  return detail::encode_base64(bytes_.data(), size, out);
}

std::string object_id::to_base64() const {
  std::string s(base64_size, '\0');
  to_base64(s.data());
  return s;
}

std::ostream& operator<<(std::ostream& os, const object_id& id) {
  char buf[object_id::hex_size];
  return os.write(buf, id.to_hex(buf) - buf);
}

}  // namespace oid
