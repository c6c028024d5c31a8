#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/validate.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/bson_bytes.hpp"
#include "support/hex.hpp"
#include "support/matchers.hpp"

namespace {

using namespace std::string_view_literals;
using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
using oid::testing::bytes_of;
using oid::testing::HasError;
using oid::testing::HasErrorAt;
using oid::testing::hex_bytes;

const oid::object_id some_id(oid::object_id::bytes_type{0x56, 0xe1, 0xfc, 0x72, 0xe0, 0xc9, 0x17,
                                                        0xe9, 0xc4, 0x71, 0x41, 0x61});

TEST(BsonBuilderTest, EmptyDocumentIsFiveBytes) {
  builder b;
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));
  const document d = std::move(b).extract();
  EXPECT_EQ(d, document());
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));  // extract leaves it empty
}

// Each typed append writes exactly the bytes of the BSON corpus's canonical form for that value.
TEST(BsonBuilderTest, WritesTheCorpusBytesForEveryType) {
  struct test_case {
    std::string_view name;
    void (*build)(builder&);
    std::string_view want;
  };
  static const test_case cases[] = {
      {"double 1.0", [](builder& b) { b.append_double("d", 1.0); },
       "10000000016400000000000000F03F00"},
      {"string", [](builder& b) { b.append_string("a", "b"); }, "0E00000002610002000000620000"},
      {"string with NULs", [](builder& b) { b.append_string("a", "ab\0bab\0babab"sv); },
       "190000000261000D0000006162006261620062616261620000"},
      {"document", [](builder& b) { b.open_document("x").append_string("", "b").close(); },
       "150000000378000D00000002000200000062000000"},
      {"array", [](builder& b) { b.open_array("a").append_int32("0", 10).close(); },
       "140000000461000C0000001030000A0000000000"},
      {"binary generic",
       [](builder& b) {
         const std::uint8_t p[] = {0xff, 0xff};
         b.append_binary("x", 0x00, p);
       },
       "0F0000000578000200000000FFFF00"},
      {"binary old 0x02",
       [](builder& b) {
         const std::uint8_t p[] = {0xff, 0xff};
         b.append_binary("x", 0x02, p);
       },
       "13000000057800060000000202000000FFFF00"},
      {"binary user 0x80",
       [](builder& b) {
         const std::uint8_t p[] = {0xff, 0xff};
         b.append_binary("x", 0x80, p);
       },
       "0F0000000578000200000080FFFF00"},
      {"undefined", [](builder& b) { b.append_undefined("a"); }, "0800000006610000"},
      {"object id", [](builder& b) { b.append_object_id("a", some_id); },
       "1400000007610056E1FC72E0C917E9C471416100"},
      {"true", [](builder& b) { b.append_bool("b", true); }, "090000000862000100"},
      {"false", [](builder& b) { b.append_bool("b", false); }, "090000000862000000"},
      {"date", [](builder& b) { b.append_date_time("a", 1356351330501); },
       "10000000096100C5D8D6CC3B01000000"},
      {"negative date", [](builder& b) { b.append_date_time("a", -284643869501); },
       "10000000096100C33CE7B9BDFFFFFF00"},
      {"null", [](builder& b) { b.append_null("a"); }, "080000000A610000"},
      {"regex", [](builder& b) { b.append_regex("a", "abc", "im"); },
       "0F0000000B610061626300696D0000"},
      {"db pointer", [](builder& b) { b.append_db_pointer("a", "b", some_id); },
       "1A0000000C610002000000620056E1FC72E0C917E9C471416100"},
      {"javascript", [](builder& b) { b.append_javascript("a", "b"); },
       "0E0000000D610002000000620000"},
      {"symbol", [](builder& b) { b.append_symbol("a", "b"); }, "0E0000000E610002000000620000"},
      {"code with scope",
       [](builder& b) {
         builder scope;
         scope.append_int32("x", 1);
         b.append_javascript_with_scope("a", "abcd", scope.view());
       },
       "210000000F6100190000000500000061626364000C000000107800010000000000"},
      {"int32", [](builder& b) { b.append_int32("i", -2147483648); }, "0C0000001069000000008000"},
      {"timestamp",
       [](builder& b) {
         b.append_timestamp("a", {123456789, 42});
       },
       "100000001161002A00000015CD5B0700"},
      {"int64", [](builder& b) { b.append_int64("a", INT64_MIN); },
       "10000000126100000000000000008000"},
      {"decimal128 1",
       [](builder& b) {
         b.append_decimal128("d", {1, 0x3040000000000000});
       },
       "180000001364000100000000000000000000000000403000"},
      {"min key", [](builder& b) { b.append_min_key("a"); }, "08000000FF610000"},
      {"max key", [](builder& b) { b.append_max_key("a"); }, "080000007F610000"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    builder b;
    c.build(b);
    EXPECT_EQ(bytes_of(b.view()), hex_bytes(c.want));
    EXPECT_TRUE(oid::bson::validate(b.view().bytes()).has_value());
  }
}

TEST(BsonBuilderTest, TemplateAppendPicksTheTypedAppend) {
  builder typed;
  typed.append_bool("a", true)
      .append_double("b", 2.5)
      .append_int32("c", 7)
      .append_int64("d", 8)
      .append_int32("e", 65535)
      .append_int64("f", 4294967295)
      .append_string("g", "text")
      .append_null("h")
      .append_object_id("i", some_id)
      .append_date_time("j", 1500);
  builder generic;
  generic.append("a", true)
      .append("b", 2.5)
      .append("c", 7)
      .append("d", std::int64_t{8})
      .append("e", std::uint16_t{65535})
      .append("f", std::uint32_t{4294967295})
      .append("g", "text")
      .append("h", nullptr)
      .append("i", some_id)
      .append("j",
              std::chrono::sys_time<std::chrono::microseconds>(std::chrono::microseconds(1500999)));
  EXPECT_EQ(typed.view(), generic.view());
}

TEST(BsonBuilderTest, NestedScopesBackPatchLengths) {
  builder b;
  b.append_int32("a", 1);
  b.open_document("d");
  EXPECT_EQ(b.depth(), 1u);
  b.open_array("arr").append_int32("0", 1).open_document("1").close().close();
  b.append_string("s", "x").close();
  b.append_int32("z", 2);
  EXPECT_EQ(b.depth(), 0u);
  const auto v = oid::bson::validate(b.view().bytes());
  ASSERT_TRUE(v.has_value()) << v.error().message() << " at " << v.error().offset;
  const auto d = v->find("d");
  ASSERT_TRUE(d.has_value());
  const auto arr = d->get_document()->find("arr");
  ASSERT_TRUE(arr.has_value());
  const auto a = arr->get_array();
  ASSERT_TRUE(a.has_value());
  std::vector<std::string_view> keys;
  for (const auto& e : *a) keys.push_back(e.key());
  EXPECT_EQ(keys, (std::vector<std::string_view>{"0", "1"}));
  EXPECT_EQ(v->find("z")->get_int32().value(), 2);
}

TEST(BsonBuilderTest, RejectsNulInKeysAndRegexAndLeavesTheBuilderUnchanged) {
  builder b;
  b.append_int32("a", 1);
  const auto before = bytes_of(b.view());
  EXPECT_THAT(b.try_append_int32("x\0y"sv, 1), HasErrorAt(errc::invalid_key, 1));
  EXPECT_THAT(b.try_open_document("\0"sv), HasErrorAt(errc::invalid_key, 0));
  EXPECT_THAT(b.try_append_regex("r", "a\0b"sv, ""), HasErrorAt(errc::invalid_value, 1));
  EXPECT_THAT(b.try_append_regex("r", "ab", "i\0"sv), HasErrorAt(errc::invalid_value, 1));
  EXPECT_EQ(bytes_of(b.view()), before);
  EXPECT_EQ(b.depth(), 0u);
  try {
    b.append_string("k\0"sv, "v");
    FAIL() << "no exception";
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code(), errc::invalid_key);
    EXPECT_EQ(e.offset(), 1u);
  }
  EXPECT_EQ(bytes_of(b.view()), before);
}

TEST(BsonBuilderTest, RejectsValuesBeyondTheSizeLimit) {
  builder b;
  // A string_view of INT32_MAX bytes is never read: the size check comes first.
  const std::string_view huge("x", 1);
  const std::string_view too_big(huge.data(), std::size_t{INT32_MAX});
  EXPECT_THAT(b.try_append_string("s", too_big), HasError(errc::too_large));
  EXPECT_THAT(
      b.try_append_binary("b", 0,
                          std::span<const std::uint8_t>(
                              reinterpret_cast<const std::uint8_t*>(huge.data()), INT32_MAX - 8)),
      HasError(errc::too_large));
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));
}

// Keys and values read from the builder's own view stay valid while the buffer grows under them.
TEST(BsonBuilderTest, AppendsArgumentsThatPointIntoItsOwnBuffer) {
  builder b(8);  // small, so that every append reallocates
  b.append_string("greeting", "hello").append_regex("re", "a+", "i");
  const auto first = *b.view().begin();
  b.append_string(first.key(), first.get_string().value());
  b.append_element("copy", *b.view().find("re"));
  b.append_document("self", b.view());
  const auto bin = b.view().find("greeting")->raw_value();
  b.append_binary("bin", 0x02, bin);
  b.append_javascript_with_scope("cws", b.view().begin()->key(), b.view());
  const auto last = b.view().find("cws")->get_javascript_with_scope().value();
  b.append_db_pointer(last.code, last.code, oid::object_id{});

  builder four;
  four.append_string("greeting", "hello")
      .append_regex("re", "a+", "i")
      .append_string("greeting", "hello")
      .append_regex("copy", "a+", "i");
  const std::uint8_t hello[] = {6, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0};
  builder five;
  five.append_string("greeting", "hello")
      .append_regex("re", "a+", "i")
      .append_string("greeting", "hello")
      .append_regex("copy", "a+", "i")
      .append_document("self", four.view())
      .append_binary("bin", 0x02, hello);
  builder want;
  want.append_string("greeting", "hello")
      .append_regex("re", "a+", "i")
      .append_string("greeting", "hello")
      .append_regex("copy", "a+", "i")
      .append_document("self", four.view())
      .append_binary("bin", 0x02, hello)
      .append_javascript_with_scope("cws", "greeting", five.view())
      .append_db_pointer("greeting", "greeting", oid::object_id{});
  EXPECT_EQ(bytes_of(b.view()), bytes_of(want.view()));
  EXPECT_TRUE(oid::bson::validate(b.view().bytes()).has_value());
}

// open_javascript_with_scope builds in place the bytes append_javascript_with_scope copies from a
// finished scope, at the top level and inside documents and arrays, with scopes nested inside it.
TEST(BsonBuilderTest, CodeWithScopeBuiltInPlaceEqualsTheCopiedForm) {
  builder scope;
  scope.append_int32("x", 1).open_document("inner").append_string("s", "t").close();
  scope.open_array("list").append_bool("0", true).close();

  builder copied;
  copied.append_javascript_with_scope("top", "return x;", scope.view());
  copied.open_document("d").append_javascript_with_scope("c", "f()", scope.view()).close();
  copied.open_array("a").append_javascript_with_scope("0", "", builder().view()).close();
  copied.append_int32("after", 7);

  const auto fill = [](builder& b) {
    b.append_int32("x", 1).open_document("inner").append_string("s", "t").close();
    b.open_array("list").append_bool("0", true).close();
  };
  builder in_place;
  in_place.open_javascript_with_scope("top", "return x;");
  EXPECT_EQ(in_place.depth(), 1u);
  fill(in_place);
  in_place.close();
  in_place.open_document("d").open_javascript_with_scope("c", "f()");
  EXPECT_EQ(in_place.depth(), 2u);
  fill(in_place);
  in_place.close().close();
  in_place.open_array("a").open_javascript_with_scope("0", "").close().close();
  in_place.append_int32("after", 7);
  EXPECT_EQ(in_place.depth(), 0u);

  EXPECT_EQ(bytes_of(in_place.view()), bytes_of(copied.view()));
  EXPECT_TRUE(oid::bson::validate(in_place.view().bytes()).has_value());
  EXPECT_THAT(in_place.try_open_javascript_with_scope("k\0"sv, "c"),
              HasErrorAt(errc::invalid_key, 1));
  EXPECT_EQ(bytes_of(in_place.view()), bytes_of(copied.view()));
}

// The open scopes are remembered inside the buffer: a deep nesting, reallocated on the way, closes
// back to the right lengths at every level.
TEST(BsonBuilderTest, DeepNestingAcrossReallocations) {
  constexpr int levels = 300;
  builder b(8);
  for (int i = 0; i < levels; ++i) {
    b.append_int32("n", i);
    if (i % 3 == 2) {
      b.open_javascript_with_scope("c", "code");
    } else if (i % 2 == 0) {
      b.open_array("a");
    } else {
      b.open_document("d");
    }
  }
  EXPECT_EQ(b.depth(), std::size_t{levels});
  for (int i = 0; i < levels; ++i) b.append_string("s", "after").close();
  EXPECT_EQ(b.depth(), 0u);
  oid::bson::validate_options options;
  options.max_depth = 2 * levels;
  const auto v = oid::bson::validate(b.view().bytes(), options);
  ASSERT_TRUE(v.has_value()) << v.error().message() << " at " << v.error().offset;
  // Level i holds n: i, then the scope opened at level i, then (below the top) s; the innermost
  // scope holds only s.
  document_view d = *v;
  for (int i = 0; i < levels; ++i) {
    auto it = d.begin();
    ASSERT_EQ(it->get_int32().value(), i);
    ++it;
    ASSERT_NE(it, d.end());
    const auto inner = it->type() == oid::bson::type::javascript_with_scope
                           ? it->get_javascript_with_scope()->scope
                       : it->type() == oid::bson::type::array ? *it->get_array()
                                                              : *it->get_document();
    ++it;
    if (i == 0) {
      EXPECT_EQ(it, d.end());
    } else {
      ASSERT_EQ(it->get_string().value(), "after");
    }
    d = inner;
  }
  ASSERT_EQ(d.begin()->get_string().value(), "after");
}

// After extract() the builder holds no storage; it reads as the empty document and builds again.
TEST(BsonBuilderTest, AppendsTheElementsOfADocumentAsTheyAre) {
  builder src;
  src.append_int32("a", 1).append_string("b", "two");
  src.open_document("c").append_bool("d", true).close();
  const document part = std::move(src).extract();

  builder b;
  b.append_int32("first", 0).append_elements(part.view()).append_int32("last", 9);
  builder want;
  want.append_int32("first", 0).append_int32("a", 1).append_string("b", "two");
  want.open_document("c").append_bool("d", true).close();
  want.append_int32("last", 9);
  EXPECT_EQ(bytes_of(b.view()), bytes_of(want.view()));

  // Inside an open document, and the empty document (nothing appended).
  builder nested;
  nested.open_document("x").append_elements(part.view()).append_elements(document_view{});
  nested.close();
  builder want_nested;
  want_nested.open_document("x").append_int32("a", 1).append_string("b", "two");
  want_nested.open_document("c").append_bool("d", true).close().close();
  EXPECT_EQ(bytes_of(nested.view()), bytes_of(want_nested.view()));

  // Its own view: the copy is of the bytes as they were.
  builder self;
  self.append_int32("a", 1);
  self.append_elements(self.view());
  builder twice;
  twice.append_int32("a", 1).append_int32("a", 1);
  EXPECT_EQ(bytes_of(self.view()), bytes_of(twice.view()));
}

TEST(BsonBuilderTest, BuildsAgainAfterExtract) {
  builder b;
  b.append_int32("a", 1);
  const document first = std::move(b).extract();
  EXPECT_EQ(b.size(), 5u);
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));
  b.append_int32("b", 2).open_document("d").append_null("n").close();
  builder want;
  want.append_int32("b", 2).open_document("d").append_null("n").close();
  EXPECT_EQ(bytes_of(b.view()), bytes_of(want.view()));
  const document second = std::move(b).extract();
  b.clear();
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));
  const document third = std::move(b).extract();
  EXPECT_TRUE(third.empty());
  b.reserve(1000);
  b.append_int32("c", 3);
  EXPECT_EQ(b.size(), 12u);
  builder one;
  one.append_int32("a", 1);
  EXPECT_EQ(first.view(), one.view());
  EXPECT_EQ(second.view(), want.view());
}

// A moved-from builder is empty, as after extract(), and builds again; the moved-to one goes on
// where the other stopped, open scopes included.
TEST(BsonBuilderTest, MovedFromBuilderIsEmptyAndBuildsAgain) {
  builder a;
  a.append_int32("x", 1).open_document("d").append_null("n");
  builder b(std::move(a));
  EXPECT_EQ(a.depth(),
            0u);  // NOLINT(bugprone-use-after-move): the state moving leaves is the point
  EXPECT_EQ(bytes_of(a.view()), hex_bytes("0500000000"));
  a.append_int32("y", 2);
  builder want_a;
  want_a.append_int32("y", 2);
  EXPECT_EQ(bytes_of(a.view()), bytes_of(want_a.view()));
  b.close();
  builder want_b;
  want_b.append_int32("x", 1).open_document("d").append_null("n").close();
  EXPECT_EQ(bytes_of(b.view()), bytes_of(want_b.view()));

  builder c;
  c = std::move(b);
  EXPECT_EQ(bytes_of(c.view()), bytes_of(want_b.view()));
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));  // NOLINT(bugprone-use-after-move)
  b.append_int32("y", 2);
  EXPECT_EQ(bytes_of(b.view()), bytes_of(want_a.view()));
  builder copy = c;
  copy.append_int32("z", 3);
  EXPECT_EQ(bytes_of(c.view()), bytes_of(want_b.view()));
  EXPECT_EQ(copy.size(), c.size() + 7);
}

// A NUL in a key is found wherever it is: in the word-at-a-time part of the scan and in its tail.
TEST(BsonBuilderTest, FindsANulAtEveryPositionOfAKey) {
  builder b;
  for (std::size_t length = 1; length <= 40; ++length) {
    for (std::size_t at = 0; at < length; ++at) {
      std::string key(length, 'k');
      key[at] = '\0';
      EXPECT_THAT(b.try_append_null(key), HasErrorAt(errc::invalid_key, at)) << length << " " << at;
    }
    EXPECT_TRUE(b.try_append_null(std::string(length, 'k')).has_value());
  }
}

TEST(BsonBuilderTest, BinarySpaceFilledInPlaceEqualsTheCopiedBinary) {
  const std::vector<std::uint8_t> bytes{1, 2, 3, 250, 0, 7};
  oid::bson::builder copied;
  copied.append_int32("n", 1).append_binary("data", 0x80, bytes).append_bool("after", true);
  oid::bson::builder filled;
  filled.append_int32("n", 1);
  auto space = filled.try_append_binary_space("data", 0x80, bytes.size());
  ASSERT_TRUE(space.has_value());
  ASSERT_EQ(space->size(), bytes.size());
  std::copy(bytes.begin(), bytes.end(), space->begin());
  filled.append_bool("after", true);
  const document a = std::move(copied).extract(), b = std::move(filled).extract();
  EXPECT_EQ(bytes_of(a.view()), bytes_of(b.view()));
  EXPECT_TRUE(oid::bson::validate(b.view().bytes()).has_value());
  // The old binary subtype has an inner length the caller would have to write: refused.
  oid::bson::builder old;
  EXPECT_EQ(old.try_append_binary_space("x", 0x02, 4).error().code, oid::errc::invalid_value);
  EXPECT_EQ(old.try_append_binary_space("x\0y"sv, 0, 4).error().code, oid::errc::invalid_key);
}

TEST(BsonBuilderTest, ClearStartsOver) {
  builder b;
  b.append_int32("a", 1).open_document("d");
  b.clear();
  EXPECT_EQ(b.depth(), 0u);
  EXPECT_EQ(bytes_of(b.view()), hex_bytes("0500000000"));
}

TEST(BsonDocumentTest, FromBytesValidatesAndCopies) {
  const auto good = hex_bytes("0C0000001069000100000000");
  const auto doc = document::from_bytes(good);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(doc->bytes().begin(), doc->bytes().end()), good);
  EXPECT_EQ(doc->view().find("i")->get_int32().value(), 1);
  EXPECT_THAT(document::from_bytes(hex_bytes("0C00000010690001000000")),
              HasErrorAt(errc::truncated, 0));
  oid::bson::validate_options trailing;
  trailing.allow_trailing = true;
  auto with_tail = good;
  with_tail.push_back(0xAB);
  EXPECT_THAT(document::from_bytes(with_tail), HasErrorAt(errc::trailing_bytes, 12));
  const auto front = document::from_bytes(with_tail, trailing);
  ASSERT_TRUE(front.has_value());
  EXPECT_EQ(front->size(), 12u);
  EXPECT_EQ(document(front->view()), *front);
  EXPECT_EQ(std::move(document(*front)).release(), good);
}

TEST(BsonDocumentTest, FromBytesTakesOwnershipOfAVector) {
  const auto good = hex_bytes("0C0000001069000100000000");
  auto owned = good;
  owned.push_back(0xAB);
  owned.push_back(0xCD);
  EXPECT_THAT(document::from_bytes(std::move(owned)), HasErrorAt(errc::trailing_bytes, 12));
  EXPECT_EQ(owned.size(), 14u);  // untouched on error
  oid::bson::validate_options trailing;
  trailing.allow_trailing = true;
  const std::uint8_t* data = owned.data();
  const auto doc = document::from_bytes(std::move(owned), trailing);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->bytes().data(), data);  // the same buffer, not a copy
  EXPECT_EQ(std::vector<std::uint8_t>(doc->bytes().begin(), doc->bytes().end()), good);
}

}  // namespace
