// oid/mongo/handshake.hpp: what a connection's handshake sends and learns: the credential it
// authenticates with, the wrapping libraries it names, and what the server said of itself
// (`client::server()` returns it).
#pragma once

#include <cstdint>
#include <oid/bson/document.hpp>
#include <oid/mongo/secret.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/objectid/object_id.hpp>
#include <optional>
#include <string>

namespace oid::mongo {

/// Who a connection authenticates as, and how.
struct credential {
  /// The user name (may be empty for MONGODB-X509, where the certificate names the user).
  std::string user;
  /// The password (none for MONGODB-X509).
  secret password;
  /// The database that holds the user (`uri::auth_database()`).
  std::string source = "admin";
  /// SCRAM-SHA-256, SCRAM-SHA-1, PLAIN or MONGODB-X509; empty: SCRAM-SHA-256 when the server
  /// lists it for the user, else SCRAM-SHA-1.
  std::string mechanism;

  /// The credential a connection string asks for, or none.
  static std::optional<credential> from(const mongo::uri& u);
};

/// A library that wraps oid's client and says so in the handshake (the handshake specification's
/// DriverInfoOptions): its name, version and platform are appended to the driver's, each after a
/// '|' ("oid|mylib", "1.4.0|2.1", "C++20, gcc 12.2.0|Python 3.11"), so the server's logs name both.
/// Give it in `client_options::driver_info` or later with `client::append_metadata`. An empty
/// field is unset (nothing is appended to that field); none may hold '|'.
struct driver_info {
  std::string name;      ///< the wrapping library's name (required)
  std::string version;   ///< its version; empty: none
  std::string platform;  ///< what it runs on; empty: none
  friend bool operator==(const driver_info&, const driver_info&) = default;
};

/// What the handshake learnt about the server.
///
/// The three limits are taken from the hello reply only when they lie in their `*_range` (bounds
/// included); a negative, zero or larger value is ignored and the default, which is also the
/// ceiling, stays. The floors are the smallest values that can hold anything at all (an empty
/// document, the smallest OP_MSG, one statement): a server may be stricter than that, it cannot
/// refuse less than nothing. The ceilings are MongoDB's own fixed values (16 MiB documents since
/// 1.8, 48,000,000-byte messages, 100,000 statements since 3.6): no MongoDB server reports more,
/// and a larger value would only let a server make the client build and accept larger messages.
struct handshake_info {
  /// The values a limit of the hello reply may take.
  struct limit_range {
    std::int64_t min, max;
  };
  static constexpr limit_range bson_object_size_range{5, 16 * 1024 * 1024};
  static constexpr limit_range message_size_range{16 + 4 + 1 + 5, 48'000'000};
  static constexpr limit_range write_batch_size_range{1, 100'000};

  std::int32_t max_bson_object_size = 16 * 1024 * 1024;  ///< largest document it accepts
  std::int32_t max_message_size_bytes = 48'000'000;      ///< largest message it accepts
  std::int32_t max_write_batch_size = 100'000;           ///< most statements in one write command
  std::int32_t max_wire_version = 0;                     ///< protocol level (6+ has OP_MSG)
  bool writable_primary = false;                         ///< isWritablePrimary (or ismaster)
  std::optional<object_id> service_id;  ///< behind a load balancer: the server's serviceId
  /// The server's id of this connection (hello's `connectionId`, as its log names it), when it
  /// gives a whole number.
  std::optional<std::int64_t> connection_id;
  bson::document hello;  ///< the whole hello reply
};

}  // namespace oid::mongo
