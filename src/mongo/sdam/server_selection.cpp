// Server selection: suitable servers by topology type and read preference, the latency window,
// max staleness, and the choice within the window.
#include <algorithm>
#include <functional>
#include <oid/mongo/error.hpp>
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

// One selection's lists are built in place in the caller's vectors (allocation-free once they
// have grown): each step appends to or filters `out`.
class selector {
 public:
  selector(const topology_description& t, const read_preference& p, const selection_options& o,
           bool with_deprioritized, server_list& out)
      : t_(t), p_(p), o_(o), with_deprioritized_(with_deprioritized), out_(out) {}

  void suitable(operation_kind kind) {
    switch (t_.type) {
    case topology_type::unknown: return;
    case topology_type::single:
      return append_if([](const server_description& s) { return s.is_known(); });
    case topology_type::load_balanced: return append_type(server_type::load_balancer);
    case topology_type::sharded: return append_type(server_type::mongos);
    case topology_type::replica_set_no_primary:
    case topology_type::replica_set_with_primary:
      return kind == operation_kind::write ? append_type(server_type::rs_primary) : read();
    }
  }

 private:
  // Selection within one replica set, by read preference mode.
  void read() {
    switch (p_.mode) {
    case read_mode::primary: return append_type(server_type::rs_primary);
    case read_mode::primary_preferred:
      append_type(server_type::rs_primary);
      if (out_.empty()) append_tagged_fresh_secondaries();
      return;
    case read_mode::secondary: return append_tagged_fresh_secondaries();
    case read_mode::secondary_preferred:
      append_tagged_fresh_secondaries();
      if (out_.empty()) append_type(server_type::rs_primary);
      return;
    case read_mode::nearest:
      append_type(server_type::rs_primary);
      append_fresh_secondaries();
      keep_first_tag_set(0);
      return;
    }
  }

  bool deprioritized(const std::string& address) const {
    return std::find(o_.deprioritized.begin(), o_.deprioritized.end(), address) !=
           o_.deprioritized.end();
  }

  // Appends the candidates (every server, or those not deprioritized) that `keep` accepts.
  template <class Keep>
  void append_if(Keep&& keep) {
    for (const auto& [address, s] : t_.servers) {
      if ((with_deprioritized_ || !deprioritized(address)) && keep(s)) out_.push_back(&s);
    }
  }

  void append_type(server_type type) {
    append_if([type](const server_description& s) { return s.type == type; });
  }

  // The secondaries not staler than maxStalenessSeconds.
  void append_fresh_secondaries() {
    if (!p_.max_staleness) return append_type(server_type::rs_secondary);
    const std::int64_t limit = std::chrono::milliseconds(*p_.max_staleness).count();
    append_if([&](const server_description& s) {
      return s.type == server_type::rs_secondary &&
             staleness_ms(t_, s, o_.heartbeat_frequency) <= limit;
    });
  }

  void append_tagged_fresh_secondaries() {
    const std::size_t from = out_.size();
    append_fresh_secondaries();
    keep_first_tag_set(from);
  }

  // Keeps, of the servers from index `from` on, those of the first tag set that some of them
  // match; all of them with no tag sets, none when no set matches.
  void keep_first_tag_set(std::size_t from) {
    if (p_.tag_sets.empty()) return;
    const auto first = out_.begin() + static_cast<std::ptrdiff_t>(from);
    for (const auto& set : p_.tag_sets) {
      const auto in_set = [&set](const server_description* s) { return matches(*s, set); };
      if (std::any_of(first, out_.end(), in_set)) {
        out_.erase(std::remove_if(first, out_.end(), std::not_fn(in_set)), out_.end());
        return;
      }
    }
    out_.erase(first, out_.end());
  }

  const topology_description& t_;
  const read_preference& p_;
  const selection_options& o_;
  const bool with_deprioritized_;
  server_list& out_;
};

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
  selection out;
  if (auto r = select_servers(topology, preference, kind, options, out); !r) return r.error();
  return out;
}

result<void> select_servers(const topology_description& topology, const read_preference& preference,
                            operation_kind kind, const selection_options& options, selection& out) {
  out.suitable.clear();
  out.in_window.clear();
  if (!topology.compatible) return oid::error{mongo::errc::unsupported, 0};
  const bool replica_set = topology.type == topology_type::replica_set_no_primary ||
                           topology.type == topology_type::replica_set_with_primary;
  if (replica_set && kind == operation_kind::read) {
    if (auto valid = preference.validate(options.heartbeat_frequency); !valid) return valid.error();
  }
  selector(topology, preference, options, false, out.suitable).suitable(kind);
  // Deprioritized servers are used only when nothing else is suitable.
  if (out.suitable.empty() && !options.deprioritized.empty()) {
    selector(topology, preference, options, true, out.suitable).suitable(kind);
  }
  std::sort(out.suitable.begin(), out.suitable.end(),
            [](const auto* a, const auto* b) { return a->address < b->address; });
  if (out.suitable.empty()) return {};
  double fastest = out.suitable.front()->round_trip_time_ms.value_or(0);
  for (const auto* s : out.suitable) fastest = std::min(fastest, s->round_trip_time_ms.value_or(0));
  const double limit = fastest + static_cast<double>(options.local_threshold.count());
  for (const auto* s : out.suitable) {
    if (s->round_trip_time_ms.value_or(0) <= limit) out.in_window.push_back(s);
  }
  return {};
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
