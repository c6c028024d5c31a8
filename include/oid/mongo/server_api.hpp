// oid/mongo/server_api.hpp: the Stable API version a client declares (MongoDB's Stable API
// specification, "versioned-api").
//
// A client made with a `server_api` (`client_options::server_api`) sends `apiVersion` (and
// `apiStrict`, `apiDeprecationErrors` when they are set, even to their default false) with every
// command it sends: the handshake's `hello`, authentication, the monitors' `hello`, every
// operation's command, `getMore`, `killCursors` and every command of a transaction. It uses
// `hello` only, never the legacy `isMaster`: a server that does not know `hello` fails the
// handshake. Without one, nothing of the kind is sent. The version cannot be set in a connection
// string (the specification forbids it: copying a connection string must not change how an
// application's commands behave), nor changed on a database, collection or operation.
//
// `run_command` does not look into the command it is given: a command that carries its own
// `apiVersion` on a client that declares one is sent with both, and what the server does with it
// is undefined.
//
//     oid::mongo::client_options o;
//     o.server_api.emplace();                 // version "1"
//     o.server_api->strict = true;
//     auto c = oid::mongo::client::create("mongodb://127.0.0.1/", std::move(o));
#pragma once

#include <oid/mongo/outcome.hpp>
#include <optional>
#include <string_view>

namespace oid::mongo {

/// A declared Stable API version and its two flags.
struct server_api {
  /// The API versions oid knows. A later version is a new enumerator.
  enum api_version {
    v1,  ///< "1"
  };
  /// The version sent as `apiVersion`.
  api_version version = v1;
  /// `apiStrict`: the server refuses commands and options outside the version. Unset: not sent
  /// (the server's default, false).
  std::optional<bool> strict;
  /// `apiDeprecationErrors`: the server refuses what the version deprecates. Unset: not sent
  /// (the server's default, false).
  std::optional<bool> deprecation_errors;

  /// The version as the server names it ("1").
  static std::string_view name(api_version v) noexcept;
  /// The version named `text` ("1"). Failures: invalid_argument for a version oid does not know
  /// (the specification asks drivers to refuse it rather than send it), naming it.
  static outcome<api_version> parse_version(std::string_view text);

  friend bool operator==(const server_api&, const server_api&) = default;
};

}  // namespace oid::mongo
