#include <gtest/gtest.h>

#include <oid/mongo/secret.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace {

using oid::mongo::secret;

// A type with an operator<< for it, detected without calling it.
template <class T, class = void>
struct streamable : std::false_type {};
template <class T>
struct streamable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<T>())>>
    : std::true_type {};

TEST(SecretTest, HoldsItsBytes) {
  const secret s(std::string_view("pen\0cil", 7));
  EXPECT_EQ(s.size(), 7u);
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.reveal(), std::string_view("pen\0cil", 7));
  EXPECT_TRUE(secret().empty());
  EXPECT_EQ(secret().reveal(), "");
}

TEST(SecretTest, OfSizeIsZeroedAndWritable) {
  secret s = secret::of_size(4);
  ASSERT_EQ(s.size(), 4u);
  for (auto b : s.bytes()) EXPECT_EQ(b, 0);
  s.bytes()[1] = 'x';
  EXPECT_EQ(s.reveal(), std::string_view("\0x\0\0", 4));
  EXPECT_TRUE(secret::of_size(0).empty());
}

TEST(SecretTest, CopyIsIndependent) {
  secret a("pencil");
  secret b = a;
  EXPECT_EQ(a, b);
  EXPECT_NE(a.reveal().data(), b.reveal().data());
  b.bytes()[0] = 'P';
  EXPECT_EQ(a.reveal(), "pencil");
  EXPECT_EQ(b.reveal(), "Pencil");
  a = b;
  EXPECT_EQ(a.reveal(), "Pencil");
  a = *&a;  // self-assignment keeps the bytes
  EXPECT_EQ(a.reveal(), "Pencil");
}

TEST(SecretTest, MoveEmptiesTheSource) {
  secret a("pencil");
  secret b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the state after a move is specified
  EXPECT_EQ(b.reveal(), "pencil");
  secret c("other");
  c = std::move(b);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.reveal(), "pencil");
}

TEST(SecretTest, ClearEmpties) {
  secret s("pencil");
  s.clear();
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.reveal(), "");
  s.clear();  // twice is fine
  EXPECT_TRUE(s.empty());
}

TEST(SecretTest, ComparesBytes) {
  EXPECT_EQ(secret("abc"), secret("abc"));
  EXPECT_NE(secret("abc"), secret("abd"));
  EXPECT_NE(secret("abc"), secret("abcd"));
  EXPECT_EQ(secret(), secret(""));
}

TEST(SecretTest, NeverPrintsItself) {
  static_assert(!streamable<const secret&>::value, "a secret must not have an operator<<");
  const secret s("pencil");
  const std::string shown = ::testing::PrintToString(s);
  EXPECT_EQ(shown, secret::placeholder);
  EXPECT_EQ(shown.find("pencil"), std::string::npos);
}

}  // namespace
