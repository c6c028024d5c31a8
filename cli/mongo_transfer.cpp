// oid mongo export | import: a collection as Extended JSON (one document a line, or a JSON array)
// or CSV, and back, with mongoexport's and mongoimport's meanings. CSV follows RFC 4180: fields
// with a separator, a quote or a line break are quoted, quotes doubled inside.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <istream>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "mongo_tools.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

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
  std::string uri, ns, type = "json", fields, query, sort, out;
  bool json_array = false, canonical = false, quiet = false;
  std::int64_t limit = 0;
};

// The value at a dotted path ("a.b.c") of `doc`.
std::optional<bson::element> at_path(bson::document_view doc, std::string_view path) {
  while (true) {
    const auto dot = path.find('.');
    const auto e = doc.find(path.substr(0, dot));
    if (!e) return std::nullopt;
    if (dot == std::string_view::npos) return *e;
    auto sub = e->get_document();
    if (!sub) sub = e->get_array();
    if (!sub) return std::nullopt;
    doc = *sub;
    path.remove_prefix(dot + 1);
  }
}

void append_csv_text(const std::string& text, std::string& line);

// One CSV field: strings as they are, ObjectIds as ObjectId(hex) (as mongoexport writes them),
// other values as relaxed Extended JSON; quoted when RFC 4180 asks.
void append_csv_value(std::optional<bson::element> e, std::string& line) {
  std::string text;
  if (e) {
    if (auto s = e->get_string()) {
      text = *s;
    } else if (auto id = e->get_object_id()) {
      text = "ObjectId(" + id->to_hex() + ")";
    } else if (e->type() != bson::type::null) {
      bson::builder one;
      one.append_element(*e);
      std::string json = bson::to_json(one.view(), bson::json_mode::relaxed);
      // {"KEY":VALUE} -> VALUE
      const auto colon = json.find("\":");
      text = json.substr(colon + 2, json.size() - colon - 3);
    }
  }
  append_csv_text(text, line);
}

void append_csv_text(const std::string& text, std::string& line) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    line += text;
    return;
  }
  line += '"';
  for (const char c : text) {
    if (c == '"') line += '"';
    line += c;
  }
  line += '"';
}

void run_export(context& ctx, const export_options& o) {
  const auto [db, coll_name] = namespace_of(o.ns);
  const auto fields = split_fields(o.fields);
  const bool csv = o.type == "csv";
  if (csv && fields.empty()) {
    ctx.err << "oid: mongo export: --type csv needs --fields\n";
    ctx.status = exit_usage;
    return;
  }
  std::optional<bson::document> query = bson::document(), sort = bson::document();
  if (!o.query.empty() && !(query = json_argument(ctx, "--query", o.query))) return;
  if (!o.sort.empty() && !(sort = json_argument(ctx, "--sort", o.sort))) return;
  bson::builder projection;
  for (const auto& f : fields) projection.append_int32(f, 1);
  auto client = make_client(ctx, o.uri);
  if (!client) return;
  std::ofstream file;
  std::ostream* out = &ctx.out;
  if (!o.out.empty() && o.out != "-") {
    file.open(o.out, std::ios::binary);
    if (!file) {
      ctx.err << "oid: mongo export: cannot create " << o.out << '\n';
      return ctx.bad_input();
    }
    out = &file;
  }
  const auto start = std::chrono::steady_clock::now();
  mongo::find_options fo;
  fo.projection = projection.view();
  fo.sort = sort->view();
  fo.limit = o.limit;
  auto cur = client->collection(db, coll_name).find(query->view(), fo);
  if (!cur) return report(ctx, cur.error());
  output_buffer buf(*out);
  std::string line;
  const bson::json_mode mode = o.canonical ? bson::json_mode::canonical : bson::json_mode::relaxed;
  if (csv) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line += ',';
      append_csv_text(fields[i], line);
    }
    line += '\n';
    buf.write(line);
  } else if (o.json_array) {
    buf.put('[');
  }
  std::uint64_t count = 0, bytes = 0;
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
      line += '\n';
    } else {
      if (o.json_array && count > 0) line += ',';
      bson::to_json(doc, mode, line);
      if (!o.json_array) line += '\n';
    }
    buf.write(line);
    ++count;
    bytes += doc.size();
  }
  if (!csv && o.json_array) buf.write("]\n");
  buf.flush();
  if (!*out) {
    ctx.err << "oid: mongo export: cannot write the output\n";
    return ctx.bad_input();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.quiet) {
    ctx.err << "exported " << count << " documents, " << bytes << " bytes of BSON, in "
            << std::fixed << std::setprecision(2) << seconds << " s\n";
  }
}

// ---- import ---------------------------------------------------------------------------------

struct import_options {
  std::string uri, ns, file, type = "json", fields, mode = "insert", upsert_fields = "_id";
  bool headerline = false, json_array = false, drop = false, quiet = false;
};

// Reads RFC 4180 records (or, with `quotes` false, plain TSV lines) from a stream, keeping the
// line and column of every field for the error messages.
class csv_reader {
 public:
  csv_reader(std::istream& in, char separator, bool quotes)
      : in_(in), separator_(separator), quotes_(quotes) {}
  // The next record into `fields`; false at the end. A malformed record sets `error` (with line
  // and column) and returns true with the fields read so far.
  bool next(std::vector<std::string>& fields, std::string& error) {
    fields.clear();
    error.clear();
    record_line_ = line_;
    int c = in_.get();
    if (c == EOF) return false;
    std::string field;
    bool quoted = false, after_quote = false;
    std::size_t quote_line = 0, quote_column = 0;
    while (true) {
      if (c == EOF) {
        if (quoted) {
          error = "line " + std::to_string(quote_line) + ", column " +
                  std::to_string(quote_column) + ": a quoted field is never closed";
        }
        fields.push_back(std::move(field));
        return true;
      }
      ++column_;
      const char ch = static_cast<char>(c);
      if (quoted) {
        if (ch == '"') {
          if (in_.peek() == '"') {
            in_.get();
            ++column_;
            field += '"';
          } else {
            quoted = false;
            after_quote = true;
          }
        } else {
          if (ch == '\n') {
            ++line_;
            column_ = 0;
          }
          field += ch;
        }
      } else if (ch == separator_) {
        fields.push_back(std::move(field));
        field.clear();
        after_quote = false;
      } else if (ch == '\n' || ch == '\r') {
        if (ch == '\r' && in_.peek() == '\n') in_.get();
        ++line_;
        column_ = 0;
        fields.push_back(std::move(field));
        return true;
      } else if (after_quote) {
        if (error.empty()) {
          error = "line " + std::to_string(line_) + ", column " + std::to_string(column_) +
                  ": text after a closing quote";
        }
      } else if (quotes_ && ch == '"') {
        if (!field.empty()) {
          if (error.empty()) {
            error = "line " + std::to_string(line_) + ", column " + std::to_string(column_) +
                    ": a quote inside an unquoted field";
          }
        } else {
          quoted = true;
          quote_line = line_;
          quote_column = column_;
        }
      } else {
        field += ch;
      }
      c = in_.get();
    }
  }
  std::size_t record_line() const noexcept { return record_line_; }

 private:
  std::istream& in_;
  char separator_;
  bool quotes_;
  std::size_t line_ = 1, column_ = 0, record_line_ = 1;
};

// A CSV value as mongoimport types it without --columnsHaveTypes: a whole number as int32 (int64
// when larger), a decimal number as double, anything else a string.
void append_csv_field(bson::builder& b, const std::string& key, const std::string& v) {
  if (!v.empty()) {
    std::size_t used = 0;
    const bool plain =
        v.find_first_not_of("+-0123456789") == std::string::npos && v != "+" && v != "-";
    try {
      if (plain) {
        const long long n = std::stoll(v, &used);
        if (used == v.size()) {
          if (n >= INT32_MIN && n <= INT32_MAX) {
            b.append_int32(key, static_cast<std::int32_t>(n));
          } else {
            b.append_int64(key, n);
          }
          return;
        }
      } else if (v.find_first_not_of("+-0123456789.eE") == std::string::npos) {
        const double d = std::stod(v, &used);
        if (used == v.size()) {
          b.append_double(key, d);
          return;
        }
      }
    } catch (const std::exception&) {  // out of range, or not a number after all: a string
    }
  }
  b.append_string(key, v);
}

class importer {
 public:
  importer(context& ctx, mongo::collection coll, const import_options& o)
      : ctx_(ctx), coll_(std::move(coll)), o_(o), keys_(split_fields(o.upsert_fields)) {}

  // Adds a document (`where` names its place for messages).
  void add(bson::document doc, std::string where) {
    if (o_.mode == "insert") {
      batch_.push_back(std::move(doc));
      places_.push_back(std::move(where));
      if (batch_.size() >= 1000) flush();
      return;
    }
    bson::builder filter;
    for (const auto& k : keys_) {
      if (const auto e = at_path(doc.view(), k)) {
        filter.append_element(*e);
      } else {
        ctx_.err << "oid: " << where << ": no " << k << " field to match on (--upsertFields)\n";
        ++refused_;
        return;
      }
    }
    mongo::write_options wo;
    wo.upsert = true;
    bson::builder set;  // merge: {$set: the fields but _id}
    set.open_document("$set");
    for (const auto& e : doc.view()) {
      if (o_.mode == "merge" && e.key() != "_id") set.append_element(e);
    }
    set.close();
    const auto r = o_.mode == "upsert" ? coll_.replace_one(filter.view(), doc.view(), wo)
                                       : coll_.update_one(filter.view(), set.view(), wo);
    if (!r) {
      ctx_.err << "oid: " << where << ": " << r.error().message << '\n';
      ++refused_;
      return;
    }
    ++written_;
  }

  void flush() {
    if (batch_.empty()) return;
    std::vector<bson::document_view> views;
    for (const auto& d : batch_) views.push_back(d.view());
    mongo::insert_options io;
    io.ordered = false;
    auto r = coll_.insert_many(views, io);
    if (r) {
      written_ += static_cast<std::uint64_t>(r->inserted);
    } else {
      written_ += static_cast<std::uint64_t>(r.error().written);
      if (r.error().write_errors.empty()) {
        ctx_.err << "oid: " << r.error().message << '\n';
        refused_ += batch_.size();
      }
      for (const auto& e : r.error().write_errors) {
        const std::size_t i = std::min(e.index.value_or(0), batch_.size() - 1);
        ctx_.err << "oid: " << places_[i] << ": "
                 << (e.code == 11000 ? "duplicate key: " : "refused: ") << e.message << '\n';
        ++refused_;
      }
    }
    batch_.clear();
    places_.clear();
  }

  std::uint64_t written() const noexcept { return written_; }
  std::uint64_t refused() const noexcept { return refused_; }

 private:
  context& ctx_;
  mongo::collection coll_;
  const import_options& o_;
  std::vector<std::string> keys_;
  std::vector<bson::document> batch_;
  std::vector<std::string> places_;
  std::uint64_t written_ = 0, refused_ = 0;
};

void run_import(context& ctx, const import_options& o) {
  const auto [db, coll_name] = namespace_of(o.ns);
  const bool json = o.type == "json";
  std::vector<std::string> fields = split_fields(o.fields);
  if (!json && !o.headerline && fields.empty()) {
    ctx.err << "oid: mongo import: --type " << o.type << " needs --headerline or --fields\n";
    ctx.status = exit_usage;
    return;
  }
  std::ifstream file;
  std::istream* in = &ctx.in;
  const std::string name = o.file.empty() || o.file == "-" ? "stdin" : o.file;
  if (name != "stdin") {
    file.open(o.file, std::ios::binary);
    if (!file) {
      ctx.err << "oid: mongo import: cannot open " << o.file << '\n';
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
  std::uint64_t bad = 0;
  if (json) {
    bson::json_stream_reader reader(*in);
    bson::document doc;
    std::uint64_t n = 0;
    while (true) {
      auto more = reader.next(doc);
      if (!more) {
        const auto where = reader.error_position();
        ctx.err << "oid: " << name << ": line " << where.line << ", column " << where.column << ": "
                << more.error().message() << '\n';
        ++bad;
        if (!reader.can_continue()) break;
        continue;
      }
      if (!*more) break;
      imp.add(std::move(doc), name + ": document " + std::to_string(++n));
      doc = bson::document();
    }
  } else {
    csv_reader reader(*in, o.type == "tsv" ? '\t' : ',', o.type == "csv");
    std::vector<std::string> record;
    std::string error;
    bool header = o.headerline;
    while (reader.next(record, error)) {
      const std::string where = name + ": line " + std::to_string(reader.record_line());
      if (!error.empty()) {
        ctx.err << "oid: " << name << ": " << error << '\n';
        ++bad;
        continue;
      }
      if (record.size() == 1 && record[0].empty()) continue;  // an empty line
      if (header) {
        fields = record;
        header = false;
        continue;
      }
      if (record.size() > fields.size()) {
        ctx.err << "oid: " << where << ": " << record.size() << " fields, but " << fields.size()
                << " names\n";
        ++bad;
        continue;
      }
      bson::builder b;
      for (std::size_t i = 0; i < record.size(); ++i) append_csv_field(b, fields[i], record[i]);
      imp.add(std::move(b).extract(), where);
    }
  }
  imp.flush();
  if (bad > 0 || imp.refused() > 0) ctx.bad_input();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ctx.out << "imported " << imp.written() << " documents in " << std::fixed << std::setprecision(2)
          << seconds << " s; " << imp.refused() << " refused, " << bad << " bad input\n";
}

}  // namespace

void add_mongo_transfer_commands(CLI::App& mongo, context& ctx) {
  {
    auto o = std::make_shared<export_options>();
    auto* cmd = mongo.add_subcommand(
        "export", "Write a collection as Extended JSON lines, a JSON array, or CSV (mongoexport)");
    cmd->add_option("URI", o->uri, "Connection string")->required();
    cmd->add_option("DB.COLL", o->ns, "Database and collection")->required();
    cmd->add_option("--type", o->type, "json (default) or csv")
        ->check(CLI::IsMember({"json", "csv"}));
    cmd->add_option("--fields", o->fields, "Only these fields, f1,f2 (CSV: the columns)");
    cmd->add_option("--query", o->query, "Only documents matching this Extended JSON filter");
    cmd->add_option("--sort", o->sort, "Sort order as Extended JSON");
    cmd->add_option("--limit", o->limit, "At most this many documents")
        ->check(CLI::Range(0, 1 << 30));
    cmd->add_flag("--jsonArray", o->json_array, "One JSON array instead of a document a line");
    cmd->add_flag("--canonical", o->canonical, "Canonical Extended JSON (default: relaxed)");
    cmd->add_option("--out", o->out, "The file to write (default: standard output)");
    cmd->add_flag("--quiet", o->quiet, "No summary line on standard error");
    cmd->final_callback([&ctx, o] { run_export(ctx, *o); });
  }
  {
    auto o = std::make_shared<import_options>();
    auto* cmd = mongo.add_subcommand(
        "import", "Insert, upsert or merge documents from JSON, CSV or TSV (mongoimport)");
    cmd->add_option("URI", o->uri, "Connection string")->required();
    cmd->add_option("DB.COLL", o->ns, "Database and collection")->required();
    cmd->add_option("FILE", o->file, "The file to read (default: standard input)");
    cmd->add_option("--type", o->type, "json (default), csv or tsv")
        ->check(CLI::IsMember({"json", "csv", "tsv"}));
    cmd->add_flag("--headerline", o->headerline, "CSV/TSV: the first line names the fields");
    cmd->add_option("--fields", o->fields, "CSV/TSV: the field names, f1,f2");
    cmd->add_option("--mode", o->mode,
                    "insert (default); upsert: replace the match of --upsertFields; merge: $set "
                    "the fields on it")
        ->check(CLI::IsMember({"insert", "upsert", "merge"}));
    cmd->add_option("--upsertFields", o->upsert_fields, "The fields to match on (default _id)");
    cmd->add_flag("--jsonArray", o->json_array, "Accepted: a JSON array is recognised anyway");
    cmd->add_flag("--drop", o->drop, "Drop the collection first");
    cmd->final_callback([&ctx, o] { run_import(ctx, *o); });
  }
}

}  // namespace oid::cli
