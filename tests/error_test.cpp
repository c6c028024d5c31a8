#include <gtest/gtest.h>

#include <oid/error.hpp>
#include <oid/result.hpp>
#include <set>
#include <string>

namespace {

// Every code: from the first up to errc::end_marker, which the enum keeps one past the last.
constexpr int first_code = static_cast<int>(oid::errc::invalid_length);
constexpr int end_code = static_cast<int>(oid::errc::end_marker);

TEST(ErrorTest, CategoryIsNamedOid) { EXPECT_STREQ(oid::error_category().name(), "oid"); }

TEST(ErrorTest, ADefaultErrorHoldsNoCodeInOidsCategory) {
  // Not std::error_code{}'s system category: getting that one is a call into libstdc++, paid by
  // every builder append (which makes an error to fill).
  const oid::error e;
  EXPECT_FALSE(e.code);
  EXPECT_EQ(&e.code.category(), &oid::error_category());
  EXPECT_EQ(oid::errc_of(e.code), oid::errc{});
}

TEST(ErrorTest, EveryCodeHasItsOwnMessage) {
  std::set<std::string> seen;
  for (int v = first_code; v < end_code; ++v) {
    SCOPED_TRACE(v);
    const std::string m = oid::make_error_code(static_cast<oid::errc>(v)).message();
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.find("unknown oid error"), std::string::npos) << m;
    EXPECT_TRUE(seen.insert(m).second) << "duplicate message: " << m;
  }
  EXPECT_NE(oid::make_error_code(oid::errc::end_marker).message().find("unknown oid error"),
            std::string::npos);
}

TEST(ErrorTest, ErrcConvertsToErrorCode) {
  const std::error_code ec = oid::errc::invalid_hex;
  EXPECT_EQ(ec.category(), oid::error_category());
  EXPECT_EQ(ec.value(), static_cast<int>(oid::errc::invalid_hex));
}

TEST(ErrorTest, ErrcOfReadsOnlyThisModulesCodes) {
  EXPECT_EQ(oid::errc_of(oid::errc::truncated), oid::errc::truncated);
  // Another category's code with the same value is not an oid::errc.
  const std::error_code other(static_cast<int>(oid::errc::truncated), std::generic_category());
  EXPECT_EQ(oid::errc_of(other), oid::errc{});
  EXPECT_NE(other, oid::errc::truncated);
}

TEST(ErrorTest, AnErrorCarriesAnotherModulesCode) {
  // What the client's codes do (oid::mongo::errc): any category rides in an oid::error.
  const oid::error e{std::make_error_code(std::errc::timed_out), 4};
  EXPECT_EQ(e.code, std::errc::timed_out);
  EXPECT_EQ(e.message(), std::make_error_code(std::errc::timed_out).message());
  try {
    oid::throw_exception(e);
  } catch (const oid::exception& x) {
    EXPECT_EQ(x.code(), std::errc::timed_out);
    EXPECT_EQ(x.offset(), 4u);
  }
}

TEST(ErrorTest, ResultValueThrowsExceptionWithCodeAndOffset) {
  const oid::result<int> r = oid::error{oid::errc::truncated, 17};
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.value_or(5), 5);
  try {
    (void)r.value();
    FAIL() << "no exception";
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code(), oid::errc::truncated);
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

// A result with an error type of its own: value() throws what that type's throw_exception throws.
namespace custom {
struct parse_error {
  int line = 0;
};
struct parse_exception {
  int line;
};
[[noreturn]] void throw_exception(const parse_error& e) { throw parse_exception{e.line}; }
}  // namespace custom

namespace {

TEST(ErrorTest, ResultWithItsOwnErrorTypeThrowsThroughItsThrowException) {
  const oid::result<int, custom::parse_error> r = custom::parse_error{7};
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 7);
  try {
    (void)r.value();
    FAIL() << "no exception";
  } catch (const custom::parse_exception& e) {
    EXPECT_EQ(e.line, 7);
  }
  const oid::result<void, custom::parse_error> v = custom::parse_error{8};
  EXPECT_THROW(v.value(), custom::parse_exception);
  EXPECT_NO_THROW((oid::result<void, custom::parse_error>().value()));
}

}  // namespace
