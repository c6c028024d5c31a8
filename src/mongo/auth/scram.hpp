// Private: SCRAM (RFC 5802) message arithmetic for SCRAM-SHA-1 and SCRAM-SHA-256 as MongoDB's
// authentication specification uses them. Pure: values in, values out, no socket; the connection
// wraps the messages in saslStart / saslContinue (or speculativeAuthenticate) and sends them.
//
// One authentication is one `scram_conversation`:
//
//     auto c = scram_conversation::start(scram_mechanism::sha256, "user", password, &cache);
//     send(c->client_first());                       // n,,n=user,r=<client nonce>
//     auto final = c->client_final(server_first);    // c=biws,r=<nonce>,p=<proof>
//     send(*final);
//     auto ok = c->verify_server_final(server_final);  // v= must be the server's signature
//
// Cryptography is OpenSSL's libcrypto (EVP digests, HMAC, PKCS5_PBKDF2_HMAC, RAND_bytes,
// CRYPTO_memcmp, OPENSSL_cleanse); SASLprep is GNU libidn's stringprep "SASLprep" profile.
// Passwords, salted passwords and keys stay in `oid::mongo::secret`s or in buffers cleared before
// they go out of scope; no error carries a secret, only a code and an offset into the message.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <oid/mongo/error.hpp>
#include <oid/mongo/secret.hpp>
#include <oid/result.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo::detail {

enum class scram_mechanism { sha1, sha256 };

/// "SCRAM-SHA-1" or "SCRAM-SHA-256", as in `saslStart.mechanism`.
std::string_view scram_mechanism_name(scram_mechanism m) noexcept;

/// The fewest iterations MongoDB's authentication specification lets a client accept.
inline constexpr std::uint32_t scram_min_iterations = 4096;

/// The most iterations a client accepts. The server chooses the count, so it chooses how long the
/// client computes PBKDF2 (on no timer: PBKDF2 runs between two reads). MongoDB's defaults are
/// 10,000 (SCRAM-SHA-1) and 15,000 (SCRAM-SHA-256); a million is 66 to 100 times that, about half
/// a second of one core for SHA-256, and far below 2^31 - 1, the most OpenSSL's PBKDF2 takes
/// (its count is an `int`). A server asking for more is refused like one asking for too few.
inline constexpr std::uint32_t scram_max_iterations = 1'000'000;

/// RFC 4013 SASLprep of UTF-8 `text` (stored-string rules: unassigned code points are refused).
/// Errors: `invalid_utf8`; `invalid_password` for a prohibited character (controls, U+0000
/// included) or a broken bidirectional rule.
result<secret> saslprep(std::string_view text);

/// The password SCRAM salts: for SHA-1, MongoDB's `hex(md5(user ":mongo:" password))` (no
/// SASLprep); for SHA-256, SASLprep(password). Errors as `saslprep`; `crypto_failed` when OpenSSL
/// cannot compute MD5 (a FIPS-only provider).
result<secret> scram_prepare_password(scram_mechanism m, std::string_view user,
                                      const secret& password);

/// A fresh client nonce: 24 random bytes (RAND_bytes) in base64. `entropy_unavailable` when
/// OpenSSL cannot give them.
result<std::string> scram_client_nonce();

/// The server-first-message, parsed: `r=<nonce>,s=<base64 salt>,i=<iterations>[,<extensions>]`.
struct scram_server_first {
  std::string nonce;               ///< the combined nonce (the client's, then the server's)
  std::vector<std::uint8_t> salt;  ///< decoded; never empty
  std::uint32_t iterations = 0;
  std::string extensions;  ///< unknown optional extensions after `i=`, verbatim, without the comma

  /// The message again: what `parse_scram_server_first` read, byte for byte.
  std::string to_string() const;
  friend bool operator==(const scram_server_first&, const scram_server_first&) = default;
};

/// Parses a server-first-message and checks it against the client's nonce. Errors, with the
/// offset in `message` of the attribute or value at fault:
/// - `invalid_scram_message`: an attribute missing, repeated, out of order or empty; the reserved
///   mandatory extension `m=`; a nonce character outside %x21-7E or a comma; an iteration count
///   that is not a positive decimal number without leading zeros that fits 32 bits; an empty salt;
///   a byte after the attributes that is not `,<letter>=...`.
/// - `invalid_base64`: a salt that is not canonical padded base64 (offset of the bad character).
/// - `authentication_failed`: a nonce that does not start with `client_nonce` or adds nothing to
///   it; an iteration count below `scram_min_iterations` or above `scram_max_iterations` (offset
///   of the value).
result<scram_server_first> parse_scram_server_first(std::string_view message,
                                                    std::string_view client_nonce);

/// The server-final-message, parsed: `v=<base64 signature>` or `e=<error>`, then optional
/// extensions.
struct scram_server_final {
  std::vector<std::uint8_t> verifier;  ///< decoded `v=`; empty when the server sent `e=`
  std::string error;                   ///< the `e=` value ("invalid-proof", ...); empty for `v=`
  std::string extensions;              ///< verbatim, without the leading comma

  std::string to_string() const;
  friend bool operator==(const scram_server_final&, const scram_server_final&) = default;
};

/// Parses a server-final-message (grammar only: `scram_conversation::verify_server_final` checks
/// the signature). Errors: `invalid_scram_message` (neither `v=` nor `e=` first, an empty value, a
/// malformed extension), `invalid_base64` (the verifier).
result<scram_server_final> parse_scram_server_final(std::string_view message);

/// Salted passwords (PBKDF2 output) by (hash of the prepared password, mechanism, salt,
/// iterations), so that every connection of a pool after the first skips PBKDF2. Thread-safe.
/// Holds at most `capacity` entries (then it starts again empty). The key holds a SHA-256 of the
/// prepared password, never the password.
class scram_cache {
 public:
  static constexpr std::size_t capacity = 64;

  /// The salted password for these inputs, computing it (once) when it is not cached. Errors as
  /// `scram_salt_password`; a failed derivation is never cached.
  result<secret> salted_password(scram_mechanism m, const secret& prepared_password,
                                 const std::vector<std::uint8_t>& salt, std::uint32_t iterations);
  /// How many times `salted_password` ran PBKDF2 (for tests and benchmarks).
  std::size_t computed() const;

 private:
  // The key's password hash is cleared when an entry goes.
  struct key {
    std::array<std::uint8_t, 32> password_hash{};
    scram_mechanism mechanism{};
    std::vector<std::uint8_t> salt;
    std::uint32_t iterations = 0;

    key() = default;
    key(const key&) = default;
    key(key&&) = default;
    key& operator=(const key&) = default;
    key& operator=(key&&) = default;
    ~key();
    friend auto operator<=>(const key&, const key&) = default;
  };
  mutable std::mutex mutex_;
  std::map<key, secret> entries_;
  std::size_t computed_ = 0;
};

/// PBKDF2-HMAC-SHA-1/256 of the prepared password: Hi() in RFC 5802. Errors: `crypto_failed`
/// when OpenSSL cannot compute it (an iteration count, salt or password beyond its `int`
/// arguments, or a failed primitive): never a key of zeros.
result<secret> scram_salt_password(scram_mechanism m, const secret& prepared_password,
                                   const std::vector<std::uint8_t>& salt, std::uint32_t iterations);

/// The client side of one SCRAM authentication.
class scram_conversation {
 public:
  /// Prepares the password and picks a random nonce (or uses `nonce`, for tests). `cache` may be
  /// null (then PBKDF2 runs every time); when given it must outlive the conversation. The user name
  /// goes on the wire as given (with `,` and `=` escaped), unnormalised, as the specification says.
  static result<scram_conversation> start(scram_mechanism m, std::string_view user,
                                          const secret& password, scram_cache* cache = nullptr,
                                          std::optional<std::string> nonce = std::nullopt);

  scram_mechanism mechanism() const noexcept { return mechanism_; }
  const std::string& client_nonce() const noexcept { return nonce_; }

  /// `n,,n=<user>,r=<nonce>`: the payload of saslStart.
  std::string client_first() const;

  /// Reads the server-first-message and returns the client-final-message with the proof,
  /// `c=biws,r=<nonce>,p=<base64 proof>`. Remembers the signature the server must send back.
  /// Errors as `parse_scram_server_first`; `crypto_failed` (offset 0) when PBKDF2, HMAC or the
  /// digest fails, and then no signature is remembered.
  result<std::string> client_final(std::string_view server_first);

  /// Checks the server-final-message: `authentication_failed` when the server sent `e=` or a
  /// signature other than the expected one (offset 2, the value) or when `client_final` has not
  /// succeeded; the parse errors of `parse_scram_server_final`.
  result<void> verify_server_final(std::string_view server_final) const;

 private:
  scram_conversation() = default;

  scram_mechanism mechanism_ = scram_mechanism::sha256;
  std::string user_;  // escaped for the wire
  std::string nonce_;
  secret password_;  // prepared
  scram_cache* cache_ = nullptr;
  secret server_signature_;  // set by client_final
};

}  // namespace oid::mongo::detail
