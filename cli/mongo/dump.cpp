// oid mongo dump: collections to files in mongodump's layout, DIR/DB/COLL.bson (the documents as
// the server sent them, one after the other) and DIR/DB/COLL.metadata.json (indexes, options,
// uuid, collection name and type, as canonical Extended JSON), optionally gzip-compressed; or,
// with --archive, to one mongodump archive (archive.hpp) in a file or on standard output.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <map>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mongo/archive.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

namespace fs = std::filesystem;

struct dump_options {
  std::string uri, db, collection, out = "dump", query, query_file, since, until;
  std::vector<std::string> exclude, exclude_prefixes;  // --excludeCollection[sWithPrefix]
  bool views_as_collections = false;
  std::string archive;  // --archive[=FILE]: "-" is standard output; empty: a directory
  bool out_given = false;
  bool gzip = false;
  bool quiet = false;
  std::size_t jobs = 4;
};

// One collection (or view) to dump, and what became of it.
struct dump_job {
  std::string db, name, type;
  bson::document options;
  std::string uuid;        // 32 hex digits, or empty
  bool from_view = false;  // a view dumped as a collection (--viewsAsCollections): no indexes
  std::uint64_t documents = 0, bytes = 0;
  std::string error;       // empty when the dump went well
  bool timed_out = false;  // the error is a time limit's (its hint follows it)
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

// The collection's documents matching `filter`, each as the server sent it, to `put` (which
// returns false, with j.error set, when it cannot take one). False, with j.error, when reading or
// `put` failed.
template <class Put>
bool read_documents(mongo::collection& coll, bson::document_view filter, dump_job& j,
                    progress_line& bar, Put&& put) {
  // Each getMore under the stall limit afresh, not the whole cursor under one deadline.
  mongo::find_options fo;
  fo.timeout_mode = mongo::timeout_mode::iteration;
  auto cur = coll.find(filter, fo);
  if (!cur) {
    j.error = "find: " + cur.error().message;
    j.timed_out = cur.error().code == mongo::errc::timeout;
    return false;
  }
  while (true) {
    auto more = cur->next();
    if (!more) {
      j.error = "after " + std::to_string(j.documents) + " documents: " + more.error().message;
      j.timed_out = more.error().code == mongo::errc::timeout;
      return false;
    }
    if (!*more) return true;
    const auto doc = cur->current();
    if (!put(std::span<const std::uint8_t>(doc.data(), doc.size()))) return false;
    ++j.documents;
    j.bytes += doc.size();
    bar.add(1, doc.size());
  }
}

// The collection's indexes (none for a view); false, with j.error, when listIndexes failed.
bool list_indexes(mongo::collection& coll, dump_job& j, std::vector<bson::document>& indexes) {
  if (j.type == "view" || j.from_view) return true;
  auto listed = coll.list_indexes();
  if (!listed) {
    j.error = "listIndexes: " + listed.error().message;
    j.timed_out = listed.error().code == mongo::errc::timeout;
    return false;
  }
  indexes = std::move(*listed);
  return true;
}

// A file name as a case-insensitive file system compares it: ASCII letters folded. (Such file
// systems fold other letters too, and may treat Unicode normalization forms as one: what this
// misses, commit's RENAME_NOREPLACE still refuses to write over.)
std::string folded(std::string_view file_name) {
  std::string out(file_name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Two collections of one database whose files would be one file on a case-insensitive file
// system ("Users" and "users"): the later in the listing is not dumped (its error says why), so
// that neither file is written over, whatever file system --out is on or is copied to later.
void refuse_colliding_files(std::vector<dump_job>& jobs) {
  std::map<std::pair<std::string, std::string>, const dump_job*> taken;  // (db, folded) -> job
  for (auto& j : jobs) {
    const std::string base = file_name_of(j.name);
    const auto [at, fresh] = taken.try_emplace({j.db, folded(base)}, &j);
    if (fresh) continue;
    j.error = "not dumped: its files would be named " + base + ".bson and " + base +
              ".metadata.json, which a case-insensitive file system takes for those of "
              "collection " +
              quote(at->second->name);
  }
}

void dump_one(mongo::client& client, const dump_options& o, bson::document_view filter, dump_job& j,
              progress_line& bar) {
  if (!j.error.empty()) return;  // refused before the dump began
  const fs::path dir = fs::path(o.out) / j.db;
  const std::string base = file_name_of(j.name);
  const std::string gz = o.gzip ? ".gz" : "";
  auto coll = client.collection(j.db, j.name);
  std::vector<bson::document> indexes;
  if (!list_indexes(coll, j, indexes)) return;
  // Views: only the metadata (the view's definition), as mongodump writes by default.
  if (j.type != "view") {
    file_sink data;
    if (!data.open(dir / (base + ".bson" + gz), o.gzip, file_sink::existing::refuse)) {
      j.error = data.error();
      return;
    }
    const bool read = read_documents(coll, filter, j, bar, [&](std::span<const std::uint8_t> d) {
      if (data.write({reinterpret_cast<const char*>(d.data()), d.size()})) return true;
      j.error = data.error();
      return false;
    });
    if (!read) return;
    if (!data.commit()) {
      j.error = data.error();
      return;
    }
  }
  file_sink meta;
  const std::string text = metadata_json(j, indexes);
  if (!meta.open(dir / (base + ".metadata.json" + gz), o.gzip, file_sink::existing::refuse) ||
      !meta.write(text) || !meta.commit()) {
    j.error = meta.error();
  }
}

// The server's version, for the archive's header ("" when buildInfo does not say).
std::string server_version(mongo::client& client) {
  bson::builder cmd;
  cmd.append_int32("buildInfo", 1);
  auto info = client.run_command("admin", cmd.view());
  if (!info) return {};
  const auto v = info->view().find("version");
  return std::string(v ? v->get_string().value_or("") : "");
}

// The jobs into one archive (--archive): the prelude (each collection's metadata, so indexes are
// listed first), then the collections' documents on `o.jobs` threads, interleaved in segments of
// about 1 MiB, each collection ended by its EOF and CRC. A collection that fails is left without
// its EOF, so that a reader sees it unfinished; a file (--archive=FILE) is then not kept at all.
// False when the archive could not be written.
bool dump_archive(context& ctx, mongo::client& client, const dump_options& o,
                  bson::document_view filter, std::vector<dump_job>& jobs, progress_line& bar) {
  std::vector<archive::collection_metadata> prelude;
  std::vector<dump_job*> listed;
  for (auto& j : jobs) {
    auto coll = client.collection(j.db, j.name);
    std::vector<bson::document> indexes;
    if (!list_indexes(coll, j, indexes)) continue;  // reported with the others; not in the archive
    archive::collection_metadata m;
    m.db = j.db;
    m.collection = j.name;
    m.metadata = metadata_json(j, indexes);
    m.type = j.type;
    prelude.push_back(std::move(m));
    listed.push_back(&j);
  }
  archive::header h;
  h.concurrent_collections = static_cast<std::int32_t>(o.jobs);
  h.server_version = server_version(client);
  h.tool_version = std::string("oid ") + OID_VERSION_STRING;

  const bool to_stdout = o.archive == "-";
  std::optional<stream_sink> out;
  file_sink file;
  if (to_stdout) {
    out.emplace(ctx.out, o.gzip);
  } else if (!file.open(o.archive, o.gzip)) {
    ctx.err << "oid: mongo dump: " << printable(file.error()) << '\n';
    return false;
  }
  const auto sink_error = [&] { return to_stdout ? out->error() : file.error(); };
  archive::writer w(
      [&](std::string_view bytes) { return to_stdout ? out->write(bytes) : file.write(bytes); });
  if (!w.write_prelude(h, prelude)) {
    ctx.err << "oid: mongo dump: " << printable(sink_error()) << '\n';
    return false;
  }
  run_parallel(listed.size(), o.jobs, [&](std::size_t i) {
    dump_job& j = *listed[i];
    archive::namespace_writer ns(w, j.db, j.name);
    auto coll = client.collection(j.db, j.name);
    const auto put = [&](std::span<const std::uint8_t> d) {
      if (ns.add(d)) return true;
      j.error = "writing the archive failed";
      return false;
    };
    // A view: its metadata, and an EOF with no data (what mongorestore needs to create it).
    if (j.type != "view" && !read_documents(coll, filter, j, bar, put)) return;
    if (!ns.finish()) j.error = "writing the archive failed";
  });
  const bool any_failed =
      std::any_of(jobs.begin(), jobs.end(), [](const dump_job& j) { return !j.error.empty(); });
  if (to_stdout) {
    if (!out->finish()) {
      ctx.err << "oid: mongo dump: " << printable(out->error()) << '\n';
      return false;
    }
    return true;
  }
  if (any_failed) {
    ctx.err << "oid: mongo dump: " << printable(o.archive)
            << " not written: a collection could not be dumped whole\n";
    return false;
  }
  if (!file.commit()) {
    ctx.err << "oid: mongo dump: " << printable(file.error()) << '\n';
    return false;
  }
  return true;
}

void run_dump(context& ctx, const dump_options& o) {
  if (!o.collection.empty() && o.db.empty()) {
    ctx.err << "oid: mongo dump: --collection needs --db\n";
    ctx.status = exit_usage;
    return;
  }
  if ((!o.exclude.empty() || !o.exclude_prefixes.empty()) &&
      (o.db.empty() || !o.collection.empty())) {
    ctx.err << "oid: mongo dump: --excludeCollection and --excludeCollectionsWithPrefix need "
               "--db, and not --collection\n";
    ctx.status = exit_usage;
    return;
  }
  if (!o.query.empty() && !o.query_file.empty()) {
    ctx.err << "oid: mongo dump: --query and --queryFile: give one of them\n";
    ctx.status = exit_usage;
    return;
  }
  if (!o.archive.empty() && o.out_given) {
    ctx.err << "oid: mongo dump: --out and --archive: give one of them\n";
    ctx.status = exit_usage;
    return;
  }
  if (o.archive == "-" && ctx.out_is_terminal) {
    ctx.err << "oid: mongo dump: standard output is a terminal: give --archive=FILE, or redirect "
               "it to a file or a pipe\n";
    ctx.status = exit_usage;
    return;
  }
  std::string query_name = "--query", query = o.query;
  if (!o.query_file.empty()) {
    auto text = read_argument_file(ctx, "--queryFile", o.query_file);
    if (!text) return;
    query_name = "--queryFile " + o.query_file;
    query = std::move(*text);
  }
  const auto filter = created_filter_argument(ctx, query_name, query, o.since, o.until);
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
      if (std::find(o.exclude.begin(), o.exclude.end(), j.name) != o.exclude.end() ||
          std::any_of(o.exclude_prefixes.begin(), o.exclude_prefixes.end(),
                      [&](const std::string& p) { return j.name.starts_with(p); })) {
        continue;
      }
      if (const auto problem = collection_name_problem(db, j.name); !problem.empty()) {
        ctx.err << "oid: mongo dump: skipping collection " << quote(j.name) << " of database "
                << printable(db) << ": " << problem << '\n';
        ctx.bad_input();
        continue;
      }
      found = true;
      // --viewsAsCollections: a view's documents, as a collection's without options or indexes.
      if (o.views_as_collections && j.type == "view") {
        j.type = "collection";
        j.options = bson::document();
        j.uuid.clear();
        j.from_view = true;
      }
      jobs.push_back(std::move(j));
    }
    if (!o.collection.empty() && !found) {
      ctx.err << "oid: mongo dump: no collection " << o.collection << " in database " << db << '\n';
      return ctx.bad_input();
    }
  }
  // --out is the user's (a link there is followed); what is made inside it is 0700, and a
  // database's directory that is a symbolic link is refused, not followed.
  if (o.archive.empty()) {
    refuse_colliding_files(jobs);
    std::error_code e;
    const fs::path out(o.out);
    if (!fs::is_directory(out, e)) {
      if (out.has_parent_path()) fs::create_directories(out.parent_path(), e);
      if (const auto problem = make_private_directory(out); !problem.empty()) {
        ctx.err << "oid: mongo dump: " << printable(problem) << '\n';
        return ctx.bad_input();
      }
    }
    // An existing --out keeps its mode, but no one else may write in it.
    if (const auto problem = own_directory_problem(out); !problem.empty()) {
      ctx.err << "oid: mongo dump: " << printable(problem) << '\n';
      return ctx.bad_input();
    }
    for (const auto& db : dbs) {
      if (const auto problem = make_private_directory(out / db); !problem.empty()) {
        ctx.err << "oid: mongo dump: " << printable(problem) << '\n';
        return ctx.bad_input();
      }
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
    if (!o.archive.empty()) {
      if (!dump_archive(ctx, *client, o, filter->view(), jobs, bar)) ctx.bad_input();
    } else {
      run_parallel(jobs.size(), o.jobs,
                   [&](std::size_t i) { dump_one(*client, o, filter->view(), jobs[i], bar); });
    }
  }

  std::uint64_t documents = 0, bytes = 0, failed = 0;
  for (const auto& j : jobs) {
    if (!j.error.empty()) {
      ctx.err << "oid: mongo dump: " << printable(j.db + '.' + j.name + ": " + j.error) << '\n';
      if (j.timed_out && ran_out_of_time_limit(ctx, mongo::errc::timeout, j.error)) {
        ctx.err << "oid: mongo dump: " << time_limit_hint(ctx) << '\n';
      }
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
  add_uri_options(*cmd, ctx, o->uri, command_time::batches);
  cmd->add_option("-d,--db", o->db, "Only this database (default: all but local and config)");
  cmd->add_option("-c,--collection", o->collection, "Only this collection (needs --db)");
  auto* out = cmd->add_option("-o,--out", o->out, "The directory to write to (default: dump)")
                  ->type_name("DIR");
  // As mongodump: FILE only after '=', so that a bare --archive never takes the next argument.
  cmd->add_flag("--archive{-}", o->archive,
                "One mongodump archive instead of a directory: --archive=FILE, or standard "
                "output (--archive or --archive=-)")
      ->type_name("[=FILE]");
  cmd->add_flag("--gzip", o->gzip,
                "Compress the files (.bson.gz, .metadata.json.gz), or the whole archive");
  cmd->add_option("-q,--query", o->query, "Only documents matching this Extended JSON filter");
  cmd->add_option("--queryFile", o->query_file, "The --query filter, read from a file")
      ->type_name("FILE");
  cmd->add_option("--excludeCollection", o->exclude, "Not this collection of --db (repeatable)");
  cmd->add_flag("--viewsAsCollections", o->views_as_collections,
                "Dump each view's documents as a collection's (default: its definition only)");
  cmd->add_option("--excludeCollectionsWithPrefix", o->exclude_prefixes,
                  "Not the collections of --db whose names start so (repeatable)");
  cmd->add_option("--since", o->since, "Only documents whose ObjectId _id is from this time on");
  cmd->add_option("--until", o->until, "Only documents whose ObjectId _id is before this time");
  cmd->add_option("-j,--jobs,--numParallelCollections", o->jobs,
                  "Collections dumped at once (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--quiet", o->quiet,
                "No progress, no line per collection, no summary: errors only");
  cmd->final_callback([&ctx, o, out] {
    o->out_given = out->count() > 0;
    run_dump(ctx, *o);
  });
}

}  // namespace oid::cli
