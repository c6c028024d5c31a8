#include "mongo/cluster/monitor.hpp"

#include <algorithm>
#include <oid/bson/builder.hpp>
#include <utility>

#include "mongo/cluster/topology.hpp"
#include "mongo/wire/reply.hpp"
#include "mongo/wire/stream.hpp"

namespace oid::mongo::detail {

namespace {

using clock = std::chrono::steady_clock;

double ms_since(clock::time_point start) {
  return std::chrono::duration<double, std::milli>(clock::now() - start).count();
}

std::chrono::microseconds us_since(clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
}

}  // namespace

monitor::monitor(topology& owner, std::string address, mongo::host h, monitor_options options)
    : owner_(owner),
      address_(std::move(address)),
      host_(std::move(h)),
      options_(std::move(options)),
      thread_([this] { run(); }) {}

monitor::~monitor() {
  stop();
  join();
}

std::chrono::microseconds monitor::min_rtt() const noexcept {
  return std::chrono::microseconds(min_rtt_us_.load(std::memory_order_relaxed));
}

void monitor::record_rtt(double ms) {
  rtt_us_[rtt_count_ % rtt_samples] = static_cast<std::int64_t>(ms * 1000);
  ++rtt_count_;
  if (rtt_count_ < 2) return;
  const auto end = rtt_us_.begin() + static_cast<std::ptrdiff_t>(std::min(rtt_count_, rtt_samples));
  min_rtt_us_.store(*std::min_element(rtt_us_.begin(), end), std::memory_order_relaxed);
}

void monitor::request_check() {
  std::lock_guard lock(mutex_);
  requested_ = true;
  wake_.notify_all();
}

void monitor::stop() {
  std::lock_guard lock(mutex_);
  stop_ = true;
  wake_.notify_all();
}

void monitor::join() {
  if (thread_.joinable() && !is_current_thread()) thread_.join();
}

void monitor::run() {
  std::optional<connection> conn;
  do {
    const auto started = clock::now();
    check(conn);
    if (!wait_for_next(started)) break;
  } while (true);
  exited_ = true;
}

void monitor::check(std::optional<connection>& conn) {
  owner_.publish_heartbeat(server_heartbeat_started_event{address_});
  const auto started = clock::now();
  std::string error;
  // A check on an established connection that fails is retried once on a new connection
  // (the SDAM specification's "retry once" for a server that was known).
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = conn.has_value();
    const auto begun = clock::now();
    if (!reused) {
      auto opened = connection::open(host_, options_.connection);
      if (opened) {
        conn.emplace(std::move(*opened));
        const double rtt = ms_since(begun);
        record_rtt(rtt);
        bson::document reply = conn->server().hello;
        owner_.publish_heartbeat(
            server_heartbeat_succeeded_event{address_, us_since(started), reply});
        owner_.on_hello(address_, reply.view(), rtt);
        return;
      }
      error = opened.error().message;
      break;
    }
    bson::builder hello;
    hello.append_int32("hello", 1);
    append_server_api(hello, options_.connection.api);
    auto reply = conn->run("admin", hello.view());
    if (reply && !is_ok(reply->view())) {
      // A command error (ok: 0) fails the check as a network error does, but is not retried: the
      // monitoring connection goes, the server becomes Unknown and its pool is cleared (server
      // monitoring: "Network or command error during server check").
      // Worded as a refused handshake is (wire/handshake.cpp): the next check opens a new
      // connection, and the same refusal in its handshake must not read as a change of the
      // server's description (SDAM's equality compares the error too).
      error = "hello to " + describe(host_) + " refused: " + server_error_of(reply->view()).message;
      conn.reset();
      break;
    }
    if (reply) {
      const double rtt = ms_since(begun);
      record_rtt(rtt);
      owner_.publish_heartbeat(
          server_heartbeat_succeeded_event{address_, us_since(started), *reply});
      owner_.on_hello(address_, reply->view(), rtt);
      return;
    }
    error = reply.error().message() + " (" + address_ + ")";
    conn.reset();
  }
  owner_.publish_heartbeat(server_heartbeat_failed_event{address_, us_since(started), error});
  owner_.on_check_failure(address_, error);
}

bool monitor::wait_for_next(clock::time_point last) {
  std::unique_lock lock(mutex_);
  const auto regular = last + options_.heartbeat_frequency;
  const auto earliest = last + options_.min_heartbeat_frequency;
  while (!stop_) {
    const auto now = clock::now();
    if (now >= regular || (requested_ && now >= earliest)) break;
    wake_.wait_until(lock, requested_ ? earliest : regular);
  }
  requested_ = false;
  return !stop_;
}

}  // namespace oid::mongo::detail
