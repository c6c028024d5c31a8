// The connections to one server: an idle list bounded by maxPoolSize, with a generation that
// `clear` bumps so that connections opened before an error are closed instead of reused. The
// minimal shape of a CMAP pool (check_out / check_in / clear / generation / close).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <oid/mongo/connection.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <string>
#include <vector>

namespace oid::mongo::detail {

using clock = std::chrono::steady_clock;

// A connection lent by a pool, with the pool generation it was opened in.
struct pooled_connection {
  connection conn;
  std::uint64_t generation = 0;
  bool fresh = false;  // opened by this check_out (its handshake is new)
};

class server_pool {
 public:
  // `max_size` 0: no limit.
  server_pool(mongo::host h, connection_options options, std::size_t max_size)
      : host_(std::move(h)), options_(std::move(options)), max_size_(max_size) {}

  // An idle connection of the current generation, or a new one (one connection attempt, its
  // connect timeout cut to `deadline`). Waits while maxPoolSize connections are lent out.
  // Failures: those of `connection::open`; timeout when the pool stayed full until `deadline`;
  // connection_failed when the pool is closed.
  outcome<pooled_connection> check_out(clock::time_point deadline);
  // Takes a connection back: kept when it is healthy and of the current generation, else closed.
  void check_in(pooled_connection&& c);
  // Starts a new generation: idle connections are closed now, lent ones when they come back.
  void clear();
  // Closes the idle connections and refuses further check-outs (the server left the topology).
  void close();
  std::uint64_t generation() const;
  // Connections lent out now (the server's operation count for selection).
  std::size_t in_use() const;
  const mongo::host& host() const noexcept { return host_; }

 private:
  const mongo::host host_;
  const connection_options options_;
  const std::size_t max_size_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<connection> idle_;
  std::size_t open_ = 0;  // lent out or idle
  std::uint64_t generation_ = 0;
  bool closed_ = false;
};

}  // namespace oid::mongo::detail
