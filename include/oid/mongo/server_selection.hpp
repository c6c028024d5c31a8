// oid/mongo/server_selection.hpp: choosing the server an operation goes to, as pure functions.
//
// `select_servers` takes a topology description, a read preference and the kind of operation and
// returns the suitable servers and, among them, those within the latency window (the fastest
// round trip time plus localThresholdMS), as the Server Selection and Max Staleness
// specifications define them. `choose_server` then picks one of the window by "power of two
// random choices" over the servers' operation counts. The caller retries while nothing is
// suitable, up to serverSelectionTimeoutMS, rechecking the servers in between.
//
//     auto s = oid::mongo::select_servers(topology, {.mode = read_mode::nearest},
//                                         operation_kind::read);
//     if (s && !s->in_window.empty()) { /* run it on one of s->in_window */ }
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/mongo/error.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/server_description.hpp>
#include <oid/mongo/topology_description.hpp>
#include <oid/result.hpp>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace oid::mongo {

/// Whether an operation reads (the read preference applies) or writes (the primary or a mongos).
enum class operation_kind { read, write };

/// The settings selection uses besides the read preference.
struct selection_options {
  /// How much slower than the fastest suitable server a server may be and still be chosen.
  std::chrono::milliseconds local_threshold{15};
  /// How often monitors check servers (the staleness estimate adds it).
  std::chrono::milliseconds heartbeat_frequency{10000};
  /// Servers to avoid unless nothing else is suitable ("host:port", lower case): those an
  /// earlier attempt of the same operation failed on.
  std::vector<std::string> deprioritized;
};

/// The outcome of one selection. Pointers into the topology description given, ordered by
/// address; valid as long as it is.
struct selection {
  std::vector<const server_description*> suitable;
  std::vector<const server_description*> in_window;
};

/// The servers of `topology` suitable for an operation of kind `kind` under `preference`, and
/// those of them within the latency window. Empty lists mean "nothing suitable now": the caller
/// waits for the next checks and retries. Errors: invalid_read_preference when the read
/// preference is invalid for a replica set (`read_preference::validate`), unsupported when the
/// topology is not compatible (`topology_description::compatibility_error` says why).
result<selection> select_servers(const topology_description& topology,
                                 const read_preference& preference, operation_kind kind,
                                 const selection_options& options = {});

/// The same, into `out` (its lists cleared first, their capacity kept): a caller that selects
/// for every operation and keeps one `selection` allocates nothing once its lists have grown.
/// On an error `out`'s lists are empty.
result<void> select_servers(const topology_description& topology, const read_preference& preference,
                            operation_kind kind, const selection_options& options, selection& out);

/// The estimated staleness of `server`, a secondary of `topology`, in milliseconds: how far its
/// last write is behind the primary's (or, with no primary, the freshest secondary's) plus
/// `heartbeat_frequency`. 0 for a server without a lastWriteDate.
std::int64_t staleness_ms(const topology_description& topology, const server_description& server,
                          std::chrono::milliseconds heartbeat_frequency);

/// One server of `window` for an operation: two distinct servers picked at random, the one with
/// fewer operations in progress (`operation_counts[i]` belongs to `window[i]`) wins. Null when
/// `window` is empty. Precondition: `operation_counts.size() == window.size()`.
const server_description* choose_server(std::span<const server_description* const> window,
                                        std::span<const std::uint64_t> operation_counts,
                                        std::mt19937_64& random);

}  // namespace oid::mongo
