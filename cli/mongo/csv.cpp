#include "mongo/csv.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/json_writer.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "detail/base64.hpp"
#include "detail/hex.hpp"

namespace oid::cli {
namespace {

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

}  // namespace

// ---- writing

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

// ---- csv_reader

result<bool, std::string> csv_reader::next(std::vector<std::string>& fields) {
  fields.clear();
  std::string error;
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
        error = "line " + std::to_string(quote_line) + ", column " + std::to_string(quote_column) +
                ": a quoted field is never closed";
      }
      fields.push_back(std::move(field));
      return error.empty() ? result<bool, std::string>(true)
                           : result<bool, std::string>(std::move(error));
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
      return error.empty() ? result<bool, std::string>(true)
                           : result<bool, std::string>(std::move(error));
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

std::string csv_reader::field_position(std::size_t i) const {
  if (i >= starts_.size()) return "line " + std::to_string(record_line_);
  return "line " + std::to_string(starts_[i].first) + ", column " +
         std::to_string(starts_[i].second);
}

int csv_reader::get() {
  const int c = in_.get();
  if (c != EOF) ++bytes_;
  return c;
}

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

// ---- csv_columns

result<void, column_error> csv_columns::parse(const std::vector<std::string>& names, bool typed) {
  columns_.clear();
  for (std::size_t bad = 0; bad < names.size(); ++bad) {
    column c;
    c.name = names[bad];
    std::string field = c.name;
    if (typed) {
      if (auto t = parse_type(c, field); !t) return column_error{std::move(t).error(), bad};
    }
    if (field.find('\0') != std::string::npos) {
      return column_error{"a NUL byte in a field name (BSON keys cannot hold one)", bad};
    }
    // Refused before plan(), whose recursion is as deep as the name has parts.
    if (static_cast<std::size_t>(std::count(field.begin(), field.end(), '.')) >= max_column_parts) {
      return column_error{"a name of more than " + std::to_string(max_column_parts) +
                              " dotted parts (documents nest at most 100 deep)",
                          bad};
    }
    std::size_t start = 0;
    while (true) {
      const auto dot = std::min(field.find('.', start), field.size());
      c.path.push_back(field.substr(start, dot - start));
      if (c.path.back().empty()) {
        return column_error{"\"" + c.name + "\": an empty field name", bad};
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
        return column_error{
            "\"" + c.name + "\" and \"" + columns_[k].name + "\" (column " + std::to_string(k + 1) +
                (other.size() == c.path.size() ? ") name the same field"
                                               : ") make a field both a value and a document"),
            bad};
      }
    }
    columns_.push_back(std::move(c));
  }
  program_.clear();
  std::vector<std::size_t> all(columns_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  plan(all, 0);
  return {};
}

result<void, std::size_t> csv_columns::build(const std::vector<std::string>& record,
                                             bson::builder& b, bool ignore_blanks,
                                             grace on_bad) const {
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
    } else if (op.column < record.size() && !(ignore_blanks && record[op.column].empty()) &&
               !append_typed(b, op.key, columns_[op.column], record[op.column])) {
      // append_typed appends nothing when it fails.
      if (on_bad == grace::fail) return op.column;
      if (on_bad == grace::auto_cast) append_csv_field(b, op.key, record[op.column]);
    }
  }
  return {};
}

// Splits "NAME.TYPE(ARGUMENT)" of c.name: the name into `field`, the rest into c.
result<void, std::string> csv_columns::parse_type(column& c, std::string& field) {
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
    return std::string("\"" + n + "\" has no type (--columnsHaveTypes: NAME.TYPE(), e.g. " + n +
                       ".string())");
  }
  const std::string type = n.substr(dot + 1, open - dot - 1);
  c.argument = n.substr(open + 1, n.size() - open - 2);
  c.type_text = n.substr(dot + 1);
  field = n.substr(0, dot);
  const auto t = std::find_if(std::begin(types), std::end(types),
                              [&](const auto& p) { return p.first == type; });
  if (t == std::end(types)) {
    return std::string(
        "\"" + n + "\": unknown type " + type +
        "() (auto, binary, boolean, date, date_go, date_ms, date_oracle, decimal, double, "
        "int32, int64, string)");
  }
  c.type = t->second;
  const bool is_date = c.type == column_type::date_go || c.type == column_type::date_ms ||
                       c.type == column_type::date_oracle;
  if (c.type == column_type::binary) {
    if (c.argument != "base64" && c.argument != "base32" && c.argument != "hex") {
      return std::string("\"" + n + "\": binary() takes base64, base32 or hex");
    }
  } else if (is_date) {
    if (c.argument.empty()) {
      return std::string("\"" + n + "\": " + type + "() needs a layout, e.g. " + type +
                         (c.type == column_type::date_go   ? "(2006-01-02T15:04:05Z07:00)"
                          : c.type == column_type::date_ms ? "(yyyy-MM-dd HH:mm:ss)"
                                                           : "(YYYY-MM-DD HH24:MI:SS)"));
    }
    c.layout = date_layout(c.type, c.argument);
  } else if (!c.argument.empty()) {
    return std::string("\"" + n + "\": " + type + "() takes no argument");
  }
  return {};
}

// The steps that build the fields of `members` (indexes of columns) from path element `depth`.
void csv_columns::plan(const std::vector<std::size_t>& members, std::size_t depth) {
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

}  // namespace oid::cli
