// oid/mongo/read_concern.hpp: how current and how durable the data a read sees must be.
//
// The default (no level) sends no readConcern, so the server applies its own ("local" on a
// replica set's primary). A client takes a level from the connection string (readConcernLevel);
// databases, collections and operations may set their own, and each inherits its parent's:
//
//     auto c = oid::mongo::client::create("mongodb://h/?replicaSet=rs&readConcernLevel=majority");
//     auto fresh = coll.with_read_concern({.level = "local"});
#pragma once

#include <string>

namespace oid::mongo {

/// The `readConcern` of a read.
struct read_concern {
  /// "local", "available", "majority", "linearizable" or "snapshot"; any other text is sent as
  /// given (the server judges it). Empty: the server's default, and nothing is sent.
  std::string level;

  /// True when no level is set.
  bool is_default() const noexcept { return level.empty(); }
  friend bool operator==(const read_concern&, const read_concern&) = default;
};

}  // namespace oid::mongo
