// Property: any text either fails to parse with an offset inside it, or parses to an id whose
// written form parses back to the same id (and equals the input up to hex case).
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto id = oid::object_id::parse(text);
  if (!id) {
    if (id.error().code != oid::errc::invalid_length && id.error().offset >= size) std::abort();
  } else {
    const auto hex = id->to_hex();
    const auto b64 = id->to_base64();
    if (oid::object_id::from_hex(hex).value() != *id) std::abort();
    if (oid::object_id::from_base64(b64).value() != *id) std::abort();
    if (size == 16 && text != b64) std::abort();
    if (size == 24) {
      for (std::size_t i = 0; i < 24; ++i) {
        if (std::tolower(static_cast<unsigned char>(text[i])) != hex[i]) std::abort();
      }
    }
  }
  const auto t = oid::parse_time(text);
  if (!t && t.error().code == oid::errc::invalid_time && t.error().offset > size) std::abort();
  return 0;
}
