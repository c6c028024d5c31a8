// oid mongo databases | collections | run: a quick look at a deployment, as one would take it in
// mongosh (show dbs, show collections, db.runCommand). Names and values come from the server: in
// a table print_columns makes them printable(); Extended JSON goes through document_output,
// which escapes on a terminal what JSON leaves raw (C1 controls, bidirectional formatting).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/read_preference.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mongo/connect.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {

namespace {

// A number field of a server's reply (int32, int64 or double), or nullopt.
std::optional<std::int64_t> number_field(bson::document_view d, std::string_view key) {
  const auto e = d.find(key);
  if (!e) return std::nullopt;
  if (auto v = e->get_int64()) return *v;
  if (auto v = e->get_int32()) return *v;
  if (auto v = e->get_double(); v && *v >= 0 && *v < 9.2e18) return static_cast<std::int64_t>(*v);
  return std::nullopt;
}

// `bytes` for a person, in binary units as mongosh shows them ("0 B", "40.00 KiB", "1.25 GiB").
std::string size_text(std::int64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(units)) {
    v /= 1024;
    ++unit;
  }
  char out[32];
  if (unit == 0) {
    std::snprintf(out, sizeof out, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(out, sizeof out, "%.2f %s", v, units[unit]);
  }
  return out;
}

std::string string_field(bson::document_view d, std::string_view key) {
  const auto e = d.find(key);
  return e ? std::string(e->get_string().value_or("")) : std::string();
}

// ---- databases ------------------------------------------------------------------------------

void run_databases(context& ctx, const std::string& uri_text, bool json) {
  auto c = make_client(ctx, uri_text);
  if (!c) return;
  auto list = c->list_databases();
  if (!list) return report(ctx, list.error());
  std::sort(list->begin(), list->end(), [](const bson::document& a, const bson::document& b) {
    return string_field(a.view(), "name") < string_field(b.view(), "name");
  });
  if (json) {
    document_output out(ctx);
    for (const auto& d : *list) out.json_line(d.view());
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : *list) {
    const auto size = number_field(d.view(), "sizeOnDisk");
    rows.push_back({string_field(d.view(), "name"), size ? size_text(*size) : "-"});
  }
  print_columns(ctx, rows, "lr");
}

// ---- collections ----------------------------------------------------------------------------

void run_collections(context& ctx, const std::string& uri_text, const std::string& db_name,
                     bool json) {
  if (const auto problem = database_name_problem(db_name); !problem.empty()) {
    ctx.err << "oid: DB " << quote(db_name) << ": " << problem << '\n';
    return ctx.bad_input();
  }
  auto c = make_client(ctx, uri_text);
  if (!c) return;
  auto db = c->database(db_name);
  auto list = db.list_collections();
  if (!list) return report(ctx, list.error());
  std::sort(list->begin(), list->end(), [](const bson::document& a, const bson::document& b) {
    return string_field(a.view(), "name") < string_field(b.view(), "name");
  });
  std::vector<std::vector<std::string>> rows;
  if (!json) rows.push_back({"NAME", "TYPE", "DOCUMENTS", "SIZE", "STORAGE", "INDEXES"});
  document_output out(ctx);
  for (const auto& entry : *list) {
    const std::string name = string_field(entry.view(), "name");
    std::string type = string_field(entry.view(), "type");
    if (type.empty()) type = "collection";
    // collStats on each collection (a view has none): counts and sizes; a refusal (an old or a
    // partial server) leaves them out, for this collection only.
    std::optional<bson::document> stats;
    if (type != "view") {
      bson::builder cmd;
      cmd.append_string("collStats", name);
      if (auto r = db.run_command(cmd.view())) stats = std::move(*r);
    }
    const auto field = [&](std::string_view key) {
      return stats ? number_field(stats->view(), key) : std::nullopt;
    };
    if (json) {
      bson::builder line;
      line.append_string("name", name).append_string("type", type);
      for (const char* key : {"count", "size", "storageSize", "totalIndexSize", "nindexes"}) {
        if (const auto v = field(key)) line.append_int64(key, *v);
      }
      out.json_line(line.view());
      continue;
    }
    const auto count = field("count");
    const auto size = field("size");
    const auto storage = field("storageSize");
    const auto indexes = field("totalIndexSize");
    rows.push_back({name, type, count ? std::to_string(*count) : "-", size ? size_text(*size) : "-",
                    storage ? size_text(*storage) : "-", indexes ? size_text(*indexes) : "-"});
  }
  if (!json) print_columns(ctx, rows, "llrrrr");
}

// ---- run ------------------------------------------------------------------------------------

struct run_cli_options {
  std::string uri, db, command;
  bool pretty = false, canonical = false;
};

void run_run(context& ctx, const run_cli_options& o) {
  if (const auto problem = database_name_problem(o.db); !problem.empty()) {
    ctx.err << "oid: DB " << quote(o.db) << ": " << problem << '\n';
    return ctx.bad_input();
  }
  auto command = json_argument(ctx, "COMMAND", o.command);
  if (!command) return;
  if (command->view().begin() == command->view().end()) {
    ctx.err << "oid: COMMAND: an empty document names no command, e.g. '{\"dbStats\": 1}'\n";
    return ctx.bad_input();
  }
  // --readPreference (a connection flag, also the client's default) for this one command.
  std::optional<mongo::read_preference> where;
  if (!ctx.connection.read_preference.empty()) {
    auto rp = parse_read_preference(ctx.connection.read_preference);
    if (!rp) {
      ctx.err << "oid: " << rp.error() << '\n';
      ctx.status = exit_usage;
      return;
    }
    where = std::move(*rp);
  }
  auto c = make_client(ctx, o.uri);
  if (!c) return;
  auto db = c->database(o.db);
  auto reply = where ? db.run_command(command->view(), *where) : db.run_command(command->view());
  if (!reply) return report(ctx, reply.error());
  bson::json_options options;
  options.mode = o.canonical ? bson::json_mode::canonical : bson::json_mode::relaxed;
  options.pretty = o.pretty;
  document_output(ctx).json_line(reply->view(), options);
}

}  // namespace

void add_mongo_admin_commands(CLI::App& mongo, context& ctx) {
  {
    auto uri = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto* cmd = mongo.add_subcommand("databases", "List the databases and their sizes on disk");
    add_uri_options(*cmd, ctx, *uri);
    cmd->add_flag("--json", *json,
                  "Each database as the server describes it, an Extended JSON line");
    cmd->final_callback([&ctx, uri, json] { run_databases(ctx, *uri, *json); });
  }
  {
    auto uri = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto* cmd = mongo.add_subcommand(
        "collections", "List a database's collections and views: type, documents, sizes");
    add_uri_options(*cmd, ctx, *uri);
    cmd->add_option("DB", *db, "The database, e.g. shop")->required();
    cmd->add_flag("--json", *json,
                  "One Extended JSON line per collection (name, type, count, size, storageSize, "
                  "totalIndexSize, nindexes)");
    cmd->final_callback([&ctx, uri, db, json] { run_collections(ctx, *uri, *db, *json); });
  }
  {
    auto o = std::make_shared<run_cli_options>();
    auto* cmd = mongo.add_subcommand(
        "run", "Run any command (Extended JSON) on DB; print the reply as Extended JSON");
    add_uri_options(*cmd, ctx, o->uri);
    cmd->add_option("DB", o->db, "The database the command runs on, e.g. admin")->required();
    cmd->add_option("COMMAND", o->command, "The command, e.g. '{\"dbStats\": 1}'")->required();
    cmd->add_flag("--pretty", o->pretty, "One field per line, indented");
    cmd->add_flag("--canonical", o->canonical,
                  "Canonical Extended JSON (every number typed) instead of relaxed");
    cmd->final_callback([&ctx, o] { run_run(ctx, *o); });
  }
}

}  // namespace oid::cli
