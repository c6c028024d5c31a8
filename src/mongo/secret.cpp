#include <openssl/crypto.h>

#include <cstring>
#include <oid/mongo/secret.hpp>
#include <ostream>
#include <utility>

namespace oid::mongo {

secret::secret(std::string_view bytes) : secret(of_size(bytes.size())) {
  if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
}

secret secret::of_size(std::size_t size) {
  secret s;
  if (size != 0) {
    s.data_ = new std::uint8_t[size]();
    s.size_ = size;
  }
  return s;
}

secret::secret(const secret& other) : secret(other.reveal()) {}

secret& secret::operator=(const secret& other) {
  if (this != &other) *this = secret(other);
  return *this;
}

secret::secret(secret&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

secret& secret::operator=(secret&& other) noexcept {
  if (this != &other) {
    clear();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

secret::~secret() { clear(); }

void secret::clear() noexcept {
  if (data_ != nullptr) {
    OPENSSL_cleanse(data_, size_);
    delete[] data_;
  }
  data_ = nullptr;
  size_ = 0;
}

bool operator==(const secret& a, const secret& b) noexcept {
  return a.size_ == b.size_ && (a.size_ == 0 || CRYPTO_memcmp(a.data_, b.data_, a.size_) == 0);
}

void PrintTo(const secret&, std::ostream* os) { *os << secret::placeholder; }

}  // namespace oid::mongo
