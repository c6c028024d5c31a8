// The handshake: the first commands on a new connection (MongoDB's handshake and authentication
// specifications). The top of the wire layer, above stream.hpp and connection.hpp.
//
// `hello` carries the client metadata (client_metadata.hpp: driver "oid" and its version, with
// the libraries that wrap it, the OS, the platform, the FaaS or container it runs in, the
// application name, within 512 bytes) and, behind a load balancer, `loadBalanced: true`; a server
// older than 4.4.2 that does not know `hello` (CommandNotFound) is asked `isMaster` instead, unless
// the client declares a Stable API version (server_api.hpp): then `hello` and authentication's
// commands carry `apiVersion`, and a server without `hello` fails the handshake. The reply gives
// the server's limits, each taken only when it is sane (a server cannot make the client divide by
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

namespace detail {
/// Runs the handshake on `c`, a connection whose stream has just been opened, under its current
/// socket timeout, and returns what it learnt. Failures: connection_failed (the server refused
/// the handshake), authentication_failed, unsupported (wire version below 6; no serviceId behind
/// a load balancer), the transport errors of `connection::run`; the message names the host.
outcome<handshake_info> handshake(connection& c, const connection_options& options);
}  // namespace detail

}  // namespace oid::mongo
