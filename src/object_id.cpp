#include <cstring>
#include <oid/object_id.hpp>
#include <ostream>

#include "detail/hex.hpp"

namespace oid {

result<object_id> object_id::from_hex(std::string_view hex) noexcept {
  if (hex.size() != hex_size) return error{errc::invalid_length, 0};
  bytes_type b;
  for (std::size_t i = 0; i < size; ++i) {
    const int hi = detail::hex_value(hex[2 * i]);
    const int lo = detail::hex_value(hex[2 * i + 1]);
    if ((hi | lo) < 0) return error{errc::invalid_hex, 2 * i + (hi < 0 ? 0 : 1)};
    b[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return object_id(b);
}

result<object_id> object_id::from_base64(std::string_view b64) noexcept {
  if (b64.size() != base64_size) return error{errc::invalid_length, 0};
  bytes_type b;
  // 16 characters are 4 groups of 4 characters (24 bits, 3 bytes) each: no padding, no leftover.
  for (std::size_t g = 0; g < 4; ++g) {
    std::uint32_t bits = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const int v = detail::base64_value(b64[4 * g + j]);
      if (v < 0) return error{errc::invalid_base64, 4 * g + j};
      bits = bits << 6 | static_cast<std::uint32_t>(v);
    }
    b[3 * g] = static_cast<std::uint8_t>(bits >> 16);
    b[3 * g + 1] = static_cast<std::uint8_t>(bits >> 8);
    b[3 * g + 2] = static_cast<std::uint8_t>(bits);
  }
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
  for (std::size_t i = 0; i < size; ++i) {
    std::memcpy(out + 2 * i, &detail::hex_pairs[2 * std::size_t{bytes_[i]}], 2);
  }
  return out + hex_size;
}

std::string object_id::to_hex() const {
  std::string s(hex_size, '\0');
  to_hex(s.data());
  return s;
}

char* object_id::to_base64(char* out) const noexcept {
  for (std::size_t g = 0; g < 4; ++g) {
    const std::uint32_t bits = std::uint32_t{bytes_[3 * g]} << 16 |
                               std::uint32_t{bytes_[3 * g + 1]} << 8 | bytes_[3 * g + 2];
    out[4 * g] = detail::base64_digits[bits >> 18];
    out[4 * g + 1] = detail::base64_digits[(bits >> 12) & 63];
    out[4 * g + 2] = detail::base64_digits[(bits >> 6) & 63];
    out[4 * g + 3] = detail::base64_digits[bits & 63];
  }
  return out + base64_size;
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
