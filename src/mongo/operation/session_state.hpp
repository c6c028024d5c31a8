// What an explicit session (oid/mongo/session.hpp) keeps between its operations: the server
// session (its `lsid` and transaction numbers), the cluster and operation times it has seen
// (causal consistency, `$clusterTime` gossip), a snapshot session's time, and its transaction.
// The handles bound to the session and the cursors they open share it; one thread at a time uses
// it, as the driver sessions specification allows.
#pragma once

#include <chrono>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/session.hpp>
#include <optional>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/session_pool.hpp"

namespace oid::mongo::detail {

// The greater of two `$clusterTime` documents by their `clusterTime` timestamp; one without a
// timestamp counts as the lowest.
bool cluster_time_less(bson::document_view a, bson::document_view b) noexcept;

// The `clusterTime` timestamp of a `$clusterTime` document.
std::optional<bson::timestamp_value> cluster_timestamp(bson::document_view cluster_time) noexcept;

inline bool timestamp_less(bson::timestamp_value a, bson::timestamp_value b) noexcept {
  return a.t < b.t || (a.t == b.t && a.i < b.i);
}

}  // namespace oid::mongo::detail

namespace oid::mongo {

struct session_state {
  session_state(std::shared_ptr<client_state> c, session_options o)
      : client(std::move(c)), options(std::move(o)) {
    causal = options.causal_consistency.value_or(!options.snapshot);
  }
  ~session_state() { end(); }

  // Session misuse that fails every operation: an ended session, or one of another client.
  std::optional<failure> unusable_by(const client_state& s) const;
  // The server session, taken from the client's pool the first time. `timeout`: the
  // deployment's logicalSessionTimeoutMinutes, when known.
  detail::server_session& server(std::optional<std::chrono::minutes> timeout = std::nullopt);
  // What a reply tells the session: `$clusterTime`, `operationTime` and, for the first read of
  // a snapshot session, `atClusterTime`.
  void observe(bson::document_view reply);
  void advance_cluster_time(bson::document_view cluster_time);
  void advance_operation_time(bson::timestamp_value t);
  // Ends the transaction in progress (abort, errors ignored) and gives the server session back.
  void end() noexcept;

  // The transaction takes commands: started and neither committed nor aborted.
  bool in_transaction() const noexcept {
    return txn == transaction_state::starting || txn == transaction_state::in_progress;
  }

  std::shared_ptr<client_state> client;
  session_options options;
  bool causal = true;
  bool ended = false;
  std::optional<detail::server_session> server_session;
  std::chrono::minutes server_timeout{30};
  std::optional<bson::document> cluster_time;
  std::optional<bson::timestamp_value> operation_time;
  std::optional<bson::timestamp_value> snapshot_time;

  // The transaction: its state, its options (the session's defaults and the client's under
  // what start_transaction gave), and whether any command was sent in it (a commit of a
  // transaction without commands sends nothing).
  transaction_state txn = transaction_state::none;
  transaction_options txn_options;
  bool txn_sent = false;
  // A sharded cluster's recoveryToken for the transaction (the last a mongos sent): its commit
  // and abort carry it, so that another mongos can find the transaction's outcome.
  std::optional<bson::document> recovery_token;
  // The mongos a sharded cluster's transaction is pinned to (its first command's): its later
  // commands, commit and abort go there. Empty: not pinned. The transactions specification's
  // unpinning: a new transaction, an operation outside one, and an error labelled
  // TransientTransactionError or UnknownTransactionCommitResult.
  std::string pinned;
  // timeoutMS of `with_transaction` as a whole, which its operations and commit share (they
  // take it over their own).
  std::optional<detail::time_limit> txn_limit;
  // The timeoutMS of a call with none of its own: the session's default, else the client's.
  std::optional<std::chrono::milliseconds> default_timeout() const {
    return options.default_timeout ? options.default_timeout : client->timeout;
  }
};

}  // namespace oid::mongo

namespace oid::mongo::detail {

using mongo::session_state;

// commitTransaction, by the transactions specification's state machine: a transaction that sent
// nothing commits without a command; a failure whose outcome is unknown carries
// "UnknownTransactionCommitResult"; a commit called again runs again with w: "majority".
// `timeout`: the call's timeoutMS (else the session's default, else the client's).
outcome<done> commit_transaction(session_state& s,
                                 std::optional<std::chrono::milliseconds> timeout = {});
// abortTransaction: its server errors are ignored (the server aborts an abandoned transaction).
outcome<done> abort_transaction(session_state& s,
                                std::optional<std::chrono::milliseconds> timeout = {});

}  // namespace oid::mongo::detail
