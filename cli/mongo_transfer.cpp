// oid mongo export | import: a collection as Extended JSON (one document a line, or a JSON array)
// or CSV, and back, with mongoexport's and mongoimport's meanings. CSV follows RFC 4180: fields
// with a separator, a quote or a line break are quoted, quotes doubled inside.
#include <unistd.h>

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
      ctx.err << "oid: mongo export: cannot create " << o.out << '\n';
      return ctx.bad_input();
    }
    out = &file;
  }
  // No progress line when the documents themselves go to the terminal.
  const bool quiet =
      o.quiet || (out == &ctx.out && &ctx.out == &std::cout && ::isatty(STDOUT_FILENO) == 1);
  // The estimated total: the collection's count (at most --limit), when every document goes.
  std::uint64_t total = 0;
  if (progress_line::shows(ctx, quiet) && query->empty()) {
    const auto n = client->collection(db, coll_name).estimated_document_count();
    if (n && *n > 0) total = static_cast<std::uint64_t>(*n);
    if (o.limit > 0) total = std::min(total, static_cast<std::uint64_t>(o.limit));
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
      line += '\n';
    } else {
      if (o.json_array && count > 0) line += ',';
      bson::to_json(doc, mode, line);
      if (!o.json_array) line += '\n';
    }
    buf.write(line);
    ++count;
    bytes += doc.size();
    bar.add(1, doc.size());
  }
  if (!csv && o.json_array) buf.write("]\n");
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
  std::string uri, ns, file, type = "json", fields, mode = "insert", upsert_fields = "_id";
  bool headerline = false, json_array = false, drop = false, quiet = false;
  bool columns_have_types = false;
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
    starts_.clear();
    record_line_ = line_;
    int c = get();
    if (c == EOF) return false;
    starts_.push_back({line_, column_ + 1});
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
            get();
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
        starts_.push_back({line_, column_ + 1});
      } else if (ch == '\n' || ch == '\r') {
        if (ch == '\r' && in_.peek() == '\n') get();
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
      c = get();
    }
  }
  std::size_t record_line() const noexcept { return record_line_; }
  /// "line L, column C": where field `i` of the last record starts.
  std::string field_position(std::size_t i) const {
    if (i >= starts_.size()) return "line " + std::to_string(record_line_);
    return "line " + std::to_string(starts_[i].first) + ", column " +
           std::to_string(starts_[i].second);
  }
  /// Bytes consumed from the stream so far.
  std::uint64_t bytes_read() const noexcept { return bytes_; }

 private:
  int get() {
    const int c = in_.get();
    if (c != EOF) ++bytes_;
    return c;
  }
  std::istream& in_;
  char separator_;
  bool quotes_;
  std::size_t line_ = 1, column_ = 0, record_line_ = 1;
  std::uint64_t bytes_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> starts_;  // line and column of each field
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

// ---- typed and dotted CSV columns -----------------------------------------------------------

// The types of mongoimport's --columnsHaveTypes, NAME.TYPE(ARGUMENT).
enum class column_type {
  automatic,
  binary,
  boolean,
  date_go,
  date_ms,
  date_oracle,
  decimal,
  double_,
  int32,
  int64,
  string
};

// One piece of a date layout: a number of fixed digits, the month's abbreviation, fractional
// seconds, a UTC offset, or a character that must be there as it is.
struct date_piece {
  enum kind_t { literal, year, month, month_name, day, hour, minute, second, fraction, offset };
  kind_t kind;
  char c = 0;          // literal: the character
  bool colon = false;  // offset: hh:mm (else hhmm)
  bool z = false;      // offset: "Z" stands for +00:00
};

struct column {
  std::vector<std::string> path;  // the field name split at its dots
  std::string name;               // as given (with its type)
  std::string type_text;          // "int32()", "date(2006-01-02)", ...; empty when untyped
  column_type type = column_type::automatic;
  std::string argument;  // binary: the encoding; a date: its layout
  std::vector<date_piece> layout;
};

// The fields a date layout may name, in the order they are tried (a longer one before its prefix).
struct layout_field {
  std::string_view text;
  date_piece piece;
};
constexpr layout_field go_fields[] = {{"2006", {date_piece::year}},
                                      {"Jan", {date_piece::month_name}},
                                      {"01", {date_piece::month}},
                                      {"02", {date_piece::day}},
                                      {"15", {date_piece::hour}},
                                      {"04", {date_piece::minute}},
                                      {"05", {date_piece::second}},
                                      {"Z07:00", {date_piece::offset, 0, true, true}},
                                      {"-07:00", {date_piece::offset, 0, true, false}},
                                      {"Z0700", {date_piece::offset, 0, false, true}},
                                      {"-0700", {date_piece::offset, 0, false, false}}};
constexpr layout_field ms_fields[] = {
    {"yyyy", {date_piece::year}}, {"MMM", {date_piece::month_name}},
    {"MM", {date_piece::month}},  {"dd", {date_piece::day}},
    {"HH", {date_piece::hour}},   {"mm", {date_piece::minute}},
    {"ss", {date_piece::second}}, {"zzz", {date_piece::offset, 0, true, false}}};
constexpr layout_field oracle_fields[] = {  // matched in either case
    {"YYYY", {date_piece::year}}, {"MON", {date_piece::month_name}},
    {"MM", {date_piece::month}},  {"DD", {date_piece::day}},
    {"HH24", {date_piece::hour}}, {"MI", {date_piece::minute}},
    {"SS", {date_piece::second}}, {"TZH:TZM", {date_piece::offset, 0, true, false}}};

// The pieces of a date layout in the style of `type`: Go's reference time
// (2006-01-02T15:04:05.000Z07:00), Microsoft's (yyyy-MM-dd HH:mm:ss.fff zzz) or Oracle's
// (YYYY-MM-DD HH24:MI:SS.FF TZH:TZM); characters that are none of their fields are literal.
std::vector<date_piece> date_layout(column_type type, std::string_view l) {
  const bool go = type == column_type::date_go, ms = type == column_type::date_ms;
  const std::span<const layout_field> fields = go   ? std::span<const layout_field>(go_fields)
                                               : ms ? std::span<const layout_field>(ms_fields)
                                                    : std::span<const layout_field>(oracle_fields);
  const auto starts = [&](std::string_view token) {
    if (l.size() < token.size()) return false;
    for (std::size_t i = 0; i < token.size(); ++i) {
      const auto c = static_cast<unsigned char>(l[i]);
      if ((go || ms ? l[i] : static_cast<char>(std::toupper(c))) != token[i]) return false;
    }
    return true;
  };
  // Skips the characters of `set` at the front of l; true when there was one.
  const auto skip = [&](std::string_view set) {
    const auto n = std::min(l.find_first_not_of(set), l.size());
    l.remove_prefix(n);
    return n > 0;
  };
  std::vector<date_piece> out;
  while (!l.empty()) {
    const auto f = std::find_if(fields.begin(), fields.end(),
                                [&](const layout_field& x) { return starts(x.text); });
    if (f != fields.end()) {
      out.push_back(f->piece);
      l.remove_prefix(f->text.size());
    } else if (go && (starts(".0") || starts(".9"))) {  // .000 or .999: fractional seconds
      l.remove_prefix(1);
      skip("09");
      out.push_back({date_piece::literal, '.'});
      out.push_back({date_piece::fraction});
    } else if (ms && skip("fF")) {  // fff: fractional seconds
      out.push_back({date_piece::fraction});
    } else if (!go && !ms && starts("FF")) {  // FF, or FF1 to FF9: fractional seconds
      l.remove_prefix(2);
      if (!l.empty() && l[0] >= '1' && l[0] <= '9') l.remove_prefix(1);
      out.push_back({date_piece::fraction});
    } else {
      out.push_back({date_piece::literal, l[0]});
      l.remove_prefix(1);
    }
  }
  return out;
}

// `text` read by `layout`: milliseconds since the Unix epoch, or nullopt.
std::optional<std::int64_t> parse_date(const std::vector<date_piece>& layout, std::string_view text,
                                       bool go) {
  int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, offset_minutes = 0;
  std::int64_t ms = 0;
  const auto digits = [&](std::size_t n, int& v) {
    if (text.size() < n) return false;
    v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      v = v * 10 + (text[i] - '0');
    }
    text.remove_prefix(n);
    return true;
  };
  const auto fraction = [&] {
    std::size_t n = 0;
    std::int64_t scale = 100;
    while (n < text.size() && text[n] >= '0' && text[n] <= '9') {
      ms += (text[n] - '0') * scale;
      scale /= 10;
      ++n;
    }
    text.remove_prefix(n);
    return n > 0;
  };
  static constexpr std::string_view months[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const auto& p = layout[i];
    bool ok = true;
    switch (p.kind) {
    case date_piece::literal:
      ok = !text.empty() && text[0] == p.c;
      if (ok) text.remove_prefix(1);
      break;
    case date_piece::year: ok = digits(4, year); break;
    case date_piece::month: ok = digits(2, month); break;
    case date_piece::day: ok = digits(2, day); break;
    case date_piece::hour: ok = digits(2, hour); break;
    case date_piece::minute: ok = digits(2, minute); break;
    case date_piece::second:
      ok = digits(2, second);
      // Go reads fractional seconds after the seconds even when the layout has none.
      if (ok && go && text.size() > 1 && text[0] == '.' &&
          !(i + 2 < layout.size() && layout[i + 2].kind == date_piece::fraction)) {
        text.remove_prefix(1);
        ok = fraction();
      }
      break;
    case date_piece::fraction: ok = fraction(); break;
    case date_piece::month_name:
      ok = false;
      for (int m = 0; m < 12 && !ok && text.size() >= 3; ++m) {
        ok = true;
        for (std::size_t k = 0; k < 3; ++k) {
          ok = ok && std::toupper(static_cast<unsigned char>(text[k])) == months[m][k];
        }
        if (ok) month = m + 1;
      }
      if (ok) text.remove_prefix(3);
      break;
    case date_piece::offset:
      if (p.z && !text.empty() && text[0] == 'Z') {
        text.remove_prefix(1);
        break;
      }
      ok = !text.empty() && (text[0] == '+' || text[0] == '-');
      if (ok) {
        const int sign = text[0] == '-' ? -1 : 1;
        int h = 0, m = 0;
        text.remove_prefix(1);
        ok = digits(2, h) && (!p.colon || (!text.empty() && text[0] == ':'));
        if (ok && p.colon) text.remove_prefix(1);
        ok = ok && digits(2, m) && h < 24 && m < 60;
        offset_minutes = sign * (h * 60 + m);
      }
      break;
    }
    if (!ok) return std::nullopt;
  }
  if (!text.empty() || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{std::chrono::year(year),
                            std::chrono::month(static_cast<unsigned>(month)),
                            std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  const std::int64_t days = sys_days(date).time_since_epoch().count();
  return ((days * 24 + hour) * 60 + minute - offset_minutes) * 60000 + second * 1000 + ms;
}

// Bytes from text in `encoding` (base64, base32 or hex, as mongoimport's binary() takes), or
// nullopt.
std::optional<std::vector<std::uint8_t>> decode_binary(const std::string& encoding,
                                                       const std::string& text) {
  std::vector<std::uint8_t> out(text.size());
  if (encoding == "hex") {
    if (text.size() % 2 != 0 || detail::decode_hex(text.data(), text.size() / 2, out.data()) >= 0) {
      return std::nullopt;
    }
    out.resize(text.size() / 2);
    return out;
  }
  if (encoding == "base64") {
    const auto n = detail::decode_base64(text.data(), text.size(), out.data());
    if (n < 0) return std::nullopt;
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
  // base32 (RFC 4648: A-Z 2-7, padded with '=' to a multiple of 8 characters).
  if (text.size() % 8 != 0) return std::nullopt;
  std::size_t end = text.find('=');
  if (end == std::string::npos) end = text.size();
  if (text.find_first_not_of('=', end) != std::string::npos) return std::nullopt;
  out.clear();
  std::uint32_t bits = 0;
  int have = 0;
  for (std::size_t i = 0; i < end; ++i) {
    const char c = text[i];
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= '2' && c <= '7') v = c - '2' + 26;
    if (v < 0) return std::nullopt;
    bits = (bits << 5) | static_cast<std::uint32_t>(v);
    have += 5;
    if (have >= 8) {
      have -= 8;
      out.push_back(static_cast<std::uint8_t>(bits >> have));
    }
  }
  return out;
}

// A whole number of type T in `text` (an optional sign, then digits), or nullopt.
template <typename T>
std::optional<T> parse_integer(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  T v{};
  const auto [end, e] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (e != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// Appends `text` as column `c` says; false when it cannot be read as that type.
bool append_typed(bson::builder& b, std::string_view key, const column& c,
                  const std::string& text) {
  switch (c.type) {
  case column_type::automatic: append_csv_field(b, std::string(key), text); return true;
  case column_type::string: b.append_string(key, text); return true;
  case column_type::int32:
    if (const auto v = parse_integer<std::int32_t>(text)) {
      b.append_int32(key, *v);
      return true;
    }
    return false;
  case column_type::int64:
    if (const auto v = parse_integer<std::int64_t>(text)) {
      b.append_int64(key, *v);
      return true;
    }
    return false;
  case column_type::double_: {
    std::string_view t = text;
    if (t.starts_with('+')) t.remove_prefix(1);
    double v = 0;
    const auto [end, e] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || e != std::errc() || end != t.data() + t.size()) return false;
    b.append_double(key, v);
    return true;
  }
  case column_type::decimal:
    if (const auto v = bson::decimal128::from_string(text)) {
      b.append_decimal128(key, *v);
      return true;
    }
    return false;
  case column_type::boolean: {
    // As Go's strconv.ParseBool reads them.
    static constexpr std::string_view yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static constexpr std::string_view no[] = {"0", "f", "F", "false", "FALSE", "False"};
    const bool is_yes = std::find(std::begin(yes), std::end(yes), text) != std::end(yes);
    if (!is_yes && std::find(std::begin(no), std::end(no), text) == std::end(no)) return false;
    b.append_bool(key, is_yes);
    return true;
  }
  case column_type::binary:
    if (const auto bytes = decode_binary(c.argument, text)) {
      b.append_binary(key, 0, *bytes);
      return true;
    }
    return false;
  case column_type::date_go:
  case column_type::date_ms:
  case column_type::date_oracle:
    if (const auto ms = parse_date(c.layout, text, c.type == column_type::date_go)) {
      b.append_date_time(key, *ms);
      return true;
    }
    return false;
  }
  return false;
}

// The columns of a CSV or TSV input: their names (dotted for nested fields) and, with
// --columnsHaveTypes, their types; and how a record becomes a document (nested fields grouped
// into one subdocument each, in the order of their first column).
class csv_columns {
 public:
  // Reads the names (each NAME.TYPE(ARGUMENT) when `typed`); false with `error` and the index of
  // the bad name in `bad` when one is wrong.
  bool parse(const std::vector<std::string>& names, bool typed, std::string& error,
             std::size_t& bad) {
    columns_.clear();
    for (bad = 0; bad < names.size(); ++bad) {
      column c;
      c.name = names[bad];
      std::string field = c.name;
      if (typed && !parse_type(c, field, error)) return false;
      std::size_t start = 0;
      while (true) {
        const auto dot = std::min(field.find('.', start), field.size());
        c.path.push_back(field.substr(start, dot - start));
        if (c.path.back().empty()) {
          error = "\"" + c.name + "\": an empty field name";
          return false;
        }
        if (dot == field.size()) break;
        start = dot + 1;
      }
      // A field may not be named twice, nor be both a value and a document of others.
      for (std::size_t k = 0; k < columns_.size(); ++k) {
        const auto& other = columns_[k].path;
        const auto common = std::min(other.size(), c.path.size());
        if (std::equal(other.begin(), other.begin() + static_cast<std::ptrdiff_t>(common),
                       c.path.begin())) {
          error = "\"" + c.name + "\" and \"" + columns_[k].name + "\" (column " +
                  std::to_string(k + 1) +
                  (other.size() == c.path.size() ? ") name the same field"
                                                 : ") make a field both a value and a document");
          return false;
        }
      }
      columns_.push_back(std::move(c));
    }
    program_.clear();
    std::vector<std::size_t> all(columns_.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    plan(all, 0);
    return true;
  }

  std::size_t size() const noexcept { return columns_.size(); }

  // The document of `record` (at most size() fields); false with the index of the field that
  // cannot be read as its type in `bad`.
  bool build(const std::vector<std::string>& record, bson::builder& b, std::size_t& bad) const {
    for (std::size_t i = 0; i < program_.size(); ++i) {
      const auto& op = program_[i];
      if (op.kind == step::open) {
        // A subdocument none of whose columns the (short) record has is left out.
        if (op.column >= record.size()) {
          i = op.end;
        } else {
          b.open_document(op.key);
        }
      } else if (op.kind == step::close) {
        b.close();
      } else if (op.column < record.size() &&
                 !append_typed(b, op.key, columns_[op.column], record[op.column])) {
        bad = op.column;
        return false;
      }
    }
    return true;
  }

  const column& operator[](std::size_t i) const { return columns_[i]; }

 private:
  struct step {
    enum kind_t { value, open, close } kind;
    std::size_t column = 0;  // value: its column; open: the first column of the subdocument
    std::string key;         // value, open
    std::size_t end = 0;     // open: the index of its close in program_
  };

  // Splits "NAME.TYPE(ARGUMENT)" of c.name: the name into `field`, the rest into c.
  static bool parse_type(column& c, std::string& field, std::string& error) {
    static constexpr std::pair<std::string_view, column_type> types[] = {
        {"auto", column_type::automatic},  {"binary", column_type::binary},
        {"boolean", column_type::boolean}, {"bool", column_type::boolean},
        {"date", column_type::date_go},    {"date_go", column_type::date_go},
        {"date_ms", column_type::date_ms}, {"date_oracle", column_type::date_oracle},
        {"decimal", column_type::decimal}, {"double", column_type::double_},
        {"int32", column_type::int32},     {"int64", column_type::int64},
        {"string", column_type::string}};
    const std::string& n = c.name;
    // The type is the word between the last dot before the first '(' and that '('.
    const auto open = n.find('(');
    const auto dot = open == std::string::npos ? std::string::npos : n.rfind('.', open);
    if (open == std::string::npos || dot == std::string::npos || !n.ends_with(")")) {
      error =
          "\"" + n + "\" has no type (--columnsHaveTypes: NAME.TYPE(), e.g. " + n + ".string())";
      return false;
    }
    const std::string type = n.substr(dot + 1, open - dot - 1);
    c.argument = n.substr(open + 1, n.size() - open - 2);
    c.type_text = n.substr(dot + 1);
    field = n.substr(0, dot);
    const auto t = std::find_if(std::begin(types), std::end(types),
                                [&](const auto& p) { return p.first == type; });
    if (t == std::end(types)) {
      error = "\"" + n + "\": unknown type " + type +
              "() (auto, binary, boolean, date, date_go, date_ms, date_oracle, decimal, double, "
              "int32, int64, string)";
      return false;
    }
    c.type = t->second;
    const bool is_date = c.type == column_type::date_go || c.type == column_type::date_ms ||
                         c.type == column_type::date_oracle;
    if (c.type == column_type::binary) {
      if (c.argument != "base64" && c.argument != "base32" && c.argument != "hex") {
        error = "\"" + n + "\": binary() takes base64, base32 or hex";
        return false;
      }
    } else if (is_date) {
      if (c.argument.empty()) {
        error = "\"" + n + "\": " + type + "() needs a layout, e.g. " + type +
                (c.type == column_type::date_go   ? "(2006-01-02T15:04:05Z07:00)"
                 : c.type == column_type::date_ms ? "(yyyy-MM-dd HH:mm:ss)"
                                                  : "(YYYY-MM-DD HH24:MI:SS)");
        return false;
      }
      c.layout = date_layout(c.type, c.argument);
    } else if (!c.argument.empty()) {
      error = "\"" + n + "\": " + type + "() takes no argument";
      return false;
    }
    return true;
  }

  // The steps that build the fields of `members` (indexes of columns) from path element `depth`.
  void plan(const std::vector<std::size_t>& members, std::size_t depth) {
    std::vector<bool> done(members.size());
    for (std::size_t a = 0; a < members.size(); ++a) {
      if (done[a]) continue;
      const auto& path = columns_[members[a]].path;
      if (path.size() == depth + 1) {
        program_.push_back({step::value, members[a], path[depth]});
        continue;
      }
      std::vector<std::size_t> group;
      for (std::size_t b = a; b < members.size(); ++b) {
        const auto& other = columns_[members[b]].path;
        if (!done[b] && other.size() > depth + 1 && other[depth] == path[depth]) {
          group.push_back(members[b]);
          done[b] = true;
        }
      }
      const std::size_t open = program_.size();
      program_.push_back({step::open, members[a], path[depth]});
      plan(group, depth + 1);
      program_[open].end = program_.size();
      program_.push_back({step::close, 0, {}});
    }
  }

  std::vector<column> columns_;
  std::vector<step> program_;
};

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
      ctx_.err << "oid: " << where << ": " << printable(r.error().message) << '\n';
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
        ctx_.err << "oid: " << printable(r.error().message) << '\n';
        refused_ += batch_.size();
      }
      for (const auto& e : r.error().write_errors) {
        const std::size_t i = std::min(e.index.value_or(0), batch_.size() - 1);
        ctx_.err << "oid: " << places_[i] << ": "
                 << (e.code == oid::mongo::server_code::duplicate_key ? "duplicate key: "
                                                                      : "refused: ")
                 << printable(e.message) << '\n';
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
  const std::vector<std::string> fields = split_fields(o.fields);
  if (!json && !o.headerline && fields.empty()) {
    ctx.err << "oid: mongo import: --type " << o.type << " needs --headerline or --fields\n";
    ctx.status = exit_usage;
    return;
  }
  csv_columns columns;
  if (!json && !o.headerline) {
    std::string error;
    std::size_t bad_name = 0;
    if (!columns.parse(fields, o.columns_have_types, error, bad_name)) {
      ctx.err << "oid: mongo import: --fields: field " << bad_name + 1 << ": " << error << '\n';
      return ctx.bad_input();
    }
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
        ctx.err << "oid: " << name << ": line " << where.line << ", column " << where.column << ": "
                << more.error().message() << '\n';
        ++bad;
        if (!reader.can_continue()) break;
        continue;
      }
      if (!*more) break;
      advance(reader.bytes_read());
      imp.add(std::move(doc), name + ": document " + std::to_string(++n));
      doc = bson::document();
    }
    bytes = reader.bytes_read();
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
      std::size_t bad_field = 0;
      if (header) {
        if (!columns.parse(record, o.columns_have_types, error, bad_field)) {
          ctx.err << "oid: " << name << ": " << reader.field_position(bad_field) << ": "
                  << printable(error) << " (in the header line: nothing imported)\n";
          ++bad;
          break;
        }
        header = false;
        continue;
      }
      if (record.size() > columns.size()) {
        ctx.err << "oid: " << where << ": " << record.size() << " fields, but " << columns.size()
                << " names\n";
        ++bad;
        continue;
      }
      bson::builder b;
      if (!columns.build(record, b, bad_field)) {
        ctx.err << "oid: " << name << ": " << reader.field_position(bad_field) << ": \""
                << printable(record[bad_field]) << "\" is not "
                << printable(columns[bad_field].type_text) << " (field "
                << printable(columns[bad_field].name) << ")\n";
        ++bad;
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
  ctx.out << "imported " << imp.written() << " documents, " << bytes << " bytes of " << o.type
          << ", in " << std::fixed << std::setprecision(2) << seconds << " s; " << imp.refused()
          << " refused, " << bad << " bad input\n";
}

}  // namespace

void add_mongo_transfer_commands(CLI::App& mongo, context& ctx) {
  {
    auto o = std::make_shared<export_options>();
    auto* cmd = mongo.add_subcommand(
        "export", "Write a collection as Extended JSON lines, a JSON array, or CSV (mongoexport)");
    add_uri_options(*cmd, ctx, o->uri);
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
    cmd->add_flag("--quiet", o->quiet, "No progress line, no summary line on standard error");
    cmd->final_callback([&ctx, o] { run_export(ctx, *o); });
  }
  {
    auto o = std::make_shared<import_options>();
    auto* cmd = mongo.add_subcommand(
        "import", "Insert, upsert or merge documents from JSON, CSV or TSV (mongoimport)");
    add_uri_options(*cmd, ctx, o->uri);
    cmd->add_option("DB.COLL", o->ns, "Database and collection")->required();
    cmd->add_option("FILE", o->file, "The file to read (default: standard input)");
    cmd->add_option("--type", o->type, "json (default), csv or tsv")
        ->check(CLI::IsMember({"json", "csv", "tsv"}));
    cmd->add_flag("--headerline", o->headerline, "CSV/TSV: the first line names the fields");
    cmd->add_option("--fields", o->fields, "CSV/TSV: the field names, f1,f2 (a.b: nested)");
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
    cmd->add_flag("--quiet", o->quiet, "No progress line on a terminal");
    cmd->final_callback([&ctx, o] { run_import(ctx, *o); });
  }
}

}  // namespace oid::cli
