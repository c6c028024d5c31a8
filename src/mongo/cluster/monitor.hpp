// The monitor of one server: a thread with its own connection that sends `hello` every
// heartbeatFrequencyMS (sooner when asked, but never twice within minHeartbeatFrequencyMS) and
// reports each check to the topology, as the SDAM specification's "Monitoring" section says.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <oid/mongo/uri.hpp>
#include <string>
#include <thread>

#include "mongo/wire/connection.hpp"

namespace oid::mongo::detail {

class topology;

struct monitor_options {
  connection_options connection;  // no credential: monitors do not authenticate
  std::chrono::milliseconds heartbeat_frequency{10'000};
  std::chrono::milliseconds min_heartbeat_frequency{500};
};

class monitor {
 public:
  // Starts the thread; the first check begins at once. `owner` outlives the monitor.
  monitor(topology& owner, std::string address, mongo::host h, monitor_options options);
  monitor(const monitor&) = delete;
  monitor& operator=(const monitor&) = delete;
  ~monitor();  // stop() and join()

  // Checks as soon as minHeartbeatFrequencyMS since the last check allows.
  void request_check();
  // Asks the thread to end (does not wait).
  void stop();
  // Waits for the thread to end (not from the thread itself).
  void join();
  // True once the thread has returned (join() will not block).
  bool exited() const noexcept { return exited_.load(); }
  // The shortest round trip of the last 10 successful checks; 0 before the second (the first
  // opens the connection, and one sample says little), as the SDAM specification's
  // minRoundTripTime.
  std::chrono::microseconds min_rtt() const noexcept;
  bool is_current_thread() const noexcept { return thread_.get_id() == std::this_thread::get_id(); }

 private:
  void run();
  void check(std::optional<connection>& conn);
  // Waits until the next check is due; false when stopping.
  bool wait_for_next(std::chrono::steady_clock::time_point last);

  topology& owner_;
  const std::string address_;
  const mongo::host host_;
  const monitor_options options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, requested_ = false;
  std::atomic<bool> exited_{false};
  // The round trips of the last checks (a ring the monitor's thread alone touches), and their
  // minimum for other threads.
  void record_rtt(double ms);
  static constexpr std::size_t rtt_samples = 10;
  std::array<std::int64_t, rtt_samples> rtt_us_{};
  std::size_t rtt_count_ = 0;
  std::atomic<std::int64_t> min_rtt_us_{0};
  std::thread thread_;
};

}  // namespace oid::mongo::detail
