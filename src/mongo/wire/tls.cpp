#include "mongo/wire/tls.hpp"

#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/http.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
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
  static BIO_METHOD* const method = []() -> BIO_METHOD* {
    const int index = BIO_get_new_index();
    if (index == -1) return nullptr;
    BIO_METHOD* m = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "oid socket");
    if (m == nullptr) return nullptr;
    if (BIO_meth_set_write(m, bio_write) != 1 || BIO_meth_set_read(m, bio_read) != 1 ||
        BIO_meth_set_ctrl(m, bio_ctrl) != 1) {
      BIO_meth_free(m);
      return nullptr;
    }
    return m;
  }();
  return method;
}

// A BIO of socket_method() on `fd` (which it does not close), or null.
BIO* socket_bio(int fd) {
  BIO_METHOD* method = socket_method();
  BIO* bio = method == nullptr ? nullptr : BIO_new(method);
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  BIO_set_init(bio, 1);
  return bio;
}

template <class T, void (*free_function)(T*)>
struct openssl_deleter {
  void operator()(T* p) const noexcept { free_function(p); }
};
template <class T, void (*free_function)(T*)>
using openssl_ptr = std::unique_ptr<T, openssl_deleter<T, free_function>>;
using bio_ptr = openssl_ptr<BIO, BIO_free_all>;
using ocsp_response_ptr = openssl_ptr<OCSP_RESPONSE, OCSP_RESPONSE_free>;
using ocsp_basic_ptr = openssl_ptr<OCSP_BASICRESP, OCSP_BASICRESP_free>;
using ocsp_request_ptr = openssl_ptr<OCSP_REQUEST, OCSP_REQUEST_free>;
using ocsp_certid_ptr = openssl_ptr<OCSP_CERTID, OCSP_CERTID_free>;
using http_ptr = openssl_ptr<OSSL_HTTP_REQ_CTX, OSSL_HTTP_REQ_CTX_free>;
void free_strings(STACK_OF(OPENSSL_STRING) * s) { X509_email_free(s); }
using strings_ptr = openssl_ptr<STACK_OF(OPENSSL_STRING), free_strings>;
void free_tls_feature(TLS_FEATURE* f) { TLS_FEATURE_free(f); }
using tls_feature_ptr = openssl_ptr<TLS_FEATURE, free_tls_feature>;

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

// The subject of `certificate` in RFC 2253 form; nothing when OpenSSL cannot print it.
std::optional<std::string> subject_of(X509* certificate) {
  const X509_NAME* name = certificate == nullptr ? nullptr : X509_get_subject_name(certificate);
  bio_ptr out(BIO_new(BIO_s_mem()));
  if (name == nullptr || out == nullptr) return std::nullopt;
  if (X509_NAME_print_ex(out.get(), name, 0, XN_FLAG_RFC2253) < 0) return std::nullopt;
  char* text = nullptr;
  const long size = BIO_get_mem_data(out.get(), &text);
  if (size < 0 || (size > 0 && text == nullptr)) return std::nullopt;
  return std::string(text == nullptr ? "" : text, static_cast<std::size_t>(size));
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

// ---------------------------------------------------------------------------------------------
// Revocation: OCSP (stapled, cached, asked of the responder) as MongoDB's OCSP support
// specification suggests. OpenSSL checks what a response says (OCSP_basic_verify and friends);
// the order of the sources and the soft failure are written here because OpenSSL has no policy
// for them.

// How long a responder query may take at most (the specification's default), within half of
// what is left of the handshake's own deadline.
constexpr std::chrono::seconds responder_timeout{5};
// Responders asked per certificate, at most (a certificate names one or two).
constexpr std::size_t max_responders = 4;
// Tolerated clock skew for a response's thisUpdate (the openssl command's default); nextUpdate
// gets none, as the specification says.
constexpr long this_update_skew_seconds = 300;
// How old a response without nextUpdate may be (its thisUpdate). RFC 6960 4.2.2.1 reads a missing
// nextUpdate as "newer information is available all the time": such a response is as fresh as its
// thisUpdate only, and without a bound a "good" answer captured before a revocation could be
// stapled forever.
constexpr long max_age_without_next_update_seconds = 24 * 3600;
// Entries in the process-wide cache, at most.
constexpr std::size_t max_cached = 1024;

// What a valid OCSP response says about one certificate.
struct ocsp_answer {
  int status = V_OCSP_CERTSTATUS_UNKNOWN;
  int reason = OCSP_REVOKED_STATUS_NOSTATUS;
  std::time_t this_update = 0, next_update = 0;
  bool has_next_update = false;
};

// The process-wide cache of conclusive answers (good or revoked), keyed by the DER of the
// CertID (RFC 6960 4.1.1), each valid while thisUpdate <= now < nextUpdate.
class ocsp_cache {
 public:
  // The cached status for `id` at `now`: V_OCSP_CERTSTATUS_GOOD or _REVOKED, or nothing.
  std::optional<int> find(const std::string& id, std::time_t now) {
    std::lock_guard lock(m_);
    const auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    if (now < it->second.this_update || now >= it->second.next_update) return std::nullopt;
    return it->second.status;
  }
  // Keeps `a` for `id` unless an entry with a later nextUpdate is already there. Answers without
  // a nextUpdate, or inconclusive ones, are not kept.
  void store(const std::string& id, const ocsp_answer& a, std::time_t now) {
    if (!a.has_next_update || a.status == V_OCSP_CERTSTATUS_UNKNOWN) return;
    std::lock_guard lock(m_);
    const auto it = entries_.find(id);
    if (it != entries_.end()) {
      if (it->second.next_update >= a.next_update) return;
      it->second = {a.status, a.this_update, a.next_update};
      return;
    }
    if (entries_.size() >= max_cached) {
      std::erase_if(entries_, [&](const auto& e) { return e.second.next_update <= now; });
    }
    if (entries_.size() >= max_cached) {
      entries_.erase(std::min_element(entries_.begin(), entries_.end(), [](auto& x, auto& y) {
        return x.second.next_update < y.second.next_update;
      }));
    }
    entries_.emplace(id, entry{a.status, a.this_update, a.next_update});
  }
  void clear() noexcept {
    std::lock_guard lock(m_);
    entries_.clear();
  }

 private:
  struct entry {
    int status;
    std::time_t this_update, next_update;
  };
  std::mutex m_;
  std::map<std::string, entry> entries_;
};

ocsp_cache& process_ocsp_cache() {
  static ocsp_cache* const cache = new ocsp_cache();  // never destroyed: threads may outlive main
  return *cache;
}

// An ASN.1 time as time_t, or nothing.
std::optional<std::time_t> to_time(const ASN1_GENERALIZEDTIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return std::nullopt;
  const std::time_t out = ::timegm(&tm);
  if (out == static_cast<std::time_t>(-1)) return std::nullopt;
  return out;
}

// Checks `response` about `id` as RFC 6960 3.2 asks: a successful response, signed by the
// certificate's issuer or by a responder it delegated to (chained to the trusted CAs), about this
// certificate, current (thisUpdate not in the future, nextUpdate not passed), and with the nonce
// of `request` when both have one. The answer, or false and `problem` saying what is wrong.
bool check_response(OCSP_RESPONSE* response, OCSP_CERTID* id, SSL* ssl, OCSP_REQUEST* request,
                    ocsp_answer& out, std::string& problem) {
  const int response_status = OCSP_response_status(response);
  if (response_status != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
    problem =
        std::string("the responder answered '") + OCSP_response_status_str(response_status) + "'";
    return false;
  }
  ocsp_basic_ptr basic(OCSP_response_get1_basic(response));
  if (basic == nullptr) {
    problem = "not a basic OCSP response: " + drain_errors();
    return false;
  }
  if (request != nullptr && OCSP_check_nonce(request, basic.get()) == 0) {
    problem = "its nonce is not the request's";
    return false;
  }
  SSL_CTX* ctx = SSL_get_SSL_CTX(ssl);
  X509_STORE* store = ctx == nullptr ? nullptr : SSL_CTX_get_cert_store(ctx);
  if (store == nullptr) {
    problem = "no trust store to check it with";
    return false;
  }
  // The chain the server sent may hold a delegated responder's issuer; OpenSSL looks the
  // signer up in the response's certificates, then these, and checks its chain against the store.
  STACK_OF(X509)* sent = SSL_get_peer_cert_chain(ssl);
  if (OCSP_basic_verify(basic.get(), sent, store, 0) != 1) {
    problem = "its signature or signer is not trusted: " + drain_errors();
    return false;
  }
  ASN1_GENERALIZEDTIME *revoked_at = nullptr, *this_update = nullptr, *next_update = nullptr;
  if (OCSP_resp_find_status(basic.get(), id, &out.status, &out.reason, &revoked_at, &this_update,
                            &next_update) != 1) {
    ERR_clear_error();
    problem = "it does not cover the server's certificate";
    return false;
  }
  if (OCSP_check_validity(this_update, nullptr, this_update_skew_seconds, -1) != 1) {
    ERR_clear_error();
    problem = "its thisUpdate is missing or in the future";
    return false;
  }
  const auto this_time = to_time(this_update);
  if (!this_time) {
    problem = "its thisUpdate cannot be read";
    return false;
  }
  out.this_update = *this_time;
  if (next_update != nullptr) {
    const int cmp = X509_cmp_current_time(next_update);
    const auto next_time = to_time(next_update);
    if (cmp == 0 || !next_time) {
      ERR_clear_error();
      problem = "its nextUpdate cannot be read";
      return false;
    }
    if (cmp < 0) {
      problem = "it has expired (its nextUpdate has passed)";
      return false;
    }
    if (*next_time < *this_time) {
      problem = "its nextUpdate is before its thisUpdate";
      return false;
    }
    out.next_update = *next_time;
    out.has_next_update = true;
  } else if (OCSP_check_validity(this_update, nullptr, this_update_skew_seconds,
                                 max_age_without_next_update_seconds) != 1) {
    ERR_clear_error();
    problem = "it has no nextUpdate and its thisUpdate is more than a day old";
    return false;
  }
  return true;
}

// True when `leaf` has the TLS Feature extension with status_request (RFC 7633, Must-Staple);
// `ok` false when the extension is there but cannot be read.
bool must_staple(X509* leaf, bool& ok) {
  ok = true;
  int critical = 0;
  tls_feature_ptr features(
      static_cast<TLS_FEATURE*>(X509_get_ext_d2i(leaf, NID_tlsfeature, &critical, nullptr)));
  if (features == nullptr) {
    ok = critical == -1;  // -1: absent; anything else: present but unreadable, or twice
    ERR_clear_error();
    return false;
  }
  constexpr long status_request = 5;  // RFC 6066's extension number
  for (int i = 0; i < sk_ASN1_INTEGER_num(features.get()); ++i) {
    if (ASN1_INTEGER_get(sk_ASN1_INTEGER_value(features.get(), i)) == status_request) return true;
  }
  return false;
}

// A non-blocking TCP connection to host:port within `deadline`, or -1 and `problem`.
int connect_responder(const char* host, const char* port,
                      std::chrono::steady_clock::time_point deadline, std::string& problem) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  // getaddrinfo has no timeout (as for the server's own name): resolution is not bounded.
  if (const int rc = ::getaddrinfo(host, port, &hints, &found); rc != 0) {
    problem = std::string("cannot resolve it: ") + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  problem = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      problem = std::strerror(errno);
      continue;
    }
    int error = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        error = ETIMEDOUT;
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        pollfd p{fd, POLLOUT, 0};
        const int n =
            left > 0 ? ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60000))) : 0;
        socklen_t len = sizeof error;
        if (n < 0) {
          error = errno;
        } else if (n > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) {
          error = errno;
        }
      }
    }
    if (error != 0) {
      problem = std::strerror(error);
      ::close(fd);  // a socket that failed to connect: nothing to flush
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

// Asks the responder at `url` (http:// only: an https responder would need its own TLS
// connection, checked the same way) about `request` within `deadline`. The response (not yet
// checked), or null and `problem`.
ocsp_response_ptr ask_responder(const std::string& url, OCSP_REQUEST* request,
                                std::chrono::steady_clock::time_point deadline,
                                std::string& problem) {
  int use_ssl = 0;
  char *host = nullptr, *port = nullptr, *path = nullptr;
  if (OSSL_HTTP_parse_url(url.c_str(), &use_ssl, nullptr, &host, &port, nullptr, &path, nullptr,
                          nullptr) != 1) {
    problem = "not a URL OpenSSL can read: " + drain_errors();
    return nullptr;
  }
  const std::unique_ptr<char, void (*)(char*)> free_host(host, [](char*p) { OPENSSL_free(p); }),
      free_port(port, [](char*p) { OPENSSL_free(p); }),
      free_path(path, [](char*p) { OPENSSL_free(p); });
  if (use_ssl != 0) {
    problem = "an https:// responder (oid asks http:// responders only)";
    return nullptr;
  }
  const int fd = connect_responder(host, port, deadline, problem);
  if (fd < 0) return nullptr;
  const std::unique_ptr<const int, void (*)(const int*)> close_fd(&fd, [](const int* f) {
    ::close(*f);  // done with the responder: a close error changes nothing
  });
  bio_ptr bio(socket_bio(fd));
  http_ptr http(bio == nullptr ? nullptr : OSSL_HTTP_REQ_CTX_new(bio.get(), bio.get(), 0));
  if (http == nullptr ||
      OSSL_HTTP_REQ_CTX_set_expected(http.get(), "application/ocsp-response", 1, 0, 0) != 1 ||
      OSSL_HTTP_REQ_CTX_set_request_line(http.get(), 1, nullptr, nullptr, path) != 1 ||
      OSSL_HTTP_REQ_CTX_add1_header(http.get(), "Host", host) != 1 ||
      OSSL_HTTP_REQ_CTX_set1_req(http.get(), "application/ocsp-request",
                                 ASN1_ITEM_rptr(OCSP_REQUEST),
                                 reinterpret_cast<const ASN1_VALUE*>(request)) != 1) {
    problem = "cannot make the HTTP request: " + drain_errors();
    return nullptr;
  }
  while (true) {
    ASN1_VALUE* value = nullptr;
    const int r = OSSL_HTTP_REQ_CTX_nbio_d2i(http.get(), &value, ASN1_ITEM_rptr(OCSP_RESPONSE));
    if (r == 1 && value != nullptr)
      return ocsp_response_ptr(reinterpret_cast<OCSP_RESPONSE*>(value));
    if (r != -1) {
      problem = "no OCSP response: " + drain_errors();
      return nullptr;
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
            .count();
    if (left <= 0) {
      problem = "no answer in time";
      return nullptr;
    }
    pollfd p{fd, static_cast<short>(BIO_should_write(bio.get()) ? POLLOUT : POLLIN), 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60000)));
    if (n < 0 && errno != EINTR) {
      problem = std::strerror(errno);
      return nullptr;
    }
  }
}

std::string revoked_because(int reason) {
  if (reason == OCSP_REVOKED_STATUS_NOSTATUS) return "";
  return std::string(", reason: ") + OCSP_crl_reason_str(reason);
}

}  // namespace

int tls_certificate_requested(ssl_st* ssl, x509_st**, evp_pkey_st**) {
  if (auto* session = static_cast<tls_session*>(SSL_get_app_data(ssl))) {
    session->certificate_requested_ = true;
  }
  return 0;  // no certificate to offer
}

void clear_ocsp_cache() noexcept { process_ocsp_cache().clear(); }

// OpenSSL calls this once the server's chain is verified (TLS 1.2: after CertificateStatus;
// TLS 1.3: after Certificate), with or without a staple: 1 goes on, 0 ends the handshake with
// a bad_certificate_status_response alert, -1 with an internal error.
int tls_status_received(ssl_st* ssl, void*) {
  auto* session = static_cast<tls_session*>(SSL_get_app_data(ssl));
  if (session == nullptr) return -1;
  const auto refuse = [&](std::string why) {
    session->revocation_error_ = std::move(why);
    return 0;
  };
  try {
    const auto checks = session->context_->revocation_checks();
    if (checks == tls_context::revocation::off) return 1;
    STACK_OF(X509)* chain = SSL_get0_verified_chain(ssl);
    if (chain == nullptr) return refuse("the server's certificate chain was not verified");
    // A trusted certificate on its own has no issuer to ask about it.
    if (sk_X509_num(chain) < 2) return 1;
    X509* leaf = sk_X509_value(chain, 0);
    X509* issuer = sk_X509_value(chain, 1);
    ocsp_certid_ptr id(OCSP_cert_to_id(nullptr, leaf, issuer));  // SHA-1, as responders expect
    unsigned char* der = nullptr;
    const int der_size = id == nullptr ? -1 : i2d_OCSP_CERTID(id.get(), &der);
    if (der_size <= 0) {
      return refuse("cannot make the OCSP identifier of the server's certificate: " +
                    drain_errors());
    }
    const std::string key(reinterpret_cast<const char*>(der), static_cast<std::size_t>(der_size));
    OPENSSL_free(der);
    auto& cache = process_ocsp_cache();

    const unsigned char* staple = nullptr;
    const long staple_size = SSL_get_tlsext_status_ocsp_resp(ssl, &staple);
    if (staple != nullptr && staple_size > 0) {
      const unsigned char* p = staple;
      ocsp_response_ptr response(d2i_OCSP_RESPONSE(nullptr, &p, staple_size));
      std::string problem;
      ocsp_answer answer;
      if (response == nullptr) {
        problem = "it cannot be parsed: " + drain_errors();
      } else if (p != staple + staple_size) {
        problem = "bytes follow it";
      } else if (check_response(response.get(), id.get(), ssl, nullptr, answer, problem)) {
        cache.store(key, answer, std::time(nullptr));
        if (answer.status == V_OCSP_CERTSTATUS_REVOKED) {
          return refuse("the server's certificate is revoked (stapled OCSP response" +
                        revoked_because(answer.reason) + ")");
        }
        if (answer.status == V_OCSP_CERTSTATUS_GOOD) return 1;
        // unknown: not conclusive; the other sources may know
      }
      if (!problem.empty()) {
        return refuse("the server stapled an invalid OCSP response (" + problem + ")");
      }
    } else {
      bool readable = true;
      const bool required = must_staple(leaf, readable);
      if (!readable)
        return refuse("the server's certificate has an unreadable TLS Feature extension");
      if (required) {
        return refuse(
            "the server's certificate requires a stapled OCSP response (Must-Staple) and the "
            "server "
            "sent none");
      }
    }

    if (const auto cached = cache.find(key, std::time(nullptr))) {
      if (*cached == V_OCSP_CERTSTATUS_REVOKED) {
        return refuse("the server's certificate is revoked (cached OCSP response)");
      }
      return 1;
    }
    // With tlsCRLFile, OpenSSL has checked the certificate against its issuer's CRL already.
    if (session->context_->has_crl()) return 1;
    if (checks != tls_context::revocation::full) return 1;

    strings_ptr urls(X509_get1_ocsp(leaf));
    const int count = urls == nullptr ? 0 : sk_OPENSSL_STRING_num(urls.get());
    // At most half of what is left of the handshake's time (so that a responder that does not
    // answer is a soft failure, not a handshake timeout) and at most 5 seconds.
    const auto now = std::chrono::steady_clock::now();
    const auto deadline = session->deadline_ <= now ? now
                                                    : std::min(now + (session->deadline_ - now) / 2,
                                                               now + responder_timeout);
    for (int i = 0; i < count && static_cast<std::size_t>(i) < max_responders; ++i) {
      const std::string url = sk_OPENSSL_STRING_value(urls.get(), i);
      ocsp_request_ptr request(OCSP_REQUEST_new());
      ocsp_certid_ptr request_id(OCSP_CERTID_dup(id.get()));
      if (request == nullptr || request_id == nullptr ||
          OCSP_request_add0_id(request.get(), request_id.get()) == nullptr) {
        return refuse("cannot make an OCSP request: " + drain_errors());
      }
      static_cast<void>(request_id.release());  // the request owns it now
      if (OCSP_request_add1_nonce(request.get(), nullptr, -1) != 1) {
        return refuse("cannot add a nonce to the OCSP request: " + drain_errors());
      }
      std::string problem;
      ocsp_answer answer;
      auto response = ask_responder(url, request.get(), deadline, problem);
      ERR_clear_error();
      if (response == nullptr ||
          !check_response(response.get(), id.get(), ssl, request.get(), answer, problem) ||
          answer.status == V_OCSP_CERTSTATUS_UNKNOWN) {
        continue;  // soft failure: the next responder, or none
      }
      cache.store(key, answer, std::time(nullptr));
      if (answer.status == V_OCSP_CERTSTATUS_REVOKED) {
        return refuse("the server's certificate is revoked (OCSP responder " + url +
                      revoked_because(answer.reason) + ")");
      }
      return 1;
    }
    ERR_clear_error();
    return 1;      // no conclusive answer: soft failure, as the specification says
  } catch (...) {  // out of memory: end the handshake rather than skip the check
    try {
      session->revocation_error_ = "out of memory while checking revocation";
    } catch (...) {
    }
    return -1;
  }
}

outcome<std::shared_ptr<const tls_context>> tls_context::create(const mongo::uri& u) {
  ERR_clear_error();
  std::shared_ptr<tls_context> c(new tls_context());
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (c->ctx_ == nullptr) {
    return failure(errc::tls_failed, "cannot make a TLS context: " + drain_errors());
  }
  SSL_CTX* ctx = c->ctx_;
  // Non-blocking writes may be partial and retried from a moved buffer (the connection's loop).
  constexpr long modes = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      (SSL_CTX_set_mode(ctx, modes) & modes) != modes) {
    return failure(errc::tls_failed, "cannot set up a TLS context: " + drain_errors());
  }
  // Read ahead: one recv takes a record's header and body (and whatever follows) instead of two
  // recvs per record. The connection always calls SSL_read before it polls the socket, so bytes
  // OpenSSL holds are never waited for. (It returns the previous setting and cannot fail.)
  static_cast<void>(SSL_CTX_set_read_ahead(ctx, 1));
  SSL_CTX_set_client_cert_cb(ctx, tls_certificate_requested);
  c->verify_certificate_ = !u.tls_allow_invalid_certificates().value_or(false);
  c->verify_host_ = c->verify_certificate_ && !u.tls_allow_invalid_hostnames().value_or(false);
  SSL_CTX_set_verify(ctx, c->verify_certificate_ ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  // Revocation checks need checked certificates (tlsInsecure and tlsAllowInvalidCertificates
  // turn them off, as the specification says).
  if (c->verify_certificate_ && !u.tls_disable_certificate_revocation_check().value_or(false)) {
    c->revocation_ = u.tls_disable_ocsp_endpoint_check().value_or(false) ? revocation::no_endpoint
                                                                         : revocation::full;
    if (SSL_CTX_set_tlsext_status_cb(ctx, tls_status_received) != 1) {
      return failure(errc::tls_failed, "cannot set up OCSP checks: " + drain_errors());
    }
  }

  if (const auto& ca = u.tls_ca_file()) {
    if (SSL_CTX_load_verify_locations(ctx, ca->c_str(), nullptr) != 1) {
      return failure(errc::tls_failed,
                     "cannot read tlsCAFile '" + *ca + "' (PEM certificates): " + drain_errors());
    }
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return failure(errc::tls_failed,
                   "cannot load the system's trust store (give tlsCAFile): " + drain_errors());
  }

  if (const auto& file = u.tls_crl_file(); file && c->revocation_ != revocation::off) {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    bio_ptr in(BIO_new_file(file->c_str(), "r"));
    if (store == nullptr || in == nullptr) {
      return failure(errc::tls_failed, "cannot read tlsCRLFile '" + *file + "': " + drain_errors());
    }
    int crls = 0;
    while (X509_CRL* crl = PEM_read_bio_X509_CRL(in.get(), nullptr, nullptr, nullptr)) {
      const int added = X509_STORE_add_crl(store, crl);
      X509_CRL_free(crl);
      if (added != 1) {
        return failure(errc::tls_failed,
                       "cannot use a CRL of tlsCRLFile '" + *file + "': " + drain_errors());
      }
      ++crls;
    }
    // The loop ends at the end of the file (no further PEM block) or at a bad block.
    const unsigned long last = ERR_peek_last_error();
    const bool at_end =
        ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
    if (!at_end || crls == 0) {
      return failure(errc::tls_failed, "cannot read tlsCRLFile '" + *file + "' (PEM CRLs): " +
                                           (at_end ? "no CRL in it" : drain_errors()));
    }
    ERR_clear_error();
    // On the handshake's verification only (SSL_CTX's parameters), not the store's: a stapled
    // response's signer is checked without CRLs.
    if (X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx), X509_V_FLAG_CRL_CHECK) != 1) {
      return failure(errc::tls_failed, "cannot turn on CRL checks: " + drain_errors());
    }
    c->has_crl_ = true;
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
    auto subject = subject_of(SSL_CTX_get0_certificate(ctx));
    if (!subject) {
      return failure(errc::tls_failed,
                     "cannot read the subject of the certificate in "
                     "tlsCertificateKeyFile '" +
                         *file + "': " + drain_errors());
    }
    c->client_subject_ = std::move(*subject);
  }
  return std::shared_ptr<const tls_context>(std::move(c));
}

tls_context::~tls_context() { SSL_CTX_free(ctx_); }

outcome<std::unique_ptr<tls_session>> tls_session::start(
    std::shared_ptr<const tls_context> context, int fd, const mongo::host& h,
    std::chrono::steady_clock::time_point deadline) {
  ERR_clear_error();
  std::unique_ptr<tls_session> s(new tls_session());
  s->context_ = std::move(context);
  s->host_ = h.name;
  s->deadline_ = deadline;
  s->ssl_ = SSL_new(s->context_->native());
  BIO* bio = s->ssl_ == nullptr ? nullptr : socket_bio(fd);
  if (bio == nullptr) {
    return failure(errc::tls_failed, "cannot start a TLS session: " + drain_errors());
  }
  SSL_set_bio(s->ssl_, bio, bio);  // the session owns the BIO; the BIO does not own the socket
  if (SSL_set_app_data(s->ssl_, s.get()) != 1) {
    return failure(errc::tls_failed, "cannot start a TLS session: " + drain_errors());
  }
  // Ask for a stapled OCSP response (the status_request extension).
  if (s->context_->revocation_checks() != tls_context::revocation::off &&
      SSL_set_tlsext_status_type(s->ssl_, TLSEXT_STATUSTYPE_ocsp) != 1) {
    return failure(errc::tls_failed, "cannot ask for a stapled OCSP response: " + drain_errors());
  }
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
  // One attempt: a close_notify that does not fit now is not waited for (0: sent, the peer's
  // not awaited). A failure is kept as the last error; the connection is closing anyway.
  if (SSL_shutdown(ssl_) < 0) {
    try {
      last_error_ = "close_notify not sent: " + drain_errors();
    } catch (...) {
      last_error_.clear();
    }
  }
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
  // A revocation check that ended the handshake says why itself.
  if (!revocation_error_.empty()) {
    ERR_clear_error();
    return revocation_error_;
  }
  // A certificate check that failed says most: which check, about which certificate.
  const long verify = SSL_get_verify_result(ssl_);
  if (context_->verify_certificate() && verify != X509_V_OK) {
    ERR_clear_error();
    const std::string what = X509_verify_cert_error_string(verify);
    switch (verify) {
    case X509_V_ERR_CERT_REVOKED:
      return "the server's certificate is revoked (" + what + ", by a CRL of tlsCRLFile)";
    case X509_V_ERR_UNABLE_TO_GET_CRL:
      return "tlsCRLFile has no CRL from the issuer of the server's certificate (" + what + ")";
    case X509_V_ERR_CRL_HAS_EXPIRED:
    case X509_V_ERR_CRL_NOT_YET_VALID:
    case X509_V_ERR_CRL_SIGNATURE_FAILURE:
    case X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE:
      return "a CRL of tlsCRLFile cannot be used (" + what + ")";
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
