#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <span>
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
using oid::bson::document_view;
using oid::bson::type;
using oid::bson::validate;
using oid::bson::validate_options;
using oid::testing::bytes_of;
using oid::testing::HasError;
using oid::testing::HasErrorAt;
using oid::testing::hex_bytes;  // spaces between bytes for readability

void put_i32(std::vector<std::uint8_t>& b, std::size_t at, std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(u >> (8 * i));
}

TEST(BsonValidateTest, AcceptsTheEmptyDocumentAndViewsTheInput) {
  const auto bytes = hex_bytes("05000000 00");
  const auto v = validate(bytes);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->size(), 5u);
  EXPECT_EQ(v->data(), bytes.data());
}

TEST(BsonValidateTest, ReportsTheFirstProblemWithItsCodeAndOffset) {
  struct test_case {
    std::string_view name, hex;
    errc want;
    std::size_t offset;
  };
  // Layout reminder: [0-3] length, [4] type, [5..] key and NUL, then the value.
  constexpr test_case cases[] = {
      {"empty input", "", errc::truncated, 0},
      {"three bytes", "050000", errc::truncated, 0},
      {"length 4", "04000000", errc::bad_length_prefix, 0},
      {"length 0", "00000000 00", errc::bad_length_prefix, 0},
      {"negative length", "FFFFFFFF 00", errc::bad_length_prefix, 0},
      {"length beyond the input", "06000000 00", errc::truncated, 0},
      {"terminator 0x01", "05000000 01", errc::missing_terminator, 4},
      {"terminator 0xFF", "05000000 FF", errc::missing_terminator, 4},
      {"trailing byte", "05000000 00 00", errc::trailing_bytes, 5},
      {"elements end before the length", "06000000 00 00", errc::bad_length_prefix, 0},
      {"type 0x14", "08000000 14 6100 00", errc::unknown_type, 4},
      {"type 0x80", "08000000 80 6100 00", errc::unknown_type, 4},
      {"type 0x7E", "08000000 7E 6100 00", errc::unknown_type, 4},
      {"key without NUL", "09000000 0A 616161 00", errc::missing_terminator, 5},
      {"key not UTF-8", "09000000 0A 61FF00 00", errc::invalid_utf8, 6},
      {"int32 truncated", "0A000000 10 6100 0100 00", errc::truncated, 7},
      {"int64 truncated", "0E000000 12 6100 010000000000 00", errc::truncated, 7},
      {"double truncated", "0B000000 01 6100 00000000 00", errc::truncated, 7},
      {"date truncated", "0B000000 09 6100 00000000 00", errc::truncated, 7},
      {"timestamp truncated", "0B000000 11 6100 00000000 00", errc::truncated, 7},
      {"object id truncated", "12000000 07 6100 0102030405060708090A 00", errc::truncated, 7},
      {"decimal128 truncated", "12000000 13 6100 0102030405060708090A 00", errc::truncated, 7},
      {"bool 2", "09000000 08 6100 02 00", errc::invalid_bool, 7},
      {"bool 0xFF", "09000000 08 6100 FF 00", errc::invalid_bool, 7},
      {"bool missing", "08000000 08 6100 00", errc::truncated, 7},
      {"string length 0", "0C000000 02 6100 00000000 00", errc::bad_length_prefix, 7},
      {"string length -1", "0C000000 02 6100 FFFFFFFF 00", errc::bad_length_prefix, 7},
      {"string past the document", "0E000000 02 6100 03000000 6100 00", errc::bad_length_prefix, 7},
      {"string eats the terminator", "0E000000 02 6100 03000000 6161 00", errc::bad_length_prefix,
       7},
      {"string length cut", "09000000 02 6100 02 00", errc::truncated, 7},
      {"string without NUL", "0E000000 02 6100 02000000 6161 00", errc::missing_terminator, 12},
      {"string not UTF-8", "0E000000 02 6100 02000000 C000 00", errc::invalid_utf8, 11},
      {"javascript not UTF-8", "0E000000 0D 6100 02000000 8000 00", errc::invalid_utf8, 11},
      {"symbol length 0", "0C000000 0E 6100 00000000 00", errc::bad_length_prefix, 7},
      {"string then extra NUL", "0E000000 02 6100 01000000 00 00 00", errc::bad_length_prefix, 0},
      {"binary length -1", "0D000000 05 6100 FFFFFFFF 00 00", errc::bad_length_prefix, 7},
      {"binary past the document", "0E000000 05 6100 02000000 00 FF 00", errc::bad_length_prefix,
       7},
      {"binary subtype missing", "0C000000 05 6100 00000000 00", errc::truncated, 7},
      {"binary 0x02 inner too short", "13000000 05 6100 06000000 02 01000000 FFFF 00",
       errc::invalid_binary, 12},
      {"binary 0x02 inner too long", "13000000 05 6100 06000000 02 03000000 FFFF 00",
       errc::invalid_binary, 12},
      {"binary 0x02 inner -1", "13000000 05 6100 06000000 02 FFFFFFFF FFFF 00",
       errc::invalid_binary, 12},
      {"binary 0x02 without inner length", "10000000 05 6100 03000000 02 FFFFFF 00",
       errc::invalid_binary, 12},
      {"document length 4", "0C000000 03 6100 04000000 00", errc::bad_length_prefix, 7},
      {"document past its parent", "0D000000 03 6100 06000000 00 00", errc::bad_length_prefix, 7},
      {"document terminator 0x01", "0D000000 03 6100 05000000 01 00", errc::missing_terminator, 11},
      {"document length cut", "0A000000 03 6100 0500 00", errc::truncated, 7},
      {"array ends before its length", "0E000000 04 6100 06000000 00 00 00",
       errc::bad_length_prefix, 7},
      {"NUL in an embedded key", "15000000 03 7800 0D000000 10 6100 00 01000000 00 00",
       errc::bad_length_prefix, 7},
      {"regex pattern without NUL", "0A000000 0B 6100 6161 00", errc::missing_terminator, 7},
      {"regex options without NUL", "0C000000 0B 6100 6100 6969 00", errc::missing_terminator, 9},
      {"regex options not UTF-8", "0C000000 0B 6100 6100 FF00 00", errc::invalid_utf8, 9},
      {"regex pattern not UTF-8", "0C000000 0B 6100 ED00 6900 00", errc::invalid_utf8, 7},
      {"db pointer id truncated", "16000000 0C 6100 02000000 6100 0102030405060708 00",
       errc::truncated, 13},
      {"db pointer name length 0", "1A000000 0C 6100 00000000 6100 0102030405060708090A0B0C 00",
       errc::bad_length_prefix, 7},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(validate(hex_bytes(c.hex)), HasErrorAt(c.want, c.offset));
  }
}

// {"a": Code("x", {})}: [4] 0F, [5-6] key, [7] total 15, [11] string length 2, [15-16] "x",
// [17] scope length 5, [21] scope terminator, [22] terminator.
std::vector<std::uint8_t> code_with_scope_doc() {
  builder b;
  b.append_javascript_with_scope("a", "x", document_view{});
  return bytes_of(b.view());
}

// Iteration takes the fixed value sizes from detail::fixed_value_sizes; validation has its own
// switch. They must agree: for every type byte the table gives a size, a value of exactly that
// many (zero) bytes validates and one byte fewer is truncated, and no other type byte is fixed.
TEST(BsonValidateTest, AgreesWithIterationsTableOfFixedSizes) {
  int fixed_types = 0;
  for (int t = 0; t < 256; ++t) {
    const std::size_t n = oid::bson::detail::fixed_value_size(static_cast<std::uint8_t>(t));
    if (n == oid::bson::detail::not_fixed) continue;
    ++fixed_types;
    SCOPED_TRACE("type byte " + std::to_string(t));
    for (const std::size_t size : {n, n - 1}) {
      if (size > n) continue;  // n - 1 for n == 0
      std::vector<std::uint8_t> doc(4 + 1 + 2 + size + 1, 0);
      put_i32(doc, 0, static_cast<std::int32_t>(doc.size()));
      doc[4] = static_cast<std::uint8_t>(t);
      doc[5] = 'a';
      if (size == n) {
        EXPECT_TRUE(validate(doc).has_value());
      } else {
        EXPECT_THAT(validate(doc), HasErrorAt(errc::truncated, 7u));
      }
    }
  }
  EXPECT_EQ(fixed_types, 12);  // undefined, null, min/max key, bool, int32, four 8-byte, id, dec
}

TEST(BsonValidateTest, ChecksCodeWithScopeLengths) {
  ASSERT_TRUE(validate(code_with_scope_doc()).has_value());
  struct test_case {
    std::string_view name;
    std::size_t at;
    std::int32_t value;
    errc want;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"total 0", 7, 0, errc::bad_length_prefix, 7},
      {"total -1", 7, -1, errc::bad_length_prefix, 7},
      {"total 13, below the minimum", 7, 13, errc::bad_length_prefix, 7},
      {"total 14, too short for the scope", 7, 14, errc::bad_length_prefix, 7},
      {"total 16, past the document", 7, 16, errc::bad_length_prefix, 7},
      {"code length 0", 11, 0, errc::bad_length_prefix, 11},
      {"code length 1 (no NUL there)", 11, 1, errc::missing_terminator, 15},
      {"code length 3 eats the scope", 11, 3, errc::missing_terminator, 17},
      {"code length past the value", 11, 9, errc::bad_length_prefix, 11},
      {"scope length 4", 17, 4, errc::bad_length_prefix, 17},
      {"scope length 6, disagrees with the total", 17, 6, errc::bad_length_prefix, 7},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto bytes = code_with_scope_doc();
    put_i32(bytes, c.at, c.value);
    EXPECT_THAT(validate(bytes), HasErrorAt(c.want, c.offset));
  }
}

// libbson 1.23's bson_validate stops at the first code-with-scope element; oid checks the rest.
TEST(BsonValidateTest, ChecksEveryElementAfterCodeWithScope) {
  builder scope;
  scope.append_bool("b", true);
  builder b;
  b.append_javascript_with_scope("c1", "f()", scope.view());
  b.append_javascript_with_scope("c2", "g()", scope.view());
  b.append_bool("z", false);
  auto bytes = bytes_of(b.view());
  ASSERT_TRUE(validate(bytes).has_value());
  // The second scope's boolean, then the last element's boolean.
  const std::size_t last_bool = bytes.size() - 2;
  auto bad_last = bytes;
  bad_last[last_bool] = 2;
  EXPECT_THAT(validate(bad_last), HasErrorAt(errc::invalid_bool, last_bool));
  // Before the last boolean: its element header (3 bytes) and the second scope's terminator.
  const std::size_t second_scope_bool = last_bool - 3 - 1 - 1;
  auto bad_scope = bytes;
  ASSERT_EQ(bad_scope[second_scope_bool], 1);
  bad_scope[second_scope_bool] = 7;
  EXPECT_THAT(validate(bad_scope), HasErrorAt(errc::invalid_bool, second_scope_bool));
}

TEST(BsonValidateTest, AcceptsEmbeddedNulInStringsButNotInKeys) {
  builder b;
  b.append_string("s", "a\0b"sv).append_javascript("j", "\0"sv).append_symbol("y", "\0\0"sv);
  const auto v = validate(b.view().bytes());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->find("s")->get_string().value(), "a\0b"sv);
  EXPECT_EQ(v->find("y")->get_symbol().value(), "\0\0"sv);
}

TEST(BsonValidateTest, SweepsEveryTypeByte) {
  // A valid element of each known type under key "a".
  const std::function<void(builder&)> makers[] = {
      [](builder& b) { b.append_double("a", 1.5); },
      [](builder& b) { b.append_string("a", "s"); },
      [](builder& b) { b.append_document("a", document_view{}); },
      [](builder& b) { b.append_array("a", document_view{}); },
      [](builder& b) { b.append_binary("a", 0x04, std::vector<std::uint8_t>(16, 7)); },
      [](builder& b) { b.append_undefined("a"); },
      [](builder& b) { b.append_object_id("a", oid::object_id{}); },
      [](builder& b) { b.append_bool("a", true); },
      [](builder& b) { b.append_date_time("a", 42); },
      [](builder& b) { b.append_null("a"); },
      [](builder& b) { b.append_regex("a", "^x", "i"); },
      [](builder& b) { b.append_db_pointer("a", "db.c", oid::object_id{}); },
      [](builder& b) { b.append_javascript("a", "f()"); },
      [](builder& b) { b.append_symbol("a", "sym"); },
      [](builder& b) { b.append_javascript_with_scope("a", "f()", document_view{}); },
      [](builder& b) { b.append_int32("a", -1); },
      [](builder& b) {
        b.append_timestamp("a", {1, 2});
      },
      [](builder& b) { b.append_int64("a", -1); },
      [](builder& b) { b.append_decimal128("a", {}); },
      [](builder& b) { b.append_min_key("a"); },
      [](builder& b) { b.append_max_key("a"); },
  };
  std::vector<std::vector<std::uint8_t>> valid(256);
  for (const auto& make : makers) {
    builder b;
    make(b);
    valid[b.view().data()[4]] = bytes_of(b.view());
  }
  int known = 0;
  for (int t = 0; t < 256; ++t) {
    SCOPED_TRACE(t);
    const auto byte = static_cast<std::uint8_t>(t);
    EXPECT_EQ(oid::bson::is_known_type(byte), !valid[byte].empty());
    if (!valid[byte].empty()) {
      ++known;
      const auto v = validate(valid[byte]);
      ASSERT_TRUE(v.has_value());
      EXPECT_EQ(static_cast<int>(v->begin()->type()), t);
      EXPECT_NE(oid::bson::to_string(static_cast<type>(byte)), "unknown");
      continue;
    }
    // Type byte, key "a", 16 zero bytes that would fit most values, terminator.
    std::vector<std::uint8_t> bytes = {24, 0, 0, 0, byte, 'a', 0};
    bytes.resize(24);
    if (t == 0) {
      EXPECT_THAT(validate(bytes), HasErrorAt(errc::bad_length_prefix, 0));
    } else {
      EXPECT_THAT(validate(bytes), HasErrorAt(errc::unknown_type, 4));
    }
  }
  EXPECT_EQ(known, 21);
}

// A document with every type, nested documents, an array and a scope.
std::vector<std::uint8_t> every_type_doc() {
  builder scope;
  scope.append_int32("x", 1).append_string("y", "z");
  builder b;
  const std::uint8_t bin[] = {1, 2, 3};
  b.append_double("d", 2.5)
      .append_string("s", "h\xC3\xA9llo")
      .open_document("doc")
      .append_int32("n", 7)
      .open_array("arr")
      .append_bool("0", true)
      .append_null("1")
      .close()
      .close()
      .append_binary("bin", 0x00, bin)
      .append_binary("old", 0x02, bin)
      .append_undefined("u")
      .append_object_id("o", oid::object_id::max_for_timestamp(5))
      .append_bool("f", false)
      .append_date_time("t", -1)
      .append_null("nul")
      .append_regex("re", "a.*b", "imsx")
      .append_db_pointer("p", "db.coll", oid::object_id{})
      .append_javascript("js", "return 1")
      .append_symbol("sym", "s")
      .append_javascript_with_scope("cws", "x + y", scope.view())
      .append_int32("i", 1)
      .append_timestamp("ts", {4, 5})
      .append_int64("l", 1LL << 40)
      .append_decimal128("dec", {1, 0x3040000000000000})
      .append_min_key("min")
      .append_max_key("max");
  return bytes_of(b.view());
}

TEST(BsonValidateTest, RejectsEveryTruncation) {
  const auto full = every_type_doc();
  ASSERT_TRUE(validate(full).has_value());
  for (std::size_t k = 0; k < full.size(); ++k) {
    SCOPED_TRACE(k);
    const std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<long>(k));
    EXPECT_THAT(validate(cut), HasErrorAt(errc::truncated, 0));
  }
}

// Cutting the document and fixing up its length and terminator leaves a document whose last
// element is cut short: rejected, unless the cut fell exactly between two elements.
TEST(BsonValidateTest, RejectsEveryResizedCut) {
  const auto full = every_type_doc();
  std::vector<std::size_t> boundaries;
  for (const auto& e : document_view::unchecked(full)) {
    boundaries.push_back(static_cast<std::size_t>(e.raw().data() - full.data()));
  }
  for (std::size_t k = 5; k < full.size(); ++k) {
    SCOPED_TRACE(k);
    std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<long>(k - 1));
    cut.push_back(0);
    put_i32(cut, 0, static_cast<std::int32_t>(k));
    const auto v = validate(cut);
    const bool at_boundary =
        std::find(boundaries.begin(), boundaries.end(), k - 1) != boundaries.end();
    if (at_boundary) {
      EXPECT_TRUE(v.has_value());
      continue;
    }
    ASSERT_FALSE(v.has_value());
    const std::error_code code = v.error().code;
    EXPECT_TRUE(code == errc::truncated || code == errc::bad_length_prefix ||
                code == errc::missing_terminator || code == errc::invalid_binary ||
                code == errc::invalid_utf8)
        << v.error().message();
    EXPECT_LT(v.error().offset, k);
  }
}

TEST(BsonValidateTest, SurvivesEverySingleByteChange) {
  const auto full = every_type_doc();
  int accepted = 0, rejected = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    for (const std::uint8_t value : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
      auto bytes = full;
      if (bytes[i] == value) continue;
      bytes[i] = value;
      const auto v = validate(bytes);
      if (v) {
        ++accepted;
        // Whatever was accepted iterates in bounds.
        for (const auto& e : *v) {
          EXPECT_GE(e.raw().data(), bytes.data());
          EXPECT_LE(e.raw().data() + e.raw().size(), bytes.data() + bytes.size());
        }
      } else {
        ++rejected;
        EXPECT_LT(v.error().offset, bytes.size());
      }
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

std::vector<std::uint8_t> nested(std::size_t depth) {
  builder b;
  for (std::size_t i = 0; i < depth; ++i) b.open_document("d");
  for (std::size_t i = 0; i < depth; ++i) b.close();
  return bytes_of(b.view());
}

TEST(BsonValidateTest, LimitsNestingDepth) {
  EXPECT_TRUE(validate(nested(100)).has_value());
  // The 101st embedded document's length is at 4 + 101 * 3 + 100 * 4... each level adds a type
  // byte, the key "d", its NUL and a 4-byte length: 7 bytes.
  EXPECT_THAT(validate(nested(101)), HasErrorAt(errc::too_deep, 4 + 100 * 7 + 3));
  validate_options flat;
  flat.max_depth = 0;
  EXPECT_TRUE(validate(nested(0), flat).has_value());
  EXPECT_THAT(validate(nested(1), flat), HasErrorAt(errc::too_deep, 7));
  // Deeper than the validator's inline stack: it moves to the heap.
  validate_options deep;
  deep.max_depth = 5000;
  EXPECT_TRUE(validate(nested(5000), deep).has_value());
  EXPECT_THAT(validate(nested(5001), deep), HasErrorAt(errc::too_deep, 4 + 5000 * 7 + 3));
  // Scopes count too.
  builder b;
  b.append_javascript_with_scope("c", "", document_view{});
  EXPECT_THAT(validate(b.view().bytes(), flat), HasErrorAt(errc::too_deep, 4 + 3 + 4 + 5));
}

// Validation walks independent embedded documents two at a time (a cursor batch's documents,
// say); the error it reports is still the first in document order, at its exact offset.
TEST(BsonValidateTest, ReportsTheFirstErrorInDocumentOrderWhateverWalkMeetsOneFirst) {
  const std::string long_text(100, 'x');
  builder b;
  b.open_array("batch");
  for (int i = 0; i < 6; ++i) {
    b.open_document(std::to_string(i)).append_string("text", long_text).append_int32("n", i);
    b.close();
  }
  b.close();
  b.append_bool("flag", true);
  auto bytes = bytes_of(b.view());
  const auto valid = validate(bytes);
  ASSERT_TRUE(valid.has_value());
  // Where a value starts (its first byte's offset in `bytes`).
  const auto at = [&](std::span<const std::uint8_t> value) {
    return static_cast<std::size_t>(value.data() - bytes.data());
  };
  const auto text_of = [&](std::string_view i) {
    return (*(*valid->find("batch")->get_array()->find(i)->get_document()).find("text"))
        .raw_value();
  };
  // Break the last byte of document 0's string (its NUL) and the boolean at the very end: a
  // second walk takes document 0 while the first goes on to the boolean and meets it first.
  const auto text0 = text_of("0");
  const std::size_t text0_end = at(text0) + text0.size() - 1;
  const std::size_t doc4_text = at(text_of("4"));
  const std::size_t flag = at(valid->find("flag")->raw_value());
  ASSERT_EQ(bytes[text0_end], 0);
  bytes[text0_end] = 'x';
  bytes[flag] = 2;
  EXPECT_THAT(validate(bytes), HasErrorAt(errc::missing_terminator, text0_end));
  // The same with only the later error: found where it is.
  bytes[text0_end] = 0;
  EXPECT_THAT(validate(bytes), HasErrorAt(errc::invalid_bool, flag));
  // And a bad document deep in the batch, after good ones.
  bytes[flag] = 1;
  put_i32(bytes, doc4_text, 1000);
  EXPECT_THAT(validate(bytes), HasErrorAt(errc::bad_length_prefix, doc4_text));
}

TEST(BsonValidateTest, LimitsTotalSize) {
  const auto doc = every_type_doc();
  validate_options small;
  small.max_size = doc.size() - 1;
  EXPECT_THAT(validate(doc, small), HasErrorAt(errc::too_large, 0));
  small.max_size = doc.size();
  EXPECT_TRUE(validate(doc, small).has_value());
  // The default is 16 MiB: one byte more is refused before the bytes are read.
  std::vector<std::uint8_t> big = {0, 0, 0, 0};
  put_i32(big, 0, 16 * 1024 * 1024 + 1);
  EXPECT_THAT(validate(big), HasErrorAt(errc::too_large, 0));
}

TEST(BsonValidateTest, TrailingBytesAndPrefixes) {
  auto two = every_type_doc();
  const std::size_t first = two.size();
  const auto second = hex_bytes("0C000000 10 6900 01000000 00");
  two.insert(two.end(), second.begin(), second.end());
  EXPECT_THAT(validate(two), HasErrorAt(errc::trailing_bytes, first));
  validate_options trailing;
  trailing.allow_trailing = true;
  const auto a = validate(two, trailing);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->size(), first);
  const auto p = oid::bson::validate_prefix(two);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->size(), first);
  const auto rest = std::span<const std::uint8_t>(two).subspan(p->size());
  const auto q = oid::bson::validate_prefix(rest);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->size(), second.size());
  EXPECT_THAT(oid::bson::validate_prefix(rest.first(5)), HasErrorAt(errc::truncated, 0));
}

TEST(BsonValidateTest, Utf8CheckCanBeTurnedOff) {
  const auto bytes = hex_bytes("0E000000 02 6100 02000000 FF00 00");
  EXPECT_THAT(validate(bytes), HasErrorAt(errc::invalid_utf8, 11));
  validate_options lax;
  lax.check_utf8 = false;
  const auto v = validate(bytes, lax);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->begin()->get_string().value(), "\xFF");
}

TEST(BsonValidateTest, Utf8RulesOfUnicodeTable37) {
  struct test_case {
    std::string_view name, text;
    std::size_t bad;  // npos: well-formed
  };
  constexpr auto ok = std::string_view::npos;
  constexpr test_case cases[] = {
      {"ASCII with NUL", "ab\0c"sv, ok},
      {"2-byte U+00E9", "\xC3\xA9", ok},
      {"3-byte U+20AC", "x\xE2\x82\xAC", ok},
      {"4-byte U+1D11E", "\xF0\x9D\x84\x9E", ok},
      {"last before surrogates U+D7FF", "\xED\x9F\xBF", ok},
      {"first after surrogates U+E000", "\xEE\x80\x80", ok},
      {"U+FFFF", "\xEF\xBF\xBF", ok},
      {"U+10FFFF", "\xF4\x8F\xBF\xBF", ok},
      {"long ASCII run then U+00E9", "0123456789abcdefg\xC3\xA9", ok},
      {"lone continuation", "a\x80", 1},
      {"overlong NUL C0 80", "\xC0\x80", 0},
      {"overlong C1 BF", "\xC1\xBF", 0},
      {"overlong 3-byte E0 9F BF", "\xE0\x9F\xBF", 0},
      {"overlong 4-byte F0 8F BF BF", "\xF0\x8F\xBF\xBF", 0},
      {"surrogate U+D800", "ab\xED\xA0\x80", 2},
      {"surrogate U+DFFF", "\xED\xBF\xBF", 0},
      {"U+110000", "\xF4\x90\x80\x80", 0},
      {"F5 lead", "\xF5\x80\x80\x80", 0},
      {"FF", "0123456789\xFF", 10},
      {"cut 2-byte", "\xC3", 0},
      {"cut 3-byte", "\xE2\x82", 0},
      {"cut 4-byte", "\xF0\x9D\x84", 0},
      {"bad third byte", "\xE2\x82\x41", 0},
      {"bad fourth byte", "\xF0\x9D\x84\xC0", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.bad == ok) {
      EXPECT_TRUE(oid::bson::check_utf8(c.text).has_value());
    } else {
      EXPECT_THAT(oid::bson::check_utf8(c.text), HasErrorAt(errc::invalid_utf8, c.bad));
      // The same text as a string value: the offset moves by the string's position (11).
      builder b;
      b.append_string("a", c.text);
      EXPECT_THAT(validate(b.view().bytes()), HasErrorAt(errc::invalid_utf8, 11 + c.bad));
    }
  }
}

// Keys and strings are checked eight and sixteen bytes at a time when they are ASCII; a byte with
// its high bit at any position of a key or string of any length, in the last element (where a
// word would read past the document) or before another one, must still be found at its exact
// offset, and a valid two-byte sequence anywhere must still pass.
TEST(BsonValidateTest, WordAtATimeChecksFindEveryNonAsciiByte) {
  for (const bool last : {true, false}) {
    for (std::size_t n = 1; n <= 40; ++n) {
      for (std::size_t j = 0; j < n; ++j) {
        SCOPED_TRACE("length " + std::to_string(n) + ", byte " + std::to_string(j) +
                     (last ? ", last element" : ", before another"));
        std::string text(n, 'k');
        text[j] = '\xFF';
        const auto doc = [&](std::string_view key, std::string_view value) {
          builder b;
          b.append_string(key, value);
          if (!last) b.append_int32("z", 1);
          return std::move(b).extract();
        };
        const std::string plain(n, 'k');
        const auto fine = doc(plain, plain), bad_key = doc(text, "v"), bad_value = doc("a", text);
        EXPECT_TRUE(validate(fine.view().bytes()).has_value());
        EXPECT_THAT(validate(bad_key.view().bytes()), HasErrorAt(errc::invalid_utf8, 5 + j));
        EXPECT_THAT(validate(bad_value.view().bytes()), HasErrorAt(errc::invalid_utf8, 11 + j));
        if (j + 1 < n) {
          std::string accented = plain;
          accented[j] = '\xC3';
          accented[j + 1] = '\xA9';
          const auto two_byte = doc(accented, accented), both_bad = doc(text, text);
          EXPECT_TRUE(validate(two_byte.view().bytes()).has_value());
          validate_options lax;
          lax.check_utf8 = false;
          EXPECT_TRUE(validate(both_bad.view().bytes(), lax).has_value());
        }
      }
    }
  }
}

}  // namespace
