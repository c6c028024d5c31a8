// The handshake: the first commands on a new connection (MongoDB's handshake and authentication
// specifications). The top of the wire layer, above stream.hpp and connection.hpp.
//
// `hello` carries the client metadata (driver "oid" and its version, the OS, the platform, the
// application name) and, behind a load balancer, `loadBalanced: true`; a server older than 4.4.2
// that does not know `hello` (CommandNotFound) is asked `isMaster` instead. The reply gives the
// server's limits, each taken only when it is sane (a server cannot make the client divide by
// zero or accept absurd messages), its wire version (6, OP_MSG, at least) and, behind a load
// balancer, its serviceId (required).
//
// With a credential, `hello` also carries `saslSupportedMechs` and a `speculativeAuthenticate`
// first step, and when the server does not answer the latter, saslStart / saslContinue follow
// (SCRAM-SHA-256 when the user has it, else SCRAM-SHA-1; or the mechanism asked for); the
// server's SCRAM signature is checked (auth/authenticate.hpp). MONGODB-X509 without a user name
// authenticates as the client certificate's subject.
#pragma once

#include <oid/bson/document.hpp>
#include <oid/mongo/handshake.hpp>
#include <oid/mongo/outcome.hpp>
#include <string_view>

#include "mongo/wire/connection.hpp"

namespace oid::mongo {

/// The handshake's `client` document (driver, os, platform, application): what it sends.
bson::document client_metadata(std::string_view app_name);

namespace detail {
/// Runs the handshake on `c`, a connection whose stream has just been opened, under its current
/// socket timeout, and returns what it learnt. Failures: connection_failed (the server refused
/// the handshake), authentication_failed, unsupported (wire version below 6; no serviceId behind
/// a load balancer), the transport errors of `connection::run`; the message names the host.
outcome<handshake_info> handshake(connection& c, const connection_options& options);
}  // namespace detail

}  // namespace oid::mongo
