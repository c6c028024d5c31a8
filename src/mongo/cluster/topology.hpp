// The deployment a client follows: the topology description (updated under a mutex with the pure
// SDAM functions), a `server` (its pool and monitor) per server of it, server selection that waits
// for changes, and the SDAM events handed to the application's listener.
//
// A topology opened with directConnection=true (Single) or loadBalanced=true (LoadBalanced) talks
// to its one server without a monitor: the handshakes of the pool's connections update its
// description, and selection always returns it (the pool's connection attempts then decide).
// Every other topology, one seed without replicaSet included, has a monitor per server.
//
// Each server's pool is a CMAP pool (connection_pool.hpp): created paused, made ready when the
// server is known (a successful check; without monitors, at once, since each handshake is the
// check), cleared with SDAM's "mark Unknown and clear the pool". A failure to open one of its
// connections (on an operation's thread or the pool's background thread) is reported to SDAM as
// an error before the handshake, with the pool generation the attempt started in.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/sdam_event.hpp>
#include <oid/mongo/server_selection.hpp>
#include <oid/mongo/topology_description.hpp>
#include <oid/mongo/uri.hpp>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/cluster/connection_pool.hpp"
#include "mongo/cluster/monitor.hpp"
#include "mongo/cluster/server.hpp"
#include "mongo/cluster/srv_poller.hpp"
#include "mongo/sdam/sdam.hpp"

namespace oid::mongo::detail {

using clock = std::chrono::steady_clock;

// The server an operation goes to.
struct selected_server {
  std::string address;
  std::shared_ptr<connection_pool> pool;
  server_type type = server_type::unknown;
  topology_type topology = topology_type::unknown;
  // The shortest round trip of the monitor's recent checks (0 without a monitor, or before its
  // second check): timeoutMS leaves it out of maxTimeMS.
  std::chrono::microseconds min_rtt{0};
};

class topology {
 public:
  // Opens the topology the connection string describes and starts its monitors. Pools open
  // their connections with `pool_options` and follow the connection string's pool options;
  // `listener` (may be empty) receives every SDAM event, `on_pool` every pool's CMAP events.
  topology(const mongo::uri& u, const connection_options& pool_options,
           std::function<void(const sdam_event&)> listener, pool_listener on_pool = {});
  topology(const topology&) = delete;
  topology& operator=(const topology&) = delete;
  ~topology();  // close()

  // A server for an operation of `kind` under `preference`, waiting for checks until `deadline`.
  // Failures: timeout, with what the client saw (each server, its type and last error);
  // invalid_read_preference; unsupported (a server whose wire versions oid does not speak);
  // connection_failed once the topology is closed.
  // `deprioritized`: addresses chosen only when no other server is suitable (the server
  // selection specification's deprioritized servers).
  outcome<selected_server> select(const read_preference& preference, operation_kind kind,
                                  clock::time_point deadline,
                                  std::span<const std::string> deprioritized = {});
  // The server at `address`, without waiting: a transaction's pinned mongos (`mongos_only`), or
  // the server a cursor lives on. connection_failed when the topology no longer has it, or no
  // longer knows it as such a server (a mongos; any data-bearing server).
  outcome<selected_server> select_address(std::string_view address, bool mongos_only = true);

  // A check's result (from a monitor, or a pool connection's handshake in Single topology).
  void on_hello(std::string_view address, bson::document_view reply, double rtt_ms);
  void on_check_failure(std::string_view address, std::string_view error);
  // An application operation's error (SDAM's error handling).
  void on_application_error(const application_error& error);
  void publish_heartbeat(const sdam_event& e);

  // True when monitors check the servers (not Single, not LoadBalanced).
  bool monitored() const noexcept { return monitored_; }
  topology_description description() const;
  // The type of the server at `address` (Unknown when it is not in the topology).
  server_type type_of(std::string_view address) const;
  std::chrono::milliseconds heartbeat_frequency() const noexcept {
    return selection_.heartbeat_frequency;
  }

  // Stops the SRV poller and the monitors (joining their threads), closes the pools and publishes
  // the closing events. Idempotent.
  void close();

 private:
  // Makes the next description from the current one with `step` and applies it, atomically;
  // then publishes its events (in order) and joins retired monitors that have ended.
  void apply(const std::function<topology_update(const topology_description&)>& step);
  // Starts the SRV poller of a mongodb+srv:// name (from the constructor).
  void start_srv_polling(const mongo::uri& u);
  // Adds pools and monitors for new servers and retires those of removed ones (under mutex_).
  void sync_servers();
  void reap();
  void publish(const std::vector<sdam_event>& events);
  std::string explain(const read_preference& preference, operation_kind kind) const;
  // How the pool of `address` opens a connection: `connection::open`, its failures reported as
  // application errors before the handshake, and without monitors its handshake as a check.
  connection_factory factory_for(const std::string& address);
  std::uint64_t pool_generation(std::string_view address) const;
  // Where the server SDAM names `address` is: a seed's host as written, else the name read back.
  server_address address_of(const std::string& address) const;

  const connection_options pool_options_;
  const mongo::pool_options pool_limits_;
  const std::function<void(const sdam_event&)> listener_;
  const pool_listener pool_listener_;
  monitor_options monitor_options_;
  selection_options selection_;
  std::chrono::milliseconds selection_timeout_;
  bool monitored_ = true;
  std::map<std::string, server_address, std::less<>> seeds_;  // by name: the hosts as written

  std::mutex publish_mutex_;  // held while publishing, so that listeners see events in order
  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  topology_description description_;
  // One per server of description_, by its name.
  std::map<std::string, server, std::less<>> servers_;
  // What removed servers leave behind: their closed pools, destroyed (joining their threads)
  // outside the locks, and their stopped monitors, joined once their threads have returned.
  std::vector<std::shared_ptr<connection_pool>> retired_pools_;
  std::vector<std::unique_ptr<monitor>> retired_;
  std::map<std::string, std::string, std::less<>> removed_;  // address -> why it was removed
  std::mt19937_64 random_{std::random_device{}()};
  // select()'s lists, kept so that selecting allocates nothing once they have grown.
  selection selected_;
  std::vector<std::uint64_t> operation_counts_;
  bool closed_ = false;
  // SRV polling, for a mongodb+srv:// name without replicaSet and loadBalanced (see
  // srv_poller.hpp); stopped by close().
  std::unique_ptr<srv_poller> poller_;
};

}  // namespace oid::mongo::detail
