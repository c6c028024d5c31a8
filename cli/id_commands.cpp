// oid new | inspect | convert | range: the ObjectId commands.
#include <CLI/CLI.hpp>
#include <charconv>
#include <memory>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/inspect.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "detail/hex.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

/// Runs `each` on every id given as arguments, or on every line of stdin when there are none.
/// Bad input is reported on stderr, naming the argument or the line, and marks the run as bad.
template <class F>
void for_each_id(context& ctx, const std::vector<std::string>& ids, F&& each) {
  auto handle = [&](std::string_view text, const std::string& where) {
    const auto id = object_id::parse(text);
    if (id) {
      each(*id);
    } else {
      ctx.err << "oid: " << where << quote(text) << ": " << explain_id_error(text, id.error())
              << '\n';
      ctx.bad_input();
    }
  };
  if (!ids.empty()) {
    for (const auto& s : ids) handle(s, "");
    return;
  }
  line_reader reader(ctx.in);
  line_reader::line line;
  while (reader.next(line)) {
    const std::string where = "line " + std::to_string(line.number) + ": ";
    if (line.too_long) {
      ctx.err << "oid: " << where << "line too long (an id is 24 or 16 characters)\n";
      ctx.bad_input();
    } else if (line.text.empty()) {
      ctx.err << "oid: " << where << "empty line\n";
      ctx.bad_input();
    } else {
      handle(line.text, where);
    }
  }
}

// ---- new -----------------------------------------------------------------------------------

struct new_options {
  std::uint64_t count = 1;
  std::string format = "hex";
  bool legacy = false;
};

/// Writes one fixed-size record per id (`size` bytes, `write(id, p)` returns the end), reserving
/// buffer space once per chunk of ids rather than once per id: at 50 million ids a second the
/// per-id bookkeeping costs as much as the formatting.
template <std::size_t size, class F>
void write_records(output_buffer& out, std::span<const object_id> ids, F write) {
  constexpr std::size_t per_chunk = output_buffer::capacity / size;
  for (std::size_t i = 0; i < ids.size(); i += per_chunk) {
    const std::size_t k = std::min(per_chunk, ids.size() - i);
    char* p = out.reserve(k * size);
    for (const auto& id : ids.subspan(i, k)) p = write(id, p);
    out.commit(k * size);
  }
}

void write_ids(output_buffer& out, std::span<const object_id> ids, const std::string& format) {
  if (format == "hex") {
    write_records<object_id::hex_size + 1>(out, ids, [](const object_id& id, char* p) {
      p = id.to_hex(p);
      *p = '\n';
      return p + 1;
    });
  } else if (format == "base64") {
    write_records<object_id::base64_size + 1>(out, ids, [](const object_id& id, char* p) {
      p = id.to_base64(p);
      *p = '\n';
      return p + 1;
    });
  } else {  // json: Extended JSON, as mongosh and mongoimport read it
    constexpr std::string_view head = R"({"$oid":")";
    write_records<head.size() + object_id::hex_size + 3>(  // "}\n
        out, ids, [head](const object_id& id, char* p) {
          p = std::copy(head.begin(), head.end(), p);
          p = id.to_hex(p);
          *p++ = '"';
          *p++ = '}';
          *p = '\n';
          return p + 1;
        });
  }
}

void run_new(context& ctx, const new_options& o) {
  output_buffer out(ctx.out);
  std::vector<object_id> batch(std::min<std::uint64_t>(o.count, 4096));
  std::unique_ptr<legacy_object_id_generator> legacy;
  if (o.legacy) legacy = std::make_unique<legacy_object_id_generator>();
  for (std::uint64_t left = o.count; left > 0;) {
    const std::span<object_id> ids(batch.data(), std::min<std::uint64_t>(left, batch.size()));
    if (legacy) {
      legacy->fill(ids);
    } else {
      generate(ids);
    }
    write_ids(out, ids, o.format);
    left -= ids.size();
    if (!ctx.out) break;  // stdout closed (e.g. `oid new -n 1e9 | head`): stop quietly
  }
}

// ---- inspect -------------------------------------------------------------------------------

void print_description(output_buffer& out, const object_id_description& d) {
  std::string s = d.id.to_hex();
  s += "\n  time      " + format_time(d.time) + " (" + std::to_string(d.timestamp) + ")";
  s += "\n  counter   " + std::to_string(d.counter);
  s += "\n  random    " + oid::detail::to_hex(d.random) +
       "  (modern layout: 5 random bytes per process)";
  s += "\n  legacy    machine " + oid::detail::to_hex(d.legacy_machine) + ", pid " +
       std::to_string(d.legacy_pid) + "  (pre-3.4 layout)\n";
  out.write(s);
}

// ---- range ---------------------------------------------------------------------------------

/// Parses a time argument and turns it into the smallest id of its second.
bool bound_for(context& ctx, const std::string& name, const std::string& text,
               std::chrono::sys_seconds& t, object_id& id) {
  const auto parsed = parse_time(text);
  if (!parsed) {
    ctx.err << "oid: range: " << name << ' ' << quote(text) << ": ";
    if (parsed.error().code == errc::invalid_time) {
      ctx.err << "not a date, date-time or Unix seconds (at column " << parsed.error().offset + 1
              << "); use e.g. 2010-10-01, 2010-10-01T12:00:00Z or 1285891200\n";
    } else {
      ctx.err << parsed.error().message() << '\n';
    }
    return false;
  }
  const auto min = object_id::min_for_time(*parsed);
  if (!min) {
    ctx.err << "oid: range: " << name << ' ' << quote(text) << ": " << min.error().message()
            << '\n';
    return false;
  }
  t = *parsed;
  id = *min;
  return true;
}

void run_range(context& ctx, const std::string& from_text, const std::string& to_text) {
  std::chrono::sys_seconds from, to;
  object_id lo, hi;
  if (!bound_for(ctx, "FROM", from_text, from, lo)) return ctx.bad_input();
  const bool bounded = !to_text.empty();
  if (bounded) {
    if (!bound_for(ctx, "TO", to_text, to, hi)) return ctx.bad_input();
    if (to <= from) {
      ctx.err << "oid: range: TO (" << format_time(to) << ") must be after FROM ("
              << format_time(from) << ")\n";
      return ctx.bad_input();
    }
  }
  std::string s = "from    " + format_time(from) + "  " + lo.to_hex() + "\n";
  if (bounded) s += "to      " + format_time(to) + "  " + hi.to_hex() + "  (excluded)\n";
  s += R"(filter  {"_id": {"$gte": {"$oid": ")" + lo.to_hex() + "\"}";
  if (bounded) s += R"(, "$lt": {"$oid": ")" + hi.to_hex() + "\"}";
  s += "}}\n";
  ctx.out << s;
}

}  // namespace

void print_one_new_id(context& ctx) { ctx.out << generate() << '\n'; }

void add_id_commands(CLI::App& app, context& ctx) {
  {
    auto opts = std::make_shared<new_options>();
    auto* cmd = app.add_subcommand("new", "Print new ObjectIds, one a line");
    // Read by hand: CLI11 2.1 turns "-1" into 2^64 - 1 and a number above 2^64 into 2^64 - 1 too
    // (endless output either way), and says "not in range 0.000000 to 1.8e308" for text.
    cmd->add_option("-n,--count", opts->count, "How many ids (default 1)")
        ->transform(CLI::Validator(
            [](std::string& s) {
              std::uint64_t n = 0;
              const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
              if (!s.empty() && s[0] == '-') return "a count cannot be negative: '" + s + "'";
              if (ec == std::errc::result_out_of_range)
                return "count too large (at most 2^64 - 1): '" + s + "'";
              if (ec != std::errc() || end != s.data() + s.size()) {
                return "not a count (a whole number of ids): '" + s + "'";
              }
              return std::string();
            },
            "COUNT"));
    cmd->add_option("--format", opts->format, "hex (default), base64 or json ({\"$oid\": ...})")
        ->check(CLI::IsMember({"hex", "base64", "json"}));
    cmd->add_flag("--legacy", opts->legacy,
                  "Pre-3.4 layout: MD5 of the host name and the pid instead of random bytes");
    auto id64 = add_id64_options(*cmd);
    cmd->final_callback([&ctx, opts, id64] {
      if (!run_id64_new(ctx, *id64, opts->count)) run_new(ctx, *opts);
    });
  }
  {
    auto ids = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand(
        "inspect", "Show what ids carry: creation time, counter, both readings of bytes 4-8");
    cmd->add_option("ids", *ids, "Ids in hex or base64 (default: one a line on stdin)");
    cmd->add_flag("--json", *json, "One JSON object per id");
    auto id64 = add_id64_options(*cmd);
    cmd->final_callback([&ctx, ids, json, id64] {
      if (run_id64_inspect(ctx, *id64, *ids, *json)) return;
      output_buffer out(ctx.out);
      for_each_id(ctx, *ids, [&](const object_id& id) {
        const auto d = inspect(id);
        if (*json) {
          out.write(to_json(d));
          out.put('\n');
        } else {
          print_description(out, d);
        }
      });
    });
  }
  {
    auto ids = std::make_shared<std::vector<std::string>>();
    auto to = std::make_shared<std::string>("hex");
    auto* cmd = app.add_subcommand("convert", "Convert ids between hex and base64");
    cmd->add_option("ids", *ids, "Ids in hex or base64 (default: one a line on stdin)");
    cmd->add_option("--to", *to, "hex (default) or base64")
        ->check(CLI::IsMember({"hex", "base64"}));
    cmd->final_callback([&ctx, ids, to] {
      output_buffer out(ctx.out);
      for_each_id(ctx, *ids, [&](const object_id& id) {
        out.write(*to == "hex" ? id.to_hex() : id.to_base64());
        out.put('\n');
      });
    });
  }
  {
    auto from = std::make_shared<std::string>();
    auto to = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand(
        "range", "The ids that bound a time range, and a MongoDB filter for [FROM, TO)");
    cmd->add_option("FROM", *from, "Start: 2010-10-01, 2010-10-01T12:00:00+02:00 or Unix seconds")
        ->required();
    cmd->add_option("TO", *to, "End, excluded (default: no end)");
    auto id64 = add_id64_options(*cmd);
    cmd->final_callback([&ctx, from, to, id64] {
      if (!run_id64_range(ctx, *id64, *from, *to)) run_range(ctx, *from, *to);
    });
  }
}

}  // namespace oid::cli
