#include <oid/mongo/error.hpp>
#include <string>

namespace oid::mongo {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "oid.mongo"; }

  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
    case errc::invalid_uri: return "invalid connection string";
    case errc::invalid_message: return "invalid wire message";
    case errc::checksum_mismatch: return "checksum mismatch";
    case errc::connection_failed: return "connection failed";
    case errc::connection_closed: return "connection closed";
    case errc::timeout: return "timed out";
    case errc::server_error: return "server error";
    case errc::duplicate_key: return "duplicate key";
    case errc::write_concern_failed: return "write concern failed";
    case errc::unexpected_reply: return "unexpected reply";
    case errc::unsupported: return "not supported";
    case errc::authentication_failed: return "authentication failed";
    case errc::invalid_scram_message: return "invalid SCRAM message";
    case errc::invalid_password: return "password has a character SASLprep prohibits";
    case errc::invalid_read_preference: return "invalid read preference";
    case errc::pool_cleared: return "connection pool cleared (retryable)";
    case errc::pool_closed: return "connection pool closed";
    case errc::file_not_found: return "GridFS file not found";
    case errc::revision_not_found: return "GridFS revision not found";
    case errc::corrupt_file: return "GridFS file corrupt";
    case errc::stream_failed: return "stream read or write failed";
    case errc::invalid_argument: return "invalid argument";
    case errc::session_misuse: return "session used out of order";
    case errc::tls_failed: return "TLS failed";
    case errc::crypto_failed: return "a cryptographic primitive (OpenSSL) failed";
    case errc::end_marker: break;
    }
    return "unknown oid.mongo error " + std::to_string(value);
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const category instance;
  return instance;
}

errc errc_of(const std::error_code& code) noexcept {
  return &code.category() == &error_category() ? static_cast<errc>(code.value()) : errc{};
}

std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

}  // namespace oid::mongo
