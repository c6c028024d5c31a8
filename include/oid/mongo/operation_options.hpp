// oid/mongo/operation_options.hpp: the options of `collection::aggregate`, the find-and-modify
// operations (`find_one_and_update`, `find_one_and_replace`, `find_one_and_delete`) and
// `distinct`. Every option is sent only when set, so the server's defaults apply otherwise.
//
//     auto cur = coll.aggregate(pipeline, {.allow_disk_use = true, .batch_size = 500});
//     auto doc = coll.find_one_and_update(filter, inc,
//                                         {.return_document = oid::mongo::return_document::after});
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/bson/view.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>

namespace oid::mongo {

/// Options of `aggregate`.
struct aggregate_options {
  /// Let the stages write temporary files when they need more memory (`allowDiskUse`).
  std::optional<bool> allow_disk_use{};
  /// Documents per batch, for the aggregate command and each getMore (0: the server's default).
  /// Not sent when the pipeline ends in $out or $merge, which return no documents.
  std::int32_t batch_size = 0;
  /// How long the server may run the aggregation (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  /// Let $out or $merge skip the target's document validation (`bypassDocumentValidation`).
  std::optional<bool> bypass_document_validation{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  bson::document_view hint{};       ///< the index to use, as its key pattern (empty: the server's)
  bson::document_view let{};        ///< variables the pipeline reads as `$$name` (empty: none)
  /// The write concern of a pipeline ending in $out or $merge (default: the server's).
  mongo::write_concern write_concern{};
};

/// Which document a find-and-modify operation returns.
enum class return_document {
  before,  ///< the document as it was before the change (none after an upsert that inserted)
  after,   ///< the document as the change left it (the inserted one after an upsert)
};

/// Options of `find_one_and_update` and `find_one_and_replace`.
struct find_one_and_modify_options {
  bson::document_view projection{};  ///< fields of the returned document (empty: all)
  bson::document_view sort{};        ///< which match to change when several do (empty: any)
  bool upsert = false;               ///< insert a document when none matches
  /// The document before the change (the default) or after it.
  mongo::return_document return_document = mongo::return_document::before;
  /// How long the server may look for the document (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  /// Let the write skip the collection's document validation (`bypassDocumentValidation`).
  std::optional<bool> bypass_document_validation{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  bson::document_view hint{};       ///< the index to use, as its key pattern (empty: the server's)
  /// The write concern (default: the server's, w: 1).
  mongo::write_concern write_concern{};
};

/// Options of `find_one_and_delete`.
struct find_one_and_delete_options {
  bson::document_view projection{};  ///< fields of the returned document (empty: all)
  bson::document_view sort{};        ///< which match to delete when several do (empty: any)
  /// How long the server may look for the document (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  bson::document_view hint{};       ///< the index to use, as its key pattern (empty: the server's)
  /// The write concern (default: the server's, w: 1).
  mongo::write_concern write_concern{};
};

/// Options of `distinct` and `estimated_document_count`.
struct read_options {
  /// How long the server may run the command (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's; distinct)
};

}  // namespace oid::mongo
