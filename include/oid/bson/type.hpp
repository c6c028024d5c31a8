// oid/bson/type.hpp: the BSON element types and the binary subtypes.
//
// `oid::bson::type` names every type byte of the BSON specification (bsonspec.org, 1.1), including
// the deprecated ones (undefined, DBPointer, symbol, code with scope) that old data still holds, so
// that any valid document can be read and written back byte for byte. `binary_subtype` names the
// subtype byte of a binary value.
#pragma once

#include <cstdint>
#include <string_view>

namespace oid::bson {

/// The type byte of a BSON element. Any other byte value is not BSON (`errc::unknown_type`).
enum class type : std::uint8_t {
  double_ = 0x01,                ///< IEEE 754 binary64, little-endian
  string = 0x02,                 ///< int32 length (with NUL), UTF-8 bytes, NUL
  document = 0x03,               ///< an embedded document
  array = 0x04,                  ///< an embedded document whose keys are "0", "1", ...
  binary = 0x05,                 ///< int32 length, subtype byte, bytes
  undefined = 0x06,              ///< deprecated; no value bytes
  object_id = 0x07,              ///< 12 bytes
  boolean = 0x08,                ///< one byte, 0 or 1
  date_time = 0x09,              ///< int64 milliseconds since the Unix epoch, UTC
  null = 0x0A,                   ///< no value bytes
  regex = 0x0B,                  ///< two C strings: pattern, options
  db_pointer = 0x0C,             ///< deprecated; a string and 12 ObjectId bytes
  javascript = 0x0D,             ///< JavaScript code, stored as a string
  symbol = 0x0E,                 ///< deprecated; stored as a string
  javascript_with_scope = 0x0F,  ///< deprecated; int32 total length, string, document
  int32 = 0x10,                  ///< little-endian
  timestamp = 0x11,              ///< uint64: increment in the low 32 bits, seconds in the high
  int64 = 0x12,                  ///< little-endian
  decimal128 = 0x13,             ///< IEEE 754-2008 decimal128, BID encoding, 16 bytes
  min_key = 0xFF,                ///< compares below every other value; no value bytes
  max_key = 0x7F,                ///< compares above every other value; no value bytes
};

/// The type's name as the BSON specification writes it in lower case: "double", "string",
/// "document", "array", "binary", "undefined", "objectId", "bool", "date", "null", "regex",
/// "dbPointer", "javascript", "symbol", "javascriptWithScope", "int", "timestamp", "long",
/// "decimal", "minKey", "maxKey" (MongoDB's `$type` aliases); "unknown" for any other byte.
std::string_view to_string(type t) noexcept;

/// True when `byte` is one of the type bytes above.
constexpr bool is_known_type(std::uint8_t byte) noexcept {
  return (byte >= 0x01 && byte <= 0x13) || byte == 0x7F || byte == 0xFF;
}

/// The subtype byte of a binary value (BSON specification, "binary").
namespace binary_subtype {
inline constexpr std::uint8_t generic = 0x00;   ///< arbitrary bytes
inline constexpr std::uint8_t function = 0x01;  ///< a function
inline constexpr std::uint8_t old_binary =
    0x02;  ///< deprecated; its bytes start with an int32 length
inline constexpr std::uint8_t old_uuid = 0x03;   ///< deprecated UUID, driver-specific byte order
inline constexpr std::uint8_t uuid = 0x04;       ///< RFC 4122 UUID, 16 bytes
inline constexpr std::uint8_t md5 = 0x05;        ///< an MD5 digest
inline constexpr std::uint8_t encrypted = 0x06;  ///< client-side field-level encryption payload
inline constexpr std::uint8_t column = 0x07;     ///< compressed time-series column
inline constexpr std::uint8_t sensitive = 0x08;  ///< sensitive data, kept out of logs
inline constexpr std::uint8_t vector = 0x09;     ///< a binary vector (oid/bson/vector.hpp)
inline constexpr std::uint8_t user_min = 0x80;   ///< first of the user-defined subtypes 0x80-0xFF
}  // namespace binary_subtype

}  // namespace oid::bson
