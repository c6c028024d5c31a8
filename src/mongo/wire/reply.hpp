// Reading fields of server replies, which come in whatever numeric type the server chose.
#pragma once

#include <cstdint>
#include <oid/bson/view.hpp>
#include <oid/mongo/failure.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo::detail {

/// The element's value as an integer when it is an int32, int64 or a whole double.
std::optional<std::int64_t> as_integer(const bson::element& e) noexcept;
/// An integer field of `doc`, or `fallback` when absent or not a number (clamped to int32).
std::int32_t int_field(bson::document_view doc, std::string_view key, std::int32_t fallback);
/// The largest logicalSessionTimeoutMinutes taken from a server (about 694 days); a larger value
/// counts as this one. MongoDB's default is 30; the bound keeps the time arithmetic of the
/// session pool (nanoseconds in an int64) from overflowing.
inline constexpr std::int64_t max_session_timeout_minutes = 1'000'000;
/// The `logicalSessionTimeoutMinutes` of a hello reply, at most max_session_timeout_minutes; unset
/// when absent, not an integer, zero or negative (the server counts as one without sessions).
std::optional<std::int64_t> session_timeout_minutes(bson::document_view hello);
/// An int64 field, or `fallback`.
std::int64_t int64_field(bson::document_view doc, std::string_view key, std::int64_t fallback);
/// A boolean field (numbers count as true when non-zero), or `fallback`.
bool bool_field(bson::document_view doc, std::string_view key, bool fallback);
/// A string field, or "" when absent or not a string.
std::string string_field(bson::document_view doc, std::string_view key);
/// True when the reply says `ok: 1` (in any numeric type, or true).
bool is_ok(bson::document_view reply);
/// The error of an `ok: 0` reply or of one `writeErrors` entry: code, codeName, errmsg, index,
/// keyPattern, keyValue, and the index name taken from the message.
server_error server_error_of(bson::document_view doc);
/// The reply's `errorLabels` (none when absent).
std::vector<std::string> error_labels_of(bson::document_view reply);
/// The failure an `ok: 0` reply stands for: duplicate_key for 11000, server_error otherwise;
/// with the reply's `errorLabels`.
failure failure_of(bson::document_view reply, std::string_view what);

}  // namespace oid::mongo::detail
