// The entities of MongoDB's unified test format, as the runner (runner.cpp) makes them and the
// operations (operations.cpp) use them: clients, databases, collections, GridFS buckets, cursors
// and saved values, each under the id the test file gives it.
//
// The runner is a test program, not a part of oid: it maps the format's operations onto oid's
// public client API (oid/mongo/*.hpp) and reports, for every test, passed or whose gap it is
// (not applicable, server differs, harness, oid lacks: verdicts.hpp), with one line saying what,
// or failed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/cursor.hpp>
#include <oid/mongo/failure.hpp>
#include <oid/mongo/session.hpp>
#include <oid/mongo/topology_description.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

namespace oid::unified {

/// BSON has no free-standing values: a value of any type is kept as the one field "v" of a
/// document. `wrap` makes one from an element (under any key); `unwrap` reads it back.
inline bson::document wrap(const bson::element& e) {
  bson::builder b;
  b.append_element("v", e);
  return std::move(b).extract();
}
inline bson::element unwrap(const bson::document& holder) { return *holder.view().begin(); }

/// The events one client entity observed (its `observeEvents`), in the order they happened, as
/// the format's event documents: `{commandStartedEvent: {command, commandName, databaseName}}`,
/// `{commandSucceededEvent: {reply, commandName, databaseName}}`, `{commandFailedEvent:
/// {commandName, databaseName}}`, `{poolClearedEvent: {}}`, ... Listeners run on the client's
/// threads, hence the mutex.
class event_log {
 public:
  void add(bson::document event) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  std::vector<bson::document> snapshot() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    events_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<bson::document> events_;
};

/// A `client` entity: oid's client made from the test server's URI and the entity's
/// `uriOptions`, and the events it observes.
struct client_entity {
  std::optional<mongo::client> client;  // engaged once made
  std::shared_ptr<event_log> events = std::make_shared<event_log>();
  /// Connections checked out and not yet checked in (assertNumberConnectionsCheckedOut).
  std::shared_ptr<std::atomic<std::int64_t>> checked_out =
      std::make_shared<std::atomic<std::int64_t>>(0);
  std::string uri;  // the connection string it was made from
};

/// What of an entity's options (databaseOptions, collectionOptions) oid cannot honour, as the
/// tail of an "unsupported" line ("no collection-level `x`"), with the option's name: `read`
/// concerns the reads only, `all` every operation. Empty: nothing.
struct entity_gaps {
  std::string read, read_key;
  std::string all, all_key;
};

/// A `database` entity: a database name of a client entity. `options` is the entity's
/// `databaseOptions` (readConcern, writeConcern, readPreference, timeoutMS), empty when none;
/// `handle` the client's database with them (`with_read_concern`, `with_write_concern`,
/// `with_read_preference`, `with_timeout`), which the operations on it and the collections made
/// from it use; `gaps` what of them oid cannot honour.
struct database_entity {
  std::string client;  // the client entity's id
  std::string name;
  bson::document options;
  std::optional<mongo::database> handle;  // unset when the client entity was not made
  entity_gaps gaps;
};

/// A `collection` entity: `options` is its `collectionOptions`, empty when none; `handle` its
/// database entity's collection with them (so it inherits the database's), `gaps` what of its
/// own and its database's options oid cannot honour.
struct collection_entity {
  std::string client;  // the client entity's id
  std::string database;
  std::string name;
  bson::document options;
  std::optional<mongo::collection> handle;  // unset when the client entity was not made
  entity_gaps gaps;
};

/// Gives `handle` what the entity options `options` ask (readConcern, writeConcern,
/// readPreference, timeoutMS) through its `with_...` copies; `level` ("database", "collection")
/// names it in the gaps returned. `inherited`: the gaps of the handle's parent, kept unless
/// `options` sets the same option again.
entity_gaps apply_entity_options(bson::document_view options, std::string_view level,
                                 mongo::database& handle, const entity_gaps& inherited = {});
entity_gaps apply_entity_options(bson::document_view options, std::string_view level,
                                 mongo::collection& handle, const entity_gaps& inherited = {});

/// A `bucket` entity (GridFS): a database of a client entity and the entity's `bucketOptions`
/// (bucketName, chunkSizeBytes, writeConcern, readPreference), empty when none.
struct bucket_entity {
  std::string client;  // the client entity's id
  std::string database;
  bson::document options;
};

/// A cursor entity (createFindCursor, createCommandCursor, ... with saveResultAsEntity).
struct cursor_entity {
  std::unique_ptr<mongo::cursor> cursor;
};

/// A `session` entity: an explicit session of a client entity, and its id (`lsid`), kept for
/// `$$sessionLsid` after the session ends.
struct session_entity {
  std::string client;  // the client entity's id
  std::shared_ptr<mongo::session> session;
  bson::document lsid;
};

/// A value saved with saveResultAsEntity (see `wrap`).
struct value_entity {
  bson::document value;
};

/// A `thread` entity: a real thread that runs the operations `runOnThread` gives it, one at a
/// time in the order given, while the test's own thread goes on. The first operation that throws
/// (a failed assertion, a skip) ends the thread's work: later ones are dropped, and `wait`
/// hands the exception to the test's thread, which rethrows it (the format: a failure on a
/// thread fails the test). The destructor stops the thread after its current operation and
/// joins it: an entity map drops its threads before anything they use.
class thread_worker {
 public:
  /// Starts the thread; `run` is called on it for each operation (a copy, kept until done).
  explicit thread_worker(std::function<void(bson::document_view)> run)
      : run_(std::move(run)), thread_([this] { loop(); }) {}
  thread_worker(const thread_worker&) = delete;
  thread_worker& operator=(const thread_worker&) = delete;
  ~thread_worker() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  /// Queues `operation` (runOnThread); returns at once.
  void schedule(bson::document operation) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(operation));
    }
    wake_.notify_all();
  }
  /// Waits up to `limit` until every queued operation ran (waitForThread). False when they did
  /// not finish in time; else true, and `error` holds the first operation's exception, if any
  /// (taken: a second wait returns none).
  bool wait(std::chrono::milliseconds limit, std::exception_ptr& error) {
    std::unique_lock lock(mutex_);
    if (!idle_.wait_for(lock, limit, [this] { return queue_.empty() && !busy_; })) return false;
    error = std::exchange(error_, nullptr);
    return true;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      auto op = std::move(queue_.front());
      queue_.pop_front();
      if (error_ || stopping_) {  // after a failure (or once told to stop) nothing more runs
        if (queue_.empty()) idle_.notify_all();
        continue;
      }
      busy_ = true;
      lock.unlock();
      std::exception_ptr failure;
      try {
        run_(op.view());
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      busy_ = false;
      if (failure && !error_) error_ = failure;
      if (queue_.empty()) idle_.notify_all();
    }
  }

  std::function<void(bson::document_view)> run_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<bson::document> queue_;
  bool busy_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the members above exist
};

struct thread_entity {
  std::shared_ptr<thread_worker> worker;
};

/// A TopologyDescription entity (recordTopologyDescription): a client's view of the deployment at
/// one moment.
struct topology_entity {
  mongo::topology_description description;
};

using entity =
    std::variant<client_entity, database_entity, collection_entity, bucket_entity, cursor_entity,
                 session_entity, value_entity, thread_entity, topology_entity>;

/// The entities of one test, by id. Thread entities use it at the same time as the test's
/// thread: finding, adding and clearing take a lock. An entity stays where it is until `clear`
/// (a std::map node), so a pointer `find` returned stays valid while other entities are added.
class entity_map {
 public:
  /// The entity `id` when it exists and is a `T`; nullptr otherwise.
  template <class T>
  T* find(std::string_view id) {
    std::lock_guard lock(mutex_);
    auto it = entities_.find(id);
    return it == entities_.end() ? nullptr : std::get_if<T>(&it->second);
  }
  /// True when an entity named `id` exists, of any kind.
  bool contains(std::string_view id) const {
    std::lock_guard lock(mutex_);
    return entities_.find(id) != entities_.end();
  }
  /// Adds `e` under `id`; false (and nothing added) when `id` is taken, which the format forbids.
  bool add(std::string id, entity e) {
    std::lock_guard lock(mutex_);
    return entities_.try_emplace(std::move(id), std::move(e)).second;
  }
  /// Calls `f(client_entity&)` for each client entity (not while a thread entity runs).
  template <class F>
  void each_client(F&& f) {
    for (auto& [id, e] : entities_) {
      if (auto* c = std::get_if<client_entity>(&e)) f(*c);
    }
  }
  /// Calls `f(session_entity&)` for each session entity (not while a thread entity runs).
  template <class F>
  void each_session(F&& f) {
    for (auto& [id, e] : entities_) {
      if (auto* s = std::get_if<session_entity>(&e)) f(*s);
    }
  }
  /// The thread entities (to wait for them at the end of a test).
  std::vector<std::shared_ptr<thread_worker>> threads() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<thread_worker>> out;
    for (auto& [id, e] : entities_) {
      if (auto* t = std::get_if<thread_entity>(&e)) out.push_back(t->worker);
    }
    return out;
  }
  /// Removes everything: threads first (each stops after its current operation; they use the
  /// others), clients last (so that cursors die before the clients they use).
  void clear() {
    std::vector<std::shared_ptr<thread_worker>> workers;
    {
      std::lock_guard lock(mutex_);
      for (auto it = entities_.begin(); it != entities_.end();) {
        if (auto* t = std::get_if<thread_entity>(&it->second)) {
          workers.push_back(std::move(t->worker));
          it = entities_.erase(it);
        } else {
          ++it;
        }
      }
    }
    workers.clear();  // joins each thread, without the lock its operations take
    std::lock_guard lock(mutex_);
    for (auto it = entities_.begin(); it != entities_.end();) {
      it = std::holds_alternative<client_entity>(it->second) ? std::next(it) : entities_.erase(it);
    }
    entities_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, entity, std::less<>> entities_;
};

/// What an operation on an entity did.
struct op_outcome {
  /// The operation's result as the format shapes it (see `wrap`): `{insertedId}` for insertOne,
  /// an array of documents for find, a number for countDocuments, ... Absent for operations that
  /// return nothing and when `error` is set.
  std::optional<bson::document> result;
  /// A cursor the operation made (createFindCursor, ...), for saveResultAsEntity.
  std::unique_ptr<mongo::cursor> cursor;
  /// The collection createCollection made, for saveResultAsEntity.
  std::optional<collection_entity> collection;
  /// The failure, when the operation failed.
  std::optional<mongo::failure> error;
  /// True when oid refused the operation before sending anything (the format's isClientError).
  bool client_error = false;
  /// True for a write sent with w: 0, which the server may not have applied yet.
  bool unacknowledged = false;
  /// For a failed bulk write: what it did before it failed, shaped as its result.
  std::optional<bson::document> partial_result;
  /// Not empty when oid lacks what the operation asks for (an operation, an argument, an option):
  /// the runner reports the test "oid lacks" with this line, e.g. "find: no `comment` option".
  std::string unsupported;
  /// Not empty when the test file itself is wrong: a required argument missing or of the wrong
  /// type, an argument the format does not define, an invalid enum value. The test fails.
  std::string malformed;
};

/// A transaction's options as the format writes them (readConcern, writeConcern, readPreference,
/// maxCommitTimeMS); nothing when oid cannot express one, with what it lacks in `gap` (an
/// "unsupported" line) or, for a value of the wrong shape, in `malformed`.
std::optional<mongo::transaction_options> read_transaction_options(bson::document_view d,
                                                                   std::string& gap,
                                                                   std::string& malformed);

/// Runs the operation `name` with `arguments` on the entity named `object` (a client, database,
/// collection or cursor entity), as the unified format defines it. A `session` argument names the
/// session entity the operation runs in.
op_outcome run_entity_operation(entity_map& entities, std::string_view object,
                                std::string_view name, bson::document_view arguments);

}  // namespace oid::unified
