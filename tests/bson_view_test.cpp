#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "support/matchers.hpp"

namespace {

using namespace std::string_view_literals;
using oid::errc;
using oid::bson::builder;
using oid::bson::document_view;
using oid::bson::element;
using oid::bson::type;
using oid::testing::HasError;
using oid::testing::HasValue;

static_assert(std::is_trivially_copyable_v<document_view>);
static_assert(std::is_trivially_copyable_v<element>);
static_assert(std::forward_iterator<document_view::iterator>);
static_assert(noexcept(std::declval<document_view>().begin()));
static_assert(noexcept(++std::declval<document_view::iterator&>()));

TEST(BsonViewTest, DefaultViewIsTheEmptyDocument) {
  const document_view v;
  EXPECT_EQ(v.size(), 5u);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.begin(), v.end());
  EXPECT_THAT(v.find("a"), HasError(errc::key_not_found));
  EXPECT_EQ(v, oid::bson::empty_document);
}

TEST(BsonViewTest, IteratesInDocumentOrderAndFindsTheFirstMatch) {
  builder b;
  b.append_int32("b", 1).append_string("a", "x").append_int32("b", 2).append_null("c");
  const document_view v = b.view();
  std::vector<std::string_view> keys;
  std::vector<type> types;
  for (const element& e : v) {
    keys.push_back(e.key());
    types.push_back(e.type());
  }
  EXPECT_EQ(keys, (std::vector<std::string_view>{"b", "a", "b", "c"}));
  EXPECT_EQ(types, (std::vector<type>{type::int32, type::string, type::int32, type::null}));
  EXPECT_EQ(std::distance(v.begin(), v.end()), 4);
  EXPECT_THAT(v.find("b")->get_int32(), HasValue(1));  // duplicates: the first wins
  EXPECT_TRUE(v.contains("c"));
  EXPECT_FALSE(v.contains("d"));
  EXPECT_FALSE(v.contains("b\0"sv));
  EXPECT_TRUE(v.find("c")->raw_value().empty());
  EXPECT_EQ(v.find("a")->raw_value().size(), 6u);  // int32 length, "x", NUL
}

TEST(BsonViewTest, UncheckedViewOfShortBytesIsEmpty) {
  const std::uint8_t three[] = {1, 2, 3};
  EXPECT_TRUE(document_view::unchecked(three).empty());
  EXPECT_EQ(document_view::unchecked(three).begin(), document_view::unchecked(three).end());
}

TEST(BsonViewTest, TypeNames) {
  EXPECT_EQ(oid::bson::to_string(type::double_), "double");
  EXPECT_EQ(oid::bson::to_string(type::javascript_with_scope), "javascriptWithScope");
  EXPECT_EQ(oid::bson::to_string(type::min_key), "minKey");
  EXPECT_EQ(oid::bson::to_string(static_cast<type>(0x14)), "unknown");
}

}  // namespace
