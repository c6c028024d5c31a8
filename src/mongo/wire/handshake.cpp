#include "mongo/wire/handshake.hpp"

#include <openssl/crypto.h>

#include <oid/bson/builder.hpp>
#include <oid/mongo/server_codes.hpp>
#include <optional>
#include <string>
#include <utility>

#include "mongo/auth/authenticate.hpp"
#include "mongo/wire/client_metadata.hpp"
#include "mongo/wire/reply.hpp"
#include "mongo/wire/stream.hpp"
#include "mongo/wire/tls.hpp"

namespace oid::mongo {
namespace {

// A limit of the hello reply, when it lies in `range`; else `fallback` (the default): a server
// cannot make the client divide by zero, underflow a size, or accept larger messages than
// MongoDB ever sends by naming a negative, zero or absurd limit.
std::int32_t sane_limit(bson::document_view hello, std::string_view key,
                        handshake_info::limit_range range, std::int32_t fallback) {
  const auto e = hello.find(key);
  if (!e) return fallback;
  const auto v = detail::as_integer(*e);
  if (!v || *v < range.min || *v > range.max) return fallback;
  return static_cast<std::int32_t>(*v);
}

// `hello` (or, for a server before 4.4.2, `isMaster`) with what the handshake sends.
bson::builder hello_command(bool legacy, bson::document_view metadata,
                            const connection_options& options,
                            const std::optional<detail::handshake_auth>& auth) {
  bson::builder b;
  if (legacy) {
    b.append_int32("isMaster", 1);
  } else {
    b.append_int32("hello", 1).append_bool("helloOk", true);
  }
  b.append_document("client", metadata);
  if (options.load_balanced) b.append_bool("loadBalanced", true);
  detail::append_server_api(b, options.api);
  if (auth) auth->add_to_hello(b);
  return b;
}

}  // namespace

std::string_view server_api::name(api_version v) noexcept {
  switch (v) {
  case v1: return "1";
  }
  return "1";
}

outcome<server_api::api_version> server_api::parse_version(std::string_view text) {
  if (text == "1") return v1;
  std::string shown;
  for (const char ch : text.substr(0, 32)) {  // the caller's text, shown printable
    const auto u = static_cast<unsigned char>(ch);
    shown += (u >= 0x20 && u < 0x7f) ? ch : '?';
  }
  return failure(errc::invalid_argument,
                 "unknown Stable API version \"" + shown + "\": oid knows version \"1\"");
}

void detail::append_server_api(bson::builder& b, const std::optional<server_api>& api) {
  if (!api) return;
  b.append_string("apiVersion", server_api::name(api->version));
  if (api->strict) b.append_bool("apiStrict", *api->strict);
  if (api->deprecation_errors) b.append_bool("apiDeprecationErrors", *api->deprecation_errors);
}

std::optional<credential> credential::from(const mongo::uri& u) {
  if (!u.has_credential()) return std::nullopt;
  credential c;
  c.user = u.username().value_or("");
  if (u.password()) c.password = *u.password();
  c.source = u.auth_database();
  c.mechanism = u.auth_mechanism().value_or("");
  return c;
}

outcome<handshake_info> detail::handshake(connection& c, const connection_options& options) {
  const std::string where = describe(c.host());
  std::optional<handshake_auth> auth;
  // MONGODB-X509 without a user name names the client certificate's subject, as servers
  // before 3.4 need and later ones accept.
  std::optional<credential> x509;
  const credential* who = options.auth ? &*options.auth : nullptr;
  if (who != nullptr && who->mechanism == "MONGODB-X509" && who->user.empty() && options.tls &&
      !options.tls->client_subject().empty()) {
    x509.emplace(*who);
    x509->user = options.tls->client_subject();
    who = &*x509;
  }
  if (who != nullptr) {
    auto a = handshake_auth::prepare(*who, options.scram_cache.get(),
                                     options.api ? &*options.api : nullptr);
    if (!a) return std::move(a).error();
    auth.emplace(std::move(*a));
  }
  const bson::document metadata =
      options.metadata
          ? options.metadata->document()
          : detail::build_client_metadata(options.app_name, {}, detail::current_platform());
  auto reply = c.run("admin", hello_command(false, metadata.view(), options, auth).view());
  // Before 4.4.2, a server does not know hello; with a declared API version, hello is the only
  // handshake the Stable API specification allows (the server's refusal fails the connection).
  if (!options.api && reply && !is_ok(reply->view()) &&
      server_error_of(reply->view()).code == server_code::command_not_found) {
    reply = c.run("admin", hello_command(true, metadata.view(), options, auth).view());
  }
  if (!reply) {
    // TLS 1.3 finishes the client's handshake before the server checks the client's
    // certificate: a refusal (no certificate, say) comes as an alert on this first read.
    const std::string tls = c.tls_error();
    return failure(reply.error().code,
                   "handshake with " + where + " failed: " + reply.error().message() +
                       (tls.empty() ? std::string() : " (" + tls + ")"),
                   reply.error().offset);
  }
  const auto v = reply->view();
  if (!is_ok(v)) {
    // Worded as a monitor's refused check is (cluster/monitor.cpp): SDAM compares the errors of
    // two Unknown descriptions, and the same refusal must not read as a change.
    return failure(errc::connection_failed,
                   "hello to " + where + " refused: " + server_error_of(v).message);
  }
  handshake_info s;
  s.max_bson_object_size = sane_limit(
      v, "maxBsonObjectSize", handshake_info::bson_object_size_range, s.max_bson_object_size);
  s.max_message_size_bytes = sane_limit(
      v, "maxMessageSizeBytes", handshake_info::message_size_range, s.max_message_size_bytes);
  s.max_write_batch_size = sane_limit(
      v, "maxWriteBatchSize", handshake_info::write_batch_size_range, s.max_write_batch_size);
  s.max_wire_version = int_field(v, "maxWireVersion", 0);
  s.writable_primary = bool_field(v, "isWritablePrimary", bool_field(v, "ismaster", false));
  if (const auto id = v.find("serviceId")) {
    if (auto value = id->get_object_id()) s.service_id = *value;
  }
  if (const auto id = v.find("connectionId")) s.connection_id = detail::as_integer(*id);
  if (options.load_balanced && !s.service_id) {
    // unsupported: the server will not change its mind, so the operation fails at once.
    return failure(errc::unsupported,
                   where +
                       " answered the handshake without a serviceId: the driver attempted to "
                       "initialize in load balancing mode, but the server does not support this "
                       "mode (loadBalanced=true needs a MongoDB 5.0 or later behind a load "
                       "balancer)");
  }
  if (s.max_wire_version < 6) {
    return failure(errc::unsupported,
                   where + " is too old: oid needs OP_MSG (MongoDB 3.6, wire version 6)");
  }
  if (auth) {
    // Authentication's commands are sent under the limits the server just gave.
    c.set_server(s);
    auto done = auth->finish(c, v, where);
    c.wipe_send_buffer();
    if (!done) return std::move(done).error();
  }
  s.hello = std::move(*reply);
  return s;
}

outcome<connection> connection::open(const mongo::host& h, const connection_options& options) {
  auto s = detail::stream::connect(h, options.tls, options.connect_timeout);
  if (!s) return std::move(s).error();
  // The handshake runs under the connect timeout; commands afterwards under the socket timeout.
  connection c(std::move(*s), h, options.connect_timeout);
  auto info = detail::handshake(c, options);
  if (!info) return std::move(info).error();
  c.set_server(std::move(*info));
  c.set_socket_timeout(options.socket_timeout);
  return c;
}

}  // namespace oid::mongo
