#include <gtest/gtest.h>

#include <oid/error.hpp>
#include <oid/result.hpp>
#include <set>
#include <string>

namespace {

constexpr int first_code = static_cast<int>(oid::errc::invalid_length);
constexpr int last_code = static_cast<int>(oid::errc::invalid_read_preference);

TEST(ErrorTest, CategoryIsNamedOid) { EXPECT_STREQ(oid::error_category().name(), "oid"); }

TEST(ErrorTest, EveryCodeHasItsOwnMessage) {
  std::set<std::string> seen;
  for (int v = first_code; v <= last_code; ++v) {
    SCOPED_TRACE(v);
    const std::string m = oid::make_error_code(static_cast<oid::errc>(v)).message();
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.find("unknown oid error"), std::string::npos) << m;
    EXPECT_TRUE(seen.insert(m).second) << "duplicate message: " << m;
  }
  EXPECT_NE(oid::make_error_code(static_cast<oid::errc>(last_code + 1))
                .message()
                .find("unknown oid error"),
            std::string::npos);
}

TEST(ErrorTest, ErrcConvertsToErrorCode) {
  const std::error_code ec = oid::errc::invalid_hex;
  EXPECT_EQ(ec.category(), oid::error_category());
  EXPECT_EQ(ec.value(), static_cast<int>(oid::errc::invalid_hex));
}

TEST(ErrorTest, ResultValueThrowsExceptionWithCodeAndOffset) {
  const oid::result<int> r = oid::error{oid::errc::truncated, 17};
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.value_or(5), 5);
  try {
    (void)r.value();
    FAIL() << "no exception";
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code_enum(), oid::errc::truncated);
    EXPECT_EQ(e.code(), std::error_code(oid::errc::truncated));
    EXPECT_EQ(e.offset(), 17u);
  }
}

TEST(ErrorTest, ResultHoldsValue) {
  oid::result<std::string> r = std::string("abc");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "abc");
  EXPECT_EQ(r->size(), 3u);
  EXPECT_EQ(std::move(r).value(), "abc");
}

TEST(ErrorTest, VoidResult) {
  const oid::result<void> ok;
  EXPECT_TRUE(ok.has_value());
  EXPECT_NO_THROW(ok.value());
  const oid::result<void> bad = oid::error{oid::errc::io_error, 3};
  EXPECT_FALSE(bad);
  EXPECT_EQ(bad.error().offset, 3u);
  EXPECT_THROW(bad.value(), oid::exception);
}

}  // namespace
