// oid mongo restore: a directory in mongodump's layout (DIR/DB/COLL.bson and
// DIR/DB/COLL.metadata.json, each maybe gzip-compressed), or a mongodump archive (--archive,
// archive.hpp), back into a server: the collection's options, its documents, then its indexes.
// Every refused document is reported with its file (or namespace), index and offset, and a
// corrupt or truncated file or archive with the offset where reading stopped.
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

#include "mongo/archive.hpp"
#include "mongo/loader.hpp"
#include "mongo/name_list.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

namespace fs = std::filesystem;

struct restore_options {
  std::string uri, dir = "dump", write_concern;
  std::string archive;  // --archive[=FILE]: "-" is standard input; empty: the directory
  bool dir_given = false;
  bool gzip = false;  // accepted as mongorestore takes it: compression is detected anyway
  mongo::write_concern parsed_write_concern;  // of --writeConcern
  restore_filter filter;
  restore_target target;  // -d, -c; --nsFrom/--nsTo, from the two below
  std::vector<std::string> ns_from, ns_to;
  bool drop = false;
  bool no_index_restore = false;
  bool no_options_restore = false;  // collections created without the metadata's options
  bool bypass_document_validation = false;
  bool dry_run = false;  // read and check everything; connect to nothing, write nothing
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

// The collections left out because their final namespace needs a flag, for the lines that say
// so: a few named, the rest counted.
struct left_out_lists {
  name_list users_and_roles, local_and_config;
  std::string text() const {
    std::string out;
    if (!users_and_roles.empty()) {
      out += "oid: mongo restore: " + users_and_roles.text() +
             " not restored (system collections, users and roles among them, need "
             "--restoreDbUsersAndRoles)\n";
    }
    if (!local_and_config.empty()) {
      out += "oid: mongo restore: " + local_and_config.text() +
             " not restored (the local and config databases need --restoreLocalAndConfig)\n";
    }
    return out;
  }
};

// What becomes of job `j`, named as in the dump, for a directory and an archive alike: false when
// it is not restored (not selected by --nsInclude/--nsExclude, which see the dump's names; or its
// final namespace needs a flag, added to `left_out`). True when it is kept: renamed by
// --nsFrom/--nsTo into the namespace restore_write_refusal() allows, or failed (its reason in its
// messages: it is reported, never written).
bool place_job(restore_job& j, const restore_filter& filter, const ns_renamer& renames,
               left_out_lists& left_out) {
  const std::string from = j.db + '.' + j.name;
  if (!filter.selects(from)) return false;
  if (j.failed) return true;
  const std::string to = renames.rename(from);
  const bool renamed = to != from;
  const auto dot = to.find('.');
  const auto refusal =
      dot == std::string::npos
          ? write_refusal{write_refusal::bad_name, "it has no '.' between database and collection"}
          : restore_write_refusal(to.substr(0, dot), to.substr(dot + 1), filter);
  switch (refusal.kind) {
  case write_refusal::none: break;
  case write_refusal::bad_name:
    if (renamed) {
      j.messages << "oid: " << from << " not restored: --nsTo makes it " << quote(to) << ": "
                 << refusal.why << '\n';
    } else {
      j.messages << "oid: " << quote(j.name) << " in " << j.db << " not restored: " << refusal.why
                 << '\n';
    }
    j.failed = true;
    return true;
  case write_refusal::needs_users_and_roles:
  case write_refusal::needs_local_and_config:
    (refusal.kind == write_refusal::needs_users_and_roles ? left_out.users_and_roles
                                                          : left_out.local_and_config)
        .add(renamed ? from + " (renamed " + to + ")" : from);
    return false;
  }
  if (renamed) {
    j.from = from;
    j.db = to.substr(0, dot);
    j.name = to.substr(dot + 1);
  }
  return true;
}

using job_map = std::map<std::pair<std::string, std::string>, std::unique_ptr<restore_job>>;

// The collections of one database directory `dir`, restored into database `db_name`, added to
// `found`. A symbolic link where a file should be is not read (said in `skipped`). The error says
// that the directory cannot be read.
result<void, std::string> scan_database(const fs::path& dir, const std::string& db_name,
                                        job_map& found, message_log& skipped) {
  std::error_code f;
  for (fs::directory_iterator file(dir, f), end; !f && file != end; file.increment(f)) {
    std::string coll;
    bool is_metadata = false;
    if (!classify(file->path().filename().string(), coll, is_metadata)) continue;
    std::error_code s;
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
  if (f) return "cannot read " + dir.string() + ": " + f.message();
  return {};
}

// The jobs of DIR: one per collection of each database directory, in name order. A database
// directory whose name MongoDB would refuse, and a symbolic link where a directory or a file
// should be, are not read (each is said in `skipped`): nothing is read from outside DIR. The
// error says which directory cannot be read.
result<std::vector<std::unique_ptr<restore_job>>, std::string> find_jobs(const fs::path& dir,
                                                                         message_log& skipped) {
  job_map found;
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
    if (auto scanned = scan_database(db->path(), db_name, found, skipped); !scanned) {
      return std::move(scanned).error();
    }
  }
  if (e) {
    return "cannot read " + dir.string() + ": " + e.message();
  }
  std::vector<std::unique_ptr<restore_job>> jobs;
  for (auto& [key, j] : found) jobs.push_back(std::move(j));
  return jobs;
}

// The jobs of mongorestore's -d DB [-c COLL] PATH: with a collection, the one .bson file PATH (and
// the metadata beside it, when there is one) into DB.COLL; without, the database directory PATH
// into DB.
result<std::vector<std::unique_ptr<restore_job>>, std::string> find_target_jobs(
    const fs::path& path, const restore_target& target, message_log& skipped) {
  if (const auto problem = database_name_problem(target.db); !problem.empty()) {
    return "--db " + quote(target.db) + ": " + problem;
  }
  std::error_code e;
  if (target.collection.empty()) {
    if (!fs::is_directory(path, e)) {
      return path.string() +
             ": with --db (and no --collection), give a database's directory, "
             "DIR/DB";
    }
    job_map found;
    if (auto scanned = scan_database(path, target.db, found, skipped); !scanned) {
      return std::move(scanned).error();
    }
    std::vector<std::unique_ptr<restore_job>> jobs;
    for (auto& [key, j] : found) jobs.push_back(std::move(j));
    return jobs;
  }
  std::string coll;
  bool is_metadata = false;
  const std::string file = path.filename().string();
  if (!classify(file, coll, is_metadata) || is_metadata || !fs::is_regular_file(path, e)) {
    return path.string() + ": with --collection, give a .bson or .bson.gz file";
  }
  auto j = std::make_unique<restore_job>();
  j->db = target.db;
  j->name = target.collection;
  j->data = path;
  const std::string stem = file.substr(0, file.rfind(".bson"));
  for (const char* suffix : {".metadata.json", ".metadata.json.gz"}) {
    const auto meta = path.parent_path() / (stem + suffix);
    std::error_code s;
    if (fs::is_regular_file(fs::symlink_status(meta, s))) j->metadata = meta;
  }
  std::vector<std::unique_ptr<restore_job>> jobs;
  jobs.push_back(std::move(j));
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

// How restore inserts: batches of up to 16 MiB, ordered or not, with the write concern asked for.
batch_loader::settings loader_settings(const restore_options& o) {
  batch_loader::settings settings;
  settings.max_bytes = 16 * 1024 * 1024;
  settings.insert.ordered = o.ordered;
  settings.insert.write_concern = o.parsed_write_concern;
  if (o.w0) settings.insert.write_concern = mongo::write_concern::unacknowledged();
  if (o.bypass_document_validation) settings.insert.bypass_document_validation = true;
  return settings;
}

// Where each document of the pending batch came from: its offset in the (uncompressed) file or
// archive, and its 0-based index in its collection's data.
struct batch_places {
  std::vector<std::uint64_t> offsets;
  std::vector<std::size_t> indexes;
};

// The report of each batch into `j`: what went in, and each refused document with `where` (the
// file, or the archive and namespace), its index and offset; a batch that ran out of the
// command's time limit says which limit and its flag (`ctx`).
batch_loader::report_fn batch_reporter(const context& ctx, restore_job& j, const std::string& where,
                                       batch_places& places, progress_line& bar) {
  return [&ctx, &j, where, &places, &bar](const loaded_batch& b) {
    const auto& offsets = places.offsets;
    const auto& indexes = places.indexes;
    bar.add(b.documents.size(), b.bytes);
    j.documents += b.inserted;
    if (b.failed == nullptr && b.refused.empty()) j.bytes += b.bytes;
    if (b.failed != nullptr) {
      j.messages << "oid: " << where << ": inserting documents " << indexes.front() << " to "
                 << indexes.back() << ": " << with_time_hint(ctx, *b.failed) << '\n';
    }
    for (const auto& r : b.refused) {
      j.messages << "oid: " << where << ": document " << indexes[r.index] << " (offset "
                 << offsets[r.index] << "): " << (r.duplicate ? "duplicate key: " : "refused: ")
                 << r.message << '\n';
      ++(r.duplicate ? j.duplicates : j.refused);
    }
    if (b.stopped_at) {
      j.messages << "oid: " << where << ": stopped at document " << indexes[*b.stopped_at]
                 << " (--ordered); the documents after it are not restored\n";
    }
    places.offsets.clear();
    places.indexes.clear();
  };
}

// Inserts the documents of j.data in batches; reports each refused document and the place where
// the file cannot be read on. False when the file stopped early.
bool restore_documents(const context& ctx, mongo::collection& coll, const restore_options& o,
                       restore_job& j, progress_line& bar) {
  source_buf buf;
  if (!buf.open(j.data)) {
    j.messages << "oid: " << buf.error() << '\n';
    return false;
  }
  std::istream in(&buf);
  bson::stream_reader reader(in);
  const std::string file = j.data.string();
  batch_places places;
  batch_loader loader(coll, loader_settings(o), batch_reporter(ctx, j, file, places, bar));
  auto& offsets = places.offsets;
  auto& indexes = places.indexes;

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

// --drop, then the collection created with the metadata's options (when there is metadata).
// False when the drop failed (j.failed set: nothing more is done); a refused create sets j.failed
// and returns true (the documents may still go in, as mongorestore does).
bool prepare_collection(mongo::client& client, const restore_options& o, restore_job& j) {
  auto coll = client.collection(j.db, j.name);
  if (o.drop) {
    if (auto d = coll.drop(); !d) {
      j.messages << "oid: " << j.db << '.' << j.name << ": drop: " << d.error().message << '\n';
      j.failed = true;
      return false;
    }
  }
  const auto meta = j.meta ? j.meta->view() : bson::document_view();
  bson::document_view options;
  if (const auto opt = meta.find("options")) options = opt->get_document().value_or(options);
  // --noOptionsRestore leaves a collection's options out; a view is nothing but its options.
  const auto type = meta.find("type");
  if (o.no_options_restore && !(type && type->get_string().value_or("") == "view")) {
    options = bson::document_view();
  }
  if (j.meta && !create_collection(client, j, options)) j.failed = true;
  return true;
}

void restore_one(const context& ctx, mongo::client& client, const restore_options& o,
                 restore_job& j, progress_line& bar) {
  if (j.failed) return;  // its metadata or its name was refused (said in j.messages)
  const auto& metadata = j.meta;
  const auto meta = metadata ? metadata->view() : bson::document_view();
  const auto type = meta.find("type");
  const bool view = type && type->get_string().value_or("") == "view";
  auto coll = client.collection(j.db, j.name);
  if (!prepare_collection(client, o, j)) return;
  if (view) return;
  if (!j.data.empty() && !restore_documents(ctx, coll, o, j, bar)) j.failed = true;
  if (!o.no_index_restore && metadata && !restore_indexes(coll, j, meta)) j.failed = true;
}

// Each job's errors, a line per job and the summary (unless --quiet); exit status 1 when any
// job failed or had a document refused.
void report_jobs(context& ctx, const restore_options& o,
                 const std::vector<std::unique_ptr<restore_job>>& jobs,
                 std::chrono::steady_clock::time_point start) {
  std::uint64_t documents = 0, bytes = 0, duplicates = 0, refused = 0, failed = 0;
  for (const auto& j : jobs) {
    ctx.err << printable(j->messages.str(), true);
    documents += j->documents;
    bytes += j->bytes;
    duplicates += j->duplicates;
    refused += j->refused;
    if (j->failed || j->duplicates > 0 || j->refused > 0) ++failed;
    if (!o.quiet) {
      ctx.err << printable(j->db + '.' + j->name);
      if (!j->from.empty()) ctx.err << " (from " << printable(j->from) << ')';
      ctx.err << ": " << j->documents << " documents";
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
  ctx.err << (o.dry_run ? "dry run: would restore " : "restored ") << documents << " documents, "
          << bytes << " bytes, to " << jobs.size() << " collections in " << std::fixed
          << std::setprecision(2) << seconds << " s";
  if (o.w0) ctx.err << " (w: 0, not acknowledged)";
  ctx.err << "; " << duplicates << " duplicate keys, " << refused << " other refusals, " << failed
          << " collections with errors\n";
}

// Restores the archive of --archive (FILE, or standard input for "-"), reading it once from start
// to end: each announced collection that passes the filters and the name checks is created (after
// --drop) when its data or end first shows, its documents inserted in batches as they come, its
// indexes created at its end. A corrupt or truncated archive stops the reading where it went
// wrong, said with the namespace and the offset; what came before is restored.
void run_archive_restore(context& ctx, const restore_options& o);

// --dryRun over a directory: each file read and every document checked as a restore would, and
// what would be restored counted; no connection, no write.
void dry_run_restore(context& ctx, const restore_options& o,
                     const std::vector<std::unique_ptr<restore_job>>& jobs) {
  const auto start = std::chrono::steady_clock::now();
  for (const auto& j : jobs) {
    if (j->failed || j->data.empty()) continue;
    source_buf buf;
    if (!buf.open(j->data)) {
      j->messages << "oid: " << buf.error() << '\n';
      j->failed = true;
      continue;
    }
    std::istream in(&buf);
    bson::stream_reader reader(in);
    while (true) {
      const auto more = reader.next();
      if (more && !*more) break;
      if (!more) {
        // As restore_documents says it.
        j->messages << "oid: " << j->data.string() << ": document " << reader.index()
                    << " at offset " << reader.document_offset() << ": " << more.error().message()
                    << " (offset " << more.error().offset << ")";
        if (buf.compressed()) j->messages << " of the uncompressed data";
        if (const auto err = buf.error(); !err.empty()) j->messages << "; " << err;
        j->failed = true;
        if (!o.keep_going || !reader.can_continue()) {
          j->messages << "; the rest of the file would not be restored\n";
          break;
        }
        j->messages << "; skipped (--keepGoing)\n";
        continue;
      }
      ++j->documents;
      j->bytes += reader.current().size();
    }
  }
  report_jobs(ctx, o, jobs, start);
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
  if (auto renames = ns_renamer::make(o.ns_from, o.ns_to); renames) {
    o.target.renames = std::move(*renames);
  } else {
    ctx.err << "oid: mongo restore: " << printable(renames.error()) << '\n';
    ctx.status = exit_usage;
    return;
  }
  if (!o.target.collection.empty() && o.target.db.empty()) {
    ctx.err << "oid: mongo restore: --collection needs --db\n";
    ctx.status = exit_usage;
    return;
  }
  if (!o.archive.empty() && !o.target.db.empty()) {
    ctx.err << "oid: mongo restore: --db and --collection name a directory's or a file's "
               "collections, not an archive's: select those with --nsInclude\n";
    ctx.status = exit_usage;
    return;
  }
  if (!o.archive.empty()) return run_archive_restore(ctx, o);
  auto plan = plan_restore(o.dir, o.filter, o.target);
  if (!plan.error.empty()) {
    ctx.err << "oid: mongo restore: " << printable(plan.error) << '\n';
    return ctx.bad_input();
  }
  ctx.err << printable(plan.refused + plan.left_out, true);
  if (!plan.refused.empty()) ctx.bad_input();
  auto& jobs = plan.jobs;
  if (jobs.empty()) {
    ctx.err << "oid: mongo restore: nothing to restore in " << o.dir
            << (o.target.db.empty() ? " (expected DIR/DB/COLL.bson and DIR/DB/COLL.metadata.json)\n"
                                    : " (expected DIR/COLL.bson and DIR/COLL.metadata.json)\n");
    return ctx.bad_input();
  }
  if (o.dry_run) return dry_run_restore(ctx, o, jobs);
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
                 [&](std::size_t i) { restore_one(ctx, *client, o, *jobs[i], bar); });
  }

  report_jobs(ctx, o, jobs, start);
}

// One collection an archive announces, as the restore follows it through the archive.
struct archive_target {
  restore_job* job = nullptr;  // the job it restores (a collection not restored has no target)
  std::optional<batch_loader> loader;  // once started, unless --drop failed or it is a view
  batch_places places;
  std::size_t index = 0;  // of the next document in the collection's data
  bool started = false, ended = false, buckets_said = false;
};

void run_archive_restore(context& ctx, const restore_options& o) {
  if (o.dir_given) {
    ctx.err << "oid: mongo restore: a directory and --archive: give one of them (an archive "
               "file is --archive=FILE)\n";
    ctx.status = exit_usage;
    return;
  }
  const bool from_stdin = o.archive == "-";
  const std::string name = from_stdin ? "standard input" : o.archive;
  source_buf file_buf;
  std::optional<stream_source_buf> stdin_buf;
  std::streambuf* buf = &file_buf;
  if (from_stdin) {
    buf = &stdin_buf.emplace(ctx.in);
  } else if (!file_buf.open(o.archive)) {
    ctx.err << "oid: mongo restore: " << printable(file_buf.error()) << '\n';
    return ctx.bad_input();
  }
  std::istream in(buf);
  // An error of the archive, with what the decompression said about it.
  const auto archive_message = [&](const archive::archive_error& e) {
    std::string m = "oid: " + name + ": " + e.message;
    if (from_stdin ? stdin_buf->compressed() : file_buf.compressed()) {
      m += " (offsets in the uncompressed data)";
    }
    const auto err = from_stdin ? stdin_buf->error() : file_buf.error();
    if (!err.empty()) m += "; " + err;
    return m;
  };
  archive::reader reader(in);
  if (auto prelude = reader.read_prelude(); !prelude) {
    ctx.err << printable(archive_message(prelude.error())) << '\n';
    return ctx.bad_input();
  }

  // The plan, from the prelude alone: the namespace each collection is written to is the one
  // the archive announces (its data is under that name), filtered, renamed and held to the
  // rules of place_job(), as a directory's are. Only a collection restored (or reported) gets a
  // job and a target: the memory follows what is restored, not what the prelude announces.
  const auto& entries = reader.collections();
  std::vector<std::unique_ptr<restore_job>> jobs;
  std::vector<std::unique_ptr<archive_target>> targets(entries.size());  // null: read past
  left_out_lists left_out;
  bool oplog = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (e.meta.db.empty() && e.meta.collection == "oplog") {  // mongodump --oplog's
      oplog = true;
      continue;
    }
    auto j = std::make_unique<restore_job>();
    j->db = e.meta.db;
    j->name = e.meta.collection;
    if (!place_job(*j, o.filter, o.target.renames, left_out)) continue;
    const std::string ns = e.meta.db + '.' + e.meta.collection;
    j->metadata = name + " (the metadata of " + ns + ")";  // for restore_indexes' messages
    if (!j->failed && !e.meta.metadata.empty()) {
      auto doc = bson::from_json(e.meta.metadata);
      if (!doc) {
        const auto where = bson::position_of(e.meta.metadata, doc.error().offset);
        j->messages << "oid: " << j->metadata.string() << ": line " << where.line << ", column "
                    << where.column << ": " << doc.error().message()
                    << " (not Extended JSON metadata); " << ns << " not restored\n";
        j->failed = true;
      } else {
        j->meta = std::move(*doc);
      }
    }
    if (!j->failed) {
      targets[i] = std::make_unique<archive_target>();
      targets[i]->job = j.get();
    }
    jobs.push_back(std::move(j));
  }
  if (oplog) {
    ctx.err << "oid: mongo restore: " << printable(name)
            << ": the oplog (of mongodump --oplog) is not replayed: oid has no --oplogReplay\n";
  }
  ctx.err << left_out.text();
  if (jobs.empty()) {
    ctx.err << "oid: mongo restore: nothing to restore in " << printable(name) << '\n';
    return ctx.bad_input();
  }
  std::optional<mongo::client> client;  // none for --dryRun
  if (!o.dry_run && !(client = make_client(ctx, o.uri))) return;
  const auto start = std::chrono::steady_clock::now();
  std::string fatal;  // the error that stopped the reading
  {
    std::uint64_t total = 0;
    if (!from_stdin) {
      std::error_code e;
      const auto size = fs::file_size(o.archive, e);
      if (!e) total = size;
    }
    progress_line bar(ctx, o.quiet, total);
    const auto begin = [&](archive_target& t) {
      if (t.started || t.job == nullptr) return;
      t.started = true;
      if (o.dry_run) return;
      restore_job& j = *t.job;
      if (!prepare_collection(*client, o, j)) return;
      const auto meta = j.meta ? j.meta->view() : bson::document_view();
      const auto type = meta.find("type");
      if (type && type->get_string().value_or("") == "view") return;
      t.loader.emplace(client->collection(j.db, j.name), loader_settings(o),
                       batch_reporter(ctx, j, name + ": " + j.db + '.' + j.name, t.places, bar));
    };
    const auto end = [&](archive_target& t) {
      t.ended = true;
      if (t.job == nullptr) return;
      begin(t);  // an empty collection, or a view: its end is all there is
      restore_job& j = *t.job;
      if (t.loader && !t.loader->flush()) j.failed = true;
      if (!o.no_index_restore && j.meta && t.loader) {
        auto coll = client->collection(j.db, j.name);
        if (!restore_indexes(coll, j, j.meta->view())) j.failed = true;
      }
    };
    std::size_t last = static_cast<std::size_t>(-1);
    while (true) {
      auto next = reader.next();
      if (!next) {
        const auto& e = next.error();
        // A bad document of a collection not restored is read past; of one restored, skipped
        // with --keepGoing, else the end.
        archive_target* t = e.collection < targets.size() ? targets[e.collection].get() : nullptr;
        if (e.code == archive::archive_errc::invalid_document && (o.keep_going || t == nullptr)) {
          if (t == nullptr) continue;
          ++t->index;
          t->job->messages << archive_message(e) << "; skipped (--keepGoing)\n";
          t->job->failed = true;
          continue;
        }
        if (e.code == archive::archive_errc::crc_mismatch) {
          if (t != nullptr) {
            end(*t);
            t->job->messages << archive_message(e) << '\n';
            t->job->failed = true;
          } else {
            ctx.err << printable(archive_message(e)) << '\n';
            ctx.bad_input();
          }
          continue;
        }
        fatal = archive_message(e) + "; the rest of the archive is not restored";
        break;
      }
      if (next->kind == archive::item::end) break;
      archive_target* const found = targets[next->collection].get();
      if (found == nullptr) continue;  // not restored: read past
      auto& t = *found;
      if (next->kind == archive::item::namespace_end) {
        end(t);
        continue;
      }
      // Batches are per collection and sent when the data moves to another collection, so an
      // interleaved archive holds one collection's batch in memory at a time.
      if (last != next->collection && last < targets.size() && targets[last] &&
          targets[last]->loader) {
        targets[last]->loader->flush();
      }
      last = next->collection;
      const std::size_t index = t.index++;
      begin(t);
      if (next->buckets) {
        if (!t.buckets_said) {
          t.job->messages << "oid: " << name << ": " << t.job->db << '.' << t.job->name
                          << ": the timeseries' buckets (system.buckets." << t.job->name
                          << ") are not restored: oid restores no bucket documents\n";
          t.job->failed = true;
          t.buckets_said = true;
        }
        continue;
      }
      if (o.dry_run) {
        ++t.job->documents;
        t.job->bytes += next->doc.size();
        continue;
      }
      if (!t.loader || t.loader->stopped()) continue;
      t.places.offsets.push_back(next->offset);
      t.places.indexes.push_back(index);
      t.loader->add(bson::document(next->doc));
    }
    // What came before the error goes in; a collection not ended is incomplete.
    for (auto& t : targets) {
      if (!t || t->ended) continue;
      if (t->loader) t->loader->flush();
      t->job->failed = true;
    }
  }
  if (!fatal.empty()) {
    ctx.err << printable(fatal) << '\n';
    ctx.bad_input();
  }
  report_jobs(ctx, o, jobs, start);
}

}  // namespace

write_refusal restore_write_refusal(std::string_view db, std::string_view coll,
                                    const restore_filter& filter) {
  if (auto problem = database_name_problem(db); !problem.empty()) {
    return {write_refusal::bad_name, std::move(problem)};
  }
  if (auto problem = collection_name_problem(db, coll); !problem.empty()) {
    return {write_refusal::bad_name, std::move(problem)};
  }
  if (!filter.users_and_roles && coll.starts_with("system.")) {
    return {write_refusal::needs_users_and_roles,
            "a system collection (users and roles among them): --restoreDbUsersAndRoles"};
  }
  // The server compares database names without regard to case: LOCAL would be local's.
  const auto is = [&](std::string_view name) {
    return db.size() == name.size() &&
           std::equal(db.begin(), db.end(), name.begin(), [](char a, char b) {
             return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b;
           });
  };
  if (!filter.local_and_config && (is("local") || is("config"))) {
    return {write_refusal::needs_local_and_config,
            "the local and config databases: --restoreLocalAndConfig"};
  }
  return {};
}

restore_plan plan_restore(const fs::path& dir, const restore_filter& filter,
                          const restore_target& target) {
  restore_plan plan;
  message_log refused;
  auto found = target.db.empty() ? find_jobs(dir, refused) : find_target_jobs(dir, target, refused);
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
      // (--collection names the namespace itself.)
      const auto n = j->meta->view().find("collectionName");
      if (n && n->get_string() && !n->get_string()->empty() && target.collection.empty()) {
        j->name = *n->get_string();
      }
    }
  }
  // --nsInclude / --nsExclude on the DB.COLL of the dump, then --nsFrom/--nsTo, then the rules on
  // where a restore may write, on the namespace it would write.
  left_out_lists left_out;
  std::erase_if(jobs,
                [&](const auto& j) { return !place_job(*j, filter, target.renames, left_out); });
  plan.left_out = left_out.text();
  return plan;
}

namespace {

// A --nsFrom or --nsTo pattern as pieces; the error names the flag and what is wrong.
result<std::vector<ns_renamer::piece>, std::string> parse_ns_pattern(std::string_view flag,
                                                                     std::string_view pattern) {
  std::vector<ns_renamer::piece> pieces;
  const auto literal = [&](char c) {
    if (pieces.empty() || pieces.back().wildcard) pieces.push_back({false, {}});
    pieces.back().text += c;
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (++i == pattern.size()) {
        return std::string(flag) + " " + quote(pattern) + ": a '\\' at the end escapes nothing";
      }
      literal(pattern[i]);
    } else if (c == '*') {
      pieces.push_back({true, {}});
    } else if (c == '$') {
      const auto close = pattern.find('$', i + 1);
      if (close == std::string_view::npos || close == i + 1) {
        return std::string(flag) + " " + quote(pattern) +
               ": a '$' opens a $name$ that is not closed (a literal '$' is '\\$')";
      }
      pieces.push_back({true, std::string(pattern.substr(i + 1, close - i - 1))});
      i = close;
    } else {
      literal(c);
    }
  }
  return pieces;
}

// Matches all of `text` against `pieces`, each wildcard taking the shortest text that lets the
// rest match (earlier wildcards first); the wildcards' texts in `captures`, in order. In time
// proportional to the pattern's length times the name's, whatever the name (it comes from a
// dump): trying every split among the wildcards took exponential time.
bool match_pieces(const std::vector<ns_renamer::piece>& pieces, std::string_view text,
                  std::vector<std::string_view>& captures) {
  // rest[p * (n + 1) + i]: pieces p.. match text[i..].
  const std::size_t n = text.size();
  std::vector<bool> rest((pieces.size() + 1) * (n + 1));
  const auto at = [&](std::size_t p, std::size_t i) { return p * (n + 1) + i; };
  rest[at(pieces.size(), n)] = true;
  for (std::size_t p = pieces.size(); p-- > 0;) {
    const auto& piece = pieces[p];
    bool later = false;  // a wildcard matches from i when the rest matches from some j >= i
    for (std::size_t i = n + 1; i-- > 0;) {
      if (piece.wildcard) {
        later = later || rest[at(p + 1, i)];
        rest[at(p, i)] = later;
      } else {
        rest[at(p, i)] = text.substr(i, piece.text.size()) == piece.text &&
                         rest[at(p + 1, i + piece.text.size())];
      }
    }
  }
  if (!rest[at(0, 0)]) return false;
  std::size_t i = 0;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    if (!pieces[p].wildcard) {
      i += pieces[p].text.size();
      continue;
    }
    std::size_t end = i;
    while (!rest[at(p + 1, end)]) ++end;  // the shortest: rest[at(p, i)] says there is one
    captures.push_back(text.substr(i, end - i));
    i = end;
  }
  return true;
}

}  // namespace

result<ns_renamer, std::string> ns_renamer::make(const std::vector<std::string>& from,
                                                 const std::vector<std::string>& to) {
  if (from.size() != to.size()) {
    return "--nsFrom and --nsTo come in pairs: " + std::to_string(from.size()) + " --nsFrom, " +
           std::to_string(to.size()) + " --nsTo";
  }
  ns_renamer r;
  for (std::size_t i = 0; i < from.size(); ++i) {
    auto f = parse_ns_pattern("--nsFrom", from[i]);
    if (!f) return std::move(f).error();
    auto t = parse_ns_pattern("--nsTo", to[i]);
    if (!t) return std::move(t).error();
    const auto stars = [](const std::vector<piece>& ps) {
      return std::count_if(ps.begin(), ps.end(),
                           [](const piece& p) { return p.wildcard && p.text.empty(); });
    };
    if (stars(*f) != stars(*t)) {
      return "--nsTo " + quote(to[i]) + " has " + std::to_string(stars(*t)) +
             " '*', its --nsFrom " + quote(from[i]) + " " + std::to_string(stars(*f));
    }
    for (const auto& p : *t) {
      if (!p.wildcard || p.text.empty()) continue;
      const bool known = std::any_of(
          f->begin(), f->end(), [&](const piece& q) { return q.wildcard && q.text == p.text; });
      if (!known) return "--nsTo " + quote(to[i]) + ": $" + p.text + "$ is not in its --nsFrom";
    }
    r.rules_.push_back({std::move(*f), std::move(*t)});
  }
  return r;
}

std::string ns_renamer::rename(const std::string& ns) const {
  for (const auto& rule : rules_) {
    std::vector<std::string_view> captures;  // one per wildcard of --nsFrom, in order
    if (!match_pieces(rule.from, ns, captures)) continue;
    // The capture of each '*' of --nsFrom, in order, and of each $name$.
    std::vector<std::string_view> stars;
    const auto named = [&](const std::string& name) {
      std::size_t k = 0;
      for (const auto& q : rule.from) {
        if (!q.wildcard) continue;
        if (q.text == name) return captures[k];
        ++k;
      }
      return std::string_view();  // make() saw to it that the name is there
    };
    std::size_t k = 0;
    for (const auto& q : rule.from) {
      if (q.wildcard && q.text.empty()) stars.push_back(captures[k]);
      if (q.wildcard) ++k;
    }
    std::string out;
    std::size_t star = 0;
    for (const auto& p : rule.to) {
      if (!p.wildcard) {
        out += p.text;
      } else if (p.text.empty()) {
        out += stars[star++];  // as many as --nsFrom has (make())
      } else {
        out += named(p.text);
      }
    }
    return out;
  }
  return ns;
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
  add_uri_options(*cmd, ctx, o->uri, command_time::batches);
  auto* dir = cmd->add_option("DIR,--dir", o->dir,
                              "The directory a dump wrote (default: dump); with --db, one "
                              "database's directory; with --collection, one .bson file")
                  ->type_name("DIR");
  cmd->add_option("--nsFrom", o->ns_from,
                  "Rename DB.COLL matching this pattern ('*' or $name$: any text; repeatable)");
  cmd->add_option("--nsTo", o->ns_to,
                  "... to this one, its '*' and $name$ what --nsFrom's matched (one per --nsFrom)");
  cmd->add_option("-d,--db", o->target.db, "Restore DIR's one database (DIR/DB) into this one");
  cmd->add_option("-c,--collection", o->target.collection,
                  "Restore one .bson file into this collection of --db");
  // As mongorestore: FILE only after '=', so that a bare --archive never takes the next argument.
  cmd->add_flag("--archive{-}", o->archive,
                "Restore a mongodump archive instead of a directory: --archive=FILE, or standard "
                "input (--archive or --archive=-); gzip-compressed or not")
      ->type_name("[=FILE]");
  cmd->add_flag("--gzip", o->gzip,
                "Accepted as mongorestore takes it: compressed files and archives are recognized "
                "by their content");
  cmd->add_flag("--drop", o->drop, "Drop each collection before restoring it");
  cmd->add_option("--nsInclude", o->filter.include,
                  "Only DB.COLL matching this pattern ('*': any text)")
      ->allow_extra_args(false);
  cmd->add_option("--nsExclude", o->filter.exclude, "Not DB.COLL matching this pattern")
      ->allow_extra_args(false);
  cmd->add_flag("--noIndexRestore", o->no_index_restore, "Do not create the metadata's indexes");
  cmd->add_flag("--noOptionsRestore", o->no_options_restore,
                "Create collections without the metadata's options (a view keeps its definition)");
  cmd->add_flag("--bypassDocumentValidation", o->bypass_document_validation,
                "Let the documents skip the collections' validators");
  cmd->add_flag("--dryRun", o->dry_run,
                "Read and check everything and say what would be restored; connect to nothing, "
                "write nothing");
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
  cmd->add_flag("--restoreLocalAndConfig", o->filter.local_and_config,
                "Also restore into the local and config databases (the oplog, sessions, the "
                "sharding catalogue), which dumps leave out");
  cmd->add_option("-j,--jobs,--numParallelCollections", o->jobs,
                  "Collections restored at once (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--quiet", o->quiet,
                "No progress, no line per collection, no summary: errors only");
  cmd->final_callback([&ctx, o, dir] {
    o->dir_given = dir->count() > 0;
    run_restore(ctx, *o);
  });
}

}  // namespace oid::cli
