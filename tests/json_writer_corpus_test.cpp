// The writer's half of MongoDB's BSON corpus: for every `valid` case, the BSON (canonical,
// degenerate and converted forms) validates and `to_json` writes exactly the corpus's canonical
// and relaxed Extended JSON.
//
// The corpus strings use their own spacing (`{"a" : 1}`, `{"a":1}`) and escape every non-ASCII
// character as \uXXXX. Its specification asks runners to normalise, so both sides go through
// `normalise()` below: whitespace outside strings is removed and every string is re-escaped the
// one way oid writes strings (\" \\ \b \f \n \r \t, other control characters as \u00XX, all else
// as UTF-8). Numbers, key order and everything else are compared byte for byte, so oid's output
// (compact, no whitespace) must equal the normalised corpus text exactly.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/ci.hpp"
#include "support/hex.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::testing::hex_bytes;
using oid::testing::hex_digit;

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void append_escaped(std::string& out, std::string_view raw) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : raw) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    } else {
      out += ch;
    }
  }
  out += '"';
}

// Whitespace outside strings removed, strings decoded and re-escaped one way. Assumes the text is
// JSON (the corpus's is; oid's is checked by the tests that compare it).
std::string normalise(std::string_view json) {
  std::string out;
  std::size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      ++i;
      continue;
    }
    if (c != '"') {
      out += c;
      ++i;
      continue;
    }
    std::string raw;
    for (++i; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] != '\\') {
        raw += json[i];
        continue;
      }
      const char e = json[++i];
      switch (e) {
      case 'b': raw += '\b'; break;
      case 'f': raw += '\f'; break;
      case 'n': raw += '\n'; break;
      case 'r': raw += '\r'; break;
      case 't': raw += '\t'; break;
      case 'u': {
        std::uint32_t cp = 0;
        for (int k = 1; k <= 4; ++k)
          cp = cp << 4 | static_cast<std::uint32_t>(hex_digit(json[i + k]));
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && json.substr(i + 1, 2) == "\\u") {
          std::uint32_t low = 0;
          for (int k = 3; k <= 6; ++k)
            low = low << 4 | static_cast<std::uint32_t>(hex_digit(json[i + k]));
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        append_utf8(raw, cp);
        break;
      }
      default: raw += e;  // \" \\ \/
      }
    }
    ++i;  // the closing quote
    append_escaped(out, raw);
  }
  return out;
}

TEST(JsonWriterCorpusTest, NormaliseRemovesSpacingAndUnifiesEscapes) {
  EXPECT_EQ(normalise(R"({"a" : {"$x" : "\u00e9\u0001\/\"\ud83d\ude00 b"}})"),
            "{\"a\":{\"$x\":\"\xC3\xA9\\u0001/\\\"\xF0\x9F\x98\x80 b\"}}");
}

struct tally {
  int cases = 0;
  int checks = 0;
  int passed = 0;
  std::vector<std::string> failures;
};

// Validates `hex` as BSON and compares to_json in `mode` with the normalised `want`.
void check(tally& t, const std::string& where, std::string_view hex, std::string_view want,
           oid::bson::json_mode mode) {
  ++t.checks;
  const std::vector<std::uint8_t> bytes = hex_bytes(hex);  // bad hex in the corpus throws
  const auto doc = oid::bson::validate(bytes);
  if (!doc) {
    t.failures.push_back(where + ": validation failed: " + doc.error().message() + " at " +
                         std::to_string(doc.error().offset));
    return;
  }
  const std::string got = oid::bson::to_json(*doc, mode);
  const std::string expected = normalise(want);
  if (got != expected) {
    t.failures.push_back(where + ":\n    got  " + got + "\n    want " + expected);
    return;
  }
  ++t.passed;
}

TEST(JsonWriterCorpusTest, EveryValidCaseWritesTheCorpusJson) {
  const auto dir = oid::testing::bson_corpus_dir();
  const auto files = oid::testing::json_files(dir);
  if (files.empty()) OID_SKIP_OR_FAIL_IN_CI("BSON corpus not found at " << dir);

  using oid::bson::json_mode;
  simdjson::dom::parser parser;
  tally t;
  for (const auto& path : files) {
    simdjson::dom::element root;
    ASSERT_EQ(parser.load(path.string()).get(root), simdjson::SUCCESS) << path;
    simdjson::dom::array cases;
    if (root["valid"].get_array().get(cases) != simdjson::SUCCESS) continue;
    for (simdjson::dom::element c : cases) {
      ++t.cases;
      std::string_view description, cb, cej;
      ASSERT_EQ(c["description"].get_string().get(description), simdjson::SUCCESS);
      ASSERT_EQ(c["canonical_bson"].get_string().get(cb), simdjson::SUCCESS);
      ASSERT_EQ(c["canonical_extjson"].get_string().get(cej), simdjson::SUCCESS);
      const std::string where = path.filename().string() + " [" + std::string(description) + "]";
      std::string_view rej, db, conv_b, conv_ej;
      const bool has_relaxed = c["relaxed_extjson"].get_string().get(rej) == simdjson::SUCCESS;
      const bool has_degenerate = c["degenerate_bson"].get_string().get(db) == simdjson::SUCCESS;

      // cB -> cEJ and cB -> rEJ (lossy cases too: lossiness is about reading the JSON back).
      check(t, where + " cB->cEJ", cb, cej, json_mode::canonical);
      if (has_relaxed) check(t, where + " cB->rEJ", cb, rej, json_mode::relaxed);
      // dB -> cEJ and dB -> rEJ.
      if (has_degenerate) {
        check(t, where + " dB->cEJ", db, cej, json_mode::canonical);
        if (has_relaxed) check(t, where + " dB->rEJ", db, rej, json_mode::relaxed);
      }
      // The converted forms of deprecated types are a BSON/JSON pair as well.
      if (c["converted_bson"].get_string().get(conv_b) == simdjson::SUCCESS &&
          c["converted_extjson"].get_string().get(conv_ej) == simdjson::SUCCESS) {
        check(t, where + " convB->convEJ", conv_b, conv_ej, json_mode::canonical);
      }
    }
  }
  std::printf("writer corpus: %d files, %d valid cases, %d checks, %d passed\n",
              static_cast<int>(files.size()), t.cases, t.checks, t.passed);
  for (const auto& f : t.failures) ADD_FAILURE() << f;
  EXPECT_GT(t.cases, 0);
  EXPECT_EQ(t.passed, t.checks);
}

}  // namespace
