// The unified test format's matching rules (tests/unified/match.hpp), case by case from the
// specification's "Evaluating Matches" and "Special Operators for Matching Assertions".
#include "unified/match.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/ci.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::unified::match_context;

// The document {"v": <json>}; a typo in a test's JSON fails the test.
oid::bson::document boxed(std::string_view json) {
  auto doc = oid::bson::from_json("{\"v\": " + std::string(json) + "}");
  EXPECT_TRUE(doc.has_value()) << json;
  return doc ? *doc : oid::bson::document{};
}

oid::bson::document parse(std::string_view json) {
  auto doc = oid::bson::from_json(json);
  EXPECT_TRUE(doc.has_value()) << json;
  return doc ? *doc : oid::bson::document{};
}

// The entities of the tests below: "id0" holds an ObjectId, "doc0" a document, "session0"'s lsid.
match_context test_context() {
  match_context ctx;
  ctx.entity = [](std::string_view id) -> std::optional<oid::bson::document> {
    if (id == "id0") return boxed(R"({"$oid": "57e193d7a9cc81b4027498b5"})");
    if (id == "doc0") return boxed(R"({"x": 1})");
    return std::nullopt;
  };
  ctx.session_lsid = [](std::string_view id) -> std::optional<oid::bson::document> {
    if (id == "session0") {
      return parse(
          R"({"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}})");
    }
    return std::nullopt;
  };
  return ctx;
}

// Matches the JSON value `expected` against `actual` (nullopt: no value).
std::string run(std::string_view expected, std::optional<std::string_view> actual, bool root = true,
                std::string_view path = {}) {
  const oid::bson::document want = boxed(expected);
  std::optional<oid::bson::document> got;
  if (actual) got = boxed(*actual);
  std::optional<oid::bson::element> got_element;
  if (got) got_element = *got->view().begin();
  return oid::unified::match(*want.view().begin(), got_element, test_context(), root, path);
}

struct test_case {
  std::string_view name;
  std::string_view expected;
  std::optional<std::string_view> actual;  // nullopt: the value does not exist
  std::string_view want;                   // "" when they match, else the whole message
};

void run_cases(std::span<const test_case> cases, bool root = true) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(run(c.expected, c.actual, root), c.want);
  }
}

TEST(UnifiedMatchTest, NumbersCompareByValueAcrossInt32Int64AndDouble) {
  const test_case cases[] = {
      {"int = int", "1", "1", ""},
      {"int = long", "1", R"({"$numberLong": "1"})", ""},
      {"long = int", R"({"$numberLong": "1"})", "1", ""},
      {"int = double", "1", "1.0", ""},
      {"double = int", "1.0", "1", ""},
      {"double = long", "2.0", R"({"$numberLong": "2"})", ""},
      {"0 = -0.0", "0", "-0.0", ""},
      {"NaN = NaN", R"({"$numberDouble": "NaN"})", R"({"$numberDouble": "NaN"})", ""},
      {"int != 1.5", "1", "1.5", "expected 1 (int), got 1.5 (double)"},
      {"int != long 3", "2", R"({"$numberLong": "3"})", "expected 2 (int), got 3 (long)"},
      // 2^53 + 1 has no double: a comparison through double would call them equal.
      {"long 2^53+1 != double 2^53", R"({"$numberLong": "9007199254740993"})", "9007199254740992.0",
       "expected 9007199254740993 (long), got 9007199254740992.0 (double)"},
      {"long max != double 2^63", R"({"$numberLong": "9223372036854775807"})",
       "9223372036854775808.0",
       "expected 9223372036854775807 (long), got 9.223372036854776E+18 (double)"},
      {"long min = double -2^63", R"({"$numberLong": "-9223372036854775808"})",
       "-9223372036854775808.0", ""},
      {"int != NaN", "1", R"({"$numberDouble": "NaN"})",
       R"(expected 1 (int), got {"$numberDouble":"NaN"} (double))"},
      {"int != decimal", "1", R"({"$numberDecimal": "1"})",
       R"(expected 1 (int), got {"$numberDecimal":"1"} (decimal))"},
      {"decimal != int", R"({"$numberDecimal": "1"})", "1",
       R"(expected {"$numberDecimal":"1"} (decimal), got 1 (int))"},
      {"decimal = decimal", R"({"$numberDecimal": "1.5"})", R"({"$numberDecimal": "1.5"})", ""},
      {"decimal != decimal", R"({"$numberDecimal": "1.5"})", R"({"$numberDecimal": "2.5"})",
       R"(expected {"$numberDecimal":"1.5"} (decimal), got {"$numberDecimal":"2.5"} (decimal))"},
      {"int != string", "2", R"("2")", R"(expected 2 (int), got "2" (string))"},
      {"int != bool", "1", "true", "expected 1 (int), got true (bool)"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, OtherValuesNeedTheSameTypeAndValue) {
  const test_case cases[] = {
      {"null", "null", "null", ""},
      {"null absent", "null", std::nullopt, "expected null (null), got no value"},
      {"null != undefined", "null", R"({"$undefined": true})",
       R"(expected null (null), got {"$undefined":true} (undefined))"},
      {"string", R"("a")", R"("a")", ""},
      {"string differs", R"("a")", R"("b")", R"(expected "a" (string), got "b" (string))"},
      {"bool", "true", "true", ""},
      {"bool differs", "true", "false", "expected true (bool), got false (bool)"},
      {"objectId", R"({"$oid": "57e193d7a9cc81b4027498b5"})",
       R"({"$oid": "57e193d7a9cc81b4027498b5"})", ""},
      {"objectId differs", R"({"$oid": "57e193d7a9cc81b4027498b5"})",
       R"({"$oid": "57e193d7a9cc81b4027498b6"})",
       R"(expected {"$oid":"57e193d7a9cc81b4027498b5"} (objectId), got {"$oid":"57e193d7a9cc81b4027498b6"} (objectId))"},
      {"date", R"({"$date": {"$numberLong": "1000"}})", R"({"$date": "1970-01-01T00:00:01Z"})", ""},
      {"date != long", R"({"$date": {"$numberLong": "1000"}})", R"({"$numberLong": "1000"})",
       R"(expected {"$date":"1970-01-01T00:00:01Z"} (date), got 1000 (long))"},
      {"binary", R"({"$binary": {"base64": "AQI=", "subType": "00"}})",
       R"({"$binary": {"base64": "AQI=", "subType": "00"}})", ""},
      {"binary subtype differs", R"({"$binary": {"base64": "AQI=", "subType": "00"}})",
       R"({"$binary": {"base64": "AQI=", "subType": "80"}})",
       R"(expected {"$binary":{"base64":"AQI=","subType":"00"}} (binData), got {"$binary":{"base64":"AQI=","subType":"80"}} (binData))"},
      {"regex", R"({"$regularExpression": {"pattern": "^a", "options": "i"}})",
       R"({"$regularExpression": {"pattern": "^a", "options": "i"}})", ""},
      {"regex options differ", R"({"$regularExpression": {"pattern": "^a", "options": "i"}})",
       R"({"$regularExpression": {"pattern": "^a", "options": ""}})",
       R"(expected {"$regularExpression":{"pattern":"^a","options":"i"}} (regex), got {"$regularExpression":{"pattern":"^a","options":""}} (regex))"},
      {"timestamp", R"({"$timestamp": {"t": 1, "i": 2}})", R"({"$timestamp": {"t": 1, "i": 2}})",
       ""},
      {"minKey != maxKey", R"({"$minKey": 1})", R"({"$maxKey": 1})",
       R"(expected {"$minKey":1} (minKey), got {"$maxKey":1} (maxKey))"},
      // Documents inside other types match exactly, keys in any order.
      {"code with scope, keys in another order", R"({"$code": "f", "$scope": {"a": 1, "b": 2}})",
       R"({"$code": "f", "$scope": {"b": 2, "a": 1}})", ""},
      {"code with scope, no flexible numbers", R"({"$code": "f", "$scope": {"a": 1}})",
       R"({"$code": "f", "$scope": {"a": 1.0}})",
       R"(expected {"$code":"f","$scope":{"a":1}} (javascriptWithScope), got {"$code":"f","$scope":{"a":1.0}} (javascriptWithScope))"},
      {"code with scope, no extra fields", R"({"$code": "f", "$scope": {"a": 1}})",
       R"({"$code": "f", "$scope": {"a": 1, "b": 2}})",
       R"(expected {"$code":"f","$scope":{"a":1}} (javascriptWithScope), got {"$code":"f","$scope":{"a":1,"b":2}} (javascriptWithScope))"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, ScalarResultsAndPathPrefix) {
  // The expectResult of an operation that returns a number, a string or null.
  EXPECT_EQ(run("2", R"({"$numberLong": "2"})"), "");
  EXPECT_EQ(run("2", R"({"$numberLong": "3"})", true, "expectResult"),
            "expectResult: expected 2 (int), got 3 (long)");
  EXPECT_EQ(run("null", "null"), "");
  EXPECT_EQ(run(R"("abc")", std::nullopt, true, "expectResult"),
            R"(expectResult: expected "abc" (string), got no value)");
  // A path given by the runner goes in front of the place in the value.
  EXPECT_EQ(run(R"({"x": {"y": 1}})", R"({"x": {"y": 2}})", true, "events[0].command"),
            "events[0].command.x.y: expected 1 (int), got 2 (int)");
}

TEST(UnifiedMatchTest, LongValuesAreShortenedBetweenCharacters) {
  // 60 two-byte characters: the text is cut after 100 bytes of JSON, which would split one.
  std::string long_string;
  for (int i = 0; i < 60; ++i) long_string += "\u00e9";
  std::string cut;
  for (int i = 0; i < 49; ++i) cut += "\u00e9";
  EXPECT_EQ(run(R"("a")", '"' + long_string + '"'),
            R"(expected "a" (string), got ")" + cut + R"(... (string))");
  // 100 bytes or less are written whole.
  EXPECT_EQ(run("1", '"' + std::string(98, 'x') + '"'),
            R"(expected 1 (int), got ")" + std::string(98, 'x') + R"(" (string))");
}

TEST(UnifiedMatchTest, DocumentsAllowExtraFieldsAtTheRootOnly) {
  const test_case cases[] = {
      {"extra field at the root", R"({"x": 1})", R"({"x": 1, "y": 1})", ""},
      {"keys in another order", R"({"x": 1, "y": 2})", R"({"y": 2, "x": 1})", ""},
      {"missing field", R"({"x": 1, "y": 1})", R"({"x": 1})", "y: expected 1 (int), got no value"},
      {"extra field nested", R"({"x": {"y": 1}})", R"({"x": {"y": 1, "z": 1}})",
       "x.z: unexpected field, got 1 (int)"},
      {"nested empty document", R"({"x": {}})", R"({"x": {"a": 1}})",
       "x.a: unexpected field, got 1 (int)"},
      {"empty document at the root", "{}", R"({"a": 1})", ""},
      {"document against a number", R"({"x": {"a": 1}})", R"({"x": 5})",
       "x: expected a document, got 5 (int)"},
      {"document against an array", R"({"a": 1})", "[1]", "expected a document, got [1] (array)"},
      {"document absent", R"({"x": {"a": 1}})", "{}", "x: expected a document, got no value"},
      {"flexible numbers inside", R"({"ok": 1, "n": {"$numberLong": "2"}})",
       R"({"ok": 1.0, "n": 2})", ""},
      {"the brief's example", R"({"cursor": {"firstBatch": [{"x": 1}, {"x": 2}]}})",
       R"({"cursor": {"firstBatch": [{"x": 1}, {"x": {"$numberLong": "3"}}], "id": 0}, "ok": 1})",
       "cursor.firstBatch[1].x: expected 2 (int), got 3 (long)"},
  };
  run_cases(cases);

  // root = false: no extra field even at the top.
  EXPECT_EQ(run(R"({"x": 1})", R"({"x": 1, "y": 1})", false), "y: unexpected field, got 1 (int)");
  EXPECT_EQ(run(R"({"x": 1})", R"({"x": 1})", false), "");
}

TEST(UnifiedMatchTest, ArraysMatchElementByElementAndAreNeverRoot) {
  const test_case cases[] = {
      {"same", "[1, 2, 3]", "[1, 2.0, 3]", ""},
      {"longer", "[1, 2, 3]", "[1, 2, 3, 4]", "expected an array of 3 elements, got 4"},
      {"shorter", "[1, 2, 3]", "[1, 2]", "expected an array of 3 elements, got 2"},
      {"empty", "[]", "[]", ""},
      {"other order", "[1, 2]", "[2, 1]", "[0]: expected 1 (int), got 2 (int)"},
      {"array against a document", "[1]", R"({"0": 1})",
       R"(expected an array, got {"0":1} (object))"},
      {"array absent", R"({"a": [1]})", "{}", "a: expected [1] (array), got no value"},
      {"element differs", R"({"a": [{"x": 1}, {"x": 2}]})", R"({"a": [{"x": 1}, {"x": 3}]})",
       "a[1].x: expected 2 (int), got 3 (int)"},
      {"documents in an array are not root", R"({"a": [{"x": 1}]})", R"({"a": [{"x": 1, "y": 2}]})",
       "a[0].y: unexpected field, got 2 (int)"},
      {"top-level array's documents are not root either", R"([{"x": 1}])", R"([{"x": 1, "y": 1}])",
       "[0].y: unexpected field, got 1 (int)"},
      {"arrays in arrays", "[[1, [2]]]", "[[1, [3]]]", "[0][1][0]: expected 2 (int), got 3 (int)"},
      {"operators in an array", R"([{"$$type": "int"}, {"x": {"$$exists": true}}, {"$$lte": 5}])",
       R"([7, {"x": null}, 5.0])", ""},
      {"operator in an array fails", R"([{"$$type": "int"}, {"x": {"$$exists": false}}])",
       R"([7, {"x": null}])", "[1].x: expected no field, got null (null)"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, RootArrayMakesEachDocumentRootLevel) {
  const match_context ctx = test_context();
  const auto want = boxed(R"([{"_id": 1}, {"_id": 2, "x": {"a": 1}}])");
  const auto ok = boxed(R"([{"_id": 1, "y": 1}, {"_id": 2, "x": {"a": 1}, "z": 3}])");
  const auto nested_extra = boxed(R"([{"_id": 1}, {"_id": 2, "x": {"a": 1, "b": 2}}])");
  const auto short_actual = boxed(R"([{"_id": 1}])");
  const oid::bson::element w = *want.view().begin();
  EXPECT_EQ(oid::unified::match_root_array(w, *ok.view().begin(), ctx), "");
  EXPECT_EQ(oid::unified::match_root_array(w, *nested_extra.view().begin(), ctx, "expectResult"),
            "expectResult[1].x.b: unexpected field, got 2 (int)");
  EXPECT_EQ(oid::unified::match_root_array(w, *short_actual.view().begin(), ctx),
            "expected an array of 2 elements, got 1");
  // The same array through match(): its documents are not root-level.
  EXPECT_EQ(oid::unified::match(w, *ok.view().begin(), ctx),
            "[0].y: unexpected field, got 1 (int)");
  // Through $$unsetOrMatches, the elements stay root-level.
  const auto unset = boxed(R"({"$$unsetOrMatches": [{"_id": 1}]})");
  const auto one = boxed(R"([{"_id": 1, "y": 1}])");
  EXPECT_EQ(oid::unified::match_root_array(*unset.view().begin(), *one.view().begin(), ctx), "");
  EXPECT_EQ(oid::unified::match_root_array(*unset.view().begin(), std::nullopt, ctx), "");
}

TEST(UnifiedMatchTest, MatchDocumentTakesTheActualDocumentAsRoot) {
  const match_context ctx = test_context();
  const auto want = parse(R"({"ok": 1, "cursor": {"id": 0}})");
  const auto reply =
      parse(R"({"ok": 1.0, "cursor": {"id": {"$numberLong": "0"}}, "$clusterTime": {}})");
  const auto extra = parse(R"({"ok": 1.0, "cursor": {"id": 0, "ns": "db.c"}})");
  EXPECT_EQ(oid::unified::match_document(want.view(), reply.view(), ctx), "");
  EXPECT_EQ(oid::unified::match_document(want.view(), extra.view(), ctx, "reply"),
            R"(reply.cursor.ns: unexpected field, got "db.c" (string))");
  // The expected document may itself be a special operator.
  const auto op = parse(R"({"$$unsetOrMatches": {"ok": 1}})");
  EXPECT_EQ(oid::unified::match_document(op.view(), reply.view(), ctx), "");
}

TEST(UnifiedMatchTest, Exists) {
  const test_case cases[] = {
      {"true, present", R"({"x": {"$$exists": true}})", R"({"x": 5})", ""},
      {"true, null", R"({"x": {"$$exists": true}})", R"({"x": null})", ""},
      {"true, absent", R"({"x": {"$$exists": true}})", "{}", "x: expected a field, got no value"},
      {"false, absent", R"({"x": {"$$exists": false}})", R"({"y": 1})", ""},
      {"false, present", R"({"x": {"$$exists": false}})", R"({"x": 1})",
       "x: expected no field, got 1 (int)"},
      {"false, present and null", R"({"x": {"$$exists": false}})", R"({"x": null})",
       "x: expected no field, got null (null)"},
      {"nested, absent", R"({"a": {"b": 1, "c": {"$$exists": false}}})", R"({"a": {"b": 1}})", ""},
      {"not a boolean", R"({"x": {"$$exists": 1}})", R"({"x": 1})",
       "x: invalid test: $$exists takes a boolean, got 1 (int)"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, TypeTakesTheNamesOfTheTypeQueryOperator) {
  // One value of every type, and the name $$type gives it.
  const std::pair<std::string_view, std::string_view> values[] = {
      {"1.5", "double"},
      {R"("s")", "string"},
      {R"({"a": 1})", "object"},
      {"[1]", "array"},
      {R"({"$binary": {"base64": "AQI=", "subType": "00"}})", "binData"},
      {R"({"$undefined": true})", "undefined"},
      {R"({"$oid": "57e193d7a9cc81b4027498b5"})", "objectId"},
      {"true", "bool"},
      {R"({"$date": {"$numberLong": "0"}})", "date"},
      {"null", "null"},
      {R"({"$regularExpression": {"pattern": "a", "options": ""}})", "regex"},
      {R"({"$dbPointer": {"$ref": "c", "$id": {"$oid": "57e193d7a9cc81b4027498b5"}}})",
       "dbPointer"},
      {R"({"$code": "f"})", "javascript"},
      {R"({"$symbol": "s"})", "symbol"},
      {R"({"$code": "f", "$scope": {}})", "javascriptWithScope"},
      {"1", "int"},
      {R"({"$timestamp": {"t": 1, "i": 1}})", "timestamp"},
      {R"({"$numberLong": "1"})", "long"},
      {R"({"$numberDecimal": "1"})", "decimal"},
      {R"({"$minKey": 1})", "minKey"},
      {R"({"$maxKey": 1})", "maxKey"},
  };
  for (const auto& [value, name] : values) {
    for (const auto& [other_value, other_name] : values) {
      SCOPED_TRACE(std::string(value) + " against $$type " + std::string(other_name));
      const std::string expected = R"({"$$type": ")" + std::string(other_name) + R"("})";
      const std::string got = run(expected, value);
      if (name == other_name) {
        EXPECT_EQ(got, "");
      } else {
        EXPECT_TRUE(got.starts_with("expected type \"" + std::string(other_name) + "\", got "))
            << got;
      }
    }
    // "number" is int, long, double and decimal.
    SCOPED_TRACE(std::string(value) + " against $$type number");
    const bool number = name == "int" || name == "long" || name == "double" || name == "decimal";
    EXPECT_EQ(run(R"({"$$type": "number"})", value).empty(), number);
  }

  const test_case cases[] = {
      {"a list, second matches", R"({"$$type": ["int", "long"]})", R"({"$numberLong": "5"})", ""},
      {"a list, none matches", R"({"x": {"$$type": ["int", "long"]}})", R"({"x": 1.5})",
       R"(x: expected type "int" or "long", got 1.5 (double))"},
      {"array elements are not examined", R"({"$$type": "array"})", R"(["a", 1])", ""},
      {"absent", R"({"x": {"$$type": "string"}})", "{}",
       R"(x: expected type "string", got no value)"},
      {"unknown name", R"({"$$type": "integer"})", "1",
       R"(invalid test: $$type: unknown type name "integer")"},
      {"unknown name in a list", R"({"$$type": ["int", "float"]})", "1",
       R"(invalid test: $$type: unknown type name "float")"},
      {"not a string", R"({"$$type": 16})", "1",
       "invalid test: $$type takes a type name or an array of them, got 16 (int)"},
      {"empty list", R"({"$$type": []})", "1", "invalid test: $$type takes at least one type name"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, UnsetOrMatches) {
  const test_case cases[] = {
      {"absent", R"({"insertedId": {"$$unsetOrMatches": 2}})", "{}", ""},
      {"present, equal", R"({"insertedId": {"$$unsetOrMatches": 2}})",
       R"({"insertedId": {"$numberLong": "2"}})", ""},
      {"present, different", R"({"insertedId": {"$$unsetOrMatches": 2}})", R"({"insertedId": 3})",
       "insertedId: expected 2 (int), got 3 (int)"},
      {"present, null", R"({"insertedId": {"$$unsetOrMatches": 2}})", R"({"insertedId": null})",
       "insertedId: expected 2 (int), got null (null)"},
      {"operator inside", R"({"x": {"$$unsetOrMatches": {"$$type": "int"}}})", R"({"x": "a"})",
       R"(x: expected type "int", got "a" (string))"},
      {"the whole result, absent", R"({"$$unsetOrMatches": {"deletedCount": 0}})", std::nullopt,
       ""},
      // It does not change whether the document is root-level.
      {"the whole result, extra field at the root", R"({"$$unsetOrMatches": {"deletedCount": 0}})",
       R"({"deletedCount": 0, "insertedCount": 0})", ""},
      {"nested, extra field", R"({"r": {"$$unsetOrMatches": {"n": 0}}})",
       R"({"r": {"n": 0, "m": 1}})", "r.m: unexpected field, got 1 (int)"},
  };
  run_cases(cases);
  // Not root-level when the caller says so.
  EXPECT_EQ(run(R"({"$$unsetOrMatches": {"n": 0}})", R"({"n": 0, "m": 1})", false),
            "m: unexpected field, got 1 (int)");
}

TEST(UnifiedMatchTest, MatchesEntity) {
  const test_case cases[] = {
      {"equal", R"({"_id": {"$$matchesEntity": "id0"}})",
       R"({"_id": {"$oid": "57e193d7a9cc81b4027498b5"}})", ""},
      {"different", R"({"_id": {"$$matchesEntity": "id0"}})",
       R"({"_id": {"$oid": "57e193d7a9cc81b4027498b6"}})",
       R"(_id: expected {"$oid":"57e193d7a9cc81b4027498b5"} (objectId), got {"$oid":"57e193d7a9cc81b4027498b6"} (objectId))"},
      {"absent", R"({"_id": {"$$matchesEntity": "id0"}})", "{}",
       R"(_id: expected {"$oid":"57e193d7a9cc81b4027498b5"} (objectId), got no value)"},
      {"undefined entity", R"({"_id": {"$$matchesEntity": "nope"}})", R"({"_id": 1})",
       R"(_id: invalid test: $$matchesEntity: no entity "nope")"},
      {"not a name", R"({"_id": {"$$matchesEntity": 1}})", R"({"_id": 1})",
       "_id: invalid test: $$matchesEntity takes an entity name, got 1 (int)"},
      // A document entity keeps the level: extra fields at the root, none below.
      {"document at the root", R"({"$$matchesEntity": "doc0"})", R"({"x": 1, "y": 2})", ""},
      {"document nested", R"({"d": {"$$matchesEntity": "doc0"}})", R"({"d": {"x": 1, "y": 2}})",
       "d.y: unexpected field, got 2 (int)"},
  };
  run_cases(cases);

  // A runner without entities: every entity is undefined.
  const auto want = boxed(R"({"$$matchesEntity": "id0"})");
  const auto got = boxed("1");
  EXPECT_EQ(oid::unified::match(*want.view().begin(), *got.view().begin(), match_context{}),
            R"(invalid test: $$matchesEntity: no entity "id0")");
}

TEST(UnifiedMatchTest, MatchesHexBytes) {
  const test_case cases[] = {
      {"string", R"({"$$matchesHexBytes": "616263"})", R"("abc")", ""},
      {"string, upper case hex", R"({"$$matchesHexBytes": "6A6B"})", R"("jk")", ""},
      {"string differs", R"({"$$matchesHexBytes": "616264"})", R"("abc")",
       R"(expected bytes 616264, got "abc" (string))"},
      {"string is longer", R"({"$$matchesHexBytes": "6162"})", R"("abc")",
       R"(expected bytes 6162, got "abc" (string))"},
      {"empty", R"({"$$matchesHexBytes": ""})", R"("")", ""},
      {"binary", R"({"$$matchesHexBytes": "12abcd"})",
       R"({"$binary": {"base64": "EqvN", "subType": "00"}})", ""},
      {"binary differs", R"({"$$matchesHexBytes": "12abce"})",
       R"({"$binary": {"base64": "EqvN", "subType": "00"}})",
       R"(expected bytes 12abce, got {"$binary":{"base64":"EqvN","subType":"00"}} (binData))"},
      {"a number", R"({"x": {"$$matchesHexBytes": "01"}})", R"({"x": 1})",
       "x: expected bytes 01, got 1 (int)"},
      {"absent", R"({"x": {"$$matchesHexBytes": "01"}})", "{}",
       "x: expected bytes 01, got no value"},
      {"odd length", R"({"$$matchesHexBytes": "123"})", R"("abc")",
       R"(invalid test: $$matchesHexBytes: "123" is not an even number of hex digits)"},
      {"not hex", R"({"$$matchesHexBytes": "zz"})", R"("abc")",
       R"(invalid test: $$matchesHexBytes: "zz" is not an even number of hex digits)"},
      {"not a string", R"({"$$matchesHexBytes": 12})", R"("abc")",
       "invalid test: $$matchesHexBytes takes a hex string, got 12 (int)"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, SessionLsid) {
  const test_case cases[] = {
      {"equal", R"({"lsid": {"$$sessionLsid": "session0"}})",
       R"({"lsid": {"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}}})",
       ""},
      {"another session", R"({"lsid": {"$$sessionLsid": "session0"}})",
       R"({"lsid": {"id": {"$binary": {"base64": "AQECAwQFBgcICQoLDA0ODw==", "subType": "04"}}}})",
       R"(lsid.id: expected {"$binary":{"base64":"AAECAwQFBgcICQoLDA0ODw==","subType":"04"}} (binData), got {"$binary":{"base64":"AQECAwQFBgcICQoLDA0ODw==","subType":"04"}} (binData) (the lsid of session "session0"))"},
      {"extra field", R"({"lsid": {"$$sessionLsid": "session0"}})",
       R"({"lsid": {"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "x": 1}})",
       R"(lsid.x: unexpected field, got 1 (int) (the lsid of session "session0"))"},
      {"absent", R"({"lsid": {"$$sessionLsid": "session0"}})", "{}",
       R"(lsid: expected a document, got no value (the lsid of session "session0"))"},
      {"undefined session", R"({"lsid": {"$$sessionLsid": "session9"}})", R"({"lsid": {}})",
       R"(lsid: invalid test: $$sessionLsid: no session entity "session9")"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, Lte) {
  const test_case cases[] = {
      {"equal", R"({"$$lte": 2})", "2", ""},
      {"less", R"({"$$lte": 2})", "1", ""},
      {"long, equal", R"({"$$lte": 2})", R"({"$numberLong": "2"})", ""},
      {"double, equal", R"({"$$lte": 1})", "1.0", ""},
      {"double, zero", R"({"$$lte": 1})", "0.0", ""},
      {"double, greater", R"({"$$lte": 1})", "1.1",
       "expected a number <= 1 (int), got 1.1 (double)"},
      {"greater", R"({"x": {"$$lte": 2}})", R"({"x": 3})",
       "x: expected a number <= 2 (int), got 3 (int)"},
      {"double limit", R"({"$$lte": 2.1})", "2", ""},
      {"long limit", R"({"$$lte": {"$numberLong": "3"}})", "3", ""},
      // 2^53 + 1 > 2^53 although both round to the same double.
      {"long just above a double limit", R"({"$$lte": 9007199254740992.0})",
       R"({"$numberLong": "9007199254740993"})",
       "expected a number <= 9007199254740992.0 (double), got 9007199254740993 (long)"},
      {"NaN", R"({"$$lte": 2})", R"({"$numberDouble": "NaN"})",
       R"(expected a number <= 2 (int), got {"$numberDouble":"NaN"} (double))"},
      {"not a number", R"({"$$lte": 2})", R"("1")",
       R"(expected a number <= 2 (int), got "1" (string))"},
      {"decimal", R"({"$$lte": 2})", R"({"$numberDecimal": "1"})",
       R"(expected a number <= 2 (int), got {"$numberDecimal":"1"} (decimal))"},
      {"absent", R"({"x": {"$$lte": 2}})", "{}", "x: expected a number <= 2 (int), got no value"},
      {"limit not a number", R"({"$$lte": "2"})", "1",
       R"(invalid test: $$lte takes an int, a long or a double, got "2" (string))"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, MatchAsDocument) {
  const test_case cases[] = {
      {"flexible numbers", R"({"json": {"$$matchAsDocument": {"x": 1.0, "y": 2}}})",
       R"({"_id": 1, "json": "{ \"x\": 1, \"y\": 2.0 }"})", ""},
      {"operators inside", R"({"json": {"$$matchAsDocument": {"x": 1, "y": {"$$exists": true}}}})",
       R"({"json": "{ \"x\": 1, \"y\": 2 }"})", ""},
      {"Extended JSON", R"({"json": {"$$matchAsDocument": {"x": {"$$type": "objectId"}}}})",
       R"({"json": "{ \"x\": { \"$oid\": \"57e193d7a9cc81b4027498b5\" } }"})", ""},
      {"value differs", R"({"json": {"$$matchAsDocument": {"x": 1, "y": "two"}}})",
       R"({"json": "{ \"x\": 1, \"y\": 2 }"})", R"(json.y: expected "two" (string), got 2 (int))"},
      {"operator fails inside", R"({"json": {"$$matchAsDocument": {"y": {"$$exists": false}}}})",
       R"({"json": "{ \"y\": 2 }"})", "json.y: expected no field, got 2 (int)"},
      {"not root-level", R"({"json": {"$$matchAsDocument": {"x": 1}}})",
       R"({"json": "{ \"x\": 1, \"y\": 2 }"})", "json.y: unexpected field, got 2 (int)"},
      {"with matchAsRoot", R"({"json": {"$$matchAsDocument": {"$$matchAsRoot": {"x": 1}}}})",
       R"({"json": "{ \"x\": 1, \"y\": 2 }"})", ""},
      {"a scalar", R"({"json": {"$$matchAsDocument": {"$$matchAsRoot": {}}}})", R"({"json": "1"})",
       R"(json: expected an Extended JSON document, got "1" (string) (not one at byte 0))"},
      {"an array", R"({"json": {"$$matchAsDocument": {"$$matchAsRoot": {}}}})",
       R"({"json": "[ \"foo\" ]"})",
       R"(json: expected an Extended JSON document, got "[ \"foo\" ]" (string) (not one at byte 0))"},
      {"not JSON", R"({"json": {"$$matchAsDocument": {"$$matchAsRoot": {}}}})",
       R"({"json": "{ \"x\" }"})",
       R"(json: expected an Extended JSON document, got "{ \"x\" }" (string) (not one at byte 6))"},
      {"not a string", R"({"json": {"$$matchAsDocument": {}}})", R"({"json": {}})",
       "json: expected an Extended JSON string, got {} (object)"},
      {"absent", R"({"json": {"$$matchAsDocument": {}}})", "{}",
       "json: expected an Extended JSON string, got no value"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, MatchAsRoot) {
  const test_case cases[] = {
      {"extra field allowed", R"({"x": {"$$matchAsRoot": {"y": 2}}})", R"({"x": {"y": 2, "z": 3}})",
       ""},
      {"flexible numbers", R"({"x": {"$$matchAsRoot": {"y": 2.0}}})", R"({"x": {"y": 2, "z": 3}})",
       ""},
      {"operators inside", R"({"x": {"$$matchAsRoot": {"y": 2, "z": {"$$exists": true}}}})",
       R"({"x": {"y": 2, "z": 3}})", ""},
      {"value differs", R"({"x": {"$$matchAsRoot": {"y": 3}}})", R"({"x": {"y": 2, "z": 3}})",
       "x.y: expected 3 (int), got 2 (int)"},
      {"only its top level is root", R"({"x": {"$$matchAsRoot": {"y": {"a": 1}}}})",
       R"({"x": {"y": {"a": 1, "b": 2}}})", "x.y.b: unexpected field, got 2 (int)"},
      {"not a document", R"({"x": {"$$matchAsRoot": 1}})", R"({"x": 1})",
       "x: invalid test: $$matchAsRoot takes a document"},
  };
  run_cases(cases);
}

TEST(UnifiedMatchTest, UnknownOperatorIsAnErrorInTheTest) {
  EXPECT_EQ(run(R"({"x": {"$$foo": 1}})", R"({"x": 1})"),
            "x: invalid test: unknown special operator $$foo");
  // Absent or present, the operator is checked.
  EXPECT_EQ(run(R"({"x": {"$$foo": 1}})", "{}"), "x: invalid test: unknown special operator $$foo");
  // Two keys: a plain document, whose keys are looked up in the actual one.
  EXPECT_EQ(run(R"({"$$type": "int", "y": 1})", R"({"$$type": "int", "y": 1})"), "");
  EXPECT_EQ(run(R"({"$$type": "int", "y": 1})", R"({"y": 1})"),
            R"($$type: expected "int" (string), got no value)");
}

TEST(UnifiedMatchTest, IsSpecialOperator) {
  const std::pair<std::string_view, bool> cases[] = {
      {"{}", false},
      {R"({"$$type": "int"})", true},
      {R"({"$$anything": 1})", true},
      {R"({"$$type": "int", "y": 1})", false},
      {R"({"y": 1, "$$type": "int"})", false},
      {R"({"$type": "int"})", false},
      {R"({"a": {"$$exists": true}})", false},
  };
  for (const auto& [json, want] : cases) {
    SCOPED_TRACE(json);
    const auto doc = parse(json);
    EXPECT_EQ(oid::unified::is_special_operator(doc.view()), want);
  }
}

}  // namespace

// Every special operator in the expectations of the specification's unified test files (under
// OID_SPEC_DATA_DIR, from scripts/spec-data.sh) is one the matcher knows, with an argument it
// takes: matched against no value, none is reported as an error in the test. The files of
// unified-format/invalid are left out: they are the format's own malformed files.
class operator_census {
 public:
  explicit operator_census(std::string file) : file_(std::move(file)) {}

  // Walks a value of a test file, skipping what is not an expectation.
  void walk(const oid::bson::element& e) {
    const auto doc = e.type() == oid::bson::type::document ? e.get_document() : e.get_array();
    if (!doc) return;
    if (e.type() == oid::bson::type::document && oid::unified::is_special_operator(*doc)) {
      const std::string name(doc->begin()->key());
      ++seen_[name];
      const std::string why = oid::unified::match(e, std::nullopt, context_);
      EXPECT_EQ(why.find("invalid test:"), std::string::npos) << file_ << ": " << why;
    }
    for (const oid::bson::element& child : *doc) {
      // Operation arguments, entities and initial data are inputs, not expectations ($$placeholder
      // and $$hexBytes live there).
      const std::string_view k = child.key();
      if (k == "arguments" || k == "createEntities" || k == "initialData") continue;
      walk(child);
    }
  }

  static const std::map<std::string, int>& seen() { return seen_; }

 private:
  static inline std::map<std::string, int> seen_;
  std::string file_;
  // Any entity is defined, so that only the operators' own arguments can be wrong.
  match_context context_{
      [](std::string_view) -> std::optional<oid::bson::document> { return boxed("1"); },
      [](std::string_view) -> std::optional<oid::bson::document> { return parse(R"({"id": 1})"); }};
};

TEST(UnifiedMatchSpecDataTest, EveryOperatorInTheSuitesIsKnownAndWellFormed) {
  namespace fs = std::filesystem;
  const fs::path root = oid::testing::spec_data_root();
  if (!fs::is_directory(root / "unified-format")) {
    OID_SKIP_OR_FAIL_IN_CI("unified test format suites not found under " << root);
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".json" || p.parent_path() == root / "unified-format" / "invalid") {
      continue;
    }
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  std::size_t unified_files = 0;
  for (const auto& p : files) {
    std::ifstream in(p, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (text.find("\"schemaVersion\"") == std::string::npos) continue;
    const auto doc = oid::bson::from_json(text);
    ASSERT_TRUE(doc.has_value()) << p;
    if (!doc->view().contains("schemaVersion")) continue;
    ++unified_files;
    operator_census census(p.string());
    for (const oid::bson::element& e : doc->view()) {
      if (e.key() != "createEntities" && e.key() != "initialData") census.walk(e);
    }
  }
  // The operators the specification defines for matching, each used somewhere in the suites.
  for (const char* name :
       {"$$exists", "$$type", "$$unsetOrMatches", "$$matchesEntity", "$$matchesHexBytes",
        "$$sessionLsid", "$$lte", "$$matchAsDocument", "$$matchAsRoot"}) {
    const auto it = operator_census::seen().find(name);
    EXPECT_TRUE(it != operator_census::seen().end() && it->second > 0) << name;
  }
  std::string counts;
  for (const auto& [name, n] : operator_census::seen()) {
    counts += ' ' + name + '=' + std::to_string(n);
  }
  std::cout << unified_files << " unified test files; special operators:" << counts << '\n';
  EXPECT_GT(unified_files, 300U);
}

// The unified format's own files about the matching operators (valid-pass: every test passes;
// valid-fail: every test fails), run against a stand-in for the server that holds one collection
// in memory: insertOne appends its document and records the insert command it would send, find
// returns the documents whose _id equals the filter's. Each expectResult is matched with
// match_root_array (find returns root-level documents), each expected command with
// match_document. These files need nothing else from a server.
class fake_collection_run {
 public:
  // The first failure of test `t` of `file`, or "" when it passes.
  static std::string run_test(const oid::bson::document_view file,
                              const oid::bson::document_view t) {
    std::vector<oid::bson::document> docs;
    const oid::bson::document_view initial_data = *file.find("initialData")->get_array();
    for (const auto& data : initial_data) {
      const oid::bson::document_view documents =
          *data.get_document()->find("documents")->get_array();
      for (const auto& d : documents) docs.emplace_back(*d.get_document());
    }
    std::vector<oid::bson::document> commands;
    const match_context ctx;
    std::size_t index = 0;
    const oid::bson::document_view operations = *t.find("operations")->get_array();
    for (const auto& op_element : operations) {
      const auto op = *op_element.get_document();
      const auto name = *op.find("name")->get_string();
      const auto args = *op.find("arguments")->get_document();
      std::optional<oid::bson::document> result;  // {"v": result}
      if (name == "insertOne") {
        const auto doc = *args.find("document")->get_document();
        docs.emplace_back(doc);
        oid::bson::builder cmd;
        cmd.append_string("insert", "coll0").open_array("documents").append_document("0", doc);
        cmd.close().append_bool("ordered", true);
        commands.push_back(std::move(cmd).extract());
      } else if (name == "find") {
        const auto id = *args.find("filter")->get_document()->find("_id");
        oid::bson::builder found;
        found.open_array("v");
        std::size_t n = 0;
        for (const auto& d : docs) {
          const auto got = d.view().find("_id");
          if (got && got->type() == id.type() &&
              std::ranges::equal(got->raw_value(), id.raw_value())) {
            found.append_document(std::to_string(n++), d.view());
          }
        }
        found.close();
        result = std::move(found).extract();
      } else {
        return "operation " + std::string(name) + " is not simulated";
      }
      if (const auto want = op.find("expectResult")) {
        const std::optional<oid::bson::element> got =
            result ? std::optional(*result->view().begin()) : std::nullopt;
        const std::string path = "operations[" + std::to_string(index) + "].expectResult";
        if (std::string why = oid::unified::match_root_array(*want, got, ctx, path); !why.empty()) {
          return why;
        }
      }
      ++index;
    }
    if (const auto expect_events = t.find("expectEvents")) {
      const oid::bson::document_view clients = *expect_events->get_array();
      for (const auto& client : clients) {
        const auto events = *client.get_document()->find("events")->get_array();
        std::size_t i = 0;
        for (const auto& event : events) {
          if (i >= commands.size()) return "fewer events than expected";
          const auto started = event.get_document()->find("commandStartedEvent");
          if (!started) return "only commandStartedEvent is simulated";
          const auto command = *started->get_document()->find("command")->get_document();
          const std::string path = "expectEvents[" + std::to_string(i) + "].command";
          std::string why = oid::unified::match_document(command, commands[i].view(), ctx, path);
          if (!why.empty()) return why;
          ++i;
        }
      }
    }
    return {};
  }
};

TEST(UnifiedMatchSpecDataTest, OperatorFilesOfTheFormatPassAndFailAsTheySay) {
  namespace fs = std::filesystem;
  const fs::path dir = oid::testing::spec_data_dir("unified-format");
  if (!fs::is_directory(dir)) {
    OID_SKIP_OR_FAIL_IN_CI("unified test format suites not found under " << dir);
  }
  const std::pair<std::string_view, bool> files[] = {
      {"valid-pass/operator-lte.json", true},
      {"valid-pass/operator-matchAsDocument.json", true},
      {"valid-pass/operator-matchAsRoot.json", true},
      {"valid-pass/operator-type-number_alias.json", true},
      {"valid-fail/operator-matchAsDocument.json", false},
      {"valid-fail/operator-matchAsRoot.json", false},
  };
  std::size_t tests = 0;
  for (const auto& [name, pass] : files) {
    std::ifstream in(dir / name, std::ios::binary);
    ASSERT_TRUE(in) << dir / name;
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto file = oid::bson::from_json(text);
    ASSERT_TRUE(file.has_value()) << name;
    const oid::bson::document_view file_tests = *file->view().find("tests")->get_array();
    for (const auto& t : file_tests) {
      const auto test = *t.get_document();
      const std::string description(*test.find("description")->get_string());
      SCOPED_TRACE(std::string(name) + ": " + description);
      const std::string why = fake_collection_run::run_test(file->view(), test);
      EXPECT_EQ(why.find("simulated"), std::string::npos) << why;
      if (pass) {
        EXPECT_EQ(why, "");
      } else {
        EXPECT_NE(why, "");
        std::cout << name << ": " << description << ": " << why << '\n';
      }
      ++tests;
    }
  }
  EXPECT_EQ(tests, 19U);  // 1 + 3 + 4 + 4 in valid-pass, 6 + 1 in valid-fail
}
