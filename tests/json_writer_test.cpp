// Extended JSON writer: every BSON type in canonical and relaxed mode, string escaping swept over
// every ASCII byte and position, doubles, dates, pretty printing, appending, deep nesting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/objectid/object_id.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

using oid::bson::builder;
using oid::bson::json_mode;
using oid::bson::to_json;

struct type_case {
  const char* name;
  void (*build)(builder&);
  std::string_view canonical;
  std::string_view relaxed;
};

const oid::object_id kId{oid::object_id::bytes_type{0x57, 0xe1, 0x93, 0xd7, 0xa9, 0xcc, 0x81, 0xb4,
                                                    0x02, 0x74, 0x98, 0xb5}};

std::vector<std::uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

const type_case kTypes[] = {
    {"double one", [](builder& b) { b.append_double("d", 1.0); },
     R"({"d":{"$numberDouble":"1.0"}})", R"({"d":1.0})"},
    {"double negative zero", [](builder& b) { b.append_double("d", -0.0); },
     R"({"d":{"$numberDouble":"-0.0"}})", R"({"d":-0.0})"},
    {"double fraction", [](builder& b) { b.append_double("d", -1.0001220703125); },
     R"({"d":{"$numberDouble":"-1.0001220703125"}})", R"({"d":-1.0001220703125})"},
    {"double large", [](builder& b) { b.append_double("d", 1.2345678921232e18); },
     R"({"d":{"$numberDouble":"1.2345678921232E+18"}})", R"({"d":1.2345678921232E+18})"},
    {"double NaN",
     [](builder& b) { b.append_double("d", std::numeric_limits<double>::quiet_NaN()); },
     R"({"d":{"$numberDouble":"NaN"}})", R"({"d":{"$numberDouble":"NaN"}})"},
    {"double Infinity", [](builder& b) { b.append_double("d", HUGE_VAL); },
     R"({"d":{"$numberDouble":"Infinity"}})", R"({"d":{"$numberDouble":"Infinity"}})"},
    {"double -Infinity", [](builder& b) { b.append_double("d", -HUGE_VAL); },
     R"({"d":{"$numberDouble":"-Infinity"}})", R"({"d":{"$numberDouble":"-Infinity"}})"},
    {"string", [](builder& b) { b.append_string("s", "h\xC3\xA9llo"); }, "{\"s\":\"h\xC3\xA9llo\"}",
     "{\"s\":\"h\xC3\xA9llo\"}"},
    {"string with NUL", [](builder& b) { b.append_string("s", std::string_view("a\0b", 3)); },
     R"({"s":"a\u0000b"})", R"({"s":"a\u0000b"})"},
    {"empty string", [](builder& b) { b.append_string("", ""); }, R"({"":""})", R"({"":""})"},
    {"key escapes", [](builder& b) { b.append_null("a\"b\\c\n"); }, R"({"a\"b\\c\n":null})",
     R"({"a\"b\\c\n":null})"},
    {"document", [](builder& b) { b.open_document("x").append_int32("y", 1).close(); },
     R"({"x":{"y":{"$numberInt":"1"}}})", R"({"x":{"y":1}})"},
    {"empty document", [](builder& b) { b.open_document("x").close(); }, R"({"x":{}})",
     R"({"x":{}})"},
    {"array",
     [](builder& b) { b.open_array("a").append_int32("0", 1).append_string("1", "two").close(); },
     R"({"a":[{"$numberInt":"1"},"two"]})", R"({"a":[1,"two"]})"},
    {"empty array", [](builder& b) { b.open_array("a").close(); }, R"({"a":[]})", R"({"a":[]})"},
    {"binary generic", [](builder& b) { b.append_binary("x", 0x00, bytes_of("\xff\xff")); },
     R"({"x":{"$binary":{"base64":"//8=","subType":"00"}}})",
     R"({"x":{"$binary":{"base64":"//8=","subType":"00"}}})"},
    {"binary empty", [](builder& b) { b.append_binary("x", 0x00, {}); },
     R"({"x":{"$binary":{"base64":"","subType":"00"}}})",
     R"({"x":{"$binary":{"base64":"","subType":"00"}}})"},
    {"binary one byte", [](builder& b) { b.append_binary("x", 0x01, bytes_of("M")); },
     R"({"x":{"$binary":{"base64":"TQ==","subType":"01"}}})",
     R"({"x":{"$binary":{"base64":"TQ==","subType":"01"}}})"},
    {"binary three bytes", [](builder& b) { b.append_binary("x", 0x05, bytes_of("Man")); },
     R"({"x":{"$binary":{"base64":"TWFu","subType":"05"}}})",
     R"({"x":{"$binary":{"base64":"TWFu","subType":"05"}}})"},
    {"binary old subtype drops the inner length",
     [](builder& b) { b.append_binary("x", 0x02, bytes_of("\xff\xff")); },
     R"({"x":{"$binary":{"base64":"//8=","subType":"02"}}})",
     R"({"x":{"$binary":{"base64":"//8=","subType":"02"}}})"},
    {"binary uuid",
     [](builder& b) {
       b.append_binary(
           "x", 0x04, bytes_of("\x73\xff\xd2\x64\x44\xb3\x4c\x69\x90\xe8\xe7\xd1\xdf\xc0\x35\xd4"));
     },
     R"({"x":{"$binary":{"base64":"c//SZESzTGmQ6OfR38A11A==","subType":"04"}}})",
     R"({"x":{"$binary":{"base64":"c//SZESzTGmQ6OfR38A11A==","subType":"04"}}})"},
    {"binary user subtype", [](builder& b) { b.append_binary("x", 0xAB, bytes_of("12")); },
     R"({"x":{"$binary":{"base64":"MTI=","subType":"ab"}}})",
     R"({"x":{"$binary":{"base64":"MTI=","subType":"ab"}}})"},
    {"undefined", [](builder& b) { b.append_undefined("u"); }, R"({"u":{"$undefined":true}})",
     R"({"u":{"$undefined":true}})"},
    {"object id", [](builder& b) { b.append_object_id("_id", kId); },
     R"({"_id":{"$oid":"57e193d7a9cc81b4027498b5"}})",
     R"({"_id":{"$oid":"57e193d7a9cc81b4027498b5"}})"},
    {"booleans", [](builder& b) { b.append_bool("t", true).append_bool("f", false); },
     R"({"t":true,"f":false})", R"({"t":true,"f":false})"},
    {"date epoch", [](builder& b) { b.append_date_time("a", 0); },
     R"({"a":{"$date":{"$numberLong":"0"}}})", R"({"a":{"$date":"1970-01-01T00:00:00Z"}})"},
    {"date with milliseconds", [](builder& b) { b.append_date_time("a", 1356351330501); },
     R"({"a":{"$date":{"$numberLong":"1356351330501"}}})",
     R"({"a":{"$date":"2012-12-24T12:15:30.501Z"}})"},
    {"date with leading-zero milliseconds",
     [](builder& b) { b.append_date_time("a", 1356351330001); },
     R"({"a":{"$date":{"$numberLong":"1356351330001"}}})",
     R"({"a":{"$date":"2012-12-24T12:15:30.001Z"}})"},
    {"date leap day", [](builder& b) { b.append_date_time("a", 951782400000); },
     R"({"a":{"$date":{"$numberLong":"951782400000"}}})",
     R"({"a":{"$date":"2000-02-29T00:00:00Z"}})"},
    {"date last ISO millisecond", [](builder& b) { b.append_date_time("a", 253402300799999); },
     R"({"a":{"$date":{"$numberLong":"253402300799999"}}})",
     R"({"a":{"$date":"9999-12-31T23:59:59.999Z"}})"},
    {"date year 10000", [](builder& b) { b.append_date_time("a", 253402300800000); },
     R"({"a":{"$date":{"$numberLong":"253402300800000"}}})",
     R"({"a":{"$date":{"$numberLong":"253402300800000"}}})"},
    {"date before the epoch", [](builder& b) { b.append_date_time("a", -1); },
     R"({"a":{"$date":{"$numberLong":"-1"}}})", R"({"a":{"$date":{"$numberLong":"-1"}}})"},
    {"date minimum",
     [](builder& b) { b.append_date_time("a", std::numeric_limits<std::int64_t>::min()); },
     R"({"a":{"$date":{"$numberLong":"-9223372036854775808"}}})",
     R"({"a":{"$date":{"$numberLong":"-9223372036854775808"}}})"},
    {"null", [](builder& b) { b.append_null("n"); }, R"({"n":null})", R"({"n":null})"},
    {"regex sorts options", [](builder& b) { b.append_regex("r", "a/b\"c", "xmi"); },
     R"({"r":{"$regularExpression":{"pattern":"a/b\"c","options":"imx"}}})",
     R"({"r":{"$regularExpression":{"pattern":"a/b\"c","options":"imx"}}})"},
    {"regex options sort by whole UTF-8 characters",
     [](builder& b) { b.append_regex("r", "x", "\xC3\xA9ia"); },
     "{\"r\":{\"$regularExpression\":{\"pattern\":\"x\",\"options\":\"ai\xC3\xA9\"}}}",
     "{\"r\":{\"$regularExpression\":{\"pattern\":\"x\",\"options\":\"ai\xC3\xA9\"}}}"},
    {"regex empty", [](builder& b) { b.append_regex("r", "", ""); },
     R"({"r":{"$regularExpression":{"pattern":"","options":""}}})",
     R"({"r":{"$regularExpression":{"pattern":"","options":""}}})"},
    {"db pointer", [](builder& b) { b.append_db_pointer("p", "db.c\"ol", kId); },
     R"({"p":{"$dbPointer":{"$ref":"db.c\"ol","$id":{"$oid":"57e193d7a9cc81b4027498b5"}}}})",
     R"({"p":{"$dbPointer":{"$ref":"db.c\"ol","$id":{"$oid":"57e193d7a9cc81b4027498b5"}}}})"},
    {"javascript", [](builder& b) { b.append_javascript("c", "function(){\n}"); },
     R"({"c":{"$code":"function(){\n}"}})", R"({"c":{"$code":"function(){\n}"}})"},
    {"symbol", [](builder& b) { b.append_symbol("s", "sym"); }, R"({"s":{"$symbol":"sym"}})",
     R"({"s":{"$symbol":"sym"}})"},
    {"code with scope",
     [](builder& b) {
       builder scope;
       scope.append_int32("x", 1).open_array("y").append_int64("0", 2).close();
       b.append_javascript_with_scope("c", "f()", scope.view()).append_bool("after", true);
     },
     R"~({"c":{"$code":"f()","$scope":{"x":{"$numberInt":"1"},)~"
     R"~("y":[{"$numberLong":"2"}]}},"after":true})~",
     R"~({"c":{"$code":"f()","$scope":{"x":1,"y":[2]}},"after":true})~"},
    {"code with empty scope",
     [](builder& b) { b.append_javascript_with_scope("c", "", oid::bson::document_view{}); },
     R"({"c":{"$code":"","$scope":{}}})", R"({"c":{"$code":"","$scope":{}}})"},
    {"int32 limits",
     [](builder& b) {
       b.append_int32("min", std::numeric_limits<std::int32_t>::min());
       b.append_int32("max", std::numeric_limits<std::int32_t>::max());
     },
     R"({"min":{"$numberInt":"-2147483648"},"max":{"$numberInt":"2147483647"}})",
     R"({"min":-2147483648,"max":2147483647})"},
    {"timestamp",
     [](builder& b) {
       b.append_timestamp("t", {4294967295U, 4294967294U});
     },
     R"({"t":{"$timestamp":{"t":4294967295,"i":4294967294}}})",
     R"({"t":{"$timestamp":{"t":4294967295,"i":4294967294}}})"},
    {"int64 limits",
     [](builder& b) {
       b.append_int64("min", std::numeric_limits<std::int64_t>::min());
       b.append_int64("max", std::numeric_limits<std::int64_t>::max());
     },
     R"({"min":{"$numberLong":"-9223372036854775808"},)"
     R"("max":{"$numberLong":"9223372036854775807"}})",
     R"({"min":-9223372036854775808,"max":9223372036854775807})"},
    {"decimal128",
     [](builder& b) {
       b.append_decimal128("d", oid::bson::decimal128::from_string("-1.23E+400").value());
     },
     R"({"d":{"$numberDecimal":"-1.23E+400"}})", R"({"d":{"$numberDecimal":"-1.23E+400"}})"},
    {"min and max key", [](builder& b) { b.append_min_key("lo").append_max_key("hi"); },
     R"({"lo":{"$minKey":1},"hi":{"$maxKey":1}})", R"({"lo":{"$minKey":1},"hi":{"$maxKey":1}})"},
    {"empty top level", [](builder&) {}, "{}", "{}"},
};

TEST(JsonWriterTest, EveryTypeInBothModes) {
  for (const auto& c : kTypes) {
    SCOPED_TRACE(c.name);
    builder b;
    c.build(b);
    EXPECT_EQ(to_json(b.view(), json_mode::canonical), c.canonical);
    EXPECT_EQ(to_json(b.view(), json_mode::relaxed), c.relaxed);
  }
}

TEST(JsonWriterTest, DefaultModeIsRelaxed) {
  builder b;
  b.append_int32("n", 1);
  EXPECT_EQ(to_json(b.view()), R"({"n":1})");
}

struct double_case {
  double value;
  std::string_view text;
};

// The text of finite doubles (relaxed mode writes it bare).
constexpr double_case kDoubles[] = {
    {0.0, "0.0"},
    {-0.0, "-0.0"},
    {0.5, "0.5"},
    {42.0, "42.0"},
    {0.1, "0.1"},
    {1.0 / 3.0, "0.3333333333333333"},
    {0.0001, "0.0001"},  // decimal exponent -4: still plain
    {0.00001, "1E-5"},   // -5: scientific
    {1.5e-7, "1.5E-7"},
    {123456.789, "123456.789"},
    {1e15, "1000000000000000.0"},
    {9007199254740992.0, "9007199254740992.0"},  // 2^53: past the integer fast path
    {9007199254740994.0, "9007199254740994.0"},
    {1234567890123456.8, "1234567890123456.8"},  // exponent 15: plain
    {1e16, "1E+16"},                             // exponent 16: scientific
    {-1.2345678921232e18, "-1.2345678921232E+18"},
    {4837384839313709000.0, "4.837384839313709E+18"},
    {1.7976931348623157e308, "1.7976931348623157E+308"},
    {2.2250738585072014e-308, "2.2250738585072014E-308"},
    {4.9406564584124654e-324, "5E-324"},
};

TEST(JsonWriterTest, DoublesAreShortestRoundTrip) {
  for (const auto& c : kDoubles) {
    SCOPED_TRACE(c.text);
    builder b;
    b.append_double("d", c.value);
    EXPECT_EQ(to_json(b.view(), json_mode::relaxed), "{\"d\":" + std::string(c.text) + "}");
    EXPECT_EQ(to_json(b.view(), json_mode::canonical),
              "{\"d\":{\"$numberDouble\":\"" + std::string(c.text) + "\"}}");
  }
}

// A reference escaper, byte by byte, for the sweep below.
std::string reference_json_string(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20) {
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 0xF];
      } else {
        out += ch;
      }
    }
  }
  return out + "\"";
}

// Every ASCII byte at every position of strings of every length up to 40, so that each path of
// the writer's scan (16-byte blocks, 8-byte blocks, single bytes) meets each byte at each offset;
// compared with the reference escaper. A two-byte UTF-8 character sits in the filler.
TEST(JsonWriterTest, EscapesEveryAsciiByteAtEveryPositionAndLength) {
  const std::string filler = "abcdefgh\xC3\xA9ijklmnopqrstuvwxyz0123456789ABCD";
  for (std::size_t length = 1; length <= 40; ++length) {
    for (std::size_t pos = 0; pos < length; ++pos) {
      for (int c = 0; c < 0x80; ++c) {
        std::string s = filler.substr(0, length);
        s[pos] = static_cast<char>(c);
        builder b;
        b.append_string("k", s);
        ASSERT_EQ(to_json(b.view()), "{\"k\":" + reference_json_string(s) + "}")
            << "byte " << c << " at " << pos << " of " << length;
      }
    }
  }
}

TEST(JsonWriterTest, EscapesLongRunsOfControlCharacters) {
  std::string s(1000, '\x01');
  s += std::string(1000, '"');
  builder b;
  b.append_string("k", s);
  EXPECT_EQ(to_json(b.view()), "{\"k\":" + reference_json_string(s) + "}");
}

TEST(JsonWriterTest, PrettyPrintsDocumentsAndArraysKeepingWrappersInline) {
  builder b;
  b.append_int32("a", 1);
  b.open_document("b").append_string("c", "d").open_array("e").append_int64("0", 2).close().close();
  b.open_document("empty").close();
  b.open_array("none").close();
  b.append_binary("bin", 0x80, bytes_of("1"));
  oid::bson::json_options canonical{json_mode::canonical, true, 2};
  EXPECT_EQ(to_json(b.view(), canonical),
            "{\n"
            "  \"a\": {\"$numberInt\": \"1\"},\n"
            "  \"b\": {\n"
            "    \"c\": \"d\",\n"
            "    \"e\": [\n"
            "      {\"$numberLong\": \"2\"}\n"
            "    ]\n"
            "  },\n"
            "  \"empty\": {},\n"
            "  \"none\": [],\n"
            "  \"bin\": {\"$binary\": {\"base64\": \"MQ==\", \"subType\": \"80\"}}\n"
            "}");
  oid::bson::json_options relaxed{json_mode::relaxed, true, 4};
  EXPECT_EQ(to_json(b.view(), relaxed),
            "{\n"
            "    \"a\": 1,\n"
            "    \"b\": {\n"
            "        \"c\": \"d\",\n"
            "        \"e\": [\n"
            "            2\n"
            "        ]\n"
            "    },\n"
            "    \"empty\": {},\n"
            "    \"none\": [],\n"
            "    \"bin\": {\"$binary\": {\"base64\": \"MQ==\", \"subType\": \"80\"}}\n"
            "}");
  EXPECT_EQ(to_json(oid::bson::document_view{}, relaxed), "{}");
}

TEST(JsonWriterTest, PrettyCodeWithScopeClosesBothObjects) {
  builder scope;
  scope.append_int32("x", 1);
  builder b;
  b.append_javascript_with_scope("c", "f", scope.view());
  EXPECT_EQ(to_json(b.view(), oid::bson::json_options{json_mode::relaxed, true, 1}),
            "{\n \"c\": {\"$code\": \"f\", \"$scope\": {\n  \"x\": 1\n }}\n}");
}

TEST(JsonWriterTest, AppendsToExistingText) {
  builder one, two;
  one.append_int32("a", 1);
  two.append_string("b", "x");
  std::string out = "[";
  to_json(one.view(), json_mode::canonical, out);
  out += ',';
  to_json(two.view(), json_mode::canonical, out);
  out += ']';
  EXPECT_EQ(out, R"([{"a":{"$numberInt":"1"}},{"b":"x"}])");
}

TEST(JsonWriterTest, GrowsFromAnEmptyBufferForLargeOutput) {
  // Many small elements that expand (canonical int32 is ~10x its BSON size) force the buffer to
  // grow several times past its initial guess.
  builder b;
  std::string want = "{";
  for (int i = 0; i < 5000; ++i) {
    const std::string key = std::to_string(i);
    b.append_int32(key, i);
    if (i != 0) want += ',';
    want += "\"" + key + "\":{\"$numberInt\":\"" + key + "\"}";
  }
  want += '}';
  EXPECT_EQ(to_json(b.view(), json_mode::canonical), want);
}

TEST(JsonWriterTest, DeepNestingUsesNoCallStack) {
  // Deeper than the writer's inline stack of 32 frames and than validation's default limit.
  constexpr int depth = 1000;
  builder b;
  for (int i = 0; i < depth; ++i) (i % 2 == 0) ? b.open_array("a") : b.open_document("0");
  for (int i = 0; i < depth; ++i) b.close();
  std::string want = "{";
  for (int i = 0; i < depth; ++i) want += (i % 2 == 0) ? "\"a\":[" : "{";
  for (int i = depth - 1; i >= 0; --i) want += (i % 2 == 0) ? "]" : "}";
  want += '}';
  // Documents nested in arrays sit under the key "0", which arrays do not print.
  EXPECT_EQ(to_json(b.view()), want);
}

}  // namespace
