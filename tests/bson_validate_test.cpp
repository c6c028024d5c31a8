#include <gtest/gtest.h>

#include <cstdint>
#include <oid/bson/validate.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::testing::HasErrorAt;

std::vector<std::uint8_t> hex_bytes(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

TEST(BsonValidateTest, AcceptsTheEmptyDocument) {
  const auto bytes = hex_bytes("0500000000");
  const auto v = oid::bson::validate(bytes);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->size(), 5u);
  EXPECT_EQ(v->data(), bytes.data());
}

}  // namespace
