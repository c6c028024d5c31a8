// The `oid` command, as a library so that tests run it in-process. main.cpp only turns argv into
// a span and returns the exit code.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// CLI11 is declared, not included: it is header-only and costs seconds per file that includes it,
// and the tests that run the command through `run` need none of it. The files that register
// commands include <CLI/CLI.hpp> themselves.
namespace CLI {
class App;
}  // namespace CLI

namespace oid::cli {

/// Exit statuses: every input fine; some input bad (the rest still processed); usage error.
enum exit_code : int { exit_ok = 0, exit_bad_input = 1, exit_usage = 2 };

/// How long an `oid mongo` command may wait for a server (docs/command.md, "Time limits"): the
/// kind decides the flag (--timeout or --stallTimeout), its default and what it bounds.
enum class command_time {
  quick,     ///< one round trip that answers at once (ping, count, run, ...): --timeout, 30 s
  long_run,  ///< one round trip the server may work on for long (update, delete, an index
             ///< build): --timeout, 5 min
  batches,   ///< documents streamed in batches (find, export, dump, restore, import, insert,
             ///< aggregate): --stallTimeout, 5 min for each request and each wait for a document
  stream,    ///< GridFS files (get, put) and `find --tail`: --stallTimeout, 5 min for each request
};

/// Streams and the exit status shared by all commands of one run.
struct context {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  int status = exit_ok;
  /// The `oid mongo` command's --config FILE and --passwordStdin (add_uri_options).
  std::string config_file;
  bool password_stdin = false;
  /// -v/--verbose (mongo-tools'; repeatable): also log how the command connects.
  int verbose = 0;
  /// Its connection flags in mongo-tools' names (--uri, --host, --port, -u, -p, ...), which
  /// make_client merges into the connection string.
  struct connection_flags {
    std::string uri, host, port, username, auth_database, auth_mechanism;
    std::string tls_ca_file, tls_certificate_key_file;
    std::string read_preference;          // a mode, or {mode, tagSets, maxStalenessSeconds}
    std::optional<std::string> password;  // -p: "" when given without a value (asked for)
    bool tls = false, tls_insecure = false, tls_allow_invalid_certificates = false,
         tls_allow_invalid_hostnames = false;
    // mongosh's Stable API flags (not connection string options: the client's server_api).
    std::string api_version;
    bool api_strict = false, api_deprecation_errors = false;
  } connection;
  /// True when `out` is a terminal: run() decides it once (the process's standard output, and
  /// isatty), and a test may say so for its string stream. What a command prints there of a
  /// server's or a file's documents is escaped (document_output, text_io.hpp); bytes that are
  /// data (an archive, a stored file, BSON) are refused there.
  bool out_is_terminal = false;
  /// --timeout and --stallTimeout as given (empty: not given) and the kind of the command that
  /// runs (add_uri_options; make_client applies them).
  struct time_flags {
    command_time kind = command_time::quick;
    std::string timeout, stall;
  } time;
  /// The warning about a password on the command line was printed (it is printed once).
  bool password_warned = false;

  /// Records that some input was bad: the run ends with exit_bad_input unless worse happened.
  void bad_input() {
    if (status == exit_ok) status = exit_bad_input;
  }
};

/// The whole tree of commands and options that `run` parses, bound to `ctx`; `help_topic`
/// receives the words after `oid help`. The manual pages and the shell completions are generated
/// from the same tree (docgen.cpp), so they cannot drift from the command.
std::unique_ptr<CLI::App> make_app(context& ctx, std::vector<std::string>& help_topic);

/// Runs the command with `args` (without the program name) and returns the exit status.
int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err);
/// The same, with `out` taken for a terminal or not as `out_is_terminal` says (for tests).
int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err, bool out_is_terminal);

// Command groups register their subcommands here; each runs from a CLI11 final callback.
void add_id_commands(CLI::App& app, context& ctx);
void add_check_unique_command(CLI::App& app, context& ctx);
void add_bson_commands(CLI::App& app, context& ctx);
void add_mongo_commands(CLI::App& app, context& ctx);

// 64-bit ids (id64_commands.cpp): `new`, `inspect` and `range` take --layout; each run_id64_*
// returns false when --layout was not given, and the ObjectId command runs instead.
struct id64_options;
std::shared_ptr<id64_options> add_id64_options(CLI::App& cmd);
bool run_id64_new(context& ctx, const id64_options& o, std::uint64_t count);
bool run_id64_inspect(context& ctx, const id64_options& o, const std::vector<std::string>& ids,
                      bool json);
bool run_id64_range(context& ctx, const id64_options& o, const std::string& from,
                    const std::string& to);

/// Prints one new id (what `oid` alone does).
void print_one_new_id(context& ctx);

}  // namespace oid::cli
