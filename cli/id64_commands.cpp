// oid new | inspect | range with --layout compact64|snowflake|sonyflake: the 64-bit id commands.
// id_commands.cpp registers the subcommands and calls in here when --layout is given.
#include <CLI/CLI.hpp>
#include <charconv>
#include <oid/objectid/id64.hpp>
#include <oid/objectid/id64_generator.hpp>
#include <oid/objectid/time.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "text_io.hpp"

namespace oid::cli {

struct id64_options {
  std::string layout;   // empty: not a 64-bit command
  std::string machine;  // new only; empty: not given
  std::string epoch;    // empty: the layout's default
  CLI::Option* format = nullptr;
};

namespace {

using std::chrono::milliseconds;

/// A whole number in `text`, or false.
bool parse_number(std::string_view text, std::int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

/// The layout the options name, with its epoch. Throws a usage error for a bad --epoch.
id64_layout layout_of(const id64_options& o) {
  id64_layout layout = id64_layout::from_name(o.layout).value();  // checked by IsMember
  if (o.epoch.empty()) return layout;
  if (layout.name == "compact64") {
    throw CLI::ValidationError("--epoch", "compact64 counts Unix seconds; it has no other epoch");
  }
  std::int64_t ms = 0;
  if (!parse_number(o.epoch, ms)) {  // not Unix milliseconds: a date or date-time
    const auto t = parse_time(o.epoch);
    if (!t) {
      throw CLI::ValidationError("--epoch",
                                 "not Unix milliseconds, a date or a date-time: " + quote(o.epoch));
    }
    ms = std::chrono::duration_cast<milliseconds>(t->time_since_epoch()).count();
  }
  layout.epoch_ms = ms;
  return layout;
}

std::string describe_range(const id64_layout& l) {
  return std::string(l.name) + " holds " +
         format_time(std::chrono::floor<std::chrono::seconds>(l.first_time())) + " to " +
         format_time(std::chrono::floor<std::chrono::seconds>(l.last_time()));
}

/// ISO-8601 with milliseconds when the layout's unit is shorter than a second.
std::string format_ms(sys_milliseconds t, const id64_layout& l) {
  const auto s = std::chrono::floor<std::chrono::seconds>(t);
  std::string text = format_time(s);
  if (l.unit_ms % 1000 != 0) {
    const auto ms = (t - s).count();
    char frac[5] = {'.', static_cast<char>('0' + ms / 100), static_cast<char>('0' + ms / 10 % 10),
                    static_cast<char>('0' + ms % 10), 'Z'};
    text.replace(text.size() - 1, 1, frac, sizeof frac);
  }
  return text;
}

// ---- new -----------------------------------------------------------------------------------

std::uint32_t machine_of(const id64_options& o, const id64_layout& layout) {
  std::int64_t m = -1;
  if (o.machine.empty()) {
    throw CLI::ValidationError("--machine", "a 64-bit layout needs an assigned machine id (0 to " +
                                                std::to_string(layout.max_machine()) +
                                                "); random ones collide, see docs/uniqueness.md");
  }
  if (!parse_number(o.machine, m) || m < 0 ||
      !layout.check_machine(static_cast<std::uint64_t>(m))) {
    throw CLI::ValidationError("--machine", "machine id " + quote(o.machine) + " is not in 0 to " +
                                                std::to_string(layout.max_machine()) + " (" +
                                                std::string(layout.name) + ")");
  }
  return static_cast<std::uint32_t>(m);
}

void run_new(context& ctx, const id64_options& o, std::uint64_t count) {
  const id64_layout layout = layout_of(o);
  const std::string format = o.format && o.format->count() ? o.format->as<std::string>() : "";
  if (format != "" && format != "hex") {
    throw CLI::ValidationError("--format", "64-bit ids are written in decimal (default) or hex");
  }
  id64_generator gen(layout, machine_of(o, layout));
  output_buffer out(ctx.out);
  std::vector<id64> batch(std::min<std::uint64_t>(count, 4096));
  for (std::uint64_t left = count; left > 0;) {
    const std::span<id64> ids(batch.data(), std::min<std::uint64_t>(left, batch.size()));
    gen.fill(ids);
    char* p = out.reserve(ids.size() * (id64::max_decimal_size + 1));
    char* const start = p;
    for (const id64& id : ids) {
      p = format.empty() ? id.to_decimal(p) : id.to_hex(p);
      *p++ = '\n';
    }
    out.commit(static_cast<std::size_t>(p - start));
    left -= ids.size();
    if (!ctx.out) break;  // stdout closed: stop quietly
  }
}

// ---- inspect -------------------------------------------------------------------------------

std::string explain(std::string_view text, const error& e) {
  const std::string at = " at column " + std::to_string(e.offset + 1);
  switch (errc_of(e.code)) {
  case errc::invalid_length:
    return "not an id: expected 1 to 20 decimal digits or 16 hex digits, got " +
           std::to_string(text.size()) + " characters";
  case errc::invalid_hex: return "invalid hex character " + quote(text.substr(e.offset, 1)) + at;
  default:
    if (text[e.offset] < '0' || text[e.offset] > '9') {
      return "not a decimal digit: " + quote(text.substr(e.offset, 1)) + at;
    }
    return e.offset == 0 ? std::string("a leading zero") : "above 18446744073709551615" + at;
  }
}

void inspect_one(context& ctx, output_buffer& out, const id64_layout& layout, bool json,
                 std::string_view text, const std::string& where) {
  const auto id = id64::parse(text);
  const auto f = id ? layout.decode(*id) : result<id64_fields>(id.error());
  if (!f) {
    ctx.err << "oid: " << where << quote(text) << ": "
            << (id ? "bit 63 is set: not a " + std::string(layout.name) + " id"
                   : explain(text, id.error()))
            << '\n';
    return ctx.bad_input();
  }
  const std::string time = format_ms(f->time, layout);
  std::string s;
  if (json) {
    s = R"({"id":")" + id->to_decimal() + R"(","hex":")" + id->to_hex() + R"(","layout":")" +
        std::string(layout.name) + R"(","time":")" + time + R"(","units":)" +
        std::to_string(f->units) + R"(,"machine":)" + std::to_string(f->machine) +
        R"(,"counter":)" + std::to_string(f->counter) + "}\n";
  } else {
    s = id->to_decimal() + "\n  layout    " + std::string(layout.name) + " (epoch " +
        format_ms(layout.first_time(), layout) + ", " + std::to_string(layout.unit_ms) +
        " ms units)\n  time      " + time + " (unit " + std::to_string(f->units) +
        ")\n  machine   " + std::to_string(f->machine) + "\n  counter   " +
        std::to_string(f->counter) + "\n  hex       " + id->to_hex() + "\n";
  }
  out.write(s);
}

// ---- range ---------------------------------------------------------------------------------

/// The smallest id of the unit TEXT falls in, or a message on stderr and false.
bool bound(context& ctx, const id64_layout& layout, const char* name, const std::string& text,
           sys_milliseconds& t, id64& id) {
  const auto parsed = parse_time(text);
  const auto min = parsed ? layout.min_for_time(*parsed) : result<id64>(parsed.error());
  if (!min) {
    ctx.err << "oid: range: " << name << ' ' << quote(text) << ": "
            << (parsed ? "time out of range: " + describe_range(layout)
                       : "not a date, date-time or Unix seconds (at column " +
                             std::to_string(parsed.error().offset + 1) + ")")
            << '\n';
    return false;
  }
  t = *parsed;
  id = *min;
  return true;
}

void run_range(context& ctx, const id64_options& o, const std::string& from_text,
               const std::string& to_text) {
  const id64_layout layout = layout_of(o);
  sys_milliseconds from, to;
  id64 lo, hi;
  if (!bound(ctx, layout, "FROM", from_text, from, lo)) return ctx.bad_input();
  const bool bounded = !to_text.empty();
  if (bounded && !bound(ctx, layout, "TO", to_text, to, hi)) return ctx.bad_input();
  if (bounded && hi <= lo) {
    ctx.err << "oid: range: TO (" << format_ms(to, layout) << ") must be in a later "
            << layout.unit_ms << " ms unit than FROM (" << format_ms(from, layout) << ")\n";
    return ctx.bad_input();
  }
  std::string s =
      "from    " + format_ms(from, layout) + "  " + lo.to_decimal() + "  " + lo.to_hex() + "\n";
  if (bounded) {
    s += "to      " + format_ms(to, layout) + "  " + hi.to_decimal() + "  " + hi.to_hex() +
         "  (excluded)\n";
  }
  s += "sql     id >= " + lo.to_decimal();
  if (bounded) s += " AND id < " + hi.to_decimal();
  s += "\n";
  ctx.out << s;
}

}  // namespace

std::shared_ptr<id64_options> add_id64_options(CLI::App& cmd) {
  auto o = std::make_shared<id64_options>();
  auto* layout = cmd.add_option("--layout", o->layout,
                                "64-bit ids: compact64 (32-bit seconds | 8-bit machine | 24-bit "
                                "counter), snowflake or sonyflake")
                     ->check(CLI::IsMember({"compact64", "snowflake", "sonyflake"}));
  cmd.add_option("--epoch", o->epoch,
                 "With --layout snowflake or sonyflake: the epoch, as Unix milliseconds or a "
                 "date-time (default: Twitter's 1288834974657, Sonyflake's 2014-09-01)")
      ->needs(layout);
  if (cmd.get_name() == "new") {
    cmd.add_option("--machine", o->machine,
                   "With --layout: this process's machine (worker) id, assigned, never random")
        ->needs(layout);
    if (auto* legacy = cmd.get_option_no_throw("--legacy")) layout->excludes(legacy);
    o->format = cmd.get_option_no_throw("--format");
  }
  return o;
}

bool run_id64_new(context& ctx, const id64_options& o, std::uint64_t count) {
  if (o.layout.empty()) return false;
  run_new(ctx, o, count);
  return true;
}

bool run_id64_inspect(context& ctx, const id64_options& o, const std::vector<std::string>& ids,
                      bool json) {
  if (o.layout.empty()) return false;
  const id64_layout layout = layout_of(o);
  output_buffer out(ctx.out);
  for (const auto& s : ids) inspect_one(ctx, out, layout, json, s, "");
  if (!ids.empty()) return true;
  line_reader reader(ctx.in);
  for (line_reader::line line; reader.next(line);) {
    const std::string where = "line " + std::to_string(line.number) + ": ";
    if (line.too_long || line.text.empty()) {
      ctx.err << "oid: " << where << (line.too_long ? "line too long" : "empty line")
              << " (an id is 1 to 20 digits or 16 hex digits)\n";
      ctx.bad_input();
    } else {
      inspect_one(ctx, out, layout, json, line.text, where);
    }
  }
  return true;
}

bool run_id64_range(context& ctx, const id64_options& o, const std::string& from,
                    const std::string& to) {
  if (o.layout.empty()) return false;
  run_range(ctx, o, from, to);
  return true;
}

}  // namespace oid::cli
