// The index operations of a collection: createIndexes, listIndexes, dropIndexes.
#include <oid/bson/builder.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/server_codes.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/cursor_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {
namespace {

// The server's default name: each key and its value joined by '_' ("a_1_b_-1", "t_text").
std::string default_name(bson::document_view keys) {
  std::string name;
  for (const auto& e : keys) {
    if (!name.empty()) name += '_';
    name += e.key();
    name += '_';
    if (auto n = detail::as_integer(e)) {
      name += std::to_string(*n);
    } else if (auto s = e.get_string()) {
      name += *s;
    }
  }
  return name;
}

bool reserved(std::string_view key) {
  return key == "key" || key == "name" || key == "v" || key == "ns";
}

bool is_namespace_not_found(const failure& f) {
  return f.server && f.server->code == server_code::namespace_not_found;
}

// Runs createIndexes or dropIndexes (`cmd`, with `options` appended) for a collection of `db`
// whose handle context is `ctx`.
outcome<done> index_command(client_state& s, std::string_view db, const detail::handle_context& ctx,
                            bson::builder& cmd, const index_command_options& options) {
  if (options.max_time) cmd.append_int64("maxTimeMS", options.max_time->count());
  detail::append_comment(cmd, options.comment);
  // The collection's write concern (the read and write concern specification's "other commands
  // that write"); inside a transaction none.
  detail::write_concern_of({}, ctx).append_to(cmd);
  auto reply = detail::run_command(s, db, cmd.view(),
                                   {.write_reply = true,  // a writeConcernError is a failure
                                    .limit = detail::limit_of(options.timeout, ctx.timeout),
                                    .session = ctx.session.get()});
  if (!reply) return reply.error();
  return done{};
}

}  // namespace

outcome<std::string> collection::create_index(bson::document_view keys,
                                              const index_options& options,
                                              const index_command_options& command) {
  const index_model model{keys, options};
  auto names = create_indexes(std::span(&model, 1), command);
  if (!names) return std::move(names).error();
  return std::move(names->front());
}

outcome<std::vector<std::string>> collection::create_indexes(std::span<const index_model> models,
                                                             const index_command_options& command) {
  if (models.empty())
    return failure(oid::errc::invalid_value, "createIndexes needs at least one index");
  std::vector<std::string> names;
  names.reserve(models.size());
  bson::builder cmd;
  cmd.append_string("createIndexes", name_);
  cmd.open_array("indexes");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& m = models[i];
    const auto& o = m.options;
    if (m.keys.empty()) {
      return failure(oid::errc::invalid_value, "index " + std::to_string(i) + " has no keys");
    }
    names.push_back(o.name.empty() ? default_name(m.keys) : o.name);
    cmd.open_document(std::to_string(i));
    cmd.append_document("key", m.keys).append_string("name", names.back());
    if (o.unique) cmd.append_bool("unique", true);
    if (o.sparse) cmd.append_bool("sparse", true);
    if (o.expire_after_seconds) cmd.append_int64("expireAfterSeconds", *o.expire_after_seconds);
    if (!o.partial_filter_expression.empty()) {
      cmd.append_document("partialFilterExpression", o.partial_filter_expression);
    }
    if (!o.collation.empty()) cmd.append_document("collation", o.collation);
    for (const auto& e : o.extra) {
      const auto k = e.key();
      const bool given = (k == "unique" && o.unique) || (k == "sparse" && o.sparse) ||
                         (k == "expireAfterSeconds" && o.expire_after_seconds) ||
                         (k == "partialFilterExpression" && !o.partial_filter_expression.empty()) ||
                         (k == "collation" && !o.collation.empty());
      if (!reserved(k) && !given) cmd.append_element(e);
    }
    cmd.close();
  }
  cmd.close();
  if (auto ran = index_command(*state_, db_, ctx_, cmd, command); !ran)
    return std::move(ran).error();
  return names;
}

outcome<std::vector<bson::document>> collection::list_indexes() {
  bson::builder cmd;
  cmd.append_string("listIndexes", name_);
  cmd.open_document("cursor").close();
  // On the primary whatever the collection's read preference, as listCollections (the
  // enumerate collections specification) and other drivers' listIndexes.
  static const mongo::read_preference primary{};
  auto state = detail::cursor_state::open(state_, db_, name_, cmd.view(), 0, true, &primary,
                                          {.timeout = ctx_.timeout}, &ctx_);
  if (!state) {
    if (is_namespace_not_found(state.error())) return std::vector<bson::document>{};
    return std::move(state).error();
  }
  cursor c(std::move(*state));
  return detail::read_all(c);
}

outcome<done> collection::drop_index(std::string_view name, const index_command_options& command) {
  if (name == "*") {
    return failure(oid::errc::invalid_value,
                   "drop_index(\"*\") would drop every index: drop_indexes()");
  }
  bson::builder cmd;
  cmd.append_string("dropIndexes", name_).append_string("index", name);
  return index_command(*state_, db_, ctx_, cmd, command);
}

outcome<done> collection::drop_indexes(const index_command_options& command) {
  bson::builder cmd;
  cmd.append_string("dropIndexes", name_).append_string("index", "*");
  return index_command(*state_, db_, ctx_, cmd, command);
}

}  // namespace oid::mongo
