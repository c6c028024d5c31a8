// collection::bulk_write: a mixed list of writes, each run of one kind sent as insert, update or
// delete commands in batches the server accepts, and the results added up.
#include <algorithm>
#include <cstring>
#include <oid/bson/builder.hpp>
#include <oid/bson/ensure_id.hpp>
#include <oid/detail/endian.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/server_codes.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/command_events.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

namespace {

// The three write commands a model can go into.
enum class kind { insert, update, remove };

struct command_names {
  std::string_view command, sequence;
};
command_names names_of(kind k) {
  switch (k) {
  case kind::insert: return {"insert", "documents"};
  case kind::update: return {"update", "updates"};
  case kind::remove: return {"delete", "deletes"};
  }
  return {};
}

// A model as it is sent: its command and its statement (the document for an insert, {q, u,
// upsert, multi, ...} for an update, {q, limit, ...} for a delete).
struct statement {
  kind k = kind::insert;
  bson::document_view doc;
  bool multi = false;  // an update or delete of every match: not retryable
};

std::string model_at(std::size_t i) { return " (model " + std::to_string(i) + ")"; }

// The statement of an update model (update_one_model or update_many_model), or why it is refused.
template <class Model>
outcome<bson::document> update_of(const Model& m, bool multi, std::size_t i) {
  if (auto bad = detail::check_update(m.update, !m.array_filters.empty(), model_at(i))) {
    return std::move(*bad);
  }
  return detail::update_statement({.filter = m.filter,
                                   .update = m.update,
                                   .upsert = m.upsert,
                                   .multi = multi,
                                   .array_filters = m.array_filters,
                                   .collation = m.collation,
                                   .hint = m.hint});
}

// Which statements of the batch [start, end) the server applied, given its write errors (by model
// index) for the batch: an ordered batch stops at its first error, an unordered one skips only
// the refused statements.
bool applied(std::size_t i, bool ordered, const std::vector<server_error>& errors,
             std::size_t first_error) {
  if (ordered) return i < first_error;
  return std::none_of(errors.begin(), errors.end(),
                      [i](const server_error& e) { return e.index == i; });
}

// `{_id: value}`, with the value of `id`.
// A new ObjectId element ({_id: ObjectId}) adds its type byte, "_id" and its NUL, and 12 bytes.
constexpr std::size_t with_id_growth = 1 + 4 + 12;
// The largest document given its new _id in the batch's shared buffer (see bulk_write).
constexpr std::size_t shared_id_buffer_max = 16 * 1024;

// Appends `doc` with a new ObjectId `_id` in front to `out`, whose capacity must hold it; returns
// its view. The bytes ensure_id makes, without a builder.
bson::document_view append_with_new_id(std::vector<std::uint8_t>& out, bson::document_view doc) {
  const std::size_t at = out.size();
  const std::size_t size = doc.size() + with_id_growth;
  out.resize(at + size);
  std::uint8_t* p = out.data() + at;
  oid::detail::store_le_u32(p, static_cast<std::uint32_t>(size));
  p[4] = static_cast<std::uint8_t>(bson::type::object_id);
  std::memcpy(p + 5, "_id", 4);
  const object_id id = generate();
  std::memcpy(p + 9, id.bytes().data(), 12);
  std::memcpy(p + 4 + with_id_growth, doc.data() + 4, doc.size() - 4);
  return bson::document_view::unchecked({p, size});
}

bson::document id_of(const bson::element& id) {
  bson::builder b;
  b.append_element("_id", id);
  return std::move(b).extract();
}

}  // namespace

void throw_exception(const bulk_write_error& e) { throw bulk_write_exception(e); }

bulk_write_outcome<bulk_write_result> collection::bulk_write(std::span<const write_model> models,
                                                             const bulk_write_options& options) {
  if (models.empty()) {
    return bulk_write_error(
        failure(oid::errc::invalid_value, "a bulk write needs at least one model"));
  }
  bulk_write_result out;
  // The `_id` of each insert model, by statement; moved into `out.inserted_ids` once the server
  // reports the document inserted.
  std::vector<indexed_id> insert_ids;
  // Statements the client makes (documents given an _id, update and delete statements) live in
  // `owned`; reserved so that the views in `statements` stay valid.
  std::vector<bson::document> owned;
  owned.reserve(models.size());
  // Small documents without an `_id` get a new one in front, written one after another into
  // `with_ids` (reserved, so that the views stay valid): one allocation for the batch, not one per
  // document. Two threads inserting many small documents with one allocation each made glibc give
  // the memory back and fault it in again at every batch (page faults per batch 4x one thread's).
  // Large documents keep a copy each: one buffer for ten 2.7 MB documents was mapped and faulted
  // in anew at every batch, where copies of their size are reused (insert many large: 2x the CPU).
  std::vector<std::uint8_t> with_ids;
  std::size_t room = 0;
  for (const auto& m : models) {
    if (const auto* ins = std::get_if<insert_one_model>(&m)) {
      const auto first = ins->document.begin();
      if ((first == ins->document.end() || first->key() != "_id") &&
          ins->document.size() <= shared_id_buffer_max) {
        room += ins->document.size() + with_id_growth;
      }
    }
  }
  with_ids.reserve(room);
  std::vector<statement> statements;
  statements.reserve(models.size());
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& m = models[i];
    if (const auto* ins = std::get_if<insert_one_model>(&m)) {
      bson::document_view d = ins->document;
      const auto first = d.begin();
      if (first == d.end() || first->key() != "_id") {
        if (d.size() <= shared_id_buffer_max && !d.contains("_id")) {
          d = append_with_new_id(with_ids, d);
        } else {  // large, or its _id moved to the front (rare): a copy of its own
          owned.push_back(bson::ensure_id(d));
          d = owned.back().view();
        }
      }
      insert_ids.push_back({i, id_of(*d.begin())});
      statements.push_back({kind::insert, d});
    } else if (const auto* u1 = std::get_if<update_one_model>(&m)) {
      auto st = update_of(*u1, false, i);
      if (!st) return bulk_write_error(std::move(st).error());
      owned.push_back(std::move(*st));
      statements.push_back({kind::update, owned.back().view()});
    } else if (const auto* um = std::get_if<update_many_model>(&m)) {
      auto st = update_of(*um, true, i);
      if (!st) return bulk_write_error(std::move(st).error());
      owned.push_back(std::move(*st));
      statements.push_back({kind::update, owned.back().view(), true});
    } else if (const auto* r = std::get_if<replace_one_model>(&m)) {
      if (!detail::is_replacement(r->replacement)) {
        return bulk_write_error(detail::not_a_replacement(model_at(i)));
      }
      owned.push_back(detail::update_statement({.filter = r->filter,
                                                .update = r->replacement,
                                                .upsert = r->upsert,
                                                .collation = r->collation,
                                                .hint = r->hint}));
      statements.push_back({kind::update, owned.back().view()});
    } else if (const auto* d1 = std::get_if<delete_one_model>(&m)) {
      owned.push_back(detail::delete_statement(d1->filter, false, d1->collation, d1->hint));
      statements.push_back({kind::remove, owned.back().view()});
    } else {
      const auto& dm = std::get<delete_many_model>(m);
      owned.push_back(detail::delete_statement(dm.filter, true, dm.collation, dm.hint));
      statements.push_back({kind::remove, owned.back().view(), true});
    }
  }

  // One implicit session for the whole bulk write; each batch is retried on its own. One
  // timeoutMS for all the batches (the specification's "Batching").
  const auto limit = detail::limit_of(options.timeout, ctx_.timeout);
  detail::op_session session(*state_, ctx_.session.get());
  std::optional<detail::lease> l;
  const bool retries = detail::write_concern_of(options.write_concern, ctx_).is_acknowledged() &&
                       state_->uri.retry_writes().value_or(true);
  if (auto first = detail::acquire_for_write(*state_, retries, limit ? &*limit : nullptr,
                                             detail::pinned_of(ctx_.session.get()));
      first) {
    l.emplace(std::move(*first));
  } else {
    return bulk_write_error(std::move(first).error());
  }
  // The limits of the server first selected (a retry's server is of the same deployment); the
  // numbers only, not a copy of the whole handshake (its hello document allocates).
  const struct {
    std::int32_t max_bson_object_size, max_message_size_bytes, max_write_batch_size;
  } server{(*l)->server().max_bson_object_size, (*l)->server().max_message_size_bytes,
           (*l)->server().max_write_batch_size};
  // An inserted document may be as large as maxBsonObjectSize; an update or delete statement
  // wraps its documents, for which servers allow 16 KiB more.
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const bool insert = statements[i].k == kind::insert;
    const std::size_t limit = static_cast<std::size_t>(std::max(0, server.max_bson_object_size)) +
                              (insert ? 0 : 16 * 1024);
    if (statements[i].doc.size() > limit) {
      return bulk_write_error(
          failure(oid::errc::too_large, (insert ? "document " : "write ") + std::to_string(i) +
                                            " has " + std::to_string(statements[i].doc.size()) +
                                            " bytes, above the server's limit of " +
                                            std::to_string(limit)));
    }
  }

  const auto& write_concern = detail::write_concern_of(options.write_concern, ctx_);
  const bool acknowledged = write_concern.is_acknowledged();
  const std::size_t max_count = static_cast<std::size_t>(std::max(1, server.max_write_batch_size));
  // One operation id for the command events of every batch.
  const std::int64_t operation_id = detail::next_operation_id();
  failure errors{};
  std::int64_t written = 0;
  std::size_t start = 0;
  std::size_t next_insert = 0;  // the first of `insert_ids` not yet sent
  while (start < statements.size()) {
    const kind k = statements[start].k;
    const auto names = names_of(k);
    bson::builder cmd;
    cmd.append_string(names.command, name_).append_bool("ordered", options.ordered);
    if (options.bypass_document_validation && k != kind::remove) {
      cmd.append_bool("bypassDocumentValidation", *options.bypass_document_validation);
    }
    if (!options.let.empty() && k != kind::insert) cmd.append_document("let", options.let);
    detail::append_comment(cmd, options.comment);
    write_concern.append_to(cmd);
    const bson::document command = std::move(cmd).extract();
    // Header, flags, section kinds, "$db", the sequence's size and identifier, and the session's
    // lsid and txnNumber (64 bytes at most), with room to spare.
    const std::size_t overhead =
        16 + 4 + 1 + command.size() + 16 + db_.size() + 1 + 4 + names.sequence.size() + 64 + 64;
    // The handshake keeps the limit positive (handshake_info's ranges); a limit smaller than
    // the overhead leaves no room, and each batch is then one statement, which the connection
    // refuses (too_large) if it does not fit: never a wrapped-around size.
    const auto message_size = static_cast<std::size_t>(std::max(0, server.max_message_size_bytes));
    const std::size_t max_bytes = message_size > overhead ? message_size - overhead : 0;
    std::size_t end = start, bytes = 0;
    bool multi = false;
    document_sequence seq{names.sequence, {}};
    while (end < statements.size() && statements[end].k == k && end - start < max_count &&
           (end == start || bytes + statements[end].doc.size() <= max_bytes)) {
      bytes += statements[end].doc.size();
      seq.documents.push_back(statements[end].doc);
      multi = multi || statements[end].multi;
      ++end;
    }
    std::optional<bson::document> reply_doc;  // optional: a default document allocates
    auto sent = detail::execute(
        *state_, session, l,
        {.retry = multi ? detail::retry_kind::none : detail::retry_kind::write,
         .acknowledged = acknowledged,
         .limit = limit,
         .session = ctx_.session.get(),
         .operation_id = operation_id},
        [&](detail::attempt& a) -> outcome<done> {
          if (!acknowledged) {
            return detail::send_unacknowledged(a.conn, db_, command.view(), std::span(&seq, 1));
          }
          auto r = detail::command(a.conn, db_, a.command(command.view()), std::span(&seq, 1));
          if (!r) return std::move(r).error();
          reply_doc.emplace(std::move(*r));
          // A write concern error alone (the batch was applied) goes through the retry rules:
          // a retryable one is retried with the same txnNumber, which the server answers from
          // its transaction table.
          if (!multi) {
            auto f = detail::write_failure_of(reply_doc->view());
            if (f && f->write_errors.empty()) return std::move(*f);
          }
          return done{};
        });
    // A write concern error that was not retried, or met again: the batch's reply stands, and
    // its write concern error is reported below with what the batch wrote.
    const bool write_concern_only = !sent && sent.error().code == errc::write_concern_failed &&
                                    sent.error().write_errors.empty() && reply_doc &&
                                    !reply_doc->empty();
    if (write_concern_only) sent = done{};
    // The ids of this batch's inserts: [next_insert, batch_inserts).
    std::size_t batch_inserts = next_insert;
    if (k == kind::insert) {
      while (batch_inserts < insert_ids.size() && insert_ids[batch_inserts].index < end) {
        ++batch_inserts;
      }
    }
    if (sent && !acknowledged) {
      for (; next_insert < batch_inserts; ++next_insert) {
        out.inserted_ids.push_back(std::move(insert_ids[next_insert]));
      }
      start = end;
      continue;
    }
    // Acknowledged and sent: the batch's reply is in reply_doc.
    outcome<bson::document> reply = sent ? outcome<bson::document>(std::move(*reply_doc))
                                         : outcome<bson::document>(std::move(sent).error());
    if (!reply) {
      // The whole command failed: what it did is unknown, what came before stands.
      failure f = reply.error();
      f.written = written;
      f.write_errors.insert(f.write_errors.begin(), errors.write_errors.begin(),
                            errors.write_errors.end());
      if (!f.write_concern_error) f.write_concern_error = errors.write_concern_error;
      return bulk_write_error(std::move(f), std::move(out));
    }
    const auto r = reply->view();
    const std::int64_t n = detail::int64_field(r, "n", 0);
    written += n;
    if (k == kind::insert) {
      out.inserted += n;
    } else if (k == kind::remove) {
      out.deleted += n;
    } else {
      std::int64_t upserted = 0;
      if (const auto u = r.find("upserted")) {
        if (auto arr = u->get_array()) {
          for (const auto& e : *arr) {
            auto d = e.get_document();
            if (!d) continue;
            ++upserted;
            const auto at = d->find("index");
            const auto index = at ? detail::as_integer(*at) : std::nullopt;
            const auto id = d->find("_id");
            if (index && *index >= 0 && id) {
              out.upserted_ids.push_back({start + static_cast<std::size_t>(*index), id_of(*id)});
            }
          }
        }
      }
      out.upserted += upserted;
      out.matched += n - upserted;
      out.modified += detail::int64_field(r, "nModified", 0);
    }
    const std::size_t errors_before = errors.write_errors.size();
    if (const auto we = r.find("writeErrors")) {
      if (auto arr = we->get_array()) {
        for (const auto& e : *arr) {
          if (auto d = e.get_document()) {
            server_error s = detail::server_error_of(*d);
            s.index = start + s.index.value_or(0);
            errors.write_errors.push_back(std::move(s));
          }
        }
      }
    }
    if (k == kind::insert) {
      const std::vector<server_error> batch_errors(
          errors.write_errors.begin() + static_cast<std::ptrdiff_t>(errors_before),
          errors.write_errors.end());
      std::size_t first_error = end;
      for (const auto& e : batch_errors) first_error = std::min(first_error, e.index.value_or(end));
      if (batch_errors.empty() && next_insert == 0 && batch_inserts == insert_ids.size()) {
        // Every insert of the bulk write was in this batch and applied: the list as it is, rather
        // than a second one built id by id.
        out.inserted_ids = std::move(insert_ids);
        insert_ids.clear();  // and the later batches' loops find none
        next_insert = batch_inserts;
      }
      for (; next_insert < batch_inserts; ++next_insert) {
        if (applied(insert_ids[next_insert].index, options.ordered, batch_errors, first_error)) {
          out.inserted_ids.push_back(std::move(insert_ids[next_insert]));
        }
      }
    }
    if (const auto wce = r.find("writeConcernError")) {
      if (auto d = wce->get_document()) {
        errors.write_concern_error = detail::server_error_of(*d);
        // The reply's labels (RetryableWriteError, ...) belong to the failure it becomes, and
        // so do those a server before 4.4 put inside the writeConcernError.
        for (auto labels : {detail::error_labels_of(r), detail::error_labels_of(*d)}) {
          for (auto& label : labels) {
            if (!errors.has_label(label)) errors.labels.push_back(std::move(label));
          }
        }
      }
    }
    if (options.ordered && !errors.write_errors.empty()) break;
    start = end;
  }
  if (!errors.write_errors.empty()) {
    const bool all_duplicates =
        std::all_of(errors.write_errors.begin(), errors.write_errors.end(),
                    [](const server_error& s) { return s.code == server_code::duplicate_key; });
    errors.code = all_duplicates ? errc::duplicate_key : errc::server_error;
    const auto& first = errors.write_errors.front();
    // insert_many's failures speak of documents, mixed bulk writes of writes.
    const bool inserts = std::all_of(statements.begin(), statements.end(),
                                     [](const statement& s) { return s.k == kind::insert; });
    errors.message = std::to_string(errors.write_errors.size()) + " of " +
                     std::to_string(models.size()) +
                     (inserts ? " documents refused; document " : " writes refused; write ") +
                     std::to_string(first.index.value_or(0)) + ": " + first.message;
    errors.written = written;
    return bulk_write_error(std::move(errors), std::move(out));
  }
  if (errors.write_concern_error) {
    errors.code = errc::write_concern_failed;
    errors.message = "write concern failed: " + errors.write_concern_error->message;
    errors.written = written;
    return bulk_write_error(std::move(errors), std::move(out));
  }
  return out;
}

}  // namespace oid::mongo
