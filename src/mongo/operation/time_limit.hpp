// The time limit of one operation under MongoDB's client-side operations timeout specification
// (timeoutMS): one deadline for server selection, connection checkout and opening, every read and
// write, and the retries. An operation without one (timeoutMS unset at every level) keeps the
// legacy timeouts: serverSelectionTimeoutMS, waitQueueTimeoutMS, socketTimeoutMS.
#pragma once

#include <algorithm>
#include <chrono>
#include <oid/mongo/outcome.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace oid::mongo::detail {

struct time_limit {
  using clock = std::chrono::steady_clock;

  // The limit `timeout` gives from now: none when it is unset, no deadline for 0 (no limit, but
  // still the specification's behaviour: legacy timeouts ignored, errors are timeouts).
  static std::optional<time_limit> from(std::optional<std::chrono::milliseconds> timeout) {
    if (!timeout) return std::nullopt;
    time_limit l;
    l.timeout = *timeout;
    l.deadline = timeout->count() <= 0 ? clock::time_point::max() : clock::now() + *timeout;
    return l;
  }

  bool unlimited() const noexcept { return deadline == clock::time_point::max(); }
  bool expired() const noexcept { return !unlimited() && clock::now() >= deadline; }
  // What is left, never negative (a large value when unlimited).
  std::chrono::milliseconds remaining() const noexcept {
    if (unlimited()) return std::chrono::milliseconds::max();
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()));
  }
  // The earlier of the deadline and `other`.
  clock::time_point cap(clock::time_point other) const noexcept {
    return std::min(deadline, other);
  }

  // The timeout error of this limit: what ran out of time (`stage`), the limit, and the error
  // underneath when there is one (the specification wants it in the message).
  failure expired_in(std::string_view stage, std::string_view underlying = {}) const {
    std::string m = "operation timed out (timeoutMS " + std::to_string(timeout.count()) +
                    " ms) during " + std::string(stage);
    if (!underlying.empty()) m += ": " + std::string(underlying);
    return failure(errc::timeout, std::move(m));
  }

  std::chrono::milliseconds timeout{0};  // as given; 0: no limit
  clock::time_point deadline = clock::time_point::max();
};

// The limit of an operation: its own timeoutMS when `asked`, else its handle's `inherited`.
inline std::optional<time_limit> limit_of(
    const std::optional<std::chrono::milliseconds>& asked,
    const std::optional<std::chrono::milliseconds>& inherited) {
  return time_limit::from(asked ? asked : inherited);
}

}  // namespace oid::mongo::detail
