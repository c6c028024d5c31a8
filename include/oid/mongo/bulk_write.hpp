// oid/mongo/bulk_write.hpp: the write models of `collection::bulk_write`, its options and result.
//
// A bulk write is a list of inserts, updates, replacements and deletes in any mix. The client
// sends each run of consecutive models of one kind (inserts; updates and replacements; deletes)
// as one insert, update or delete command, split where the server's limits require, and adds up
// the results.
//
//     std::vector<oid::mongo::write_model> models{
//         oid::mongo::insert_one_model{doc.view()},
//         oid::mongo::update_many_model{filter.view(), set.view()},
//         oid::mongo::delete_one_model{other.view()}};
//     auto r = people.bulk_write(models);          // outcome<bulk_write_result>
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>
#include <variant>
#include <vector>

namespace oid::mongo {

/// Inserts `document`, after giving it an `_id` (a new ObjectId) when it has none.
struct insert_one_model {
  bson::document_view document{};
};
/// Applies the update operators of `update` (e.g. `{$set: {...}}`) to the first match of `filter`.
struct update_one_model {
  bson::document_view filter{};
  bson::document_view update{};
  bool upsert = false;  ///< insert a document when none matches
};
/// Applies the update operators of `update` to every match of `filter`.
struct update_many_model {
  bson::document_view filter{};
  bson::document_view update{};
  bool upsert = false;  ///< insert a document when none matches
};
/// Replaces the first match of `filter` by `replacement` (a document without update operators).
struct replace_one_model {
  bson::document_view filter{};
  bson::document_view replacement{};
  bool upsert = false;  ///< insert `replacement` when none matches
};
/// Deletes the first match of `filter`.
struct delete_one_model {
  bson::document_view filter{};
};
/// Deletes every match of `filter`.
struct delete_many_model {
  bson::document_view filter{};
};

/// One write of a bulk write.
using write_model = std::variant<insert_one_model, update_one_model, update_many_model,
                                 replace_one_model, delete_one_model, delete_many_model>;

/// Options of `bulk_write`.
struct bulk_write_options {
  /// Stop at the first refused write (true), or try every write and report all refusals.
  bool ordered = true;
  /// Let the writes skip the collection's document validation (sent only when set).
  std::optional<bool> bypass_document_validation{};
  /// The write concern (default: the server's, w: 1).
  mongo::write_concern write_concern{};
};

/// An `_id` and the position, in the models passed to `bulk_write`, of the write that made it.
struct indexed_id {
  std::size_t index = 0;  ///< the model's position in the caller's list
  bson::document id{};    ///< `{_id: value}`
};

/// What a bulk write did, added up over its commands. With w: 0 nothing is read back: every
/// count is 0 and only `inserted_ids` is filled.
struct bulk_write_result {
  std::int64_t inserted = 0;  ///< documents inserted by insert models
  std::int64_t matched = 0;   ///< documents matched by update and replace models
  std::int64_t modified = 0;  ///< documents actually changed by them
  std::int64_t deleted = 0;   ///< documents deleted
  std::int64_t upserted = 0;  ///< documents inserted by upserts
  /// The `_id` of every insert model's document (given one when it had none), by model index.
  std::vector<indexed_id> inserted_ids{};
  /// The `_id` of every upserted document, by model index.
  std::vector<indexed_id> upserted_ids{};
};

}  // namespace oid::mongo
