// What `oid mongo restore` decides before it connects: which collections of a dump directory
// it writes, under which namespace. Its own header so that fuzz/fuzz_restore_plan.cpp can hold
// the plan against the rules without a server.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/result.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "text_io.hpp"

namespace oid::cli {

/// --nsInclude, --nsExclude, --restoreDbUsersAndRoles and --restoreLocalAndConfig.
struct restore_filter {
  std::vector<std::string> include, exclude;  // DB.COLL patterns ('*': any text, '\\': literal)
  bool users_and_roles = false;               // system.* collections too
  bool local_and_config = false;              // the local and config databases too
  /// True when DB.COLL `ns` is included and not excluded.
  bool selects(const std::string& ns) const;
};

/// Messages for a person, whole lines. Text oid wrote itself (string literals, characters,
/// numbers) goes in as it is; every other string (a name, a path, a server's message, an error
/// that holds them) is made printable() as it goes in, newlines and carriage returns included:
/// no name and no server text can end a line or begin one of its own.
class message_log {
 public:
  message_log& operator<<(const char* literal) {
    text_ += literal;
    return *this;
  }
  message_log& operator<<(char c) {
    text_ += c;
    return *this;
  }
  message_log& operator<<(std::string_view text) {
    append_printable(text_, text);
    return *this;
  }
  message_log& operator<<(const std::string& text) { return *this << std::string_view(text); }
  template <class T>
  requires std::is_arithmetic_v<T> message_log& operator<<(T n) {
    text_ += std::to_string(n);
    return *this;
  }
  const std::string& str() const noexcept { return text_; }

 private:
  std::string text_;
};

// One collection to restore: its files, and what became of it.
struct restore_job {
  std::string db, name;  // where it is written (after --nsFrom/--nsTo)
  std::string from;      // DB.COLL in the dump, when --nsFrom/--nsTo renamed it; else empty
  std::filesystem::path data, metadata;  // either may be empty
  std::optional<bson::document> meta;    // the metadata file's document, read before the filters
  std::uint64_t documents = 0, bytes = 0, duplicates = 0, refused = 0;
  bool failed = false;
  message_log messages;  // its errors, printed in order after all jobs
};

/// What restore would do with a dump directory, decided before it connects.
struct restore_plan {
  /// The collections it would write, in name order, each under the namespace it would write:
  /// the metadata's `collectionName` when it has one, else the file's name, then renamed by
  /// --nsFrom/--nsTo. A job whose metadata cannot be read or whose final namespace MongoDB would
  /// refuse is here with `failed` set and its reason in `messages` (it is reported, not written).
  std::vector<std::unique_ptr<restore_job>> jobs;
  /// What was not read, one line each: a database directory whose name MongoDB would refuse, a
  /// symbolic link (never followed). Bad input: the exit status is 1.
  std::string refused;
  /// Collections left out because their final namespace needs a flag (restore_write_refusal):
  /// a line per reason, naming a few and counting the rest (not an error).
  std::string left_out;
  /// Set, with no jobs, when the directory cannot be read.
  std::string error;
};

/// mongorestore's --nsFrom/--nsTo: namespaces renamed by patterns. In a pattern `*` matches any
/// text (the shortest that lets the rest match) and `$name$` does the same and names it; `\`
/// makes the next character literal. The `*`s of a --nsTo take what the --nsFrom's matched, in
/// order, and its `$name$`s what the same names matched. The first pair whose --nsFrom matches
/// renames a namespace.
class ns_renamer {
 public:
  /// Pairs `from[i]` with `to[i]`. Errors: a different number of each, an unclosed `$`, a `\` at
  /// the end, a --nsTo with another number of `*` than its --nsFrom or a `$name$` its --nsFrom
  /// lacks.
  static result<ns_renamer, std::string> make(const std::vector<std::string>& from,
                                              const std::vector<std::string>& to);
  /// `ns` renamed, or itself when no --nsFrom matches.
  std::string rename(const std::string& ns) const;
  bool empty() const noexcept { return rules_.empty(); }

  /// A pattern's pieces: literal text, or a wildcard (`name` empty for `*`).
  struct piece {
    bool wildcard = false;
    std::string text;  // the literal, or the variable's name
  };

 private:
  struct rule {
    std::vector<piece> from, to;
  };
  std::vector<rule> rules_;
};

/// mongorestore's -d and -c: restore one database directory into `db`, or one .bson file into
/// `db`.`collection`. Both empty: a whole dump directory, each database under its own name. And
/// --nsFrom/--nsTo, applied after the filters (which see the names in the dump).
struct restore_target {
  std::string db, collection;
  ns_renamer renames;
};

/// Why a restore may not write collection `coll` of database `db`: the namespace as it will be
/// written, after --nsFrom/--nsTo. The one place that decides it, for a directory and an archive
/// alike. In order:
/// - a database or collection name MongoDB would refuse (database_name_problem,
///   collection_name_problem): refused, an error;
/// - a system.* collection of any database (admin.system.users and admin.system.roles decide who
///   may log in) without `filter.users_and_roles`: left out, said, not an error;
/// - any collection of the local or config database (the oplog, sessions, the sharding
///   catalogue; the name compared without regard to ASCII case, as the server does) without
///   `filter.local_and_config`: left out, said, not an error.
struct write_refusal {
  enum kind_t { none, bad_name, needs_users_and_roles, needs_local_and_config } kind = none;
  std::string why;  // for a person; empty with `none`
  explicit operator bool() const noexcept { return kind != none; }
};
write_refusal restore_write_refusal(std::string_view db, std::string_view coll,
                                    const restore_filter& filter);

/// The plan for `dir` (DIR/DB/COLL.bson[.gz] and COLL.metadata.json[.gz]) under `filter`; with
/// a `target` database, `dir` is one database's directory (DIR/DB), or with a target collection
/// one .bson file (its metadata the .metadata.json beside it, when there is one).
restore_plan plan_restore(const std::filesystem::path& dir, const restore_filter& filter,
                          const restore_target& target = {});

}  // namespace oid::cli
