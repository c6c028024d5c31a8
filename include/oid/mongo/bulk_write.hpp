// oid/mongo/bulk_write.hpp: the write models of `collection::bulk_write`, its options, its result,
// and its error, which carries what was written before the failure.
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
//     auto r = people.bulk_write(models);  // result<bulk_write_result, bulk_write_error>
//     if (!r) {
//       for (const auto& e : r.error().write_errors) report(*e.index, e.message);
//       done_anyway(r.error().partial_result.inserted);
//     }
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/failure.hpp>
#include <oid/mongo/operation_options.hpp>
#include <oid/mongo/write_concern.hpp>
#include <oid/result.hpp>
#include <optional>
#include <span>
#include <utility>
#include <variant>
#include <vector>

namespace oid::mongo {

/// What an update changes: a document of update operators (`{$set: {...}, $inc: {...}}`), or an
/// aggregation pipeline (MongoDB 4.2 and later), a list of stages such as `{$set: ...}`,
/// `{$unset: ...}`, `{$replaceWith: ...}` sent as an array. Holds views: the documents and the
/// list must outlive the operation.
///
///     c.update_one(filter, set.view());                        // operators
///     std::vector<bson::document_view> stages{add.view(), unset.view()};
///     c.update_one(filter, stages);                            // a pipeline
class update_spec {
 public:
  update_spec() = default;
  /// Update operators.
  update_spec(bson::document_view operators) noexcept : operators_(operators) {}  // NOLINT
  /// A pipeline, one document per stage.
  update_spec(std::span<const bson::document_view> stages) noexcept  // NOLINT: implicit
      : stages_(stages), pipeline_(true) {}
  update_spec(const std::vector<bson::document_view>& stages) noexcept  // NOLINT: implicit
      : update_spec(std::span<const bson::document_view>(stages)) {}

  /// True for a pipeline, false for update operators.
  bool is_pipeline() const noexcept { return pipeline_; }
  /// The update operators (empty for a pipeline).
  bson::document_view operators() const noexcept { return operators_; }
  /// The stages (empty for update operators).
  std::span<const bson::document_view> pipeline() const noexcept { return stages_; }

 private:
  bson::document_view operators_{};
  std::span<const bson::document_view> stages_{};
  bool pipeline_ = false;
};

/// Inserts `document`, after giving it an `_id` (a new ObjectId) when it has none.
struct insert_one_model {
  bson::document_view document{};
};
/// Applies `update` (update operators such as `{$set: {...}}`, or a pipeline) to the first match
/// of `filter` (`Many` false: `update_one_model`) or to every match (`update_many_model`). One
/// template so that the two models cannot drift apart, two types so that a `write_model` says
/// which it is.
template <bool Many>
struct update_model {
  bson::document_view filter{};
  update_spec update{};
  bool upsert = false;  ///< insert a document when none matches
  /// Which array elements `$[name]` updates (`arrayFilters`; not with a pipeline).
  std::span<const bson::document_view> array_filters{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  index_hint hint{};                ///< the index to use (empty: the server's choice)
};
/// Updates the first match of `filter`.
using update_one_model = update_model<false>;
/// Updates every match of `filter`.
using update_many_model = update_model<true>;
/// Replaces the first match of `filter` by `replacement` (a document without update operators).
struct replace_one_model {
  bson::document_view filter{};
  bson::document_view replacement{};
  bool upsert = false;              ///< insert `replacement` when none matches
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  index_hint hint{};                ///< the index to use (empty: the server's choice)
};
/// Deletes the first match of `filter`.
struct delete_one_model {
  bson::document_view filter{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  index_hint hint{};                ///< the index to use (empty: the server's choice)
};
/// Deletes every match of `filter`.
struct delete_many_model {
  bson::document_view filter{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  index_hint hint{};                ///< the index to use (empty: the server's choice)
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
  /// The write concern when any field is set (default: the collection's; see
  /// `collection::with_write_concern`).
  mongo::write_concern write_concern{};
  /// Variables the filters and updates read as `$$name` (`let`; sent with the update and delete
  /// commands, not with inserts).
  bson::document_view let{};
  mongo::comment comment{};  ///< a note the server logs with each command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

/// An `_id` and the position, in the models passed to `bulk_write`, of the write that made it.
struct indexed_id {
  std::size_t index = 0;  ///< the model's position in the caller's list
  bson::document id{};    ///< `{_id: value}`
};

/// What a bulk write did, added up over its commands. With w: 0 nothing is read back: every
/// count is 0 and `inserted_ids` lists every insert model sent.
struct bulk_write_result {
  std::int64_t inserted = 0;  ///< documents inserted by insert models
  std::int64_t matched = 0;   ///< documents matched by update and replace models
  std::int64_t modified = 0;  ///< documents actually changed by them
  std::int64_t deleted = 0;   ///< documents deleted
  std::int64_t upserted = 0;  ///< documents inserted by upserts
  /// The `_id` of every document inserted (given one when it had none), by model index: after a
  /// failure, only those the server reports done (not the refused ones, not those an ordered
  /// write never reached).
  std::vector<indexed_id> inserted_ids{};
  /// The `_id` of every upserted document, by model index.
  std::vector<indexed_id> upserted_ids{};
};

/// Why a bulk write (or `insert_many`, a bulk write of inserts) failed, and what it did first: the
/// CRUD specification's BulkWriteException. The `failure` part says what went wrong (`code`,
/// `message`; `write_errors`, each with the index of its model in the caller's list, not in a
/// batch; `write_concern_error`; `written`, the documents inserted, matched, upserted or deleted);
/// `partial_result` what was done despite it, by kind, with the inserted and upserted ids.
///
/// An ordered bulk write stops at the first write error: `partial_result` holds the writes before
/// it. An unordered one tries every model: `partial_result` holds everything but the refused
/// writes. A write concern error does not stop either: the writes were made, and `partial_result`
/// holds them all. A failure of a whole command (a transport error, an `ok: 0` reply) stops both:
/// `partial_result` holds the commands acknowledged before it. A model refused before anything
/// is sent (invalid_value, too_large) leaves it empty.
struct bulk_write_error : failure {
  bulk_write_error() = default;
  /// `f` with what was done before it.
  explicit bulk_write_error(failure f, bulk_write_result done = {})
      : failure(std::move(f)), partial_result(std::move(done)) {}

  /// What the bulk write did before it stopped (everything it did, for a write concern error).
  bulk_write_result partial_result;
};

/// What `collection::bulk_write` and `collection::insert_many` return: their result, or a
/// `bulk_write_error`. A `bulk_write_error` is a `failure`, so code written for `outcome<T>`
/// (`r.error().code`, `report(r.error())`, `return r.error();` into an `outcome`) keeps working.
template <class T>
using bulk_write_outcome = oid::result<T, bulk_write_error>;

/// The exception `bulk_write_outcome<T>::value()` throws: an `operation_error` (catch that for
/// any client failure) that also keeps the partial result.
class bulk_write_exception : public operation_error {
 public:
  explicit bulk_write_exception(bulk_write_error e)
      : operation_error(static_cast<mongo::failure&&>(e)), partial_(std::move(e.partial_result)) {}
  /// What the bulk write did before it stopped.
  const bulk_write_result& partial_result() const noexcept { return partial_; }

 private:
  bulk_write_result partial_;
};

/// Throws `bulk_write_exception(e)`; `bulk_write_outcome<T>::value()` calls it (see
/// oid/result.hpp).
[[noreturn]] void throw_exception(const bulk_write_error& e);

}  // namespace oid::mongo
