// Clients made from a connection string, for tests of what a connection refuses (TLS, X.509):
// a new client's ping, and one connection opened as a client would open it, without the pool.
#pragma once

#include <chrono>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/uri.hpp>
#include <string>
#include <utility>

#include "mongo/wire/connection.hpp"
#include "mongo/wire/tls.hpp"

namespace oid::testing {

// Runs ping on a new client for `text`; the failure, or none.
inline mongo::outcome<bson::document> ping_new_client(const std::string& text) {
  auto c = mongo::client::create(text);
  if (!c) return std::move(c).error();
  bson::builder b;
  b.append_int32("ping", 1);
  return c->run_command("admin", b.view());
}

// Opens one connection to the first host of `text` as a client would (its TLS context and
// credential) but without the pool, which retries until serverSelectionTimeoutMS: the typed
// failure of connection::open.
inline mongo::outcome<mongo::connection> open_as(const std::string& text) {
  auto u = mongo::uri::parse(text);
  if (!u) return std::move(u).error();
  mongo::connection_options o;
  o.connect_timeout = u->connect_timeout().value_or(std::chrono::seconds(2));
  o.socket_timeout = u->socket_timeout().value_or(std::chrono::seconds(2));
  o.auth = mongo::credential::from(*u);
  if (u->tls().value_or(false)) {
    auto context = mongo::detail::tls_context::create(*u);
    if (!context) return std::move(context).error();
    o.tls = std::move(*context);
  }
  return mongo::connection::open(u->hosts().front(), o);
}

}  // namespace oid::testing
