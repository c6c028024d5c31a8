// A cursor reply's documents checked while the rest of the reply is still arriving.
//
// A getMore reply holds up to 16 MB of documents, which arrive in pieces of up to 1 MiB (see
// connection::read_exact). Every document is validated before the first one reaches the
// application (the reply is untrusted input), and validating them only after the last piece has
// arrived adds that time to the transfer's. batch_check validates the batch's whole documents in
// each piece as it comes, while the server is still sending the next, and decode_op_msg then
// skips them: the same checks, the same result, the same error at the same offset, sooner.
//
// On its way it records where each document is (an index of offsets and sizes): the documents of
// one piece are validated together (bson::detail::validate_many, faster than one at a time), and
// a cursor steps through a batch with the index instead of reading each element's header again
// from a 16 MB buffer that has long left the CPU caches.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <oid/bson/validate.hpp>
#include <oid/mongo/op_msg.hpp>
#include <span>
#include <utility>

#include "bson/detail/validate.hpp"

namespace oid::mongo::detail {

/// Where the documents of a cursor batch are, in order: each one's offset and size in its
/// message. A growable array in 16 bytes, where a std::vector takes 24: every connection's receive
/// buffer holds one, and the pool keeps idle connections in a std::deque, whose nodes (512 bytes)
/// hold two of them only while a connection and its bookkeeping take at most 256 bytes; with one
/// per node, every check-in allocates one.
class doc_index {
 public:
  doc_index() = default;
  doc_index(doc_index&& other) noexcept
      : docs_(std::move(other.docs_)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  doc_index& operator=(doc_index&& other) noexcept {
    docs_ = std::move(other.docs_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }
  /// Appends `d`. Amortized O(1); allocates when the capacity is used up.
  void push_back(bson::detail::doc_span d) {
    if (size_ == capacity_) grow();
    docs_[size_++] = d;
  }
  /// Keeps the first `n` (at most size()).
  void truncate(std::size_t n) noexcept {
    if (n < size_) size_ = static_cast<std::uint32_t>(n);
  }
  /// Empties it, keeping the capacity.
  void clear() noexcept { size_ = 0; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::span<const bson::detail::doc_span> docs() const noexcept { return {docs_.get(), size_}; }
  void swap(doc_index& other) noexcept {
    docs_.swap(other.docs_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  void grow();
  std::unique_ptr<bson::detail::doc_span[]> docs_;
  // A message has at most 2^31 - 1 bytes, and a document at least 5.
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 0;
};

/// The documents of a reply's cursor batch that have been validated: the array elements starting
/// in [begin, end) of the message (offsets in its bytes), the body being the kind-0 section that
/// starts the message. Empty when none were.
struct checked_batch {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// How the body and the document sequences of a message are validated.
bson::validate_options section_options(const op_msg_limits& limits);

/// Follows one message as it arrives. Only the shape servers send a cursor in is recognized: an
/// OP_MSG whose first section is the body, whose first element is `cursor`, whose first element
/// is the batch array (`firstBatch` or `nextBatch`) of documents; anything else (or anything the
/// validator would reject) stops it, and decode_op_msg checks the rest as usual.
class batch_check {
 public:
  /// `storage`: an index whose capacity this one reuses (its contents are dropped), so that a
  /// connection reading batch after batch does not allocate an index for each.
  explicit batch_check(const op_msg_limits& limits = {}, doc_index storage = {});
  /// `arrived` is the message's first bytes, the same bytes each time and more of them than the
  /// time before (the buffer may have moved: only offsets are kept): validates the batch's
  /// documents that have arrived whole. O(bytes of the documents that arrived whole since the
  /// last call).
  void advance(std::span<const std::uint8_t> arrived);
  checked_batch checked() const noexcept;
  /// True when every element of the batch has been validated: the checked range ends at the
  /// batch's terminating NUL. (Whether that NUL and the rest of the message are well-formed is
  /// decode_op_msg's to say.)
  bool complete() const noexcept { return in_batch_ && next_ == batch_term_; }
  /// The offset in the message of the batch array's length prefix; meaningful once a batch was
  /// found (checked() not empty, or complete()).
  std::size_t array_offset() const noexcept { return first_ - 4; }
  /// The documents of checked(), in order: each one's offset and size in the message.
  std::span<const bson::detail::doc_span> index() const noexcept {
    return first_count_ > 0
               ? std::span<const bson::detail::doc_span>(first_docs_.data(), first_count_)
               : index_.docs();
  }
  /// True when the whole batch is checked and take_index gives its index: a batch of more than
  /// 16 documents (a smaller one is indexed on the stack only, and its cursor reads it with the
  /// iterator: its headers are still in the CPU's caches, and keeping its index would cost an
  /// allocation for every find of a few documents, whose buffer goes to the cursor).
  bool indexed() const noexcept { return complete() && first_count_ == 0; }
  /// Gives the index's storage away: the whole batch's index when indexed(), else the storage
  /// only (to keep it with the message, or its capacity for the next one).
  doc_index take_index() noexcept { return std::move(index_); }

 private:
  bool find_batch(std::span<const std::uint8_t> arrived);
  bson::validate_options options_;  // for a batch document: three levels below the body
  bool usable_;
  bool in_batch_ = false;
  std::size_t first_ = 0;       // the batch's first element
  std::size_t next_ = 0;        // the first element not yet validated
  std::size_t batch_term_ = 0;  // the batch's terminating NUL
  // The documents of the elements in [first_, next_): where each document (its length prefix)
  // is and its size. The first 16 in first_docs_, all of them in index_ once there are more.
  void record(bson::detail::doc_span d);
  std::array<bson::detail::doc_span, 16> first_docs_;
  std::uint32_t first_count_ = 0;
  doc_index index_;
};

/// decode_op_msg(bytes, limits), the elements in `checked` taken as validated.
result<op_msg> decode_op_msg(std::span<const std::uint8_t> bytes, const op_msg_limits& limits,
                             checked_batch checked);

}  // namespace oid::mongo::detail
