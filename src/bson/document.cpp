#include <oid/bson/document.hpp>

namespace oid::bson {

result<document> document::from_bytes(std::span<const std::uint8_t> bytes,
                                      const validate_options& options) {
  auto v = validate(bytes, options);
  if (!v) return v.error();
  return document(*v);
}

result<document> document::from_bytes(std::vector<std::uint8_t>&& bytes,
                                      const validate_options& options) {
  auto v = validate(bytes, options);
  if (!v) return v.error();
  bytes.resize(v->size());
  return document(trusted{}, std::move(bytes));
}

}  // namespace oid::bson
