// oid/mongo/database.hpp: a database of a client: its collections, its commands, and the
// database itself (list, create and drop collections; drop it).
//
//   auto db = client->database("shop");
//   auto orders = db.collection("orders");                  // no round trip
//   auto names = db.list_collection_names();                // outcome<std::vector<std::string>>
//   auto stats = db.run_command(oid::bson::from_json(R"({"dbStats": 1})").value());
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/gridfs.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_preference.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo {

struct client_state;  // opaque: what the client's copies share, defined inside the library
class client;

/// Options of `database::create_collection`: the create command's fields, each sent only when set.
/// Views must outlive the call.
///
///     db.create_collection("log", {.capped = true, .size = 1 << 20, .max = 1000});
struct create_collection_options {
  bool capped = false;                   ///< a fixed-size collection that keeps insertion order
  std::optional<std::int64_t> size{};    ///< capped: the most bytes it holds (required with capped)
  std::optional<std::int64_t> max{};     ///< capped: the most documents it holds
  bson::document_view validator{};       ///< a query every written document must match
  std::string_view validation_level{};   ///< "off", "strict" or "moderate" (empty: the server's)
  std::string_view validation_action{};  ///< "error" or "warn" (empty: the server's)
  bson::document_view collation{};       ///< the collection's default collation
  /// A time series collection: `{timeField: "t", metaField: "m", granularity: "hours"}`.
  bson::document_view timeseries{};
  /// A clustered collection: `{key: {_id: 1}, unique: true}`.
  bson::document_view clustered_index{};
  /// Time series or clustered: delete documents this many seconds old.
  std::optional<std::int64_t> expire_after_seconds{};
  /// Any other field of the create command, as given (`storageEngine`, `changeStreamPreAndPost
  /// Images`, ...).
  bson::document_view other{};
};

/// Options of `database::run_cursor_command`: how the cursor the command opens is read. The
/// command itself is sent as given (with `$db`, `lsid`, `$clusterTime` and the read preference
/// added, and `maxTimeMS` under a timeoutMS that bounds the cursor's life).
struct cursor_command_options {
  /// Documents per getMore (`batchSize` of the getMores; 0: the server's default). The first
  /// batch's size is the command's own (`cursor: {batchSize: n}`, or find's `batchSize`).
  std::int32_t batch_size = 0;
  /// `maxTimeMS` of each getMore: for a `tailable_await` cursor, how long each waits for new
  /// documents (unset: not sent).
  std::optional<std::chrono::milliseconds> max_time{};
  /// Sent with each getMore (the command carries its own comment, if any).
  mongo::comment comment{};
  /// The kind of cursor the command opens: a tailable one (the command must ask for it, e.g.
  /// find's `tailable` and `awaitData`) ends only when the server says so.
  cursor_type cursor_kind = cursor_type::non_tailable;
  /// Where to run it (default: the primary); getMores follow the cursor.
  std::optional<mongo::read_preference> read_preference{};
  /// timeoutMS of this operation (0: no limit); unset: the database's.
  std::optional<std::chrono::milliseconds> timeout{};
  /// With `timeout`: whether it bounds the cursor's life or each call that reads more (see
  /// `find_options::timeout_mode`).
  std::optional<mongo::timeout_mode> timeout_mode{};
};

/// Options of `database::list_collections` and `database::list_collection_names` (the
/// listCollections command's, as the enumerate collections specification names them); each is
/// sent only when set.
struct list_collections_options {
  /// `nameOnly`: each document holds only `name` and `type` (the server takes no collection
  /// locks). `list_collection_names` sends true instead, unless its filter names a field other
  /// than `name` (the server applies nameOnly before the filter).
  std::optional<bool> name_only{};
  /// `authorizedCollections`: with nameOnly, true lists only the collections the user has
  /// privileges on (and needs no listCollections privilege).
  std::optional<bool> authorized_collections{};
  /// Documents per batch, for the command and each getMore (0: the server's default).
  std::int32_t batch_size = 0;
  mongo::comment comment{};  ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the database's.
  std::optional<std::chrono::milliseconds> timeout{};
};

/// A database of a client: a name and the client's pool. Cheap to copy; thread-safe. Nothing is
/// sent until an operation runs; a database that does not exist yet is created by its first
/// write, as the server does.
class database {
 public:
  /// The database's name.
  const std::string& name() const noexcept { return name_; }

  /// timeoutMS for this handle's operations (see `client_settings::timeout`), inherited from
  /// the client; unset: the legacy timeouts.
  const std::optional<std::chrono::milliseconds>& timeout() const noexcept { return ctx_.timeout; }
  /// A copy whose operations have timeoutMS `t` (0: no limit). What it opens inherits it.
  database with_timeout(std::chrono::milliseconds t) const {
    auto copy = *this;
    copy.ctx_.timeout = t;
    return copy;
  }
  /// A copy whose operations, and those of the collections it opens, run in session `s` (see
  /// `collection::with_session`).
  database with_session(const mongo::session& s) const;
  /// The read concern of this handle's reads and of the collections it opens (inherited from
  /// the client: the connection string's readConcernLevel, or none).
  const mongo::read_concern& read_concern() const noexcept { return ctx_.read_concern; }
  /// A copy whose reads, and those of the collections it opens, ask for read concern `rc` (the
  /// default `{}`: none, the server's).
  database with_read_concern(mongo::read_concern rc) const {
    auto copy = *this;
    copy.ctx_.read_concern = std::move(rc);
    return copy;
  }
  /// The write concern of this handle's writes and of the collections it opens (inherited from
  /// the client: the connection string's w, journal and wTimeoutMS, or none).
  const mongo::write_concern& write_concern() const noexcept { return ctx_.write_concern; }
  /// A copy whose writes, and those of the collections it opens, send write concern `wc` unless
  /// an operation gives its own: the CRUD writes, the aggregations that write, and the commands
  /// that write (create_collection, drop; a collection's drop, rename and index commands). `{}`
  /// sends none (the server's default); `w: 0` makes the CRUD writes unacknowledged. Inside a
  /// transaction the operations send none: the commit carries the transaction's. `run_command`
  /// sends its command as given.
  database with_write_concern(mongo::write_concern wc) const {
    auto copy = *this;
    copy.ctx_.write_concern = std::move(wc);
    return copy;
  }
  /// The read preference of this handle's reads and of the collections it opens (inherited from
  /// the client: the connection string's readPreference, tags and maxStalenessSeconds).
  const mongo::read_preference& read_preference() const noexcept { return ctx_.read_preference; }
  /// A copy whose reads (aggregate, list_collections) and those of the collections it opens
  /// select servers by `rp` unless an operation gives its own. Inside a transaction the
  /// transaction's read preference wins. `run_command` and `run_cursor_command` read from the
  /// primary unless given one, as the run command specification says. Not checked here: a
  /// read preference the deployment refuses (tags with mode primary) fails the operations.
  database with_read_preference(mongo::read_preference rp) const {
    auto copy = *this;
    copy.ctx_.read_preference = std::move(rp);
    return copy;
  }

  /// A collection of this database (no server round trip).
  mongo::collection collection(std::string_view name) const;

  /// Runs `command` on this database and returns the reply. Failures as
  /// `client::run_command`.
  outcome<bson::document> run_command(bson::document_view command);
  /// As `run_command`, on a server that `where` selects (for commands that read: `dbStats`,
  /// `collStats`, ...); the command is not retried. Inside a transaction `where` must be the
  /// primary (errc::invalid_argument otherwise, nothing sent).
  outcome<bson::document> run_command(bson::document_view command,
                                      const mongo::read_preference& where);

  /// Runs `command`, which opens a cursor (`find`, `aggregate`, `listCollections`,
  /// `listIndexes`, `checkMetadataConsistency`, ...), and returns that cursor; its getMores and
  /// killCursors follow the namespace the server names in the reply. The command is not retried.
  /// Failures: unexpected_reply when the reply holds no cursor (e.g. `{ping: 1}`);
  /// invalid_argument for a timeout_mode without timeoutMS, or cursor_lifetime for a tailable
  /// cursor; the server's refusal; transport codes.
  ///
  ///     auto c = db.run_cursor_command(bson::from_json(R"({"find": "log", "batchSize": 100})")
  ///                                        .value(), {.batch_size = 1000});
  outcome<cursor> run_cursor_command(bson::document_view command,
                                     const cursor_command_options& options = {});

  /// Runs the aggregation `pipeline` on the database rather than a collection (`aggregate: 1`),
  /// for the stages that start without one: `$currentOp` and `$listLocalSessions` (on admin),
  /// `$documents`, `$changeStream` of a whole database. Options and failures as
  /// `collection::aggregate`.
  outcome<cursor> aggregate(std::span<const bson::document_view> pipeline,
                            const aggregate_options& options = {});

  /// `listCollections`: one document per collection (`name`, `type`, `options`, `info`, ...),
  /// those matching `filter` when it is not empty (e.g. `{name: "orders"}`), read through its
  /// cursor. Runs on the primary whatever the read preference (the enumerate collections
  /// specification), and is retried once (retryable reads). Failures: the server's refusal;
  /// transport codes.
  outcome<std::vector<bson::document>> list_collections(
      bson::document_view filter = {}, const list_collections_options& options = {});
  /// The names of the collections (and views) `list_collections` returns: a listCollections with
  /// `nameOnly: true` unless `filter` names a field other than `name`. Failures: those of
  /// `list_collections`, and unexpected_reply for an entry without a string `name`.
  outcome<std::vector<std::string>> list_collection_names(
      bson::document_view filter = {}, const list_collections_options& options = {});

  /// `create`: makes the collection `name`, with `options` (the create command's other fields:
  /// `capped`, `size`, `max`, `validator`, `viewOn`/`pipeline`, ...; empty: none). Failures: the
  /// server's refusal, e.g. NamespaceExists (48) for a collection that is already there.
  outcome<done> create_collection(std::string_view name, bson::document_view options = {});
  /// The same with typed options. Failures: invalid_value (`oid::errc`) for `capped` without a
  /// positive `size`, or `size`/`max` without `capped` (nothing is sent); the server's refusal.
  outcome<done> create_collection(std::string_view name, const create_collection_options& options);

  /// A GridFS bucket of this database (`<bucket_name>.files` and `.chunks`; no round trip).
  mongo::gridfs_bucket gridfs_bucket(gridfs_bucket_options options = {}) const;

  /// `dropDatabase`: drops the database and every collection in it (a database that does not
  /// exist is not an error).
  outcome<done> drop();

 private:
  friend class client;
  database(std::shared_ptr<client_state> state, std::string name, detail::handle_context ctx);
  std::shared_ptr<client_state> state_;
  std::string name_;
  detail::handle_context ctx_;
};

}  // namespace oid::mongo
