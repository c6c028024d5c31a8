// Server selection: suitable servers by topology type and read preference, the latency window,
// max staleness, and the choice within the window.
#include <algorithm>
#include <oid/mongo/server_selection.hpp>

namespace oid::mongo {

namespace {

using server_list = std::vector<const server_description*>;

bool matches(const server_description& s, const tag_set& set) {
  for (const auto& [name, value] : set) {
    const auto it = s.tags.find(name);
    if (it == s.tags.end() || it->second != value) return false;
  }
  return true;
}

// The servers of the first tag set that some server matches; all of them with no tag sets.
server_list filter_tags(const server_list& servers, const std::vector<tag_set>& sets) {
  if (sets.empty()) return servers;
  for (const auto& set : sets) {
    server_list out;
    for (const auto* s : servers) {
      if (matches(*s, set)) out.push_back(s);
    }
    if (!out.empty()) return out;
  }
  return {};
}

// Selection within one replica set, by read preference mode.
class replica_set_selector {
 public:
  replica_set_selector(const topology_description& t, const read_preference& p,
                       const selection_options& o, const server_list& candidates)
      : t_(t), p_(p), o_(o) {
    for (const auto* s : candidates) {
      if (s->type == server_type::rs_primary) primary_.push_back(s);
      if (s->type == server_type::rs_secondary) secondaries_.push_back(s);
    }
  }

  server_list write() const { return primary_; }

  server_list read() const {
    switch (p_.mode) {
    case read_mode::primary: return primary_;
    case read_mode::primary_preferred:
      return primary_.empty() ? filter_tags(fresh(secondaries_), p_.tag_sets) : primary_;
    case read_mode::secondary: return filter_tags(fresh(secondaries_), p_.tag_sets);
    case read_mode::secondary_preferred: {
      auto s = filter_tags(fresh(secondaries_), p_.tag_sets);
      return s.empty() ? primary_ : s;
    }
    case read_mode::nearest: {
      auto all = primary_;
      const auto s = fresh(secondaries_);
      all.insert(all.end(), s.begin(), s.end());
      return filter_tags(all, p_.tag_sets);
    }
    }
    return {};
  }

 private:
  // The secondaries not staler than maxStalenessSeconds.
  server_list fresh(const server_list& servers) const {
    if (!p_.max_staleness) return servers;
    const std::int64_t limit = std::chrono::milliseconds(*p_.max_staleness).count();
    server_list out;
    for (const auto* s : servers) {
      if (staleness_ms(t_, *s, o_.heartbeat_frequency) <= limit) out.push_back(s);
    }
    return out;
  }

  const topology_description& t_;
  const read_preference& p_;
  const selection_options& o_;
  server_list primary_, secondaries_;
};

server_list suitable(const topology_description& t, const read_preference& p, operation_kind kind,
                     const selection_options& o, const server_list& candidates) {
  server_list out;
  const auto of_type = [&](auto&& keep) {
    for (const auto* s : candidates) {
      if (keep(*s)) out.push_back(s);
    }
    return out;
  };
  switch (t.type) {
  case topology_type::unknown: return {};
  case topology_type::single:
    return of_type([](const server_description& s) { return s.is_known(); });
  case topology_type::load_balanced:
    return of_type(
        [](const server_description& s) { return s.type == server_type::load_balancer; });
  case topology_type::sharded:
    return of_type([](const server_description& s) { return s.type == server_type::mongos; });
  case topology_type::replica_set_no_primary:
  case topology_type::replica_set_with_primary: {
    const replica_set_selector rs(t, p, o, candidates);
    return kind == operation_kind::write ? rs.write() : rs.read();
  }
  }
  return {};
}

}  // namespace

std::int64_t staleness_ms(const topology_description& topology, const server_description& server,
                          std::chrono::milliseconds heartbeat_frequency) {
  if (!server.last_write_date) return 0;
  const std::int64_t heartbeat = heartbeat_frequency.count();
  for (const auto& [address, p] : topology.servers) {
    if (p.type != server_type::rs_primary || !p.last_write_date) continue;
    return (server.last_update_time_ms - *server.last_write_date) -
           (p.last_update_time_ms - *p.last_write_date) + heartbeat;
  }
  std::optional<std::int64_t> newest;
  for (const auto& [address, s] : topology.servers) {
    if (s.type == server_type::rs_secondary && s.last_write_date) {
      newest = std::max(newest.value_or(*s.last_write_date), *s.last_write_date);
    }
  }
  return newest.value_or(*server.last_write_date) - *server.last_write_date + heartbeat;
}

result<selection> select_servers(const topology_description& topology,
                                 const read_preference& preference, operation_kind kind,
                                 const selection_options& options) {
  if (!topology.compatible) return oid::error{errc::unsupported, 0};
  const bool replica_set = topology.type == topology_type::replica_set_no_primary ||
                           topology.type == topology_type::replica_set_with_primary;
  if (replica_set && kind == operation_kind::read) {
    if (auto valid = preference.validate(options.heartbeat_frequency); !valid) return valid.error();
  }
  server_list all, preferred;
  for (const auto& [address, s] : topology.servers) {
    all.push_back(&s);
    if (std::find(options.deprioritized.begin(), options.deprioritized.end(), address) ==
        options.deprioritized.end()) {
      preferred.push_back(&s);
    }
  }
  selection out;
  out.suitable = suitable(topology, preference, kind, options, preferred);
  // Deprioritized servers are used only when nothing else is suitable.
  if (out.suitable.empty() && preferred.size() != all.size()) {
    out.suitable = suitable(topology, preference, kind, options, all);
  }
  std::sort(out.suitable.begin(), out.suitable.end(),
            [](const auto* a, const auto* b) { return a->address < b->address; });
  if (out.suitable.empty()) return out;
  double fastest = out.suitable.front()->round_trip_time_ms.value_or(0);
  for (const auto* s : out.suitable) fastest = std::min(fastest, s->round_trip_time_ms.value_or(0));
  const double limit = fastest + static_cast<double>(options.local_threshold.count());
  for (const auto* s : out.suitable) {
    if (s->round_trip_time_ms.value_or(0) <= limit) out.in_window.push_back(s);
  }
  return out;
}

const server_description* choose_server(std::span<const server_description* const> window,
                                        std::span<const std::uint64_t> operation_counts,
                                        std::mt19937_64& random) {
  if (window.empty()) return nullptr;
  if (window.size() == 1) return window[0];
  std::uniform_int_distribution<std::size_t> pick(0, window.size() - 1);
  const std::size_t a = pick(random);
  std::size_t b = pick(random);
  while (b == a) b = pick(random);
  return operation_counts[b] < operation_counts[a] ? window[b] : window[a];
}

}  // namespace oid::mongo
