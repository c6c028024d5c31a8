// oid/mongo/failure.hpp: why a client operation failed, and the exception that carries it.
//
// A transport or framing failure is an `oid::errc` (connection_failed, timeout, ...) with a
// sentence naming the host. A server that refuses an operation says more: a numeric code, a code
// name and a message, and for writes the document that failed and, for a duplicate key, the index
// and the key. `failure` holds all of that; `outcome<T>` (oid/mongo/outcome.hpp) is a `T` or a
// `failure`, and its `value()` throws `operation_error`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/document.hpp>
#include <oid/error.hpp>
#include <oid/mongo/error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::mongo {

/// A refusal as the server words it (`{ok: 0, code, codeName, errmsg}` or one entry of
/// `writeErrors`).
struct server_error {
  std::int32_t code = 0;  ///< the server's error code, e.g. 11000 for a duplicate key
  std::string code_name;  ///< e.g. "DuplicateKey" (empty when the server gives none)
  std::string message;    ///< the server's `errmsg`
  /// For a write error: the position, in the documents or statements the caller passed, of the
  /// one that failed.
  std::optional<std::size_t> index;
  /// For a duplicate key: the name of the unique index, taken from the message when the server
  /// gives it there ("... index: name_1 dup key: ...").
  std::string index_name;
  /// For a duplicate key: `keyPattern` and `keyValue` when the server sends them (mongod does).
  std::optional<bson::document> key_pattern, key_value;
};

/// Why an operation failed: the client's error type, richer than the codecs' `oid::error`.
struct failure {
  failure() = default;
  /// A failure with a code, a sentence and, for text the caller gave (a connection string), the
  /// offset where reading stopped.
  failure(std::error_code c, std::string m, std::size_t at = 0)
      : code(c), message(std::move(m)), offset(at) {}
  /// The failure of a codec or a transport step: its code and offset, and the code's description
  /// as the message.
  explicit failure(const oid::error& e) : code(e.code), message(e.message()), offset(e.offset) {}

  /// What kind of failure: an `oid::mongo::errc` (a transport code, duplicate_key,
  /// write_concern_failed, server_error, invalid_uri, unsupported, ...) or, for a reply that is
  /// not well-formed BSON, the `oid::errc` of the codec.
  std::error_code code{};
  /// A sentence for people, naming what failed (the server's message when it gave one; the
  /// option or the host when there is one).
  std::string message;
  /// Where reading stopped in text the caller gave (a connection string); 0 otherwise.
  std::size_t offset = 0;
  /// The server's error for a refused command (ok: 0).
  std::optional<server_error> server;
  /// For writes: each document or statement the server refused, in order.
  std::vector<server_error> write_errors;
  /// For writes: the write concern error, when the write happened but was not acknowledged as
  /// asked.
  std::optional<server_error> write_concern_error;
  /// For writes: how many documents the server reports written despite the errors.
  std::int64_t written = 0;
  /// The server's `errorLabels` (e.g. "RetryableWriteError", "TransientTransactionError"), and
  /// those the client adds by the specifications' rules.
  std::vector<std::string> labels;

  /// True when `labels` holds `label`.
  bool has_label(std::string_view label) const noexcept {
    for (const auto& l : labels) {
      if (l == label) return true;
    }
    return false;
  }
};

/// The exception `outcome<T>::value()` throws: an `oid::exception` (code, offset and the failure's
/// message as `what()`) with the failure inside.
class operation_error : public oid::exception {
 public:
  explicit operation_error(mongo::failure f)
      : oid::exception(oid::error{f.code, f.offset}, f.message), failure_(std::move(f)) {}
  /// The failure in full.
  const mongo::failure& failure() const noexcept { return failure_; }

 private:
  mongo::failure failure_;
};

/// Throws `operation_error(f)`. `result<T, failure>::value()` calls it (by argument-dependent
/// lookup) when there is no value; see oid/result.hpp.
[[noreturn]] void throw_exception(const failure& f);

}  // namespace oid::mongo
