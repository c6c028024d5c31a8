// The Extended JSON stream reader: both forms (a sequence of objects, one JSON array), every
// layout of the sequence (one a line, pretty-printed, several a line), errors with absolute
// offsets and line/column across buffer refills, which errors it resumes after, and its limit.
#include <gtest/gtest.h>

#include <oid/bson/json_stream_reader.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace {

using oid::errc;
using oid::bson::document;
using oid::bson::json_stream_reader;
using oid::bson::position_of;
using oid::bson::text_position;

// Every document of `text` (as the values of their "a" keys), or the first error's code.
struct read_all {
  std::vector<int> values;
  std::vector<std::tuple<std::error_code, std::size_t, text_position>> errors;
  bool stopped = false;  // an error the reader could not resume from
};

read_all read(const std::string& text, std::size_t max_text = 64 * 1024 * 1024) {
  std::istringstream in(text);
  json_stream_reader reader(in, {}, max_text);
  read_all r;
  document doc;
  for (;;) {
    const auto more = reader.next(doc);
    if (!more) {
      r.errors.emplace_back(more.error().code, more.error().offset, reader.error_position());
      if (!reader.can_continue()) {
        r.stopped = true;
        break;
      }
      continue;
    }
    if (!*more) break;
    const auto a = doc.view().find("a");
    r.values.push_back(a ? a->get_int32().value_or(-1) : -1);
  }
  return r;
}

TEST(JsonStreamReaderTest, OnePerLineWithErrors) {
  std::istringstream in(
      "{\"a\": 1}\n  {\"a\": 2} {\"a\":\n 3}\n{\"a\": x}\n{\"a\": \"cut\n{\"a\": 4}\n");
  json_stream_reader reader(in);
  document doc;
  std::vector<int> seen;
  std::vector<std::tuple<std::error_code, std::size_t, std::size_t, std::size_t>> errors;
  for (;;) {
    auto more = reader.next(doc);
    if (!more) {
      errors.emplace_back(more.error().code, more.error().offset, reader.error_position().line,
                          reader.error_position().column);
      ASSERT_TRUE(reader.can_continue());
      continue;
    }
    if (!*more) break;
    seen.push_back(*doc.view().find("a")->get_int32());
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0],
            std::make_tuple(errc::invalid_json, std::size_t{36}, std::size_t{4}, std::size_t{7}));
  EXPECT_EQ(errors[1],
            std::make_tuple(errc::invalid_json, std::size_t{49}, std::size_t{5}, std::size_t{11}));
  EXPECT_EQ(reader.bytes_read(), in.str().size());
}

TEST(JsonStreamReaderTest, EveryLayoutGivesTheSameDocuments) {
  const std::vector<int> want{1, 2, 3};
  struct layout {
    const char* name;
    const char* text;
  };
  constexpr layout layouts[] = {
      {"one a line", "{\"a\": 1}\n{\"a\": 2}\r\n{\"a\": 3}"},
      {"pretty", "{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}\n{\n  \"a\": 3\n}\n"},
      {"several a line", "{\"a\": 1} {\"a\": 2}{\"a\": 3}\n"},
      {"split inside", "{\"a\": 1, \"s\": \"x}\"\n}{\"a\"\n: 2} {\"a\": 3}  \n\n"},
      {"array, one a line", "[\n{\"a\": 1},\n{\"a\": 2} ,\n{\"a\": 3}\n]\n"},
      {"array, one line", "[{\"a\": 1},{\"a\": 2}, {\"a\": 3}]"},
      {"array, bracket after", "[{\"a\": 1},\n{\"a\": 2},\n{\"a\": 3}]\n"},
  };
  for (const auto& l : layouts) {
    SCOPED_TRACE(l.name);
    const read_all r = read(l.text);
    EXPECT_EQ(r.values, want);
    EXPECT_TRUE(r.errors.empty());
  }
}

TEST(JsonStreamReaderTest, TextAfterADocumentOnItsLine) {
  // The line is not one document, so the reader finds the object's own end: then the comma is
  // text between documents, and the rest of its line is skipped.
  const read_all r = read("{\"a\": 1},{\"a\": 9}\n{\"a\": 2}\n");
  EXPECT_EQ(r.values, (std::vector<int>{1, 2}));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], std::make_tuple(errc::invalid_json, std::size_t{8}, text_position{1, 9}));
  EXPECT_FALSE(r.stopped);
}

TEST(JsonStreamReaderTest, PositionsAcrossRefills) {
  // Far more than the reader's buffer, with multi-byte characters on every line, and errors at
  // the start, the middle and the end: each position is what position_of() says for the whole
  // text, and each offset is absolute.
  std::string text;
  std::vector<std::size_t> bad_at;
  for (int i = 0; i < 100000; ++i) {
    if (i == 3 || i == 50001 || i == 99999) {
      bad_at.push_back(text.size() + 20);  // at "tru"
      text += "{\"s\": \"\xc3\xa9\xe2\x82\xac\", \"a\": tru}\n";
    } else {
      text += "{\"s\": \"\xc3\xa9\xe2\x82\xac\", \"a\": " + std::to_string(i) + "}\n";
    }
    if (i % 1000 == 0) text += "\n  \t";  // blank lines, and a line that starts with blanks
  }
  ASSERT_GT(text.size(), std::size_t{2} << 20);
  const read_all r = read(text);
  EXPECT_EQ(r.values.size(), 100000u - 3);
  ASSERT_EQ(r.errors.size(), bad_at.size());
  for (std::size_t i = 0; i < bad_at.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(std::get<0>(r.errors[i]), errc::invalid_json);
    EXPECT_EQ(std::get<1>(r.errors[i]), bad_at[i]);
    EXPECT_EQ(std::get<2>(r.errors[i]), position_of(text, bad_at[i]));
  }
}

TEST(JsonStreamReaderTest, LongLinesOfManyDocuments) {
  // One line of many documents, longer than the buffer: read in bounded memory, each once.
  std::string text = "[";
  std::string seq;
  for (int i = 0; i < 100000; ++i) {
    const std::string d = "{\"a\": " + std::to_string(i) + ", \"pad\": \"" +
                          std::string(static_cast<std::size_t>(i % 17), 'x') + "\"}";
    text += (i ? "," : "") + d;
    seq += d + ' ';
  }
  text += "]";
  for (const std::string* t : {&text, &seq}) {
    const read_all r = read(*t);
    ASSERT_EQ(r.values.size(), 100000u);
    EXPECT_TRUE(r.errors.empty());
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(r.values[static_cast<std::size_t>(i)], i);
  }
}

TEST(JsonStreamReaderTest, ArrayForm) {
  std::istringstream in(" [ {\"a\": 1} ,\n{\"a\": {\"$numberLong\": \"2\"}} ] \n");
  json_stream_reader reader(in);
  document doc;
  int n = 0;
  for (;;) {
    auto more = reader.next(doc);
    ASSERT_TRUE(more.has_value()) << more.error().message();
    if (!*more) break;
    ++n;
  }
  EXPECT_EQ(n, 2);

  for (std::string_view bad : {"[{}", "[{} {}]", "[{}] {}", "[1]", "[{},\n{}]x\n", "[{}\n]]"}) {
    SCOPED_TRACE(std::string(bad));
    std::istringstream s{std::string(bad)};
    json_stream_reader r(s);
    bool failed = false;
    for (int i = 0; i < 5 && !failed; ++i) {
      auto more = r.next(doc);
      if (!more)
        failed = true;
      else if (!*more)
        break;
    }
    EXPECT_TRUE(failed);
    EXPECT_FALSE(r.can_continue());
  }
  std::istringstream empty_array("[]"), nothing("  \n");
  EXPECT_FALSE(*json_stream_reader(empty_array).next(doc));
  EXPECT_FALSE(*json_stream_reader(nothing).next(doc));
}

TEST(JsonStreamReaderTest, DocumentLongerThanTheLimit) {
  std::istringstream in("{\"a\": \"" + std::string(100, 'x') + "\"}\n{}\n");
  json_stream_reader reader(in, {}, 64);
  document doc;
  const auto r = reader.next(doc);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::too_large);
  EXPECT_FALSE(reader.can_continue());

  // Documents that fit are read with the same small buffer, one line or many.
  const read_all ok = read("{\"a\": 1}\n{\"a\":\n2}\n{\"a\": 3} {\"a\": 4}", 16);
  EXPECT_EQ(ok.values, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_TRUE(ok.errors.empty());
}

}  // namespace
