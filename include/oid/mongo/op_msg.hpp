// oid/mongo/op_msg.hpp: MongoDB's OP_MSG wire message, encoded and decoded without I/O.
//
// Every command and reply since MongoDB 3.6 travels as an OP_MSG (opCode 2013): a 16-byte header
// (messageLength, requestID, responseTo, opCode, all little-endian int32), a uint32 of flag bits,
// then sections: exactly one kind-0 section (the command or reply document) and any number of
// kind-1 sections (a document sequence under an identifier such as "documents", which is how an
// insert sends its batch without nesting it in the command), and, when the checksumPresent bit is
// set, a CRC-32C of everything before it.
//
// `decode_op_msg` is the only door from socket bytes to a message: it checks the header, rejects
// unknown required flag bits (0-15), checks the checksum, and validates every document with
// `bson::validate`. The result's documents are views into the bytes given, valid while they are.
// `encode_op_msg` is its inverse: decoding a message and encoding the result gives the same bytes.
//
//     oid::mongo::op_msg msg;
//     msg.request_id = 7;
//     msg.body = command.view();                       // {ping: 1, $db: "admin"}
//     auto bytes = oid::mongo::encode_op_msg(msg);     // result<std::vector<std::uint8_t>>
//     auto reply = oid::mongo::decode_op_msg(received);  // result<op_msg>
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/view.hpp>
#include <oid/result.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace oid::mongo {

/// OP_MSG's opCode.
inline constexpr std::int32_t op_msg_opcode = 2013;
/// Bytes in the standard message header.
inline constexpr std::size_t message_header_size = 16;

/// The OP_MSG flag bits.
namespace op_msg_flags {
/// Bit 0: the message ends with a CRC-32C of all bytes before it.
inline constexpr std::uint32_t checksum_present = 1u << 0;
/// Bit 1: another message follows without a request; a request with it set gets no reply.
inline constexpr std::uint32_t more_to_come = 1u << 1;
/// Bit 16: the client accepts replies with moreToCome (exhaust cursors).
inline constexpr std::uint32_t exhaust_allowed = 1u << 16;
/// The required bits (0-15) oid understands; any other required bit is an error.
inline constexpr std::uint32_t known_required = checksum_present | more_to_come;
}  // namespace op_msg_flags

/// The standard header every wire message starts with.
struct message_header {
  std::int32_t message_length = 0;  ///< total bytes, header included
  std::int32_t request_id = 0;      ///< the sender's id for this message
  std::int32_t response_to = 0;     ///< the request_id this replies to (0 in requests)
  std::int32_t op_code = 0;         ///< 2013 for OP_MSG
  friend bool operator==(const message_header&, const message_header&) = default;
};

/// A kind-1 section: documents sent side by side under one identifier (the command's field they
/// stand for, e.g. "documents" for insert, "updates" for update).
struct document_sequence {
  std::string_view identifier;                 ///< a C string: no NUL inside
  std::vector<bson::document_view> documents;  ///< the documents, in order
};

/// An OP_MSG. Decoded messages view the bytes they came from; to encode, point the views at
/// documents that outlive the call.
struct op_msg {
  std::int32_t request_id = 0;   ///< the header's requestID
  std::int32_t response_to = 0;  ///< the header's responseTo
  std::uint32_t flags = 0;       ///< see op_msg_flags; checksum_present makes encode add a CRC
  bson::document_view body;      ///< the kind-0 section: the command or the reply
  std::vector<document_sequence> sequences;  ///< the kind-1 sections, in order
  /// How many kind-1 sections come before the kind-0 one on the wire (0 when encoding a request:
  /// the body goes first). Kept so that a decoded message encodes back to the same bytes.
  std::size_t body_position = 0;
};

/// Limits `decode_op_msg` applies to what it reads.
struct op_msg_limits {
  /// The largest message accepted (MongoDB's default maxMessageSizeBytes).
  std::size_t max_message_size = 48'000'000;
  /// The largest document accepted in any section. The server's maxBsonObjectSize is 16 MiB; its
  /// replies may exceed it by the 16 KiB it allows for command overhead.
  std::size_t max_document_size = 16 * 1024 * 1024 + 16 * 1024;
};

/// CRC-32C (Castagnoli) of `bytes`, as OP_MSG's checksum uses it. O(size); never throws.
std::uint32_t crc32c(std::span<const std::uint8_t> bytes) noexcept;

/// Reads the 16-byte header at the front of `bytes` without checking the rest. Errors:
/// truncated (fewer than 16 bytes, offset 0); bad_length_prefix (messageLength below 16 or above
/// `limits.max_message_size`, offset 0). A connection uses it to learn how much more to read.
result<message_header> decode_header(std::span<const std::uint8_t> bytes,
                                     const op_msg_limits& limits = {}) noexcept;

/// Encodes `msg`: header (messageLength computed; opCode 2013), flags, the body after
/// `msg.body_position` sequences, the sequences, and the CRC-32C when `msg.flags` has
/// checksum_present. Errors: too_large when the message would exceed 2^31-1 bytes (offset 0);
/// invalid_key when a sequence identifier holds a NUL (offset: its index in `msg.sequences`);
/// invalid_message when `body_position` exceeds the number of sequences. O(size).
result<std::vector<std::uint8_t>> encode_op_msg(const op_msg& msg);

/// Decodes one whole message: `bytes` must be exactly the message (messageLength bytes). Errors,
/// with the absolute offset in `bytes` of what is wrong:
///   truncated          fewer bytes than the header needs or than messageLength says (offset 0)
///   trailing_bytes     more bytes than messageLength says (offset messageLength)
///   bad_length_prefix  messageLength too small for an OP_MSG, above `limits.max_message_size`,
///                      (offset 0); a kind-1 size below its minimum or past the sections' end
///                      (offset of the size)
///   invalid_message    an opCode other than 2013 (offset 12); an unknown required flag bit
///                      (offset 16); an unknown section kind (offset of the kind byte); no kind-0
///                      section (offset of the sections' end) or a second one (its kind byte)
///   checksum_mismatch  checksumPresent and the CRC-32C differs (offset of the checksum)
///   missing_terminator a kind-1 identifier without its NUL (offset of the identifier)
///   any bson::validate error in a section's document, offset made absolute; a document that
///   runs past its section is bad_length_prefix at its length
/// Documents are validated with UTF-8 checks and `limits.max_document_size`. O(size).
result<op_msg> decode_op_msg(std::span<const std::uint8_t> bytes, const op_msg_limits& limits = {});

}  // namespace oid::mongo
