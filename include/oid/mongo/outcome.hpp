// oid/mongo/outcome.hpp: what a client operation returns, and what it says when it fails.
//
// A transport or framing failure is an `oid::errc` (connection_failed, timeout, ...). A server
// that refuses an operation says more: a numeric code, a code name and a message, and for writes
// the document that failed and, for a duplicate key, the index and the key. `outcome<T>` carries
// that: a `T`, or a `failure` whose `code` is the `oid::errc` (duplicate_key for server code
// 11000, write_concern_failed, server_error for any other refusal, or a transport code) and whose
// other fields hold the server's words. Its member names follow `std::expected`, as
// `oid::result<T>` does; `value()` throws `oid::mongo::operation_error`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/document.hpp>
#include <oid/error.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
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

/// Why an operation failed.
struct failure {
  /// What kind of failure: a transport code, duplicate_key, write_concern_failed or server_error.
  errc code{};
  /// A sentence for people, naming what failed (the server's message when it gave one).
  std::string message;
  /// The server's error for a refused command (ok: 0).
  std::optional<server_error> server;
  /// For writes: each document or statement the server refused, in order.
  std::vector<server_error> write_errors;
  /// For writes: the write concern error, when the write happened but was not acknowledged as
  /// asked.
  std::optional<server_error> write_concern_error;
  /// For writes: how many documents the server reports written despite the errors.
  std::int64_t written = 0;
};

/// The exception `outcome<T>::value()` throws: an `oid::exception` with the failure inside.
class operation_error : public oid::exception {
 public:
  explicit operation_error(mongo::failure f)
      : oid::exception(oid::error{f.code, 0}, f.message), failure_(std::move(f)) {}
  /// The failure in full.
  const mongo::failure& failure() const noexcept { return failure_; }

 private:
  mongo::failure failure_;
};

/// A `T` or a `failure`. Must be checked: ignoring a returned outcome is a warning.
template <class T>
class [[nodiscard]] outcome {
 public:
  using value_type = T;
  using error_type = failure;

  outcome(const T& v) : v_(std::in_place_index<0>, v) {}            // NOLINT: implicit
  outcome(T&& v) : v_(std::in_place_index<0>, std::move(v)) {}      // NOLINT: implicit
  outcome(failure f) : v_(std::in_place_index<1>, std::move(f)) {}  // NOLINT: implicit
  /// A failure with only a code and a message (transport errors).
  outcome(errc code, std::string message)
      : v_(std::in_place_index<1>, failure{code, std::move(message), {}, {}, {}, 0}) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws `operation_error` when there is none.
  T& value() & {
    check();
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    check();
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    check();
    return std::move(*std::get_if<0>(&v_));
  }
  /// The failure. Precondition: `!has_value()`.
  const failure& error() const noexcept { return *std::get_if<1>(&v_); }
  /// The value. Precondition: `has_value()`.
  T& operator*() & noexcept { return *std::get_if<0>(&v_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&v_); }
  T&& operator*() && noexcept { return std::move(*std::get_if<0>(&v_)); }
  T* operator->() noexcept { return std::get_if<0>(&v_); }
  const T* operator->() const noexcept { return std::get_if<0>(&v_); }

 private:
  void check() const {
    if (!has_value()) throw operation_error(error());
  }
  std::variant<T, failure> v_;
};

/// The value of an operation that returns nothing.
struct done {};

}  // namespace oid::mongo
