// Property: decode_op_msg never crashes and never reads outside the input; an error's offset lies
// inside the input (or at its end); a decoded message encodes back to exactly the same bytes.
// Re-encoding is exact because the decoder keeps everything the wire holds: request and response
// ids, all 32 flag bits (unknown optional ones included), the kind-0 section's position among the
// kind-1 sections, every identifier and document byte for byte, and the checksum, which encode
// recomputes and decode has already checked.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oid/mongo/op_msg.hpp>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
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
