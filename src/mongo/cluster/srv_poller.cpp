#include "mongo/cluster/srv_poller.hpp"

#include <algorithm>
#include <atomic>
#include <oid/mongo/srv.hpp>
#include <utility>

namespace oid::mongo::detail {

namespace {

std::atomic<std::chrono::milliseconds::rep> minimum_interval_ms{60'000};

}  // namespace

void srv_poller::set_minimum_interval(std::chrono::milliseconds interval) {
  minimum_interval_ms = interval.count();
}

srv_poller::srv_poller(mongo::uri u, std::chrono::milliseconds heartbeat_frequency,
                       std::function<std::optional<std::vector<host>>()> current,
                       std::function<void(const std::vector<host>&)> apply)
    : uri_(std::move(u)),
      heartbeat_frequency_(heartbeat_frequency),
      minimum_(minimum_interval_ms.load()),
      current_(std::move(current)),
      apply_(std::move(apply)),
      thread_([this] { run(); }) {}

srv_poller::~srv_poller() { stop(); }

void srv_poller::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void srv_poller::run() {
  // The first rescan comes one interval after the initial lookup (whose TTL the client did not
  // keep: the least interval, as the specification says when TTLs are not known).
  std::chrono::milliseconds wait = minimum_;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, wait, [this] { return stop_; })) return;
    }
    const auto hosts = current_();
    if (!hosts) return;  // a replica set or a single server: never polled again
    auto rescan = rescan_srv(uri_, *hosts);
    if (!rescan || rescan->hosts.empty()) {
      // DNS failed or listed nothing valid: keep the hosts, and try again sooner.
      wait = heartbeat_frequency_;
      continue;
    }
    apply_(rescan->hosts);
    wait = std::max<std::chrono::milliseconds>(rescan->ttl, minimum_);
  }
}

}  // namespace oid::mongo::detail
