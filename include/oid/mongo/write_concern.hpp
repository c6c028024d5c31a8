// oid/mongo/write_concern.hpp: how much acknowledgement a write waits for.
//
// The default (no field set) sends no writeConcern, so the server applies its own default (w: 1
// on a standalone server: acknowledged once applied). `w = 0` is fire-and-forget: oid sends the
// write with OP_MSG's moreToCome flag and reads no reply, so it learns nothing about the result,
// not even a duplicate key.
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <optional>
#include <string>

namespace oid::mongo {

/// The `writeConcern` of a write command.
struct write_concern {
  /// How many servers must apply the write before it is acknowledged (0: no acknowledgement).
  std::optional<std::int32_t> w;
  /// A named `w` instead of a number, e.g. "majority". Ignored when `w` is set.
  std::optional<std::string> w_tag;
  /// Wait for the write to reach the on-disk journal.
  std::optional<bool> journal;
  /// How long the server may wait to satisfy `w`.
  std::optional<std::chrono::milliseconds> timeout;

  /// The fire-and-forget concern: `{w: 0}`.
  static write_concern unacknowledged() {
    write_concern c;
    c.w = 0;
    return c;
  }
  /// The acknowledged default, written out: `{w: 1}`.
  static write_concern acknowledged() {
    write_concern c;
    c.w = 1;
    return c;
  }
  /// True unless this is `w: 0` (with no journal requested, which would need a reply).
  bool is_acknowledged() const noexcept { return !(w == 0 && !journal.value_or(false)); }
  /// True when no field is set: the command carries no writeConcern.
  bool is_default() const noexcept { return !w && !w_tag && !journal && !timeout; }
  /// Appends `writeConcern: {...}` to a command being built, unless this is the default.
  void append_to(bson::builder& command) const {
    if (is_default()) return;
    command.open_document("writeConcern");
    if (w) {
      command.append_int32("w", *w);
    } else if (w_tag) {
      command.append_string("w", *w_tag);
    }
    if (journal) command.append_bool("j", *journal);
    if (timeout) command.append_int64("wtimeout", timeout->count());
    command.close();
  }
};

}  // namespace oid::mongo
