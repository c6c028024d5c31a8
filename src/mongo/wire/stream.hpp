// A byte stream to one server: a connected, non-blocking socket (TCP or a Unix domain socket),
// through a TLS session when the client uses TLS. The bottom of the wire layer: it knows nothing
// of messages (connection.hpp frames them) or of commands (handshake.hpp runs the first ones).
//
// Every wait is a poll() bounded by a deadline, so a server that stops reading or writing is a
// timeout, never a hang. After an error the stream is closed and must be thrown away.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/result.hpp>
#include <span>
#include <string>

namespace oid::mongo::detail {

class tls_context;
class tls_session;

/// No deadline: wait as long as it takes.
inline constexpr std::chrono::steady_clock::time_point no_deadline =
    std::chrono::steady_clock::time_point::max();

/// `timeout` from now; no_deadline for a timeout of 0 (no limit).
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) return no_deadline;
  return std::chrono::steady_clock::now() + timeout;
}

/// "host:port", "[::1]:port" or the socket's path: how messages name a server.
std::string describe(const host& h);

/// One open socket to one server, and its TLS session. Movable, not copyable; closes when
/// destroyed.
class stream {
 public:
  /// Resolves `h`, connects to the first address that answers and, with `tls`, performs the TLS
  /// handshake (verifying the server as `tls` says), all within `connect_timeout` (0: no limit;
  /// name resolution is the one step it does not bound: getaddrinfo has no timeout). Failures:
  /// connection_failed (cannot resolve, refused, unreachable), timeout, tls_failed; the message
  /// names the host.
  static outcome<stream> connect(const host& h, const std::shared_ptr<const tls_context>& tls,
                                 std::chrono::milliseconds connect_timeout);

  stream(stream&& other) noexcept;
  stream& operator=(stream&& other) noexcept;
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  ~stream();

  /// Writes all of `bytes` by `deadline`. Errors: timeout, connection_closed, tls_failed; the
  /// stream is closed after any of them.
  result<void> write_all(std::span<const std::uint8_t> bytes,
                         std::chrono::steady_clock::time_point deadline);
  /// Reads between 1 and `n` bytes into `out` by `deadline`. Errors as write_all; the server
  /// closing its side is connection_closed.
  result<std::size_t> read_some(std::uint8_t* out, std::size_t n,
                                std::chrono::steady_clock::time_point deadline);

  /// Asks the kernel to wake a reader only once `bytes` bytes have arrived (SO_RCVLOWAT); 1 is
  /// the default. Plain sockets only (TLS records make the socket's count meaningless): false,
  /// and nothing changed, with TLS or when the kernel refuses.
  bool set_receive_low_water(int bytes) noexcept;

  bool is_open() const noexcept { return fd_ >= 0; }
  /// What the TLS library said last failed (empty without TLS or without a failure).
  std::string tls_error() const;

  /// Closes at once (with a TLS close_notify). Idempotent.
  void close() noexcept;
  /// Closes gracefully: half-closes, reads and drops whatever comes until the server closes its
  /// side or `timeout` passes, then closes. For a stream whose last messages the server may not
  /// have read yet: closing with unread bytes in the socket sends a reset, and on a reset the
  /// server's kernel drops what the server had not read.
  void drain_and_close(std::chrono::milliseconds timeout) noexcept;

 private:
  stream() = default;
  oid::error fail(oid::error e) noexcept;

  int fd_ = -1;
  std::unique_ptr<tls_session> tls_;  // kept after close() for tls_error()
};

}  // namespace oid::mongo::detail
