// Property: any text either fails to parse with an offset inside it, or parses to an id whose
// written forms parse back to the same id, and whose decimal form is the input itself (strict
// parsing: one spelling per value) or whose hex form is the input up to case. Every id a layout
// decodes re-encodes to itself.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <oid/objectid/id64.hpp>
#include <string_view>

namespace {

/// True when `id` holds an id; otherwise checks that the error's offset lies inside `text`.
bool parsed(const oid::result<oid::id64>& id, std::string_view text) {
  if (id) return true;
  if (id.error().code != oid::errc::invalid_length && id.error().offset >= text.size()) {
    std::abort();
  }
  return false;
}

void check_decimal(std::string_view text) {
  const auto id = oid::id64::from_decimal(text);
  if (!parsed(id, text)) return;
  if (id->to_decimal() != text) std::abort();
  if (oid::id64::from_hex(id->to_hex()).value() != *id) std::abort();
}

void check_hex(std::string_view text) {
  const auto id = oid::id64::from_hex(text);
  if (!parsed(id, text)) return;
  const std::string hex = id->to_hex();
  for (std::size_t i = 0; i < hex.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != hex[i]) std::abort();
  }
  if (oid::id64::from_decimal(id->to_decimal()).value() != *id) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_decimal(text);
  check_hex(text);
  const auto id = oid::id64::parse(text);
  if (id) {
    for (const auto& layout : {oid::id64_layout::compact64(), oid::id64_layout::snowflake(),
                               oid::id64_layout::sonyflake()}) {
      const auto f = layout.decode(*id);
      if (!f) {
        if ((id->value() & ~layout.used_bits()) == 0) std::abort();
        continue;
      }
      if (layout.make(f->units, f->machine, f->counter).value() != *id) std::abort();
      const auto lo = layout.min_for_time(f->time), hi = layout.max_for_time(f->time);
      if (lo.value() > *id || hi.value() < *id) std::abort();
    }
  }
  return 0;
}
