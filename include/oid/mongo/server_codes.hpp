// oid/mongo/server_codes.hpp: the server error codes the client acts on, each named once.
//
// The numbers are the server's (MongoDB's error_codes.yml, as the driver specifications cite
// them); `failure::server->code` and `server_error::code` hold them. The client's own rules read
// these names: which errors mark a server Unknown (the SDAM state machine), which are retried (the
// retryable reads and writes specifications), which insert is a duplicate key.
//
//     if (e.code == oid::mongo::server_code::duplicate_key) ...
#pragma once

#include <cstdint>

namespace oid::mongo::server_code {

inline constexpr std::int32_t bad_value = 2;
inline constexpr std::int32_t host_unreachable = 6;
inline constexpr std::int32_t host_not_found = 7;
inline constexpr std::int32_t failed_to_parse = 9;
inline constexpr std::int32_t illegal_operation = 20;
inline constexpr std::int32_t namespace_not_found = 26;
inline constexpr std::int32_t namespace_exists = 48;
inline constexpr std::int32_t max_time_ms_expired = 50;
inline constexpr std::int32_t command_not_found = 59;
inline constexpr std::int32_t unknown_repl_write_concern = 79;
inline constexpr std::int32_t network_timeout = 89;
inline constexpr std::int32_t shutdown_in_progress = 91;
inline constexpr std::int32_t unsatisfiable_write_concern = 100;
inline constexpr std::int32_t read_concern_majority_not_available_yet = 134;
inline constexpr std::int32_t primary_stepped_down = 189;
inline constexpr std::int32_t exceeded_time_limit = 262;
inline constexpr std::int32_t socket_exception = 9001;
inline constexpr std::int32_t legacy_not_primary = 10058;
inline constexpr std::int32_t not_writable_primary = 10107;
inline constexpr std::int32_t duplicate_key = 11000;
inline constexpr std::int32_t interrupted_at_shutdown = 11600;
inline constexpr std::int32_t interrupted_due_to_repl_state_change = 11602;
inline constexpr std::int32_t not_primary_no_secondary_ok = 13435;
inline constexpr std::int32_t not_primary_or_secondary = 13436;

}  // namespace oid::mongo::server_code
