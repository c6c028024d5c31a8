// Private: TLS for connections, with OpenSSL 3's libssl.
//
// A `tls_context` is one SSL_CTX per client, built from the connection string's TLS options and
// shared by the client's connections: TLS 1.2 or later, the CA file or else the system's trust
// store, the client certificate and key (one PEM file, the key perhaps encrypted with
// tlsCertificateKeyFilePassword), and whether certificates and host names are checked.
//
// A `tls_session` runs on a connected non-blocking socket. Its steps never block: each returns
// bytes moved, or what to poll() for before trying again, or an error, so that the connection's
// own poll loop bounds the handshake by connectTimeoutMS and every read and write by
// socketTimeoutMS. It writes with MSG_NOSIGNAL (a custom BIO), so a closed peer is an error, not
// a SIGPIPE. After a failure, `last_error()` is a sentence saying what failed (unknown CA,
// expired, revoked, host name mismatch, no client certificate, handshake refused).
//
// Revocation (MongoDB's OCSP support specification), when certificates are checked and
// tlsDisableCertificateRevocationCheck is not true: the session asks for a stapled OCSP
// response, and once the server's chain is verified it checks the server's certificate in this
// order: the staple (signature, validity, status; a revoked certificate, or a staple that is
// invalid or does not cover the certificate, ends the handshake); a Must-Staple certificate
// without a staple is refused; the process-wide OCSP cache (conclusive answers, kept until
// their nextUpdate); tlsCRLFile (checked by OpenSSL during chain verification: a revoked
// certificate or a missing CRL for its issuer fails there); then, unless
// tlsDisableOCSPEndpointCheck, the OCSP responders named in the certificate (http:// only, one
// after the other, within half of what is left of the handshake's deadline, at most 5 s). No
// conclusive answer is a soft failure: the connection goes on.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <oid/error.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <string>

struct ssl_ctx_st;
struct ssl_st;
struct x509_st;
struct evp_pkey_st;

namespace oid::mongo::detail {

// One non-blocking step of a transport. `done` bytes moved (for a handshake: 1 when finished);
// else `wait` is POLLIN or POLLOUT to wait for before trying again; else `error` is set
// (connection_closed, tls_failed). All zero: interrupted, try again.
struct io_step {
  std::size_t done = 0;
  short wait = 0;
  errc error{};
};

class tls_context {
 public:
  // The SSL_CTX for the TLS options of `u`. Errors: tls_failed, naming the option and file:
  // a CA file, CRL file or certificate file OpenSSL cannot read, a private key that is encrypted
  // (without tlsCertificateKeyFilePassword, or with a wrong one) or does not match the certificate.
  // The password is used here and not kept.
  static outcome<std::shared_ptr<const tls_context>> create(const mongo::uri& u);

  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;
  ~tls_context();

  ssl_ctx_st* native() const noexcept { return ctx_; }
  // False with tlsAllowInvalidCertificates (or tlsInsecure).
  bool verify_certificate() const noexcept { return verify_certificate_; }
  // False with tlsAllowInvalidHostnames, tlsAllowInvalidCertificates or tlsInsecure.
  bool verify_host() const noexcept { return verify_host_; }
  // The client certificate's subject in RFC 2253 form ("CN=client,O=org"); empty without one.
  const std::string& client_subject() const noexcept { return client_subject_; }
  // Which revocation checks run: none (certificates not checked, or
  // tlsDisableCertificateRevocationCheck), stapled responses, the cache and a CRL but no
  // responder query (tlsDisableOCSPEndpointCheck), or all of them.
  enum class revocation { off, no_endpoint, full };
  revocation revocation_checks() const noexcept { return revocation_; }
  // True when tlsCRLFile was given (its CRLs are in the context's store).
  bool has_crl() const noexcept { return has_crl_; }

 private:
  tls_context() = default;
  ssl_ctx_st* ctx_ = nullptr;
  bool verify_certificate_ = true, verify_host_ = true, has_crl_ = false;
  revocation revocation_ = revocation::off;
  std::string client_subject_;
};

// Empties the process-wide OCSP cache (for tests: each starts from an empty cache).
void clear_ocsp_cache() noexcept;

class tls_session {
 public:
  // A client session on the connected non-blocking socket `fd` to `h`: SNI for host names (not
  // IP addresses), and the certificate checked against the host name or IP address unless the
  // context says not to (Unix domain sockets have no name to check). Errors: tls_failed.
  // The session keeps `context` alive. `deadline` bounds the query to an OCSP responder
  // during the handshake (the connection passes its connectTimeoutMS deadline).
  static outcome<std::unique_ptr<tls_session>> start(
      std::shared_ptr<const tls_context> context, int fd, const mongo::host& h,
      std::chrono::steady_clock::time_point deadline =
          std::chrono::steady_clock::time_point::max());

  tls_session(const tls_session&) = delete;
  tls_session& operator=(const tls_session&) = delete;
  ~tls_session();

  // One step of the handshake; `done` is 1 when it has finished. Errors: tls_failed.
  io_step handshake() noexcept;
  // One SSL_write of up to `n` bytes. Errors: connection_closed, tls_failed.
  io_step write(const std::uint8_t* data, std::size_t n) noexcept;
  // One SSL_read of up to `n` bytes. Errors: connection_closed, tls_failed.
  io_step read(std::uint8_t* out, std::size_t n) noexcept;
  // Sends close_notify once, without waiting, unless the session has failed.
  void notify_close() noexcept;
  // What the last failure was, as a sentence; empty when there was none.
  const std::string& last_error() const noexcept { return last_error_; }

 private:
  tls_session() = default;
  io_step after(int ret, bool handshaking) noexcept;
  std::string explain(bool handshaking) const;

  ssl_st* ssl_ = nullptr;
  std::shared_ptr<const tls_context> context_;
  std::string host_;
  bool failed_ = false, closed_ = false;
  bool certificate_requested_ = false;  // the server asked for a client certificate
  std::string last_error_;
  std::chrono::steady_clock::time_point deadline_;
  std::string revocation_error_;  // why the revocation check ended the handshake

  friend int tls_certificate_requested(ssl_st* ssl, x509_st** certificate, evp_pkey_st** key);
  friend int tls_status_received(ssl_st* ssl, void* arg);
};

}  // namespace oid::mongo::detail
