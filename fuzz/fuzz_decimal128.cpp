// Properties of decimal128 text conversion.
// 1. Any text either is rejected (invalid_decimal128, offset inside the text) or parses to a
//    canonical encoding whose canonical string parses back to the same bits and is a fixed point.
// 2. Any 16 bytes (the first 16 of the input) give a string that parses, and parsing it yields
//    exactly the canonical form of those bytes: NaN loses sign and payload, Infinity loses its
//    trailing bits, a coefficient above 10^34 - 1 (or the "11" form) becomes zero with the same
//    sign and exponent. Everything else keeps every bit.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oid/bson/decimal128.hpp>
#include <string>
#include <string_view>

namespace {

using oid::bson::decimal128;

constexpr std::uint64_t sign_bit = 1ULL << 63;

// The specification's reading of any 16 bytes, written independently of the library.
decimal128 canonical_form(decimal128 d) {
  const unsigned combination = d.high >> 58 & 0x1F;
  if (combination == 0x1F) return {0, 0x7C00000000000000ULL};
  if (combination == 0x1E) return {0, (d.high & sign_bit) | 0x7800000000000000ULL};
  if ((combination >> 3) == 3) {
    const std::uint64_t exponent = d.high >> 47 & 0x3FFF;
    return {0, (d.high & sign_bit) | exponent << 49};
  }
  // 10^34 - 1 is 0x1ED09BEAD87C0'378D8E63FFFFFFFF.
  const std::uint64_t top = d.high & ((1ULL << 49) - 1);
  const bool too_big =
      top > 0x1ED09BEAD87C0ULL || (top == 0x1ED09BEAD87C0ULL && d.low > 0x378D8E63FFFFFFFFULL);
  if (too_big) return {0, d.high & ~((1ULL << 49) - 1)};
  return d;
}

void check_string_round_trip(const decimal128& d) {
  const std::string text = d.to_string();
  if (text.empty() || text.size() > decimal128::max_string_length) std::abort();
  char buf[decimal128::max_string_length];
  const auto r = d.to_chars(buf, buf + sizeof buf);
  if (r.ec != std::errc{} || std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)) != text) {
    std::abort();
  }
  const auto back = decimal128::from_string(text);
  if (!back) std::abort();
  if (*back != canonical_form(d)) std::abort();
  if (back->to_string() != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = decimal128::from_string(text);
  if (!parsed) {
    if (parsed.error().code != oid::errc::invalid_decimal128) std::abort();
    if (parsed.error().offset > size) std::abort();
  } else {
    if (canonical_form(*parsed) != *parsed) std::abort();  // the parser only makes canonical bits
    check_string_round_trip(*parsed);
  }

  if (size >= 16) {
    decimal128 d;
    std::memcpy(&d.low, data, 8);  // native order is fine: every bit pattern is a valid input
    std::memcpy(&d.high, data + 8, 8);
    check_string_round_trip(d);
  }
  return 0;
}
