// Where the `oid mongo` commands find their connection string and password without putting the
// password on the command line (where `ps` and the shell's history show it): a `--config FILE`
// in the format of mongo-tools' `--config` (YAML with `uri:` and `password:`), the first line of
// standard input (`--passwordStdin`), or a prompt on the terminal. make_client (tools.hpp)
// puts them together; add_uri_options gives every command the same options, and the time limit
// of its kind (--timeout or --stallTimeout, parsed by parse_duration).
#pragma once

#include <chrono>
#include <cstddef>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/secret.hpp>
#include <oid/result.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace oid::cli {

/// What a --config file holds: the keys of mongo-tools' --config that oid reads. Both are
/// secrets (a `uri:` may hold the password too).
struct connection_config {
  std::optional<mongo::secret> uri;
  std::optional<mongo::secret> password;
};

/// Why a --config file was refused: the 1-based line (0 when it is about the whole file) and what
/// is wrong there. The message names keys and columns, never a value.
struct config_error {
  std::size_t line = 0;
  std::string message;
};

/// The largest --config file read, in bytes.
inline constexpr std::size_t max_config_size = 64 * 1024;

/// Reads the text of a --config file. The format is the part of YAML that mongo-tools' --config
/// files use: one `key: value` line per key at the top level, the value plain, 'single-quoted'
/// ('' for a quote) or "double-quoted" (with YAML's escapes), on one line; comments (# ...),
/// blank lines, a leading `---` and a trailing `...`. Keys: `uri`, `password`; mongo-tools'
/// `sslPEMKeyPassword` is refused with a hint (oid reads tlsCertificateKeyFilePassword in the
/// URI). Anything else (an unknown or repeated key, a value without a value, nesting, lists,
/// block scalars, anchors, tags, a second document) is a config_error naming the line.
std::variant<connection_config, config_error> parse_connection_config(std::string_view text);

/// Reads and parses the --config file at `path`. Refused (a config_error of line 0) when it cannot
/// be opened, is not a regular file, is larger than max_config_size, belongs to another user (or
/// root), or lets its group or others read, write or run it: the message says its mode and
/// `chmod 600 PATH`, as ssh refuses such a key file. The bytes read are cleared afterwards.
std::variant<connection_config, config_error> read_connection_config(const std::string& path);

/// The default time limits of the `oid mongo` commands (docs/command.md, "Time limits").
inline constexpr std::chrono::milliseconds default_quick_timeout{30'000};
inline constexpr std::chrono::milliseconds default_long_timeout{300'000};
inline constexpr std::chrono::milliseconds default_stall_timeout{300'000};

/// A --timeout or --stallTimeout value: seconds ("30", "2.5") or a number with a unit, "ms",
/// "s", "m" or "h" ("500ms", "90s", "5m", "1.5h"); "0" is no limit. At most 24 days (what an
/// int32 of milliseconds, the server's maxTimeMS, holds). The error says what is wrong, without
/// the flag's name.
result<std::chrono::milliseconds, std::string> parse_duration(std::string_view text);

/// `d` for people: "500ms", "30s", "5m", "1h30m", "no limit" for 0.
std::string duration_text(std::chrono::milliseconds d);

/// --readPreference as mongo-tools take it: a mode (primary, primaryPreferred, secondary,
/// secondaryPreferred, nearest, in any case), or Extended JSON {"mode": ..., "tagSets": [{...},
/// ...], "maxStalenessSeconds": N}. The error says what is wrong, naming the flag.
result<mongo::read_preference, std::string> parse_read_preference(std::string_view text);

}  // namespace oid::cli
