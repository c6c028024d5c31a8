// MongoDB's BSON binary vector tests (bson-binary-vector of scripts/spec-data.sh: int8.json,
// float32.json, packed_bit.json), run as their README says, one GoogleTest per file:
//
//   valid:   encoding the numbers ("vector"), dtype and padding under "test_key" gives
//            canonical_bson, both through builder::append_vector's array conversion and through
//            the typed API (a span of int8 or float, packed_bits_view); decoding canonical_bson
//            with vector_view::from_element gives the dtype, the padding and the numbers back
//            (float32: the float of each number, bit for bit, as the README asks of a language
//            with a float32 type), and append_vector_as_array gives the numbers as an array.
//   invalid: when "vector" is there, encoding it is refused; when canonical_bson is there, the
//            document is valid BSON (the binary's length is right) and decoding the vector in it
//            is refused (errc::invalid_binary).
//
// The files are read with oid's own Extended JSON reader, so "vector" arrives as the BSON array
// the conversion takes: integers as int32, numbers with a fraction or an exponent and
// {"$numberDouble": ...} as doubles. One invalid case cannot be given to the API at all: a padding
// of -1, which the padding parameter (std::uint8_t) does not hold; it is counted apart and printed.
#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/vector.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/ci.hpp"
#include "support/hex.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document_view;
using oid::bson::element;
using oid::bson::packed_bits_view;
using oid::bson::vector_dtype;
using oid::bson::vector_view;
using oid::testing::hex_bytes;
using oid::testing::to_hex;

std::filesystem::path suite_dir() { return oid::testing::spec_data_dir("bson-binary-vector"); }

struct counts {
  int valid = 0, valid_passed = 0;
  int invalid = 0, invalid_passed = 0;
  int encode_refused = 0, encode_not_expressible = 0, decode_refused = 0;
};
std::map<std::string, counts>& tally() {
  static std::map<std::string, counts> t;
  return t;
}
std::vector<std::string>& refusals() {
  static std::vector<std::string> r;
  return r;
}

class tally_printer : public ::testing::Environment {
 public:
  void TearDown() override {
    if (tally().empty()) return;
    counts total;
    std::cout << "BSON binary vector tests: valid run / passed, invalid run / passed\n";
    for (const auto& [file, c] : tally()) {
      std::cout << "  " << file << ": " << c.valid << " / " << c.valid_passed << ", " << c.invalid
                << " / " << c.invalid_passed << '\n';
      total.valid += c.valid;
      total.valid_passed += c.valid_passed;
      total.invalid += c.invalid;
      total.invalid_passed += c.invalid_passed;
      total.encode_refused += c.encode_refused;
      total.encode_not_expressible += c.encode_not_expressible;
      total.decode_refused += c.decode_refused;
    }
    std::cout << "BSON binary vector total: " << total.valid + total.invalid << " run, "
              << total.valid_passed + total.invalid_passed
              << " passed (invalid: " << total.encode_refused << " encodings refused, "
              << total.encode_not_expressible << " not expressible in the API's types, "
              << total.decode_refused << " decodings refused)\n";
    for (const auto& r : refusals()) std::cout << "  " << r << '\n';
  }
};
[[maybe_unused]] const auto* const printer = ::testing::AddGlobalTestEnvironment(new tally_printer);

std::vector<std::string> suite_files() {
  std::vector<std::string> files;
  for (const auto& path : oid::testing::json_files(suite_dir())) {
    files.push_back(path.filename().string());
  }
  return files;
}

std::string describe(const oid::error& e) {
  return e.message() + " at byte " + std::to_string(e.offset);
}

// One test case of a file, as read.
struct spec_case {
  std::string description;
  bool valid = false;
  std::optional<document_view> vector;  // the numbers, an array
  std::uint8_t dtype = 0;
  std::int64_t padding = 0;
  std::optional<std::vector<std::uint8_t>> canonical_bson;
};

// Collects the problems of one case; the case passes when there are none.
struct case_check {
  std::vector<std::string> problems;
  void expect(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
};

std::optional<std::string_view> string_field(document_view d, std::string_view key) {
  auto e = d.find(key);
  if (!e) return std::nullopt;
  auto s = e->get_string();
  return s ? std::optional(*s) : std::nullopt;
}

spec_case read_case(document_view t, case_check& check) {
  spec_case c;
  c.description = std::string(string_field(t, "description").value_or("(no description)"));
  auto valid = t.find("valid");
  check.expect(valid && valid->get_bool(), "no boolean \"valid\"");
  c.valid = valid && valid->get_bool() && *valid->get_bool();
  if (auto v = t.find("vector")) {
    auto a = v->get_array();
    check.expect(a.has_value(), "\"vector\" is not an array");
    if (a) c.vector = *a;
  }
  const auto hex = string_field(t, "dtype_hex").value_or("");
  unsigned d = 256;
  const bool hex_ok = hex.size() == 4 && hex.substr(0, 2) == "0x" &&
                      std::from_chars(hex.data() + 2, hex.data() + 4, d, 16).ptr == hex.data() + 4;
  check.expect(hex_ok && d < 256, "dtype_hex is not 0xNN: " + std::string(hex));
  c.dtype = static_cast<std::uint8_t>(d);
  if (auto p = t.find("padding")) {
    auto n = p->get_int32();
    check.expect(n.has_value(), "\"padding\" is not an int32");
    if (n) c.padding = *n;
  }
  if (auto b = string_field(t, "canonical_bson")) c.canonical_bson = hex_bytes(*b);
  return c;
}

// The numbers of a valid case through the typed API (a span or packed_bits_view), as a program
// holding them in C++ types would append them.
oid::result<void> append_typed(builder& b, std::string_view key, const spec_case& c,
                               case_check& check) {
  std::vector<std::int8_t> i8;
  std::vector<float> f32;
  std::vector<std::uint8_t> bits;
  for (const element& e : *c.vector) {
    switch (static_cast<vector_dtype>(c.dtype)) {
    case vector_dtype::int8: i8.push_back(static_cast<std::int8_t>(*e.get_int32())); break;
    case vector_dtype::float32: f32.push_back(static_cast<float>(*e.get_double())); break;
    case vector_dtype::packed_bit: bits.push_back(static_cast<std::uint8_t>(*e.get_int32())); break;
    }
  }
  switch (static_cast<vector_dtype>(c.dtype)) {
  case vector_dtype::int8:
    check.expect(c.padding == 0, "a valid int8 case with padding (no int8 API takes one)");
    return b.try_append_vector(key, std::span<const std::int8_t>(i8));
  case vector_dtype::float32:
    check.expect(c.padding == 0, "a valid float32 case with padding (no float32 API takes one)");
    return b.try_append_vector(key, std::span<const float>(f32));
  case vector_dtype::packed_bit:
    return b.try_append_vector(key, packed_bits_view{bits, static_cast<std::uint8_t>(c.padding)});
  }
  return oid::error{oid::errc::invalid_binary, 0};
}

void check_valid(std::string_view key, const spec_case& c, case_check& check) {
  check.expect(c.vector.has_value(), "a valid case without \"vector\"");
  check.expect(c.canonical_bson.has_value(), "a valid case without canonical_bson");
  check.expect(c.padding >= 0 && c.padding <= 255, "a valid case with padding out of 0..255");
  if (!c.vector || !c.canonical_bson || c.padding < 0 || c.padding > 255) return;
  const std::string want = to_hex(*c.canonical_bson);
  const auto dtype = static_cast<vector_dtype>(c.dtype);
  const auto padding = static_cast<std::uint8_t>(c.padding);

  // Encoding, from the array and from C++ values.
  builder from_array;
  const auto r = from_array.try_append_vector(key, dtype, *c.vector, padding);
  check.expect(r.has_value(), "encoding the array fails: " + (r ? "" : describe(r.error())));
  if (r) {
    const auto got = to_hex(from_array.view().bytes());
    check.expect(got == want, "encoding the array gives " + got + ", not " + want);
  }
  builder typed;
  const auto t = append_typed(typed, key, c, check);
  check.expect(t.has_value(), "encoding typed values fails: " + (t ? "" : describe(t.error())));
  if (t) {
    const auto got = to_hex(typed.view().bytes());
    check.expect(got == want, "encoding typed values gives " + got + ", not " + want);
  }

  // Decoding.
  const auto doc = oid::bson::validate(*c.canonical_bson);
  check.expect(doc.has_value(), "canonical_bson is not valid BSON");
  if (!doc) return;
  const auto e = doc->find(key);
  check.expect(e.has_value(), "canonical_bson has no \"" + std::string(key) + "\"");
  if (!e) return;
  const auto v = vector_view::from_element(*e);
  check.expect(v.has_value(), "decoding fails: " + (v ? "" : describe(v.error())));
  if (!v) return;
  check.expect(v->dtype() == dtype, "decoded dtype differs");
  check.expect(v->padding() == padding, "decoded padding differs");
  std::size_t n = 0;
  for (const element& x : *c.vector) {
    const std::string at = "element " + std::to_string(n);
    switch (dtype) {
    case vector_dtype::int8: {
      const auto got = v->as_int8();
      check.expect(got && n < got->size() && (*got)[n] == *x.get_int32(), at + " differs");
      break;
    }
    case vector_dtype::float32: {
      const auto got = v->as_float32();
      const float wanted = static_cast<float>(*x.get_double());
      check.expect(
          got && n < got->size() &&
              std::bit_cast<std::uint32_t>((*got)[n]) == std::bit_cast<std::uint32_t>(wanted),
          at + " differs");
      break;
    }
    case vector_dtype::packed_bit: {
      const auto got = v->as_packed_bits();
      check.expect(got && n < got->bytes.size() && got->bytes[n] == *x.get_int32() &&
                       got->padding == padding,
                   at + " differs");
      break;
    }
    }
    ++n;
  }
  const std::size_t elements =
      dtype == vector_dtype::float32 ? v->data().size() / 4 : v->data().size();
  check.expect(elements == n,
               "decoded " + std::to_string(elements) + " elements, not " + std::to_string(n));

  // Decoding to an array: the same numbers (float32: as the doubles of their floats).
  builder array;
  const auto a = array.try_append_vector_as_array("a", *v);
  check.expect(a.has_value(), "append_vector_as_array fails");
  if (!a) return;
  const auto got = *array.view().find("a")->get_array();
  if (dtype == vector_dtype::float32) {
    auto g = got.begin();
    for (const element& x : *c.vector) {
      const bool ok = g != got.end() && g->get_double() &&
                      std::bit_cast<std::uint64_t>(*g->get_double()) ==
                          std::bit_cast<std::uint64_t>(
                              static_cast<double>(static_cast<float>(*x.get_double())));
      check.expect(ok, "append_vector_as_array: element " + std::string(x.key()) + " differs");
      if (g != got.end()) ++g;
    }
    check.expect(g == got.end(), "append_vector_as_array: more elements");
  } else {
    check.expect(got == *c.vector, "append_vector_as_array gives another array");
  }
}

void check_invalid(std::string_view key, const spec_case& c, case_check& check, counts& n) {
  check.expect(c.vector || c.canonical_bson,
               "an invalid case with neither \"vector\" nor canonical_bson tests nothing");
  const std::string name = c.description + ": ";
  if (c.vector) {
    if (c.padding < 0 || c.padding > 255) {
      // The padding parameter is a std::uint8_t: this padding cannot be passed at all.
      ++n.encode_not_expressible;
      refusals().push_back(name + "padding " + std::to_string(c.padding) +
                           " is not a std::uint8_t (not expressible)");
    } else {
      builder b;
      const auto r = b.try_append_vector(key, static_cast<vector_dtype>(c.dtype), *c.vector,
                                         static_cast<std::uint8_t>(c.padding));
      check.expect(!r.has_value(), "encoding the array is accepted");
      check.expect(b.view().size() == 5, "a refused encoding wrote something");
      if (!r) {
        ++n.encode_refused;
        refusals().push_back(name + "encoding refused: " + describe(r.error()));
      }
      // Packed bits whose bytes are all 0..255 can also be given to the typed API: refused too.
      bool bytes_fit = c.dtype == static_cast<std::uint8_t>(vector_dtype::packed_bit);
      std::vector<std::uint8_t> bits;
      for (const element& e : *c.vector) {
        const auto i = e.get_int32();
        bytes_fit = bytes_fit && i && *i >= 0 && *i <= 255;
        if (bytes_fit) bits.push_back(static_cast<std::uint8_t>(*i));
      }
      if (bytes_fit) {
        const auto t =
            b.try_append_vector(key, packed_bits_view{bits, static_cast<std::uint8_t>(c.padding)});
        check.expect(!t.has_value() && t.error().code == oid::errc::invalid_binary,
                     "encoding packed_bits_view is not refused with invalid_binary");
      }
    }
  }
  if (c.canonical_bson) {
    const auto doc = oid::bson::validate(*c.canonical_bson);
    check.expect(doc.has_value(), "canonical_bson is not valid BSON (the case means the vector)");
    if (!doc) return;
    const auto e = doc->find(key);
    check.expect(e.has_value(), "canonical_bson has no \"" + std::string(key) + "\"");
    if (!e) return;
    const auto v = vector_view::from_element(*e);
    check.expect(!v.has_value() && v.error().code == oid::errc::invalid_binary,
                 "decoding is not refused with invalid_binary");
    if (!v) {
      ++n.decode_refused;
      refusals().push_back(name + "decoding refused: " + describe(v.error()));
    }
  }
}

class BsonVectorSpecTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BsonVectorSpecTest, File) {
  const std::string file = GetParam();
  std::ifstream in(suite_dir() / file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const auto root = oid::bson::from_json(text.str());
  ASSERT_TRUE(root.has_value()) << file << ": " << describe(root.error());
  const auto key = string_field(root->view(), "test_key");
  ASSERT_TRUE(key.has_value()) << file << ": no test_key";
  const auto tests = root->view().find("tests");
  ASSERT_TRUE(tests && tests->get_array()) << file << ": no tests array";
  counts& n = tally()[file];
  const document_view cases = *tests->get_array();
  for (const element& t : cases) {
    case_check check;
    const auto doc = t.get_document();
    check.expect(doc.has_value(), "a test case is not a document");
    if (!doc) {
      ADD_FAILURE() << check.problems.front();
      continue;
    }
    const spec_case c = read_case(*doc, check);
    if (c.valid) {
      ++n.valid;
      check_valid(*key, c, check);
    } else {
      ++n.invalid;
      check_invalid(*key, c, check, n);
    }
    if (check.problems.empty()) {
      ++(c.valid ? n.valid_passed : n.invalid_passed);
      continue;
    }
    std::string msg = (c.valid ? "valid \"" : "invalid \"") + c.description + "\":";
    for (const auto& p : check.problems) msg += "\n  " + p;
    ADD_FAILURE() << msg;
  }
  EXPECT_GT(n.valid + n.invalid, 0) << file << " has no cases";
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);  // without ".json"
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Spec, BsonVectorSpecTest, ::testing::ValuesIn(suite_files()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BsonVectorSpecTest);

TEST(BsonVectorSpecPresenceTest, SuiteIsThere) {
  if (suite_files().empty()) {
    OID_SKIP_OR_FAIL_IN_CI("BSON binary vector tests not found at "
                           << suite_dir() << "; run scripts/spec-data.sh. Their tests did not run");
  }
  EXPECT_EQ(suite_files(),
            (std::vector<std::string>{"float32.json", "int8.json", "packed_bit.json"}));
}

}  // namespace
