// oid bson dump | from-json | validate: BSON streams (mongodump .bson files) and Extended JSON.
//
// BSON input is read through one fixed buffer that grows only as far as the largest document
// allowed (--max-size, 16 MiB by default), so a file of any size is streamed in bounded memory.
// Each document's length prefix is checked before its bytes are read; a prefix that is not sane
// (below 5, above the limit, or past the end of the input) means the document boundaries are
// lost, and reading stops there even with --keep-going.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <oid/bson/ensure_id.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <oid/detail/endian.hpp>
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
  std::string name;         // for messages
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
      ctx.err << "oid: bson " << command << ": cannot open " << path << '\n';
      return false;
    }
    stream = file.get();
    name = path;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      regular = true;
      total = static_cast<std::uint64_t>(st.st_size);
    }
    return true;
  }
};

/// Concatenated BSON documents from a stream, through a buffer of bounded size.
class bson_reader {
 public:
  bson_reader(std::istream& in, std::size_t max_size) : in_(in), max_size_(max_size) {
    buf_.resize(std::min<std::size_t>(max_size + 4, 1 << 20));
  }

  /// Tries to have `n` bytes (n <= max_size) from the current position in the buffer; returns
  /// how many there are (fewer only at the end of the input).
  std::size_t want(std::size_t n) {
    while (end_ - begin_ < n && !eof_) {
      if (begin_ > 0) {
        std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        base_ += begin_;
        begin_ = 0;
      }
      if (buf_.size() < n) buf_.resize(n);
      const auto got = in_.rdbuf()->sgetn(reinterpret_cast<char*>(buf_.data() + end_),
                                          static_cast<std::streamsize>(buf_.size() - end_));
      if (got <= 0) {
        eof_ = true;
        break;
      }
      end_ += static_cast<std::size_t>(got);
    }
    return std::min(n, end_ - begin_);
  }
  const std::uint8_t* data() const noexcept { return buf_.data() + begin_; }
  void skip(std::size_t n) noexcept { begin_ += n; }
  /// Offset in the input of the current position.
  std::uint64_t offset() const noexcept { return base_ + begin_; }
  std::size_t max_size() const noexcept { return max_size_; }

 private:
  std::istream& in_;
  std::size_t max_size_;
  std::vector<std::uint8_t> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t base_ = 0;
  bool eof_ = false;
};

/// One step of reading a BSON stream.
struct bson_step {
  enum kind { document, end, bad_document, fatal } what = end;
  bson::document_view view;  // document: valid until the next step
  std::uint64_t start = 0;   // offset of the document in the input
  std::uint64_t size = 0;    // its declared size
  std::string problem;       // bad_document, fatal: what is wrong, for a person
};

std::string describe(const error& e, std::uint64_t base) {
  return e.message() + " at byte " + std::to_string(base + e.offset);
}

/// Reads the next document: validated, or what is wrong with it. `bad_document` means the length
/// prefix was sane and the reader has moved past the document; `fatal` means it cannot go on.
bson_step next_document(bson_reader& r, const bson::validate_options& options) {
  bson_step s;
  s.start = r.offset();
  const std::size_t have = r.want(4);
  if (have == 0) return s;  // end
  if (have < 4) {
    s.what = bson_step::fatal;
    s.problem = "input ends inside a length prefix (" + std::to_string(have) + " of 4 bytes)";
    return s;
  }
  const std::uint8_t* p = r.data();
  const std::int32_t len = oid::detail::load_le_i32(p);
  s.size = static_cast<std::uint64_t>(static_cast<std::uint32_t>(len));
  if (len < 5) {
    s.what = bson_step::fatal;
    s.problem = "impossible length prefix " + std::to_string(len) + " (a document has at least 5)";
    return s;
  }
  if (static_cast<std::size_t>(len) > r.max_size()) {
    s.what = bson_step::fatal;
    s.problem = "length prefix " + std::to_string(len) + " is above the limit of " +
                std::to_string(r.max_size()) + " bytes (--max-size)";
    return s;
  }
  const std::size_t n = static_cast<std::size_t>(len);
  const std::size_t got = r.want(n);
  if (got < n) {
    s.what = bson_step::fatal;
    s.problem = "truncated: the length prefix says " + std::to_string(n) +
                " bytes, the input has " + std::to_string(got);
    return s;
  }
  const auto v = bson::validate(std::span<const std::uint8_t>(r.data(), n), options);
  if (!v) {
    s.what = bson_step::bad_document;
    s.problem = describe(v.error(), s.start);
    r.skip(n);
    return s;
  }
  s.what = bson_step::document;
  s.view = *v;
  r.skip(n);  // the bytes stay in the buffer until the next want()
  return s;
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
  std::string file;
  std::string mode = "relaxed";
  bool pretty = false;
  bool keep_going = false;
  std::size_t max_size = default_max_size;
};

void run_dump(context& ctx, const dump_options& o) {
  input in;
  if (!in.open(ctx, o.file, "dump")) return ctx.bad_input();
  bson_reader reader(*in.stream, o.max_size);
  bson::validate_options vo;
  vo.max_size = o.max_size;
  bson::json_options jo;
  jo.mode = o.mode == "canonical" ? bson::json_mode::canonical : bson::json_mode::relaxed;
  jo.pretty = o.pretty;
  output_buffer out(ctx.out);
  progress bar(ctx, in);
  std::string line;
  std::uint64_t printed = 0;
  for (std::uint64_t index = 1;; ++index) {
    const bson_step s = next_document(reader, vo);
    if (s.what == bson_step::end) break;
    if (s.what == bson_step::document) {
      line.clear();
      bson::to_json(s.view, jo, line);
      line += '\n';
      out.write(line);
      bar.update(reader.offset(), ++printed);
      if (!ctx.out) break;  // stdout closed: stop quietly
      continue;
    }
    out.flush();  // the good documents before the damage come first
    ctx.err << "oid: bson dump: " << in.name << ": document " << index << " at byte " << s.start
            << ": " << s.problem << '\n';
    ctx.bad_input();
    if (s.what == bson_step::fatal || !o.keep_going) break;
  }
  bar.update(reader.offset(), printed, true);
}

// ---- validate -------------------------------------------------------------------------------

void run_validate(context& ctx, const std::string& file, std::size_t max_size) {
  input in;
  if (!in.open(ctx, file, "validate")) return ctx.bad_input();
  bson_reader reader(*in.stream, max_size);
  bson::validate_options vo;
  vo.max_size = max_size;
  progress bar(ctx, in);
  std::uint64_t good = 0, bad = 0, index = 1;
  bool stopped = false;
  for (;; ++index) {
    const bson_step s = next_document(reader, vo);
    if (s.what == bson_step::end) break;
    if (s.what == bson_step::document) {
      ++good;
      bar.update(reader.offset(), index);
      continue;
    }
    ++bad;
    ctx.err << "oid: bson validate: " << in.name << ": document " << index << " at byte " << s.start
            << ": " << s.problem << '\n';
    if (s.what == bson_step::fatal) {
      stopped = true;
      break;
    }
  }
  bar.update(reader.offset(), good + bad, true);
  ctx.out << in.name << ": " << good << " valid document" << (good == 1 ? "" : "s") << ", " << bad
          << " bad";
  if (stopped) {
    ctx.out << "; stopped at byte " << reader.offset()
            << ": the rest cannot be read as documents\n";
  } else {
    ctx.out << ", " << reader.offset() << " bytes\n";
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
    cmd->add_option("FILE", o->file, "A .bson file, or - for stdin (the default)");
    cmd->add_option("--mode", o->mode, "relaxed (default) or canonical Extended JSON")
        ->check(CLI::IsMember({"canonical", "relaxed"}));
    cmd->add_flag("--pretty", o->pretty, "Indent each document over several lines");
    cmd->add_flag("--keep-going", o->keep_going,
                  "After a bad document whose length is sane, go on with the next one");
    cmd->add_option("--max-size", o->max_size, "Largest document accepted, in bytes (16 MiB)")
        ->check(CLI::Range(std::size_t{5}, std::size_t{0x7FFFFFFF}));
    cmd->final_callback([&ctx, o] { run_dump(ctx, *o); });
  }
  {
    auto o = std::make_shared<from_json_options>();
    auto* cmd = bson->add_subcommand(
        "from-json",
        "Write Extended JSON documents (one a line, or a JSON array) as a BSON stream to stdout");
    cmd->add_option("FILE", o->file, "A JSON file, or - for stdin (the default)");
    cmd->add_flag("--ensure-id", o->ensure_id,
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
    cmd->add_option("FILE", *file, "A .bson file, or - for stdin (the default)");
    cmd->add_option("--max-size", *max_size, "Largest document accepted, in bytes (16 MiB)")
        ->check(CLI::Range(std::size_t{5}, std::size_t{0x7FFFFFFF}));
    cmd->final_callback([&ctx, file, max_size] { run_validate(ctx, *file, *max_size); });
  }
}

}  // namespace oid::cli
