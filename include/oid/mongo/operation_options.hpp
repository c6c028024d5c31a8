// oid/mongo/operation_options.hpp: the options of `collection::aggregate`, the updates,
// replacements and deletes, the find-and-modify operations (`find_one_and_update`,
// `find_one_and_replace`, `find_one_and_delete`), `distinct` and the counts. Every option is sent
// only when set, so the server's defaults apply otherwise. Options hold views
// (`bson::document_view`, `std::span`): what they point to must outlive the call.
//
//     auto cur = coll.aggregate(pipeline, {.allow_disk_use = true, .batch_size = 500});
//     auto doc = coll.find_one_and_update(filter, inc,
//                                         {.return_document = oid::mongo::return_document::after});
//     auto r = coll.update_many(filter, set, {.array_filters = filters, .hint = "status_1"});
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/bson/view.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace oid::mongo {

/// What timeoutMS bounds for an operation that opens a cursor (the client-side operations
/// timeout specification's timeoutMode).
enum class timeout_mode {
  /// The operation and every getMore of its cursor end by one deadline, timeoutMS after the
  /// start; getMores carry no maxTimeMS.
  cursor_lifetime,
  /// The operation has timeoutMS, and so has each `next()` that reads more, afresh; no command
  /// carries maxTimeMS.
  iteration,
};

/// A `comment`: a note the server logs and profiles with the command. Text, or any BSON value
/// (MongoDB 4.4 and later take a document, a number, ...) as an element of a document that
/// outlives the call. Empty, the default, sends none.
///
///     find_options o{.comment = "nightly report"};
///     find_options p{.comment = tags.view().find("job").value()};  // {job: {id: 7}} -> {id: 7}
class comment {
 public:
  comment() = default;
  comment(std::string_view text) : text_(text), set_(!text.empty()) {}   // NOLINT: implicit
  comment(const char* text) : comment(std::string_view(text)) {}         // NOLINT: implicit
  comment(const std::string& text) : comment(std::string_view(text)) {}  // NOLINT: implicit
  comment(std::string&&) = delete;                                       ///< the text would dangle
  comment(bson::element value) : value_(value), set_(true) {}            // NOLINT: implicit

  /// True when no comment is given.
  bool empty() const noexcept { return !set_; }
  /// The text, when the comment is text (empty otherwise).
  std::string_view text() const noexcept { return text_; }
  /// The value, when the comment is any BSON value (a default element otherwise).
  bson::element value() const noexcept { return value_; }

 private:
  std::string_view text_{};
  bson::element value_{};
  bool set_ = false;
};

/// The index a write should use (`hint`): its key pattern (`{status: 1}`) or its name
/// ("status_1"). Empty, the default, lets the server choose. A view, as the other options: the
/// pattern or name must outlive the operation.
///
///     write_options o{.hint = "status_1"};          // by name
///     write_options p{.hint = key_pattern.view()};  // by key pattern
struct index_hint {
  index_hint() = default;
  index_hint(bson::document_view key_pattern) : keys(key_pattern) {}  // NOLINT: implicit
  index_hint(std::string_view index_name) : name(index_name) {}       // NOLINT: implicit
  index_hint(const char* index_name) : name(index_name) {}            // NOLINT: implicit
  index_hint(const std::string& index_name) : name(index_name) {}     // NOLINT: implicit
  index_hint(std::string&&) = delete;                                 ///< the name would dangle

  /// True when neither a key pattern nor a name is given.
  bool empty() const noexcept { return keys.empty() && name.empty(); }

  bson::document_view keys{};  ///< the index's key pattern (sent when not empty)
  std::string_view name{};     ///< the index's name (sent when `keys` is empty)
};

/// Options of `update_one`, `update_many`, `replace_one`, `delete_one` and `delete_many`.
/// `upsert`, `array_filters` and `bypass_document_validation` are for updates and replacements
/// (deletes leave them out; `array_filters` is refused for a replacement, which has no operators
/// to apply them to).
struct write_options {
  /// Insert a document when none matches (updates and replacements only).
  bool upsert = false;
  /// The write concern when any field is set (default: the collection's; see
  /// `collection::with_write_concern`).
  mongo::write_concern write_concern{};
  /// Which elements of an array `$[name]` updates (`arrayFilters`), e.g. `{"e.n": {$gt: 1}}`
  /// for `{$set: {"a.$[e].x": 0}}`. Updates only.
  std::span<const bson::document_view> array_filters{};
  /// Let the write skip the collection's document validation (`bypassDocumentValidation`).
  std::optional<bool> bypass_document_validation{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  index_hint hint{};                ///< the index to use (empty: the server's choice)
  bson::document_view let{};        ///< variables the filter and update read as `$$name`
  mongo::comment comment{};         ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

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
  index_hint hint{};                ///< the index to use (empty: the server's choice)
  bson::document_view let{};        ///< variables the pipeline reads as `$$name` (empty: none)
  /// The write concern of a pipeline ending in $out or $merge (default: the handle's).
  mongo::write_concern write_concern{};
  mongo::comment comment{};  ///< a note the server logs with the command (text or any value)
  /// Where to read (default: the handle's read preference); a pipeline ending in $out or $merge
  /// runs on the primary whatever this says.
  std::optional<mongo::read_preference> read_preference{};
  /// The read concern (default: the collection's; see `collection::with_read_concern`).
  std::optional<mongo::read_concern> read_concern{};
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
  /// With `timeout`: whether it bounds the cursor's whole life (the default for a cursor that
  /// ends) or each call that reads more (the default for a tailable one, and its only mode).
  std::optional<mongo::timeout_mode> timeout_mode{};
  /// `maxTimeMS` of each getMore (for a `$changeStream`, how long each waits for events);
  /// unset: not sent. Under timeoutMS it must be shorter than the timeout.
  std::optional<std::chrono::milliseconds> max_await_time{};
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
  index_hint hint{};                ///< the index to use (empty: the server's choice)
  /// The write concern when any field is set (default: the collection's; see
  /// `collection::with_write_concern`).
  mongo::write_concern write_concern{};
  /// Which array elements `$[name]` updates (`arrayFilters`; `find_one_and_update` only).
  std::span<const bson::document_view> array_filters{};
  bson::document_view let{};  ///< variables the query and update read as `$$name`
  mongo::comment comment{};   ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

/// Options of `find_one_and_delete`.
struct find_one_and_delete_options {
  bson::document_view projection{};  ///< fields of the returned document (empty: all)
  bson::document_view sort{};        ///< which match to delete when several do (empty: any)
  /// How long the server may look for the document (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  index_hint hint{};                ///< the index to use (empty: the server's choice)
  /// The write concern when any field is set (default: the collection's; see
  /// `collection::with_write_concern`).
  mongo::write_concern write_concern{};
  bson::document_view let{};  ///< variables the query reads as `$$name`
  mongo::comment comment{};   ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

/// Options of `distinct` and `estimated_document_count`.
struct read_options {
  /// How long the server may run the command (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's; distinct)
  mongo::comment comment{};         ///< a note the server logs with the command (text or any value)
  /// Where to read (default: the collection's read preference).
  std::optional<mongo::read_preference> read_preference{};
  /// The read concern (default: the collection's; see `collection::with_read_concern`).
  std::optional<mongo::read_concern> read_concern{};
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

/// Options of `count_documents`.
struct count_options {
  std::int64_t skip = 0;   ///< matches to skip before counting
  std::int64_t limit = 0;  ///< count at most this many (0: no limit)
  /// How long the server may run the count (`maxTimeMS`).
  std::optional<std::chrono::milliseconds> max_time{};
  index_hint hint{};                ///< the index to use (empty: the server's choice)
  bson::document_view collation{};  ///< string comparison rules (empty: the collection's)
  mongo::comment comment{};         ///< a note the server logs with the command (text or any value)
  /// Where to read (default: the collection's read preference).
  std::optional<mongo::read_preference> read_preference{};
  /// The read concern (default: the collection's; see `collection::with_read_concern`).
  std::optional<mongo::read_concern> read_concern{};
  /// timeoutMS of this operation (0: no limit); unset: the collection's (see
  /// `client_settings::timeout`).
  std::optional<std::chrono::milliseconds> timeout{};
};

}  // namespace oid::mongo
