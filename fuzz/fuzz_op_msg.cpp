// Property: decode_op_msg never crashes and never reads outside the input; an error's offset lies
// inside the input (or at its end); a decoded message encodes back to exactly the same bytes.
// Re-encoding is exact because the decoder keeps everything the wire holds: request and response
// ids, all 32 flag bits (unknown optional ones included), the kind-0 section's position among the
// kind-1 sections, every identifier and document byte for byte, and the checksum, which encode
// recomputes and decode has already checked.
// Property: checking a cursor batch's documents as the message arrives in pieces (batch_check,
// as a connection does) changes nothing: decoding with the checked documents skipped gives the
// same message, or the same error at the same offset, as decoding without.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oid/mongo/op_msg.hpp>
#include <span>

#include "mongo/wire/batch_check.hpp"

namespace {

void check_in_pieces(std::span<const std::uint8_t> input, std::size_t piece) {
  oid::mongo::detail::batch_check check;
  for (std::size_t got = std::min(piece, input.size());;
       got = std::min(got + piece, input.size())) {
    check.advance(input.first(got));
    if (got == input.size()) break;
  }
  const auto plain = oid::mongo::decode_op_msg(input);
  const auto checked = oid::mongo::detail::decode_op_msg(input, {}, check.checked());
  if (plain.has_value() != checked.has_value()) std::abort();
  if (plain) {
    if (plain->body != checked->body) std::abort();
  } else if (plain.error().code != checked.error().code ||
             plain.error().offset != checked.error().offset) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  check_in_pieces(input, 1 + size % 61);
  check_in_pieces(input, size);
  const auto msg = oid::mongo::decode_op_msg(input);
  if (!msg) {
    if (msg.error().offset > size) std::abort();
    return 0;
  }
  // Walk every document so that sanitizers see any out-of-bounds view.
  std::size_t elements = 0;
  for (const auto& e : msg->body) elements += e.key().size();
  for (const auto& seq : msg->sequences) {
    for (const auto& doc : seq.documents) {
      for (const auto& e : doc) elements += e.raw().size();
    }
  }
  (void)elements;
  const auto again = oid::mongo::encode_op_msg(*msg);
  if (!again || again->size() != size || std::memcmp(again->data(), data, size) != 0) std::abort();
  return 0;
}
