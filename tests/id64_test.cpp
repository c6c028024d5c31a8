#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <oid/objectid/id64.hpp>
#include <oid/objectid/id64_generator.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

using oid::errc;
using oid::id64;
using oid::id64_generator;
using oid::id64_layout;
using std::chrono::milliseconds;

oid::sys_milliseconds at_ms(std::int64_t ms) { return oid::sys_milliseconds{milliseconds{ms}}; }

std::size_t count_duplicates(std::vector<id64> ids) {
  std::sort(ids.begin(), ids.end());
  return static_cast<std::size_t>(ids.end() - std::unique(ids.begin(), ids.end()));
}

// ---- Layouts -------------------------------------------------------------------------------

TEST(Id64LayoutTest, StatesItsFieldsUnitsAndRange) {
  struct test_case {
    id64_layout layout;
    unsigned time_bits, machine_bits, counter_bits;
    std::int64_t unit_ms, epoch_ms, last_ms;
    std::uint64_t ids_per_unit;
    std::uint32_t max_machine;
    std::uint64_t used_bits;
  };
  const test_case cases[] = {
      {id64_layout::compact64(), 32, 8, 24, 1000, 0, 4294967295000, 16777216, 255,
       0xFFFFFFFFFFFFFFFF},  // last: 2106-02-07T06:28:15Z
      {id64_layout::snowflake(), 41, 10, 12, 1, 1288834974657, 3487858230208, 4096, 1023,
       0x7FFFFFFFFFFFFFFF},  // 2080-07-10T17:30:30.208Z
      {id64_layout::sonyflake(), 39, 16, 8, 10, 1409529600000, 6907087738870, 256, 65535,
       0x7FFFFFFFFFFFFFFF},  // 2188-11-16T03:28:58.870Z
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.layout.name));
    EXPECT_EQ(c.layout.time.width, c.time_bits);
    EXPECT_EQ(c.layout.machine.width, c.machine_bits);
    EXPECT_EQ(c.layout.counter.width, c.counter_bits);
    EXPECT_EQ(c.layout.unit_ms, c.unit_ms);
    EXPECT_EQ(c.layout.first_time(), at_ms(c.epoch_ms));
    EXPECT_EQ(c.layout.last_time(), at_ms(c.last_ms));
    EXPECT_EQ(c.layout.ids_per_unit(), c.ids_per_unit);
    EXPECT_EQ(c.layout.max_machine(), c.max_machine);
    EXPECT_EQ(c.layout.used_bits(), c.used_bits);
    // The time is the highest field, and the fields do not overlap.
    EXPECT_EQ(c.layout.time.shift + c.layout.time.width, c.layout.used_bits() >> 63 ? 64u : 63u);
    EXPECT_EQ(c.layout.time.mask() & c.layout.machine.mask(), 0u);
    EXPECT_EQ(c.layout.machine.mask() & c.layout.counter.mask(), 0u);
    EXPECT_EQ(c.layout.time.mask() & c.layout.counter.mask(), 0u);
    const auto named = id64_layout::from_name(c.layout.name);
    ASSERT_TRUE(named);
    EXPECT_EQ(*named, c.layout);
  }
  const auto unknown = id64_layout::from_name("snowflake64");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, errc::invalid_value);
}

TEST(Id64LayoutTest, SnowflakeEpochIsConfigurable) {
  const auto l = id64_layout::snowflake(1420070400000);  // Discord's, 2015-01-01
  EXPECT_EQ(l.first_time(), at_ms(1420070400000));
  const auto f = l.decode(id64(175928847299117063));  // Discord's documented example
  ASSERT_TRUE(f);
  EXPECT_EQ(f->time, at_ms(1462015105796));  // 2016-04-30T11:18:25.796Z
  EXPECT_EQ(f->machine, 32u);  // Discord splits the 10 bits: internal worker 1, process 0
  EXPECT_EQ(f->counter, 7u);
}

// Encode and decode at the edges: first and last time, the largest machine id and counter.
TEST(Id64LayoutTest, EncodesAndDecodesAtTheEdges) {
  struct test_case {
    const char* name;
    id64_layout layout;
    std::uint64_t units;
    std::uint32_t machine, counter;
    std::uint64_t want;
  };
  const test_case cases[] = {
      {"compact64 zero", id64_layout::compact64(), 0, 0, 0, 0},
      {"compact64 all ones", id64_layout::compact64(), 0xFFFFFFFF, 255, 0xFFFFFF,
       0xFFFFFFFFFFFFFFFF},
      {"compact64 fields", id64_layout::compact64(), 0x12345678, 0x9A, 0xBCDEF0,
       0x123456789ABCDEF0},
      {"compact64 2^31 s (2038)", id64_layout::compact64(), 0x80000000, 0, 0, 0x8000000000000000},
      {"snowflake zero", id64_layout::snowflake(), 0, 0, 0, 0},
      {"snowflake all ones", id64_layout::snowflake(), (1ull << 41) - 1, 1023, 4095,
       0x7FFFFFFFFFFFFFFF},
      {"snowflake worker only", id64_layout::snowflake(), 0, 1023, 0, 0x3FF000},
      {"snowflake tweet", id64_layout::snowflake(), 367597485448, 378, 0, 1541815603606036480},
      {"sonyflake zero", id64_layout::sonyflake(), 0, 0, 0, 0},
      {"sonyflake all ones", id64_layout::sonyflake(), (1ull << 39) - 1, 65535, 255,
       0x7FFFFFFFFFFFFFFF},
      {"sonyflake order time|seq|machine", id64_layout::sonyflake(), 1, 2, 3,
       1ull << 24 | 3ull << 16 | 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto id = c.layout.make(c.units, c.machine, c.counter);
    ASSERT_TRUE(id) << id.error().message();
    EXPECT_EQ(id->value(), c.want);
    const auto f = c.layout.decode(*id);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->units, c.units);
    EXPECT_EQ(f->machine, c.machine);
    EXPECT_EQ(f->counter, c.counter);
    EXPECT_EQ(f->time, c.layout.first_time() +
                           milliseconds{static_cast<std::int64_t>(c.units) * c.layout.unit_ms});
  }
}

TEST(Id64LayoutTest, RejectsFieldsTheLayoutCannotHold) {
  struct test_case {
    const char* name;
    id64_layout layout;
    std::uint64_t units;
    std::uint32_t machine, counter;
    errc want;
  };
  const test_case cases[] = {
      {"compact64 machine 256", id64_layout::compact64(), 0, 256, 0, errc::machine_id_out_of_range},
      {"compact64 counter 2^24", id64_layout::compact64(), 0, 0, 1u << 24, errc::invalid_value},
      {"compact64 time 2^32", id64_layout::compact64(), 1ull << 32, 0, 0, errc::time_out_of_range},
      {"snowflake worker 1024", id64_layout::snowflake(), 0, 1024, 0,
       errc::machine_id_out_of_range},
      {"snowflake sequence 4096", id64_layout::snowflake(), 0, 0, 4096, errc::invalid_value},
      {"snowflake time 2^41", id64_layout::snowflake(), 1ull << 41, 0, 0, errc::time_out_of_range},
      {"sonyflake machine 65536", id64_layout::sonyflake(), 0, 65536, 0,
       errc::machine_id_out_of_range},
      {"sonyflake sequence 256", id64_layout::sonyflake(), 0, 0, 256, errc::invalid_value},
      {"sonyflake time 2^39", id64_layout::sonyflake(), 1ull << 39, 0, 0, errc::time_out_of_range},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto id = c.layout.make(c.units, c.machine, c.counter);
    ASSERT_FALSE(id);
    EXPECT_EQ(id.error().code, c.want);
    EXPECT_EQ(id.error().offset, 0u);
  }
  EXPECT_EQ(id64_layout::snowflake().check_machine(1023).has_value(), true);
  EXPECT_EQ(id64_layout::snowflake().check_machine(1ull << 32).error().code,
            errc::machine_id_out_of_range);
}

TEST(Id64LayoutTest, DecodeRejectsTheUnusedTopBit) {
  const id64 top(0x8000000000000000);
  EXPECT_EQ(id64_layout::snowflake().decode(top).error().code, errc::invalid_value);
  EXPECT_EQ(id64_layout::sonyflake().decode(top).error().code, errc::invalid_value);
  ASSERT_TRUE(id64_layout::compact64().decode(top));
  EXPECT_EQ(id64_layout::compact64().decode(top)->units, 0x80000000u);
}

TEST(Id64LayoutTest, MinAndMaxForTimeBoundTheUnit) {
  struct test_case {
    const char* name;
    id64_layout layout;
    std::int64_t ms;
    std::uint64_t min, max;
  };
  const test_case cases[] = {
      {"compact64 epoch", id64_layout::compact64(), 0, 0, 0xFFFFFFFF},
      {"compact64 mid-second", id64_layout::compact64(), 1999, 1ull << 32, 0x1FFFFFFFF},
      {"compact64 last second", id64_layout::compact64(), 4294967295999, 0xFFFFFFFF00000000,
       0xFFFFFFFFFFFFFFFF},
      {"snowflake epoch", id64_layout::snowflake(), 1288834974657, 0, 0x3FFFFF},
      {"snowflake last ms", id64_layout::snowflake(), 3487858230208, 0x7FFFFFFFFFC00000,
       0x7FFFFFFFFFFFFFFF},
      {"sonyflake epoch + 19 ms", id64_layout::sonyflake(), 1409529600019, 1ull << 24, 0x1FFFFFF},
      {"sonyflake last unit", id64_layout::sonyflake(), 6907087738879, 0x7FFFFFFFFF000000,
       0x7FFFFFFFFFFFFFFF},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto lo = c.layout.min_for_time(at_ms(c.ms));
    const auto hi = c.layout.max_for_time(at_ms(c.ms));
    ASSERT_TRUE(lo);
    ASSERT_TRUE(hi);
    EXPECT_EQ(lo->value(), c.min);
    EXPECT_EQ(hi->value(), c.max);
  }
  struct bad_case {
    const char* name;
    id64_layout layout;
    std::int64_t ms;
  };
  const bad_case bad[] = {
      {"compact64 before 1970", id64_layout::compact64(), -1},
      {"compact64 after 2106", id64_layout::compact64(), 4294967296000},
      {"snowflake before its epoch", id64_layout::snowflake(), 1288834974656},
      {"snowflake after its last ms", id64_layout::snowflake(), 3487858230209},
      {"sonyflake before its epoch", id64_layout::sonyflake(), 1409529599999},
      {"sonyflake after its last unit", id64_layout::sonyflake(), 6907087738880},
      {"far past", id64_layout::snowflake(), std::numeric_limits<std::int64_t>::min()},
      {"far future", id64_layout::snowflake(), std::numeric_limits<std::int64_t>::max()},
  };
  for (const auto& c : bad) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.layout.min_for_time(at_ms(c.ms)).error().code, errc::time_out_of_range);
    EXPECT_EQ(c.layout.max_for_time(at_ms(c.ms)).error().code, errc::time_out_of_range);
  }
}

// ---- Text ----------------------------------------------------------------------------------

TEST(Id64Test, TextFormsRoundTrip) {
  struct test_case {
    std::uint64_t value;
    const char* decimal;
    const char* hex;
  };
  constexpr test_case cases[] = {
      {0, "0", "0000000000000000"},
      {1, "1", "0000000000000001"},
      {1541815603606036480, "1541815603606036480", "1565a11f6217a000"},
      {0x7FFFFFFFFFFFFFFF, "9223372036854775807", "7fffffffffffffff"},
      {0xFFFFFFFFFFFFFFFF, "18446744073709551615", "ffffffffffffffff"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.decimal);
    const id64 id(c.value);
    EXPECT_EQ(id.to_decimal(), c.decimal);
    EXPECT_EQ(id.to_hex(), c.hex);
    EXPECT_EQ(id64::from_decimal(c.decimal).value(), id);
    EXPECT_EQ(id64::from_hex(c.hex).value(), id);
    EXPECT_EQ(id64::parse(c.hex).value(), id);
    if (std::string_view(c.decimal).size() != id64::hex_size) {
      EXPECT_EQ(id64::parse(c.decimal).value(), id);
    }
  }
  EXPECT_EQ(id64::from_hex("7FFFFFFFFFFFFFFF").value().value(), 0x7FFFFFFFFFFFFFFFu);
  // 16 characters are hex, even when they are all digits.
  EXPECT_EQ(id64::parse("1000000000000000").value().value(), 0x1000000000000000u);
  EXPECT_EQ(id64::from_decimal("1000000000000000").value().value(), 1000000000000000u);
}

TEST(Id64Test, ParsingReportsCodeAndOffset) {
  struct test_case {
    const char* name;
    std::string_view input;
    bool hex;  // from_hex, else from_decimal
    errc want;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"empty decimal", "", false, errc::invalid_length, 0},
      {"21 digits", "100000000000000000000", false, errc::invalid_length, 0},
      {"2^64", "18446744073709551616", false, errc::invalid_decimal, 19},
      {"20 nines", "99999999999999999999", false, errc::invalid_decimal, 19},
      {"leading zero", "0123", false, errc::invalid_decimal, 0},
      {"sign", "-1", false, errc::invalid_decimal, 0},
      {"plus", "+1", false, errc::invalid_decimal, 0},
      {"letter at 3", "123a5", false, errc::invalid_decimal, 3},
      {"space at end", "12 ", false, errc::invalid_decimal, 2},
      {"signed char", "1\xc8", false, errc::invalid_decimal, 1},
      {"15 hex digits", "000000000000000", true, errc::invalid_length, 0},
      {"17 hex digits", "00000000000000000", true, errc::invalid_length, 0},
      {"0x prefix", "0x00000000000000", true, errc::invalid_hex, 1},
      {"g at 7", "0000000g00000000", true, errc::invalid_hex, 7},
      {"signed char hex", "000000000000000\xc8", true, errc::invalid_hex, 15},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = c.hex ? id64::from_hex(c.input) : id64::from_decimal(c.input);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, c.want);
    EXPECT_EQ(r.error().offset, c.offset);
  }
}

TEST(Id64Test, OrdersNumerically) {
  EXPECT_LT(id64(1), id64(2));
  EXPECT_LT(id64(0x7FFFFFFFFFFFFFFF), id64(0x8000000000000000));
  EXPECT_EQ(id64(5), id64(5));
}

// ---- Generator -----------------------------------------------------------------------------

/// A clock the test moves by hand.
struct manual_clock {
  std::shared_ptr<std::atomic<std::int64_t>> ms = std::make_shared<std::atomic<std::int64_t>>(0);
  oid::millisecond_clock function() const {
    return [ms = ms] { return ms->load(); };
  }
  void set(std::int64_t v) const { ms->store(v); }
};

TEST(Id64GeneratorTest, RequiresAMachineIdThatFits) {
  struct test_case {
    id64_layout layout;
    std::uint32_t first_bad;
  };
  const test_case cases[] = {{id64_layout::compact64(), 256},
                             {id64_layout::snowflake(), 1024},
                             {id64_layout::sonyflake(), 65536}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.layout.name));
    try {
      id64_generator gen(c.layout, c.first_bad);
      FAIL() << "no exception";
    } catch (const oid::exception& e) {
      EXPECT_EQ(e.code(), errc::machine_id_out_of_range);
    }
    id64_generator gen(c.layout, c.first_bad - 1);
    EXPECT_EQ(gen.machine_id(), c.first_bad - 1);
    EXPECT_EQ(c.layout.decode(gen.next())->machine, c.first_bad - 1);
  }
}

TEST(Id64GeneratorTest, MakesTheLayoutsIdsFromTheClock) {
  manual_clock clock;
  const auto layout = id64_layout::snowflake();
  id64_generator gen(layout, 378, clock.function());
  clock.set(1656432460105);
  const id64 a = gen.next();
  EXPECT_EQ(a.value(), 1541815603606036480u);  // sequence 0 of that millisecond
  EXPECT_EQ(layout.decode(gen.next())->counter, 1u);
  clock.set(1656432460106);  // a new millisecond starts at sequence 0
  const auto f = layout.decode(gen.next()).value();
  EXPECT_EQ(f.time, at_ms(1656432460106));
  EXPECT_EQ(f.counter, 0u);
}

// A clock that stands still: more ids than a unit allows move on to the next unit instead of
// wrapping the counter into the machine bits.
TEST(Id64GeneratorTest, StalledClockMovesToTheNextUnitInsteadOfWrapping) {
  struct test_case {
    id64_layout layout;
    std::uint32_t machine;
    std::int64_t now_ms;
  };
  const test_case cases[] = {
      {id64_layout::compact64(), 255, 1700000000000},
      {id64_layout::snowflake(), 1023, 1700000000000},
      {id64_layout::sonyflake(), 65535, 1700000000000},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.layout.name));
    manual_clock clock;
    clock.set(c.now_ms);
    id64_generator gen(c.layout, c.machine, clock.function());
    const std::uint64_t per_unit = c.layout.ids_per_unit();
    // compact64 allows 2^24 a second: test 3 units' worth for the small layouts, 1 + 1,000 for it.
    const std::size_t n =
        per_unit > 100000 ? static_cast<std::size_t>(per_unit) + 1000 : 3 * per_unit + 7;
    std::vector<id64> ids(n);
    for (std::size_t i = 0; i < n; i += 999) {
      gen.fill(std::span(ids).subspan(i, std::min<std::size_t>(999, n - i)));
    }
    const std::uint64_t unit0 = c.layout.units_at(at_ms(c.now_ms)).value();
    for (std::size_t i = 0; i < n; ++i) {
      const auto f = c.layout.decode(ids[i]).value();
      ASSERT_EQ(f.machine, c.machine) << i;
      ASSERT_EQ(f.units, unit0 + i / per_unit) << i;
      ASSERT_EQ(f.counter, i % per_unit) << i;
    }
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    EXPECT_EQ(count_duplicates(ids), 0u);
  }
}

TEST(Id64GeneratorTest, ClockSteppingBackNeverGoesBelowTheLastUnit) {
  manual_clock clock;
  const auto layout = id64_layout::snowflake();
  id64_generator gen(layout, 5, clock.function());
  clock.set(1700000000500);
  std::vector<id64> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(gen.next());
  clock.set(1700000000000);                                  // 500 ms back
  for (int i = 0; i < 5000; ++i) ids.push_back(gen.next());  // more than one unit's worth
  const auto first = layout.decode(ids[0]).value();
  const auto after = layout.decode(ids[3]).value();
  EXPECT_EQ(after.units, first.units);  // continues in the last unit used ...
  EXPECT_EQ(after.counter, 3u);         // ... after its last counter
  EXPECT_EQ(layout.decode(ids.back()).value().units, first.units + 1);  // then the next unit
  clock.set(1700000001000);  // the clock passes the last unit again: back to the clock
  const auto caught_up = layout.decode(gen.next()).value();
  EXPECT_EQ(caught_up.time, at_ms(1700000001000));
  EXPECT_EQ(caught_up.counter, 0u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(count_duplicates(ids), 0u);
}

TEST(Id64GeneratorTest, ClockOutsideTheLayoutThrows) {
  manual_clock clock;
  id64_generator gen(id64_layout::snowflake(), 1, clock.function());
  clock.set(1288834974656);  // 1 ms before Twitter's epoch
  try {
    (void)gen.next();
    FAIL() << "no exception";
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code(), errc::time_out_of_range);
  }
  // The last unit: its 4,096 ids are fine, the 4,097th would need a unit past the end.
  clock.set(3487858230208);
  std::vector<id64> ids(4096);
  gen.fill(ids);
  EXPECT_EQ(ids.back().value(), 0x7FFFFFFFFFC01FFFu);  // worker 1, sequence 4095
  try {
    (void)gen.next();
    FAIL() << "no exception";
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code(), errc::time_out_of_range);
  }
}

TEST(Id64GeneratorTest, SystemClockIdsCarryTheCurrentTime) {
  const std::int64_t before = oid::system_clock_milliseconds();
  id64_generator gen(id64_layout::snowflake(), 7);
  const auto f = id64_layout::snowflake().decode(gen.next()).value();
  const std::int64_t after = oid::system_clock_milliseconds();
  EXPECT_GE(f.time, at_ms(before));
  EXPECT_LE(f.time, at_ms(after));
  EXPECT_EQ(f.machine, 7u);
}

TEST(Id64GeneratorTest, ThreadsMakeNoDuplicate) {
  manual_clock clock;
  clock.set(1700000000000);
  id64_generator gen(id64_layout::sonyflake(), 42, clock.function());  // 256 ids a unit
  constexpr int threads = 4, per_thread = 50000;
  std::vector<std::vector<id64>> out(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto& mine = out[static_cast<std::size_t>(t)];
      for (int i = 0; i < per_thread; ++i) {
        if (i % 1000 == 0) clock.set(1700000000000 + i / 100);  // moves now and then
        if (i % 7 == 0) {
          id64 batch[5];
          gen.fill(batch);
          mine.insert(mine.end(), std::begin(batch), std::end(batch));
        } else {
          mine.push_back(gen.next());
        }
      }
      EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));  // one thread's ids increase
    });
  }
  for (auto& th : pool) th.join();
  std::vector<id64> all;
  for (auto& v : out) all.insert(all.end(), v.begin(), v.end());
  EXPECT_EQ(count_duplicates(std::move(all)), 0u);
}

/// Runs `child` in a forked child; returns its exit status (0: fine).
template <class F>
int in_child(F child) {
  const pid_t pid = fork();
  if (pid == 0) _exit(child());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

TEST(Id64GeneratorTest, ForkedChildWithoutItsOwnMachineIdGetsAnError) {
  id64_generator gen(id64_layout::compact64(), 3);
  (void)gen.next();
  const int status = in_child([&] {
    try {
      (void)gen.next();
      return 1;  // a duplicate of the parent's next id
    } catch (const oid::exception& e) {
      return e.code() == errc::forked_machine_id ? 0 : 2;
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(gen.machine_id(), 3u);  // the parent carries on
  EXPECT_NO_THROW((void)gen.next());
}

TEST(Id64GeneratorTest, ForkedChildTakesItsOwnMachineIdAndMakesNoDuplicate) {
  manual_clock clock;
  clock.set(1700000000000);
  const auto layout = id64_layout::snowflake();
  // The child is given machine 9; a child told to keep 3 gets an error instead.
  id64_generator gen(layout, 3, clock.function(), [] { return 9u; });
  id64_generator same(layout, 3, clock.function(), [] { return 3u; });
  id64_generator too_big(layout, 3, clock.function(), [] { return 1024u; });
  (void)gen.next();
  int pipe_fd[2];
  ASSERT_EQ(pipe(pipe_fd), 0);
  const int status = in_child([&] {
    close(pipe_fd[0]);
    std::vector<id64> ids(100);
    gen.fill(ids);
    if (write(pipe_fd[1], ids.data(), sizeof(id64) * ids.size()) !=
        static_cast<ssize_t>(sizeof(id64) * ids.size())) {
      return 3;
    }
    for (auto* g : {&same, &too_big}) {
      try {
        (void)g->next();
        return 4;
      } catch (const oid::exception& e) {
        const errc want = g == &same ? errc::forked_machine_id : errc::machine_id_out_of_range;
        if (e.code() != want) return 5;
      }
    }
    return gen.machine_id() == 9 ? 0 : 6;
  });
  close(pipe_fd[1]);
  ASSERT_EQ(status, 0);
  std::vector<id64> child(100);
  ASSERT_EQ(read(pipe_fd[0], child.data(), sizeof(id64) * child.size()),
            static_cast<ssize_t>(sizeof(id64) * child.size()));
  close(pipe_fd[0]);
  std::vector<id64> parent(100);
  gen.fill(parent);  // the same positions as the child's, with machine 3
  for (const auto& id : child) ASSERT_EQ(layout.decode(id)->machine, 9u);
  for (const auto& id : parent) ASSERT_EQ(layout.decode(id)->machine, 3u);
  EXPECT_EQ(layout.decode(child[0])->counter, layout.decode(parent[0])->counter);
  child.insert(child.end(), parent.begin(), parent.end());
  EXPECT_EQ(count_duplicates(std::move(child)), 0u);
}

}  // namespace
