// collection::find_one_and_update, find_one_and_replace and find_one_and_delete: the
// findAndModify command.
#include <oid/bson/builder.hpp>
#include <oid/mongo/collection.hpp>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

namespace {

// What the three operations share: the query, the sort, the projection and the limits.
struct modify_common {
  bson::document_view projection, sort, collation;
  const index_hint& hint;
  const std::optional<std::chrono::milliseconds>& max_time;
  const mongo::write_concern& write_concern;
  bson::document_view let;
  const mongo::comment& comment;
};

// Appends the options `common` holds to a findAndModify command; `change` has added remove or
// update (and new, upsert) already.
void append_common(bson::builder& cmd, const modify_common& common) {
  if (!common.sort.empty()) cmd.append_document("sort", common.sort);
  if (!common.projection.empty()) cmd.append_document("fields", common.projection);
  if (!common.collation.empty()) cmd.append_document("collation", common.collation);
  detail::append_hint(cmd, common.hint);
  if (common.max_time) cmd.append_int64("maxTimeMS", common.max_time->count());
  if (!common.let.empty()) cmd.append_document("let", common.let);
  detail::append_comment(cmd, common.comment);
  common.write_concern.append_to(cmd);
}

// Runs the command and returns its `value`: a document, or nothing for null. Unacknowledged
// (w: 0): sent with moreToCome, nothing read, nothing returned (as the CRUD specification has it).
outcome<std::optional<bson::document>> run(detail::client_state& s, std::string_view db,
                                           bson::document_view cmd, const write_concern& wc,
                                           std::optional<detail::time_limit> limit,
                                           session_state* session) {
  // A single-document write: retryable, and its writeConcernError a failure. w: 0: no session,
  // no retry, nothing comes back.
  const bool acknowledged = wc.is_acknowledged();
  auto reply = detail::run_command(
      s, db, cmd,
      {.retry = acknowledged ? detail::retry_kind::write : detail::retry_kind::none,
       .acknowledged = acknowledged,
       .write_reply = true,
       .limit = limit,
       .session = session});
  if (!reply) return reply.error();
  if (!acknowledged) return std::optional<bson::document>();
  const auto r = reply->view();
  const auto value = r.find("value");
  if (!value || value->type() == bson::type::null) return std::optional<bson::document>();
  auto doc = value->get_document();
  if (!doc)
    return failure(errc::unexpected_reply, "findAndModify reply whose value is no document");
  return std::optional<bson::document>(bson::document(*doc));
}

outcome<std::optional<bson::document>> modify(detail::client_state& s, std::string_view db,
                                              std::string_view coll, bson::document_view filter,
                                              const update_spec& change,
                                              const find_one_and_modify_options& options,
                                              std::optional<detail::time_limit> limit,
                                              const detail::handle_context& ctx) {
  bson::builder cmd;
  cmd.append_string("findAndModify", coll).append_document("query", filter);
  detail::append_update(cmd, "update", change);
  cmd.append_bool("new", options.return_document == return_document::after);
  if (options.upsert) cmd.append_bool("upsert", true);
  if (options.bypass_document_validation) {
    cmd.append_bool("bypassDocumentValidation", *options.bypass_document_validation);
  }
  detail::append_array_filters(cmd, options.array_filters);
  const auto& wc = detail::write_concern_of(options.write_concern, ctx);
  append_common(cmd, {options.projection, options.sort, options.collation, options.hint,
                      options.max_time, wc, options.let, options.comment});
  return run(s, db, cmd.view(), wc, limit, ctx.session.get());
}

}  // namespace

outcome<std::optional<bson::document>> collection::find_one_and_update(
    bson::document_view filter, const update_spec& update,
    const find_one_and_modify_options& options) {
  if (auto bad = detail::check_update(update, !options.array_filters.empty())) {
    return std::move(*bad);
  }
  return modify(*state_, db_, name_, filter, update, options,
                detail::limit_of(options.timeout, ctx_.timeout), ctx_);
}

outcome<std::optional<bson::document>> collection::find_one_and_replace(
    bson::document_view filter, bson::document_view replacement,
    const find_one_and_modify_options& options) {
  if (!detail::is_replacement(replacement)) return detail::not_a_replacement();
  if (!options.array_filters.empty()) return detail::array_filters_in_a_replacement();
  return modify(*state_, db_, name_, filter, replacement, options,
                detail::limit_of(options.timeout, ctx_.timeout), ctx_);
}

outcome<std::optional<bson::document>> collection::find_one_and_delete(
    bson::document_view filter, const find_one_and_delete_options& options) {
  bson::builder cmd;
  cmd.append_string("findAndModify", name_).append_document("query", filter);
  cmd.append_bool("remove", true);
  const auto& wc = detail::write_concern_of(options.write_concern, ctx_);
  append_common(cmd, {options.projection, options.sort, options.collation, options.hint,
                      options.max_time, wc, options.let, options.comment});
  return run(*state_, db_, cmd.view(), wc, detail::limit_of(options.timeout, ctx_.timeout),
             ctx_.session.get());
}

}  // namespace oid::mongo
