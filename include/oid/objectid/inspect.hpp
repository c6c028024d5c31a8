// oid/objectid/inspect.hpp: what an ObjectId says about itself.
//
// Kept off `object_id` on purpose: the specification forbids accessors for the random value and the
// counter on the id type, because neither means anything to an application. A person debugging
// data still wants to read them, and bytes 4-8 have two readings depending on who made the id.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <oid/objectid/object_id.hpp>
#include <string>

namespace oid {

/// Every field an ObjectId carries, in both layouts.
struct object_id_description {
  object_id id;
  std::uint32_t timestamp = 0;                   ///< bytes 0-3: Unix seconds, unsigned
  std::chrono::sys_seconds time{};               ///< the same as a time point
  std::uint32_t counter = 0;                     ///< bytes 9-11, big-endian
  std::array<std::uint8_t, 5> random{};          ///< bytes 4-8 read as the modern random value
  std::array<std::uint8_t, 3> legacy_machine{};  ///< bytes 4-6 read as a legacy machine id
  std::uint16_t legacy_pid = 0;                  ///< bytes 7-8 read as a legacy pid, big-endian
};

/// Describes `id`. Every id has a description; nothing is validated.
object_id_description inspect(const object_id& id) noexcept;

/// The description as one line of JSON:
/// `{"id":"…","time":"2011-06-11T03:11:40Z","timestamp":1307761900,"counter":11057175,
///   "random":"2cdcd20936","legacy":{"machine":"2cdcd2","pid":2358}}`.
std::string to_json(const object_id_description& d);

}  // namespace oid
