#include "mongo/detail/pool.hpp"

#include <algorithm>
#include <thread>

#include "mongo/detail/reply.hpp"

namespace oid::mongo::detail {

void client_state::give_back(connection&& c) {
  std::lock_guard lock(mutex);
  if (c.broken()) {
    --open;
  } else {
    idle.push_back(std::move(c));
  }
  freed.notify_one();
}

outcome<connection> client_state::open_any(clock::time_point deadline) {
  std::string last = "no host";
  errc last_code = errc::connection_failed;
  while (true) {
    for (const auto& h : uri.hosts()) {
      connection_options o = options;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      if (o.connect_timeout.count() == 0 || left < o.connect_timeout) {
        o.connect_timeout = std::max(left, std::chrono::milliseconds(1));
      }
      auto c = connection::open(h, o);
      if (c) return std::move(*c);
      last_code = c.error().code;
      last = std::move(c).error().message;
      // An old server or one that refused the handshake will not change its mind.
      if (last_code == errc::unsupported) return failure(last_code, last);
    }
    // Like drivers' server selection: keep trying until serverSelectionTimeoutMS, at a pace that
    // does not hammer a server that is starting up.
    if (clock::now() + std::chrono::milliseconds(250) >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return failure(last_code == errc::timeout ? errc::timeout : errc::connection_failed,
                 "no server answered within serverSelectionTimeoutMS (" +
                     std::to_string(selection_timeout.count()) + " ms); last: " + last);
}

outcome<lease> client_state::acquire() {
  const auto deadline = clock::now() + selection_timeout;
  std::unique_lock lock(mutex);
  while (idle.empty() && max_pool != 0 && open >= max_pool) {
    if (freed.wait_until(lock, deadline) == std::cv_status::timeout && idle.empty() &&
        open >= max_pool) {
      return failure(errc::timeout, "all " + std::to_string(max_pool) +
                                        " pooled connections stayed busy for "
                                        "serverSelectionTimeoutMS");
    }
  }
  if (!idle.empty()) {
    connection c = std::move(idle.back());
    idle.pop_back();
    return lease(shared_from_this(), std::move(c));
  }
  ++open;
  lock.unlock();
  auto c = open_any(deadline);
  if (!c) {
    std::lock_guard relock(mutex);
    --open;
    freed.notify_one();
    return std::move(c).error();
  }
  return lease(shared_from_this(), std::move(*c));
}

std::string transport_message(const oid::error& e, const connection& c) {
  const auto& h = c.host();
  return e.message() + " (" +
         (h.type == host::kind::unix_socket ? h.name
                                            : h.name + ":" + std::to_string(h.port_or_default())) +
         ")";
}

outcome<bson::document> command(lease& l, std::string_view db, bson::document_view cmd,
                                std::span<const document_sequence> sequences) {
  auto reply = l->run(db, cmd, sequences);
  if (!reply) return failure(reply.error().code, transport_message(reply.error(), *l));
  if (!is_ok(reply->view())) {
    const auto first = cmd.begin();
    return failure_of(reply->view(), first == cmd.end() ? "command" : first->key());
  }
  return std::move(*reply);
}

outcome<bson::document> command(client_state& s, std::string_view db, bson::document_view cmd) {
  auto l = s.acquire();
  if (!l) return std::move(l).error();
  return command(*l, db, cmd);
}

}  // namespace oid::mongo::detail
