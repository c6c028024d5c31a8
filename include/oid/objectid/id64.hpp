// oid/objectid/id64.hpp: 64-bit ids (one BIGINT column) and the layouts that give their bits a
// meaning.
//
// `oid::id64` is the 64-bit value: ordered, hashable, written as decimal (how these ids are usually
// shown) or as 16 hex digits. `oid::id64_layout` says what the bits mean; three are named:
//
//   layout       bits (high to low)                         unit    epoch (time 0)
//   compact64    32 time | 8 machine | 24 counter           1 s     1970-01-01T00:00:00Z
//   snowflake    1 zero | 41 time | 10 worker | 12 sequence  1 ms    2010-11-04T01:42:54.657Z
//   sonyflake    1 zero | 39 time | 8 sequence | 16 machine  10 ms   2014-09-01T00:00:00Z
//
// compact64 is the "simple version" of an ObjectId that write-ups pack into one integer
// (`seconds << 32 | machine << 24 | counter`); its ids pass 2^63 (a signed BIGINT's limit) on
// 2038-01-19. Snowflake's epoch is Twitter's and may be set to another; Sonyflake's likewise. In
// every layout the time is the highest field, so numeric order is creation order to the unit, and
// `min_for_time`/`max_for_time` bound a range query as they do for ObjectIds.
//
// Making ids is the job of oid/objectid/id64_generator.hpp: these layouts have too few machine bits
// for a random machine id (docs/uniqueness.md), so the generator requires an assigned one.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <oid/result.hpp>
#include <string>
#include <string_view>

namespace oid {

/// Unix time in milliseconds: the clock of the 64-bit layouts.
using sys_milliseconds = std::chrono::sys_time<std::chrono::milliseconds>;

/// A 64-bit id: an unsigned integer, ordered numerically. What its bits mean is an `id64_layout`'s
/// business.
///
///     auto id = oid::id64::parse("1541815603606036480");
///     auto f = oid::id64_layout::snowflake().decode(*id);  // f->time, f->machine, f->counter
class id64 {
 public:
  static constexpr std::size_t hex_size = 16;          ///< characters in the hex form
  static constexpr std::size_t max_decimal_size = 20;  ///< characters of 2^64 - 1 in decimal

  /// The id 0.
  constexpr id64() noexcept = default;
  /// The id with this value.
  constexpr explicit id64(std::uint64_t value) noexcept : value_(value) {}

  /// Parses 1 to 20 decimal digits, no sign, no leading zero (except "0" itself), at most
  /// 18446744073709551615. Errors: `invalid_length` (empty or over 20 characters, offset 0),
  /// `invalid_decimal` (offset of the first character that is not a digit, of a leading zero, or
  /// of the digit that takes the value past 2^64 - 1). Never throws, never allocates.
  static result<id64> from_decimal(std::string_view text) noexcept;
  /// Parses exactly 16 hex digits, either case. Errors: `invalid_length` (offset 0), `invalid_hex`
  /// (offset of the first bad character).
  static result<id64> from_hex(std::string_view text) noexcept;
  /// Either form: 16 characters are hex (the fixed-width form `to_hex` writes), any other length
  /// decimal. A decimal id of exactly 16 digits (made in the first weeks after a layout's epoch)
  /// must go through `from_decimal`. Errors as the two above.
  static result<id64> parse(std::string_view text) noexcept;

  /// The value.
  constexpr std::uint64_t value() const noexcept { return value_; }
  /// Decimal, without leading zeros.
  std::string to_decimal() const;
  /// Writes the decimal form at `out` (no terminator; at most 20 characters) and returns its end.
  char* to_decimal(char* out) const noexcept;
  /// 16 lowercase hex digits.
  std::string to_hex() const;
  /// Writes 16 lowercase hex digits at `out` (no terminator) and returns `out + 16`.
  char* to_hex(char* out) const noexcept;

  friend constexpr auto operator<=>(const id64&, const id64&) noexcept = default;

 private:
  std::uint64_t value_ = 0;
};

/// One field of a layout: `width` bits starting at bit `shift` (0: the lowest bit).
struct id64_field {
  unsigned shift = 0;
  unsigned width = 0;
  /// The largest value the field holds: 2^width - 1.
  constexpr std::uint64_t max() const noexcept { return (std::uint64_t{1} << width) - 1; }
  /// The field's bits in place.
  constexpr std::uint64_t mask() const noexcept { return max() << shift; }
  /// The field's value in `v`.
  constexpr std::uint64_t get(std::uint64_t v) const noexcept { return (v >> shift) & max(); }
  friend constexpr bool operator==(const id64_field&, const id64_field&) noexcept = default;
};

/// What `id64_layout::decode` reads from an id.
struct id64_fields {
  std::uint64_t units = 0;  ///< the time field: units since the epoch
  sys_milliseconds time;    ///< the start of that unit, as Unix time
  std::uint32_t machine = 0;
  std::uint32_t counter = 0;
  friend bool operator==(const id64_fields&, const id64_fields&) = default;
};

/// The meaning of a 64-bit id's bits: three fields, the time unit and the epoch. A value type;
/// use the named layouts (`compact64()`, `snowflake()`, `sonyflake()`). The time field is always
/// the highest, so ids order by time.
struct id64_layout {
  /// Twitter's Snowflake epoch, 2010-11-04T01:42:54.657Z, in Unix milliseconds.
  static constexpr std::int64_t twitter_epoch_ms = 1288834974657;
  /// Sonyflake's default start time, 2014-09-01T00:00:00Z, in Unix milliseconds.
  static constexpr std::int64_t sonyflake_epoch_ms = 1409529600000;

  std::string_view name;        ///< "compact64", "snowflake" or "sonyflake"
  id64_field time;              ///< units since the epoch
  id64_field machine;           ///< machine (Snowflake: worker) id
  id64_field counter;           ///< counter (Snowflake, Sonyflake: sequence) within a time unit
  std::int64_t unit_ms = 1000;  ///< length of a time unit in milliseconds
  std::int64_t epoch_ms = 0;    ///< Unix milliseconds of time 0

  /// 32-bit Unix seconds | 8-bit machine | 24-bit counter: the "ObjectId in a BIGINT" of the
  /// write-ups. 16,777,216 ids per second per machine, 256 machines, 1970 to 2106.
  static constexpr id64_layout compact64() noexcept {
    return {"compact64", {32, 32}, {24, 8}, {0, 24}, 1000, 0};
  }
  /// Twitter's Snowflake: a zero bit | 41-bit milliseconds since `epoch_ms` | 10-bit worker |
  /// 12-bit sequence. 4,096 ids per millisecond per worker, 1,024 workers, 69.7 years.
  static constexpr id64_layout snowflake(std::int64_t epoch_ms = twitter_epoch_ms) noexcept {
    return {"snowflake", {22, 41}, {12, 10}, {0, 12}, 1, epoch_ms};
  }
  /// Sonyflake: a zero bit | 39-bit 10 ms units since `epoch_ms` | 8-bit sequence | 16-bit
  /// machine. 256 ids per 10 ms per machine, 65,536 machines, 174 years.
  static constexpr id64_layout sonyflake(std::int64_t epoch_ms = sonyflake_epoch_ms) noexcept {
    return {"sonyflake", {24, 39}, {0, 16}, {16, 8}, 10, epoch_ms};
  }
  /// The named layout with its default epoch. Errors: `invalid_value` for any other name.
  static result<id64_layout> from_name(std::string_view name) noexcept;

  /// How many ids one machine can make in one time unit: 2^counter.width.
  constexpr std::uint64_t ids_per_unit() const noexcept { return counter.max() + 1; }
  /// The largest machine id.
  constexpr std::uint32_t max_machine() const noexcept {
    return static_cast<std::uint32_t>(machine.max());
  }
  /// The bits any id of this layout may have set (Snowflake and Sonyflake leave bit 63 zero).
  constexpr std::uint64_t used_bits() const noexcept {
    return time.mask() | machine.mask() | counter.mask();
  }
  /// The first time an id can carry: the epoch.
  constexpr sys_milliseconds first_time() const noexcept {
    return sys_milliseconds{std::chrono::milliseconds{epoch_ms}};
  }
  /// The start of the last time unit an id can carry (times up to one unit later fall into it).
  constexpr sys_milliseconds last_time() const noexcept {
    return first_time() +
           std::chrono::milliseconds{static_cast<std::int64_t>(time.max()) * unit_ms};
  }

  /// The time unit `t` falls in. Errors: `time_out_of_range` before `first_time()` or after the
  /// last unit.
  result<std::uint64_t> units_at(sys_milliseconds t) const noexcept;
  /// The id with these fields. Errors: `time_out_of_range` (units past `time.max()`),
  /// `machine_id_out_of_range` (past `max_machine()`), `invalid_value` (counter past
  /// `ids_per_unit() - 1`); offset 0.
  result<id64> make(std::uint64_t units, std::uint32_t machine_id,
                    std::uint32_t count) const noexcept;
  /// The fields of `id`. Errors: `invalid_value` when `id` has a bit set outside the layout's
  /// fields (bit 63 of a Snowflake or Sonyflake id), offset 0.
  result<id64_fields> decode(id64 id) const noexcept;
  /// Checks that `machine_id` fits. Errors: `machine_id_out_of_range`.
  result<void> check_machine(std::uint64_t machine_id) const noexcept;

  /// The smallest id of the time unit `t` falls in (machine and counter zero): a `>=` bound.
  /// Errors: `time_out_of_range`, as `units_at`.
  result<id64> min_for_time(sys_milliseconds t) const noexcept;
  /// The largest id of that unit (machine and counter all ones): an inclusive upper bound. For a
  /// half-open range [t1, t2) use `>= min_for_time(t1)` and `< min_for_time(t2)`.
  result<id64> max_for_time(sys_milliseconds t) const noexcept;

  friend bool operator==(const id64_layout&, const id64_layout&) = default;
};

}  // namespace oid
