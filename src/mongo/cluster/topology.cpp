#include "mongo/cluster/topology.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace oid::mongo::detail {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock::now().time_since_epoch())
      .count();
}

// The connection string's pool options (CMAP's defaults where it has none).
mongo::pool_options pool_limits_of(const mongo::uri& u) {
  mongo::pool_options o;
  o.max_pool_size = u.max_pool_size().value_or(o.max_pool_size);
  o.min_pool_size = u.min_pool_size().value_or(o.min_pool_size);
  o.max_connecting = u.max_connecting().value_or(o.max_connecting);
  o.max_idle_time = u.max_idle_time().value_or(o.max_idle_time);
  o.wait_queue_timeout = u.wait_queue_timeout().value_or(o.wait_queue_timeout);
  return o;
}

std::string describe(const read_preference& p) {
  std::string out(to_string(p.mode));
  if (!p.tag_sets.empty()) {
    out += ", tag sets [";
    for (std::size_t i = 0; i < p.tag_sets.size(); ++i) {
      out += i == 0 ? "{" : ", {";
      for (std::size_t j = 0; j < p.tag_sets[i].size(); ++j) {
        out += (j == 0 ? "" : ", ") + p.tag_sets[i][j].first + ": " + p.tag_sets[i][j].second;
      }
      out += "}";
    }
    out += "]";
  }
  if (p.max_staleness) {
    out += ", maxStalenessSeconds " + std::to_string(p.max_staleness->count());
  }
  return out;
}

}  // namespace

topology::topology(const mongo::uri& u, const connection_options& pool_options,
                   std::function<void(const sdam_event&)> listener, pool_listener on_pool)
    : pool_options_(pool_options),
      pool_limits_(pool_limits_of(u)),
      listener_(std::move(listener)),
      pool_listener_(std::move(on_pool)),
      selection_timeout_(u.server_selection_timeout().value_or(std::chrono::milliseconds(30'000))) {
  monitor_options_.connection = pool_options;
  monitor_options_.connection.auth.reset();
  monitor_options_.connection.scram_cache.reset();
  // A monitor's reads wait as long as its connecting may (connectTimeoutMS).
  monitor_options_.connection.socket_timeout = pool_options.connect_timeout.count() == 0
                                                   ? std::chrono::milliseconds(10'000)
                                                   : pool_options.connect_timeout;
  monitor_options_.heartbeat_frequency =
      u.heartbeat_frequency().value_or(std::chrono::milliseconds(10'000));
  selection_.heartbeat_frequency = monitor_options_.heartbeat_frequency;
  selection_.local_threshold = u.local_threshold().value_or(std::chrono::milliseconds(15));

  topology_settings settings;
  for (const auto& h : u.hosts()) {
    server_address a = server_address::of(h);
    settings.seeds.push_back(a.name);
    seeds_.emplace(a.name, std::move(a));
  }
  settings.replica_set = u.replica_set();
  settings.load_balanced = u.load_balanced().value_or(false);
  // As the SDAM specification says, only directConnection=true makes a Single topology from the
  // start: one seed without it is Unknown until its monitor's check (a standalone then makes it
  // Single, a replica set member leads to its set, a mongos to Sharded).
  settings.direct_connection = u.direct_connection();
  monitored_ = !u.direct_connection().value_or(false) && !settings.load_balanced;
  auto opened = open_topology(settings);
  apply([&](const topology_description&) { return std::move(opened); });
  if (u.srv_name() && !settings.load_balanced && !u.replica_set()) start_srv_polling(u);
}

void topology::start_srv_polling(const mongo::uri& u) {
  auto current = [this]() -> std::optional<std::vector<mongo::host>> {
    std::lock_guard lock(mutex_);
    if (closed_ || (description_.type != topology_type::sharded &&
                    description_.type != topology_type::unknown)) {
      return std::nullopt;
    }
    std::vector<mongo::host> hosts;
    for (const auto& [address, server] : description_.servers) {
      hosts.push_back(address_of(address).host);
    }
    return hosts;
  };
  auto found = [this](const std::vector<mongo::host>& hosts) {
    std::vector<std::string> addresses;
    for (const auto& h : hosts) addresses.push_back(server_address::of(h).name);
    apply([&](const topology_description& d) { return apply_srv_hosts(d, addresses); });
  };
  poller_ = std::make_unique<srv_poller>(u, monitor_options_.heartbeat_frequency,
                                         std::move(current), std::move(found));
}

topology::~topology() { close(); }

server_address topology::address_of(const std::string& address) const {
  if (const auto seed = seeds_.find(address); seed != seeds_.end()) return seed->second;
  if (auto parsed = server_address::parse(address)) return std::move(*parsed);
  // Not an address (SDAM keeps what a server sent): connecting to it fails and says so.
  return {mongo::host{host::kind::hostname, address, std::nullopt}, address};
}

void topology::apply(const std::function<topology_update(const topology_description&)>& step) {
  std::vector<sdam_event> events;
  {
    std::lock_guard publish_lock(publish_mutex_);
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      topology_update update = step(description_);
      description_ = std::move(update.description);
      sync_servers();
      for (const auto& a : update.cleared_pools) {
        if (const auto s = servers_.find(a); s != servers_.end()) s->second.pool->clear();
      }
      // A server a check found (or a load balancer) may be lent connections; done under the
      // lock, so that selection never picks a known server whose pool is still paused.
      for (const auto& [address, server] : description_.servers) {
        if (server.type == server_type::unknown) continue;
        if (const auto s = servers_.find(address); s != servers_.end()) s->second.pool->ready();
      }
      for (const auto& a : update.check_now) {
        if (const auto s = servers_.find(a); s != servers_.end() && s->second.monitor) {
          s->second.monitor->request_check();
        }
      }
      events = std::move(update.events);
      changed_.notify_all();
    }
    publish(events);
  }
  reap();
}

void topology::sync_servers() {
  for (const auto& [address, description] : description_.servers) {
    if (servers_.find(address) != servers_.end()) continue;
    server s{address_of(address), nullptr, nullptr};
    s.pool = std::make_shared<connection_pool>(s.address.host, pool_limits_, factory_for(address),
                                               pool_listener_);
    if (monitored_) {
      s.monitor = std::make_unique<monitor>(*this, address, s.address.host, monitor_options_);
    } else {
      s.pool->ready();  // no monitor: the first handshake is the check
    }
    servers_.emplace(address, std::move(s));
  }
  for (auto s = servers_.begin(); s != servers_.end();) {
    if (description_.servers.find(s->first) != description_.servers.end()) {
      ++s;
      continue;
    }
    s->second.retire();
    retired_pools_.push_back(std::move(s->second.pool));
    if (s->second.monitor) retired_.push_back(std::move(s->second.monitor));
    s = servers_.erase(s);
  }
}

void topology::reap() {
  std::vector<std::shared_ptr<connection_pool>> closed_pools;
  std::vector<std::unique_ptr<monitor>> done;
  {
    std::lock_guard lock(mutex_);
    closed_pools.swap(retired_pools_);
    for (auto m = retired_.begin(); m != retired_.end();) {
      if ((*m)->exited() && !(*m)->is_current_thread()) {
        done.push_back(std::move(*m));
        m = retired_.erase(m);
      } else {
        ++m;
      }
    }
  }
  // `done` joins (at once: their threads have returned) as it goes; `closed_pools` waits for
  // their background threads (at most one connection attempt each).
}

connection_factory topology::factory_for(const std::string& address) {
  return [this, address, open = open_with(pool_options_)](const mongo::host& h,
                                                          pool_clock::time_point deadline) {
    const std::uint64_t generation = pool_generation(address);
    const auto started = clock::now();
    auto c = open(h, deadline);
    if (!c) {
      application_error e;
      e.address = address;
      e.generation = generation;
      e.phase = error_phase::before_handshake;
      e.kind = c.error().code == errc::timeout ? error_kind::timeout : error_kind::network;
      e.message = c.error().message;
      on_application_error(e);
    } else if (!monitored_) {
      // Single or LoadBalanced: the handshake is the check that describes the server.
      const double rtt_ms =
          std::chrono::duration<double, std::milli>(clock::now() - started).count();
      on_hello(address, c->server().hello.view(), rtt_ms);
      // No server selection looked at this server's wire versions (it hands out the one server
      // unseen, and a load balancer is never described by a hello): the check SDAM makes of a
      // monitored server refuses the connection here, as selection would.
      const auto hello = server_description::from_hello(address, c->server().hello.view(), rtt_ms);
      if (auto problem = wire_version_problem(address, hello)) {
        return outcome<connection>(failure(errc::unsupported, std::move(*problem)));
      }
    }
    return c;
  };
}

std::uint64_t topology::pool_generation(std::string_view address) const {
  std::lock_guard lock(mutex_);
  return description_.pool_generation(address);
}

void topology::publish(const std::vector<sdam_event>& events) {
  if (!listener_) return;
  for (const auto& e : events) {
    try {
      listener_(e);
    } catch (...) {  // a listener's exception must not stop a monitor
    }
  }
}

void topology::publish_heartbeat(const sdam_event& e) {
  std::lock_guard publish_lock(publish_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
  }
  publish(std::vector<sdam_event>{e});
}

void topology::on_hello(std::string_view address, bson::document_view reply, double rtt_ms) {
  apply([&](const topology_description& d) {
    return apply_hello(d, address, reply, rtt_ms, now_ms());
  });
  // A server its own answer removed (another set's member, a standalone among several seeds):
  // selection errors say so, or the user would see no server at all.
  const auto s = server_description::from_hello(address, reply, rtt_ms);
  std::lock_guard lock(mutex_);
  if (!closed_ && !description_.find(s.address)) {
    // Kept for selection errors, a few: servers come and go, and their names are the servers'.
    if (removed_.size() >= max_servers && !removed_.contains(s.address)) {
      removed_.erase(removed_.begin());
    }
    removed_[s.address] = "removed after answering as " + std::string(to_string(s.type)) +
                          (s.set_name ? " of replica set " + *s.set_name : "");
  }
}

void topology::on_check_failure(std::string_view address, std::string_view error) {
  apply([&](const topology_description& d) { return apply_check_failure(d, address, error); });
}

void topology::on_application_error(const application_error& error) {
  apply([&](const topology_description& d) { return apply_application_error(d, error); });
}

topology_description topology::description() const {
  std::lock_guard lock(mutex_);
  return description_;
}

server_type topology::type_of(std::string_view address) const {
  std::lock_guard lock(mutex_);
  const auto* s = description_.find(address);
  return s ? s->type : server_type::unknown;
}

outcome<selected_server> topology::select(const read_preference& preference, operation_kind kind,
                                          clock::time_point deadline,
                                          std::span<const std::string> deprioritized) {
  std::unique_lock lock(mutex_);
  while (true) {
    if (closed_) return failure(errc::connection_failed, "the client is closed");
    if (!monitored_) {
      // Single or LoadBalanced: the one server, whatever it is; its pool's attempts decide.
      if (servers_.empty()) return failure(errc::connection_failed, "no server in the topology");
      const auto& [address, only] = *servers_.begin();
      const auto* s = description_.find(address);
      return selected_server{address, only.pool, s ? s->type : server_type::unknown,
                             description_.type};
    }
    // Into the topology's own lists: selection allocates nothing once they have grown.
    selection_.deprioritized.assign(deprioritized.begin(), deprioritized.end());
    auto chosen = select_servers(description_, preference, kind, selection_, selected_);
    if (!chosen) {
      if (chosen.error().code == errc::invalid_read_preference) {
        return failure(errc::invalid_read_preference,
                       "read preference " + describe(preference) +
                           " is invalid: mode primary takes no tag sets and no "
                           "maxStalenessSeconds, and maxStalenessSeconds must be at least 90 and "
                           "heartbeatFrequencyMS + 10 s");
      }
      return failure(chosen.error().code,
                     description_.compatibility_error.value_or("the deployment is incompatible"));
    }
    if (!selected_.in_window.empty()) {
      auto& counts = operation_counts_;
      counts.clear();
      for (const auto* s : selected_.in_window) {
        const auto p = servers_.find(s->address);
        if (p == servers_.end()) {
          counts.push_back(0);
        } else {
          const auto n = p->second.pool->count();
          counts.push_back(n.total - n.available - n.pending);
        }
      }
      const server_description* s = choose_server(selected_.in_window, counts, random_);
      const auto p = servers_.find(s->address);
      if (p != servers_.end()) {
        const auto rtt =
            p->second.monitor ? p->second.monitor->min_rtt() : std::chrono::microseconds(0);
        return selected_server{s->address, p->second.pool, s->type, description_.type, rtt};
      }
    }
    for (auto& [address, s] : servers_) {
      if (s.monitor) s.monitor->request_check();
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      return failure(errc::timeout, explain(preference, kind));
    }
  }
}

outcome<selected_server> topology::select_address(std::string_view address, bool mongos_only) {
  std::lock_guard lock(mutex_);
  if (closed_) return failure(errc::connection_failed, "the client is closed");
  const auto p = servers_.find(std::string(address));
  const auto* s = description_.find(std::string(address));
  const auto usable = [&] {
    if (mongos_only) return s->type == server_type::mongos;
    return s->type == server_type::mongos || s->type == server_type::standalone ||
           s->type == server_type::rs_primary || s->type == server_type::rs_secondary ||
           s->type == server_type::load_balancer;
  };
  if (p == servers_.end() || s == nullptr || !usable()) {
    return failure(
        errc::connection_failed,
        mongos_only
            ? "the mongos the transaction is pinned to (" + std::string(address) +
                  ") is no longer a mongos of the topology"
            : "server " + std::string(address) + " is no longer a usable server of the topology");
  }
  const auto rtt = p->second.monitor ? p->second.monitor->min_rtt() : std::chrono::microseconds(0);
  return selected_server{s->address, p->second.pool, s->type, description_.type, rtt};
}

std::string topology::explain(const read_preference& preference, operation_kind kind) const {
  std::string out = "no suitable server for ";
  out += kind == operation_kind::write ? "a write (a primary or mongos)"
                                       : "a read with read preference " + describe(preference);
  out += " within serverSelectionTimeoutMS (" + std::to_string(selection_timeout_.count()) +
         " ms); topology " + std::string(to_string(description_.type));
  if (description_.set_name) out += " (replica set " + *description_.set_name + ")";
  out += ", servers:";
  bool first = true;
  for (const auto& [address, s] : description_.servers) {
    out += first ? " " : "; ";
    first = false;
    out += address + " " + std::string(to_string(s.type));
    if (s.set_name) out += " set " + *s.set_name;
    if (s.round_trip_time_ms) {
      char rtt[32];
      std::snprintf(rtt, sizeof rtt, "%.1f", *s.round_trip_time_ms);
      out += " rtt " + std::string(rtt) + " ms";
    }
    if (s.error) out += " (last error: " + *s.error + ")";
  }
  if (first) out += " none";
  for (const auto& [address, why] : removed_) {
    if (!description_.find(address)) out += "; " + address + " " + why;
  }
  if (description_.ignored_hosts) out += "; " + *description_.ignored_hosts;
  return out;
}

void topology::close() {
  std::vector<std::shared_ptr<connection_pool>> closing;
  std::vector<std::unique_ptr<monitor>> stopping;
  std::vector<std::string> addresses;
  std::unique_ptr<srv_poller> poller;
  topology_description previous, unknown;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    // Closing changes the description to an Unknown one without servers (SDAM logging and
    // monitoring, "Closing Topology Description"), published before topologyClosedEvent.
    previous = description_;
    unknown.settings = previous.settings;
    description_ = unknown;
    poller = std::move(poller_);
    for (auto& [address, s] : servers_) {
      s.pool->close();
      addresses.push_back(address);
      closing.push_back(std::move(s.pool));
      if (s.monitor) stopping.push_back(std::move(s.monitor));
    }
    for (auto& m : retired_) stopping.push_back(std::move(m));
    for (auto& p : retired_pools_) closing.push_back(std::move(p));
    servers_.clear();
    retired_.clear();
    retired_pools_.clear();
    changed_.notify_all();
  }
  if (poller) poller->stop();
  for (auto& m : stopping) m->stop();
  for (auto& m : stopping) m->join();
  closing.clear();  // joins the pools' background threads, which may have waited for the lock
  std::lock_guard publish_lock(publish_mutex_);
  std::vector<sdam_event> events;
  for (const auto& a : addresses) events.emplace_back(server_closed_event{a});
  if (!(previous == unknown)) {
    events.emplace_back(
        topology_description_changed_event{std::move(previous), std::move(unknown)});
  }
  events.emplace_back(topology_closed_event{});
  publish(events);
}

}  // namespace oid::mongo::detail
