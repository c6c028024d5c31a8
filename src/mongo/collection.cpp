#include <limits>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/server_codes.hpp>
#include <oid/objectid/object_id.hpp>
#include <string>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/cursor_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

collection::collection(std::shared_ptr<detail::client_state> state, std::string db,
                       std::string name, detail::handle_context ctx)
    : state_(std::move(state)), db_(std::move(db)), name_(std::move(name)), ctx_(std::move(ctx)) {}

namespace {

// What a bulk write of inserts reports as insert_many's result.
insert_many_result inserted(bulk_write_result&& r) {
  insert_many_result out;
  out.inserted = r.inserted;
  out.ids.reserve(r.inserted_ids.size());
  for (auto& i : r.inserted_ids) out.ids.push_back(std::move(i.id));
  return out;
}

}  // namespace

outcome<insert_one_result> collection::insert_one(bson::document_view doc,
                                                  const insert_options& options) {
  // insert_many's path, without its vector of models.
  const write_model model{insert_one_model{doc}};
  auto r = bulk_write(std::span(&model, 1),
                      {.ordered = options.ordered,
                       .bypass_document_validation = options.bypass_document_validation,
                       .write_concern = options.write_concern,
                       .comment = options.comment,
                       .timeout = options.timeout});
  if (!r) return failure(std::move(r).error());  // one document: no partial result to speak of
  insert_one_result out;
  out.inserted = r->inserted;
  if (!r->inserted_ids.empty()) out.id = std::move(r->inserted_ids.front().id);
  return out;
}

bulk_write_outcome<insert_many_result> collection::insert_many(
    std::span<const bson::document_view> docs, const insert_options& options) {
  // A bulk write of inserts: the same _id, batching and error rules, and the same error.
  if (docs.empty()) return insert_many_result{};
  std::vector<write_model> models;
  models.reserve(docs.size());
  for (const auto& d : docs) models.emplace_back(insert_one_model{d});
  auto r = bulk_write(models, {.ordered = options.ordered,
                               .bypass_document_validation = options.bypass_document_validation,
                               .write_concern = options.write_concern,
                               .comment = options.comment,
                               .timeout = options.timeout});
  if (!r) return std::move(r).error();
  return inserted(std::move(*r));
}

namespace {

// The find command's options other than limit and batchSize, each only when set.
void append_find_options(bson::builder& cmd, const find_options& o) {
  if (!o.projection.empty()) cmd.append_document("projection", o.projection);
  if (!o.sort.empty()) cmd.append_document("sort", o.sort);
  if (o.skip > 0) cmd.append_int64("skip", o.skip);
  detail::append_hint(cmd, o.hint);
  if (!o.collation.empty()) cmd.append_document("collation", o.collation);
  detail::append_comment(cmd, o.comment);
  if (!o.let.empty()) cmd.append_document("let", o.let);
  if (!o.min.empty()) cmd.append_document("min", o.min);
  if (!o.max.empty()) cmd.append_document("max", o.max);
  if (o.max_time) cmd.append_int64("maxTimeMS", o.max_time->count());
  if (o.return_key) cmd.append_bool("returnKey", true);
  if (o.show_record_id) cmd.append_bool("showRecordId", true);
  if (o.allow_disk_use) cmd.append_bool("allowDiskUse", *o.allow_disk_use);
  if (o.allow_partial_results) cmd.append_bool("allowPartialResults", true);
  if (o.no_cursor_timeout) cmd.append_bool("noCursorTimeout", true);
}

// The operation's read preference, or null for the client's.
const read_preference* read_preference_of(const std::optional<read_preference>& rp) {
  return rp ? &*rp : nullptr;
}

}  // namespace

outcome<cursor> collection::find(bson::document_view filter, const find_options& options) {
  if (options.max_await_time && options.cursor_kind != cursor_type::tailable_await) {
    return failure(oid::errc::invalid_value,
                   "find: max_await_time needs cursor_type::tailable_await (a getMore of any other "
                   "cursor does not wait)");
  }
  bson::builder cmd;
  cmd.append_string("find", name_).append_document("filter", filter);
  append_find_options(cmd, options);
  if (options.limit > 0) cmd.append_int64("limit", options.limit);
  // A first batch as large as the limit would leave the server's cursor open for a getMore that
  // finds nothing: one more (as the CRUD specification says) lets the server close it at once.
  if (options.batch_size > 0) {
    cmd.append_int32("batchSize",
                     options.limit == options.batch_size &&
                             options.batch_size < std::numeric_limits<std::int32_t>::max()
                         ? options.batch_size + 1
                         : options.batch_size);
  }
  if (options.cursor_kind != cursor_type::non_tailable) cmd.append_bool("tailable", true);
  if (options.cursor_kind == cursor_type::tailable_await) cmd.append_bool("awaitData", true);
  const auto timeout =
      detail::cursor_timeout_of(options.timeout, ctx_.timeout, options.timeout_mode,
                                options.cursor_kind != cursor_type::non_tailable,
                                options.cursor_kind == cursor_type::tailable_await);
  if (!timeout) return timeout.error();
  if (options.max_await_time && timeout->timeout && timeout->timeout->count() > 0 &&
      *options.max_await_time >= *timeout->timeout) {
    return failure(errc::invalid_argument,
                   "find: max_await_time must be shorter than timeoutMS (each getMore would "
                   "time out before the server answers)");
  }
  auto state = detail::cursor_state::open(
      state_, db_, name_, cmd.view(), options.batch_size, true,
      read_preference_of(options.read_preference), *timeout, &ctx_,
      options.read_concern ? &*options.read_concern : &ctx_.read_concern);
  if (!state) return std::move(state).error();
  (*state)->tailable = options.cursor_kind != cursor_type::non_tailable;
  (*state)->keep_comment(options.comment);
  (*state)->max_await_time = options.max_await_time;
  return cursor(std::move(*state));
}

outcome<std::optional<bson::document>> collection::find_one(bson::document_view filter,
                                                            const find_options& options) {
  bson::builder cmd;
  cmd.append_string("find", name_).append_document("filter", filter);
  append_find_options(cmd, options);
  cmd.append_int64("limit", 1).append_bool("singleBatch", true);
  const auto timeout =
      detail::cursor_timeout_of(options.timeout, ctx_.timeout, options.timeout_mode, false);
  if (!timeout) return timeout.error();
  auto state = detail::cursor_state::open(
      state_, db_, name_, cmd.view(), 0, true, read_preference_of(options.read_preference),
      *timeout, &ctx_, options.read_concern ? &*options.read_concern : &ctx_.read_concern);
  if (!state) return std::move(state).error();
  cursor c(std::move(*state));
  auto found = c.next();
  if (!found) return std::move(found).error();
  if (!*found) return std::optional<bson::document>();
  return std::optional<bson::document>(bson::document(c.current()));
}

result<bson::document> created_between_filter(std::optional<std::chrono::sys_seconds> from,
                                              std::optional<std::chrono::sys_seconds> to,
                                              bson::document_view filter) {
  if (!from && !to) return bson::document(filter);  // {_id: {}} would match only _id == {}
  bson::builder range;
  range.open_document("_id");
  if (from) {
    const auto lo = object_id::min_for_time(*from);
    if (!lo) return lo.error();
    range.append_object_id("$gte", *lo);
  }
  if (to) {
    const auto hi = object_id::min_for_time(*to);
    if (!hi) return hi.error();
    range.append_object_id("$lt", *hi);
  }
  range.close();
  if (filter.empty()) return std::move(range).extract();
  bson::builder both;
  both.open_array("$and").append_document("0", range.view()).append_document("1", filter).close();
  return std::move(both).extract();
}

outcome<cursor> collection::find_created_between(std::chrono::sys_seconds from,
                                                 std::chrono::sys_seconds to,
                                                 bson::document_view filter,
                                                 const find_options& options) {
  const auto f = created_between_filter(from, to, filter);
  if (!f) {
    return failure(oid::errc::time_out_of_range,
                   "an ObjectId holds times from 1970-01-01T00:00:00Z to "
                   "2106-02-07T06:28:15Z");
  }
  return find(f->view(), options);
}

outcome<std::int64_t> collection::count_documents(bson::document_view filter,
                                                  const count_options& options) {
  if (options.skip < 0 || options.limit < 0) {
    return failure(oid::errc::invalid_value, "count_documents: skip and limit cannot be negative");
  }
  // The CRUD specification's pipeline: $match, then $skip and $limit when given, then $group.
  bson::builder cmd;
  cmd.append_string("aggregate", name_);
  cmd.open_array("pipeline");
  int stage = 0;
  cmd.open_document(std::to_string(stage++)).append_document("$match", filter).close();
  if (options.skip > 0) {
    cmd.open_document(std::to_string(stage++)).append_int64("$skip", options.skip).close();
  }
  if (options.limit > 0) {
    cmd.open_document(std::to_string(stage++)).append_int64("$limit", options.limit).close();
  }
  cmd.open_document(std::to_string(stage)).open_document("$group").append_int32("_id", 1);
  cmd.open_document("n").append_int32("$sum", 1).close().close().close();
  cmd.close();
  cmd.open_document("cursor").close();
  detail::append_hint(cmd, options.hint);
  if (!options.collation.empty()) cmd.append_document("collation", options.collation);
  detail::append_comment(cmd, options.comment);
  if (options.max_time) cmd.append_int64("maxTimeMS", options.max_time->count());
  auto reply = detail::retryable_read(*state_, db_, cmd.view(), options, ctx_);
  if (!reply) return reply.error();
  detail::cursor_state s;
  if (auto loaded = s.load(std::move(*reply), "firstBatch"); !loaded) return loaded.error();
  if (!s.batch_left()) return std::int64_t{0};
  if (!s.next_in_batch()) return failure(errc::unexpected_reply, "count reply without a document");
  return detail::int64_field(s.current, "n", 0);
}

outcome<std::int64_t> collection::count(bson::document_view filter, const count_options& options) {
  if (options.skip < 0 || options.limit < 0) {
    return failure(oid::errc::invalid_value, "count: skip and limit cannot be negative");
  }
  bson::builder cmd;
  cmd.append_string("count", name_);
  if (!filter.empty()) cmd.append_document("query", filter);
  if (options.skip > 0) cmd.append_int64("skip", options.skip);
  if (options.limit > 0) cmd.append_int64("limit", options.limit);
  detail::append_hint(cmd, options.hint);
  if (!options.collation.empty()) cmd.append_document("collation", options.collation);
  if (options.max_time) cmd.append_int64("maxTimeMS", options.max_time->count());
  detail::append_comment(cmd, options.comment);
  auto reply = detail::retryable_read(*state_, db_, cmd.view(), options, ctx_);
  if (!reply) return reply.error();
  const auto n = reply->view().find("n");
  const auto counted = n ? detail::as_integer(*n) : std::nullopt;
  if (!counted) return failure(errc::unexpected_reply, "count reply without n");
  return *counted;
}

namespace {

// Runs a write command and turns writeErrors and writeConcernError into failures; `retryable`:
// a single-document write, retried once after a retryable error.
outcome<bson::document> write_command(detail::client_state& s, std::string_view db,
                                      bson::document_view cmd, const write_concern& wc,
                                      bool retryable, std::optional<detail::time_limit> limit,
                                      session_state* session) {
  // w: 0: no session and no retry; nothing comes back.
  const bool acknowledged = wc.is_acknowledged();
  return detail::run_command(
      s, db, cmd,
      {.retry = retryable && acknowledged ? detail::retry_kind::write : detail::retry_kind::none,
       .acknowledged = acknowledged,
       .write_reply = true,
       .limit = limit,
       .session = session});
}

}  // namespace

outcome<update_result> collection::update(bson::document_view filter, const update_spec& update,
                                          bool multi, const write_options& options) {
  bson::builder cmd;
  cmd.append_string("update", name_);
  cmd.open_array("updates");
  const bson::document statement = detail::update_statement({.filter = filter,
                                                             .update = update,
                                                             .upsert = options.upsert,
                                                             .multi = multi,
                                                             .array_filters = options.array_filters,
                                                             .collation = options.collation,
                                                             .hint = options.hint});
  cmd.append_document("0", statement.view());
  cmd.close();
  cmd.append_bool("ordered", true);  // one statement; sent as the CRUD specification's commands are
  if (options.bypass_document_validation) {
    cmd.append_bool("bypassDocumentValidation", *options.bypass_document_validation);
  }
  if (!options.let.empty()) cmd.append_document("let", options.let);
  detail::append_comment(cmd, options.comment);
  const auto& write_concern = detail::write_concern_of(options.write_concern, ctx_);
  write_concern.append_to(cmd);
  auto reply = write_command(*state_, db_, cmd.view(), write_concern, !multi,
                             detail::limit_of(options.timeout, ctx_.timeout), ctx_.session.get());
  if (!reply) return reply.error();
  update_result out;
  const auto r = reply->view();
  std::int64_t upserted = 0;
  if (const auto u = r.find("upserted")) {
    if (auto arr = u->get_array()) {
      for (const auto& e : *arr) {
        ++upserted;
        if (auto d = e.get_document(); d && d->contains("_id")) {
          bson::builder id;
          id.append_element(*d->find("_id"));
          out.upserted_id = std::move(id).extract();
        }
      }
    }
  }
  out.matched = detail::int64_field(r, "n", 0) - upserted;
  out.modified = detail::int64_field(r, "nModified", 0);
  return out;
}

outcome<update_result> collection::update_one(bson::document_view filter, const update_spec& u,
                                              const write_options& options) {
  if (auto bad = detail::check_update(u, !options.array_filters.empty())) return std::move(*bad);
  return update(filter, u, false, options);
}

outcome<update_result> collection::update_many(bson::document_view filter, const update_spec& u,
                                               const write_options& options) {
  if (auto bad = detail::check_update(u, !options.array_filters.empty())) return std::move(*bad);
  return update(filter, u, true, options);
}

outcome<update_result> collection::replace_one(bson::document_view filter,
                                               bson::document_view replacement,
                                               const write_options& options) {
  if (!detail::is_replacement(replacement)) return detail::not_a_replacement();
  if (!options.array_filters.empty()) return detail::array_filters_in_a_replacement();
  return update(filter, replacement, false, options);
}

outcome<std::int64_t> collection::remove(bson::document_view filter, bool multi,
                                         const write_options& options) {
  bson::builder cmd;
  cmd.append_string("delete", name_);
  cmd.open_array("deletes");
  const bson::document statement =
      detail::delete_statement(filter, multi, options.collation, options.hint);
  cmd.append_document("0", statement.view());
  cmd.close();
  cmd.append_bool("ordered", true);  // one statement; sent as the CRUD specification's commands are
  if (!options.let.empty()) cmd.append_document("let", options.let);
  detail::append_comment(cmd, options.comment);
  const auto& write_concern = detail::write_concern_of(options.write_concern, ctx_);
  write_concern.append_to(cmd);
  auto reply = write_command(*state_, db_, cmd.view(), write_concern, !multi,
                             detail::limit_of(options.timeout, ctx_.timeout), ctx_.session.get());
  if (!reply) return reply.error();
  return detail::int64_field(reply->view(), "n", 0);
}

outcome<std::int64_t> collection::delete_one(bson::document_view filter,
                                             const write_options& options) {
  return remove(filter, false, options);
}

outcome<std::int64_t> collection::delete_many(bson::document_view filter,
                                              const write_options& options) {
  return remove(filter, true, options);
}

outcome<done> collection::drop() {
  bson::builder cmd;
  cmd.append_string("drop", name_);
  detail::write_concern_of({}, ctx_).append_to(cmd);
  auto reply = detail::run_command(*state_, db_, cmd.view(),
                                   {.write_reply = true,  // a writeConcernError is a failure
                                    .limit = detail::time_limit::from(ctx_.timeout),
                                    .session = ctx_.session.get()});
  if (!reply &&
      !(reply.error().server && reply.error().server->code == server_code::namespace_not_found))
    return reply.error();
  return done{};  // 26: NamespaceNotFound, the collection is already gone
}

}  // namespace oid::mongo
