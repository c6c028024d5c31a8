// SRV polling, as the "Polling SRV Records for mongos Discovery" specification says: for a client
// made from a mongodb+srv:// name, a thread looks up the name's SRV records again every
// rescanSRVIntervalMS (the records' lowest TTL, but at least 60 seconds; heartbeatFrequencyMS
// after a lookup that failed or found no valid record) and hands the hosts to the topology,
// which adds and removes mongos (rescan_srv in srv.cpp chooses them under srvMaxHosts).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <thread>
#include <vector>

namespace oid::mongo::detail {

class srv_poller {
 public:
  // `current` gives the hosts the topology has now, or nullopt when polling no longer applies
  // (the topology is neither Sharded nor Unknown: the poller then ends); `apply` receives the
  // hosts of each successful rescan. Both are called from the poller's thread.
  srv_poller(mongo::uri u, std::chrono::milliseconds heartbeat_frequency,
             std::function<std::optional<std::vector<host>>()> current,
             std::function<void(const std::vector<host>&)> apply);
  srv_poller(const srv_poller&) = delete;
  srv_poller& operator=(const srv_poller&) = delete;
  ~srv_poller();  // stop() and join

  // Asks the thread to end and waits for it (a lookup under way finishes first).
  void stop();

  // The least rescanSRVIntervalMS (60 s by the specification). For tests only, which cannot wait
  // a minute between scans; it applies to pollers started afterwards.
  static void set_minimum_interval(std::chrono::milliseconds interval);

 private:
  void run();

  const mongo::uri uri_;
  const std::chrono::milliseconds heartbeat_frequency_, minimum_;
  const std::function<std::optional<std::vector<host>>()> current_;
  const std::function<void(const std::vector<host>&)> apply_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace oid::mongo::detail
