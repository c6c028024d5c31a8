// decimal128 text conversion: own tables for each rule, then every decimal128 case of MongoDB's
// BSON corpus (valid cases both ways, parse errors rejected).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <oid/bson/decimal128.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/ci.hpp"
#include "support/hex.hpp"
#include "support/matchers.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::bson::decimal128;
using oid::testing::HasErrorAt;

constexpr std::uint64_t kPositiveZeroHigh = 0x3040000000000000ULL;  // exponent 0, sign +

struct bits_case {
  std::string_view name;
  std::uint64_t high, low;
  std::string_view text;
};

// Canonical encodings and their canonical strings: each row is checked in both directions.
constexpr bits_case kCanonical[] = {
    {"zero", 0x3040000000000000ULL, 0, "0"},
    {"negative zero", 0xB040000000000000ULL, 0, "-0"},
    {"one", 0x3040000000000000ULL, 1, "1"},
    {"minus one", 0xB040000000000000ULL, 1, "-1"},
    {"0.1", 0x303E000000000000ULL, 1, "0.1"},
    {"1.00 keeps its precision", 0x303C000000000000ULL, 100, "1.00"},
    {"12.34", 0x303C000000000000ULL, 1234, "12.34"},
    {"0.001234", 0x3034000000000000ULL, 1234, "0.001234"},
    {"adjusted exponent -6 is plain", 0x3034000000000000ULL, 1, "0.000001"},
    {"adjusted exponent -7 is scientific", 0x3032000000000000ULL, 1, "1E-7"},
    {"positive exponent is scientific", 0x3042000000000000ULL, 1, "1E+1"},
    {"digits with positive exponent", 0x3046000000000000ULL, 123, "1.23E+5"},
    {"zero with positive exponent", 0x3046000000000000ULL, 0, "0E+3"},
    {"zero with small exponent", 0x3032000000000000ULL, 0, "0E-7"},
    {"zero keeps its fraction digits", 0x3034000000000000ULL, 0, "0.000000"},
    {"negative zero with fraction", 0xB03C000000000000ULL, 0, "-0.00"},
    {"smallest exponent", 0x0000000000000000ULL, 1, "1E-6176"},
    {"negative smallest zero", 0x8000000000000000ULL, 0, "-0E-6176"},
    {"largest exponent zero", 0x5FFE000000000000ULL, 0, "0E+6111"},
    {"largest value", 0x5FFFED09BEAD87C0ULL, 0x378D8E63FFFFFFFFULL,
     "9.999999999999999999999999999999999E+6144"},
    {"34 digits", 0x3041ED09BEAD87C0ULL, 0x378D8E63FFFFFFFFULL,
     "9999999999999999999999999999999999"},
    {"2^64 needs the high word", 0x3040000000000001ULL, 0, "18446744073709551616"},
    {"2^64 - 1 fits the low word", 0x3040000000000000ULL, 0xFFFFFFFFFFFFFFFFULL,
     "18446744073709551615"},
    {"10^19 splits exactly", 0x3040000000000000ULL, 10'000'000'000'000'000'000ULL,
     "10000000000000000000"},
    {"inner zeros after the split", 0x304000000052B7D2ULL, 0xDCC80CD2E4000001ULL,
     "100000000000000000000000001"},
    {"Infinity", 0x7800000000000000ULL, 0, "Infinity"},
    {"-Infinity", 0xF800000000000000ULL, 0, "-Infinity"},
    {"NaN", 0x7C00000000000000ULL, 0, "NaN"},
};

TEST(Decimal128Test, CanonicalEncodingsRoundTrip) {
  for (const auto& c : kCanonical) {
    SCOPED_TRACE(c.name);
    const decimal128 d{c.low, c.high};
    EXPECT_EQ(d.to_string(), c.text);
    const auto parsed = decimal128::from_string(c.text);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().offset;
    EXPECT_EQ(parsed->high, c.high);
    EXPECT_EQ(parsed->low, c.low);
  }
}

// Encodings that are not canonical: written as the specification says, never parsed back to them.
constexpr bits_case kNonCanonical[] = {
    {"negative NaN loses its sign", 0xFC00000000000000ULL, 0, "NaN"},
    {"signalling NaN", 0x7E00000000000000ULL, 0, "NaN"},
    {"NaN payload", 0x7C00000000000000ULL, 12, "NaN"},
    {"Infinity with junk bits", 0x7800000000001234ULL, 99, "Infinity"},
    {"coefficient 10^34 reads as zero", 0x3041ED09BEAD87C0ULL, 0x378D8E6400000000ULL, "0"},
    {"largest 113-bit coefficient reads as zero", 0xB041FFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL,
     "-0"},
    {"11 form reads as zero with its exponent", 0x6C11FFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL,
     "0E+3"},
    {"11 form smallest exponent", 0x6000000000000000ULL, 0, "0E-6176"},
};

TEST(Decimal128Test, NonCanonicalEncodingsWriteAsTheSpecificationSays) {
  for (const auto& c : kNonCanonical) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ((decimal128{c.low, c.high}.to_string()), c.text);
  }
}

struct parse_case {
  std::string_view name, input;
  std::uint64_t high, low;
};

// Other spellings of values, parsed to the canonical encoding.
constexpr parse_case kSpellings[] = {
    {"plus sign", "+1", 0x3040000000000000ULL, 1},
    {"leading zeros", "-00012.50", 0xB03C000000000000ULL, 1250},
    {"lower-case e", "1e3", 0x3046000000000000ULL, 1},
    {"exponent without sign", "1E3", 0x3046000000000000ULL, 1},
    {"exponent -0", "1.5E-0", 0x303E000000000000ULL, 15},
    {"point at the end", "7.", 0x3040000000000000ULL, 7},
    {"point at the start", ".5", 0x303E000000000000ULL, 5},
    {"zeros only", "000.000", 0x303A000000000000ULL, 0},
    {"exponent with leading zeros", "1E+0000000000000000000000000002", 0x3044000000000000ULL, 1},
    {"inf", "inf", 0x7800000000000000ULL, 0},
    {"mixed-case -INFinity", "-INFinity", 0xF800000000000000ULL, 0},
    {"+Inf", "+Inf", 0x7800000000000000ULL, 0},
    {"nan", "nan", 0x7C00000000000000ULL, 0},
    {"-NaN loses its sign", "-NaN", 0x7C00000000000000ULL, 0},
    {"huge zero exponent clamps", "0E+99999999999999999999999", 0x5FFE000000000000ULL, 0},
    {"tiny zero exponent clamps", "-0E-99999999999999999999999", 0x8000000000000000ULL, 0},
    {"clamping pads with zeros", "1E+6112", 0x5FFE000000000000ULL, 10},
    {"clamping to 34 digits", "1E+6144", 0x5FFE314DC6448D93ULL, 0x38C15B0A00000000ULL},
    {"trailing zeros beyond 34 digits", "12345678901234567890123456789012340000",
     0x30483CDE6FFF9732ULL, 0xDE825CD07E96AFF2ULL},
    {"trailing zeros absorb a small exponent", "10E-6177", 0x0000000000000000ULL, 1},
    {"many leading fraction zeros", "0.0000000000000000000000000000000000000000001",
     0x2FEA000000000000ULL, 1},
};

TEST(Decimal128Test, ParsesOtherSpellingsToCanonicalBits) {
  for (const auto& c : kSpellings) {
    SCOPED_TRACE(c.name);
    const auto r = decimal128::from_string(c.input);
    ASSERT_TRUE(r.has_value()) << r.error().offset;
    EXPECT_EQ(r->high, c.high);
    EXPECT_EQ(r->low, c.low);
  }
}

struct error_case {
  std::string_view name, input;
  std::size_t offset;
};

constexpr error_case kErrors[] = {
    {"empty", "", 0},
    {"sign only", "-", 1},
    {"point only", ".", 1},
    {"two points", "1.2.3", 3},
    {"two signs", "+-1", 1},
    {"leading space", " 1", 0},
    {"trailing space", "1 ", 1},
    {"exponent without digits", "1e", 2},
    {"exponent sign without digits", "1E+", 3},
    {"two exponent signs", "1E+-1", 3},
    {"exponent with a point", "1E1.5", 3},
    {"letters after digits", "1.23abc", 4},
    {"Infinity prefix", "Infi", 0},
    {"Infinity with trailing text", "-Infinityx", 1},
    {"NaN with a suffix", "NaNq", 0},
    {"sNaN is not accepted", "sNaN", 0},
    {"digit before Inf", "9Inf", 1},
    {"point before NaN", ".NaN", 1},
    {"non-ASCII byte", "1\xC8", 1},
    {"embedded NUL", std::string_view("1\0", 2), 1},
    {"syntax error wins over rounding", "12345678901234567890123456789012345x", 35},
    {"overflow", "1E+6145", 0},
    {"huge exponent", "7e10000", 0},
    {"saturated exponent", "1E+99999999999999999999999999", 0},
    {"rounding needed: 35 digits", "12345678901234567890123456789012345", 0},
    {"rounding needed: long tail", "100000000000000000000000000000000000000000000000000000000001",
     0},
    {"underflow", "1E-6177", 0},
    {"underflow with digits", "1.5E-6176", 0},
};

TEST(Decimal128Test, RejectsWithCodeAndOffset) {
  for (const auto& c : kErrors) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decimal128::from_string(c.input),
                HasErrorAt(oid::errc::invalid_decimal128, c.offset));
  }
}

TEST(Decimal128Test, ToCharsReportsAShortBuffer) {
  const decimal128 largest{0x378D8E63FFFFFFFFULL, 0xDFFFED09BEAD87C0ULL};
  std::array<char, decimal128::max_string_length> buf{};
  const auto ok = largest.to_chars(buf.data(), buf.data() + buf.size());
  ASSERT_EQ(ok.ec, std::errc{});
  const std::string_view text(buf.data(), static_cast<std::size_t>(ok.ptr - buf.data()));
  EXPECT_EQ(text, "-9.999999999999999999999999999999999E+6144");
  EXPECT_EQ(text.size(), decimal128::max_string_length);

  const auto short_by_one = largest.to_chars(buf.data(), buf.data() + buf.size() - 1);
  EXPECT_EQ(short_by_one.ec, std::errc::value_too_large);
  EXPECT_EQ(short_by_one.ptr, buf.data() + buf.size() - 1);
}

TEST(Decimal128Test, Classification) {
  EXPECT_TRUE((decimal128{0, 0xFE00000000000000ULL}.is_nan()));
  EXPECT_FALSE((decimal128{0, 0xFE00000000000000ULL}.is_infinity()));
  EXPECT_TRUE((decimal128{0, 0xF800000000000000ULL}.is_infinity()));
  EXPECT_TRUE((decimal128{0, 0xF800000000000000ULL}.is_negative()));
  EXPECT_FALSE((decimal128{1, kPositiveZeroHigh}.is_nan()));
  EXPECT_FALSE((decimal128{1, kPositiveZeroHigh}.is_negative()));
}

// ---- The BSON corpus ------------------------------------------------------------------------

// The corpus documents are {"d": <decimal128>}: 4 length bytes, type 0x13, "d\0", 16 value bytes.
bool decimal_from_corpus_bson(std::string_view hex, decimal128& out) {
  const std::vector<std::uint8_t> bytes = oid::testing::hex_bytes(hex);
  if (bytes.size() != 24) return false;
  if (bytes[4] != 0x13 || bytes[5] != 'd' || bytes[6] != 0) return false;
  out = {};
  for (int i = 7; i >= 0; --i) {
    out.low = out.low << 8 | bytes[7 + static_cast<std::size_t>(i)];
    out.high = out.high << 8 | bytes[15 + static_cast<std::size_t>(i)];
  }
  return true;
}

// The decimal string inside {"d" : {"$numberDecimal" : "..."}}.
bool decimal_text_from_extjson(simdjson::dom::parser& parser, std::string_view json,
                               std::string& out) {
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) return false;
  std::string_view text;
  if (doc["d"]["$numberDecimal"].get_string().get(text) != simdjson::SUCCESS) return false;
  out.assign(text);
  return true;
}

std::string bits_of(const decimal128& d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(d.high),
                static_cast<unsigned long long>(d.low));
  return buf;
}

TEST(Decimal128Test, BsonCorpus) {
  const auto dir = oid::testing::bson_corpus_dir();
  if (!std::filesystem::exists(dir / "decimal128-1.json")) {
    OID_SKIP_OR_FAIL_IN_CI("BSON corpus not found at " << dir);
  }
  simdjson::dom::parser file_parser, case_parser;
  int valid = 0, parse_errors = 0;
  for (int n = 1; n <= 7; ++n) {
    const auto path = dir / ("decimal128-" + std::to_string(n) + ".json");
    SCOPED_TRACE(path.filename().string());
    simdjson::dom::element root;
    ASSERT_EQ(file_parser.load(path.string()).get(root), simdjson::SUCCESS);

    simdjson::dom::array cases;
    if (root["valid"].get_array().get(cases) == simdjson::SUCCESS) {
      for (simdjson::dom::element c : cases) {
        std::string_view description, bson_hex, canonical_json;
        ASSERT_EQ(c["description"].get_string().get(description), simdjson::SUCCESS);
        SCOPED_TRACE(description);
        ASSERT_EQ(c["canonical_bson"].get_string().get(bson_hex), simdjson::SUCCESS);
        ASSERT_EQ(c["canonical_extjson"].get_string().get(canonical_json), simdjson::SUCCESS);
        bool lossy = false;
        if (c["lossy"].get_bool().get(lossy) != simdjson::SUCCESS) lossy = false;

        decimal128 bits;
        ASSERT_TRUE(decimal_from_corpus_bson(bson_hex, bits)) << bson_hex;
        std::string canonical_text;
        ASSERT_TRUE(decimal_text_from_extjson(case_parser, canonical_json, canonical_text));

        // canonical_bson -> canonical_extjson, always (lossy cases included).
        EXPECT_EQ(bits.to_string(), canonical_text);
        // canonical_extjson -> canonical_bson, unless the corpus marks the case lossy.
        const auto parsed = decimal128::from_string(canonical_text);
        ASSERT_TRUE(parsed.has_value()) << canonical_text;
        if (!lossy) {
          EXPECT_EQ(bits_of(*parsed), bits_of(bits)) << canonical_text;
        }

        std::string_view degenerate_json;
        if (c["degenerate_extjson"].get_string().get(degenerate_json) == simdjson::SUCCESS) {
          std::string degenerate_text;
          ASSERT_TRUE(decimal_text_from_extjson(case_parser, degenerate_json, degenerate_text));
          const auto d = decimal128::from_string(degenerate_text);
          ASSERT_TRUE(d.has_value()) << degenerate_text;
          if (!lossy) {
            EXPECT_EQ(bits_of(*d), bits_of(bits)) << degenerate_text;
          }
          EXPECT_EQ(d->to_string(), canonical_text);
        }
        ++valid;
      }
    }

    if (root["parseErrors"].get_array().get(cases) == simdjson::SUCCESS) {
      for (simdjson::dom::element c : cases) {
        std::string_view description, text;
        ASSERT_EQ(c["description"].get_string().get(description), simdjson::SUCCESS);
        SCOPED_TRACE(description);
        ASSERT_EQ(c["string"].get_string().get(text), simdjson::SUCCESS);
        const auto r = decimal128::from_string(text);
        EXPECT_FALSE(r.has_value()) << '"' << text << "\" parsed as " << r->to_string();
        if (!r.has_value()) {
          EXPECT_EQ(r.error().code, oid::errc::invalid_decimal128);
          EXPECT_LE(r.error().offset, text.size());
        }
        ++parse_errors;
      }
    }
  }
  std::printf("decimal128 corpus: %d valid cases, %d parse errors checked\n", valid, parse_errors);
  EXPECT_GT(valid, 0);
  EXPECT_GT(parse_errors, 0);
}

}  // namespace
