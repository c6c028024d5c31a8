// One connection to one server (private: the client's pools and monitors open them): messages on a
// stream. The middle of the wire layer, between stream.hpp (bytes on a socket, TLS) and
// handshake.hpp (the first commands on a new connection).
//
// `connection::open` (defined in handshake.cpp) connects the stream within `connect_timeout`
// and performs the handshake: `hello` with the client metadata, authentication, the server's
// limits (maxBsonObjectSize, maxMessageSizeBytes, maxWriteBatchSize). `run` sends one command as
// an OP_MSG and reads its reply; every read and write waits at most `socket_timeout`, so a server
// that stops answering is a timeout, not a hang. A reply to another request is skipped when it
// answers an earlier fire-and-forget message (servers such as FerretDB answer those although
// OP_MSG says they must not), and is an `unexpected_reply` otherwise. Replies are read into one
// buffer per connection, reused from reply to reply (`run_view` and `take_reply` let a caller
// keep a reply without copying it). After any transport error the connection is `broken()` and
// must be thrown away: the bytes on the wire can no longer be trusted.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/mongo/handshake.hpp>
#include <oid/mongo/op_msg.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/secret.hpp>
#include <oid/mongo/server_api.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/result.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bson/detail/validate.hpp"
#include "mongo/wire/batch_check.hpp"
#include "mongo/wire/stream.hpp"

namespace oid::mongo {

namespace detail {
// A request as a connection sends it: `command` with `$db: db` appended, the body first, then
// `sequences`; the same bytes as encode_op_msg of a body built with `$db`, without building it.
// The message replaces the contents of `out`, in its capacity when it fits (a connection reuses
// one buffer for every request). On an error `out` holds nothing of use.
result<void> encode_request(std::int32_t request_id, std::uint32_t flags,
                            bson::document_view command, std::string_view db,
                            std::span<const document_sequence> sequences,
                            std::vector<std::uint8_t>& out);

class scram_cache;
class client_metadata;

/// Bytes received from a server. Grows as a message arrives (never ahead to the length its header
/// declares) up to the largest message read, and keeps its size; never zero-filled (every byte used
/// is first written by a read). Moving or swapping it keeps the bytes where they are, so views into
/// them stay valid.
///
/// With the bytes goes the index of the cursor batch of the message at their start, when the
/// connection validated that whole batch as it arrived (batch_check): a cursor steps through it
/// instead of reading each element of the batch again.
class receive_buffer {
 public:
  receive_buffer() = default;
  receive_buffer(receive_buffer&& other) noexcept
      : bytes_(std::move(other.bytes_)),
        capacity_(std::exchange(other.capacity_, 0)),
        batch_offset_(std::exchange(other.batch_offset_, 0)),
        index_(std::move(other.index_)) {}
  receive_buffer& operator=(receive_buffer&& other) noexcept {
    bytes_ = std::move(other.bytes_);
    capacity_ = std::exchange(other.capacity_, 0);
    batch_offset_ = std::exchange(other.batch_offset_, 0);
    index_ = std::move(other.index_);
    return *this;
  }
  std::uint8_t* data() noexcept { return bytes_.get(); }
  const std::uint8_t* data() const noexcept { return bytes_.get(); }
  std::size_t capacity() const noexcept { return capacity_; }
  /// Room for at least `n` bytes (below 2^32: a message's length is an int32), keeping the
  /// first `keep` (at most the capacity). O(keep) when it grows.
  void reserve(std::size_t n, std::size_t keep);
  void swap(receive_buffer& other) noexcept {
    bytes_.swap(other.bytes_);
    std::swap(capacity_, other.capacity_);
    std::swap(batch_offset_, other.batch_offset_);
    index_.swap(other.index_);
  }

  /// The offset of the indexed batch array's length prefix in the message; 0 when there is no
  /// index (no array starts a message: its header does).
  std::size_t batch_offset() const noexcept { return batch_offset_; }
  /// The documents of the indexed batch, each one's offset and size in the message, in order;
  /// empty when there is no index.
  std::span<const bson::detail::doc_span> batch() const noexcept { return index_.docs(); }
  /// Sets the index: `docs` are every document of the batch array at `offset` (> 0); with
  /// `offset` 0, there is no index and only the capacity of `docs` is kept.
  void set_index(doc_index docs, std::size_t offset) noexcept {
    index_ = std::move(docs);
    batch_offset_ = static_cast<std::uint32_t>(offset);
    if (offset == 0) index_.clear();
  }
  /// Takes the index's storage (for the next message's), leaving no index.
  doc_index take_index() noexcept {
    batch_offset_ = 0;
    doc_index out = std::move(index_);
    out.clear();
    return out;
  }
  /// Forgets the index, keeping its storage.
  void clear_index() noexcept {
    batch_offset_ = 0;
    index_.clear();
  }

 private:
  // 32 bytes in all, for the reason doc_index gives.
  std::unique_ptr<std::uint8_t[]> bytes_;
  std::uint32_t capacity_ = 0;
  std::uint32_t batch_offset_ = 0;
  doc_index index_;
};
}  // namespace detail

/// Settings for opening a connection.
struct connection_options {
  /// Time allowed for connecting and the handshake; 0 means no limit.
  std::chrono::milliseconds connect_timeout{10'000};
  /// Time allowed for each command's send and reply; 0 means no limit. MongoDB's specification
  /// defaults to no limit; oid defaults to two minutes so that a stalled server cannot hang a
  /// program forever. Long-running commands need a larger value (socketTimeoutMS).
  std::chrono::milliseconds socket_timeout{120'000};
  /// `appName`, sent in the handshake (the server logs it).
  std::string app_name;
  /// The client's handshake metadata (client_metadata.hpp), shared by its connections so that
  /// what a wrapping library appends reaches every connection opened afterwards; null: the
  /// metadata of `app_name` and this process, made for each handshake.
  std::shared_ptr<detail::client_metadata> metadata;
  /// Authenticate as this user in the handshake; none: do not authenticate.
  std::optional<mongo::credential> auth;
  /// Salted SCRAM passwords shared by the connections of one client, so that PBKDF2 runs once
  /// per client rather than once per connection (the client's pool sets it); null: no cache.
  std::shared_ptr<detail::scram_cache> scram_cache;
  /// TLS settings (one OpenSSL context) shared by the connections of one client, which makes it
  /// from the connection string's tls* options; null: plain TCP.
  std::shared_ptr<const detail::tls_context> tls;
  /// Behind a load balancer (`loadBalanced=true`): the handshake says `loadBalanced: true`, and a
  /// reply without `serviceId` fails the connection (the server does not support the mode).
  bool load_balanced = false;
  /// The client's declared Stable API version: the handshake's `hello` (never `isMaster`) and
  /// authentication's commands carry it; none: nothing of the kind is sent.
  std::optional<mongo::server_api> api;
};

namespace detail {
/// Appends `apiVersion` of `api`, and `apiStrict` and `apiDeprecationErrors` when they are set, to
/// a command being built; nothing when `api` is none (the Stable API specification's command
/// options). Defined in handshake.cpp.
void append_server_api(bson::builder& b, const std::optional<server_api>& api);
}  // namespace detail

/// One connection. Movable, not copyable; not thread-safe (the client's pool hands each
/// connection to one thread at a time). Closes its socket when destroyed.
class connection {
 public:
  /// Connects to `h` (detail::stream::connect) and performs the handshake (handshake.hpp).
  /// Defined in handshake.cpp. Failures: connection_failed (name resolution,
  /// refused, unreachable, or a handshake the server refused), tls_failed (the TLS handshake
  /// failed: the message says why, e.g. unknown CA, expired certificate, host name mismatch,
  /// no client certificate), authentication_failed (the server
  /// refused the credential, with its code, codeName and message in `server`; or the server
  /// could not prove it knows the password), timeout, connection_closed,
  /// unsupported (a server without OP_MSG, wire version below 6), and the decoding errors of
  /// `decode_op_msg` for a malformed reply; the failure's message is a sentence naming the host.
  static outcome<connection> open(const mongo::host& h, const connection_options& options);

  /// A connection over `s` to `h` before its handshake: the default limits, no server
  /// information, commands under `socket_timeout` (0: no limit).
  connection(detail::stream s, mongo::host h, std::chrono::milliseconds socket_timeout) noexcept;

  connection(connection&& other) noexcept;
  connection& operator=(connection&& other) noexcept;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection();

  /// Sends `command` (without `$db`, which is appended from `db`) with the document sequences
  /// `sequences`, and returns the reply's body as the server sent it: a reply with `ok: 0` is a
  /// value here, not an error. Errors: timeout, connection_closed, tls_failed, unexpected_reply (a
  /// reply to a request this connection did not make), too_large (the message exceeds the server's
  /// maxMessageSizeBytes), and the errors of `decode_op_msg`. On error the connection is broken.
  result<bson::document> run(std::string_view db, bson::document_view command,
                             std::span<const document_sequence> sequences = {});

  /// As `run`, without copying the reply: the body is a view into this connection's receive
  /// buffer, valid until the next call that reads from this connection (or `take_reply`, which
  /// keeps it valid). `until`: the send and the reply end by then instead of within the socket
  /// timeout (an operation's timeoutMS).
  result<bson::document_view> run_view(
      std::string_view db, bson::document_view command,
      std::span<const document_sequence> sequences = {},
      std::optional<std::chrono::steady_clock::time_point> until = std::nullopt);

  /// Hands the buffer holding the last reply to `into` and keeps the buffer `into` had for the
  /// next reply: views into that reply stay valid for as long as `into` holds it, whatever
  /// happens to the connection. How cursors keep a batch without copying it.
  void take_reply(detail::receive_buffer& into);

  /// Sends `command` with moreToCome set and reads nothing: fire-and-forget (w: 0). Errors as
  /// `run` for sending; `until` as `run_view`'s.
  result<void> send_unacknowledged(
      std::string_view db, bson::document_view command,
      std::span<const document_sequence> sequences = {},
      std::optional<std::chrono::steady_clock::time_point> until = std::nullopt);

  /// What the handshake learnt.
  const handshake_info& server() const noexcept { return server_; }
  /// Sets what the handshake learnt (its limits bound the messages sent from now on).
  void set_server(handshake_info info) noexcept { server_ = std::move(info); }
  /// The time each command's send and reply may take from now on; 0: no limit.
  void set_socket_timeout(std::chrono::milliseconds t) noexcept { socket_timeout_ = t; }
  /// What the TLS library said last failed (empty without TLS or without a failure).
  std::string tls_error() const { return stream_.tls_error(); }
  /// Overwrites the whole send buffer, not only its size: after authentication it held a
  /// password (PLAIN) or a proof (SCRAM).
  void wipe_send_buffer() noexcept;
  /// The host this connection talks to.
  const mongo::host& host() const noexcept { return host_; }
  /// The request id the next message will carry (command monitoring reports it).
  std::int32_t next_request_id() const noexcept { return next_request_id_; }
  /// True after a transport error: the connection must not be used again.
  bool broken() const noexcept { return !stream_.is_open(); }
  /// Closes the socket; `broken()` becomes true. After fire-and-forget writes it first
  /// half-closes and waits (at most the socket timeout, and 10 s) until the server has read
  /// them all and closed its side, so that none is lost to a connection reset.
  void close() noexcept;

 private:
  result<std::span<const std::uint8_t>> encode(std::string_view db, bson::document_view command,
                                               std::span<const document_sequence> sequences,
                                               std::uint32_t flags, std::int32_t& request_id);
  void sent() noexcept;
  result<void> write_all(std::span<const std::uint8_t> bytes,
                         std::chrono::steady_clock::time_point deadline);
  result<void> read_rest(std::size_t length, detail::batch_check& check,
                         std::chrono::steady_clock::time_point deadline);
  result<std::size_t> read_some(std::uint8_t* out, std::size_t n,
                                std::chrono::steady_clock::time_point deadline);
  result<op_msg> read_reply(std::chrono::steady_clock::time_point deadline);
  std::chrono::steady_clock::time_point deadline() const;
  oid::error fail(oid::error e) noexcept;

  detail::stream stream_;
  std::int32_t next_request_id_ = 1;
  std::chrono::milliseconds socket_timeout_{0};
  mongo::host host_;
  handshake_info server_;
  // Request ids of recent fire-and-forget messages, whose unrequested replies are skipped, oldest
  // first. A vector, not a deque: moving a connection (the pool does it at every check-out and
  // check-in) must not allocate, and libstdc++'s deque allocates for the moved-from side.
  std::vector<std::int32_t> unacknowledged_;
  // The last message read is in_[0, in_message_); the bytes received after it (the start of the
  // next message, when the server sent several) are in_[in_message_, in_end_).
  detail::receive_buffer in_;
  std::size_t in_message_ = 0;
  std::size_t in_end_ = 0;
  // The message being sent, in a buffer kept from one request to the next when it is small (see
  // connection::sent).
  std::vector<std::uint8_t> out_;
};

}  // namespace oid::mongo
