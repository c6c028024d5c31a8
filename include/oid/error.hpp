// oid/error.hpp: the project's one error vocabulary.
//
// Every function that reads input the caller does not control returns `oid::result<T>`, whose error
// is an `oid::error`: a `std::error_code` plus the byte (or character) offset where reading
// stopped. Each module owns its codes: `oid::errc` here (ids, times, BSON, JSON, files), the
// client's `oid::mongo::errc` in oid/mongo/error.hpp, each an error code enum with its own
// `std::error_category`, so that `e.code == oid::errc::truncated` and
// `e.code == oid::mongo::errc::timeout` both read as they should and a new client failure never
// changes this library. The throwing convenience layer throws `oid::exception`, a
// `std::system_error` that also carries the offset.
#pragma once

#include <cstddef>
#include <string>
#include <system_error>

namespace oid {

/// The failures of the ids, times, BSON and Extended JSON. Values are stable within a major
/// version; 0 is never used. New codes
/// go just above `end_marker`, which is not a code: it is one past the last, so that tests and
/// tables can visit every code from `invalid_length` up to it without naming the last one.
enum class errc {
  // Text forms of an ObjectId.
  invalid_length = 1,  ///< input has the wrong number of characters or bytes
  invalid_hex,         ///< a character that is not 0-9, a-f or A-F
  invalid_base64,      ///< a character outside the RFC 4648 standard alphabet (or padding)
  // Times.
  invalid_time,       ///< text that is not an ISO-8601 date/date-time or Unix seconds
  time_out_of_range,  ///< a time an id cannot hold (ObjectIds: 1970-01-01T00:00:00Z to
                      ///< 2106-02-07T06:28:15Z)
  // Operating system.
  entropy_unavailable,  ///< the OS would not provide random bytes
  // BSON bytes.
  truncated,           ///< input ends before a declared length or a terminator
  bad_length_prefix,   ///< a declared length is impossible (too small, too large, mismatched)
  missing_terminator,  ///< a document, key or string lacks its NUL terminator
  unknown_type,        ///< an element type byte BSON does not define
  invalid_bool,        ///< a boolean byte other than 0 or 1
  invalid_utf8,        ///< a string or key that is not valid UTF-8
  too_deep,            ///< nesting beyond the configured limit
  too_large,           ///< a document or message beyond the configured size limit
  trailing_bytes,      ///< bytes after the end of a document where none may be
  invalid_key,         ///< a key that cannot be written (embedded NUL)
  invalid_binary,      ///< a binary value whose subtype rules are broken (old 0x02 inner length;
                       ///< a binary vector's header, padding or length)
  invalid_value,       ///< a value that breaks its type's rules (e.g. regex options, scope)
  type_mismatch,       ///< typed access to an element of another type
  key_not_found,       ///< lookup of a key that is not in the document
  // Decimal128 and Extended JSON text.
  invalid_decimal128,     ///< text that is not a decimal128 value, or one that would need rounding
  invalid_json,           ///< text that is not JSON
  invalid_extended_json,  ///< JSON that breaks an Extended JSON rule
  // Files and streams.
  io_error,  ///< reading or writing a file or stream failed
  // 64-bit ids.
  invalid_decimal,          ///< not a decimal id: a non-digit, a leading zero, or above 2^64 - 1
  machine_id_out_of_range,  ///< a machine id too large for the id layout's machine field
  forked_machine_id,        ///< a forked child would reuse its parent's machine id
  // New codes go here, above end_marker.
  end_marker  ///< not a code: one past the last; never returned
};

/// The category of `oid::errc`: `name()` is "oid", `message()` describes each code in a few words.
/// Its one instance is a constant-initialized object, so that making an `oid::error` (a BSON
/// getter's type mismatch, say) costs two stores and no call.
class errc_category final : public std::error_category {
 public:
  constexpr errc_category() noexcept = default;
  const char* name() const noexcept override;
  std::string message(int value) const override;
};

/// The one `errc_category`.
extern const errc_category errc_category_instance;

/// The category of `oid::errc`.
inline const std::error_category& error_category() noexcept { return errc_category_instance; }

/// Wraps `e` as a `std::error_code` in `oid::error_category()`.
inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), errc_category_instance};
}

/// `code` as an `oid::errc` when it is one (its category is `oid::error_category()`), else
/// `errc{}` (0, which no code uses): what a `switch` over this module's codes needs.
inline errc errc_of(const std::error_code& code) noexcept {
  return &code.category() == &errc_category_instance ? static_cast<errc>(code.value()) : errc{};
}

/// A failure: what went wrong (`code`: an `oid::errc`, or another module's code such as
/// `oid::mongo::errc`) and where reading stopped (`offset`, in bytes or characters from the start
/// of the input; 0 when there is no position, such as a full-length check).
struct error {
  // Default: 0 (no code) in oid's category, not std::error_code{}'s system category, which is an
  // out-of-line call into libstdc++: every builder append makes an error to fill, and that call
  // cost the flat `build` row 6% (bench/bson_driverbench).
  std::error_code code{0, errc_category_instance};
  std::size_t offset = 0;

  /// The code's description, e.g. "invalid hex character".
  std::string message() const { return code.message(); }
  friend bool operator==(const error&, const error&) = default;
};

/// The exception thrown by oid's convenience layer: a `std::system_error` with the error's `code()`
/// and the offset where reading stopped.
class exception : public std::system_error {
 public:
  explicit exception(const error& e);
  exception(const error& e, const std::string& what);

  /// Where reading stopped, as in `oid::error::offset`.
  std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

/// Throws `oid::exception(e)`. `result<T>::value()` calls it (by argument-dependent lookup) when
/// there is no value; see oid/result.hpp.
[[noreturn]] void throw_exception(const error& e);

}  // namespace oid

template <>
struct std::is_error_code_enum<oid::errc> : std::true_type {};
