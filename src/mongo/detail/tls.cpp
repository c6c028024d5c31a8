#include "mongo/detail/tls.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace oid::mongo::detail {
namespace {

// The socket BIO: like OpenSSL's, but it sends with MSG_NOSIGNAL, so that writing to a peer that
// has gone is an error (EPIPE) instead of a SIGPIPE that would end the program.
int fd_of(BIO* b) { return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(b))); }

int bio_write(BIO* b, const char* data, int size) {
  BIO_clear_retry_flags(b);
  const ssize_t n =
      ::send(fd_of(b), data, static_cast<std::size_t>(size), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(b);
  return -1;
}

int bio_read(BIO* b, char* out, int size) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(fd_of(b), out, static_cast<std::size_t>(size), MSG_DONTWAIT);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(b);
  return -1;
}

long bio_ctrl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "oid socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, bio_write);
      BIO_meth_set_read(m, bio_read);
      BIO_meth_set_ctrl(m, bio_ctrl);
    }
    return m;
  }();
  return method;
}

// Everything on this thread's OpenSSL error queue, as "reason; reason" (each once), and the
// first reason code.
std::string drain_errors(int* first_reason = nullptr) {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    if (first_reason != nullptr && *first_reason == 0) *first_reason = ERR_GET_REASON(e);
    std::string text;
    if (ERR_SYSTEM_ERROR(e)) {
      text = std::strerror(ERR_GET_REASON(e));
    } else if (const char* reason = ERR_reason_error_string(e)) {
      text = reason;
    } else {
      char buffer[256];
      ERR_error_string_n(e, buffer, sizeof buffer);
      text = buffer;
    }
    if (out.find(text) != std::string::npos) continue;
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

// Gives OpenSSL the key's password; 0 bytes (a failure OpenSSL reports) when there is none, so
// that it never asks on the terminal.
int key_password(char* buffer, int size, int, void* userdata) {
  const auto* password = static_cast<const secret*>(userdata);
  if (password == nullptr || password->size() > static_cast<std::size_t>(size)) return 0;
  std::memcpy(buffer, password->reveal().data(), password->size());
  return static_cast<int>(password->size());
}

std::string subject_of(X509* certificate) {
  BIO* out = BIO_new(BIO_s_mem());
  if (out == nullptr) return "";
  X509_NAME_print_ex(out, X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253);
  char* text = nullptr;
  const long size = BIO_get_mem_data(out, &text);
  std::string subject(text, static_cast<std::size_t>(size > 0 ? size : 0));
  BIO_free(out);
  return subject;
}

// The alerts a refused connection most often ends with, by RFC 8446's names; OpenSSL 3.0's own
// table has no name for certificate_required (116).
std::string alert_name(int number) {
  switch (number) {
  case 40: return "handshake failure";
  case 42: return "bad certificate";
  case 45: return "certificate expired";
  case 46: return "certificate unknown";
  case 48: return "unknown CA";
  case 70: return "protocol version";
  case 116: return "certificate required";
  default: return SSL_alert_desc_string_long(number);
  }
}

}  // namespace

int tls_certificate_requested(ssl_st* ssl, x509_st**, evp_pkey_st**) {
  if (auto* session = static_cast<tls_session*>(SSL_get_app_data(ssl))) {
    session->certificate_requested_ = true;
  }
  return 0;  // no certificate to offer
}

outcome<std::shared_ptr<const tls_context>> tls_context::create(const mongo::uri& u) {
  ERR_clear_error();
  std::shared_ptr<tls_context> c(new tls_context());
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (c->ctx_ == nullptr) {
    return failure(errc::tls_failed, "cannot make a TLS context: " + drain_errors());
  }
  SSL_CTX* ctx = c->ctx_;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Non-blocking writes may be partial and retried from a moved buffer (the connection's loop).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Read ahead: one recv takes a record's header and body (and whatever follows) instead of two
  // recvs per record. The connection always calls SSL_read before it polls the socket, so bytes
  // OpenSSL holds are never waited for.
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_client_cert_cb(ctx, tls_certificate_requested);
  c->verify_certificate_ = !u.tls_allow_invalid_certificates().value_or(false);
  c->verify_host_ = c->verify_certificate_ && !u.tls_allow_invalid_hostnames().value_or(false);
  SSL_CTX_set_verify(ctx, c->verify_certificate_ ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);

  if (const auto& ca = u.tls_ca_file()) {
    if (SSL_CTX_load_verify_locations(ctx, ca->c_str(), nullptr) != 1) {
      return failure(errc::tls_failed,
                     "cannot read tlsCAFile '" + *ca + "' (PEM certificates): " + drain_errors());
    }
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return failure(errc::tls_failed,
                   "cannot load the system's trust store (give tlsCAFile): " + drain_errors());
  }

  if (const auto& file = u.tls_certificate_key_file()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, file->c_str()) != 1) {
      return failure(errc::tls_failed, "cannot read a certificate from tlsCertificateKeyFile '" +
                                           *file + "': " + drain_errors());
    }
    const auto& password = u.tls_certificate_key_file_password();
    SSL_CTX_set_default_passwd_cb(ctx, key_password);
    SSL_CTX_set_default_passwd_cb_userdata(ctx,
                                           password ? const_cast<secret*>(&*password) : nullptr);
    const int loaded = SSL_CTX_use_PrivateKey_file(ctx, file->c_str(), SSL_FILETYPE_PEM);
    // The password is needed for loading only: do not keep a pointer to it.
    SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
    if (loaded != 1) {
      const std::string why = drain_errors();
      return failure(errc::tls_failed,
                     "cannot read the private key in tlsCertificateKeyFile '" + *file + "' (" +
                         (password ? "is tlsCertificateKeyFilePassword right?"
                                   : "the key must follow the certificate, unencrypted or with "
                                     "tlsCertificateKeyFilePassword") +
                         "): " + why);
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return failure(errc::tls_failed, "the private key in tlsCertificateKeyFile '" + *file +
                                           "' does not match its certificate: " + drain_errors());
    }
    c->client_subject_ = subject_of(SSL_CTX_get0_certificate(ctx));
  }
  return std::shared_ptr<const tls_context>(std::move(c));
}

tls_context::~tls_context() { SSL_CTX_free(ctx_); }

outcome<std::unique_ptr<tls_session>> tls_session::start(std::shared_ptr<const tls_context> context,
                                                         int fd, const mongo::host& h) {
  ERR_clear_error();
  std::unique_ptr<tls_session> s(new tls_session());
  s->context_ = std::move(context);
  s->host_ = h.name;
  BIO_METHOD* method = socket_method();
  s->ssl_ = SSL_new(s->context_->native());
  BIO* bio = method == nullptr ? nullptr : BIO_new(method);
  if (s->ssl_ == nullptr || bio == nullptr) {
    BIO_free(bio);
    return failure(errc::tls_failed, "cannot start a TLS session: " + drain_errors());
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  BIO_set_init(bio, 1);
  SSL_set_bio(s->ssl_, bio, bio);  // the session owns the BIO; the BIO does not own the socket
  SSL_set_app_data(s->ssl_, s.get());
  bool ok = true;
  if (h.type == host::kind::hostname) {
    // SNI carries host names only: RFC 6066 does not allow IP addresses in it.
    ok = SSL_set_tlsext_host_name(s->ssl_, h.name.c_str()) == 1;
    if (ok && s->context_->verify_host()) ok = SSL_set1_host(s->ssl_, h.name.c_str()) == 1;
  } else if (h.type != host::kind::unix_socket && s->context_->verify_host()) {
    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->ssl_), h.name.c_str()) == 1;
  }
  if (!ok) {
    return failure(errc::tls_failed,
                   "cannot check the certificate against host '" + h.name + "': " + drain_errors());
  }
  SSL_set_connect_state(s->ssl_);
  return s;
}

tls_session::~tls_session() { SSL_free(ssl_); }

io_step tls_session::handshake() noexcept {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) return {1};
  return after(r, true);
}

io_step tls_session::write(const std::uint8_t* data, std::size_t n) noexcept {
  ERR_clear_error();
  std::size_t written = 0;
  const int r = SSL_write_ex(ssl_, data, n, &written);
  if (r == 1) return {written};
  const io_step step = after(r, false);
  if (step.error != errc::connection_closed) return step;
  // A server that refuses the connection after the client's side of a TLS 1.3 handshake (no
  // client certificate, say) sends an alert and closes: the write fails, but the alert that
  // says why may already be here. Read it.
  failed_ = false;
  std::uint8_t probe[64];
  std::size_t got = 0;
  ERR_clear_error();
  const int read = SSL_read_ex(ssl_, probe, sizeof probe, &got);
  failed_ = true;
  if (read != 1 && SSL_get_error(ssl_, read) == SSL_ERROR_SSL) {
    try {
      last_error_ = explain(false);
    } catch (...) {
      last_error_.clear();
    }
    return {0, 0, errc::tls_failed};
  }
  ERR_clear_error();
  return step;
}

io_step tls_session::read(std::uint8_t* out, std::size_t n) noexcept {
  ERR_clear_error();
  std::size_t got = 0;
  const int r = SSL_read_ex(ssl_, out, n, &got);
  if (r == 1) return {got};
  return after(r, false);
}

void tls_session::notify_close() noexcept {
  if (failed_ || closed_ || !SSL_is_init_finished(ssl_)) return;
  closed_ = true;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one attempt: a close_notify that does not fit now is not waited for
  ERR_clear_error();
}

io_step tls_session::after(int ret, bool handshaking) noexcept {
  const int e = SSL_get_error(ssl_, ret);
  if (e == SSL_ERROR_WANT_READ) return {0, POLLIN};
  if (e == SSL_ERROR_WANT_WRITE) return {0, POLLOUT};
  failed_ = true;
  try {
    if (e == SSL_ERROR_ZERO_RETURN) {
      last_error_ = "the server closed the TLS session";
      return {0, 0, handshaking ? errc::tls_failed : errc::connection_closed};
    }
    if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
      // The socket failed or the server closed it without a TLS alert.
      last_error_ = handshaking ? "the server closed the connection during the TLS handshake "
                                  "(handshake refused; is this a TLS port?)"
                                : "the connection was closed under the TLS session";
      return {0, 0, handshaking ? errc::tls_failed : errc::connection_closed};
    }
    last_error_ = explain(handshaking);
  } catch (...) {  // out of memory while describing: the code still says what class it is
    last_error_.clear();
  }
  return {0, 0, errc::tls_failed};
}

std::string tls_session::explain(bool handshaking) const {
  // A certificate check that failed says most: which check, about which certificate.
  const long verify = SSL_get_verify_result(ssl_);
  if (context_->verify_certificate() && verify != X509_V_OK) {
    ERR_clear_error();
    const std::string what = X509_verify_cert_error_string(verify);
    switch (verify) {
    case X509_V_ERR_CERT_HAS_EXPIRED: return "the server's certificate has expired (" + what + ")";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet (" + what + ")";
    case X509_V_ERR_HOSTNAME_MISMATCH:
      return "host name mismatch: the server's certificate does not name host '" + host_ + "' (" +
             what + "; tlsAllowInvalidHostnames skips this check)";
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "host name mismatch: the server's certificate does not name IP address " + host_ +
             " (" + what + "; tlsAllowInvalidHostnames skips this check)";
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
      return "unknown CA: the server's certificate is not signed by a trusted CA, or is "
             "self-signed (" +
             what + "; tlsCAFile names the CA to trust)";
    default: return "the server's certificate is refused (" + what + ")";
    }
  }
  int reason = 0;
  const std::string queue = drain_errors(&reason);
  const bool sent_certificate = !context_->client_subject().empty();
  const auto alert = [&]() -> std::string {
    const int number = reason - SSL_AD_REASON_OFFSET;
    return "TLS alert " + std::to_string(number) + ", " + alert_name(number);
  };
  switch (reason) {
  case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    return "no client certificate: the server requires one (" + alert() +
           "; give it with tlsCertificateKeyFile)";
  case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
  case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
  case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
  case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
  case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
  case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
  case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
    if (certificate_requested_ && !sent_certificate) {
      return "no client certificate: the server asked for one and refused the connection "
             "without it (" +
             alert() + "; give it with tlsCertificateKeyFile)";
    }
    if (sent_certificate && reason != SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE) {
      return "the server refused the client certificate (" + alert() + ")";
    }
    return "handshake refused by the server (" + alert() + ")";
  case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
  case SSL_R_UNSUPPORTED_PROTOCOL:
  case SSL_R_NO_PROTOCOLS_AVAILABLE:
    return "handshake refused: no TLS version in common (oid needs TLS 1.2 or later; " + queue +
           ")";
  case SSL_R_WRONG_VERSION_NUMBER:
  case SSL_R_PACKET_LENGTH_TOO_LONG:
    return "the server did not answer in TLS (is TLS enabled on this port?): " + queue;
  default: break;
  }
  if (reason > SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) {
    return std::string(handshaking ? "handshake refused by the server ("
                                   : "the server ended the "
                                     "TLS session (") +
           alert() + ")";
  }
  return std::string(handshaking ? "handshake failed: " : "TLS error: ") + queue;
}

}  // namespace oid::mongo::detail
