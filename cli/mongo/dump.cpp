// oid mongo dump: collections to files in mongodump's layout, DIR/DB/COLL.bson (the documents as
// the server sent them, one after the other) and DIR/DB/COLL.metadata.json (indexes, options,
// uuid, collection name and type, as canonical Extended JSON), optionally gzip-compressed.
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

namespace fs = std::filesystem;

struct dump_options {
  std::string uri, db, collection, out = "dump", query, since, until;
  bool gzip = false;
  bool quiet = false;
  std::size_t jobs = 4;
};

// One collection (or view) to dump, and what became of it.
struct dump_job {
  std::string db, name, type;
  bson::document options;
  std::string uuid;  // 32 hex digits, or empty
  std::uint64_t documents = 0, bytes = 0;
  std::string error;  // empty when the dump went well
};

// A collection name (checked by collection_name_problem: no NUL, not "." or "..") as a file name:
// '/' (and '%', so that the escape reads back) percent-encoded.
std::string file_name_of(std::string_view collection) {
  std::string out;
  for (const char c : collection) {
    if (c == '/') {
      out += "%2F";
    } else if (c == '%') {
      out += "%25";
    } else {
      out += c;
    }
  }
  return out;
}

// The job of one listCollections entry: name, type (collection or view), options, uuid.
dump_job job_of(const std::string& db, bson::document_view entry) {
  dump_job j;
  j.db = db;
  if (const auto n = entry.find("name")) j.name = std::string(n->get_string().value_or(""));
  j.type = "collection";
  if (const auto t = entry.find("type")) j.type = std::string(t->get_string().value_or(j.type));
  if (const auto o = entry.find("options")) {
    if (auto d = o->get_document()) j.options = bson::document(*d);
  }
  if (const auto info = entry.find("info")) {
    if (auto d = info->get_document()) {
      if (const auto u = d->find("uuid")) {
        if (auto b = u->get_binary()) {
          static constexpr char hex[] = "0123456789abcdef";
          for (const auto byte : b->bytes) {
            j.uuid += hex[byte >> 4];
            j.uuid += hex[byte & 15];
          }
        }
      }
    }
  }
  return j;
}

// The metadata file's text: {"options":..., "indexes":[...], "uuid":..., "collectionName":...,
// "type":...} in canonical Extended JSON, options and uuid left out when empty (as mongodump).
std::string metadata_json(const dump_job& j, const std::vector<bson::document>& indexes) {
  bson::builder m;
  if (!j.options.empty()) m.append_document("options", j.options.view());
  m.open_array("indexes");
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    m.append_document(std::to_string(i), indexes[i].view());
  }
  m.close();
  if (!j.uuid.empty()) m.append_string("uuid", j.uuid);
  m.append_string("collectionName", j.name).append_string("type", j.type);
  return bson::to_json(m.view(), bson::json_mode::canonical);
}

void dump_one(mongo::client& client, const dump_options& o, bson::document_view filter, dump_job& j,
              progress_line& bar) {
  const fs::path dir = fs::path(o.out) / j.db;
  const std::string base = file_name_of(j.name);
  const std::string gz = o.gzip ? ".gz" : "";
  auto coll = client.collection(j.db, j.name);
  std::vector<bson::document> indexes;
  if (j.type != "view") {
    auto listed = coll.list_indexes();
    if (!listed) {
      j.error = "listIndexes: " + listed.error().message;
      return;
    }
    indexes = std::move(*listed);
  }
  // Views: only the metadata (the view's definition), as mongodump writes by default.
  if (j.type != "view") {
    file_sink data;
    if (!data.open(dir / (base + ".bson" + gz), o.gzip)) {
      j.error = data.error();
      return;
    }
    auto cur = coll.find(filter);
    if (!cur) {
      j.error = "find: " + cur.error().message;
      return;
    }
    while (true) {
      auto more = cur->next();
      if (!more) {
        j.error = "after " + std::to_string(j.documents) + " documents: " + more.error().message;
        return;
      }
      if (!*more) break;
      const auto doc = cur->current();
      if (!data.write({reinterpret_cast<const char*>(doc.data()), doc.size()})) {
        j.error = data.error();
        return;
      }
      ++j.documents;
      j.bytes += doc.size();
      bar.add(1, doc.size());
    }
    if (!data.commit()) {
      j.error = data.error();
      return;
    }
  }
  file_sink meta;
  const std::string text = metadata_json(j, indexes);
  if (!meta.open(dir / (base + ".metadata.json" + gz), o.gzip) || !meta.write(text) ||
      !meta.commit()) {
    j.error = meta.error();
  }
}

void run_dump(context& ctx, const dump_options& o) {
  if (!o.collection.empty() && o.db.empty()) {
    ctx.err << "oid: mongo dump: --collection needs --db\n";
    ctx.status = exit_usage;
    return;
  }
  const auto filter = created_filter_argument(ctx, "--query", o.query, o.since, o.until);
  if (!filter) return;
  auto client = make_client(ctx, o.uri);
  if (!client) return;
  const auto start = std::chrono::steady_clock::now();

  std::vector<std::string> dbs;
  if (!o.db.empty()) {
    dbs.push_back(o.db);
  } else {
    auto listed = client->list_databases();
    if (!listed) return report(ctx, listed.error());
    for (const auto& d : *listed) {
      const auto n = d.view().find("name");
      const std::string name(n ? n->get_string().value_or("") : "");
      if (name != "local" && name != "config") dbs.push_back(name);
    }
  }
  // A name becomes a directory under --out: one no server could hold (a "..", a path, a NUL) is
  // refused here, and the others are still dumped.
  std::erase_if(dbs, [&](const std::string& name) {
    const auto problem = database_name_problem(name);
    if (problem.empty()) return false;
    ctx.err << "oid: mongo dump: skipping database " << quote(name) << ": " << problem << '\n';
    ctx.bad_input();
    return true;
  });
  std::vector<dump_job> jobs;
  for (const auto& db : dbs) {
    auto listed = client->list_collections(db);
    if (!listed) return report(ctx, listed.error());
    bool found = false;
    for (const auto& entry : *listed) {
      auto j = job_of(db, entry.view());
      if (j.name.starts_with("system.")) continue;
      if (!o.collection.empty() && j.name != o.collection) continue;
      if (const auto problem = collection_name_problem(db, j.name); !problem.empty()) {
        ctx.err << "oid: mongo dump: skipping collection " << quote(j.name) << " of database "
                << printable(db) << ": " << problem << '\n';
        ctx.bad_input();
        continue;
      }
      found = true;
      jobs.push_back(std::move(j));
    }
    if (!o.collection.empty() && !found) {
      ctx.err << "oid: mongo dump: no collection " << o.collection << " in database " << db << '\n';
      return ctx.bad_input();
    }
  }
  // --out is the user's (a link there is followed); what is made inside it is 0700, and a
  // database's directory that is a symbolic link is refused, not followed.
  {
    std::error_code e;
    const fs::path out(o.out);
    if (!fs::is_directory(out, e)) {
      if (out.has_parent_path()) fs::create_directories(out.parent_path(), e);
      if (const auto problem = make_private_directory(out); !problem.empty()) {
        ctx.err << "oid: mongo dump: " << printable(problem) << '\n';
        return ctx.bad_input();
      }
    }
  }
  for (const auto& db : dbs) {
    if (const auto problem = make_private_directory(fs::path(o.out) / db); !problem.empty()) {
      ctx.err << "oid: mongo dump: " << printable(problem) << '\n';
      return ctx.bad_input();
    }
  }

  {
    // The estimated total (the collections' counts) when every document is dumped.
    std::uint64_t total = 0;
    if (progress_line::shows(ctx, o.quiet) && filter->view().empty()) {
      for (const auto& j : jobs) {
        if (j.type == "view") continue;
        const auto n = client->collection(j.db, j.name).estimated_document_count();
        if (n && *n > 0) total += static_cast<std::uint64_t>(*n);
      }
    }
    progress_line bar(ctx, o.quiet, 0, total);
    run_parallel(jobs.size(), o.jobs,
                 [&](std::size_t i) { dump_one(*client, o, filter->view(), jobs[i], bar); });
  }

  std::uint64_t documents = 0, bytes = 0, failed = 0;
  for (const auto& j : jobs) {
    if (!j.error.empty()) {
      ctx.err << "oid: mongo dump: " << printable(j.db + '.' + j.name + ": " + j.error) << '\n';
      ++failed;
      continue;
    }
    documents += j.documents;
    bytes += j.bytes;
    if (!o.quiet) {
      ctx.err << printable(j.db + '.' + j.name) << ": ";
      if (j.type == "view") {
        ctx.err << "view (definition only)\n";
      } else {
        ctx.err << j.documents << " documents, " << j.bytes << " bytes\n";
      }
    }
  }
  if (failed > 0) ctx.bad_input();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.quiet) return;  // errors only
  ctx.err << "dumped " << documents << " documents, " << bytes << " bytes, from "
          << jobs.size() - failed << " of " << jobs.size() << " collections in " << std::fixed
          << std::setprecision(2) << seconds << " s";
  if (failed > 0) ctx.err << "; " << failed << " failed";
  ctx.err << '\n';
}

}  // namespace

void add_mongo_dump_command(CLI::App& mongo, context& ctx) {
  auto o = std::make_shared<dump_options>();
  auto* cmd = mongo.add_subcommand(
      "dump", "Write collections to DIR/DB/COLL.bson and .metadata.json (mongodump's layout)");
  add_uri_options(*cmd, ctx, o->uri);
  cmd->add_option("-d,--db", o->db, "Only this database (default: all but local and config)");
  cmd->add_option("-c,--collection", o->collection, "Only this collection (needs --db)");
  cmd->add_option("-o,--out", o->out, "The directory to write to (default: dump)");
  cmd->add_flag("--gzip", o->gzip, "Compress the files (.bson.gz, .metadata.json.gz)");
  cmd->add_option("-q,--query", o->query, "Only documents matching this Extended JSON filter");
  cmd->add_option("--since", o->since, "Only documents whose ObjectId _id is from this time on");
  cmd->add_option("--until", o->until, "Only documents whose ObjectId _id is before this time");
  cmd->add_option("-j,--jobs,--numParallelCollections", o->jobs,
                  "Collections dumped at once (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--quiet", o->quiet,
                "No progress, no line per collection, no summary: errors only");
  cmd->final_callback([&ctx, o] { run_dump(ctx, *o); });
}

}  // namespace oid::cli
