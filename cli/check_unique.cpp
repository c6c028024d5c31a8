// oid check-unique: the duplicates among any number of ids, in bounded memory.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <oid/objectid/object_id.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "text_io.hpp"
#include "uniqueness.hpp"

namespace oid::cli {
namespace {

struct check_unique_options {
  std::vector<std::string> files;
  bool binary = false;
  std::uint64_t limit = UINT64_MAX;
  std::size_t memory_mib = 256;
  std::string temp_dir;
};

/// Feeds the finder in batches, so that it sees few large spans rather than many single ids.
class batcher {
 public:
  explicit batcher(duplicate_finder& f) : finder_(f) { batch_.reserve(capacity); }
  ~batcher() = default;
  void push(const object_id& id) {
    batch_.push_back(id);
    if (batch_.size() == capacity) flush();
  }
  void flush() {
    finder_.add(batch_);
    batch_.clear();
  }

 private:
  static constexpr std::size_t capacity = 4096;
  duplicate_finder& finder_;
  std::vector<object_id> batch_;
};

/// One id per line, hex or base64. Bad lines are reported and skipped.
void read_lines(context& ctx, std::istream& in, const std::string& name, batcher& out) {
  line_reader reader(in);
  line_reader::line line;
  while (reader.next(line)) {
    const std::string where =
        "oid: check-unique: " + name + "line " + std::to_string(line.number) + ": ";
    if (line.too_long) {
      ctx.err << where << "line too long (an id is 24 or 16 characters)\n";
      ctx.bad_input();
    } else if (line.text.empty()) {
      ctx.err << where << "empty line\n";
      ctx.bad_input();
    } else if (const auto id = object_id::parse(line.text)) {
      out.push(*id);
    } else {
      ctx.err << where << quote(line.text) << ": " << explain_id_error(line.text, id.error())
              << '\n';
      ctx.bad_input();
    }
  }
}

/// Raw 12-byte records, back to back. A partial record at the end is reported and ignored.
void read_records(context& ctx, std::istream& in, const std::string& name, batcher& out) {
  constexpr std::size_t chunk = object_id::size * 16384;
  std::vector<char> buf(chunk);
  std::size_t held = 0;  // bytes of an incomplete record carried to the next read
  std::uint64_t total = 0;
  for (;;) {
    const auto n = in.rdbuf()->sgetn(buf.data() + held, static_cast<std::streamsize>(chunk - held));
    if (n <= 0) break;
    total += static_cast<std::uint64_t>(n);
    held += static_cast<std::size_t>(n);
    const std::size_t whole = held / object_id::size * object_id::size;
    for (std::size_t i = 0; i < whole; i += object_id::size) {
      object_id::bytes_type b;
      std::memcpy(b.data(), buf.data() + i, object_id::size);
      out.push(object_id(b));
    }
    std::memmove(buf.data(), buf.data() + whole, held - whole);
    held -= whole;
  }
  if (held != 0) {
    ctx.err << "oid: check-unique: " << name << "input ends with " << held
            << (held == 1 ? " byte" : " bytes") << " that are not a whole 12-byte record (at byte "
            << total - held << ")\n";
    ctx.bad_input();
  }
}

void run_check_unique(context& ctx, const check_unique_options& o) {
  duplicate_finder finder({.memory_budget = o.memory_mib << 20, .temp_dir = o.temp_dir});
  {
    batcher batch(finder);
    const auto read = [&](std::istream& in, const std::string& name) {
      if (o.binary) {
        read_records(ctx, in, name, batch);
      } else {
        read_lines(ctx, in, name, batch);
      }
    };
    if (o.files.empty()) read(ctx.in, "");
    for (const auto& f : o.files) {
      if (f == "-") {
        read(ctx.in, "");
        continue;
      }
      std::ifstream in(f, std::ios::binary);
      if (!in) {
        ctx.err << "oid: check-unique: cannot open " << quote(f) << ": " << std::strerror(errno)
                << '\n';
        ctx.bad_input();
        continue;
      }
      read(in, f + ": ");
      if (in.bad()) {
        ctx.err << "oid: check-unique: error reading " << quote(f) << '\n';
        ctx.bad_input();
      }
    }
    batch.flush();
  }

  output_buffer out(ctx.out);
  std::uint64_t listed = 0;
  const auto s = finder.finish([&](const object_id& id, std::uint64_t count) {
    if (listed == o.limit) return;
    ++listed;
    char* p = out.reserve(object_id::hex_size + 24);
    p = id.to_hex(p);
    const std::string n = " " + std::to_string(count) + "\n";
    std::memcpy(p, n.data(), n.size());
    out.commit(object_id::hex_size + n.size());
  });
  if (listed < s.duplicated) {
    out.write("(" + std::to_string(s.duplicated - listed) +
              " more duplicated ids not listed: see --limit)\n");
  }
  std::string summary = "checked " + std::to_string(s.ids) + " ids: " + std::to_string(s.distinct) +
                        " distinct, " + std::to_string(s.duplicates) + " duplicates";
  if (s.duplicates != 0) {
    summary += " (" + std::to_string(s.duplicated) + " ids occur more than once, up to " +
               std::to_string(s.max_count) + " times; " + std::to_string(s.colliding_pairs) +
               " colliding pairs)";
  }
  out.write(summary + "\n");
  if (s.duplicates != 0) ctx.bad_input();
}

}  // namespace

void add_check_unique_command(CLI::App& app, context& ctx) {
  auto o = std::make_shared<check_unique_options>();
  auto* cmd = app.add_subcommand(
      "check-unique",
      "Find duplicate ids among any number of them, in bounded memory: lists each duplicated id "
      "with its count, then a summary. Exit status 1 when there is a duplicate");
  cmd->add_option("files", o->files,
                  "Files of ids, one a line in hex or base64 (or raw 12-byte records with "
                  "--binary); - or nothing: stdin")
      ->type_name("FILE");
  cmd->add_flag("--binary", o->binary, "Input is raw 12-byte records, back to back");
  cmd->add_option("--limit", o->limit, "List at most N duplicated ids (default: all)");
  cmd->add_option("--memory", o->memory_mib,
                  "MiB of ids to hold in memory before sorting to temporary files (default 256)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--tempDir,--temp-dir", o->temp_dir,
                  "Directory for temporary files (default: $TMPDIR or /tmp)")
      ->type_name("DIR");
  cmd->final_callback([&ctx, o] { run_check_unique(ctx, *o); });
}

}  // namespace oid::cli
