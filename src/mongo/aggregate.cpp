// collection::aggregate (and database::aggregate), distinct, estimated_document_count and
// rename: the read commands of the CRUD specification beyond find, and renameCollection.
#include <oid/bson/builder.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/database.hpp>
#include <string>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/cursor_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

namespace {

void append_max_time(bson::builder& cmd, const std::optional<std::chrono::milliseconds>& t) {
  if (t) cmd.append_int64("maxTimeMS", t->count());
}

// Where distinct and the estimated count read unless told, and where a pipeline that writes runs.
const read_preference primary{};

void append_read_options(bson::builder& cmd, const read_options& options) {
  append_max_time(cmd, options.max_time);
  detail::append_comment(cmd, options.comment);
}

// The aggregate command on collection `coll` of `db`, or on the database itself when `coll` is
// empty (`aggregate: 1`): what collection::aggregate and database::aggregate share. Returns the
// cursor's state (only the handles may make a cursor of it).
outcome<std::unique_ptr<cursor_state>> run_aggregate(const std::shared_ptr<client_state>& state,
                                                     const std::string& db, std::string_view coll,
                                                     const detail::handle_context& ctx,
                                                     std::span<const bson::document_view> pipeline,
                                                     const aggregate_options& options) {
  // A stage is {$name: spec}: one field, named after the stage. Anything else the server refuses
  // with a less helpful message, after a round trip.
  for (std::size_t i = 0; i < pipeline.size(); ++i) {
    const auto first = pipeline[i].begin();
    const bool one_field = first != pipeline[i].end() && std::next(first) == pipeline[i].end();
    if (!one_field || first->key().size() < 2 || first->key().front() != '$') {
      return failure(oid::errc::invalid_value,
                     "pipeline stage " + std::to_string(i) +
                         " is not a document of one field named after a stage ({$match: ...})");
    }
  }
  const bool writes = !pipeline.empty() && (pipeline.back().begin()->key() == "$out" ||
                                            pipeline.back().begin()->key() == "$merge");
  const auto timeout =
      detail::cursor_timeout_of(options.timeout, ctx.timeout, options.timeout_mode, false);
  if (!timeout) return timeout.error();
  if (writes && timeout->mode == timeout_mode::iteration) {
    return failure(errc::invalid_argument,
                   "a pipeline ending in $out or $merge runs within its first command: "
                   "timeout_mode iteration is refused");
  }
  if (options.max_await_time && timeout->timeout && timeout->timeout->count() > 0 &&
      *options.max_await_time >= *timeout->timeout) {
    return failure(errc::invalid_argument,
                   "aggregate: max_await_time must be shorter than timeoutMS (each getMore would "
                   "time out before the server answers)");
  }
  bson::builder cmd;
  if (coll.empty()) {
    cmd.append_int32("aggregate", 1);
  } else {
    cmd.append_string("aggregate", coll);
  }
  cmd.open_array("pipeline");
  for (std::size_t i = 0; i < pipeline.size(); ++i) {
    cmd.append_document(std::to_string(i), pipeline[i]);
  }
  cmd.close();
  // The spec: no batchSize with $out or $merge, where 0 would keep the pipeline from running.
  cmd.open_document("cursor");
  if (options.batch_size > 0 && !writes) cmd.append_int32("batchSize", options.batch_size);
  cmd.close();
  if (options.allow_disk_use) cmd.append_bool("allowDiskUse", *options.allow_disk_use);
  append_max_time(cmd, options.max_time);
  if (options.bypass_document_validation) {
    cmd.append_bool("bypassDocumentValidation", *options.bypass_document_validation);
  }
  if (!options.collation.empty()) cmd.append_document("collation", options.collation);
  detail::append_hint(cmd, options.hint);
  if (!options.let.empty()) cmd.append_document("let", options.let);
  detail::append_comment(cmd, options.comment);
  if (writes) detail::write_concern_of(options.write_concern, ctx).append_to(cmd);
  // A pipeline that writes ($out, $merge) is not retried, and runs on the primary.
  const read_preference* where = writes                    ? &primary
                                 : options.read_preference ? &*options.read_preference
                                                           : nullptr;
  // The cursor's namespace: the collection's, or the one the server gives a database's.
  auto opened = detail::cursor_state::open(
      state, db, coll.empty() ? "$cmd.aggregate" : std::string(coll), cmd.view(),
      writes ? 0 : options.batch_size, !writes, where, *timeout, &ctx,
      options.read_concern ? &*options.read_concern : &ctx.read_concern);
  if (!opened) return std::move(opened).error();
  (*opened)->keep_comment(options.comment);
  (*opened)->max_await_time = options.max_await_time;
  return opened;
}

}  // namespace

outcome<cursor> collection::aggregate(std::span<const bson::document_view> pipeline,
                                      const aggregate_options& options) {
  auto opened = run_aggregate(state_, db_, name_, ctx_, pipeline, options);
  if (!opened) return std::move(opened).error();
  return cursor(std::move(*opened));
}

outcome<cursor> database::aggregate(std::span<const bson::document_view> pipeline,
                                    const aggregate_options& options) {
  auto opened = run_aggregate(state_, name_, {}, ctx_, pipeline, options);
  if (!opened) return std::move(opened).error();
  return cursor(std::move(*opened));
}

outcome<bson::document> collection::distinct(std::string_view field, bson::document_view filter,
                                             const read_options& options) {
  if (field.empty()) return failure(oid::errc::invalid_value, "distinct needs a field name");
  bson::builder cmd;
  cmd.append_string("distinct", name_).append_string("key", field);
  cmd.append_document("query", filter);
  append_read_options(cmd, options);
  if (!options.collation.empty()) cmd.append_document("collation", options.collation);
  auto reply = detail::retryable_read(*state_, db_, cmd.view(), options, ctx_);
  if (!reply) return reply.error();
  const auto values = reply->view().find("values");
  if (!values) return failure(errc::unexpected_reply, "distinct reply without values");
  auto arr = values->get_array();
  if (!arr) return failure(errc::unexpected_reply, "distinct reply whose values are no array");
  return bson::document(*arr);
}

outcome<std::int64_t> collection::estimated_document_count(const read_options& options) {
  bson::builder cmd;
  cmd.append_string("count", name_);
  append_read_options(cmd, options);
  auto reply = detail::retryable_read(*state_, db_, cmd.view(), options, ctx_);
  if (!reply) return reply.error();
  const auto n = reply->view().find("n");
  const auto count = n ? detail::as_integer(*n) : std::nullopt;
  if (!count) return failure(errc::unexpected_reply, "count reply without n");
  return *count;
}

outcome<collection> collection::rename(std::string_view new_name, bool drop_target) {
  if (new_name.empty()) return failure(oid::errc::invalid_value, "a collection name is not empty");
  bson::builder cmd;
  cmd.append_string("renameCollection", db_ + "." + name_);
  cmd.append_string("to", db_ + "." + std::string(new_name));
  if (drop_target) cmd.append_bool("dropTarget", true);
  detail::write_concern_of({}, ctx_).append_to(cmd);
  auto reply = detail::run_command(*state_, "admin", cmd.view(),
                                   {.write_reply = true,  // a writeConcernError is a failure
                                    .limit = detail::time_limit::from(ctx_.timeout),
                                    .session = ctx_.session.get()});
  if (!reply) return reply.error();
  return collection(state_, db_, std::string(new_name), ctx_);
}

}  // namespace oid::mongo
