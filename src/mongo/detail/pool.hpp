// The pool of connections a client, its copies, its collections and its cursors share, and
// running one command on a connection borrowed from it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/connection.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::mongo::detail {

using clock = std::chrono::steady_clock;

struct lease;

// The pool shared by a client and its copies, collections and cursors.
struct client_state : std::enable_shared_from_this<client_state> {
  explicit client_state(mongo::uri u) : uri(std::move(u)) {
    options.connect_timeout = uri.connect_timeout().value_or(options.connect_timeout);
    options.socket_timeout = uri.socket_timeout().value_or(options.socket_timeout);
    options.app_name = uri.app_name().value_or("");
    selection_timeout = uri.server_selection_timeout().value_or(std::chrono::milliseconds(30'000));
    max_pool = uri.max_pool_size().value_or(100);
  }

  outcome<lease> acquire();
  void give_back(connection&& c);
  outcome<connection> open_any(clock::time_point deadline);

  mongo::uri uri;
  connection_options options;
  std::chrono::milliseconds selection_timeout{30'000};
  std::size_t max_pool = 100;  // 0: no limit

  std::mutex mutex;
  std::condition_variable freed;
  std::vector<connection> idle;
  std::size_t open = 0;  // connections lent out or idle
};

// A connection borrowed from the pool; returned (or, when broken, closed) on destruction.
struct lease {
  lease(std::shared_ptr<client_state> s, connection&& c)
      : state(std::move(s)), conn(std::move(c)) {}
  lease(lease&&) noexcept = default;
  lease& operator=(lease&&) = delete;
  lease(const lease&) = delete;
  ~lease() {
    if (state && conn) state->give_back(std::move(*conn));
  }
  connection& operator*() { return *conn; }
  connection* operator->() { return &*conn; }

  std::shared_ptr<client_state> state;
  std::optional<connection> conn;
};

// The transport error `e` of connection `c` as a sentence naming the host.
std::string transport_message(const oid::error& e, const connection& c);

// Runs a command on a borrowed connection: transport errors and ok: 0 become failures.
outcome<bson::document> command(lease& l, std::string_view db, bson::document_view cmd,
                                std::span<const document_sequence> sequences = {});
// The same on a connection borrowed for this command only.
outcome<bson::document> command(client_state& s, std::string_view db, bson::document_view cmd);

}  // namespace oid::mongo::detail
