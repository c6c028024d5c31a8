#include <oid/objectid/id64.hpp>

#include "detail/hex.hpp"

namespace oid {

// ---- Text ----------------------------------------------------------------------------------

result<id64> id64::from_decimal(std::string_view text) noexcept {
  if (text.empty() || text.size() > max_decimal_size) return error{errc::invalid_length, 0};
  if (text[0] == '0' && text.size() > 1) return error{errc::invalid_decimal, 0};
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(text[i]) - unsigned{'0'};
    if (d > 9) return error{errc::invalid_decimal, i};
    if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
      return error{errc::invalid_decimal, i};
    }
  }
  return id64(v);
}

result<id64> id64::from_hex(std::string_view text) noexcept {
  if (text.size() != hex_size) return error{errc::invalid_length, 0};
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < hex_size; ++i) {
    const int d = detail::hex_value(text[i]);
    if (d < 0) return error{errc::invalid_hex, i};
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  return id64(v);
}

result<id64> id64::parse(std::string_view text) noexcept {
  return text.size() == hex_size ? from_hex(text) : from_decimal(text);
}

char* id64::to_decimal(char* out) const noexcept {
  char buf[max_decimal_size];
  char* p = buf + max_decimal_size;
  std::uint64_t v = value_;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (; p != buf + max_decimal_size; ++p) *out++ = *p;
  return out;
}

std::string id64::to_decimal() const {
  char buf[max_decimal_size];
  return std::string(buf, to_decimal(buf));
}

char* id64::to_hex(char* out) const noexcept {
  for (int i = 7; i >= 0; --i) {
    const auto byte = static_cast<std::uint8_t>(value_ >> (8 * i));
    *out++ = detail::hex_pairs[2 * byte];
    *out++ = detail::hex_pairs[2 * byte + 1];
  }
  return out;
}

std::string id64::to_hex() const {
  std::string s(hex_size, '\0');
  to_hex(s.data());
  return s;
}

// ---- Layouts -------------------------------------------------------------------------------

result<id64_layout> id64_layout::from_name(std::string_view name) noexcept {
  for (const auto& l : {compact64(), snowflake(), sonyflake()}) {
    if (l.name == name) return l;
  }
  return error{errc::invalid_value, 0};
}

result<std::uint64_t> id64_layout::units_at(sys_milliseconds t) const noexcept {
  const std::int64_t ms = t.time_since_epoch().count();
  // Compared before subtracting, so that no time can overflow the difference.
  if (ms < epoch_ms) return error{errc::time_out_of_range, 0};
  const std::uint64_t since = static_cast<std::uint64_t>(ms) - static_cast<std::uint64_t>(epoch_ms);
  const std::uint64_t units = since / static_cast<std::uint64_t>(unit_ms);
  if (units > time.max()) return error{errc::time_out_of_range, 0};
  return units;
}

result<void> id64_layout::check_machine(std::uint64_t machine_id) const noexcept {
  if (machine_id > machine.max()) return error{errc::machine_id_out_of_range, 0};
  return {};
}

result<id64> id64_layout::make(std::uint64_t units, std::uint32_t machine_id,
                               std::uint32_t count) const noexcept {
  if (units > time.max()) return error{errc::time_out_of_range, 0};
  if (const auto m = check_machine(machine_id); !m) return m.error();
  if (count > counter.max()) return error{errc::invalid_value, 0};
  return id64(units << time.shift | std::uint64_t{machine_id} << machine.shift |
              std::uint64_t{count} << counter.shift);
}

result<id64_fields> id64_layout::decode(id64 id) const noexcept {
  const std::uint64_t v = id.value();
  if ((v & ~used_bits()) != 0) return error{errc::invalid_value, 0};
  id64_fields f;
  f.units = time.get(v);
  f.time = first_time() + std::chrono::milliseconds{static_cast<std::int64_t>(f.units) * unit_ms};
  f.machine = static_cast<std::uint32_t>(machine.get(v));
  f.counter = static_cast<std::uint32_t>(counter.get(v));
  return f;
}

result<id64> id64_layout::min_for_time(sys_milliseconds t) const noexcept {
  const auto units = units_at(t);
  if (!units) return units.error();
  return id64(*units << time.shift);
}

result<id64> id64_layout::max_for_time(sys_milliseconds t) const noexcept {
  const auto units = units_at(t);
  if (!units) return units.error();
  return id64(*units << time.shift | machine.mask() | counter.mask());
}

}  // namespace oid
