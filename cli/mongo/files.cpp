// oid mongo files put | get | list | delete: GridFS from a terminal, mongofiles' jobs, on the
// client's gridfs_bucket (oid/mongo/gridfs.hpp). Large files show a progress line on a terminal;
// a download goes to NAME.partial and becomes NAME only when every chunk arrived whole, so a
// failed one leaves nothing that looks complete.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/gridfs.hpp>
#include <oid/objectid/time.hpp>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {

namespace {

namespace fs = std::filesystem;

struct files_options {
  std::string uri, db, bucket = "fs", name, file, out, metadata, id;
  std::vector<std::string> files;
  std::int32_t chunk_size = 255 * 1024;
  std::int32_t revision = -1;
  bool quiet = false, json = false;
};

// A stream buffer that reads from `in` and counts the bytes into a progress line.
class counting_source : public std::streambuf {
 public:
  counting_source(std::istream& in, progress_line& bar) : in_(in), bar_(bar) {}

 protected:
  int_type underflow() override {
    in_.read(buffer_, sizeof buffer_);
    const auto got = in_.gcount();
    if (in_.bad()) throw std::ios_base::failure("read failed");  // the bucket reports it
    if (got <= 0) return traits_type::eof();
    bar_.add(0, static_cast<std::uint64_t>(got));
    setg(buffer_, buffer_, buffer_ + got);
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  std::istream& in_;
  progress_line& bar_;
  char buffer_[1 << 16];
};

// A stream buffer that writes to a file_sink (NAME.partial) and counts the bytes.
class counting_sink : public std::streambuf {
 public:
  counting_sink(file_sink& sink, progress_line& bar) : sink_(sink), bar_(bar) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (!sink_.write(std::string_view(s, static_cast<std::size_t>(n)))) return 0;
    bar_.add(0, static_cast<std::uint64_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

 private:
  file_sink& sink_;
  progress_line& bar_;
};

std::optional<mongo::gridfs_bucket> bucket_of(context& ctx, const files_options& o,
                                              std::optional<mongo::client>& client) {
  if (const auto problem = database_name_problem(o.db); !problem.empty()) {
    ctx.err << "oid: DB " << quote(o.db) << ": " << problem << '\n';
    ctx.bad_input();
    return std::nullopt;
  }
  if (const auto problem = collection_name_problem(o.db, o.bucket + ".chunks"); !problem.empty()) {
    ctx.err << "oid: --bucket " << quote(o.bucket) << ": " << problem << '\n';
    ctx.bad_input();
    return std::nullopt;
  }
  client = make_client(ctx, o.uri);
  if (!client) return std::nullopt;
  mongo::gridfs_bucket_options options;
  options.bucket_name = o.bucket;
  options.chunk_size_bytes = o.chunk_size;
  return client->database(o.db).gridfs_bucket(options);
}

// `--id TEXT` as an ObjectId: none for an empty text, the parse error for a bad one (reported,
// with the exit status set).
result<std::optional<object_id>> id_argument(context& ctx, const std::string& text) {
  if (text.empty()) return std::optional<object_id>();
  auto parsed = object_id::parse(text);
  if (!parsed) {
    ctx.err << "oid: --id: " << explain_id_error(text, parsed.error()) << '\n';
    ctx.bad_input();
    return parsed.error();
  }
  return std::optional<object_id>(*parsed);
}

// ---- put --------------------------------------------------------------------------------------

void run_put(context& ctx, const files_options& o) {
  if (!o.name.empty() && o.files.size() > 1) {
    ctx.err << "oid: --name goes with one FILE\n";
    return ctx.bad_input();
  }
  std::optional<bson::document> metadata;
  if (!o.metadata.empty() && !(metadata = json_argument(ctx, "--metadata", o.metadata))) return;
  std::optional<mongo::client> client;
  auto bucket = bucket_of(ctx, o, client);
  if (!bucket) return;
  mongo::gridfs_upload_options options;
  if (metadata) options.metadata = metadata->view();
  for (const auto& path : o.files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      ctx.err << "oid: mongo files put: cannot open " << quote(path) << ": " << errno_text(errno)
              << '\n';
      ctx.bad_input();
      continue;
    }
    std::error_code size_error;
    const auto size = fs::file_size(path, size_error);
    const std::string name = o.name.empty() ? fs::path(path).filename().string() : o.name;
    mongo::outcome<object_id> id = object_id();
    {
      progress_line bar(ctx, o.quiet, size_error ? 0 : static_cast<std::uint64_t>(size));
      counting_source counted(in, bar);
      std::istream source(&counted);
      id = bucket->upload_from_stream(name, source, options);
    }
    if (!id) {
      ctx.err << "oid: mongo files put: " << printable(path) << ": "
              << printable(with_time_hint(ctx, id.error())) << '\n';
      ctx.bad_input();
      continue;
    }
    ctx.out << "stored " << printable(name) << " as " << id->to_hex() << '\n';
  }
}

// ---- get --------------------------------------------------------------------------------------

void run_get(context& ctx, const files_options& o) {
  const auto id = id_argument(ctx, o.id);
  if (!id) return;
  if (o.name.empty() && !*id) {
    ctx.err << "oid: mongo files get: give NAME or --id\n";
    return ctx.bad_input();
  }
  // The local file: --out, else the name asked for (the caller's text, never the server's).
  const std::string target = !o.out.empty() ? o.out : !o.name.empty() ? o.name : o.id;
  std::optional<mongo::client> client;
  auto bucket = bucket_of(ctx, o, client);
  if (!bucket) return;
  const bool to_stdout = target == "-";
  if (to_stdout && ctx.out_is_terminal) {
    // A stored file's bytes are the server's: on a terminal they could steer it.
    ctx.err << "oid: mongo files get: standard output is a terminal: give --out FILE, or redirect "
               "it to a file or a pipe\n";
    ctx.status = exit_usage;
    return;
  }
  file_sink sink;
  if (!to_stdout && !sink.open(target, false)) {
    ctx.err << "oid: mongo files get: " << printable(sink.error()) << '\n';
    return ctx.bad_input();
  }
  mongo::outcome<std::uint64_t> n = std::uint64_t{0};
  {
    progress_line bar(ctx, o.quiet || to_stdout, 0);
    counting_sink counted(sink, bar);
    std::ostream out(to_stdout ? ctx.out.rdbuf() : &counted);
    n = *id ? bucket->download_to_stream(**id, out)
            : bucket->download_to_stream_by_name(o.name, out, o.revision);
    out.flush();
  }
  if (!n) {  // the sink's destructor removes PATH.partial
    if (!sink.error().empty()) {
      ctx.err << "oid: mongo files get: " << printable(sink.error()) << '\n';
    }
    return report(ctx, n.error());
  }
  if (!to_stdout) {
    if (!sink.commit()) {
      ctx.err << "oid: mongo files get: " << printable(sink.error()) << '\n';
      return ctx.bad_input();
    }
    ctx.out << "wrote " << printable(target) << " (" << *n << " bytes)\n";
  }
}

// ---- list -------------------------------------------------------------------------------------

std::string upload_time(bson::document_view file) {
  const auto e = file.find("uploadDate");
  if (!e || !e->get_date_time()) return "-";
  const std::int64_t ms = *e->get_date_time();
  const std::time_t t = static_cast<std::time_t>(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));
  std::tm tm{};
  char text[32];
  if (gmtime_r(&t, &tm) == nullptr ||
      std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
    return "-";
  }
  return text;
}

void run_list(context& ctx, const files_options& o) {
  std::optional<mongo::client> client;
  auto bucket = bucket_of(ctx, o, client);
  if (!bucket) return;
  bson::builder filter;
  if (!o.name.empty()) {
    // Names that start with PREFIX: a regular expression with every metacharacter escaped.
    std::string pattern = "^";
    for (const char c : o.name) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
    }
    filter.append_regex("filename", pattern, "");
  }
  bson::builder sort;
  sort.append_int32("filename", 1).append_int32("uploadDate", 1);
  mongo::find_options fo;
  fo.sort = sort.view();
  auto cur = bucket->find(filter.view(), fo);
  if (!cur) return report(ctx, cur.error());
  std::vector<std::vector<std::string>> rows;
  if (!o.json) rows.push_back({"NAME", "BYTES", "UPLOADED", "ID"});
  document_output out(ctx);
  while (true) {
    auto more = cur->next();
    if (!more) return report(ctx, more.error());
    if (!*more) break;
    const auto file = cur->current();
    if (o.json) {
      out.json_line(file);
      continue;
    }
    const auto name = file.find("filename");
    const auto length = file.find("length");
    const auto id = file.find("_id");
    std::string length_text = "-";
    if (length) {
      if (auto v = length->get_int64()) length_text = std::to_string(*v);
      if (auto v = length->get_int32()) length_text = std::to_string(*v);
    }
    std::string id_text = "-";
    if (id) {
      if (auto v = id->get_object_id()) {
        id_text = v->to_hex();
      } else {
        bson::builder holder;  // any other id as Extended JSON: {"_id":...} without its key
        holder.append_element("_id", *id);
        const std::string json = bson::to_json(holder.view());
        id_text = json.substr(7, json.size() - 8);
      }
    }
    rows.push_back({std::string(name ? name->get_string().value_or("-") : "-"), length_text,
                    upload_time(file), id_text});
  }
  if (!o.json) print_columns(ctx, rows, "lrll");
}

// ---- delete -----------------------------------------------------------------------------------

void run_delete(context& ctx, const files_options& o) {
  if (o.name.empty() == o.id.empty()) {
    ctx.err << "oid: mongo files delete: give NAME (every revision) or --id\n";
    return ctx.bad_input();
  }
  const auto id = id_argument(ctx, o.id);
  if (!id) return;
  std::optional<mongo::client> client;
  auto bucket = bucket_of(ctx, o, client);
  if (!bucket) return;
  auto r = *id ? bucket->delete_file(**id) : bucket->delete_by_name(o.name);
  if (!r) return report(ctx, r.error());
  ctx.out << "deleted " << (*id ? (*id)->to_hex() : printable(o.name)) << '\n';
}

// A subcommand of `files` taking URI and DB, with --bucket.
CLI::App* add(CLI::App& parent, context& ctx, const char* name, const char* description,
              const std::shared_ptr<files_options>& o, command_time time = command_time::quick) {
  auto* cmd = parent.add_subcommand(name, description);
  add_uri_options(*cmd, ctx, o->uri, time);
  cmd->add_option("DB", o->db, "The database, e.g. media")->required();
  cmd->add_option("--bucket", o->bucket, "The bucket: its collections' prefix (default fs)");
  return cmd;
}

}  // namespace

void add_mongo_files_commands(CLI::App& mongo, context& ctx) {
  auto* files =
      mongo.add_subcommand("files", "GridFS: store, fetch, list and delete files in a database");
  files->require_subcommand(1);
  {
    auto o = std::make_shared<files_options>();
    auto* cmd = add(*files, ctx, "put", "Store FILEs (named as their base name, or --name)", o,
                    command_time::stream);
    cmd->add_option("FILE", o->files, "Local files")->required()->type_name("FILE");
    cmd->add_option("--name", o->name, "The stored name (one FILE only)");
    cmd->add_option("--chunkSize,--chunk-size", o->chunk_size, "Bytes per chunk (default 261120)")
        ->check(CLI::Range(1, 16 * 1024 * 1024 - 1024));
    cmd->add_option("--metadata", o->metadata, "Extended JSON stored as the file's metadata");
    cmd->add_flag("--quiet", o->quiet, "No progress line");
    cmd->final_callback([&ctx, o] { run_put(ctx, *o); });
  }
  {
    auto o = std::make_shared<files_options>();
    auto* cmd = add(*files, ctx, "get", "Fetch the newest revision of NAME (or --revision, --id)",
                    o, command_time::stream);
    cmd->add_option("NAME", o->name, "The stored name");
    cmd->add_option("--id", o->id, "The file's ObjectId instead of NAME");
    cmd->add_option("--revision", o->revision,
                    "0 the first stored, 1 the second, ..., -1 the newest (default)");
    cmd->add_option("--out", o->out, "The local file (default: NAME), or - for stdout")
        ->type_name("FILE");
    cmd->add_flag("--quiet", o->quiet, "No progress line");
    cmd->final_callback([&ctx, o] { run_get(ctx, *o); });
  }
  {
    auto o = std::make_shared<files_options>();
    auto* cmd = add(*files, ctx, "list", "List the files (those whose name starts with PREFIX)", o);
    cmd->add_option("PREFIX", o->name, "Only names that start with this");
    cmd->add_flag("--json", o->json, "Each files document as an Extended JSON line");
    cmd->final_callback([&ctx, o] { run_list(ctx, *o); });
  }
  {
    auto o = std::make_shared<files_options>();
    auto* cmd = add(*files, ctx, "delete", "Delete every revision of NAME (or one file: --id)", o);
    cmd->add_option("NAME", o->name, "The stored name");
    cmd->add_option("--id", o->id, "The file's ObjectId instead of NAME");
    cmd->final_callback([&ctx, o] { run_delete(ctx, *o); });
  }
}

}  // namespace oid::cli
