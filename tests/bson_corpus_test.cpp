// MongoDB's BSON corpus (bson-corpus of scripts/spec-data.sh: PyMongo 4.20.1's copy, 31 files),
// run as its README says for a codec without an intermediate representation, one GoogleTest per
// corpus file:
//
//   valid:        cB validates; to_json(cB, canonical) = cEJ; to_json(cB, relaxed) = rEJ;
//                 from_json(cEJ) = cB unless lossy; dB validates and writes cEJ (and rEJ);
//                 from_json(dEJ) = cB unless lossy; to_json(from_json(rEJ), relaxed) = rEJ;
//                 the converted forms of deprecated types (converted_bson, converted_extjson) as
//                 a document of their own: it validates, writes converted_extjson and reads back.
//   decodeErrors: validate() rejects the bytes.
//   parseErrors:  from_json() rejects the text (decimal128 files: decimal128::from_string()
//                 rejects the string, and so does from_json() of {"d": {"$numberDecimal": ...}});
//                 the text is valid JSON for simdjson, so the error is an Extended JSON one.
//
// Extended JSON is compared as the corpus asks ("normalize JSON comparisons"): both texts are
// parsed by simdjson and compared as trees, objects as ordered lists of members (key order and
// duplicates matter), strings after unescaping, integers by value, doubles by bits. The counts
// of cases run and passed are printed per file and in total.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/ci.hpp"
#include "support/hex.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::testing::bson_corpus_dir;
using oid::testing::hex_bytes;
using oid::testing::to_hex;

// Structural JSON equality (see the top of the file). Returns an empty string when equal, else
// what differs.
std::string json_diff(simdjson::dom::element a, simdjson::dom::element b, const std::string& path) {
  using simdjson::dom::element_type;
  if (a.type() != b.type()) return path + ": different JSON types";
  switch (a.type()) {
  case element_type::OBJECT: {
    auto oa = a.get_object().value_unsafe(), ob = b.get_object().value_unsafe();
    auto ia = oa.begin(), ib = ob.begin();
    for (; ia != oa.end() && ib != ob.end(); ++ia, ++ib) {
      if ((*ia).key != (*ib).key)
        return path + ": key \"" + std::string((*ia).key) + "\" vs \"" + std::string((*ib).key) +
               "\"";
      auto d = json_diff((*ia).value, (*ib).value, path + "." + std::string((*ia).key));
      if (!d.empty()) return d;
    }
    if (ia != oa.end() || ib != ob.end()) return path + ": different number of members";
    return "";
  }
  case element_type::ARRAY: {
    auto aa = a.get_array().value_unsafe(), ab = b.get_array().value_unsafe();
    if (aa.size() != ab.size()) return path + ": different array sizes";
    std::size_t i = 0;
    for (auto ia = aa.begin(), ib = ab.begin(); ia != aa.end(); ++ia, ++ib, ++i) {
      auto d = json_diff(*ia, *ib, path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  case element_type::STRING:
    return a.get_string().value_unsafe() == b.get_string().value_unsafe()
               ? ""
               : path + ": \"" + std::string(a.get_string().value_unsafe()) + "\" vs \"" +
                     std::string(b.get_string().value_unsafe()) + "\"";
  case element_type::INT64:
    return a.get_int64().value_unsafe() == b.get_int64().value_unsafe() ? "" : path + ": ints";
  case element_type::UINT64:
    return a.get_uint64().value_unsafe() == b.get_uint64().value_unsafe() ? "" : path + ": ints";
  case element_type::DOUBLE:
    return std::bit_cast<std::uint64_t>(a.get_double().value_unsafe()) ==
                   std::bit_cast<std::uint64_t>(b.get_double().value_unsafe())
               ? ""
               : path + ": doubles";
  case element_type::BOOL:
    return a.get_bool().value_unsafe() == b.get_bool().value_unsafe() ? "" : path + ": bools";
  case element_type::NULL_VALUE: return "";
  }
  return path + ": unknown type";
}

// Empty when `got` and `want` are the same JSON, else an explanation.
std::string compare_json(std::string_view got, std::string_view want) {
  simdjson::dom::parser pg, pw;
  simdjson::dom::element eg, ew;
  if (pg.parse(got.data(), got.size()).get(eg) != simdjson::SUCCESS)
    return "output is not JSON: " + std::string(got);
  if (pw.parse(want.data(), want.size()).get(ew) != simdjson::SUCCESS)
    return "corpus text is not JSON: " + std::string(want);
  auto d = json_diff(eg, ew, "$");
  if (!d.empty()) return d + "\n  got:  " + std::string(got) + "\n  want: " + std::string(want);
  return "";
}

struct counts {
  int run = 0, passed = 0;
};
std::map<std::string, counts>& tally() {
  static std::map<std::string, counts> t;
  return t;
}

// Prints the counts after all tests.
class tally_printer : public ::testing::Environment {
 public:
  void TearDown() override {
    if (tally().empty()) return;
    counts total;
    std::cout << "BSON corpus: cases run / passed per file\n";
    for (const auto& [file, c] : tally()) {
      std::cout << "  " << file << ": " << c.run << " / " << c.passed << '\n';
      total.run += c.run;
      total.passed += c.passed;
    }
    std::cout << "BSON corpus total: " << total.run << " run, " << total.passed << " passed\n";
  }
};
[[maybe_unused]] const auto* const printer = ::testing::AddGlobalTestEnvironment(new tally_printer);

// The corpus files by name (the test parameters), sorted.
std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const auto& path : oid::testing::json_files(bson_corpus_dir())) {
    files.push_back(path.filename().string());
  }
  return files;
}

// Collects the problems of one case; the case passes when there are none.
struct case_check {
  std::vector<std::string> problems;
  void expect(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
  void expect_json(std::string_view got, std::string_view want, const std::string& what) {
    auto d = compare_json(got, want);
    if (!d.empty()) problems.push_back(what + ": " + d);
  }
};

std::string get_string(simdjson::dom::element e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}
bool has(simdjson::dom::element e, const char* key) { return e[key].error() == simdjson::SUCCESS; }

void check_valid(simdjson::dom::element c, case_check& check) {
  using oid::bson::json_mode;
  const auto cb = hex_bytes(get_string(c, "canonical_bson"));
  const std::string cej = get_string(c, "canonical_extjson");
  const bool lossy = has(c, "lossy") && c["lossy"].get_bool().value_unsafe();
  const bool has_rej = has(c, "relaxed_extjson");
  const std::string rej = get_string(c, "relaxed_extjson");

  const auto view = oid::bson::validate(cb);
  check.expect(view.has_value(), "canonical_bson does not validate");
  if (view) {
    check.expect_json(oid::bson::to_json(*view, json_mode::canonical), cej,
                      "to_json(canonical_bson, canonical)");
    if (has_rej)
      check.expect_json(oid::bson::to_json(*view, json_mode::relaxed), rej,
                        "to_json(canonical_bson, relaxed)");
  }
  if (!lossy) {
    const auto doc = oid::bson::from_json(cej);
    check.expect(doc.has_value(), "from_json(canonical_extjson) fails: " +
                                      (doc ? std::string() : doc.error().message()) + " at " +
                                      std::to_string(doc ? 0 : doc.error().offset));
    if (doc)
      check.expect(to_hex(doc->bytes()) == to_hex(cb),
                   "from_json(canonical_extjson) = " + to_hex(doc->bytes()));
  }
  if (has(c, "degenerate_bson")) {
    const auto db = hex_bytes(get_string(c, "degenerate_bson"));
    const auto dview = oid::bson::validate(db);
    check.expect(dview.has_value(), "degenerate_bson does not validate");
    if (dview) {
      check.expect_json(oid::bson::to_json(*dview, json_mode::canonical), cej,
                        "to_json(degenerate_bson, canonical)");
      if (has_rej)
        check.expect_json(oid::bson::to_json(*dview, json_mode::relaxed), rej,
                          "to_json(degenerate_bson, relaxed)");
    }
  }
  if (has(c, "degenerate_extjson") && !lossy) {
    const auto doc = oid::bson::from_json(get_string(c, "degenerate_extjson"));
    check.expect(doc.has_value(), "from_json(degenerate_extjson) fails");
    if (doc)
      check.expect(to_hex(doc->bytes()) == to_hex(cb),
                   "from_json(degenerate_extjson) = " + to_hex(doc->bytes()));
  }
  if (has_rej) {
    const auto doc = oid::bson::from_json(rej);
    check.expect(doc.has_value(), "from_json(relaxed_extjson) fails");
    if (doc)
      check.expect_json(oid::bson::to_json(doc->view(), json_mode::relaxed), rej,
                        "to_json(from_json(relaxed_extjson), relaxed)");
  }
  if (has(c, "converted_bson")) {
    const auto conv = hex_bytes(get_string(c, "converted_bson"));
    const std::string conv_ej = get_string(c, "converted_extjson");
    const auto cview = oid::bson::validate(conv);
    check.expect(cview.has_value(), "converted_bson does not validate");
    if (cview)
      check.expect_json(oid::bson::to_json(*cview, json_mode::canonical), conv_ej,
                        "to_json(converted_bson, canonical)");
    const auto doc = oid::bson::from_json(conv_ej);
    check.expect(doc.has_value(), "from_json(converted_extjson) fails");
    if (doc)
      check.expect(to_hex(doc->bytes()) == to_hex(conv),
                   "from_json(converted_extjson) = " + to_hex(doc->bytes()));
  }
}

// The string as a JSON string literal.
std::string json_quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

class BsonCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BsonCorpusTest, File) {
  const std::string file = GetParam();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.load((bson_corpus_dir() / file).string()).get(root), simdjson::SUCCESS) << file;
  const bool decimal = get_string(root, "bson_type") == "0x13";
  counts& n = tally()[file];

  auto record = [&](const std::string& kind, const std::string& description,
                    const case_check& check) {
    ++n.run;
    if (check.problems.empty()) {
      ++n.passed;
      return;
    }
    std::string msg = kind + " \"" + description + "\":";
    for (const auto& p : check.problems) msg += "\n  " + p;
    ADD_FAILURE() << msg;
  };

  simdjson::dom::array cases;
  if (root["valid"].get_array().get(cases) == simdjson::SUCCESS) {
    for (auto c : cases) {
      case_check check;
      check_valid(c, check);
      record("valid", get_string(c, "description"), check);
    }
  }
  if (root["decodeErrors"].get_array().get(cases) == simdjson::SUCCESS) {
    for (auto c : cases) {
      case_check check;
      const auto bytes = hex_bytes(get_string(c, "bson"));
      check.expect(!oid::bson::validate(bytes).has_value(), "validate() accepts the bytes");
      record("decodeErrors", get_string(c, "description"), check);
    }
  }
  if (root["parseErrors"].get_array().get(cases) == simdjson::SUCCESS) {
    for (auto c : cases) {
      case_check check;
      const std::string text = get_string(c, "string");
      if (decimal) {
        check.expect(!oid::bson::decimal128::from_string(text).has_value(),
                     "decimal128::from_string accepts it");
        const std::string json = "{\"d\": {\"$numberDecimal\": " + json_quoted(text) + "}}";
        check.expect(!oid::bson::from_json(json).has_value(), "from_json accepts " + json);
      } else {
        simdjson::dom::parser plain;
        simdjson::dom::element ignored;
        check.expect(plain.parse(text).get(ignored) == simdjson::SUCCESS,
                     "not even plain JSON (the case would test nothing)");
        const auto doc = oid::bson::from_json(text);
        check.expect(!doc.has_value(), "from_json accepts it");
      }
      record("parseErrors", get_string(c, "description"), check);
    }
  }
  EXPECT_GT(n.run, 0) << file << " has no cases";
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);  // without ".json"
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BsonCorpusTest, ::testing::ValuesIn(corpus_files()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BsonCorpusTest);

TEST(BsonCorpusPresenceTest, CorpusIsThere) {
  if (corpus_files().empty()) {
    OID_SKIP_OR_FAIL_IN_CI("BSON corpus not found at " << bson_corpus_dir()
                                                       << "; its tests did not run");
  }
  EXPECT_GE(corpus_files().size(), 30u);
}

}  // namespace
