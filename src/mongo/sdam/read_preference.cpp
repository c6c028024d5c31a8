// Read preference names, validation and the `$readPreference` field.
#include <oid/bson/builder.hpp>
#include <oid/mongo/error.hpp>
#include <oid/mongo/read_preference.hpp>

#include "detail/ascii.hpp"

namespace oid::mongo {

namespace {

constexpr read_mode all_modes[] = {read_mode::primary, read_mode::primary_preferred,
                                   read_mode::secondary, read_mode::secondary_preferred,
                                   read_mode::nearest};

}  // namespace

std::string_view to_string(read_mode m) noexcept {
  switch (m) {
  case read_mode::primary: return "primary";
  case read_mode::primary_preferred: return "primaryPreferred";
  case read_mode::secondary: return "secondary";
  case read_mode::secondary_preferred: return "secondaryPreferred";
  case read_mode::nearest: return "nearest";
  }
  return "primary";
}

result<read_mode> read_mode_from_string(std::string_view name) {
  for (const read_mode m : all_modes) {
    if (oid::detail::equal_ignoring_ascii_case(name, to_string(m))) return m;
  }
  return oid::error{mongo::errc::invalid_read_preference, 0};
}

result<void> read_preference::validate(std::chrono::milliseconds heartbeat_frequency) const {
  if (mode == read_mode::primary) {
    if (max_staleness) return oid::error{mongo::errc::invalid_read_preference, 0};
    for (const auto& set : tag_sets) {
      if (!set.empty()) return oid::error{mongo::errc::invalid_read_preference, 0};
    }
  }
  if (max_staleness && (*max_staleness < min_max_staleness ||
                        *max_staleness < heartbeat_frequency + idle_write_period)) {
    return oid::error{mongo::errc::invalid_read_preference, 0};
  }
  return {};
}

std::optional<bson::document> read_preference::to_command_field(topology_type topology,
                                                                server_type server) const {
  const bool router = server == server_type::mongos || server == server_type::load_balancer ||
                      topology == topology_type::sharded ||
                      topology == topology_type::load_balanced;
  // The server selection specification, "Topology type: Single": a Standalone gets no read
  // preference at all.
  if (topology == topology_type::single && server == server_type::standalone) return std::nullopt;
  // Primary reads of a replica set or a router carry none: checked before the builder, which
  // allocates.
  if (mode == read_mode::primary && (router || topology != topology_type::single)) {
    return std::nullopt;
  }
  bson::builder b;
  if (mode == read_mode::primary) {
    // A server used directly may be a secondary: primaryPreferred lets it answer.
    b.append_string("mode", to_string(read_mode::primary_preferred));
    return std::move(b).extract();
  }
  b.append_string("mode", to_string(mode));
  bool any_tags = false;
  for (const auto& set : tag_sets) any_tags = any_tags || !set.empty();
  if (any_tags) {
    b.open_array("tags");
    std::size_t i = 0;
    for (const auto& set : tag_sets) {
      b.open_document(std::to_string(i++));
      for (const auto& [name, value] : set) b.append_string(name, value);
      b.close();
    }
    b.close();
  }
  if (max_staleness) b.append_int64("maxStalenessSeconds", max_staleness->count());
  return std::move(b).extract();
}

}  // namespace oid::mongo
