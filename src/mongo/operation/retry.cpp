#include "mongo/operation/retry.hpp"

#include <algorithm>
#include <array>
#include <oid/mongo/server_codes.hpp>

namespace oid::mongo::detail {

namespace {

// From the retryable writes specification; the retryable reads list adds 134.
constexpr std::array<std::int32_t, 12> retryable_codes = {
    server_code::interrupted_at_shutdown,  server_code::interrupted_due_to_repl_state_change,
    server_code::not_writable_primary,     server_code::not_primary_no_secondary_ok,
    server_code::not_primary_or_secondary, server_code::primary_stepped_down,
    server_code::shutdown_in_progress,     server_code::host_not_found,
    server_code::host_unreachable,         server_code::network_timeout,
    server_code::socket_exception,         server_code::exceeded_time_limit,
};

}  // namespace

bool is_network_failure(const failure& f) noexcept {
  return f.code == errc::connection_failed || f.code == errc::connection_closed ||
         f.code == errc::timeout;
}

bool is_retryable_code(std::int32_t code) noexcept {
  return std::find(retryable_codes.begin(), retryable_codes.end(), code) != retryable_codes.end();
}

void add_retryable_write_label(failure& f, int max_wire_version) {
  if (f.has_label(retryable_write_label)) return;
  bool retryable = is_network_failure(f);
  if (!retryable && max_wire_version < 9) {
    // A writeErrors entry is about a document, never about the server's state: only a refused
    // command (ok: 0) or its write concern error counts.
    retryable = (f.server && f.write_errors.empty() && is_retryable_code(f.server->code)) ||
                (f.write_concern_error && is_retryable_code(f.write_concern_error->code));
  }
  if (retryable) f.labels.emplace_back(retryable_write_label);
}

bool is_retryable_read_failure(const failure& f) noexcept {
  if (is_network_failure(f)) return true;
  if (!f.server) return false;
  return is_retryable_code(f.server->code) ||
         f.server->code == server_code::read_concern_majority_not_available_yet;
}

bool is_max_time_expired(const failure& f) noexcept {
  const auto expired = [](const server_error& e) {
    return e.code == server_code::max_time_ms_expired;
  };
  return (f.server && expired(*f.server)) ||
         std::any_of(f.write_errors.begin(), f.write_errors.end(), expired) ||
         (f.write_concern_error && expired(*f.write_concern_error));
}

}  // namespace oid::mongo::detail
