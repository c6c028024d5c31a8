// tests/unified/match.hpp: the matching rules of MongoDB's unified test format (schema 1.x).
//
// The unified test format specification (mongodb/specifications,
// source/unified-test-format/unified-test-format.md, "Evaluating Matches" and "Special Operators
// for Matching Assertions") says when an actual value (an operation's result, a command in an
// event, a document in a collection) matches the expected value a test file gives:
//
//   * numbers: int32, int64 and double match when their values are equal (1 matches 1.0, not
//     1.5); a decimal128 matches only a decimal128 with the same bytes;
//   * documents: every expected key must be in the actual document and match, in any order; the
//     actual document may hold more keys only at the root level (a command, a reply, a document
//     of a find result: see `match` and `match_root_array`);
//   * arrays: the same number of elements, matched one by one; an array is never root-level, nor
//     are the documents in it (except through `match_root_array`);
//   * anything else: the same type and the same value (a code-with-scope's scope compared exactly,
//     keys in any order);
//   * a document whose first and only key starts with "$$" is a special operator: $$exists,
//     $$type, $$unsetOrMatches, $$matchesEntity, $$matchesHexBytes, $$sessionLsid, $$lte,
//     $$matchAsDocument, $$matchAsRoot. Any other "$$" key is an error in the test file.
//
// Each function returns an empty string when the values match, else one line that names the
// first difference and where it is: "cursor.firstBatch[1].x: expected 2 (int), got 3 (long)". A
// line that starts with "invalid test: " after the path is an error in the test file (an unknown
// operator, a malformed argument, an undefined entity), not in the value; the runner reports it
// as a failure too. Types are named as the $type query operator names them ("int", "long",
// "double", "object", "binData", ...), values as relaxed Extended JSON, shortened past 100
// characters.
//
//     auto want = oid::bson::from_json(R"({"n": 1, "lsid": {"$$sessionLsid": "session0"}})");
//     std::string why = oid::unified::match_document(want->view(), reply.view(), ctx);
//     if (!why.empty()) fail("expectResult: " + why);
#pragma once

#include <functional>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace oid::unified {

/// What the matcher asks the runner. An empty function is treated as "no such entity".
struct match_context {
  /// For $$matchesEntity: the value the entity `id` holds, as a one-field document {"v": value};
  /// nullopt when there is no such entity or it is not a BSON value (a client, a session, ...).
  std::function<std::optional<bson::document>(std::string_view id)> entity;
  /// For $$sessionLsid: the lsid document of the session entity `id`; nullopt when there is no
  /// such entity or it is not a session.
  std::function<std::optional<bson::document>(std::string_view id)> session_lsid;
};

/// Matches `actual` against `expected` (whose key is ignored, as is `actual`'s). `actual` is
/// nullopt when the field (or the result) does not exist: only $$exists false and
/// $$unsetOrMatches match an absent value. `root`: when `expected` is a document, `actual` is a
/// root-level document and may hold fields `expected` does not name (at that level only; it has
/// no effect on an array). `path` is prefixed to the place a message names ("" for none), e.g.
/// "events[2].command". Returns "" on a match, else the one-line reason (see the header).
/// Complexity: O(size of expected x number of fields of the actual documents).
///
///     // expectResult of countDocuments: {"expectResult": 2}
///     std::string why = match(expect_result, bson_result_element, ctx, true, "expectResult");
std::string match(const bson::element& expected, const std::optional<bson::element>& actual,
                  const match_context& ctx, bool root = true, std::string_view path = {});

/// `match` for two documents, `actual` as a root-level document (extra fields allowed at the top
/// level only). `expected` may itself be a special operator ({"$$matchAsRoot": ...}, ...).
std::string match_document(bson::document_view expected, bson::document_view actual,
                           const match_context& ctx, std::string_view path = {});

/// `match` for the expectResult of an operation that returns an iterable of documents (find,
/// aggregate, listCollections, listDatabases, listIndexes, runCursorCommand, ...): `expected` is
/// an array whose documents are root-level (extra fields allowed in each, not below), which
/// `match` never assumes since `distinct` returns arrays of plain values. The same holds through
/// $$unsetOrMatches and $$matchesEntity; anything else is matched as by `match` with root set.
std::string match_root_array(const bson::element& expected,
                             const std::optional<bson::element>& actual, const match_context& ctx,
                             std::string_view path = {});

/// True when `doc` is a special operator: its first and only key starts with "$$" (whether or not
/// the operator is one the matcher knows).
bool is_special_operator(bson::document_view doc) noexcept;

}  // namespace oid::unified
