// oid/mongo/secret.hpp: `oid::mongo::secret`, the one home of every password and key.
//
// A password from a connection string, a SCRAM salted password, a client or server key: each
// lives in a `secret`. It owns a heap buffer of exactly its size (never a small-string buffer that
// a reallocation would leave behind), clears that buffer with OPENSSL_cleanse when it is destroyed,
// cleared or assigned over, and does not print itself: it has no `operator<<`, no `to_string`, no
// {fmt} or std::format formatter (formatting one does not compile), and GoogleTest shows
// `secret::placeholder`. The bytes are read on purpose, through `reveal()`.
//
// A secret is copyable, because the values holding it are (a parsed `uri`); a copy is a second
// cleared-on-destruction buffer. A moved-from secret is empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string_view>

namespace oid::mongo {

class secret {
 public:
  /// What any attempt to show a secret shows instead of its bytes.
  static constexpr std::string_view placeholder = "<secret>";

  /// An empty secret.
  secret() noexcept = default;
  /// A secret holding a copy of `bytes`. The caller clears its own copy if it has one.
  explicit secret(std::string_view bytes);
  /// A secret of `size` zero bytes, to be written in place through `bytes()` (derived keys).
  static secret of_size(std::size_t size);

  secret(const secret& other);
  secret& operator=(const secret& other);
  secret(secret&& other) noexcept;
  secret& operator=(secret&& other) noexcept;
  ~secret();

  /// The bytes, for the one place that needs them (a hash, a handshake). Valid until this secret
  /// is changed or destroyed; do not copy them into a `std::string`.
  std::string_view reveal() const noexcept { return {reinterpret_cast<const char*>(data_), size_}; }
  /// The bytes, writable.
  std::span<std::uint8_t> bytes() noexcept { return {data_, size_}; }
  std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  /// Clears the bytes and releases the buffer; the secret is then empty.
  void clear() noexcept;

  /// Equal bytes. Takes the same time for any two secrets of one size (CRYPTO_memcmp).
  friend bool operator==(const secret& a, const secret& b) noexcept;

  /// GoogleTest's printer: writes `placeholder`, never the bytes.
  friend void PrintTo(const secret& s, std::ostream* os);

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace oid::mongo
