// The pool events a client delivers, kept for a test to inspect, and helpers to read them in
// order (tests/mongo_pool_test.cpp against a scripted server, tests/mongo_pool_server_test.cpp
// against FerretDB).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <oid/mongo/client.hpp>
#include <oid/mongo/pool_event.hpp>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace oid::testing {
// The pool events a client delivers, kept for the test to inspect (from any thread).
class pool_log {
 public:
  std::function<void(const mongo::pool_event&)> listener() {
    return [this](const mongo::pool_event& e) {
      std::lock_guard lock(mutex_);
      events_.push_back(e);
      changed_.notify_all();
    };
  }
  // Client options that send the pool events here.
  mongo::client_options options() {
    mongo::client_options o;
    o.on_pool = listener();
    return o;
  }
  std::vector<mongo::pool_event> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  // How many events of type E arrived.
  template <class E>
  std::size_t count() const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& e : events_) n += std::holds_alternative<E>(e) ? 1 : 0;
    return n;
  }
  // Waits up to `limit` for `n` events of type E; false on time out.
  template <class E>
  bool wait_for(std::size_t n, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] {
      std::size_t seen = 0;
      for (const auto& e : events_) seen += std::holds_alternative<E>(e) ? 1 : 0;
      return seen >= n;
    });
  }
  // The events' names in order, for failure messages and order checks.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : events()) out.push_back(name_of(e));
    return out;
  }
  static std::string name_of(const mongo::pool_event& e) {
    return std::visit(
        [](const auto& v) -> std::string {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, mongo::pool_created_event>) return "PoolCreated";
          if constexpr (std::is_same_v<T, mongo::pool_ready_event>) return "PoolReady";
          if constexpr (std::is_same_v<T, mongo::pool_cleared_event>) return "PoolCleared";
          if constexpr (std::is_same_v<T, mongo::pool_closed_event>) return "PoolClosed";
          if constexpr (std::is_same_v<T, mongo::connection_created_event>) {
            return "ConnectionCreated " + std::to_string(v.connection_id);
          }
          if constexpr (std::is_same_v<T, mongo::connection_ready_event>) {
            return "ConnectionReady " + std::to_string(v.connection_id);
          }
          if constexpr (std::is_same_v<T, mongo::connection_closed_event>) {
            return "ConnectionClosed " + std::to_string(v.connection_id) + " " +
                   std::string(to_string(v.reason));
          }
          if constexpr (std::is_same_v<T, mongo::connection_check_out_started_event>) {
            return "CheckOutStarted";
          }
          if constexpr (std::is_same_v<T, mongo::connection_check_out_failed_event>) {
            return "CheckOutFailed " + std::string(to_string(v.reason));
          }
          if constexpr (std::is_same_v<T, mongo::connection_checked_out_event>) {
            return "CheckedOut " + std::to_string(v.connection_id);
          }
          if constexpr (std::is_same_v<T, mongo::connection_checked_in_event>) {
            return "CheckedIn " + std::to_string(v.connection_id);
          }
          return "?";
        },
        e);
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<mongo::pool_event> events_;
};

inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

inline bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The position of the first `name` in `names` (names.size() when absent).
inline std::size_t position(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace oid::testing
