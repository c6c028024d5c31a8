// The SDAM state machine: a new server description in, the next topology description out, by
// the specification's table of topology types and server types ("Updating the
// TopologyDescription"). Each rule is one function named as the specification names it.
#include "mongo/sdam/sdam.hpp"

#include <algorithm>
#include <utility>

namespace oid::mongo {

namespace {

// The events that lead from `before` to `after`, in the monitoring specification's order: the
// change of the server whose description was applied (other servers' changes, such as a member
// named PossiblePrimary or an old primary invalidated, are part of the topology's change only),
// the servers opened and closed, then the topology's change.
std::vector<sdam_event> events_between(const topology_description& before,
                                       const topology_description& after,
                                       std::string_view applied) {
  std::vector<sdam_event> events;
  const auto b = before.servers.find(applied);
  const auto a = after.servers.find(applied);
  if (b != before.servers.end() && a != after.servers.end() && !(b->second == a->second)) {
    events.emplace_back(server_description_changed_event{a->first, b->second, a->second});
  }
  for (const auto& [address, server] : after.servers) {
    if (!before.servers.contains(address)) events.emplace_back(server_opening_event{address});
  }
  for (const auto& [address, server] : before.servers) {
    if (!after.servers.contains(address)) events.emplace_back(server_closed_event{address});
  }
  if (!(before == after)) events.emplace_back(topology_description_changed_event{before, after});
  return events;
}

// Records in `t` that `ignored` hosts `who` listed were left out under max_servers, or that none
// were.
void note_ignored(topology_description& t, std::size_t ignored, std::string_view who) {
  if (ignored == 0) {
    t.ignored_hosts.reset();
    return;
  }
  t.ignored_hosts = std::string(who) + " " + std::to_string(ignored) +
                    " more hosts than the topology has room for: they are ignored (oid monitors "
                    "at most " +
                    std::to_string(max_servers) + " servers)";
}

// One update of a topology description, as the specification's pseudocode writes it.
class updater {
 public:
  explicit updater(topology_description t) : t_(std::move(t)) {}

  void apply(server_description d) {
    // A load balancer is not checked, and no answer or error changes what it is.
    if (t_.type == topology_type::load_balanced) return;
    const auto it = t_.servers.find(d.address);
    if (it == t_.servers.end()) return;  // a reply from a server removed meanwhile
    if (is_older(d.topology_version, it->second.topology_version)) return;
    if (t_.type == topology_type::single && t_.settings.replica_set && d.is_known() &&
        d.set_name != t_.settings.replica_set) {
      d = server_description::unknown(d.address, "replica set name \"" + d.set_name.value_or("") +
                                                     "\" is not the required \"" +
                                                     *t_.settings.replica_set + "\"");
    }
    it->second = d;
    switch (t_.type) {
    case topology_type::single:
    case topology_type::load_balanced: break;
    case topology_type::unknown: update_unknown(d); break;
    case topology_type::sharded:
      if (d.type != server_type::unknown && d.type != server_type::mongos) remove(d.address);
      break;
    case topology_type::replica_set_no_primary: update_no_primary(d); break;
    case topology_type::replica_set_with_primary: update_with_primary(d); break;
    }
    finish();
  }

  topology_description take() && { return std::move(t_); }

 private:
  void update_unknown(const server_description& d) {
    switch (d.type) {
    case server_type::standalone: update_unknown_with_standalone(d); break;
    case server_type::mongos: t_.type = topology_type::sharded; break;
    case server_type::rs_primary:
      t_.type = topology_type::replica_set_with_primary;
      update_rs_from_primary(d);
      break;
    case server_type::rs_secondary:
    case server_type::rs_arbiter:
    case server_type::rs_other:
      t_.type = topology_type::replica_set_no_primary;
      update_rs_without_primary(d);
      break;
    default: break;
    }
  }

  void update_no_primary(const server_description& d) {
    switch (d.type) {
    case server_type::standalone:
    case server_type::mongos: remove(d.address); break;
    case server_type::rs_primary: update_rs_from_primary(d); break;
    case server_type::rs_secondary:
    case server_type::rs_arbiter:
    case server_type::rs_other: update_rs_without_primary(d); break;
    default: break;
    }
  }

  void update_with_primary(const server_description& d) {
    switch (d.type) {
    case server_type::standalone:
    case server_type::mongos:
      remove(d.address);
      check_if_has_primary();
      break;
    case server_type::rs_primary: update_rs_from_primary(d); break;
    case server_type::rs_secondary:
    case server_type::rs_arbiter:
    case server_type::rs_other: update_rs_with_primary_from_member(d); break;
    default: check_if_has_primary(); break;
    }
  }

  void update_unknown_with_standalone(const server_description& d) {
    if (t_.settings.seeds.size() == 1) {
      t_.type = topology_type::single;
    } else {
      remove(d.address);
    }
  }

  void update_rs_without_primary(const server_description& d) {
    if (!t_.set_name) {
      t_.set_name = d.set_name;
    } else if (t_.set_name != d.set_name) {
      remove(d.address);
      return;
    }
    add_members(d);
    if (d.primary) mark_possible_primary(*d.primary);
    if (d.me && *d.me != d.address) remove(d.address);
  }

  void update_rs_with_primary_from_member(const server_description& d) {
    if (t_.set_name != d.set_name || (d.me && *d.me != d.address)) {
      remove(d.address);
      check_if_has_primary();
      return;
    }
    if (!t_.has_primary()) {
      t_.type = topology_type::replica_set_no_primary;
      if (d.primary) mark_possible_primary(*d.primary);
    }
  }

  void update_rs_from_primary(const server_description& d) {
    if (!t_.set_name) {
      t_.set_name = d.set_name;
    } else if (t_.set_name != d.set_name) {
      remove(d.address);
      check_if_has_primary();
      return;
    }
    if (!newest_primary(d)) {
      t_.servers[d.address] = server_description::unknown(
          d.address, "primary marked stale due to electionId/setVersion mismatch");
      check_if_has_primary();
      return;
    }
    for (auto& [address, server] : t_.servers) {
      if (address != d.address && server.type == server_type::rs_primary) {
        server = server_description::unknown(
            address, "primary marked stale due to discovery of newer primary");
      }
    }
    // Removing the servers the primary does not list before adding those it does (the
    // specification adds first; the result is the same) leaves room under max_servers for them.
    std::vector<std::string> gone;
    for (const auto& [address, server] : t_.servers) {
      if (!lists(d, address)) gone.push_back(address);
    }
    for (const auto& address : gone) remove(address);
    add_members(d);
    check_if_has_primary();
  }

  // Whether the primary `d` is at least as new as every primary seen before, updating the
  // newest (electionId, setVersion) when it is. From 6.0 (wire version 17) the electionId comes
  // first; before, the setVersion did. An unset value is older than any set one.
  bool newest_primary(const server_description& d) {
    if (d.max_wire_version >= 17) {
      const bool newer =
          d.election_id > t_.max_election_id ||
          (d.election_id == t_.max_election_id && d.set_version >= t_.max_set_version);
      if (!newer) return false;
      t_.max_election_id = d.election_id;
      t_.max_set_version = d.set_version;
      return true;
    }
    if (d.set_version && d.election_id) {
      if (t_.max_set_version && t_.max_election_id &&
          (*t_.max_set_version > *d.set_version ||
           (*t_.max_set_version == *d.set_version && *t_.max_election_id > *d.election_id))) {
        return false;
      }
      t_.max_election_id = d.election_id;
    }
    if (d.set_version && (!t_.max_set_version || *d.set_version > *t_.max_set_version)) {
      t_.max_set_version = d.set_version;
    }
    return true;
  }

  static bool lists(const server_description& d, const std::string& address) {
    const auto in = [&](const std::vector<std::string>& v) {
      return std::find(v.begin(), v.end(), address) != v.end();
    };
    return in(d.hosts) || in(d.passives) || in(d.arbiters);
  }

  void add_members(const server_description& d) {
    std::size_t ignored = d.dropped_members;
    for (const auto* list : {&d.hosts, &d.passives, &d.arbiters}) {
      for (const auto& address : *list) {
        if (t_.servers.contains(address)) continue;
        if (t_.servers.size() >= max_servers) {
          ++ignored;
          continue;
        }
        t_.servers.emplace(address, server_description::unknown(address));
        t_.pool_generations.emplace(address, 0);
      }
    }
    note_ignored(t_, ignored, d.address + " listed");
  }

  void mark_possible_primary(const std::string& address) {
    const auto it = t_.servers.find(address);
    if (it != t_.servers.end() && it->second.type == server_type::unknown) {
      it->second.type = server_type::possible_primary;
    }
  }

  void remove(const std::string& address) {
    t_.servers.erase(address);
    t_.pool_generations.erase(address);
  }

  void check_if_has_primary() {
    t_.type = t_.has_primary() ? topology_type::replica_set_with_primary
                               : topology_type::replica_set_no_primary;
  }

  // What every update ends with: wire version compatibility and the session timeout.
  void finish() {
    t_.compatible = true;
    t_.compatibility_error.reset();
    for (const auto& [address, server] : t_.servers) {
      if (!server.is_known()) continue;
      if (auto problem = wire_version_problem(address, server)) {
        t_.compatible = false;
        t_.compatibility_error = std::move(problem);
        break;
      }
    }
    std::optional<std::int64_t> timeout;
    bool first = true;
    for (const auto& [address, server] : t_.servers) {
      if (!server.is_data_bearing()) continue;
      if (!server.logical_session_timeout_minutes) {
        timeout.reset();
        break;
      }
      timeout = first ? *server.logical_session_timeout_minutes
                      : std::min(*timeout, *server.logical_session_timeout_minutes);
      first = false;
    }
    t_.logical_session_timeout_minutes = timeout;
  }

  topology_description t_;
};

}  // namespace

std::optional<std::string> wire_version_problem(std::string_view address,
                                                const server_description& server) {
  const std::string where = "server at " + std::string(address);
  if (server.min_wire_version > server.max_wire_version) {
    return where + " reports minWireVersion " + std::to_string(server.min_wire_version) +
           " above its maxWireVersion " + std::to_string(server.max_wire_version);
  }
  if (server.min_wire_version > max_supported_wire_version) {
    return where + " requires wire version " + std::to_string(server.min_wire_version) +
           ", but oid supports only up to " + std::to_string(max_supported_wire_version);
  }
  if (server.max_wire_version < min_supported_wire_version) {
    return where + " reports wire version " + std::to_string(server.max_wire_version) +
           ", but oid requires at least " + std::to_string(min_supported_wire_version) +
           " (MongoDB 3.6)";
  }
  return std::nullopt;
}

topology_update open_topology(const topology_settings& settings) {
  topology_description t;
  t.settings = settings;
  if (settings.load_balanced) {
    t.type = topology_type::load_balanced;
  } else if (settings.direct_connection.value_or(false)) {
    t.type = topology_type::single;
  } else if (settings.replica_set) {
    t.type = topology_type::replica_set_no_primary;
  }
  t.set_name = settings.replica_set;
  std::size_t ignored = 0;
  for (const auto& seed : settings.seeds) {
    const std::string address = normalize_address(seed);
    if (t.servers.size() >= max_servers && !t.servers.contains(address)) {
      ++ignored;
      continue;
    }
    t.servers.emplace(address, server_description::unknown(address));
    t.pool_generations.emplace(address, 0);
  }
  note_ignored(t, ignored, "the connection string listed");
  // The specification publishes the new topology first and then opens its servers.
  topology_update u;
  topology_description empty;
  empty.settings = settings;
  u.events.emplace_back(topology_opening_event{});
  u.events.emplace_back(topology_description_changed_event{empty, t});
  for (const auto& [address, server] : t.servers)
    u.events.emplace_back(server_opening_event{address});
  if (settings.load_balanced && !t.servers.empty()) {
    // A load balancer is never checked: its one server is known from the start.
    topology_description next = t;
    for (auto& [address, server] : next.servers) server.type = server_type::load_balancer;
    auto known = events_between(t, next, next.servers.begin()->first);
    u.events.insert(u.events.end(), known.begin(), known.end());
    t = std::move(next);
  }
  u.description = std::move(t);
  return u;
}

topology_update apply_server_description(const topology_description& current,
                                         server_description description) {
  updater up(current);
  const std::string address = description.address;
  up.apply(std::move(description));
  topology_update u;
  u.description = std::move(up).take();
  u.events = events_between(current, u.description, address);
  return u;
}

topology_update apply_hello(const topology_description& current, std::string_view address,
                            bson::document_view reply, double rtt_ms, std::int64_t now_ms) {
  auto d = server_description::from_hello(address, reply, rtt_ms, now_ms);
  if (d.round_trip_time_ms) {
    const auto* before = current.find(d.address);
    d.round_trip_time_ms =
        average_rtt(before ? before->round_trip_time_ms : std::nullopt, *d.round_trip_time_ms);
  }
  return apply_server_description(current, std::move(d));
}

topology_update apply_check_failure(const topology_description& current, std::string_view address,
                                    std::string_view error) {
  const std::string a = normalize_address(address);
  if (!current.servers.contains(a)) return {current, {}, {}, {}};
  topology_update u =
      apply_server_description(current, server_description::unknown(a, std::string(error)));
  if (auto it = u.description.pool_generations.find(a);
      it != u.description.pool_generations.end()) {
    ++it->second;
    u.cleared_pools.push_back(a);
  }
  return u;
}

topology_update apply_srv_hosts(const topology_description& current,
                                const std::vector<std::string>& addresses) {
  if (current.type != topology_type::sharded && current.type != topology_type::unknown) {
    return {current, {}, {}, {}};
  }
  // The first max_servers distinct addresses (the rescan puts the servers kept first).
  std::vector<std::string> wanted;
  std::size_t ignored = 0;
  for (const auto& a : addresses) {
    std::string n = normalize_address(a);
    if (std::find(wanted.begin(), wanted.end(), n) != wanted.end()) continue;
    if (wanted.size() >= max_servers) {
      ++ignored;
      continue;
    }
    wanted.push_back(std::move(n));
  }
  if (wanted.empty()) return {current, {}, {}, {}};  // never all removed: DNS said nothing
  topology_description next = current;
  note_ignored(next, ignored, "the SRV records listed");
  std::erase_if(next.servers, [&](const auto& server) {
    return std::find(wanted.begin(), wanted.end(), server.first) == wanted.end();
  });
  std::erase_if(next.pool_generations, [&](const auto& pool) {
    return std::find(wanted.begin(), wanted.end(), pool.first) == wanted.end();
  });
  for (const auto& a : wanted) {
    if (next.servers.contains(a)) continue;  // unchanged servers keep their description
    next.servers.emplace(a, server_description::unknown(a));
    next.pool_generations.emplace(a, 0);
  }
  topology_update u;
  u.events = events_between(current, next, "");
  u.description = std::move(next);
  return u;
}

}  // namespace oid::mongo
