// One server of the live topology: its address, the pool its connections come from and, in a
// monitored topology, the monitor that checks it. The topology keeps one per server of its
// description and retires it when SDAM removes the server.
#pragma once

#include <memory>

#include "mongo/cluster/connection_pool.hpp"
#include "mongo/cluster/monitor.hpp"
#include "mongo/sdam/address.hpp"

namespace oid::mongo::detail {

struct server {
  server_address address;
  std::shared_ptr<connection_pool> pool;
  std::unique_ptr<mongo::detail::monitor> monitor;  // null in Single and LoadBalanced topologies

  // Closes the pool and tells the monitor to stop; the topology joins them outside its locks.
  void retire() {
    if (pool) pool->close();
    if (monitor) monitor->stop();
  }
};

}  // namespace oid::mongo::detail
