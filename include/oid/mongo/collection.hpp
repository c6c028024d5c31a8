// oid/mongo/collection.hpp: a collection of a client, and the CRUD operations on it.
//
// A `collection` is a database name, a collection name and the client's pool of connections
// (oid/mongo/client.hpp makes one with `client::collection`). Copies are cheap and any number of
// threads may use one at once; each operation borrows a connection from the pool for its
// duration. Operations return `outcome<T>` (oid/mongo/outcome.hpp): the result, or a failure with
// an `oid::errc` and, when the server refused, its code, codeName and message.
//
//     auto people = client.collection("app", "people");
//     auto ids = people.insert_many(docs);             // bulk_write_outcome<insert_many_result>
//     auto cur = people.find(filter, {.limit = 10});   // outcome<cursor>
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/bulk_write.hpp>
#include <oid/mongo/cursor.hpp>
#include <oid/mongo/operation_options.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/session.hpp>
#include <oid/mongo/write_concern.hpp>
#include <oid/result.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo {

struct client_state;  // opaque: what the client's copies share, defined inside the library

class client;

/// What kind of cursor `find` opens.
enum class cursor_type {
  /// Ends when the results are read (the default).
  non_tailable,
  /// On a capped collection: stays open after the last document, and a later `next()` returns
  /// what was appended since (`tailable`).
  tailable,
  /// Tailable, and each getMore waits on the server for new documents, up to `max_await_time`
  /// (`tailable` and `awaitData`).
  tailable_await,
};

/// Options of `find`. Every option is sent only when set, so the server's defaults apply
/// otherwise; views must outlive the call.
///
///     auto cur = coll.find(filter, {.sort = by_date.view(), .limit = 10,
///                                   .max_time = std::chrono::seconds(2), .comment = "report"});
struct find_options {
  bson::document_view projection{};  ///< fields to return (empty: all)
  bson::document_view sort{};        ///< sort order (empty: the server's order)
  std::int64_t skip = 0;             ///< documents to skip
  std::int64_t limit = 0;            ///< most documents to return (0: no limit)
  std::int32_t batch_size = 0;       ///< documents per batch (0: the server's default)
  /// How long the server may run the query (`maxTimeMS`); getMores are not bounded by it.
  std::optional<std::chrono::milliseconds> max_time{};
  index_hint hint{};                ///< the index to use (empty: the server's choice)
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  mongo::comment comment{};         ///< a note the server logs and profiles with the query
  bson::document_view let{};        ///< variables the filter reads as `$$name`
  bson::document_view min{};        ///< the index bounds' lower end, inclusive (with `hint`)
  bson::document_view max{};        ///< the index bounds' upper end, exclusive (with `hint`)
  bool return_key = false;          ///< return only the index keys (`returnKey`)
  bool show_record_id = false;      ///< add each document's `$recordId` (`showRecordId`)
  /// Let a large sort write temporary files (`allowDiskUse`).
  std::optional<bool> allow_disk_use{};
  /// On a sharded cluster: return what the shards that answer have rather than fail
  /// (`allowPartialResults`).
  bool allow_partial_results = false;
  /// Keep the server's cursor even when idle longer than the server's timeout
  /// (`noCursorTimeout`); close it yourself (the cursor's destructor does).
  bool no_cursor_timeout = false;
  /// A tailable cursor (capped collections only): see `cursor_type` and `cursor::alive`.
  cursor_type cursor_kind = cursor_type::non_tailable;
  /// With `cursor_type::tailable_await`: how long each getMore may wait for new documents
  /// (`maxTimeMS` of the getMore); unset: the server's default (1 s).
  std::optional<std::chrono::milliseconds> max_await_time{};
  /// Where to read (default: the collection's; see `collection::with_read_preference`);
  /// getMores follow the cursor.
  std::optional<mongo::read_preference> read_preference{};
  /// The read concern (default: the collection's; see `collection::with_read_concern`).
  std::optional<mongo::read_concern> read_concern{};
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
  /// With `timeout`: whether it bounds the cursor's whole life (the default for a cursor that
  /// ends) or each call that reads more (the default for a tailable one, and its only mode).
  std::optional<mongo::timeout_mode> timeout_mode{};
};

/// Options of `insert_one` and `insert_many`.
struct insert_options {
  /// Stop at the first failed document (true), or try every document and report all failures.
  bool ordered = true;
  /// The write concern when any field is set (default: the collection's; see
  /// `collection::with_write_concern`).
  mongo::write_concern write_concern{};
  /// Let the documents skip the collection's validator (`bypassDocumentValidation`; sent only
  /// when set).
  std::optional<bool> bypass_document_validation{};
  mongo::comment comment{};  ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

/// The result of inserts: the `_id` of every document sent, in order, as one-field documents
/// `{_id: value}` (the value an ObjectId unless the document brought its own `_id`).
struct insert_many_result {
  std::int64_t inserted = 0;        ///< documents the server reports inserted (0 for w: 0)
  std::vector<bson::document> ids;  ///< `{_id: ...}` of each document, in input order
};

/// The result of `insert_one`: the document's `_id`, as the one-field document `{_id: value}`
/// (a new ObjectId unless the document brought its own).
struct insert_one_result {
  std::int64_t inserted = 0;  ///< 1, or 0 for w: 0 (nothing is read back)
  bson::document id;          ///< `{_id: ...}` of the document
};

/// The result of an update or replacement.
struct update_result {
  std::int64_t matched = 0;                   ///< documents that matched the filter
  std::int64_t modified = 0;                  ///< documents actually changed
  std::optional<bson::document> upserted_id;  ///< `{_id: ...}` of an upserted document
};

// ---- Index operations: options ------------------------------------------------------------

/// Options of an index: createIndexes' fields of the same names. Empty views and absent values
/// are left out of the specification.
struct index_options {
  bool unique = false;  ///< reject documents whose key is already present
  bool sparse = false;  ///< index only the documents that have the key's fields
  std::string name;     ///< the index name (empty: derived from the keys, e.g. "a_1_b_-1")
  std::optional<std::int64_t> expire_after_seconds;  ///< a TTL index: delete documents this old
  bson::document_view partial_filter_expression;     ///< index only the documents matching this
  bson::document_view collation;                     ///< string comparison rules
  /// Any other fields of the specification, appended as they are (e.g. an index from a mongodump
  /// metadata file); "key", "name", "v" and "ns" among them are left out.
  bson::document_view extra;
};

/// One index of `create_indexes`: its key pattern (e.g. `{name: 1}`) and options.
struct index_model {
  bson::document_view keys;
  index_options options;
};

/// Options of the commands `create_index`, `create_indexes`, `drop_index` and `drop_indexes`
/// send (the index management specification's CreateIndexOptions and DropIndexOptions).
struct index_command_options {
  /// How long the server may run the command (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  mongo::comment comment{};  ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

// ---- end of the index operations' options ---------------------------------------------------

/// The filter that selects documents created in [from, to) by their ObjectId `_id`:
/// `{_id: {$gte: min_for_time(from), $lt: min_for_time(to)}}`, leaving out an absent bound, and
/// combined with `filter` by `$and` when that is not empty. Errors: time_out_of_range for a time
/// an ObjectId cannot hold (before 1970 or after 2106-02-07T06:28:15Z).
///
///     auto f = oid::mongo::created_between_filter(oid::parse_time("2010-10-01").value(),
///                                                 oid::parse_time("2010-11-01").value());
result<bson::document> created_between_filter(std::optional<std::chrono::sys_seconds> from,
                                              std::optional<std::chrono::sys_seconds> to,
                                              bson::document_view filter = {});

/// A collection of a client: a name and the client's pool. Cheap to copy; thread-safe.
class collection {
 public:
  /// `{_id: ...}` first, then inserted. See `insert_many`.
  outcome<insert_one_result> insert_one(bson::document_view doc,
                                        const insert_options& options = {});
  /// Gives every document an `_id` first when it has none (a new ObjectId; `bson::ensure_id`),
  /// then inserts them in batches that respect the server's maxWriteBatchSize,
  /// maxMessageSizeBytes and maxBsonObjectSize, each sent as an OP_MSG document sequence.
  /// Ordered inserts stop at the first failure; unordered ones try every document. A bulk write
  /// of inserts: its failure is a `bulk_write_error` (oid/mongo/bulk_write.hpp) whose
  /// `partial_result` says how many were inserted and which (`inserted_ids`, by index in `docs`).
  /// Failures: duplicate_key (when every refused document was a duplicate key; `write_errors`
  /// has each, with its index in `docs`), server_error, write_concern_failed, too_large (a
  /// document above maxBsonObjectSize, before anything is sent), and transport codes. With w: 0
  /// the batches are sent with moreToCome and nothing is read: `inserted` is 0 and failures go
  /// unseen.
  bulk_write_outcome<insert_many_result> insert_many(std::span<const bson::document_view> docs,
                                                     const insert_options& options = {});

  /// Finds the documents matching `filter` (empty: all). The cursor fetches further batches as
  /// it is read. Failures: invalid_value (`oid::errc`) for `max_await_time` without
  /// `cursor_type::tailable_await` (nothing is sent); the server's refusal of an option it does
  /// not support, as server_error; transport codes.
  outcome<cursor> find(bson::document_view filter = {}, const find_options& options = {});
  /// The first document matching `filter` (in `options.sort` order, after `options.skip`), or
  /// nothing when none does: a find of `limit: 1, singleBatch: true`, which leaves no cursor on
  /// the server. Of `options`, all but `limit`, `batch_size` and the cursor's kind apply.
  /// Failures: those of `find`.
  outcome<std::optional<bson::document>> find_one(bson::document_view filter = {},
                                                  const find_options& options = {});
  /// Finds the documents created in [from, to) according to their ObjectId `_id`, with the
  /// filter `created_between_filter` makes. Failures: time_out_of_range for times an ObjectId
  /// cannot hold, and those of `find`.
  outcome<cursor> find_created_between(std::chrono::sys_seconds from, std::chrono::sys_seconds to,
                                       bson::document_view filter = {},
                                       const find_options& options = {});
  /// The number of documents matching `filter` (an aggregation with $match and $group).
  outcome<std::int64_t> count_documents(bson::document_view filter = {},
                                        const count_options& options = {});
  /// The `count` command, which the CRUD specification deprecates: on a sharded cluster it may
  /// count orphaned documents and those of chunks in migration, and a transaction refuses it.
  /// Prefer `count_documents` (exact) or `estimated_document_count` (fast); this is for code
  /// that must send what an older driver sent. Of `options`, everything applies.
  outcome<std::int64_t> count(bson::document_view filter = {}, const count_options& options = {});

  /// Applies `update` to the first match: update operators (e.g. `{$set: {...}}`) or a pipeline
  /// (a list of stages, e.g. `{$set: {total: {$add: ["$a", "$b"]}}}`; see `update_spec`), with
  /// the options of `write_options` (upsert, arrayFilters, hint, collation, let,
  /// bypassDocumentValidation). Failures, before anything is sent: invalid_value when the
  /// operators are empty or hold a field that is not an operator, when the pipeline is empty or
  /// has a stage that is not one `$` field, or for array filters with a pipeline. Then
  /// duplicate_key, server_error, write_concern_failed, transport codes.
  outcome<update_result> update_one(bson::document_view filter, const update_spec& update,
                                    const write_options& options = {});
  /// As `update_one`, to every match.
  outcome<update_result> update_many(bson::document_view filter, const update_spec& update,
                                     const write_options& options = {});
  /// Replaces the first match by `replacement`. Failures: invalid_value when `replacement` holds
  /// an update operator, or for `array_filters` (nothing to apply them to).
  outcome<update_result> replace_one(bson::document_view filter, bson::document_view replacement,
                                     const write_options& options = {});
  /// Deletes the first match; returns how many were deleted (0 or 1). Of `options`, the write
  /// concern, `hint`, `collation` and `let` apply.
  outcome<std::int64_t> delete_one(bson::document_view filter, const write_options& options = {});
  /// Deletes every match; returns how many were deleted.
  outcome<std::int64_t> delete_many(bson::document_view filter, const write_options& options = {});

  // ---- Index operations ----------------------------------------------------------------------
  /// Creates an index on `keys` (e.g. `{name: 1}`) and returns its name (`create_indexes` of one).
  outcome<std::string> create_index(bson::document_view keys, const index_options& options = {},
                                    const index_command_options& command = {});
  /// Creates the indexes in one createIndexes command and returns their names, in order. An index
  /// that already exists with the same specification is not an error. Failures: invalid_value for
  /// an empty list or empty keys (nothing sent), and the server's refusal (e.g. an existing index
  /// of the same name and other options, or duplicate keys for a unique index).
  outcome<std::vector<std::string>> create_indexes(std::span<const index_model> models,
                                                   const index_command_options& command = {});
  /// The specifications of the collection's indexes (`listIndexes`): `v`, `key`, `name` and the
  /// options. A collection that does not exist has none.
  outcome<std::vector<bson::document>> list_indexes();
  /// Drops the index named `name`. Failures: invalid_value for "*" (that is `drop_indexes`), and
  /// the server's refusal (IndexNotFound, or the `_id_` index).
  outcome<done> drop_index(std::string_view name, const index_command_options& command = {});
  /// Drops every index but `_id_`.
  outcome<done> drop_indexes(const index_command_options& command = {});
  // ---- end of the index operations ------------------------------------------------------------
  /// Drops the collection (a collection that does not exist is not an error).
  outcome<done> drop();

  // ---- aggregate, find-and-modify, distinct, estimated count, rename, bulk write ----

  /// Runs the aggregation `pipeline`, one document per stage (e.g. `{$match: {...}}`), and
  /// returns a cursor on its results. A pipeline ending in $out or $merge writes its results to
  /// a collection and returns an empty cursor. Failures: invalid_value, before anything is sent,
  /// for a stage that is not a document of one field named after a stage (`$...`); the server's
  /// refusal (server_error: an unknown stage, maxTimeMS exceeded, ...); transport codes.
  outcome<cursor> aggregate(std::span<const bson::document_view> pipeline,
                            const aggregate_options& options = {});

  /// findAndModify: applies `update` (update operators, or a pipeline: see `update_one`) to one
  /// match of `filter` (the first in `options.sort`) and returns it as it was before, or after
  /// with `return_document::after`; nothing when no document matched (and none was upserted, or
  /// `before` was asked). Failures: invalid_value as for `update_one` (nothing is sent);
  /// duplicate_key, server_error, write_concern_failed.
  outcome<std::optional<bson::document>> find_one_and_update(
      bson::document_view filter, const update_spec& update,
      const find_one_and_modify_options& options = {});
  /// As `find_one_and_update`, replacing the match by `replacement`. Failures: invalid_value when
  /// `replacement` holds an update operator, or for `array_filters`.
  outcome<std::optional<bson::document>> find_one_and_replace(
      bson::document_view filter, bson::document_view replacement,
      const find_one_and_modify_options& options = {});
  /// Deletes one match of `filter` (the first in `options.sort`) and returns it; nothing when no
  /// document matched.
  outcome<std::optional<bson::document>> find_one_and_delete(
      bson::document_view filter, const find_one_and_delete_options& options = {});

  /// The distinct values of `field` (a dotted path) among the documents matching `filter`, as a
  /// BSON array (keys "0", "1", ...): `for (const auto& v : values->view()) ...`. A field holding
  /// an array contributes each of its elements.
  outcome<bson::document> distinct(std::string_view field, bson::document_view filter = {},
                                   const read_options& options = {});
  /// The number of documents in the collection from its metadata (the `count` command without
  /// a filter): fast, but may be off after an unclean shutdown or during chunk migrations. The
  /// `count` command is not in version 1 of the Stable API before MongoDB 5.0.9.
  outcome<std::int64_t> estimated_document_count(const read_options& options = {});

  /// Renames the collection to `new_name` in the same database (renameCollection, run on
  /// admin) and returns the renamed collection. With `drop_target`, a collection already named
  /// `new_name` is dropped first; otherwise its existence is a server_error (NamespaceExists,
  /// 48). Failures: invalid_value for an empty name (nothing is sent); server_error.
  outcome<collection> rename(std::string_view new_name, bool drop_target = false);

  /// Runs `models` (inserts, updates, replacements, deletes; see oid/mongo/bulk_write.hpp). Each
  /// run of consecutive models of one kind is one insert, update or delete command, split into
  /// batches of at most maxWriteBatchSize statements and maxMessageSizeBytes. Ordered writes
  /// stop at the first refused one; unordered ones try every model. A failure is a
  /// `bulk_write_error`: a `failure` plus `partial_result`, what was written before it.
  /// Failures, before anything is sent: invalid_value for an empty list, an update that is not
  /// one (see `update_one`), a replacement with operators, array filters with a pipeline (the
  /// message names the model's index), too_large for a document above maxBsonObjectSize. Then:
  /// duplicate_key (every refused write a duplicate key) or server_error, with `write_errors`
  /// each carrying the model's index in `models`; write_concern_failed (everything was written;
  /// `write_concern_error` says why it was not acknowledged as asked); transport codes. With
  /// w: 0 the commands are sent with moreToCome and nothing is read.
  bulk_write_outcome<bulk_write_result> bulk_write(std::span<const write_model> models,
                                                   const bulk_write_options& options = {});

  // ---- end of aggregate ... bulk write ----

  /// The database name.
  const std::string& database() const noexcept { return db_; }
  /// The collection name.
  const std::string& name() const noexcept { return name_; }

  /// timeoutMS for this handle's operations (see `client_settings::timeout`), inherited from
  /// the database; unset: the legacy timeouts.
  const std::optional<std::chrono::milliseconds>& timeout() const noexcept { return ctx_.timeout; }
  /// A copy whose operations have timeoutMS `t` (0: no limit). What it opens inherits it.
  collection with_timeout(std::chrono::milliseconds t) const {
    auto copy = *this;
    copy.ctx_.timeout = t;
    return copy;
  }
  /// A copy whose operations run in session `s` (oid/mongo/session.hpp), and in its
  /// transaction when one is started; its cursors keep the session. The session's
  /// default_timeout, when set, becomes the copy's timeoutMS.
  collection with_session(const mongo::session& s) const;
  /// The explicit session this handle's operations run in (null: implicit sessions).
  const session_state* session() const noexcept { return ctx_.session.get(); }
  /// The read concern of this handle's reads (inherited from the database; default: the
  /// connection string's readConcernLevel, or none).
  const mongo::read_concern& read_concern() const noexcept { return ctx_.read_concern; }
  /// A copy whose reads (find, aggregate, distinct, counts) ask for read concern `rc` unless an
  /// operation gives its own (`{}`: none, the server's).
  collection with_read_concern(mongo::read_concern rc) const {
    auto copy = *this;
    copy.ctx_.read_concern = std::move(rc);
    return copy;
  }
  /// The write concern of this handle's writes (inherited from the database; default: the
  /// connection string's w, journal and wTimeoutMS, or none).
  const mongo::write_concern& write_concern() const noexcept { return ctx_.write_concern; }
  /// A copy whose writes send write concern `wc` unless an operation sets its own (an
  /// operation's `write_concern` with any field set wins): inserts, updates, replacements,
  /// deletes, bulk writes, find-and-modify, aggregations ending in $out or $merge, and the
  /// commands that write (drop, rename, create_index(es), drop_index(es)). `w: 0` makes the CRUD
  /// writes unacknowledged (sent with moreToCome, no session, no retry). Inside a transaction
  /// the operations send none: the commit carries the transaction's.
  collection with_write_concern(mongo::write_concern wc) const {
    auto copy = *this;
    copy.ctx_.write_concern = std::move(wc);
    return copy;
  }
  /// The read preference of this handle's reads (inherited from the database; default: the
  /// connection string's).
  const mongo::read_preference& read_preference() const noexcept { return ctx_.read_preference; }
  /// A copy whose reads (find, find_one, aggregate without $out or $merge, distinct, the counts,
  /// list_indexes) select servers by `rp` unless an operation gives its own `read_preference`.
  /// Inside a transaction the transaction's read preference wins. Not checked here: a read
  /// preference the deployment refuses fails the reads.
  collection with_read_preference(mongo::read_preference rp) const {
    auto copy = *this;
    copy.ctx_.read_preference = std::move(rp);
    return copy;
  }

 private:
  friend class client;
  friend class database;
  collection(std::shared_ptr<client_state> state, std::string db, std::string name,
             detail::handle_context ctx);
  outcome<update_result> update(bson::document_view filter, const update_spec& update, bool multi,
                                const write_options& options);
  outcome<std::int64_t> remove(bson::document_view filter, bool multi,
                               const write_options& options);
  std::shared_ptr<client_state> state_;
  std::string db_, name_;
  detail::handle_context ctx_;
};

}  // namespace oid::mongo
