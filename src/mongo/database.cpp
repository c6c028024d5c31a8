#include <oid/bson/builder.hpp>
#include <oid/mongo/database.hpp>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/cursor_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/write_checks.hpp"

namespace oid::mongo {

database::database(std::shared_ptr<client_state> state, std::string name,
                   detail::handle_context ctx)
    : state_(std::move(state)), name_(std::move(name)), ctx_(std::move(ctx)) {}

collection database::collection(std::string_view name) const {
  return mongo::collection(state_, name_, std::string(name), ctx_);
}

outcome<bson::document> database::run_command(bson::document_view command) {
  return detail::run_command(*state_, name_, command,
                             {.limit = detail::time_limit::from(ctx_.timeout),
                              .session = ctx_.session.get(),
                              .any_command = true});
}

outcome<bson::document> database::run_command(bson::document_view command,
                                              const mongo::read_preference& where) {
  // A transaction reads from the primary: a command asking elsewhere inside one is an error (the
  // run command specification), not silently sent to the primary.
  if (where.mode != read_mode::primary && ctx_.session && ctx_.session->in_transaction()) {
    return failure(errc::invalid_argument, "read preference in a transaction must be primary");
  }
  return detail::run_command(*state_, name_, command,
                             {.read = &where,
                              .limit = detail::time_limit::from(ctx_.timeout),
                              .session = ctx_.session.get(),
                              .any_command = true});
}

outcome<cursor> database::run_cursor_command(bson::document_view command,
                                             const cursor_command_options& options) {
  const auto first = command.begin();
  if (first == command.end()) {
    return failure(oid::errc::invalid_value, "run_cursor_command: the command is empty");
  }
  const bool tailable = options.cursor_kind != cursor_type::non_tailable;
  const bool await_data = options.cursor_kind == cursor_type::tailable_await;
  const auto timeout = detail::cursor_timeout_of(options.timeout, ctx_.timeout,
                                                 options.timeout_mode, tailable, await_data);
  if (!timeout) return timeout.error();
  if (options.max_time && await_data && timeout->timeout && timeout->timeout->count() > 0 &&
      *options.max_time >= *timeout->timeout) {
    return failure(errc::invalid_argument,
                   "run_cursor_command: max_time must be shorter than timeoutMS (each getMore "
                   "would time out before the server answers)");
  }
  static const mongo::read_preference primary{};
  // Not retried (the run-command specification); the cursor's namespace until the reply names
  // one: the command's first value when it is a collection's name.
  const auto target = first->get_string();
  auto opened = detail::cursor_state::open(
      state_, name_, target ? std::string(*target) : "$cmd", command, options.batch_size, false,
      options.read_preference ? &*options.read_preference : &primary, *timeout, &ctx_);
  if (!opened) return std::move(opened).error();
  (*opened)->tailable = tailable;
  (*opened)->keep_comment(options.comment);
  (*opened)->max_await_time = options.max_time;
  return cursor(std::move(*opened));
}

namespace {

// Opens the cursor of listCollections of `db` with `filter` and `options` (`name_only` over the
// options' own when set); only the database may make a cursor of it.
outcome<std::unique_ptr<detail::cursor_state>> list_collections_of(
    const std::shared_ptr<client_state>& state, const std::string& db,
    const detail::handle_context& ctx, bson::document_view filter,
    const list_collections_options& options, std::optional<bool> name_only) {
  bson::builder cmd;
  cmd.append_int32("listCollections", 1);
  if (!filter.empty()) cmd.append_document("filter", filter);
  if (const auto n = name_only ? name_only : options.name_only) cmd.append_bool("nameOnly", *n);
  if (options.authorized_collections) {
    cmd.append_bool("authorizedCollections", *options.authorized_collections);
  }
  cmd.open_document("cursor");
  if (options.batch_size > 0) cmd.append_int32("batchSize", options.batch_size);
  cmd.close();
  detail::append_comment(cmd, options.comment);
  // On the primary whatever the database's read preference: the enumerate collections
  // specification's rule for replica sets.
  static const mongo::read_preference primary{};
  auto opened = detail::cursor_state::open(
      state, db, "$cmd.listCollections", cmd.view(), options.batch_size, true, &primary,
      {.timeout = options.timeout ? options.timeout : ctx.timeout}, &ctx);
  if (!opened) return std::move(opened).error();
  (*opened)->keep_comment(options.comment);
  return opened;
}

}  // namespace

outcome<std::vector<bson::document>> database::list_collections(
    bson::document_view filter, const list_collections_options& options) {
  auto opened = list_collections_of(state_, name_, ctx_, filter, options, std::nullopt);
  if (!opened) return std::move(opened).error();
  mongo::cursor c(std::move(*opened));
  return detail::read_all(c);
}

outcome<std::vector<std::string>> database::list_collection_names(
    bson::document_view filter, const list_collections_options& options) {
  // nameOnly applies before the filter: a filter on anything but the name needs the full
  // documents (the enumerate collections specification).
  bool names_only = true;
  for (const auto& e : filter) names_only = names_only && e.key() == "name";
  auto opened = list_collections_of(state_, name_, ctx_, filter, options,
                                    names_only ? std::optional<bool>(true) : std::nullopt);
  if (!opened) return std::move(opened).error();
  mongo::cursor c(std::move(*opened));
  auto specs = detail::read_all(c);
  if (!specs) return std::move(specs).error();
  std::vector<std::string> names;
  names.reserve(specs->size());
  for (const auto& spec : *specs) {
    const auto name = spec.view().find("name");
    auto text = name ? name->get_string() : result<std::string_view>(name.error());
    if (!text) {
      return failure(errc::unexpected_reply,
                     "listCollections of " + name_ + ": a collection without a string name");
    }
    names.emplace_back(*text);
  }
  return names;
}

outcome<done> database::create_collection(std::string_view name, bson::document_view options) {
  bson::builder cmd;
  cmd.append_string("create", name);
  for (const auto& e : options) {
    if (e.key() == "create") continue;  // the name is the argument's
    cmd.append_element(e);
  }
  // The database's write concern, unless the options give one.
  if (!options.contains("writeConcern")) detail::write_concern_of({}, ctx_).append_to(cmd);
  auto reply = detail::run_command(*state_, name_, cmd.view(),
                                   {.write_reply = true,  // a writeConcernError is a failure
                                    .limit = detail::time_limit::from(ctx_.timeout),
                                    .session = ctx_.session.get()});
  if (!reply) return std::move(reply).error();
  return done{};
}

outcome<done> database::create_collection(std::string_view name,
                                          const create_collection_options& o) {
  if (o.capped && o.size.value_or(0) <= 0) {
    return failure(oid::errc::invalid_value,
                   "create_collection: a capped collection needs a positive size (bytes)");
  }
  if (!o.capped && (o.size || o.max)) {
    return failure(oid::errc::invalid_value,
                   "create_collection: size and max are for a capped collection");
  }
  bson::builder cmd;
  cmd.append_string("create", name);
  if (o.capped) cmd.append_bool("capped", true).append_int64("size", *o.size);
  if (o.max) cmd.append_int64("max", *o.max);
  if (!o.validator.empty()) cmd.append_document("validator", o.validator);
  if (!o.validation_level.empty()) cmd.append_string("validationLevel", o.validation_level);
  if (!o.validation_action.empty()) cmd.append_string("validationAction", o.validation_action);
  if (!o.collation.empty()) cmd.append_document("collation", o.collation);
  if (!o.timeseries.empty()) cmd.append_document("timeseries", o.timeseries);
  if (!o.clustered_index.empty()) cmd.append_document("clusteredIndex", o.clustered_index);
  if (o.expire_after_seconds) cmd.append_int64("expireAfterSeconds", *o.expire_after_seconds);
  for (const auto& e : o.other) {
    if (e.key() == "create") continue;  // the name is the argument's
    cmd.append_element(e);
  }
  if (!o.other.contains("writeConcern")) detail::write_concern_of({}, ctx_).append_to(cmd);
  auto reply = detail::run_command(*state_, name_, cmd.view(),
                                   {.write_reply = true,  // a writeConcernError is a failure
                                    .limit = detail::time_limit::from(ctx_.timeout),
                                    .session = ctx_.session.get()});
  if (!reply) return std::move(reply).error();
  return done{};
}

outcome<done> database::drop() {
  bson::builder cmd;
  cmd.append_int32("dropDatabase", 1);
  detail::write_concern_of({}, ctx_).append_to(cmd);
  auto reply = detail::run_command(*state_, name_, cmd.view(),
                                   {.write_reply = true,  // a writeConcernError is a failure
                                    .limit = detail::time_limit::from(ctx_.timeout),
                                    .session = ctx_.session.get()});
  if (!reply) return std::move(reply).error();
  return done{};
}

}  // namespace oid::mongo
