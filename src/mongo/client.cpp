#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/srv.hpp>
#include <string>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/cursor_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/session_state.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/client_metadata.hpp"
#include "mongo/wire/tls.hpp"

namespace oid::mongo {

client::client(std::shared_ptr<detail::client_state> state)
    : state_(std::move(state)),
      closer_(state_.get(), [keep = state_](void*) { detail::end_sessions(*keep); }),
      ctx_{state_->timeout, nullptr, state_->read_concern, state_->write_concern,
           state_->read_preference} {}

outcome<client> client::create(std::string_view uri_text) { return create(uri_text, {}); }

outcome<client> client::create(const mongo::uri& u) { return create(u, {}); }

outcome<client> client::create(std::string_view uri_text, client_options options) {
  auto u = uri::parse(uri_text, uri_mode::strict);
  if (!u) return std::move(u).error();
  return create(*u, std::move(options));
}

namespace {

// What `o` holds beyond the settings: its listeners and the options no connection string gives.
client_options without_settings(client_options&& o) {
  client_options out;
  out.on_topology = std::move(o.on_topology);
  out.on_command = std::move(o.on_command);
  out.on_pool = std::move(o.on_pool);
  out.server_api = std::move(o.server_api);
  out.driver_info = std::move(o.driver_info);
  return out;
}

}  // namespace

outcome<client> client::create(client_options options) {
  auto u = uri::from(options);
  if (!u) return std::move(u).error();
  return create(*u, without_settings(std::move(options)));
}

outcome<client> client::create(const mongo::uri& u, client_options options) {
  client_settings merged = u.settings();
  if (merged.merge(options)) {  // settings from code over the connection string's
    if (u.srv_name() && options.hosts.empty()) {
      // The SRV name again rather than the hosts its records gave: looked up anew.
      merged.hosts = {host{host::kind::hostname, *u.srv_name(), std::nullopt}};
    }
    auto made = uri::from(std::move(merged));
    if (!made) return std::move(made).error();
    return create(*made, without_settings(std::move(options)));
  }
  if (u.srv_name() && !u.srv_resolved()) {  // mongodb+srv://: the hosts come from DNS
    auto resolved = resolve_srv(u);
    if (!resolved) return std::move(resolved).error();
    return create(*resolved, std::move(options));
  }
  if (u.username() && !u.password() && u.auth_mechanism() != "MONGODB-X509") {
    return failure(errc::invalid_uri, "user '" + *u.username() +
                                          "' has no password: give one in the connection string "
                                          "(mongodb://user:password@host) or set it on the uri");
  }
  // The handshake's metadata, with the wrapping libraries given now: one refused fails here.
  auto metadata = std::make_shared<detail::client_metadata>(u.app_name().value_or(""),
                                                            detail::current_platform());
  for (const auto& info : options.driver_info) {
    if (auto added = metadata->append(info); !added) return std::move(added).error();
  }
  std::shared_ptr<const detail::tls_context> tls;
  if (u.tls().value_or(false)) {
    // One TLS context for the client: its connections share the CA store and the key.
    auto made = detail::tls_context::create(u);
    if (!made) return std::move(made).error();
    tls = std::move(*made);
  }
  return client(std::make_shared<detail::client_state>(
      u,
      detail::listeners{std::move(options.on_topology), std::move(options.on_command),
                        std::move(options.on_pool)},
      std::move(tls), std::move(options.server_api), std::move(metadata)));
}

outcome<done> client::append_metadata(const mongo::driver_info& info) {
  return state_->options.metadata->append(info);
}

outcome<bson::document> client::run_command(std::string_view db, bson::document_view cmd) {
  return detail::run_command(*state_, db, cmd,
                             {.limit = detail::time_limit::from(ctx_.timeout),
                              .session = ctx_.session.get(),
                              .any_command = true});
}

database client::database(std::string_view name) const {
  return mongo::database(state_, std::string(name), ctx_);
}

collection client::collection(std::string_view db, std::string_view name) const {
  return mongo::collection(state_, std::string(db), std::string(name), ctx_);
}

namespace {

// Runs listDatabases with `filter` and `options` (`name_only` over the options' own when set)
// and returns its `databases` array's documents.
outcome<std::vector<bson::document>> list_databases_of(client_state& s,
                                                       const detail::handle_context& ctx,
                                                       bson::document_view filter,
                                                       const list_databases_options& options,
                                                       std::optional<bool> name_only) {
  // On the primary whatever the client's read preference, as the enumerate databases
  // specification says for replica sets.
  static const mongo::read_preference primary{};
  bson::builder cmd;
  cmd.append_int32("listDatabases", 1);
  if (!filter.empty()) cmd.append_document("filter", filter);
  if (const auto n = name_only ? name_only : options.name_only) cmd.append_bool("nameOnly", *n);
  if (options.authorized_databases) {
    cmd.append_bool("authorizedDatabases", *options.authorized_databases);
  }
  detail::append_comment(cmd, options.comment);
  auto reply = detail::run_command(s, "admin", cmd.view(),
                                   {.read = &primary,
                                    .retry = detail::retry_kind::read,
                                    .limit = detail::limit_of(options.timeout, ctx.timeout),
                                    .session = ctx.session.get()});
  if (!reply) return reply.error();
  std::vector<bson::document> out;
  const auto dbs = reply->view().find("databases");
  auto arr =
      dbs ? dbs->get_array() : result<bson::document_view>(oid::error{oid::errc::type_mismatch, 0});
  if (!arr) return failure(errc::unexpected_reply, "no databases array");
  for (const auto& e : *arr) {
    if (auto d = e.get_document()) out.emplace_back(*d);
  }
  return out;
}

}  // namespace

outcome<std::vector<bson::document>> client::list_databases(bson::document_view filter,
                                                            const list_databases_options& options) {
  return list_databases_of(*state_, ctx_, filter, options, std::nullopt);
}

outcome<std::vector<std::string>> client::list_database_names(
    bson::document_view filter, const list_databases_options& options) {
  auto dbs = list_databases_of(*state_, ctx_, filter, options, true);
  if (!dbs) return std::move(dbs).error();
  std::vector<std::string> names;
  names.reserve(dbs->size());
  for (const auto& d : *dbs) {
    const auto name = d.view().find("name");
    auto text = name ? name->get_string() : result<std::string_view>(name.error());
    if (!text) return failure(errc::unexpected_reply, "listDatabases: a database without a name");
    names.emplace_back(*text);
  }
  return names;
}

outcome<std::vector<bson::document>> client::list_collections(std::string_view db) {
  return database(db).list_collections();
}

outcome<handshake_info> client::server() {
  auto l = state_->acquire();
  if (!l) return l.error();
  return (*l)->server();
}

topology_description client::topology() const { return state_->topology->description(); }

const uri& client::uri() const noexcept { return state_->uri; }

}  // namespace oid::mongo
