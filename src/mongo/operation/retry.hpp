// Which failures an operation may retry once, on a newly selected server, as the retryable
// writes and retryable reads specifications say: network errors, and the errors of a server that
// stepped down or is shutting down.
#pragma once

#include <oid/mongo/failure.hpp>

namespace oid::mongo::detail {

/// The label a retryable write error carries ("RetryableWriteError").
inline constexpr const char* retryable_write_label = "RetryableWriteError";
/// The label of an error a new attempt of the whole transaction may not meet.
inline constexpr const char* transient_transaction_label = "TransientTransactionError";
/// The label of a commit whose outcome the client cannot know.
inline constexpr const char* unknown_commit_label = "UnknownTransactionCommitResult";

/// MaxTimeMSExpired (50) anywhere in a failure: the command's own error, a write error or the
/// write concern error.
bool is_max_time_expired(const failure& f) noexcept;

/// True for a transport failure: the connection could not be used (connection_failed,
/// connection_closed, timeout). A failure to *select* a server is not one: pass only failures
/// that came from a connection.
bool is_network_failure(const failure& f) noexcept;

/// True when the server error code is one of those the specifications list as retryable:
/// InterruptedAtShutdown, InterruptedDueToReplStateChange, NotWritablePrimary,
/// NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, PrimarySteppedDown, ShutdownInProgress,
/// HostNotFound, HostUnreachable, NetworkTimeout, SocketException, ExceededTimeLimit.
bool is_retryable_code(std::int32_t code) noexcept;

/// Adds "RetryableWriteError" to `f.labels` where the client must: network failures always;
/// for servers before 4.4 (wire version < 9), which do not label their errors, a retryable code
/// in the reply (not in one of its writeErrors) or in its write concern error. Servers from 4.4 on
/// label their own errors.
void add_retryable_write_label(failure& f, int max_wire_version);

/// True when a write that failed with `f` (labelled by `add_retryable_write_label`) may be
/// retried once.
inline bool is_retryable_write_failure(const failure& f) noexcept {
  return f.has_label(retryable_write_label);
}

/// True when a read that failed with `f` may be retried once: a network failure, or a retryable
/// code (also ReadConcernMajorityNotAvailableYet, 134).
bool is_retryable_read_failure(const failure& f) noexcept;

}  // namespace oid::mongo::detail
