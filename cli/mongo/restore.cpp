// oid mongo restore: a directory in mongodump's layout (DIR/DB/COLL.bson and
// DIR/DB/COLL.metadata.json, each maybe gzip-compressed) back into a server: the collection's
// options, its documents, then its indexes. Every refused document is reported with its file,
// index and offset, and a corrupt or truncated file with the offset where reading stopped.
#include "mongo/restore.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <istream>
#include <iterator>
#include <map>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/stream_reader.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/server_codes.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "mongo/loader.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

namespace fs = std::filesystem;

struct restore_options {
  std::string uri, dir = "dump", write_concern;
  mongo::write_concern parsed_write_concern;  // of --writeConcern
  restore_filter filter;
  bool drop = false;
  bool no_index_restore = false;
  bool ordered = false;
  bool w0 = false;
  bool keep_going = false;
  bool quiet = false;
  std::size_t jobs = 4;
};

// `pattern` against `text`: '*' matches any run of characters, '\' makes the next one literal.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() &&
               (pattern[p] == '\\' && p + 1 < pattern.size() ? pattern[p + 1] == text[t]
                                                             : pattern[p] == text[t])) {
      p += pattern[p] == '\\' && p + 1 < pattern.size() ? 2 : 1;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The percent-escapes of a file name undone (%2F is '/', as `oid mongo dump` and mongodump write).
std::string unescape(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto hex = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    if (name[i] == '%' && i + 2 < name.size() + 0 && hex(name[i + 1]) >= 0 &&
        hex(name[i + 2]) >= 0) {
      out += static_cast<char>(hex(name[i + 1]) * 16 + hex(name[i + 2]));
      i += 2;
    } else {
      out += name[i];
    }
  }
  return out;
}

// The collection a file belongs to and which file it is, from its name; false for other files.
bool classify(const std::string& file, std::string& collection, bool& is_metadata) {
  for (const std::string_view suffix :
       {".metadata.json.gz", ".metadata.json", ".bson.gz", ".bson"}) {
    if (file.size() > suffix.size() && file.ends_with(suffix)) {
      collection = unescape(std::string_view(file).substr(0, file.size() - suffix.size()));
      is_metadata = suffix.starts_with(".metadata");
      return true;
    }
  }
  return false;
}

// The jobs of DIR: one per collection of each database directory, in name order. A database
// directory whose name MongoDB would refuse, and a symbolic link where a directory or a file
// should be, are not read (each is said in `skipped`): nothing is read from outside DIR. The
// error says which directory cannot be read.
result<std::vector<std::unique_ptr<restore_job>>, std::string> find_jobs(
    const fs::path& dir, std::ostringstream& skipped) {
  std::map<std::pair<std::string, std::string>, std::unique_ptr<restore_job>> found;
  std::error_code e;
  for (fs::directory_iterator db(dir, e), end; !e && db != end; db.increment(e)) {
    std::error_code s;
    if (db->is_symlink(s)) {
      skipped << "oid: mongo restore: " << db->path().string()
              << ": a symbolic link, not followed\n";
      continue;
    }
    if (!db->is_directory(s)) continue;
    const std::string db_name = db->path().filename().string();
    if (const auto problem = database_name_problem(db_name); !problem.empty()) {
      skipped << "oid: mongo restore: " << db->path().string() << ": not restored: " << problem
              << '\n';
      continue;
    }
    std::error_code f;
    for (fs::directory_iterator file(db->path(), f); !f && file != end; file.increment(f)) {
      std::string coll;
      bool is_metadata = false;
      if (!classify(file->path().filename().string(), coll, is_metadata)) continue;
      if (file->is_symlink(s)) {
        skipped << "oid: mongo restore: " << file->path().string()
                << ": a symbolic link, not followed\n";
        continue;
      }
      if (!file->is_regular_file(s)) continue;
      auto& j = found[{db_name, coll}];
      if (!j) {
        j = std::make_unique<restore_job>();
        j->db = db_name;
        j->name = coll;
      }
      (is_metadata ? j->metadata : j->data) = file->path();
    }
    if (f) {
      return "cannot read " + db->path().string() + ": " + f.message();
    }
  }
  if (e) {
    return "cannot read " + dir.string() + ": " + e.message();
  }
  std::vector<std::unique_ptr<restore_job>> jobs;
  for (auto& [key, j] : found) jobs.push_back(std::move(j));
  return jobs;
}

// The metadata document of `path` (plain or gzip), or nullopt with the error in `j`.
std::optional<bson::document> read_metadata(const fs::path& path, restore_job& j) {
  source_buf buf;
  if (!buf.open(path)) {
    j.messages << "oid: " << buf.error() << '\n';
    return std::nullopt;
  }
  std::istream in(&buf);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const auto err = buf.error(); !err.empty()) {
    j.messages << "oid: " << path.string() << ": " << err << '\n';
    return std::nullopt;
  }
  auto doc = bson::from_json(text);
  if (!doc) {
    const auto where = bson::position_of(text, doc.error().offset);
    j.messages << "oid: " << path.string() << ": line " << where.line << ", column " << where.column
               << ": " << doc.error().message() << " (not Extended JSON metadata)\n";
    return std::nullopt;
  }
  return std::move(*doc);
}

// The collection, created with the metadata's options (for a view, its definition) unless it
// exists. False when the server refused.
bool create_collection(mongo::client& client, restore_job& j, bson::document_view options) {
  bson::builder cmd;
  cmd.append_string("create", j.name);
  for (const auto& e : options) cmd.append_element(e);
  auto r = client.run_command(j.db, cmd.view());
  if (!r &&
      !(r.error().server && r.error().server->code == oid::mongo::server_code::namespace_exists)) {
    j.messages << "oid: " << j.db << '.' << j.name
               << ": create with the metadata's options: " << r.error().message << '\n';
    return false;
  }
  return true;
}

// Inserts the documents of j.data in batches; reports each refused document and the place where
// the file cannot be read on. False when the file stopped early.
bool restore_documents(mongo::collection& coll, const restore_options& o, restore_job& j,
                       progress_line& bar) {
  source_buf buf;
  if (!buf.open(j.data)) {
    j.messages << "oid: " << buf.error() << '\n';
    return false;
  }
  std::istream in(&buf);
  bson::stream_reader reader(in);
  batch_loader::settings settings;
  settings.max_bytes = 16 * 1024 * 1024;
  settings.insert.ordered = o.ordered;
  settings.insert.write_concern = o.parsed_write_concern;
  if (o.w0) settings.insert.write_concern = mongo::write_concern::unacknowledged();
  const std::string file = j.data.string();

  std::vector<std::uint64_t> offsets;  // of each pending document in the (uncompressed) file
  std::vector<std::size_t> indexes;    // and its 0-based index there
  const auto report_batch = [&](const loaded_batch& b) {
    bar.add(b.documents.size(), b.bytes);
    j.documents += b.inserted;
    if (b.failed == nullptr && b.refused.empty()) j.bytes += b.bytes;
    if (b.failed != nullptr) {
      j.messages << "oid: " << file << ": inserting documents " << indexes.front() << " to "
                 << indexes.back() << ": " << b.failed->message << '\n';
    }
    for (const auto& r : b.refused) {
      j.messages << "oid: " << file << ": document " << indexes[r.index] << " (offset "
                 << offsets[r.index] << "): " << (r.duplicate ? "duplicate key: " : "refused: ")
                 << r.message << '\n';
      ++(r.duplicate ? j.duplicates : j.refused);
    }
    if (b.stopped_at) {
      j.messages << "oid: " << file << ": stopped at document " << indexes[*b.stopped_at]
                 << " (--ordered); the documents after it are not restored\n";
    }
    offsets.clear();
    indexes.clear();
  };
  batch_loader loader(coll, settings, report_batch);

  while (!loader.stopped()) {
    auto more = reader.next();
    if (!more) {
      loader.flush();  // the documents before the bad one go in
      j.messages << "oid: " << file << ": document " << reader.index() << " at offset "
                 << reader.document_offset() << ": " << more.error().message() << " (offset "
                 << more.error().offset << ")";
      if (buf.compressed()) j.messages << " of the uncompressed data";
      if (const auto err = buf.error(); !err.empty()) j.messages << "; " << err;
      if (o.keep_going && reader.can_continue()) {
        j.messages << "; skipped (--keepGoing)\n";
        j.failed = true;
        continue;
      }
      j.messages << "; the rest of the file is not restored\n";
      return false;
    }
    if (!*more) break;
    offsets.push_back(reader.document_offset());
    indexes.push_back(reader.index());
    loader.add(bson::document(reader.current()));
  }
  const bool stopped = !loader.flush();
  if (const auto err = buf.error(); !err.empty()) {
    j.messages << "oid: " << file << ": " << err << " after offset " << reader.bytes_read()
               << " of the uncompressed data; the rest of the file is not restored\n";
    return false;
  }
  return !stopped;
}

// The indexes of the metadata but _id_, created in one command.
bool restore_indexes(mongo::collection& coll, restore_job& j, bson::document_view metadata) {
  const auto list = metadata.find("indexes");
  if (!list) return true;
  auto arr = list->get_array();
  if (!arr) {
    j.messages << "oid: " << j.metadata.string() << ": \"indexes\" is not an array\n";
    return false;
  }
  std::vector<mongo::index_model> models;
  for (const auto& e : *arr) {
    auto spec = e.get_document();
    std::optional<bson::document_view> keys;
    if (spec) {
      if (const auto k = spec->find("key")) {
        if (auto d = k->get_document()) keys = *d;
      }
    }
    if (!keys) {
      j.messages << "oid: " << j.metadata.string() << ": an index without a \"key\" document\n";
      return false;
    }
    const auto name = spec->find("name");
    const std::string n(name ? name->get_string().value_or("") : "");
    if (n == "_id_") continue;
    mongo::index_model m;
    m.keys = *keys;
    m.options.name = n;
    m.options.extra = *spec;
    models.push_back(std::move(m));
  }
  if (models.empty()) return true;
  auto made = coll.create_indexes(models);
  if (!made) {
    j.messages << "oid: " << j.db << '.' << j.name << ": creating " << models.size()
               << " indexes: " << made.error().message << '\n';
    return false;
  }
  return true;
}

void restore_one(mongo::client& client, const restore_options& o, restore_job& j,
                 progress_line& bar) {
  if (j.failed) return;  // its metadata or its name was refused (said in j.messages)
  const auto& metadata = j.meta;
  const auto meta = metadata ? metadata->view() : bson::document_view();
  const auto type = meta.find("type");
  const bool view = type && type->get_string().value_or("") == "view";
  auto coll = client.collection(j.db, j.name);
  if (o.drop) {
    if (auto d = coll.drop(); !d) {
      j.messages << "oid: " << j.db << '.' << j.name << ": drop: " << d.error().message << '\n';
      j.failed = true;
      return;
    }
  }
  bson::document_view options;
  if (const auto opt = meta.find("options")) options = opt->get_document().value_or(options);
  if (metadata && !create_collection(client, j, options)) j.failed = true;
  if (view) return;
  if (!j.data.empty() && !restore_documents(coll, o, j, bar)) j.failed = true;
  if (!o.no_index_restore && metadata && !restore_indexes(coll, j, meta)) j.failed = true;
}

void run_restore(context& ctx, restore_options o) {
  if (!o.write_concern.empty()) {
    auto wc = write_concern_argument(ctx, o.write_concern);
    if (!wc) return;
    if (o.w0 && !(wc->w == 0)) {
      ctx.err << "oid: mongo restore: --w0 and --writeConcern " << quote(o.write_concern)
              << " differ: give one of them\n";
      return ctx.bad_input();
    }
    o.parsed_write_concern = *wc;
    o.w0 = o.w0 || !wc->is_acknowledged();  // w: 0 is --w0, with its summary
  }
  auto plan = plan_restore(o.dir, o.filter);
  if (!plan.error.empty()) {
    ctx.err << "oid: mongo restore: " << printable(plan.error) << '\n';
    return ctx.bad_input();
  }
  ctx.err << printable(plan.refused + plan.left_out, true);
  if (!plan.refused.empty()) ctx.bad_input();
  auto& jobs = plan.jobs;
  if (jobs.empty()) {
    ctx.err << "oid: mongo restore: nothing to restore in " << o.dir
            << " (expected DIR/DB/COLL.bson and DIR/DB/COLL.metadata.json)\n";
    return ctx.bad_input();
  }
  auto client = make_client(ctx, o.uri);
  if (!client) return;
  const auto start = std::chrono::steady_clock::now();
  {
    // The estimated total: the sizes of the .bson files (compressed ones count as they are).
    std::uint64_t total = 0;
    for (const auto& j : jobs) {
      std::error_code e;
      const auto size = j->data.empty() ? 0 : fs::file_size(j->data, e);
      if (!e) total += size;
    }
    progress_line bar(ctx, o.quiet, total);
    run_parallel(jobs.size(), o.jobs,
                 [&](std::size_t i) { restore_one(*client, o, *jobs[i], bar); });
  }

  std::uint64_t documents = 0, bytes = 0, duplicates = 0, refused = 0, failed = 0;
  for (const auto& j : jobs) {
    ctx.err << printable(j->messages.str(), true);
    documents += j->documents;
    bytes += j->bytes;
    duplicates += j->duplicates;
    refused += j->refused;
    if (j->failed || j->duplicates > 0 || j->refused > 0) ++failed;
    if (!o.quiet) {
      ctx.err << printable(j->db + '.' + j->name) << ": " << j->documents << " documents";
      if (j->duplicates > 0) ctx.err << ", " << j->duplicates << " duplicate keys";
      if (j->refused > 0) ctx.err << ", " << j->refused << " refused";
      if (j->failed) ctx.err << " (incomplete: see the errors)";
      ctx.err << '\n';
    }
  }
  if (failed > 0) ctx.bad_input();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.quiet) return;  // errors only
  ctx.err << "restored " << documents << " documents, " << bytes << " bytes, to " << jobs.size()
          << " collections in " << std::fixed << std::setprecision(2) << seconds << " s";
  if (o.w0) ctx.err << " (w: 0, not acknowledged)";
  ctx.err << "; " << duplicates << " duplicate keys, " << refused << " other refusals, " << failed
          << " collections with errors\n";
}

}  // namespace

restore_plan plan_restore(const fs::path& dir, const restore_filter& filter) {
  restore_plan plan;
  std::ostringstream refused;
  auto found = find_jobs(dir, refused);
  plan.refused = refused.str();
  if (!found) {
    plan.error = std::move(found).error();
    return plan;
  }
  plan.jobs = std::move(*found);
  auto& jobs = plan.jobs;
  // The namespace each job writes: the metadata's collectionName when it has one (mongodump
  // writes it for names a file cannot hold), else the file's. The filters, --drop and the checks
  // below all see that name, never the file's alone.
  for (auto& j : jobs) {
    if (!j->metadata.empty()) {
      j->meta = read_metadata(j->metadata, *j);
      if (!j->meta) {
        j->messages << "oid: " << j->db << '.' << j->name << " not restored\n";
        j->failed = true;
        continue;
      }
      const auto n = j->meta->view().find("collectionName");
      if (n && n->get_string() && !n->get_string()->empty()) j->name = *n->get_string();
    }
    if (const auto problem = collection_name_problem(j->db, j->name); !problem.empty()) {
      j->messages << "oid: " << quote(j->name) << " in " << j->db << " not restored: " << problem
                  << '\n';
      j->failed = true;
    }
  }
  // system.* collections (admin's users and roles among them) only when asked for.
  std::erase_if(jobs, [&](const auto& j) {
    if (filter.users_and_roles || j->failed || !j->name.starts_with("system.")) return false;
    plan.left_out += "oid: mongo restore: " + j->db + '.' + j->name +
                     " not restored (system collections, users and roles among them, need "
                     "--restoreDbUsersAndRoles)\n";
    return true;
  });
  // --nsInclude / --nsExclude on the DB.COLL that is written.
  std::erase_if(jobs, [&](const auto& j) { return !filter.selects(j->db + '.' + j->name); });
  return plan;
}

bool restore_filter::selects(const std::string& ns) const {
  const auto match = [&](const std::string& p) { return glob_match(p, ns); };
  if (!include.empty() && std::none_of(include.begin(), include.end(), match)) return false;
  return std::none_of(exclude.begin(), exclude.end(), match);
}

void add_mongo_restore_command(CLI::App& mongo, context& ctx) {
  auto o = std::make_shared<restore_options>();
  auto* cmd = mongo.add_subcommand(
      "restore", "Restore a directory in mongodump's layout (DIR/DB/COLL.bson[.gz], metadata)");
  add_uri_options(*cmd, ctx, o->uri);
  cmd->add_option("DIR,--dir", o->dir, "The directory a dump wrote (default: dump)");
  cmd->add_flag("--drop", o->drop, "Drop each collection before restoring it");
  cmd->add_option("--nsInclude", o->filter.include,
                  "Only DB.COLL matching this pattern ('*': any text)")
      ->allow_extra_args(false);
  cmd->add_option("--nsExclude", o->filter.exclude, "Not DB.COLL matching this pattern")
      ->allow_extra_args(false);
  cmd->add_flag("--noIndexRestore", o->no_index_restore, "Do not create the metadata's indexes");
  cmd->add_flag("--ordered,--stopOnError,--maintainInsertionOrder", o->ordered,
                "Insert in file order and stop a file at its first refused document");
  cmd->add_flag("--w0", o->w0, "Fire-and-forget (write concern w: 0): nothing is acknowledged");
  cmd->add_option("--writeConcern", o->write_concern,
                  "majority, a number, a tag, or {\"w\": ..., \"j\": true, \"wtimeout\": MS}");
  cmd->add_flag("--keepGoing,--keep-going", o->keep_going,
                "Skip a corrupt document whose length is sane and go on with the file");
  cmd->add_flag("--restoreDbUsersAndRoles", o->filter.users_and_roles,
                "Also restore system.* collections (admin.system.users, admin.system.roles, ...): "
                "they change who may log in and what they may do");
  cmd->add_option("-j,--jobs,--numParallelCollections", o->jobs,
                  "Collections restored at once (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--quiet", o->quiet,
                "No progress, no line per collection, no summary: errors only");
  cmd->final_callback([&ctx, o] { run_restore(ctx, *o); });
}

}  // namespace oid::cli
