#include "md5.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace oid::detail {
namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int c) { return x << c | x >> (32 - c); }

constexpr int shifts[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                            5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                            4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                            6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

// K[i] = floor(2^32 * |sin(i + 1)|), as RFC 1321 defines the table.
const auto sine_table = [] {
  std::array<std::uint32_t, 64> k{};
  for (int i = 0; i < 64; ++i) {
    k[i] = static_cast<std::uint32_t>(std::floor(std::fabs(std::sin(i + 1.0)) * 4294967296.0));
  }
  return k;
}();

}  // namespace

std::array<std::uint8_t, 16> md5(std::string_view data) noexcept {
  std::uint32_t a0 = 0x67452301, b0 = 0xefcdab89, c0 = 0x98badcfe, d0 = 0x10325476;

  // Pad: 0x80, zeros to 56 mod 64, then the bit length little-endian.
  std::vector<std::uint8_t> msg(data.begin(), data.end());
  const std::uint64_t bit_len = static_cast<std::uint64_t>(data.size()) * 8;
  msg.push_back(0x80);
  while (msg.size() % 64 != 56) msg.push_back(0);
  for (int i = 0; i < 8; ++i) msg.push_back(static_cast<std::uint8_t>(bit_len >> (8 * i)));

  for (std::size_t chunk = 0; chunk < msg.size(); chunk += 64) {
    std::uint32_t m[16];
    for (int i = 0; i < 16; ++i) {
      const std::uint8_t* p = &msg[chunk + 4 * i];
      m[i] = std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
             std::uint32_t{p[3]} << 24;
    }
    std::uint32_t a = a0, b = b0, c = c0, d = d0;
    for (int i = 0; i < 64; ++i) {
      std::uint32_t f;
      int g;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      f += a + sine_table[i] + m[g];
      a = d;
      d = c;
      c = b;
      b += rotl(f, shifts[i]);
    }
    a0 += a;
    b0 += b;
    c0 += c;
    d0 += d;
  }

  std::array<std::uint8_t, 16> out{};
  const std::uint32_t words[4] = {a0, b0, c0, d0};
  for (int w = 0; w < 4; ++w) {
    for (int i = 0; i < 4; ++i) out[4 * w + i] = static_cast<std::uint8_t>(words[w] >> (8 * i));
  }
  return out;
}

}  // namespace oid::detail
