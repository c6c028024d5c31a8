#include "mongo/detail/server_pool.hpp"

#include <algorithm>
#include <utility>

namespace oid::mongo::detail {

outcome<pooled_connection> server_pool::check_out(clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  while (!closed_ && idle_.empty() && max_size_ != 0 && open_ >= max_size_) {
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= max_size_) {
      return failure(errc::timeout, "all " + std::to_string(max_size_) +
                                        " pooled connections stayed busy for "
                                        "serverSelectionTimeoutMS");
    }
  }
  if (closed_) return failure(errc::connection_failed, "the server left the topology");
  if (!idle_.empty()) {
    connection c = std::move(idle_.back());
    idle_.pop_back();
    return pooled_connection{std::move(c), generation_, false};
  }
  ++open_;
  const std::uint64_t generation = generation_;
  lock.unlock();
  connection_options o = options_;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  if (o.connect_timeout.count() == 0 || left < o.connect_timeout) {
    o.connect_timeout = std::max(left, std::chrono::milliseconds(1));
  }
  auto c = connection::open(host_, o);
  if (!c) {
    std::lock_guard relock(mutex_);
    --open_;
    freed_.notify_one();
    return std::move(c).error();
  }
  return pooled_connection{std::move(*c), generation, true};
}

void server_pool::check_in(pooled_connection&& c) {
  std::lock_guard lock(mutex_);
  if (c.conn.broken() || closed_ || c.generation != generation_) {
    --open_;
    // The connection closes when `c` goes out of scope (after the lock; closing is quick).
  } else {
    idle_.push_back(std::move(c.conn));
  }
  freed_.notify_one();
}

void server_pool::clear() {
  std::vector<connection> dropped;
  {
    std::lock_guard lock(mutex_);
    ++generation_;
    open_ -= idle_.size();
    dropped.swap(idle_);
    freed_.notify_all();
  }
}

void server_pool::close() {
  std::vector<connection> dropped;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    open_ -= idle_.size();
    dropped.swap(idle_);
    freed_.notify_all();
  }
}

std::uint64_t server_pool::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

std::size_t server_pool::in_use() const {
  std::lock_guard lock(mutex_);
  return open_ - idle_.size();
}

}  // namespace oid::mongo::detail
