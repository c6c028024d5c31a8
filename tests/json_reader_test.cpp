// The Extended JSON reader: relaxed numbers, every wrapper's accepted forms, the legacy forms,
// key order and duplicates, limits, exact error codes and offsets, and line/column positions (the
// stream reader has json_stream_reader_test.cpp). The BSON corpus (bson_corpus_test.cpp) covers
// the canonical forms type by type; these tables cover what the corpus does not.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <string>
#include <string_view>

#include "support/hex.hpp"
#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::from_json;
using oid::bson::json_read_options;
using oid::testing::HasErrorAt;
using oid::testing::to_hex;

// from_json(json) must give exactly the bytes `want` holds.
void expect_reads_as(std::string_view json, const document& want,
                     const json_read_options& options = {}) {
  SCOPED_TRACE(std::string(json));
  const auto got = from_json(json, options);
  ASSERT_TRUE(got.has_value()) << got.error().message() << " at " << got.error().offset;
  EXPECT_EQ(to_hex(got->bytes()), to_hex(want.bytes()));  // a failure shows the bytes
}

template <class F>
document build(F&& f) {
  builder b;
  f(b);
  return std::move(b).extract();
}

TEST(JsonReaderTest, RelaxedIntegersTakeTheSmallestType) {
  expect_reads_as(R"({"a": 0})", build([](builder& b) { b.append_int32("a", 0); }));
  expect_reads_as(R"({"a": -2147483648})",
                  build([](builder& b) { b.append_int32("a", INT32_MIN); }));
  expect_reads_as(R"({"a": 2147483647})",
                  build([](builder& b) { b.append_int32("a", INT32_MAX); }));
  expect_reads_as(R"({"a": 2147483648})",
                  build([](builder& b) { b.append_int64("a", 2147483648LL); }));
  expect_reads_as(R"({"a": -2147483649})",
                  build([](builder& b) { b.append_int64("a", -2147483649LL); }));
  expect_reads_as(R"({"a": 9223372036854775807})",
                  build([](builder& b) { b.append_int64("a", INT64_MAX); }));
  expect_reads_as(R"({"a": -9223372036854775808})",
                  build([](builder& b) { b.append_int64("a", INT64_MIN); }));
  // Beyond int64: a double, as the specification requires (never a string).
  expect_reads_as(R"({"a": 9223372036854775808})",
                  build([](builder& b) { b.append_double("a", 9223372036854775808.0); }));
  expect_reads_as(R"({"a": -9223372036854775809})",
                  build([](builder& b) { b.append_double("a", -9223372036854775809.0); }));
  expect_reads_as(R"({"a": 123456789012345678901234567890})",
                  build([](builder& b) { b.append_double("a", 1.2345678901234568e29); }));
}

TEST(JsonReaderTest, RelaxedNonIntegersAreDoubles) {
  expect_reads_as(R"({"a": 1.0})", build([](builder& b) { b.append_double("a", 1.0); }));
  expect_reads_as(R"({"a": 1e2})", build([](builder& b) { b.append_double("a", 100.0); }));
  expect_reads_as(R"({"a": -0.0})", build([](builder& b) { b.append_double("a", -0.0); }));
  expect_reads_as(R"({"a": 0.1})", build([](builder& b) { b.append_double("a", 0.1); }));
  expect_reads_as(R"({"a": 2.2250738585072014E-308})",
                  build([](builder& b) { b.append_double("a", 2.2250738585072014e-308); }));
  expect_reads_as(R"({"a": 1.7976931348623157e308})",
                  build([](builder& b) { b.append_double("a", 1.7976931348623157e308); }));
  // Out of range: the nearest doubles, infinity and (signed) zero.
  const double inf = std::numeric_limits<double>::infinity();
  expect_reads_as(R"({"a": 1e400})", build([&](builder& b) { b.append_double("a", inf); }));
  expect_reads_as(R"({"a": -1e400})", build([&](builder& b) { b.append_double("a", -inf); }));
  expect_reads_as(R"({"a": 1e-400})", build([](builder& b) { b.append_double("a", 0.0); }));
  expect_reads_as(R"({"a": -1e-400})", build([](builder& b) { b.append_double("a", -0.0); }));
}

TEST(JsonReaderTest, PlainJsonValues) {
  expect_reads_as(
      R"( { "s" : "x\"\\\/\b\f\n\r\t\u00e9\u2606\ud83d\ude00", "t": true, "f": false, "n": null,
            "d": {"k": [1, "two", [], {}]} } )",
      build([](builder& b) {
        b.append_string("s", "x\"\\/\b\f\n\r\t\xc3\xa9\xe2\x98\x86\xf0\x9f\x98\x80");
        b.append_bool("t", true).append_bool("f", false).append_null("n");
        b.open_document("d").open_array("k").append_int32("0", 1).append_string("1", "two");
        b.open_array("2").close().open_document("3").close().close().close();
      }));
  // Strings may hold NUL (BSON strings are length-prefixed); raw UTF-8 is copied as is.
  expect_reads_as("{\"s\": \"a\\u0000b\", \"\xe2\x98\x86\": \"\xf0\x9f\x98\x80\"}",
                  build([](builder& b) {
                    b.append_string("s", std::string_view("a\0b", 3));
                    b.append_string("\xe2\x98\x86", "\xf0\x9f\x98\x80");
                  }));
}

// Strings are scanned 16 and 8 bytes at a time: put each kind of special byte at every position
// of strings of every length up to 40, in the key and in the value, and check the bytes (or the
// error offset) against the plain definition.
TEST(JsonReaderTest, SpecialCharactersAtEveryPositionOfEveryLength) {
  struct special {
    std::string_view json;  // as written in the JSON text
    std::string_view utf8;  // what it means; empty: an error at its first byte
    errc code;
  };
  const special specials[] = {
      {"\\n", "\n", errc{}},
      {"\\\"", "\"", errc{}},
      {"\\u00e9", "\xc3\xa9", errc{}},
      {"\xc3\xa9", "\xc3\xa9", errc{}},
      {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", errc{}},
      {"\x01", "", errc::invalid_json},
      {"\x7f", "\x7f", errc{}},
      {"\xff", "", errc::invalid_utf8},
  };
  for (std::size_t len = 0; len <= 40; ++len) {
    for (std::size_t pos = 0; pos <= len; ++pos) {
      for (const auto& sp : specials) {
        for (bool in_key : {false, true}) {
          const std::string before(pos, 'a'), after(len - pos, 'b');
          const std::string str = before + std::string(sp.json) + after;
          const std::string json = in_key ? "{\"" + str + "\": 1}" : "{\"k\": \"" + str + "\"}";
          SCOPED_TRACE(json);
          const auto got = from_json(json);
          const std::size_t at = (in_key ? 2 : 7) + pos;
          if (sp.utf8.empty()) {
            EXPECT_THAT(got, HasErrorAt(sp.code, at));
            continue;
          }
          const std::string want_str = before + std::string(sp.utf8) + after;
          const auto want = build([&](builder& b) {
            if (in_key) {
              b.append_int32(want_str, 1);
            } else {
              b.append_string("k", want_str);
            }
          });
          ASSERT_TRUE(got.has_value());
          EXPECT_EQ(to_hex(got->bytes()), to_hex(want.bytes()));
        }
      }
    }
  }
}

TEST(JsonReaderTest, KeepsKeyOrderAndDuplicateKeys) {
  expect_reads_as(R"({"b": 1, "a": 2, "b": {"x": 1, "x": 2}})", build([](builder& b) {
                    b.append_int32("b", 1).append_int32("a", 2);
                    b.open_document("b").append_int32("x", 1).append_int32("x", 2).close();
                  }));
}

TEST(JsonReaderTest, DollarKeysThatAreNotWrappersStayDocuments) {
  // Top level: never a wrapper. Nested: unknown $-keys, DBRefs, the $regex and $type query
  // operators (without legacy) are plain documents.
  expect_reads_as(R"({"$oid": "x"})", build([](builder& b) { b.append_string("$oid", "x"); }));
  expect_reads_as(R"({"q": {"$in": [1], "$ref": "c", "$id": 1, "$db": "d"}})",
                  build([](builder& b) {
                    b.open_document("q").open_array("$in").append_int32("0", 1).close();
                    b.append_string("$ref", "c").append_int32("$id", 1).append_string("$db", "d");
                    b.close();
                  }));
  expect_reads_as(R"({"q": {"$regex": "^a", "$options": "i"}})", build([](builder& b) {
                    b.open_document("q").append_string("$regex", "^a");
                    b.append_string("$options", "i").close();
                  }));
  expect_reads_as(R"({"q": {"$type": "string"}})", build([](builder& b) {
                    b.open_document("q").append_string("$type", "string").close();
                  }));
}

TEST(JsonReaderTest, WrapperFormsTheCorpusDoesNotCover) {
  const auto scope = build([](builder& s) { s.append_int32("a", 1); });
  const auto code_scope =
      build([&](builder& b) { b.append_javascript_with_scope("x", "fn", scope.view()); });
  expect_reads_as(R"({"x": {"$code": "fn", "$scope": {"a": 1}}})", code_scope);
  expect_reads_as(R"({"x": {"$scope": {"a": 1}, "$code": "fn"}})", code_scope);
  // The scope is a document whatever its keys look like.
  const auto odd_scope = build([](builder& s) { s.append_int32("$oid", 1); });
  expect_reads_as(R"({"x": {"$code": "", "$scope": {"$oid": 1}}})", build([&](builder& b) {
                    b.append_javascript_with_scope("x", "", odd_scope.view());
                  }));
  // Old binary subtype 0x02 gets its inner length, whichever key comes first.
  const std::uint8_t ff[] = {0xFF, 0xFF};
  const auto old_binary = build([&](builder& b) { b.append_binary("x", 2, ff); });
  expect_reads_as(R"({"x": {"$binary": {"subType": "2", "base64": "//8="}}})", old_binary);
  expect_reads_as(R"({"x": {"$binary": {"base64": "//8=", "subType": "02"}}})", old_binary);
  expect_reads_as(R"({"x": {"$binary": {"base64": "//8=", "subType": "fF"}}})",
                  build([&](builder& b) { b.append_binary("x", 0xFF, ff); }));
  // $uuid with or without hyphens, any case.
  const std::uint8_t uuid[] = {0x73, 0xff, 0xd2, 0x64, 0x44, 0xb3, 0x4c, 0x69,
                               0x90, 0xe8, 0xe7, 0xd1, 0xdf, 0xc0, 0x35, 0xd4};
  const auto uuid_doc = build([&](builder& b) { b.append_binary("u", 4, uuid); });
  expect_reads_as(R"({"u": {"$uuid": "73ffd264-44b3-4c69-90e8-e7d1dfc035d4"}})", uuid_doc);
  expect_reads_as(R"({"u": {"$uuid": "73FFD26444B34C6990E8E7D1DFC035D4"}})", uuid_doc);
  // Dates: RFC 3339 offsets, fractions of any length (cut to milliseconds), years before 1970.
  auto date = [](std::int64_t ms) {
    return build([&](builder& b) { b.append_date_time("d", ms); });
  };
  expect_reads_as(R"({"d": {"$date": "2012-12-24T12:15:30.501Z"}})", date(1356351330501));
  expect_reads_as(R"({"d": {"$date": "2012-12-24T13:15:30.501+01:00"}})", date(1356351330501));
  expect_reads_as(R"({"d": {"$date": "2012-12-24T07:00:30.501-0515"}})", date(1356351330501));
  expect_reads_as(R"({"d": {"$date": "2012-12-24t12:15:30.5012345z"}})", date(1356351330501));
  expect_reads_as(R"({"d": {"$date": "2012-12-24T12:15:30.5Z"}})", date(1356351330500));
  expect_reads_as(R"({"d": {"$date": "1960-02-29T00:00:00Z"}})", date(-310521600000));
  expect_reads_as(R"({"d": {"$date": {"$numberLong": "-1"}}})", date(-1));
  // Wrapper keys in any order, whitespace anywhere.
  expect_reads_as(R"({"t" : { "$timestamp" : { "i" : 4294967295 , "t" : 0 } } })",
                  build([](builder& b) {
                    b.append_timestamp("t", {0, 4294967295u});
                  }));
  expect_reads_as(R"({"n": {"$numberDouble": "-1.5E+300"}, "m": {"$numberDouble": "1e-400"}})",
                  build([](builder& b) { b.append_double("n", -1.5e300).append_double("m", 0); }));
  expect_reads_as(R"({"n": {"$numberLong": "-9223372036854775808"}})",
                  build([](builder& b) { b.append_int64("n", INT64_MIN); }));
  // Regex options are sorted by whole characters, never bytes (found by fuzz_extended_json).
  expect_reads_as(R"({"x": {"$regularExpression": {"pattern": "b", "options": "\u1615mi"}}})",
                  build([](builder& b) { b.append_regex("x", "b", "im\xe1\x98\x95"); }));
  // A wrapper inside an array.
  expect_reads_as(R"({"a": [{"$numberInt": "7"}, {"$minKey": 1}]})", build([](builder& b) {
                    b.open_array("a").append_int32("0", 7).append_min_key("1").close();
                  }));
}

TEST(JsonReaderTest, LegacyFormsWhenAsked) {
  json_read_options legacy;
  legacy.legacy = true;
  const std::uint8_t bytes[] = {1, 2, 3};
  const auto bin = build([&](builder& b) { b.append_binary("x", 0x80, bytes); });
  expect_reads_as(R"({"x": {"$binary": "AQID", "$type": "80"}})", bin, legacy);
  expect_reads_as(R"({"x": {"$type": "80", "$binary": "AQID"}})", bin, legacy);
  expect_reads_as(R"({"x": {"$date": 1356351330501}})",
                  build([](builder& b) { b.append_date_time("x", 1356351330501); }), legacy);
  expect_reads_as(R"({"x": {"$date": -5}})", build([](builder& b) { b.append_date_time("x", -5); }),
                  legacy);
  const auto re = build([](builder& b) { b.append_regex("x", "a.c", "imx"); });
  expect_reads_as(R"({"x": {"$regex": "a.c", "$options": "xmi"}})", re, legacy);
  expect_reads_as(R"({"x": {"$options": "xmi", "$regex": "a.c"}})", re, legacy);
  // The query operators that look like them stay documents.
  expect_reads_as(
      R"({"x": {"$regex": {"$regularExpression": {"pattern": "a", "options": ""}}, "$options": "i"}})",
      build([](builder& b) {
        b.open_document("x").append_regex("$regex", "a", "").append_string("$options", "i");
        b.close();
      }),
      legacy);
  expect_reads_as(
      R"({"x": {"$regex": "a"}})",
      build([](builder& b) { b.open_document("x").append_string("$regex", "a").close(); }), legacy);
  expect_reads_as(R"({"x": {"$type": "string"}, "y": {"$type": 2}})", build([](builder& b) {
                    b.open_document("x").append_string("$type", "string").close();
                    b.open_document("y").append_int32("$type", 2).close();
                  }),
                  legacy);
  // The canonical forms still work in legacy mode.
  expect_reads_as(R"({"x": {"$binary": {"base64": "AQID", "subType": "80"}}})", bin, legacy);
}

struct error_case {
  std::string_view name;
  std::string_view json;
  errc code;
  std::string_view at;   // the error's offset is where this text first occurs ("" = the end)
  std::size_t plus = 0;  // ... plus this many bytes
};

TEST(JsonReaderTest, ReportsCodeAndOffset) {
  const error_case cases[] = {
      {"empty", "", errc::invalid_json, ""},
      {"only spaces", "   ", errc::invalid_json, ""},
      {"an array", "[1]", errc::invalid_json, "["},
      {"after the object", R"({"a": 1} x)", errc::invalid_json, "x"},
      {"second object", R"({} [])", errc::invalid_json, "["},
      {"trailing comma", R"({"a": 1,})", errc::invalid_json, "}"},
      {"missing colon", R"({"a" 1})", errc::invalid_json, "1"},
      {"unquoted key", R"({a: 1})", errc::invalid_json, "a"},
      {"leading zero", R"({"a": 01})", errc::invalid_json, "1}"},
      {"bare point", R"({"a": 1.})", errc::invalid_json, "}"},
      {"bare minus", R"({"a": -})", errc::invalid_json, "}"},
      {"plus sign", R"({"a": +1})", errc::invalid_json, "+"},
      {"NaN literal", R"({"a": NaN})", errc::invalid_json, "NaN"},
      {"bad literal", R"({"a": tru})", errc::invalid_json, "tru"},
      {"unterminated string", R"({"a": "x)", errc::invalid_json, ""},
      {"unterminated object", R"({"a": 1)", errc::invalid_json, ""},
      {"unknown escape", R"({"a": "\q"})", errc::invalid_json, "\\q"},
      {"short \\u", R"({"a": "\u12"})", errc::invalid_json, "\\u12"},
      {"raw tab", "{\"a\": \"t\tx\"}", errc::invalid_json, "\t"},
      {"raw newline", "{\"a\": \"t\nx\"}", errc::invalid_json, "\n"},
      {"array trailing comma", R"({"a": [1,]})", errc::invalid_json, "]"},
      {"bad byte", "{\"a\": \"\xff\"}", errc::invalid_utf8, "\xff"},
      {"cut sequence", "{\"a\": \"\xc3\"}", errc::invalid_utf8, "\xc3"},
      {"overlong", "{\"a\": \"\xe0\x80\x80\"}", errc::invalid_utf8, "\xe0"},
      {"raw surrogate", "{\"a\": \"\xed\xa0\x80\"}", errc::invalid_utf8, "\xed"},
      {"above U+10FFFF", "{\"a\": \"\xf4\x90\x80\x80\"}", errc::invalid_utf8, "\xf4"},
      {"bad key byte", "{\"\x80\": 1}", errc::invalid_utf8, "\x80"},
      {"lone high surrogate", R"({"a": "\ud800x"})", errc::invalid_utf8, "\\ud800"},
      {"lone low surrogate", R"({"a": "\udc00"})", errc::invalid_utf8, "\\udc00"},
      {"high then not low", R"({"a": "\ud800\u0041"})", errc::invalid_utf8, "\\ud800"},
      {"NUL in key", R"({"a\u0000": 1})", errc::invalid_key, "\\u0000"},
      {"NUL in nested key", R"({"a": {"b\u0000": 1}})", errc::invalid_key, "\\u0000"},
      {"$oid too short", R"({"x": {"$oid": "123"}})", errc::invalid_extended_json, "\"123"},
      {"$oid not hex", R"({"x": {"$oid": "56e1fc72e0c917e9c471416g"}})",
       errc::invalid_extended_json, "\"56"},
      {"$oid extra key", R"({"x": {"$oid": "56e1fc72e0c917e9c4714161", "y": 1}})",
       errc::invalid_extended_json, "\"y\""},
      {"wrapper key second", R"({"x": {"a": 1, "$numberInt": "1"}})", errc::invalid_extended_json,
       "\"$numberInt"},
      {"$numberInt too big", R"({"x": {"$numberInt": "2147483648"}})", errc::invalid_extended_json,
       "\"2147483648"},
      {"$numberInt plus", R"({"x": {"$numberInt": "+1"}})", errc::invalid_extended_json, "\"+1"},
      {"$numberInt space", R"({"x": {"$numberInt": " 1"}})", errc::invalid_extended_json, "\" 1"},
      {"$numberInt number", R"({"x": {"$numberInt": 1}})", errc::invalid_extended_json, "1}"},
      {"$numberLong fraction", R"({"x": {"$numberLong": "1.0"}})", errc::invalid_extended_json,
       "\"1.0"},
      {"$numberDouble inf", R"({"x": {"$numberDouble": "inf"}})", errc::invalid_extended_json,
       "\"inf"},
      {"$numberDouble junk", R"({"x": {"$numberDouble": "1.0x"}})", errc::invalid_extended_json,
       "\"1.0x"},
      {"$numberDecimal junk", R"({"x": {"$numberDecimal": "1.2.3"}})", errc::invalid_extended_json,
       "\"1.2.3"},
      {"base64 unpadded", R"({"x": {"$binary": {"base64": "AQI", "subType": "00"}}})",
       errc::invalid_extended_json, "\"AQI"},
      {"base64 bad char", R"({"x": {"$binary": {"base64": "AQ*=", "subType": "00"}}})",
       errc::invalid_extended_json, "\"AQ*="},
      {"subType 3 digits", R"({"x": {"$binary": {"base64": "", "subType": "000"}}})",
       errc::invalid_extended_json, "\"000"},
      {"binary no subType", R"({"x": {"$binary": {"base64": ""}}})", errc::invalid_extended_json,
       "{\"base64"},
      {"binary twice base64", R"({"x": {"$binary": {"base64": "", "base64": ""}}})",
       errc::invalid_extended_json, "\"\"}"},
      {"legacy binary, strict", R"({"x": {"$binary": "AQID", "$type": "80"}})",
       errc::invalid_extended_json, "\"AQID"},
      {"legacy date, strict", R"({"x": {"$date": 1}})", errc::invalid_extended_json, "1}"},
      {"date month 13", R"({"x": {"$date": "2012-13-01T00:00:00Z"}})", errc::invalid_extended_json,
       "\"2012"},
      {"date Feb 30", R"({"x": {"$date": "2012-02-30T00:00:00Z"}})", errc::invalid_extended_json,
       "\"2012"},
      {"date no zone", R"({"x": {"$date": "2012-12-24T12:15:30"}})", errc::invalid_extended_json,
       "\"2012"},
      {"date hour 24", R"({"x": {"$date": "2012-12-24T24:00:00Z"}})", errc::invalid_extended_json,
       "\"2012"},
      {"date wrong wrapper", R"({"x": {"$date": {"$numberInt": "1"}}})",
       errc::invalid_extended_json, "{\"$numberInt"},
      {"timestamp negative", R"({"x": {"$timestamp": {"t": -1, "i": 1}}})",
       errc::invalid_extended_json, "-1"},
      {"timestamp 2^32", R"({"x": {"$timestamp": {"t": 4294967296, "i": 1}}})",
       errc::invalid_extended_json, "4294967296"},
      {"timestamp fraction", R"({"x": {"$timestamp": {"t": 1.0, "i": 1}}})",
       errc::invalid_extended_json, "1.0"},
      {"minKey 2", R"({"x": {"$minKey": 2}})", errc::invalid_extended_json, "2}"},
      {"maxKey 1.0", R"({"x": {"$maxKey": 1.0}})", errc::invalid_extended_json, "1.0"},
      {"undefined false", R"({"x": {"$undefined": false}})", errc::invalid_extended_json, "false"},
      {"regex NUL", R"({"x": {"$regularExpression": {"pattern": "a\u0000", "options": ""}}})",
       errc::invalid_extended_json, "\"a\\u"},
      {"regex missing options", R"({"x": {"$regularExpression": {"pattern": "a"}}})",
       errc::invalid_extended_json, "{\"pattern"},
      {"scope not a document", R"({"x": {"$code": "f", "$scope": 1}})", errc::invalid_extended_json,
       "1}"},
      {"scope alone", R"({"x": {"$scope": {}}})", errc::invalid_extended_json, "}}}", 1},
      {"code then other key", R"({"x": {"$code": "f", "$other": 1}})", errc::invalid_extended_json,
       "\"$other"},
      {"dbPointer id not oid", R"({"x": {"$dbPointer": {"$ref": "b", "$id": "abc"}}})",
       errc::invalid_extended_json, "\"abc"},
      {"uuid short", R"({"x": {"$uuid": "73ffd264-44b3-4c69-90e8-e7d1dfc035d"}})",
       errc::invalid_extended_json, "\"73"},
      {"symbol number", R"({"x": {"$symbol": 1}})", errc::invalid_extended_json, "1}"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::size_t offset = c.at.empty() ? c.json.size() : c.json.find(c.at) + c.plus;
    ASSERT_NE(offset, std::string_view::npos);
    EXPECT_THAT(from_json(c.json), HasErrorAt(c.code, offset));
  }
}

TEST(JsonReaderTest, DepthLimit) {
  // Depth counts as validate() counts it: the top-level document is 0, each level adds 1.
  auto nested = [](int levels) {
    std::string s = "{\"a\": ";
    for (int i = 0; i < levels; ++i) s += '[';
    for (int i = 0; i < levels; ++i) s += ']';
    return s + "}";
  };
  EXPECT_TRUE(from_json(nested(100)).has_value());
  EXPECT_THAT(from_json(nested(101)), HasErrorAt(errc::too_deep, 6 + 100));
  json_read_options shallow;
  shallow.max_depth = 1;
  EXPECT_TRUE(from_json(R"({"a": {"$numberLong": "1"}, "b": {}})", shallow).has_value());
  EXPECT_THAT(from_json(R"({"a": {"b": {}}})", shallow), HasErrorAt(errc::too_deep, 12));
  EXPECT_THAT(from_json(R"({"a": {"$code": "", "$scope": {"b": []}}})", shallow),
              HasErrorAt(errc::too_deep, 36));
  // Huge limits are capped, so recursion stays bounded.
  json_read_options huge;
  huge.max_depth = 1u << 30;
  EXPECT_THAT(from_json(nested(5000), huge), HasErrorAt(errc::too_deep, 6 + 1000));
}

TEST(JsonReaderTest, SizeLimit) {
  json_read_options small;
  small.max_size = 32;
  // {"a": "<n chars>"}: 4 + 1 + 2 + 4 + n + 1 + 1 bytes.
  const std::string fits = R"({"a": ")" + std::string(19, 'x') + "\"}";
  const std::string over = R"({"a": ")" + std::string(20, 'x') + "\"}";
  EXPECT_TRUE(from_json(fits, small).has_value());
  EXPECT_THAT(from_json(over, small), HasErrorAt(errc::too_large, 1));
  EXPECT_THAT(from_json(R"({"a": 1, "b": [1, 2, 3, 4]})", small), HasErrorAt(errc::too_large, 18));
}

TEST(JsonReaderTest, PositionOf) {
  using oid::bson::position_of;
  using oid::bson::text_position;
  const std::string_view text = "ab\n\xc3\xa9x\n\n";
  EXPECT_EQ(position_of(text, 0), (text_position{1, 1}));
  EXPECT_EQ(position_of(text, 2), (text_position{1, 3}));
  EXPECT_EQ(position_of(text, 3), (text_position{2, 1}));
  EXPECT_EQ(position_of(text, 5), (text_position{2, 2}));  // after the two bytes of é
  EXPECT_EQ(position_of(text, 6), (text_position{2, 3}));
  EXPECT_EQ(position_of(text, 8), (text_position{4, 1}));
  EXPECT_EQ(position_of(text, 100), (text_position{4, 1}));
}

}  // namespace
