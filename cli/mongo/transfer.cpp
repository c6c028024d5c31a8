// oid mongo export | import: a collection as Extended JSON (one document a line, or a JSON array)
// or CSV, and back, with mongoexport's and mongoimport's meanings. CSV follows RFC 4180: fields
// with a separator, a quote or a line break are quoted, quotes doubled inside.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <istream>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/server_codes.hpp>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "detail/base64.hpp"
#include "detail/hex.hpp"
#include "mongo/csv.hpp"
#include "mongo/loader.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

// --fields f1,f2 or --fieldFile FILE (one field a line, as mongo-tools read it; blank lines and a
// '\r' before the newline ignored); nullopt when both are given or the file is unreadable
// (reported).
std::optional<std::string> field_list(context& ctx, const std::string& fields,
                                      const std::string& field_file) {
  if (field_file.empty()) return fields;
  if (!fields.empty()) {
    ctx.err << "oid: --fields and --fieldFile: give one of them\n";
    ctx.status = exit_usage;
    return std::nullopt;
  }
  auto text = read_argument_file(ctx, "--fieldFile", field_file);
  if (!text) return std::nullopt;
  std::string list;
  std::size_t start = 0;
  while (start < text->size()) {
    auto end = std::min(text->find('\n', start), text->size());
    std::string_view line(text->data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) (list += list.empty() ? "" : ",") += line;
    start = end + 1;
  }
  return list;
}

// --query TEXT or --queryFile FILE, as Extended JSON; nullopt when both are given or either is
// bad (reported).
std::optional<bson::document> query_argument(context& ctx, const std::string& query,
                                             const std::string& query_file) {
  if (query_file.empty()) {
    return query.empty() ? std::optional(bson::document()) : json_argument(ctx, "--query", query);
  }
  if (!query.empty()) {
    ctx.err << "oid: --query and --queryFile: give one of them\n";
    ctx.status = exit_usage;
    return std::nullopt;
  }
  auto text = read_argument_file(ctx, "--queryFile", query_file);
  if (!text) return std::nullopt;
  return json_argument(ctx, "--queryFile " + query_file, *text);
}

std::vector<std::string> split_fields(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// ---- export ---------------------------------------------------------------------------------

struct export_options {
  std::string uri, ns, db, coll, type = "json", fields, field_file, query, query_file, sort, out,
                                 json_format;
  bool json_array = false, canonical = false, pretty = false, no_header_line = false, quiet = false;
  std::int64_t limit = 0, skip = 0;
};

void run_export(context& ctx, export_options o) {
  const auto [db, coll_name] = namespace_of(o.ns, o.db, o.coll);
  if (!o.json_format.empty()) o.canonical = o.json_format == "canonical";
  const auto field_text = field_list(ctx, o.fields, o.field_file);
  if (!field_text) return;
  const auto fields = split_fields(*field_text);
  const bool csv = o.type == "csv";
  if (csv && fields.empty()) {
    ctx.err << "oid: mongo export: --type csv needs --fields\n";
    ctx.status = exit_usage;
    return;
  }
  std::optional<bson::document> query = query_argument(ctx, o.query, o.query_file);
  if (!query) return;
  std::optional<bson::document> sort = bson::document();
  if (!o.sort.empty() && !(sort = json_argument(ctx, "--sort", o.sort))) return;
  bson::builder projection;
  // CSV reads each column's path itself (at_path, which also indexes arrays: d.1.e): the server
  // sends the top-level fields the paths start with, each once.
  std::vector<std::string> projected;
  for (const auto& f : fields) {
    std::string p = csv ? f.substr(0, f.find('.')) : f;
    if (std::find(projected.begin(), projected.end(), p) == projected.end()) {
      projection.append_int32(p, 1);
      projected.push_back(std::move(p));
    }
  }
  auto client = make_client(ctx, o.uri);
  if (!client) return;
  std::ofstream file;
  std::ostream* out = &ctx.out;
  if (!o.out.empty() && o.out != "-") {
    file.open(o.out, std::ios::binary);
    if (!file) {
      ctx.err << "oid: mongo export: cannot create " << printable(o.out) << '\n';
      return ctx.bad_input();
    }
    out = &file;
  }
  // The documents go out through document_output, which escapes the server's strings on a
  // terminal: JSON keeps being JSON, a CSV record is made printable(). No progress line there.
  document_output buf(ctx, *out);
  const bool quiet = o.quiet || buf.escaped();
  // The estimated total: the collection's count (at most --limit), when every document goes.
  std::uint64_t total = 0;
  if (progress_line::shows(ctx, quiet) && query->empty()) {
    const auto n = client->collection(db, coll_name).estimated_document_count();
    if (n && *n > 0) total = static_cast<std::uint64_t>(*n);
    total -= std::min(total, static_cast<std::uint64_t>(o.skip));
    if (o.limit > 0) total = std::min(total, static_cast<std::uint64_t>(o.limit));
  }
  const auto start = std::chrono::steady_clock::now();
  mongo::find_options fo;
  fo.projection = projection.view();
  fo.sort = sort->view();
  fo.limit = o.limit;
  fo.skip = o.skip;
  fo.timeout_mode = mongo::timeout_mode::iteration;  // the stall limit for each getMore afresh
  auto cur = client->collection(db, coll_name).find(query->view(), fo);
  if (!cur) return report(ctx, cur.error());
  std::string line;
  bson::json_options jo;
  jo.mode = o.canonical ? bson::json_mode::canonical : bson::json_mode::relaxed;
  jo.pretty = o.pretty;
  if (csv && !o.no_header_line) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line += ',';
      append_csv_text(fields[i], line);
    }
    buf.record(line);
  } else if (!csv && o.json_array) {
    buf.json("[");
  }
  std::uint64_t count = 0, bytes = 0;
  progress_line bar(ctx, quiet, 0, total);
  while (true) {
    auto more = cur->next();
    if (!more) return report(ctx, more.error());
    if (!*more) break;
    const auto doc = cur->current();
    line.clear();
    if (csv) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) line += ',';
        append_csv_value(at_path(doc, fields[i]), line);
      }
      buf.record(line);
    } else {
      if (o.json_array && count > 0) line += ',';
      bson::to_json(doc, jo, line);
      if (!o.json_array) line += '\n';
      buf.json(line);
    }
    ++count;
    bytes += doc.size();
    bar.add(1, doc.size());
  }
  if (!csv && o.json_array) buf.json("]\n");
  buf.flush();
  if (!*out) {
    ctx.err << "oid: mongo export: cannot write the output\n";
    return ctx.bad_input();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.finish();
  if (!o.quiet) {
    ctx.err << "exported " << count << " documents, " << bytes << " bytes of BSON, in "
            << std::fixed << std::setprecision(2) << seconds << " s\n";
  }
}

// ---- import ---------------------------------------------------------------------------------

struct import_options {
  std::string uri, ns, db, coll, file, type = "json", fields, field_file, mode = "insert",
                                       upsert_fields = "_id", write_concern;
  bool headerline = false, json_array = false, drop = false, quiet = false;
  bool columns_have_types = false, ignore_blanks = false, bypass_document_validation = false;
  std::string parse_grace = "skipRow";  // autoCast, skipField, skipRow or stop
  /// --stopOnError (or --maintainInsertionOrder): ordered inserts, and the first refused
  /// document or bad input ends the import.
  bool stop_on_error = false;
  mongo::write_concern parsed_write_concern{};
};

// Writes the imported documents: inserts through the batched loader; upserts and merges one by one.
class importer {
 public:
  importer(context& ctx, mongo::collection coll, const import_options& o)
      : ctx_(ctx),
        coll_(coll),
        o_(o),
        keys_(split_fields(o.upsert_fields)),
        loader_(std::move(coll), loader_settings(), [this](const loaded_batch& b) { report(b); }) {}

  // Adds a document (`where` names its place for messages).
  void add(bson::document doc, std::string where) {
    if (stopped()) return;
    if (o_.mode == "insert") {
      places_.push_back(std::move(where));
      loader_.add(std::move(doc));
      return;
    }
    bson::builder filter;
    for (const auto& k : keys_) {
      if (const auto e = at_path(doc.view(), k)) {
        filter.append_element(*e);
      } else {
        ctx_.err << "oid: " << printable(where) << ": no " << printable(k)
                 << " field to match on (--upsertFields)\n";
        ++refused_;
        return;
      }
    }
    mongo::write_options wo;
    wo.upsert = true;
    wo.write_concern = o_.parsed_write_concern;
    if (o_.bypass_document_validation) wo.bypass_document_validation = true;
    bson::builder set;  // merge: {$set: the fields but _id}
    set.open_document("$set");
    for (const auto& e : doc.view()) {
      if (o_.mode == "merge" && e.key() != "_id") set.append_element(e);
    }
    set.close();
    const auto r = o_.mode == "upsert" ? coll_.replace_one(filter.view(), doc.view(), wo)
                                       : coll_.update_one(filter.view(), set.view(), wo);
    if (!r) {
      ctx_.err << "oid: " << printable(where) << ": " << printable(r.error().message) << '\n';
      ++refused_;
      return;
    }
    ++written_;
  }

  void flush() { loader_.flush(); }

  /// With --stopOnError, once a document was refused: nothing more is written.
  bool stopped() const noexcept { return o_.stop_on_error && (loader_.stopped() || refused_ > 0); }

  std::uint64_t written() const noexcept { return written_ + loader_.inserted(); }
  std::uint64_t refused() const noexcept { return refused_ + loader_.refused(); }

 private:
  // Batches of 1,000 documents; unordered, and a batch that fails as a whole counts as refused
  // and the next one is tried, unless --stopOnError: then ordered, and the first refusal stops.
  batch_loader::settings loader_settings() const {
    batch_loader::settings s;
    s.max_bytes = UINT64_MAX;
    s.insert.ordered = o_.stop_on_error;
    s.insert.write_concern = o_.parsed_write_concern;
    if (o_.bypass_document_validation) s.insert.bypass_document_validation = true;
    s.stop_on_failure = o_.stop_on_error;
    return s;
  }

  void report(const loaded_batch& b) {
    if (b.failed != nullptr) {
      ctx_.err << "oid: " << printable(with_time_hint(ctx_, *b.failed)) << '\n';
      refused_ += b.documents.size();
    }
    for (const auto& r : b.refused) {
      ctx_.err << "oid: " << printable(places_[r.index]) << ": "
               << (r.duplicate ? "duplicate key: " : "refused: ") << printable(r.message) << '\n';
    }
    if (b.stopped_at && *b.stopped_at + 1 < b.documents.size()) {
      ctx_.err << "oid: --stopOnError: stopped at " << printable(places_[*b.stopped_at]) << "; the "
               << b.documents.size() - *b.stopped_at - 1 << " after it in its batch not written\n";
    }
    places_.clear();
  }

  context& ctx_;
  mongo::collection coll_;
  const import_options& o_;
  std::vector<std::string> keys_;
  std::vector<std::string> places_;  // of the documents the loader holds
  std::uint64_t written_ = 0, refused_ = 0;
  batch_loader loader_;
};

void run_import(context& ctx, import_options o) {
  // mongoimport -d DB -c COLL FILE: with both flags, the one positional is the file.
  if (!o.db.empty() && !o.coll.empty() && !o.ns.empty() && o.file.empty()) std::swap(o.ns, o.file);
  const auto [db, coll_name] = namespace_of(o.ns, o.db, o.coll);
  const bool json = o.type == "json";
  const auto field_text = field_list(ctx, o.fields, o.field_file);
  if (!field_text) return;
  const std::vector<std::string> fields = split_fields(*field_text);
  if (!o.write_concern.empty()) {
    auto wc = write_concern_argument(ctx, o.write_concern);
    if (!wc) return;
    o.parsed_write_concern = *wc;
  }
  if (!json && !o.headerline && fields.empty()) {
    ctx.err << "oid: mongo import: --type " << o.type << " needs --headerline or --fields\n";
    ctx.status = exit_usage;
    return;
  }
  csv_columns columns;
  if (!json && !o.headerline) {
    if (auto parsed = columns.parse(fields, o.columns_have_types); !parsed) {
      ctx.err << "oid: mongo import: --fields: field " << parsed.error().index + 1 << ": "
              << printable(parsed.error().message) << '\n';
      return ctx.bad_input();
    }
  }
  std::ifstream file;
  std::istream* in = &ctx.in;
  const std::string name = o.file.empty() || o.file == "-" ? "stdin" : o.file;
  if (name != "stdin") {
    file.open(o.file, std::ios::binary);
    if (!file) {
      ctx.err << "oid: mongo import: cannot open " << printable(o.file) << '\n';
      return ctx.bad_input();
    }
    in = &file;
  }
  auto client = make_client(ctx, o.uri);
  if (!client) return;
  auto coll = client->collection(db, coll_name);
  if (o.drop) {
    if (auto d = coll.drop(); !d) return report(ctx, d.error());
  }
  const auto start = std::chrono::steady_clock::now();
  importer imp(ctx, coll, o);
  std::uint64_t bad = 0, bytes = 0;
  // The estimated total: the size of the input file (none for a pipe).
  std::uint64_t total = 0;
  if (name != "stdin") {
    std::error_code e;
    if (std::filesystem::is_regular_file(o.file, e)) total = std::filesystem::file_size(o.file, e);
    if (e) total = 0;
  }
  progress_line bar(ctx, o.quiet, total);
  // Counts the input read since the last call as one more document done.
  const auto advance = [&](std::uint64_t read) {
    bar.add(1, read - bytes);
    bytes = read;
  };
  if (json) {
    bson::json_stream_reader reader(*in);
    bson::document doc;
    std::uint64_t n = 0;
    while (true) {
      auto more = reader.next(doc);
      if (!more) {
        const auto where = reader.error_position();
        ctx.err << "oid: " << printable(name) << ": line " << where.line << ", column "
                << where.column << ": " << more.error().message() << '\n';
        ++bad;
        if (!reader.can_continue() || o.stop_on_error) break;
        continue;
      }
      if (!*more || imp.stopped()) break;
      advance(reader.bytes_read());
      imp.add(std::move(doc), name + ": document " + std::to_string(++n));
      doc = bson::document();
    }
    bytes = reader.bytes_read();
  } else {
    csv_reader reader(*in, o.type == "tsv" ? '\t' : ',', o.type == "csv");
    std::vector<std::string> record;
    bool header = o.headerline;
    while (true) {
      const auto got = reader.next(record);
      const std::string where = name + ": line " + std::to_string(reader.record_line());
      if (!got) {
        ctx.err << "oid: " << printable(name) << ": " << printable(got.error()) << '\n';
        ++bad;
        if (o.stop_on_error) break;
        continue;
      }
      if (!*got || imp.stopped()) break;
      if (record.size() == 1 && record[0].empty()) continue;  // an empty line
      if (header) {
        if (auto parsed = columns.parse(record, o.columns_have_types); !parsed) {
          ctx.err << "oid: " << printable(name) << ": "
                  << reader.field_position(parsed.error().index) << ": "
                  << printable(parsed.error().message)
                  << " (in the header line: nothing imported)\n";
          ++bad;
          break;
        }
        header = false;
        continue;
      }
      if (record.size() > columns.size()) {
        ctx.err << "oid: " << printable(where) << ": " << record.size() << " fields, but "
                << columns.size() << " names\n";
        ++bad;
        if (o.stop_on_error) break;
        continue;
      }
      bson::builder b;
      const auto grace = o.parse_grace == "skipField"  ? csv_columns::grace::skip_field
                         : o.parse_grace == "autoCast" ? csv_columns::grace::auto_cast
                                                       : csv_columns::grace::fail;
      if (auto built = columns.build(record, b, o.ignore_blanks, grace); !built) {
        const std::size_t bad_field = built.error();
        ctx.err << "oid: " << printable(name) << ": " << reader.field_position(bad_field) << ": \""
                << printable(record[bad_field]) << "\" is not "
                << printable(columns[bad_field].type_text) << " (field "
                << printable(columns[bad_field].name) << ")"
                << (o.parse_grace == "stop" ? "; --parseGrace stop: nothing after it imported\n"
                                            : "; the line is not imported\n");
        ++bad;
        if (o.stop_on_error || o.parse_grace == "stop") break;
        continue;
      }
      advance(reader.bytes_read());
      imp.add(std::move(b).extract(), where);
    }
    bytes = reader.bytes_read();
  }
  imp.flush();
  bar.finish();
  if (bad > 0 || imp.refused() > 0) ctx.bad_input();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.quiet) return;  // errors only
  ctx.err << "imported " << imp.written() << " documents, " << bytes << " bytes of " << o.type
          << ", in " << std::fixed << std::setprecision(2) << seconds << " s; " << imp.refused()
          << " refused, " << bad << " bad input\n";
}

}  // namespace

void add_mongo_transfer_commands(CLI::App& mongo, context& ctx) {
  {
    auto o = std::make_shared<export_options>();
    auto* cmd = mongo.add_subcommand(
        "export", "Write a collection as Extended JSON lines, a JSON array, or CSV (mongoexport)");
    add_uri_options(*cmd, ctx, o->uri, command_time::batches);
    cmd->add_option("DB.COLL", o->ns, "Database and collection (or --db and --collection)");
    cmd->add_option("-d,--db", o->db, "The database (mongoexport's; or DB.COLL)");
    cmd->add_option("-c,--collection", o->coll, "The collection (mongoexport's; or DB.COLL)");
    cmd->add_option("--type", o->type, "json (default) or csv")
        ->check(CLI::IsMember({"json", "csv"}));
    cmd->add_option("-f,--fields", o->fields, "Only these fields, f1,f2 (CSV: the columns)");
    cmd->add_option("--fieldFile", o->field_file, "The fields, one a line (instead of --fields)")
        ->type_name("FILE");
    cmd->add_option("-q,--query", o->query, "Only documents matching this Extended JSON filter");
    cmd->add_option("--queryFile", o->query_file, "The --query filter, read from a file")
        ->type_name("FILE");
    cmd->add_option("--sort", o->sort, "Sort order as Extended JSON");
    cmd->add_option("--skip", o->skip, "Leave out this many documents first")
        ->check(CLI::Range(0, 1 << 30));
    cmd->add_option("--limit", o->limit, "At most this many documents")
        ->check(CLI::Range(0, 1 << 30));
    cmd->add_flag("--jsonArray", o->json_array, "One JSON array instead of a document a line");
    cmd->add_flag("--canonical", o->canonical, "Canonical Extended JSON (default: relaxed)");
    cmd->add_option("--jsonFormat", o->json_format, "relaxed (default) or canonical")
        ->check(CLI::IsMember({"relaxed", "canonical"}));
    cmd->add_flag("--pretty", o->pretty, "JSON: each document indented over several lines");
    cmd->add_flag("--noHeaderLine", o->no_header_line, "CSV: no first line of field names");
    cmd->add_option("-o,--out", o->out, "The file to write (default: standard output)")
        ->type_name("FILE");
    cmd->add_flag("--quiet", o->quiet, "No progress line, no summary line on standard error");
    cmd->final_callback([&ctx, o] { run_export(ctx, *o); });
  }
  {
    auto o = std::make_shared<import_options>();
    auto* cmd = mongo.add_subcommand(
        "import", "Insert, upsert or merge documents from JSON, CSV or TSV (mongoimport)");
    add_uri_options(*cmd, ctx, o->uri, command_time::batches);
    cmd->add_option("DB.COLL", o->ns, "Database and collection (or --db and --collection)");
    cmd->add_option("FILE,--file", o->file, "The file to read (default: standard input)")
        ->type_name("FILE");
    cmd->add_option("-d,--db", o->db, "The database (mongoimport's; or DB.COLL)");
    cmd->add_option("-c,--collection", o->coll, "The collection (mongoimport's; or DB.COLL)");
    cmd->add_option("--type", o->type, "json (default), csv or tsv")
        ->check(CLI::IsMember({"json", "csv", "tsv"}));
    cmd->add_flag("--headerline", o->headerline, "CSV/TSV: the first line names the fields");
    cmd->add_option("-f,--fields", o->fields, "CSV/TSV: the field names, f1,f2 (a.b: nested)");
    cmd->add_option("--fieldFile", o->field_file, "CSV/TSV: the field names, one a line")
        ->type_name("FILE");
    cmd->add_flag("--ignoreBlanks", o->ignore_blanks, "CSV/TSV: leave empty fields out");
    cmd->add_option("--parseGrace", o->parse_grace,
                    "A typed field that does not parse (--columnsHaveTypes): skipRow (default: the "
                    "line is reported and not imported), stop, skipField, autoCast (read as auto)")
        ->check(CLI::IsMember({"autoCast", "skipField", "skipRow", "stop"}));
    cmd->add_flag("--columnsHaveTypes", o->columns_have_types,
                  "CSV/TSV: each name is NAME.TYPE(ARG): auto, binary(base64|base32|hex), "
                  "boolean, date(GO LAYOUT), date_ms(LAYOUT), date_oracle(LAYOUT), decimal, "
                  "double, int32, int64, string");
    cmd->add_option("--mode", o->mode,
                    "insert (default); upsert: replace the match of --upsertFields; merge: $set "
                    "the fields on it")
        ->check(CLI::IsMember({"insert", "upsert", "merge"}));
    cmd->add_option("--upsertFields", o->upsert_fields, "The fields to match on (default _id)");
    cmd->add_flag("--jsonArray", o->json_array, "Accepted: a JSON array is recognised anyway");
    cmd->add_flag("--drop", o->drop, "Drop the collection first");
    cmd->add_flag("--stopOnError,--maintainInsertionOrder", o->stop_on_error,
                  "Insert in the input's order and stop at the first refused document or bad "
                  "input (default: report each and go on)");
    cmd->add_option("--writeConcern", o->write_concern,
                    "majority, a number, a tag or {w: ..., j: ..., wtimeout: MS} (default: the "
                    "server's)");
    cmd->add_flag("--bypassDocumentValidation", o->bypass_document_validation,
                  "Let the documents skip the collection's validator");
    cmd->add_flag("--quiet", o->quiet, "No progress line, no summary line on standard error");
    cmd->final_callback([&ctx, o] { run_import(ctx, *o); });
  }
}

}  // namespace oid::cli
