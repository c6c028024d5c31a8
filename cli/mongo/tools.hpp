// What `oid mongo dump` and `oid mongo restore` share with each other and with the other mongo
// commands (commands.cpp): the client, argument parsing, files that may be gzip-compressed,
// and a small pool of threads.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <memory>
#include <mutex>
#include <oid/bson/document.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/read_concern.hpp>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "cli.hpp"

namespace oid::cli {

// ---- defined in commands.cpp ----------------------------------------------------------

/// Prints the failure's message and records bad input.
void report(context& ctx, const mongo::failure& f);
/// The client of `uri_text` (or of --config FILE's uri: when `uri_text` is empty), with the
/// password of the URI, of --config FILE or of --passwordStdin, else asking for one on a
/// terminal when the URI names a user without one; nullopt (reported, with the exit status set)
/// when refused. Defined in connect.cpp.
std::optional<mongo::client> make_client(context& ctx, const std::string& uri_text,
                                         mongo::client_options options = {});
/// Adds to `cmd` the URI argument (bound to `uri`; optional, as --config FILE may hold it),
/// --config FILE and --passwordStdin (into `ctx`), which make_client reads (connect.cpp), and
/// the time limit of a command of kind `time`: --timeout DURATION (quick, long_run) or
/// --stallTimeout DURATION (batches, stream), which make_client applies.
void add_uri_options(CLI::App& cmd, context& ctx, std::string& uri,
                     command_time time = command_time::quick);
/// The line that follows a timeout's message: which limit of the command ran out, its value,
/// and the flag that changes it (connect.cpp).
std::string time_limit_hint(const context& ctx);
/// True when the failure of `code` and `message` (a failure's, or a text that holds it) is the
/// command's time limit running out, not serverSelectionTimeoutMS or connectTimeoutMS: then
/// time_limit_hint says something true about it.
bool ran_out_of_time_limit(const context& ctx, std::error_code code, std::string_view message);
/// `f`'s message, followed by time_limit_hint when it is a timeout (for messages that are not
/// written by `report`).
std::string with_time_hint(const context& ctx, const mongo::failure& f);
/// `u` with mongo-tools' connection flags (--host, --port, -u, -p, --authenticationDatabase,
/// --tls, ...) merged in. `given`: the connection string was given (not the default), and a flag
/// that says otherwise than it is an error naming both.
result<mongo::uri, std::string> with_connection_flags(const context::connection_flags& f,
                                                      mongo::uri u, bool given);
/// DB.COLL split at its first dot; throws CLI::ValidationError (a usage error) for anything else.
std::pair<std::string, std::string> namespace_of(const std::string& ns);
/// The same, or mongo-tools' --db and --collection when `ns` is empty; both given and differing
/// is a usage error.
std::pair<std::string, std::string> namespace_of(const std::string& ns, const std::string& db,
                                                 const std::string& coll);
/// `text` as Extended JSON; nullopt (reported as NAME: what, at column N) when it is not.
std::optional<bson::document> json_argument(context& ctx, const std::string& name,
                                            const std::string& text);
/// The text of a file a flag names (--queryFile, --fieldFile): at most 16 MiB (a query or a
/// list, never data); nullopt when it cannot be read or is larger (reported as a usage error
/// naming the flag and the file).
std::optional<std::string> read_argument_file(context& ctx, std::string_view flag,
                                              const std::string& path);
/// `text` as a time (parse_time): none for an empty text; the parse error for a bad one (already
/// reported as NAME: invalid time ... at column N).
result<std::optional<std::chrono::sys_seconds>> time_argument(context& ctx, const std::string& name,
                                                              const std::string& text);
/// `--readConcern TEXT`: a level (local, available, majority, linearizable, snapshot) or, as
/// mongo-tools take it, a document `{"level": "majority"}`; the default (none) for an empty text;
/// nullopt when it is neither (reported, naming the flag).
std::optional<mongo::read_concern> read_concern_argument(context& ctx, const std::string& text);
/// --writeConcern as mongo-tools take it: majority, a number, a tag, or {"w": ..., "j": ...,
/// "wtimeout": MS}; nullopt (reported) when it is none of these.
std::optional<mongo::write_concern> write_concern_argument(context& ctx, const std::string& text);
/// The filter of `--FILTER_NAME filter_text` (Extended JSON; empty: all) and `--since`/`--until`
/// (the ObjectId `_id` time range, `created_between_filter`); nullopt when one is bad (reported).
std::optional<bson::document> created_filter_argument(context& ctx, const std::string& filter_name,
                                                      const std::string& filter_text,
                                                      const std::string& since_text,
                                                      const std::string& until_text);

// ---- tools.cpp ------------------------------------------------------------------------

/// Registers `dump`, `restore`, `export` and `import` under `oid mongo`.
void add_mongo_tool_commands(CLI::App& mongo, context& ctx);
void add_mongo_dump_command(CLI::App& mongo, context& ctx);     // dump.cpp
void add_mongo_restore_command(CLI::App& mongo, context& ctx);  // restore.cpp
void add_mongo_transfer_commands(CLI::App& mongo,
                                 context& ctx);  // transfer.cpp: export, import
/// Registers `files put|get|list|delete` (files.cpp: GridFS).
void add_mongo_files_commands(CLI::App& mongo, context& ctx);
/// Registers `databases`, `collections` and `run` (admin.cpp).
void add_mongo_admin_commands(CLI::App& mongo, context& ctx);
/// Registers `count`, `update`, `delete`, `aggregate`, `indexes` and `drop` (crud.cpp).
void add_mongo_crud_commands(CLI::App& mongo, context& ctx);

/// Calls `work(i)` for every i in [0, count) on at most `threads` threads (at least one); each
/// index once. `work` must not throw.
void run_parallel(std::size_t count, std::size_t threads,
                  const std::function<void(std::size_t)>& work);

/// Rows of cells printed as columns two spaces apart, each as wide as its widest cell: column i
/// left-aligned when `align[i]` is 'l' (names), right-aligned when 'r' (numbers). The last column
/// gets no trailing blanks. Each cell is made printable() here: a server's names go in as they
/// came.
void print_columns(context& ctx, const std::vector<std::vector<std::string>>& rows,
                   std::string_view align);

/// The text of errno `e` ("No such file or directory").
std::string errno_text(int e);

/// Why `name` cannot be a MongoDB database name, or empty when it can. The rules are the server's:
/// not empty, at most 64 bytes, none of NUL, '/', '\\', '.', ' ', '"', '$', '*', '<', '>', ':',
/// '|', '?'. Names from a server or a dump directory pass this before they become paths or
/// namespaces.
std::string database_name_problem(std::string_view name);
/// Why `name` cannot be a collection name of database `db`, or empty when it can: not empty, no
/// NUL, no '$', not starting with '.', and DB.NAME at most 255 bytes.
std::string collection_name_problem(std::string_view db, std::string_view name);

/// Makes the directory `path` readable by its owner only (0700, less what the umask takes), or
/// checks that it is already a directory, not a symbolic link, of the effective user and that no
/// one else may write to (as `own_directory_problem` checks). Empty, or what went wrong.
std::string make_private_directory(const std::filesystem::path& path);
/// Why the existing directory `path` (a symbolic link there followed) is not one to write a dump
/// into, or empty when it is: it must belong to the effective user and be writable by no one
/// else (no group or other write bit), so that no one else can plant, swap or remove what is
/// written there. Empty is never returned for a path that is not a directory.
std::string own_directory_problem(const std::filesystem::path& path);

/// A progress line on stderr (documents and bytes done, of the estimated totals when known, rate,
/// time left), redrawn twice a second by a thread of its own while the work runs; only when stderr
/// is a terminal, the command runs as the real program and `quiet` is false; drawn a last time
/// when destroyed. A total of 0 is unknown; the share done (and the time left) is that of the
/// documents when their total is known, else that of the bytes. Thread-safe `add`. While the
/// line shows, whatever else is written to std::cerr (an error about one document, from any
/// thread) first erases it, so that the message starts a line of its own; the next redraw puts
/// the progress back below it.
class progress_line {
 public:
  progress_line(context& ctx, bool quiet, std::uint64_t total_bytes,
                std::uint64_t total_documents = 0);
  ~progress_line() { finish(); }
  /// Stops the thread, draws the line a last time and ends it (once; the destructor does it too).
  void finish();
  /// True when a progress line of these arguments shows (worth estimating a total for).
  static bool shows(context& ctx, bool quiet);
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;
  void add(std::uint64_t documents, std::uint64_t bytes) noexcept {
    documents_ += documents;
    bytes_ += bytes;
  }

 private:
  class erasing_buf;
  void draw();
  void erase();  // the line, before a message (under mutex_)
  std::atomic<std::uint64_t> documents_{0}, bytes_{0};
  std::uint64_t total_, total_documents_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool shown_ = false;         // the line is on the screen, not yet erased (under mutex_)
  bool message_open_ = false;  // a message on std::cerr has not ended its line (under mutex_)
  std::thread thread_;
  std::unique_ptr<std::streambuf> erasing_;  // std::cerr's while the line shows
  std::streambuf* cerr_buf_ = nullptr;       // std::cerr's own, put back by finish()
};

/// A file written in large blocks, gzip-compressed (zlib, the default level) or not. Nothing is
/// visible under `path` until `commit()`: the bytes go to `path` + ".partial", renamed on success
/// and removed when the sink is destroyed without a commit.
class file_sink {
 public:
  file_sink() = default;
  ~file_sink();
  file_sink(const file_sink&) = delete;
  file_sink& operator=(const file_sink&) = delete;

  /// What `commit()` does when something (a file, a link) is already at `path`.
  enum class existing { replace, refuse };

  /// Creates `path`.partial for writing, readable by its owner only (0600, less the umask): a new
  /// file, never one through a symbolic link (O_EXCL, O_NOFOLLOW; a stale `.partial` or a link
  /// planted at that name is removed first, never followed). With existing::refuse, false as
  /// well when something is at `path` already. False (with `error()`) when it cannot.
  bool open(const std::filesystem::path& path, bool gzip, existing at_path = existing::replace);
  /// Appends `bytes`; false (with `error()`) when writing failed.
  bool write(std::string_view bytes);
  /// Flushes, closes and renames the file to `path`; false (with `error()`) when any of it failed.
  /// With existing::refuse the rename never replaces what is at `path`, even when it appeared
  /// after `open` (renameat2's RENAME_NOREPLACE, or link(2) where the file system lacks it).
  bool commit();
  /// What failed, with the file's name.
  const std::string& error() const noexcept { return error_; }

 private:
  void discard();
  std::filesystem::path path_, partial_;
  existing at_path_ = existing::replace;
  void* gz_ = nullptr;         // gzFile
  std::FILE* file_ = nullptr;  // when not compressed
  static constexpr std::size_t buffer_size = std::size_t{1} << 16;
  std::unique_ptr<char[]> buffer_;  // file_'s buffer (it must outlive file_)
  std::string error_;
};

/// Reads a file that may be gzip-compressed (detected by its content, as zlib's gzread does)
/// through a std::streambuf. Compressed data that is corrupt or ends early reads as the end of
/// the stream; `error()` then says so.
class source_buf : public std::streambuf {
 public:
  source_buf() = default;
  ~source_buf() override;
  source_buf(const source_buf&) = delete;
  source_buf& operator=(const source_buf&) = delete;

  /// Opens `path`; false (with `error()`) when it cannot.
  bool open(const std::filesystem::path& path);
  /// Empty, or what went wrong in the compressed data (zlib's message).
  std::string error() const;
  /// True when the file is gzip-compressed.
  bool compressed() const noexcept { return compressed_; }

 protected:
  int_type underflow() override;

 private:
  void* gz_ = nullptr;  // gzFile
  std::vector<char> buf_;
  std::string error_;
  bool compressed_ = false;
};

/// Bytes to a stream (standard output, for an archive), gzip-compressed (zlib, the default
/// level) or not; compressed output goes out in blocks of 128 KiB.
class stream_sink {
 public:
  stream_sink(std::ostream& out, bool gzip);
  ~stream_sink();
  stream_sink(const stream_sink&) = delete;
  stream_sink& operator=(const stream_sink&) = delete;

  /// Appends `bytes`; false (with `error()`) when writing failed.
  bool write(std::string_view bytes);
  /// Ends the compressed stream and flushes the stream; false (with `error()`) when that failed.
  bool finish();
  const std::string& error() const noexcept { return error_; }

 private:
  bool deflate_to_out(int flush);
  std::ostream& out_;
  void* z_ = nullptr;  // z_stream, when compressing
  std::vector<char> buf_;
  std::string error_;
};

/// source_buf for a stream (standard input): data that starts with gzip's magic bytes (1f 8b) is
/// decompressed (one gzip member after another, as gzip writes them), anything else read as it
/// is. Compressed data that is corrupt or ends early reads as the end of the stream; `error()`
/// then says so.
class stream_source_buf : public std::streambuf {
 public:
  explicit stream_source_buf(std::istream& in);
  ~stream_source_buf() override;
  stream_source_buf(const stream_source_buf&) = delete;
  stream_source_buf& operator=(const stream_source_buf&) = delete;

  /// Empty, or what went wrong in the compressed data.
  std::string error() const { return error_; }
  /// True when the data is gzip-compressed (known once the first bytes are read).
  bool compressed() const noexcept { return compressed_; }

 protected:
  int_type underflow() override;

 private:
  std::size_t read_raw();  // more compressed (or plain) input into in_buf_; 0 at its end
  std::istream& in_;
  void* z_ = nullptr;  // z_stream, when compressed
  std::vector<char> in_buf_, out_buf_;
  std::size_t in_begin_ = 0, in_end_ = 0;
  bool started_ = false, compressed_ = false, done_ = false;
  std::string error_;
};

}  // namespace oid::cli
