// A BSON document's bytes as a vector, for tests that compare them, change them or keep them
// past the builder or document they came from.
#pragma once

#include <cstdint>
#include <oid/bson/view.hpp>
#include <vector>

namespace oid::testing {

/// A copy of the bytes `v` views.
inline std::vector<std::uint8_t> bytes_of(bson::document_view v) {
  return {v.data(), v.data() + v.size()};
}

}  // namespace oid::testing
