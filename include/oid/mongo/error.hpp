// oid/mongo/error.hpp: the client's error codes, owned by the client.
//
// `oid::mongo::errc` is an error code enum in its own `std::error_category` ("oid.mongo"), beside
// the ids' and BSON's `oid::errc` (oid/error.hpp): a failure's `code` is a `std::error_code` that
// holds either, so `f.code == oid::mongo::errc::timeout` and `f.code == oid::errc::truncated` (a
// malformed reply) both read as they should, and a new client failure never changes the ids
// library. Values are stable within a major version; 0 is never used.
#pragma once

#include <system_error>

namespace oid::mongo {

/// Every failure the client reports besides the codec errors of `oid::errc`. New codes go just
/// above `end_marker`, which is not a code: it is one past the last.
enum class errc {
  // Connection strings and wire messages.
  invalid_uri = 1,    ///< a connection string the specification rejects
  invalid_message,    ///< a wire message that breaks the OP_MSG rules
  checksum_mismatch,  ///< an OP_MSG CRC-32C that does not match the message
  // Transport.
  connection_failed,  ///< could not connect to any host
  connection_closed,  ///< the peer closed the connection or reset it
  timeout,            ///< an operation did not finish within its configured time
  unexpected_reply,   ///< a reply to another request, or of the wrong shape
  tls_failed,         ///< the TLS handshake or session failed (the message says what)
  // What the server answered.
  server_error,          ///< the server answered ok: 0
  duplicate_key,         ///< a write broke a unique index (server code 11000)
  write_concern_failed,  ///< the write happened but its write concern was not satisfied
  unsupported,           ///< a feature oid or the server does not provide (named in the message)
  // Authentication.
  authentication_failed,  ///< the server refused the credentials, or could not prove it knew them
  invalid_scram_message,  ///< a SCRAM message that breaks RFC 5802's grammar
  invalid_password,       ///< a password SASLprep (RFC 4013) refuses: a prohibited character
  crypto_failed,  ///< an OpenSSL primitive (digest, HMAC, PBKDF2) failed; nothing it made is used
  // Server selection and pools.
  invalid_read_preference,  ///< a read preference the specifications reject
  pool_cleared,             ///< the server's pool was cleared (paused) after an error; retryable
  pool_closed,              ///< the server's pool is closed
  // GridFS.
  file_not_found,      ///< no GridFS file with that id or name
  revision_not_found,  ///< the GridFS file's name exists, that revision does not
  corrupt_file,        ///< a GridFS chunk missing, of the wrong size or extra; a bad files document
  stream_failed,       ///< a caller's stream could not be read or written
  // Arguments.
  invalid_argument,  ///< options that contradict each other (named in the message)
  // Sessions and transactions.
  session_misuse,  ///< an ended session, another client's, or a transaction call out of order
  // New codes go here, above end_marker.
  end_marker  ///< not a code: one past the last; never returned
};

/// The category of `oid::mongo::errc`: `name()` is "oid.mongo", `message()` describes each code.
const std::error_category& error_category() noexcept;

/// Wraps `e` as a `std::error_code` in `oid::mongo::error_category()`.
std::error_code make_error_code(errc e) noexcept;

/// `code` as an `oid::mongo::errc` when it is one, else `errc{}` (0, which no code uses): what a
/// `switch` over the client's codes needs.
errc errc_of(const std::error_code& code) noexcept;

}  // namespace oid::mongo

template <>
struct std::is_error_code_enum<oid::mongo::errc> : std::true_type {};
