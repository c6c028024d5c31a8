#include <oid/objectid/inspect.hpp>
#include <oid/objectid/time.hpp>

#include "detail/hex.hpp"

namespace oid {

object_id_description inspect(const object_id& id) noexcept {
  const auto& b = id.bytes();
  object_id_description d;
  d.id = id;
  d.timestamp = id.timestamp();
  d.time = id.time();
  d.counter = std::uint32_t{b[9]} << 16 | std::uint32_t{b[10]} << 8 | b[11];
  for (int i = 0; i < 5; ++i) d.random[i] = b[4 + i];
  for (int i = 0; i < 3; ++i) d.legacy_machine[i] = b[4 + i];
  d.legacy_pid = static_cast<std::uint16_t>(b[7] << 8 | b[8]);
  return d;
}

namespace {
template <std::size_t N>
void append_hex(std::string& out, const std::array<std::uint8_t, N>& bytes) {
  for (auto v : bytes) out.append(&detail::hex_pairs[2 * std::size_t{v}], 2);
}
}  // namespace

std::string to_json(const object_id_description& d) {
  std::string out;
  out.reserve(160);
  out += R"({"id":")";
  out += d.id.to_hex();
  out += R"(","time":")";
  out += format_time(d.time);
  out += R"(","timestamp":)";
  out += std::to_string(d.timestamp);
  out += R"(,"counter":)";
  out += std::to_string(d.counter);
  out += R"(,"random":")";
  append_hex(out, d.random);
  out += R"(","legacy":{"machine":")";
  append_hex(out, d.legacy_machine);
  out += R"(","pid":)";
  out += std::to_string(d.legacy_pid);
  out += "}}";
  return out;
}

}  // namespace oid
