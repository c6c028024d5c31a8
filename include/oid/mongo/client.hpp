// oid/mongo/client.hpp: the MongoDB client: a pool of connections, commands, and collections.
//
// A `client` is made from a connection string and follows the deployment it names, as MongoDB's
// server discovery and monitoring and server selection specifications say. It is a handle:
// copies share one topology, with a pool of connections per server bounded by maxPoolSize, and
// any number of threads may use one client at once. With several hosts, `replicaSet` or
// `loadBalanced`, a monitor thread per server checks it (`hello`) every heartbeatFrequencyMS and
// the client discovers the other members; each operation selects a server (writes: the primary
// or a mongos; reads: the URI's readPreference, tags, maxStalenessSeconds and localThresholdMS),
// waiting for the monitors up to serverSelectionTimeoutMS. One host without `replicaSet` is used
// directly (topology Single), connecting lazily on the first operation, as `directConnection=true`
// does. An operation's network error or "not writable primary"/"node is recovering" reply marks
// its server Unknown (and clears its pool when the rules say so), so that the next operation
// selects the new primary. The last copy of a client to go stops the monitors and closes every
// connection. The CRUD operations are on `collection` (oid/mongo/collection.hpp).
//
// When the servers support sessions (their hello reports logicalSessionTimeoutMinutes), every
// acknowledged operation runs in an implicit session (`lsid`) taken from the client's pool, and
// a cursor keeps its session until it is exhausted or destroyed; the last copy of a client to go
// sends `endSessions` for the pooled sessions (a server that refuses it is ignored). Single-
// document writes (insert, update/replace one, delete one, find-one-and-modify, and bulk-write
// batches without multi-document statements) carry a `txnNumber` on replica sets and sharded
// clusters and are retried once on a newly selected server after a network error or a
// stepdown (retryWrites=false turns it off); find, aggregate without $out/$merge, distinct,
// count, listCollections, listDatabases and listIndexes are retried once likewise
// (retryReads=false). Unacknowledged (w:0) writes have neither.
//
// Operations return `outcome<T>` (oid/mongo/outcome.hpp): the result, or a failure with an
// `oid::errc` and, when the server refused, its code, codeName and message.
//
//     auto c = oid::mongo::client::create("mongodb://127.0.0.1:27017/?appName=demo");
//     if (!c) return report(c.error().message);       // names the option that is wrong
//     auto people = c->collection("app", "people");
//     auto ids = people.insert_many(docs);             // outcome<insert_many_result>
//     auto cur = people.find(filter, {.limit = 10});   // outcome<cursor>
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/client_settings.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/command_event.hpp>
#include <oid/mongo/database.hpp>
#include <oid/mongo/handshake.hpp>
#include <oid/mongo/operation_options.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/pool_event.hpp>
#include <oid/mongo/sdam_event.hpp>
#include <oid/mongo/server_api.hpp>
#include <oid/mongo/topology_description.hpp>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::mongo {

struct client_state;  // opaque: what the client's copies share, defined inside the library

/// How a client is made, in code: its settings (oid/mongo/client_settings.hpp: hosts,
/// credentials, TLS files, timeouts, pool sizes, read preference, write concern, ...), the same
/// struct a connection string parses into, and the listeners of what it does.
///
///   oid::mongo::client_options o;
///   o.hosts = {{oid::mongo::host::kind::hostname, "db1.example.net", 27017}};
///   o.username = "app";
///   o.password = oid::mongo::secret(read_password());
///   o.max_pool_size = 10;
///   o.on_command = [](const oid::mongo::command_event& e) { log(e); };
///   auto c = oid::mongo::client::create(std::move(o));
///
/// Listeners run on the client's threads (a monitor's, or the operation's), one event at a time
/// for SDAM events; they must return quickly and must not run operations on the client.
struct client_options : client_settings {
  /// Server discovery and monitoring: the topology opening and closing, servers added, removed
  /// and changed, and the monitors' heartbeats.
  std::function<void(const sdam_event&)> on_topology;
  /// Command monitoring: each command started, succeeded or failed (authentication redacted).
  std::function<void(const command_event&)> on_command;
  /// Connection pool monitoring (CMAP): each server's pool created, ready, cleared and closed;
  /// each connection created, ready and closed (with the reason); each check-out started,
  /// failed (with the reason) or done, and each check-in (oid/mongo/pool_event.hpp). Events of
  /// one pool arrive in order; they may come from the pool's background thread, and some while
  /// the client updates its topology.
  std::function<void(const pool_event&)> on_pool;
  /// The Stable API version the client declares (oid/mongo/server_api.hpp): every command it
  /// sends carries it. Not a connection string option (the specification forbids one); none:
  /// nothing of the kind is sent.
  std::optional<mongo::server_api> server_api;
  /// Libraries that wrap this client, named in every handshake after the driver's name,
  /// version and platform (oid/mongo/handshake.hpp); `client::append_metadata` adds more later.
  std::vector<mongo::driver_info> driver_info;
};

/// Options of `client::list_databases` and `client::list_database_names` (the listDatabases
/// command's, as the enumerate databases specification names them); each is sent only when set.
///
///     auto mine = client.list_database_names({}, {.authorized_databases = true});
struct list_databases_options {
  /// `nameOnly`: each document holds only `name` (the server skips the sizes and takes no
  /// database locks). `list_database_names` sends true whatever this says.
  std::optional<bool> name_only{};
  /// `authorizedDatabases`: true lists only the databases the user has privileges on; false
  /// asks for all of them (which needs the listDatabases privilege). Unset: the server decides
  /// (all of them with the privilege, those authorized without it).
  std::optional<bool> authorized_databases{};
  mongo::comment comment{};  ///< a note the server logs with the command (text or any value)
  /// timeoutMS of this operation (0: no limit); unset: the client's.
  std::optional<std::chrono::milliseconds> timeout{};
};

/// A MongoDB client. Copies share one topology (a pool per server); thread-safe.
class client {
 public:
  /// Parses `uri_text` (see `uri::parse`, strict mode) and makes a client; nothing is connected
  /// yet. Failures, each with a message saying what is refused: those of `uri::parse` (with the
  /// offset in `uri_text`); invalid_uri for a user name without a password (except
  /// MONGODB-X509); tls_failed when TLS is asked for and its files cannot be used (a CA file or
  /// certificate that cannot be read, a key that cannot be decrypted or does not match), naming
  /// the option and the file. With TLS, every connection does the TLS handshake first; a
  /// refused handshake is tls_failed, returned by the first operation. With a user name, every
  /// pooled connection authenticates in its handshake (see oid/mongo/handshake.hpp); the client's
  /// connections share one cache of salted SCRAM passwords. A refused credential is
  /// authentication_failed, returned by the first operation, with the server's code and message.
  static outcome<client> create(std::string_view uri_text);
  /// A client for a parsed connection string; see `create` for what is refused.
  static outcome<client> create(const mongo::uri& u);
  /// A client made in code: `options`' settings, checked by the rules a connection string's
  /// options follow (`uri::from`: a contradiction or an impossible value is invalid_uri naming
  /// the option), and its listeners. `uri().to_string()` shows the hosts, user and database.
  static outcome<client> create(client_options options);
  /// The connection string's settings with those that `options` sets over them (a pool size
  /// from code over a connection string from a configuration file, say), and `options`'
  /// listeners.
  static outcome<client> create(std::string_view uri_text, client_options options);
  static outcome<client> create(const mongo::uri& u, client_options options);

  /// Runs `command` on database `db` and returns the reply. Failures: the server's refusal
  /// (ok: 0) as server_error (duplicate_key for code 11000) with code, codeName and message;
  /// transport codes.
  outcome<bson::document> run_command(std::string_view db, bson::document_view command);
  /// A database handle (no server round trip): its collections, commands, listing, creating and
  /// dropping collections, dropping it (oid/mongo/database.hpp).
  mongo::database database(std::string_view name) const;
  /// A collection handle (no server round trip); the same as `database(db).collection(name)`.
  mongo::collection collection(std::string_view db, std::string_view name) const;
  /// `listDatabases`: one document per database (`name`, `sizeOnDisk`, `empty`), those matching
  /// `filter` when it is not empty (e.g. `{name: {$regex: "^shop"}}`). Runs on the primary
  /// whatever the read preference (the enumerate databases specification), and is retried once
  /// (retryable reads). Failures: the server's refusal (e.g. Unauthorized with
  /// `authorized_databases` false and no privilege); unexpected_reply for a reply without a
  /// `databases` array; transport codes.
  outcome<std::vector<bson::document>> list_databases(bson::document_view filter = {},
                                                      const list_databases_options& options = {});
  /// The names of the databases `list_databases` lists, in the server's order: a listDatabases
  /// with `nameOnly: true`. Failures: those of `list_databases`, and unexpected_reply for an
  /// entry without a string `name`.
  outcome<std::vector<std::string>> list_database_names(bson::document_view filter = {},
                                                        const list_databases_options& options = {});
  /// `listCollections` of `db`: one document per collection (`name`, `type`, `options`, ...);
  /// the same as `database(db).list_collections()`.
  outcome<std::vector<bson::document>> list_collections(std::string_view db);
  /// What the handshake of a pooled connection learnt (connecting if none is open).
  outcome<handshake_info> server();
  /// Appends a wrapping library's name, version and platform to the client metadata that the
  /// handshakes of connections opened from now on send (open ones are left alone, and none is
  /// opened or closed for it); shared by this client's copies. A `driver_info` equal to one
  /// given before changes nothing. Failures: invalid_argument when a field holds '|', the name
  /// is empty, or the metadata would no longer fit in the handshake's 512 bytes.
  outcome<done> append_metadata(const mongo::driver_info& info);
  /// What the client knows about the deployment now (a copy; the monitors keep updating theirs).
  topology_description topology() const;
  /// The connection string this client was made from.
  const mongo::uri& uri() const noexcept;

  /// timeoutMS of this handle's operations (see `client_settings::timeout`): the connection
  /// string's or the options', unless `with_timeout` changed it.
  const std::optional<std::chrono::milliseconds>& timeout() const noexcept { return ctx_.timeout; }
  /// A copy (sharing the pools) whose operations, and the databases and collections it opens,
  /// have timeoutMS `t` (0: no limit).
  client with_timeout(std::chrono::milliseconds t) const {
    auto copy = *this;
    copy.ctx_.timeout = t;
    return copy;
  }

  /// Starts an explicit session (oid/mongo/session.hpp): operations of handles bound to it by
  /// `with_session` share its `lsid`, are causally consistent (unless asked otherwise) and may
  /// run in its transactions. No round trip. Failures: invalid_argument for a snapshot session
  /// with causal consistency.
  outcome<mongo::session> start_session(const session_options& options = {}) const;
  /// A copy whose operations (run_command, list_databases) and the databases and collections it
  /// opens run in session `s`.
  client with_session(const mongo::session& s) const;

 private:
  explicit client(std::shared_ptr<client_state> state);
  std::shared_ptr<client_state> state_;
  // Shared by the copies of this client: the last one to go sends endSessions.
  std::shared_ptr<void> closer_;
  detail::handle_context ctx_;
};

}  // namespace oid::mongo
