// A cursor reply's documents checked while the rest of the reply is still arriving.
//
// A getMore reply holds up to 16 MB of documents, which arrive in pieces of up to 1 MiB (see
// connection::read_exact). Every document is validated before the first one reaches the
// application (the reply is untrusted input), and validating them only after the last piece has
// arrived adds that time to the transfer's. batch_check validates the batch's whole documents in
// each piece as it comes, while the server is still sending the next, and decode_op_msg then
// skips them: the same checks, the same result, the same error at the same offset, sooner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/validate.hpp>
#include <oid/mongo/op_msg.hpp>
#include <span>

namespace oid::mongo::detail {

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
  explicit batch_check(const op_msg_limits& limits = {});
  /// `arrived` is the message's first bytes, the same bytes each time and more of them than the
  /// time before (the buffer may have moved: only offsets are kept): validates the batch's
  /// documents that have arrived whole.
  void advance(std::span<const std::uint8_t> arrived);
  checked_batch checked() const noexcept;

 private:
  bool find_batch(std::span<const std::uint8_t> arrived);
  bson::validate_options options_;  // for a batch document: three levels below the body
  bool usable_;
  bool in_batch_ = false;
  std::size_t first_ = 0;       // the batch's first element
  std::size_t next_ = 0;        // the first element not yet validated
  std::size_t batch_term_ = 0;  // the batch's terminating NUL
};

/// decode_op_msg(bytes, limits), the elements in `checked` taken as validated.
result<op_msg> decode_op_msg(std::span<const std::uint8_t> bytes, const op_msg_limits& limits,
                             checked_batch checked);

}  // namespace oid::mongo::detail
