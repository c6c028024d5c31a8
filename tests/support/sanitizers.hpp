// What the tests know about the sanitizer they run under.
#pragma once

namespace oid::testing {

// ThreadSanitizer slows contended code down by 20-100x: stress tests divide their work by this
// under TSan, where they are there to find races rather than to show scale.
#if defined(__SANITIZE_THREAD__)
inline constexpr int stress_divisor = 50;
#else
inline constexpr int stress_divisor = 1;
#endif

}  // namespace oid::testing
