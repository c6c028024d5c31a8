// oid mongo count | update | delete | aggregate | indexes list|create|drop | drop: the rest of the
// collection operations, one subcommand each.
#include <iterator>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {

namespace {

struct crud_options {
  std::string uri, ns, filter, update, pipeline, since, until, keys, name, array_filters, hint,
      read_concern;
  bool many = false, upsert = false, unique = false, all = false;
};

// A JSON array of documents (a pipeline's stages, array filters): the array, read as the value of
// a one-field document, and a view of each of its documents.
struct document_list {
  bson::document holder;
  std::vector<bson::document_view> items;
};

// `text` as a JSON array of documents; nullopt (reported as NAME: what, at column N, or which
// item is not a document) when it is not. `item` names an element ("stage"), `example` shows one.
std::optional<document_list> json_array_argument(context& ctx, const std::string& name,
                                                 const std::string& text, std::string_view item,
                                                 std::string_view example) {
  // Offsets in the wrapped text are taken back to the caller's.
  static constexpr std::string_view prefix = "{\"a\":";
  const std::string wrapped = std::string(prefix) + text + "\n}";
  auto d = bson::from_json(wrapped);
  if (!d) {
    const std::size_t offset =
        d.error().offset > prefix.size() ? d.error().offset - prefix.size() : 0;
    const auto where = bson::position_of(text, offset);
    ctx.err << "oid: " << name << ": " << d.error().message() << " at column " << where.column
            << '\n';
    ctx.bad_input();
    return std::nullopt;
  }
  document_list out{std::move(*d), {}};
  const auto doc = out.holder.view();
  const auto array = doc.find("a");
  if (std::next(doc.begin()) != doc.end() || !array || !array->get_array()) {
    ctx.err << "oid: " << name << ": expected a JSON array of " << item << "s, e.g. '" << example
            << "'\n";
    ctx.bad_input();
    return std::nullopt;
  }
  const bson::document_view elements = *array->get_array();
  for (const auto& e : elements) {
    const auto item_doc = e.get_document();
    if (!item_doc) {
      ctx.err << "oid: " << name << ": " << item << ' ' << out.items.size() + 1
              << " is not a document\n";
      ctx.bad_input();
      return std::nullopt;
    }
    out.items.push_back(*item_doc);
  }
  return out;
}

// True when `text` starts, after blanks, with `c`.
bool starts_with(const std::string& text, char c) {
  const auto at = text.find_first_not_of(" \t\r\n");
  return at != std::string::npos && text[at] == c;
}

// The index of `--hint TEXT`: a key pattern when TEXT is a JSON document, an index name otherwise;
// `keys` keeps the pattern. False (reported) for a document that is not Extended JSON.
bool hint_argument(context& ctx, const std::string& text, std::optional<bson::document>& keys,
                   mongo::index_hint& hint) {
  if (text.empty()) return true;
  if (!starts_with(text, '{')) {
    hint = mongo::index_hint(text);
    return true;
  }
  keys = json_argument(ctx, "--hint", text);
  if (!keys) return false;
  hint = mongo::index_hint(keys->view());
  return true;
}

// The collection of `o.ns` on a new client; nullopt (reported) when the client is refused.
std::optional<mongo::collection> collection_of(context& ctx, const crud_options& o) {
  const auto [db, coll] = namespace_of(o.ns);
  auto c = make_client(ctx, o.uri);
  if (!c) return std::nullopt;
  return c->collection(db, coll);
}

// Prints the cursor's documents as relaxed Extended JSON lines, as `find` does.
void print_documents(context& ctx, mongo::cursor& cur) {
  document_output out(ctx);
  while (true) {
    auto more = cur.next();
    if (!more) return report(ctx, more.error());
    if (!*more) break;
    out.json_line(cur.current());
    if (!ctx.out) break;
  }
}

// ---- count ----------------------------------------------------------------------------------

void run_count(context& ctx, const crud_options& o) {
  namespace_of(o.ns);  // a usage error before anything else
  const auto f = created_filter_argument(ctx, "--filter", o.filter, o.since, o.until);
  if (!f) return;
  const auto concern = read_concern_argument(ctx, o.read_concern);
  if (!concern) return;
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  mongo::count_options co;
  if (!concern->is_default()) co.read_concern = *concern;
  auto n = coll->count_documents(f->view(), co);
  if (!n) return report(ctx, n.error());
  ctx.out << *n << " documents\n";
}

// ---- update and delete ----------------------------------------------------------------------

void run_update(context& ctx, const crud_options& o) {
  namespace_of(o.ns);
  auto filter = json_argument(ctx, "FILTER", o.filter);
  if (!filter) return;
  // UPDATE: update operators (a document), or a pipeline (an array of stages).
  std::optional<bson::document> operators;
  std::optional<document_list> stages;
  if (starts_with(o.update, '[')) {
    stages = json_array_argument(ctx, "UPDATE", o.update, "stage", R"([{"$set": {"n": 1}}])");
    if (!stages) return;
  } else {
    operators = json_argument(ctx, "UPDATE", o.update);
    if (!operators) return;
  }
  std::optional<document_list> array_filters;
  if (!o.array_filters.empty()) {
    array_filters = json_array_argument(ctx, "--arrayFilters", o.array_filters, "filter",
                                        R"([{"e.n": {"$gt": 1}}])");
    if (!array_filters) return;
  }
  mongo::write_options wo;
  std::optional<bson::document> hint_keys;
  if (!hint_argument(ctx, o.hint, hint_keys, wo.hint)) return;
  wo.upsert = o.upsert;
  if (array_filters) wo.array_filters = array_filters->items;
  const mongo::update_spec update =
      stages ? mongo::update_spec(stages->items) : mongo::update_spec(operators->view());
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  auto r = o.many ? coll->update_many(filter->view(), update, wo)
                  : coll->update_one(filter->view(), update, wo);
  if (!r) return report(ctx, r.error());
  ctx.out << "matched " << r->matched << ", modified " << r->modified;
  if (r->upserted_id) {
    // An ObjectId as its hex, any other _id as Extended JSON (as `insert` prints them).
    std::string id = bson::to_json(r->upserted_id->view());
    if (const auto e = r->upserted_id->view().find("_id")) {
      if (const auto object_id = e->get_object_id()) id = object_id->to_hex();
    }
    ctx.out << ", upserted " << printable(id);
  }
  ctx.out << '\n';
}

void run_delete(context& ctx, const crud_options& o) {
  namespace_of(o.ns);
  auto filter = json_argument(ctx, "FILTER", o.filter);
  if (!filter) return;
  mongo::write_options wo;
  std::optional<bson::document> hint_keys;
  if (!hint_argument(ctx, o.hint, hint_keys, wo.hint)) return;
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  auto n = o.many ? coll->delete_many(filter->view(), wo) : coll->delete_one(filter->view(), wo);
  if (!n) return report(ctx, n.error());
  ctx.out << "deleted " << *n << '\n';
}

// ---- aggregate ------------------------------------------------------------------------------

void run_aggregate(context& ctx, const crud_options& o) {
  namespace_of(o.ns);
  const auto pipeline =
      json_array_argument(ctx, "PIPELINE", o.pipeline, "stage", R"([{"$match": {}}])");
  if (!pipeline) return;
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  // Each getMore under the stall limit afresh, not the whole cursor under one deadline.
  mongo::aggregate_options ao;
  ao.timeout_mode = mongo::timeout_mode::iteration;
  auto cur = coll->aggregate(pipeline->items, ao);
  if (!cur) return report(ctx, cur.error());
  print_documents(ctx, *cur);
}

// ---- indexes and drop -----------------------------------------------------------------------

void run_indexes_list(context& ctx, const crud_options& o) {
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  auto list = coll->list_indexes();
  if (!list) return report(ctx, list.error());
  document_output out(ctx);
  for (const auto& spec : *list) out.json_line(spec.view());
}

void run_indexes_create(context& ctx, const crud_options& o) {
  namespace_of(o.ns);
  auto keys = json_argument(ctx, "KEYS", o.keys);
  if (!keys) return;
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  mongo::index_model model;
  model.keys = keys->view();
  model.options.unique = o.unique;
  model.options.name = o.name;
  auto names = coll->create_indexes({&model, 1});
  if (!names) return report(ctx, names.error());
  ctx.out << "created index " << printable(names->empty() ? o.name : names->front()) << '\n';
}

void run_indexes_drop(context& ctx, const crud_options& o) {
  namespace_of(o.ns);
  if (o.all == !o.name.empty()) {
    throw CLI::ValidationError("NAME", "give an index NAME or --all, not both or neither");
  }
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  auto r = o.all ? coll->drop_indexes() : coll->drop_index(o.name);
  if (!r) return report(ctx, r.error());
  if (o.all) {
    ctx.out << "dropped every index but _id_\n";
  } else {
    ctx.out << "dropped index " << printable(o.name) << '\n';
  }
}

void run_drop(context& ctx, const crud_options& o) {
  auto coll = collection_of(ctx, o);
  if (!coll) return;
  auto r = coll->drop();
  if (!r) return report(ctx, r.error());
  ctx.out << "dropped " << printable(o.ns) << '\n';
}

// A subcommand of `parent` taking URI and DB.COLL; its options go to a crud_options it shares.
CLI::App* add(CLI::App& parent, context& ctx, const char* name, const char* description,
              const std::shared_ptr<crud_options>& o, command_time time = command_time::quick) {
  auto* cmd = parent.add_subcommand(name, description);
  add_uri_options(*cmd, ctx, o->uri, time);
  cmd->add_option("DB.COLL", o->ns, "Database and collection, e.g. shop.orders")->required();
  return cmd;
}

}  // namespace

void add_mongo_crud_commands(CLI::App& mongo, context& ctx) {
  {
    auto o = std::make_shared<crud_options>();
    auto* cmd = add(mongo, ctx, "count", "Print how many documents match", o);
    cmd->add_option("--filter,-q,--query", o->filter,
                    "Query filter as Extended JSON, e.g. '{\"n\": 1}'");
    cmd->add_option("--readConcern", o->read_concern,
                    "Read concern: local, available, majority, linearizable or snapshot (or "
                    "'{\"level\": \"majority\"}')");
    cmd->add_option("--since", o->since, "Only documents whose ObjectId _id is from this time on");
    cmd->add_option("--until", o->until, "Only documents whose ObjectId _id is before this time");
    cmd->final_callback([&ctx, o] { run_count(ctx, *o); });
  }
  {
    auto o = std::make_shared<crud_options>();
    auto* cmd = add(mongo, ctx, "update", "Apply update operators to the first match (or all)", o,
                    command_time::long_run);
    cmd->add_option("FILTER", o->filter, "Query filter as Extended JSON")->required();
    cmd->add_option("UPDATE", o->update,
                    "Update operators, e.g. '{\"$set\": {\"n\": 2}}', or a pipeline, e.g. "
                    "'[{\"$set\": {\"n\": {\"$add\": [\"$n\", 1]}}}]'")
        ->required();
    cmd->add_flag("--many", o->many, "Update every match, not only the first");
    cmd->add_flag("--upsert", o->upsert, "Insert a document when none matches");
    cmd->add_option("--arrayFilters", o->array_filters,
                    "Which array elements $[name] updates, a JSON array, e.g. "
                    "'[{\"e.n\": {\"$gt\": 1}}]'");
    cmd->add_option("--hint", o->hint,
                    "The index to use: its name (n_1) or key pattern ('{\"n\": 1}')");
    cmd->final_callback([&ctx, o] { run_update(ctx, *o); });
  }
  {
    auto o = std::make_shared<crud_options>();
    auto* cmd =
        add(mongo, ctx, "delete", "Delete the first match (or all)", o, command_time::long_run);
    cmd->add_option("FILTER", o->filter, "Query filter as Extended JSON")->required();
    cmd->add_flag("--many", o->many, "Delete every match, not only the first");
    cmd->add_option("--hint", o->hint,
                    "The index to use: its name (n_1) or key pattern ('{\"n\": 1}')");
    cmd->final_callback([&ctx, o] { run_delete(ctx, *o); });
  }
  {
    auto o = std::make_shared<crud_options>();
    auto* cmd =
        add(mongo, ctx, "aggregate", "Run a pipeline; print its results as Extended JSON lines", o,
            command_time::batches);
    cmd->add_option("PIPELINE", o->pipeline,
                    "A JSON array of stages, e.g. '[{\"$match\": {\"n\": 1}}]'")
        ->required();
    cmd->final_callback([&ctx, o] { run_aggregate(ctx, *o); });
  }
  {
    auto* indexes = mongo.add_subcommand("indexes", "List, create or drop a collection's indexes");
    indexes->require_subcommand(1);
    auto list = std::make_shared<crud_options>();
    add(*indexes, ctx, "list", "Print each index specification as an Extended JSON line", list)
        ->final_callback([&ctx, list] { run_indexes_list(ctx, *list); });
    auto create = std::make_shared<crud_options>();
    auto* c = add(*indexes, ctx, "create", "Create an index on KEYS; print its name", create,
                  command_time::long_run);
    c->add_option("KEYS", create->keys, "The key pattern, e.g. '{\"name\": 1, \"n\": -1}'")
        ->required();
    c->add_flag("--unique", create->unique, "Reject documents whose key is already present");
    c->add_option("--name", create->name, "The index name (default: from the keys, e.g. name_1)");
    c->final_callback([&ctx, create] { run_indexes_create(ctx, *create); });
    auto drop = std::make_shared<crud_options>();
    auto* d =
        add(*indexes, ctx, "drop", "Drop the index NAME, or every index but _id_ (--all)", drop);
    d->add_option("NAME", drop->name, "The index name (oid mongo indexes list shows them)");
    d->add_flag("--all", drop->all, "Drop every index but _id_");
    d->final_callback([&ctx, drop] { run_indexes_drop(ctx, *drop); });
  }
  {
    auto o = std::make_shared<crud_options>();
    add(mongo, ctx, "drop", "Drop the collection (one that does not exist is not an error)", o)
        ->final_callback([&ctx, o] { run_drop(ctx, *o); });
  }
}

}  // namespace oid::cli
