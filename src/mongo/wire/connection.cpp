#include "mongo/wire/connection.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <utility>

#include "mongo/wire/batch_check.hpp"

namespace oid::mongo {
namespace {

using clock = std::chrono::steady_clock;

// The receive buffer's first size: a small reply comes whole in one read.
constexpr std::size_t first_read = 64 * 1024;

}  // namespace

connection::connection(detail::stream s, mongo::host h,
                       std::chrono::milliseconds socket_timeout) noexcept
    : stream_(std::move(s)), socket_timeout_(socket_timeout), host_(std::move(h)) {}

connection::connection(connection&& other) noexcept
    : stream_(std::move(other.stream_)),
      next_request_id_(other.next_request_id_),
      socket_timeout_(other.socket_timeout_),
      host_(std::move(other.host_)),
      server_(std::move(other.server_)),
      unacknowledged_(std::exchange(other.unacknowledged_, {})),
      in_(std::move(other.in_)),
      in_message_(std::exchange(other.in_message_, 0)),
      in_end_(std::exchange(other.in_end_, 0)),
      out_(std::move(other.out_)) {}

connection& connection::operator=(connection&& other) noexcept {
  if (this != &other) {
    close();
    next_request_id_ = other.next_request_id_;
    socket_timeout_ = other.socket_timeout_;
    host_ = std::move(other.host_);
    server_ = std::move(other.server_);
    unacknowledged_ = std::exchange(other.unacknowledged_, {});
    stream_ = std::move(other.stream_);
    in_ = std::move(other.in_);
    in_message_ = std::exchange(other.in_message_, 0);
    in_end_ = std::exchange(other.in_end_, 0);
    out_ = std::move(other.out_);
  }
  return *this;
}

connection::~connection() { close(); }

// Fire-and-forget messages may still sit unread in the server's receive buffer, and replies the
// server sent anyway (FerretDB answers even moreToCome messages) in ours. Closing a socket with
// unread data in it sends a reset instead of a FIN, and on a reset the server's kernel throws
// away what the server had not read yet: those writes would be lost (FerretDB lost 3,000 of
// 5,000 documents of `oid mongo insert --w0` that way). So after such messages the stream is
// drained before it closes (detail::stream::drain_and_close), within the socket timeout and at
// most 10 s.
void connection::close() noexcept {
  constexpr std::chrono::milliseconds close_timeout{10'000};
  if (unacknowledged_.empty()) return stream_.close();
  unacknowledged_.clear();
  stream_.drain_and_close(socket_timeout_.count() > 0 ? std::min(socket_timeout_, close_timeout)
                                                      : close_timeout);
}

void connection::wipe_send_buffer() noexcept {
  out_.resize(out_.capacity());
  OPENSSL_cleanse(out_.data(), out_.size());
  out_.clear();
}

oid::error connection::fail(oid::error e) noexcept {
  unacknowledged_.clear();  // broken: close at once, nothing more can be delivered
  close();
  return e;
}

std::chrono::steady_clock::time_point connection::deadline() const {
  return detail::deadline_after(socket_timeout_);
}

result<std::span<const std::uint8_t>> connection::encode(
    std::string_view db, bson::document_view command, std::span<const document_sequence> sequences,
    std::uint32_t flags, std::int32_t& request_id) {
  request_id = next_request_id_;
  // Ids stay positive: 0 means "not a reply" in responseTo.
  next_request_id_ =
      next_request_id_ == std::numeric_limits<std::int32_t>::max() ? 1 : next_request_id_ + 1;
  auto encoded = detail::encode_request(request_id, flags, command, db, sequences, out_);
  if (!encoded ||
      out_.size() > static_cast<std::size_t>(std::max(0, server_.max_message_size_bytes))) {
    sent();
    return encoded ? oid::error{oid::errc::too_large, 0} : encoded.error();
  }
  return std::span<const std::uint8_t>(out_);
}

// Keeps the send buffer for the next request, when it is small: a command and its reply then
// cost no allocation for the message. A large one (bulk writes send megabytes) is given back, so
// that an idle pool of maxPoolSize connections holds little; keeping it was measured not to make
// bulk inserts faster (insert many small, 1 and 2 threads on the canned server).
void connection::sent() noexcept {
  constexpr std::size_t kept_send_capacity = 64 * 1024;
  if (out_.capacity() > kept_send_capacity) {
    std::vector<std::uint8_t>().swap(out_);
  } else {
    out_.clear();
  }
}

result<void> connection::write_all(std::span<const std::uint8_t> bytes,
                                   clock::time_point deadline) {
  if (auto w = stream_.write_all(bytes, deadline); !w) return fail(w.error());
  return {};
}

result<std::size_t> connection::read_some(std::uint8_t* out, std::size_t n,
                                          clock::time_point deadline) {
  auto r = stream_.read_some(out, n, deadline);
  if (!r) return fail(r.error());
  return r;
}

result<void> connection::read_rest(std::size_t length, detail::batch_check& check,
                                   clock::time_point deadline) {
  // For the rest of a large reply (a cursor batch of up to 16 MB), poll wakes the thread only when
  // a large piece has arrived (SO_RCVLOWAT; never more than what is still to come, or it would wait
  // for bytes that are not sent): without it, each wake-up takes the few kilobytes that came since
  // the last, and the context switches cost more CPU than the copy. Find many of 10,000 tweets on
  // the canned server: 2,200-2,500 context switches -> about 400 per 31 finds, CPU per document
  // 0.47 -> 0.40 us (medians of 4; 256 KiB: 0.54, 4 MiB: 0.51). With TLS the bytes come through
  // OpenSSL's records, so the socket's count says nothing: left as it is.
  //
  // After each piece, the batch documents that have arrived whole are validated (batch_check)
  // while the server sends the next piece, and decoding the reply skips them. The last piece's
  // are checked by read_reply, once the message is whole.
  constexpr std::size_t large = 256 * 1024;
  constexpr int low_water = 1024 * 1024;
  const bool large_rest = length - in_end_ > large;
  int lowat = 1;
  auto set_lowat = [&](int v) {
    if (v != lowat && stream_.set_receive_low_water(v)) lowat = v;
  };
  while (in_end_ < length) {
    // The buffer grows with what has arrived (doubling, by at least the first read's 64 KiB),
    // never up front to the length the header declares: a server that declares 47 MB and stalls
    // or closes makes the client hold what it sent and as much again, not 47 MB.
    if (in_end_ == in_.capacity()) {
      in_.reserve(std::min(length, in_end_ + std::max(in_end_, first_read)), in_end_);
    }
    if (large_rest) set_lowat(static_cast<int>(std::min<std::size_t>(low_water, length - in_end_)));
    auto r = read_some(in_.data() + in_end_, std::min(length, in_.capacity()) - in_end_, deadline);
    if (!r) {
      set_lowat(1);
      return r.error();
    }
    in_end_ += *r;
    if (in_end_ < length) check.advance(std::span<const std::uint8_t>(in_.data(), in_end_));
  }
  set_lowat(1);
  return {};
}

// Reads the next message into in_, reusing it: no allocation once it has grown to the largest
// message, no zero-fill. A small reply comes whole with its header in one recv; a large one's
// rest is read to its exact length, the buffer growing as it arrives (read_rest). Bytes that came
// after the message (the server sent several, as FerretDB does when it answers fire-and-forget
// messages) stay in in_ for the next call.
result<op_msg> connection::read_reply(clock::time_point deadline) {
  // The batch index describes the last message, which the buffer stops holding now: it is
  // forgotten (its storage goes to this message's check), and set again only when this message
  // is decoded.
  detail::doc_index index_storage = in_.take_index();
  const std::size_t carried = in_end_ - in_message_;
  if (carried > 0 && in_message_ > 0) std::memmove(in_.data(), in_.data() + in_message_, carried);
  in_message_ = 0;
  in_end_ = carried;
  in_.reserve(first_read, in_end_);
  while (in_end_ < message_header_size) {
    auto r = read_some(in_.data() + in_end_, in_.capacity() - in_end_, deadline);
    if (!r) return r.error();
    in_end_ += *r;
  }
  // MongoDB's 48,000,000 bytes, whatever the server said: the handshake never takes a larger
  // maxMessageSizeBytes, and a reply's size is the memory a server makes the client hold.
  const op_msg_limits limits;
  const auto h = decode_header(std::span(in_.data(), in_end_), limits);
  if (!h) return fail(h.error());
  const auto length = static_cast<std::size_t>(h->message_length);
  detail::batch_check check(limits, std::move(index_storage));
  if (in_end_ < length) {
    check.advance(std::span<const std::uint8_t>(in_.data(), in_end_));
    if (auto r = read_rest(length, check, deadline); !r) return r.error();
  }
  // The documents of the last piece, or of the whole reply when it came in one read: checked
  // here too, so that the index covers the whole batch (decode_op_msg skips them all).
  check.advance(std::span<const std::uint8_t>(in_.data(), length));
  in_message_ = length;
  auto reply =
      detail::decode_op_msg(std::span<const std::uint8_t>(in_.data(), length), {}, check.checked());
  if (!reply) return fail(reply.error());
  // Kept with the bytes only when it lists every document of the batch (of more than 16);
  // otherwise only its storage is.
  const std::size_t indexed_at = check.indexed() ? check.array_offset() : 0;
  in_.set_index(check.take_index(), indexed_at);
  return reply;
}

void connection::take_reply(detail::receive_buffer& into) {
  in_.swap(into);
  // The buffer this connection gets back held an older message: its index must not be taken for
  // the bytes read into it next (read_reply clears it too; this keeps a stale one from existing).
  in_.clear_index();
  const std::size_t carried = in_end_ - in_message_;
  if (carried > 0) {
    in_.reserve(carried, 0);
    std::memcpy(in_.data(), into.data() + in_message_, carried);
  }
  in_message_ = 0;
  in_end_ = carried;
}

void detail::receive_buffer::reserve(std::size_t n, std::size_t keep) {
  if (n <= capacity_) return;
  assert(n <= std::numeric_limits<std::uint32_t>::max());
  auto grown = std::make_unique_for_overwrite<std::uint8_t[]>(n);
  if (keep > 0) std::memcpy(grown.get(), bytes_.get(), std::min(keep, capacity()));
  bytes_ = std::move(grown);
  capacity_ = static_cast<std::uint32_t>(n);
}

result<bson::document> connection::run(std::string_view db, bson::document_view command,
                                       std::span<const document_sequence> sequences) {
  auto body = run_view(db, command, sequences);
  if (!body) return body.error();
  return bson::document(*body);
}

result<bson::document_view> connection::run_view(std::string_view db, bson::document_view command,
                                                 std::span<const document_sequence> sequences,
                                                 std::optional<clock::time_point> deadline_at) {
  if (broken()) return oid::error{errc::connection_closed, 0};
  std::int32_t request_id = 0;
  auto bytes = encode(db, command, sequences, 0, request_id);
  if (!bytes) return bytes.error();
  const auto until = deadline_at.value_or(deadline());
  auto written = write_all(*bytes, until);
  sent();
  if (!written) return written.error();
  while (true) {
    auto reply = read_reply(until);
    if (!reply) return reply.error();
    if (reply->response_to == request_id) return reply->body;
    const auto stale =
        std::find(unacknowledged_.begin(), unacknowledged_.end(), reply->response_to);
    if (stale == unacknowledged_.end()) return fail(oid::error{errc::unexpected_reply, 8});
    unacknowledged_.erase(stale);
  }
}

result<void> connection::send_unacknowledged(std::string_view db, bson::document_view command,
                                             std::span<const document_sequence> sequences,
                                             std::optional<clock::time_point> deadline_at) {
  if (broken()) return oid::error{errc::connection_closed, 0};
  std::int32_t request_id = 0;
  auto bytes = encode(db, command, sequences, op_msg_flags::more_to_come, request_id);
  if (!bytes) return bytes.error();
  auto written = write_all(*bytes, deadline_at.value_or(deadline()));
  sent();
  if (!written) return written.error();
  // Remember it, in case the server replies anyway; a real mongod does not, so keep few.
  unacknowledged_.push_back(request_id);
  // Keep the latest 4,096 to 8,192: the oldest half goes at once (amortized O(1) per message).
  if (unacknowledged_.size() > 8192) {
    unacknowledged_.erase(unacknowledged_.begin(), unacknowledged_.end() - 4096);
  }
  return {};
}

}  // namespace oid::mongo
