// oid bson dump | from-json | validate: BSON streams (mongodump .bson files) and Extended JSON.
//
// BSON input is read with bson::stream_reader, in bounded memory (the largest document allowed,
// --maxSize, 16 MiB by default). A length prefix that is not sane (below 5, above the limit, or
// past the end of the input) means the document boundaries are lost, and reading stops there
// even with --keepGoing; a bad document whose length is sane can be skipped.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <oid/bson/ensure_id.hpp>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/stream_reader.hpp>
#include <oid/bson/validate.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "text_io.hpp"

namespace oid::cli {
namespace {

constexpr std::size_t default_max_size = 16 * 1024 * 1024;

// ---- input ----------------------------------------------------------------------------------

/// The input of a command: a file, or stdin for "-" or no argument.
struct input {
  std::unique_ptr<std::ifstream> file;
  std::istream* stream = nullptr;
  std::string name;         // for messages, printable()
  std::uint64_t total = 0;  // size when it is a regular file, else 0
  bool regular = false;

  bool open(context& ctx, const std::string& path, const char* command) {
    if (path.empty() || path == "-") {
      stream = &ctx.in;
      name = "stdin";
      struct stat st {};
      if (&ctx.in == &std::cin && ::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
        regular = true;
        total = static_cast<std::uint64_t>(st.st_size);
      }
      return true;
    }
    file = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*file) {
      ctx.err << "oid: bson " << command << ": cannot open " << printable(path) << '\n';
      return false;
    }
    stream = file.get();
    name = printable(path);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      regular = true;
      total = static_cast<std::uint64_t>(st.st_size);
    }
    return true;
  }
};

/// What is wrong with the document the reader stopped at, for a person: the framing errors in
/// the command's words, a bad document as validate() says it, at its absolute offset.
std::string describe(const error& e, const bson::stream_reader& r, std::size_t max_size) {
  const std::string prefix = std::to_string(r.length_prefix().value_or(0));
  const std::uint64_t have = e.offset - r.document_offset();
  if (!r.can_continue()) {
    switch (errc_of(e.code)) {
    case errc::truncated:
      if (!r.length_prefix()) {
        return "input ends inside a length prefix (" + std::to_string(have) + " of 4 bytes)";
      }
      return "truncated: the length prefix says " + prefix + " bytes, the input has " +
             std::to_string(have);
    case errc::bad_length_prefix:
      return "impossible length prefix " + prefix + " (a document has at least 5)";
    case errc::too_large:
      return "length prefix " + prefix + " is above the limit of " + std::to_string(max_size) +
             " bytes (--maxSize)";
    default: break;
    }
  }
  return e.message() + " at byte " + std::to_string(e.offset);
}

/// A progress line on stderr, redrawn about twice a second, when stderr is a terminal and the
/// input is a regular file (and the command runs as the real program, not in a test).
class progress {
 public:
  progress(context& ctx, const input& in)
      : enabled_(&ctx.err == &std::cerr && in.regular && ::isatty(STDERR_FILENO) == 1),
        total_(in.total),
        start_(std::chrono::steady_clock::now()),
        last_(start_) {}
  ~progress() {
    if (shown_) std::fputs("\n", stderr);
  }

  void update(std::uint64_t bytes, std::uint64_t documents, bool force = false) {
    if (!enabled_ || (++calls_ & 1023) != 0) {
      if (!force || !enabled_) return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double mb = static_cast<double>(bytes) / 1e6;
    std::fprintf(stderr, "\r%.1f / %.1f MB (%.0f%%), %llu documents, %.0f MB/s   ", mb,
                 static_cast<double>(total_) / 1e6,
                 total_ ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total_) : 100.0,
                 static_cast<unsigned long long>(documents), seconds > 0 ? mb / seconds : 0.0);
    shown_ = true;
  }

 private:
  bool enabled_;
  std::uint64_t total_;
  std::chrono::steady_clock::time_point start_, last_;
  std::uint64_t calls_ = 0;
  bool shown_ = false;
};

// ---- dump -----------------------------------------------------------------------------------

struct dump_options {
  std::string file, out_file;
  std::string type = "json";  // bsondump's --type: json, or debug (each element's type and size)
  std::string mode = "relaxed";
  bool pretty = false;
  bool keep_going = false;
  std::size_t max_size = default_max_size;
};

// bsondump --type=debug's purpose, in oid's words: a document's layout, one element a line with
// its type, its size in bytes and its offset in the file, subdocuments and arrays indented.
// (The document was validated: every length read here is within it.)
void append_layout(bson::document_view doc, std::uint64_t offset, int depth, std::string& out) {
  const auto* base = doc.data();
  for (const auto& e : doc) {
    const auto at = offset + static_cast<std::uint64_t>(e.raw().data() - base);
    out.append(static_cast<std::size_t>(depth) * 4, ' ');
    out += printable(e.key());
    out += "  ";
    out += bson::to_string(e.type());
    out += "  ";
    out += std::to_string(e.raw().size());
    out += " bytes at ";
    out += std::to_string(at);
    out += '\n';
    const auto nested = e.type() == bson::type::document ? e.get_document() : e.get_array();
    if (nested) {
      append_layout(*nested, offset + static_cast<std::uint64_t>(nested->data() - base), depth + 1,
                    out);
    }
  }
}

void run_dump(context& ctx, const dump_options& o) {
  input in;
  if (!in.open(ctx, o.file, "dump")) return ctx.bad_input();
  bson::validate_options vo;
  vo.max_size = o.max_size;
  bson::stream_reader reader(*in.stream, vo);
  bson::json_options jo;
  jo.mode = o.mode == "canonical" ? bson::json_mode::canonical : bson::json_mode::relaxed;
  jo.pretty = o.pretty;
  std::ofstream file;
  std::ostream* stream = &ctx.out;
  if (!o.out_file.empty() && o.out_file != "-") {
    file.open(o.out_file, std::ios::binary | std::ios::trunc);
    if (!file) {
      ctx.err << "oid: bson dump: --outFile " << printable(o.out_file) << ": cannot create it\n";
      return ctx.bad_input();
    }
    stream = &file;
  }
  // A file's strings reach a terminal escaped (document_output).
  document_output out(ctx, *stream);
  progress bar(ctx, in);
  std::string line;
  std::uint64_t printed = 0;
  for (;;) {
    const auto more = reader.next();
    if (more && !*more) break;
    if (more) {
      line.clear();
      if (o.type == "debug") {
        const auto doc = reader.current();
        line = "document " + std::to_string(reader.index() + 1) + ": " +
               std::to_string(doc.size()) + " bytes at " +
               std::to_string(reader.document_offset()) + '\n';
        append_layout(doc, reader.document_offset(), 1, line);
        out.lines(line);  // keys are made printable; the rest is ours
      } else {
        out.json_line(reader.current(), jo);
      }
      bar.update(reader.bytes_read(), ++printed);
      if (!*stream) break;  // stdout closed: stop quietly; a file: reported below
      continue;
    }
    out.flush();  // the good documents before the damage come first
    ctx.err << "oid: bson dump: " << in.name << ": document " << reader.index() + 1 << " at byte "
            << reader.document_offset() << ": " << describe(more.error(), reader, o.max_size)
            << '\n';
    ctx.bad_input();
    if (!reader.can_continue() || !o.keep_going) break;
  }
  out.flush();
  if (file.is_open() && !file.flush()) {
    ctx.err << "oid: bson dump: --outFile " << printable(o.out_file) << ": cannot write it\n";
    ctx.bad_input();
  }
  bar.update(reader.bytes_read(), printed, true);
}

// ---- validate -------------------------------------------------------------------------------

void run_validate(context& ctx, const std::string& file, std::size_t max_size) {
  input in;
  if (!in.open(ctx, file, "validate")) return ctx.bad_input();
  bson::validate_options vo;
  vo.max_size = max_size;
  bson::stream_reader reader(*in.stream, vo);
  progress bar(ctx, in);
  std::uint64_t good = 0, bad = 0;
  for (;;) {
    const auto more = reader.next();
    if (more && !*more) break;
    if (more) {
      ++good;
      bar.update(reader.bytes_read(), reader.index() + 1);
      continue;
    }
    ++bad;
    ctx.err << "oid: bson validate: " << in.name << ": document " << reader.index() + 1
            << " at byte " << reader.document_offset() << ": "
            << describe(more.error(), reader, max_size) << '\n';
    if (!reader.can_continue()) break;
  }
  bar.update(reader.bytes_read(), good + bad, true);
  ctx.out << in.name << ": " << good << " valid document" << (good == 1 ? "" : "s") << ", " << bad
          << " bad";
  if (!reader.can_continue()) {
    ctx.out << "; stopped at byte " << reader.bytes_read()
            << ": the rest cannot be read as documents\n";
  } else {
    ctx.out << ", " << reader.bytes_read() << " bytes\n";
  }
  if (bad > 0) ctx.bad_input();
}

// ---- from-json ------------------------------------------------------------------------------

struct from_json_options {
  std::string file;
  bool ensure_id = false;
  bool legacy = false;
};

void run_from_json(context& ctx, const from_json_options& o) {
  if (ctx.out_is_terminal) {
    // The documents' strings, as BSON's raw bytes: on a terminal they could steer it.
    ctx.err << "oid: bson from-json: standard output is a terminal: BSON is binary; redirect it "
               "to a file or a pipe\n";
    ctx.status = exit_usage;
    return;
  }
  input in;
  if (!in.open(ctx, o.file, "from-json")) return ctx.bad_input();
  bson::json_read_options ro;
  ro.legacy = o.legacy;
  bson::json_stream_reader reader(*in.stream, ro);
  output_buffer out(ctx.out);
  progress bar(ctx, in);
  bson::document doc;
  std::uint64_t n = 0;
  for (;;) {
    const auto more = reader.next(doc);
    if (!more) {
      const auto pos = reader.error_position();
      out.flush();
      ctx.err << "oid: bson from-json: " << in.name << ": line " << pos.line << ", column "
              << pos.column << ": " << more.error().message() << " (document " << reader.index() + 1
              << ", byte " << more.error().offset << ")\n";
      ctx.bad_input();
      if (!reader.can_continue()) break;
      continue;
    }
    if (!*more) break;
    if (o.ensure_id) doc = bson::ensure_id(doc.view());
    const auto bytes = doc.bytes();
    out.write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    bar.update(reader.bytes_read(), ++n);
    if (!ctx.out) break;
  }
  bar.update(reader.bytes_read(), n, true);
}

}  // namespace

void add_bson_commands(CLI::App& app, context& ctx) {
  auto* bson = app.add_subcommand("bson", "BSON files (mongodump .bson) and Extended JSON");
  bson->require_subcommand(1);
  {
    auto o = std::make_shared<dump_options>();
    auto* cmd = bson->add_subcommand(
        "dump", "Print concatenated BSON documents as Extended JSON, one document a line");
    cmd->add_option("FILE,--bsonFile", o->file, "A .bson file, or - for stdin (the default)")
        ->type_name("FILE");
    cmd->add_option("--outFile", o->out_file, "Write to this file (default: standard output)")
        ->type_name("FILE");
    cmd->add_option("--mode", o->mode, "relaxed (default) or canonical Extended JSON")
        ->check(CLI::IsMember({"canonical", "relaxed"}));
    cmd->add_flag("--pretty", o->pretty, "Indent each document over several lines");
    cmd->add_option("--type", o->type,
                    "json (default), or debug: each document's layout, an element a line with "
                    "its type, size and offset")
        ->check(CLI::IsMember({"json", "debug"}));
    cmd->add_flag("--keepGoing,--keep-going", o->keep_going,
                  "After a bad document whose length is sane, go on with the next one");
    cmd->add_option("--maxSize,--max-size", o->max_size,
                    "Largest document accepted, in bytes (16 MiB)")
        ->check(CLI::Range(std::size_t{5}, std::size_t{0x7FFFFFFF}));
    cmd->final_callback([&ctx, o] { run_dump(ctx, *o); });
  }
  {
    auto o = std::make_shared<from_json_options>();
    auto* cmd = bson->add_subcommand(
        "from-json",
        "Write Extended JSON documents (one a line, or a JSON array) as a BSON stream to stdout");
    cmd->add_option("FILE", o->file, "A JSON file, or - for stdin (the default)")
        ->type_name("FILE");
    cmd->add_flag("--ensureId,--ensure-id", o->ensure_id,
                  "Put _id first in each document, with a new ObjectId where there is none");
    cmd->add_flag("--legacy", o->legacy,
                  "Also accept legacy Extended JSON ({\"$date\": <ms>}, $binary with $type, "
                  "$regex with $options)");
    cmd->final_callback([&ctx, o] { run_from_json(ctx, *o); });
  }
  {
    auto file = std::make_shared<std::string>();
    auto max_size = std::make_shared<std::size_t>(default_max_size);
    auto* cmd = bson->add_subcommand(
        "validate", "Check every document of a BSON stream; report each bad one and where");
    cmd->add_option("FILE", *file, "A .bson file, or - for stdin (the default)")->type_name("FILE");
    cmd->add_option("--maxSize,--max-size", *max_size,
                    "Largest document accepted, in bytes (16 MiB)")
        ->check(CLI::Range(std::size_t{5}, std::size_t{0x7FFFFFFF}));
    cmd->final_callback([&ctx, file, max_size] { run_validate(ctx, *file, *max_size); });
  }
}

}  // namespace oid::cli
