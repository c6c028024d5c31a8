// The CSV/TSV codec of `oid mongo export` and `import` (cli/mongo/csv.hpp), without a server:
// RFC 4180 quoting both ways, the reader's error positions, and typed, dotted columns.
#include <gtest/gtest.h>

#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mongo/csv.hpp"

namespace {

using oid::cli::csv_columns;
using oid::cli::csv_reader;

using records = std::vector<std::vector<std::string>>;

// Every record of `text`, and the errors, in order.
struct read_all {
  records got;
  std::vector<std::string> errors;
};
read_all read(const std::string& text, char separator = ',', bool quotes = true) {
  std::istringstream in(text);
  csv_reader reader(in, separator, quotes);
  read_all out;
  std::vector<std::string> fields;
  while (true) {
    auto r = reader.next(fields);
    if (!r) {
      out.errors.push_back(r.error());
      continue;
    }
    if (!*r) break;
    out.got.push_back(fields);
  }
  return out;
}

TEST(CliCsvTest, QuotedFieldsHoldSeparatorsQuotesAndLineBreaks) {
  const auto r = read("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",,x\n");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.got, (records{{"a", "b,c", "say \"hi\""}, {"two\nlines", "", "x"}}));
  // The last record needs no line break; an empty line is one empty field.
  EXPECT_EQ(read("1,2\n\n3").got, (records{{"1", "2"}, {""}, {"3"}}));
}

TEST(CliCsvTest, MalformedRecordsSayWhereAndTheNextRecordIsRead) {
  auto r = read("a,b\"c\nd,\"e\"f\ng\n\"open");
  EXPECT_EQ(r.errors,
            (std::vector<std::string>{"line 1, column 4: a quote inside an unquoted field",
                                      "line 2, column 6: text after a closing quote",
                                      "line 4, column 1: a quoted field is never closed"}));
  EXPECT_EQ(r.got, (records{{"g"}}));
}

TEST(CliCsvTest, TsvTakesQuotesAsText) {
  const auto r = read("a\t\"b\"\tc d\n", '\t', false);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.got, (records{{"a", "\"b\"", "c d"}}));
}

TEST(CliCsvTest, FieldPositionsNameLineAndColumn) {
  std::istringstream in("x,y\n\"multi\nline\",second\n");
  csv_reader reader(in, ',', true);
  std::vector<std::string> fields;
  ASSERT_TRUE(reader.next(fields).value_or(false));
  ASSERT_TRUE(reader.next(fields).value_or(false));
  EXPECT_EQ(reader.record_line(), 2u);
  EXPECT_EQ(reader.field_position(0), "line 2, column 1");
  EXPECT_EQ(reader.field_position(1), "line 3, column 7");
}

TEST(CliCsvTest, WritingQuotesOnlyWhatMustBeQuoted) {
  std::string line;
  oid::cli::append_csv_text("plain", line);
  line += ',';
  oid::cli::append_csv_text("a,b", line);
  line += ',';
  oid::cli::append_csv_text("say \"hi\"", line);
  line += ',';
  oid::cli::append_csv_text("two\nlines", line);
  EXPECT_EQ(line, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"");
  // What was written reads back as it was.
  EXPECT_EQ(read(line + "\n").got, (records{{"plain", "a,b", "say \"hi\"", "two\nlines"}}));
}

TEST(CliCsvTest, ValuesAsMongoexportWritesThem) {
  const auto doc = oid::bson::from_json(R"({"s": "x,y", "id": {"$oid": "0123456789abcdef01234567"},
                               "n": 5, "d": {"e": [1, {"f": true}]}, "z": null})")
                       .value();
  std::string line;
  for (const char* path : {"s", "id", "n", "d.e.1.f", "d.e", "z", "missing"}) {
    oid::cli::append_csv_value(oid::cli::at_path(doc.view(), path), line);
    line += '|';
  }
  EXPECT_EQ(line, "\"x,y\"|ObjectId(0123456789abcdef01234567)|5|true|\"[1,{\"\"f\"\":true}]\"|||");
}

TEST(CliCsvTest, UntypedValuesAreNumbersWhenTheyLookLikeOnes) {
  oid::bson::builder b;
  for (const auto& [key, v] :
       std::vector<std::pair<std::string, std::string>>{{"a", "42"},
                                                        {"b", "-7"},
                                                        {"c", "9999999999"},
                                                        {"d", "2.5"},
                                                        {"e", "1e3"},
                                                        {"f", "12abc"},
                                                        {"g", ""},
                                                        {"h", "+"},
                                                        {"i", "99999999999999999999999"}}) {
    oid::cli::append_csv_field(b, key, v);
  }
  EXPECT_EQ(oid::bson::to_json(b.view(), oid::bson::json_mode::canonical),
            R"({"a":{"$numberInt":"42"},"b":{"$numberInt":"-7"},)"
            R"("c":{"$numberLong":"9999999999"},"d":{"$numberDouble":"2.5"},)"
            R"("e":{"$numberDouble":"1000.0"},"f":"12abc","g":"","h":"+",)"
            R"("i":"99999999999999999999999"})");
}

TEST(CliCsvTest, TypedDottedColumnsBuildNestedDocuments) {
  csv_columns columns;
  ASSERT_TRUE(columns
                  .parse({"name.string()", "age.int32()", "addr.city.string()", "big.int64()",
                          "ok.boolean()", "when.date(2006-01-02)", "raw.binary(hex)",
                          "addr.zip.auto()", "price.decimal()", "ratio.double()"},
                         true)
                  .has_value());
  oid::bson::builder b;
  ASSERT_TRUE(columns
                  .build({"ada", "36", "Paris", "9000000000", "T", "2024-02-29", "cafe", "75001",
                          "1.10", "+0.5"},
                         b)
                  .has_value());
  EXPECT_EQ(oid::bson::to_json(b.view(), oid::bson::json_mode::canonical),
            R"({"name":"ada","age":{"$numberInt":"36"},)"
            R"("addr":{"city":"Paris","zip":{"$numberInt":"75001"}},)"
            R"("big":{"$numberLong":"9000000000"},"ok":true,)"
            R"("when":{"$date":{"$numberLong":"1709164800000"}},)"
            R"("raw":{"$binary":{"base64":"yv4=","subType":"00"}},)"
            R"("price":{"$numberDecimal":"1.10"},"ratio":{"$numberDouble":"0.5"}})");
  // A short record leaves out what it lacks, subdocuments included.
  oid::bson::builder shorter;
  ASSERT_TRUE(columns.build({"bob", "7"}, shorter).has_value());
  EXPECT_EQ(oid::bson::to_json(shorter.view()), R"({"name":"bob","age":7})");
}

TEST(CliCsvTest, AValueThatIsNotItsTypeIsItsFieldsIndex) {
  csv_columns columns;
  ASSERT_TRUE(
      columns.parse({"a.int32()", "b.boolean()", "c.date_ms(yyyy-MM-dd)"}, true).has_value());
  for (const auto& [record, bad] : std::vector<std::pair<std::vector<std::string>, std::size_t>>{
           {{"x", "true", "2024-01-01"}, 0},
           {{"3000000000", "true", "2024-01-01"}, 0},
           {{"1", "yes", "2024-01-01"}, 1},
           {{"1", "false", "2024-13-01"}, 2}}) {
    oid::bson::builder b;
    auto r = columns.build(record, b);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), bad);
  }
}

TEST(CliCsvTest, BadColumnNamesAreRefusedWithTheirIndex) {
  struct refused {
    std::vector<std::string> names;
    bool typed;
    std::size_t index;
    std::string message;
  };
  for (const auto& c : std::vector<refused>{
           {{"a", "b..c"}, false, 1, "\"b..c\": an empty field name"},
           {{"a", "a"}, false, 1, "\"a\" and \"a\" (column 1) name the same field"},
           {{"a", "a.b"},
            false,
            1,
            "\"a.b\" and \"a\" (column 1) make a field both a value and a document"},
           {{"a"}, true, 0, "\"a\" has no type (--columnsHaveTypes: NAME.TYPE(), e.g. a.string())"},
           {{"x.int32()", "a.nope()"},
            true,
            1,
            "\"a.nope()\": unknown type nope() (auto, binary, boolean, date, date_go, date_ms, "
            "date_oracle, decimal, double, int32, int64, string)"},
           {{"a.binary(rot13)"},
            true,
            0,
            "\"a.binary(rot13)\": binary() takes base64, base32 or hex"},
           {{"a.date()"},
            true,
            0,
            "\"a.date()\": date() needs a layout, e.g. date(2006-01-02T15:04:05Z07:00)"},
           {{"a.int32(7)"}, true, 0, "\"a.int32(7)\": int32() takes no argument"}}) {
    csv_columns columns;
    auto r = columns.parse(c.names, c.typed);
    ASSERT_FALSE(r.has_value()) << c.message;
    EXPECT_EQ(r.error().index, c.index);
    EXPECT_EQ(r.error().message, c.message);
  }
}

// A header someone else wrote: a name nested deeper than MongoDB's documents may be (100 levels)
// is refused, rather than planned by a recursion as deep as the name is long (which a header of
// "a.a.a..." over a few hundred kilobytes overflowed the stack with; fuzz_csv found it).
TEST(CliCsvTest, ANameNestedDeeperThanADocumentMayBeIsRefused) {
  const auto nested = [](std::size_t parts) {
    std::string name = "a";
    for (std::size_t i = 1; i < parts; ++i) name += ".a";
    return name;
  };
  csv_columns columns;
  ASSERT_TRUE(columns.parse({"x", nested(oid::cli::max_column_parts)}, false).has_value());
  oid::bson::builder b;
  ASSERT_TRUE(columns.build({"1", "2"}, b).has_value());
  EXPECT_TRUE(oid::bson::validate(b.view().bytes()).has_value());
  for (const std::size_t parts : {oid::cli::max_column_parts + 1, std::size_t{400000}}) {
    SCOPED_TRACE(parts);
    auto r = columns.parse({"x", nested(parts)}, false);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().index, 1u);
    EXPECT_EQ(r.error().message,
              "a name of more than 100 dotted parts (documents nest at most 100 deep)");
  }
}

// A BSON key cannot hold a NUL byte: a header with one is refused where it is, rather than
// build() throwing (the builder refuses the key) and import stopping with "invalid key" and no
// line (fuzz_csv found it).
TEST(CliCsvTest, ANameWithANulByteIsRefused) {
  for (const auto& [names, typed] : std::vector<std::pair<std::vector<std::string>, bool>>{
           {{"a", std::string("b\0c", 3)}, false},
           {{"a", std::string("b.c\0", 4)}, false},
           {{"a.int32()", std::string("b\0.string()", 11)}, true}}) {
    SCOPED_TRACE(names[1].size());
    csv_columns columns;
    auto r = columns.parse(names, typed);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().index, 1u);
    EXPECT_EQ(r.error().message, "a NUL byte in a field name (BSON keys cannot hold one)");
  }
}

}  // namespace
