// oid/mongo/read_preference.hpp: which members of a deployment a read may use.
//
// A `read_preference` is a mode (primary, primaryPreferred, secondary, secondaryPreferred,
// nearest), tag sets that narrow the members by their configured tags, and an optional
// maxStalenessSeconds that excludes secondaries too far behind the primary, as the Server
// Selection and Max Staleness specifications define them. `oid/mongo/server_selection.hpp` applies
// it; `to_command_field` gives the `$readPreference` a command carries.
#pragma once

#include <chrono>
#include <oid/bson/document.hpp>
#include <oid/mongo/error.hpp>
#include <oid/mongo/server_description.hpp>
#include <oid/mongo/topology_description.hpp>
#include <oid/result.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::mongo {

/// Which kinds of member a read may use.
enum class read_mode {
  primary,              ///< the primary only (the default)
  primary_preferred,    ///< the primary, or a secondary when there is none
  secondary,            ///< secondaries only
  secondary_preferred,  ///< secondaries, or the primary when there is none
  nearest,              ///< any member within the latency window
};

/// The name of `m` as connection strings and `$readPreference` write it: "primary",
/// "primaryPreferred", "secondary", "secondaryPreferred", "nearest".
std::string_view to_string(read_mode m) noexcept;

/// The mode named `name`, in any case ("secondaryPreferred", "SecondaryPreferred").
/// Errors: invalid_read_preference.
result<read_mode> read_mode_from_string(std::string_view name);

/// Tags a member must all carry (name, value), in the order given. The empty set matches any
/// member.
using tag_set = std::vector<std::pair<std::string, std::string>>;

/// The smallest maxStalenessSeconds a read preference may have: 90 seconds.
inline constexpr std::chrono::seconds min_max_staleness{90};
/// How often an idle primary writes (MongoDB's default periodic no-op): added to the heartbeat
/// frequency to make the smallest usable maxStalenessSeconds.
inline constexpr std::chrono::seconds idle_write_period{10};

/// A read preference.
struct read_preference {
  read_mode mode = read_mode::primary;
  /// Tried in order: the first set some eligible member matches wins. Empty: no tag filtering.
  std::vector<tag_set> tag_sets;
  /// Secondaries estimated further behind than this are not used. Unset: no limit.
  std::optional<std::chrono::seconds> max_staleness;

  /// Checks the combination: mode primary takes no tag sets and no max staleness, and a max
  /// staleness must be at least 90 seconds and at least `heartbeat_frequency` plus 10 seconds.
  /// Errors: invalid_read_preference.
  result<void> validate(std::chrono::milliseconds heartbeat_frequency) const;

  /// The `$readPreference` a command sent to `server` (of a deployment of type `topology`)
  /// carries, or nothing. With OP_MSG: nothing to a Standalone used directly (Single); nothing
  /// for mode primary, except to a server used directly that is not a mongos or load balancer
  /// (a replica set member, or not known yet), which gets `{mode: "primaryPreferred"}` so that a
  /// secondary answers; otherwise the mode, its tag sets and maxStalenessSeconds.
  std::optional<bson::document> to_command_field(topology_type topology, server_type server) const;

  friend bool operator==(const read_preference&, const read_preference&) = default;
};

}  // namespace oid::mongo
