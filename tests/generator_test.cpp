#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/inspect.hpp>
#include <thread>
#include <vector>

#include "support/sanitizers.hpp"

namespace {

using oid::object_id;
using oid::object_id_generator;

/// A random source that always gives the same 8 bytes: 5 for the random value, 3 for the counter.
oid::random_function fixed_random(std::array<std::uint8_t, 8> bytes) {
  return [bytes](std::span<std::uint8_t> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = bytes[i % bytes.size()];
  };
}

oid::clock_function fixed_clock(std::uint32_t t) {
  return [t] { return t; };
}

std::size_t count_duplicates(std::vector<object_id> ids) {
  std::sort(ids.begin(), ids.end());
  std::size_t dups = 0;
  for (std::size_t i = 1; i < ids.size(); ++i) dups += ids[i] == ids[i - 1];
  return dups;
}

TEST(GeneratorTest, LayoutFollowsTheSpecification) {
  object_id_generator gen(fixed_clock(0x12345678), fixed_random({1, 2, 3, 4, 5, 0x00, 0x00, 0x07}));
  const object_id a = gen.next();
  EXPECT_EQ(a.to_hex(), "123456780102030405000007");
  EXPECT_EQ(gen.next().to_hex(), "123456780102030405000008");
}

TEST(GeneratorTest, CounterWrapsFromFFFFFFToZero) {
  object_id_generator gen(fixed_clock(1), fixed_random({9, 9, 9, 9, 9, 0xFF, 0xFF, 0xFE}));
  EXPECT_EQ(oid::inspect(gen.next()).counter, 0xFFFFFEu);
  EXPECT_EQ(oid::inspect(gen.next()).counter, 0xFFFFFFu);
  const auto wrapped = oid::inspect(gen.next());
  EXPECT_EQ(wrapped.counter, 0u);
  EXPECT_EQ(wrapped.random, (std::array<std::uint8_t, 5>{9, 9, 9, 9, 9}));  // same random value
}

TEST(GeneratorTest, FillGivesConsecutiveCountersAndOneTime) {
  object_id_generator gen(fixed_clock(77), fixed_random({1, 1, 1, 1, 1, 0, 0, 0}));
  std::vector<object_id> ids(1000);
  gen.fill(ids);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto d = oid::inspect(ids[i]);
    ASSERT_EQ(d.timestamp, 77u);
    ASSERT_EQ(d.counter, i);
  }
  EXPECT_EQ(oid::inspect(gen.next()).counter, 1000u);
  gen.fill({});  // empty is fine
}

// The specification accepts duplicates past 2^24 ids in one second; oid does not. With a clock
// that never moves, 2^24 + 2^20 ids are all distinct: the random value moves on when the counter
// comes back to its start.
TEST(GeneratorTest, NoDuplicateBeyond16777216IdsInOneSecond) {
  object_id_generator gen(fixed_clock(1000), fixed_random({7, 7, 7, 7, 7, 0x12, 0x34, 0x56}));
  std::vector<object_id> ids((1u << 24) + (1u << 20));
  for (std::size_t i = 0; i < ids.size(); i += 4096) {
    gen.fill(std::span(ids).subspan(i, std::min<std::size_t>(4096, ids.size() - i)));
  }
  const auto first = oid::inspect(ids[0]);
  const auto after = oid::inspect(ids[1u << 24]);
  EXPECT_EQ(after.counter, first.counter);  // the counter came back to its start ...
  EXPECT_NE(after.random, first.random);    // ... and the random value moved on
  EXPECT_EQ(oid::inspect(ids[(1u << 24) - 1]).random, first.random);
  EXPECT_EQ(count_duplicates(std::move(ids)), 0u);
}

// A clock that steps back (NTP, a VM restored from a snapshot) cannot make a duplicate either, even
// across more than 2^24 ids spread over the repeated seconds.
TEST(GeneratorTest, NoDuplicateWhenTheClockStepsBack) {
  std::atomic<std::uint32_t> now{5000};
  object_id_generator gen([&] { return now.load(); }, fixed_random({3, 1, 4, 1, 5, 0, 0, 0}));
  std::vector<object_id> ids;
  ids.reserve(3 * 6'000'000);
  std::vector<object_id> chunk(4096);
  for (const std::uint32_t t : {5000u, 4999u, 5000u}) {  // forward, back one second, forward again
    now = t;
    for (int i = 0; i < 6'000'000 / 4096 + 1; ++i) {
      gen.fill(chunk);
      ids.insert(ids.end(), chunk.begin(), chunk.end());
    }
  }
  EXPECT_GT(ids.size(), std::size_t{1} << 24);
  EXPECT_EQ(count_duplicates(std::move(ids)), 0u);
}

TEST(GeneratorTest, EightThreadsMakeAMillionIdsEachWithNoDuplicate) {
  constexpr int threads = 8, per_thread = 1'000'000 / oid::testing::stress_divisor;
  std::vector<std::vector<object_id>> made(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&made, t] {
      made[t].reserve(per_thread);
      for (int i = 0; i < per_thread; ++i) made[t].push_back(oid::generate());
    });
  }
  for (auto& th : pool) th.join();
  std::vector<object_id> all;
  for (auto& v : made) all.insert(all.end(), v.begin(), v.end());
  ASSERT_EQ(all.size(), std::size_t{threads} * per_thread);
  EXPECT_EQ(count_duplicates(std::move(all)), 0u);
}

TEST(GeneratorTest, ThreadsSharingAnInjectedGenerator) {
  object_id_generator gen(fixed_clock(1), fixed_random({0, 0, 0, 0, 0, 0xFF, 0xF0, 0}));
  std::vector<std::vector<object_id>> made(4);
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&, t] {
      std::vector<object_id> batch(100);
      for (int i = 0; i < 5000; ++i) {
        made[t].push_back(gen.next());
        if (i % 50 == 0) {
          gen.fill(batch);
          made[t].insert(made[t].end(), batch.begin(), batch.end());
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  std::vector<object_id> all;
  for (auto& v : made) all.insert(all.end(), v.begin(), v.end());
  EXPECT_EQ(count_duplicates(std::move(all)), 0u);
}

/// Makes `n` ids with `make` in a child process and returns them through a pipe.
template <class F>
std::vector<object_id> ids_from_child(std::size_t n, F make) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    for (std::size_t i = 0; i < n; ++i) {
      const object_id id = make();
      if (write(fds[1], id.bytes().data(), 12) != 12) _exit(3);
    }
    _exit(0);
  }
  close(fds[1]);
  std::vector<object_id> out;
  object_id::bytes_type b;
  while (read(fds[0], b.data(), 12) == 12) out.emplace_back(b);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return out;
}

TEST(GeneratorTest, ForkedChildTakesANewRandomValueAndSharesNoId) {
  const object_id before = oid::generate();  // seeds the process generator in the parent
  const auto parent_random = oid::inspect(before).random;

  const auto child = ids_from_child(10000, [] { return oid::generate(); });
  ASSERT_EQ(child.size(), 10000u);
  std::vector<object_id> parent(10000);
  oid::generate(parent);

  EXPECT_NE(oid::inspect(child.front()).random, parent_random);
  EXPECT_EQ(oid::inspect(parent.front()).random, parent_random);
  std::vector<object_id> all = parent;
  all.insert(all.end(), child.begin(), child.end());
  all.push_back(before);
  EXPECT_EQ(count_duplicates(std::move(all)), 0u);
}

TEST(GeneratorTest, TwoChildrenAndAGrandchildAllDiffer) {
  (void)oid::generate();
  std::vector<std::array<std::uint8_t, 5>> randoms;
  randoms.push_back(oid::inspect(oid::generate()).random);
  for (int i = 0; i < 2; ++i) {
    randoms.push_back(oid::inspect(ids_from_child(1, [] { return oid::generate(); })[0]).random);
  }
  // A child that forks again: the grandchild reseeds too.
  const auto grandchild = ids_from_child(2, [] {
    static int calls = 0;
    if (calls++ == 0) return oid::generate();
    object_id id;
    int fds[2];
    if (pipe(fds) != 0) _exit(4);
    if (fork() == 0) {
      const object_id g = oid::generate();
      if (write(fds[1], g.bytes().data(), 12) != 12) _exit(3);
      _exit(0);
    }
    object_id::bytes_type b;
    if (read(fds[0], b.data(), 12) != 12) _exit(5);
    wait(nullptr);
    return object_id(b);
  });
  ASSERT_EQ(grandchild.size(), 2u);
  randoms.push_back(oid::inspect(grandchild[0]).random);
  randoms.push_back(oid::inspect(grandchild[1]).random);
  std::sort(randoms.begin(), randoms.end());
  EXPECT_EQ(std::adjacent_find(randoms.begin(), randoms.end()), randoms.end());
}

TEST(GeneratorTest, InjectedGeneratorReseedsAfterFork) {
  int draws = 0;
  object_id_generator gen(fixed_clock(1), [&draws](std::span<std::uint8_t> out) {
    ++draws;
    for (auto& b : out) b = static_cast<std::uint8_t>(draws);
  });
  const auto parent = gen.next();
  EXPECT_EQ(draws, 1);
  // The child's copy of the random source starts from draws == 1, so it fills with 2s.
  const auto child = ids_from_child(1, [&gen] { return gen.next(); });
  ASSERT_EQ(child.size(), 1u);
  EXPECT_EQ(oid::inspect(parent).random, (std::array<std::uint8_t, 5>{1, 1, 1, 1, 1}));
  EXPECT_EQ(oid::inspect(child[0]).random, (std::array<std::uint8_t, 5>{2, 2, 2, 2, 2}));
  EXPECT_EQ(draws, 1);  // the parent did not reseed
}

TEST(GeneratorTest, RandomSourceFailureIsReported) {
  object_id_generator gen(fixed_clock(1), [](std::span<std::uint8_t>) {
    throw oid::exception(oid::error{oid::errc::entropy_unavailable, 0});
  });
  EXPECT_THROW((void)gen.next(), oid::exception);
}

TEST(GeneratorTest, OsRandomFillsAndDiffers) {
  std::array<std::uint8_t, 32> a{}, b{};
  oid::os_random(a);
  oid::os_random(b);
  EXPECT_NE(a, b);
}

TEST(GeneratorTest, SystemClockIsNow) {
  const auto id = oid::generate();
  const auto now = static_cast<std::int64_t>(time(nullptr));
  EXPECT_LE(std::abs(static_cast<std::int64_t>(id.timestamp()) - now), 2);
}

TEST(LegacyGeneratorTest, MachineIdIsTheStartOfMd5OfTheHostName) {
  // MD5("localhost") = 421aa90e079fa326b6494f812ad13e79; MD5("") = d41d8cd98f00b204e9800998ecf8427e
  EXPECT_EQ(oid::legacy_object_id_generator::machine_id_of("localhost"),
            (std::array<std::uint8_t, 3>{0x42, 0x1a, 0xa9}));
  EXPECT_EQ(oid::legacy_object_id_generator::machine_id_of(""),
            (std::array<std::uint8_t, 3>{0xd4, 0x1d, 0x8c}));
  // 56 bytes needs a second padding block.
  EXPECT_EQ(oid::legacy_object_id_generator::machine_id_of(std::string(56, 'a')),
            (std::array<std::uint8_t, 3>{0x3b, 0x0c, 0x8a}));
}

TEST(LegacyGeneratorTest, LayoutIsMachinePidCounter) {
  oid::legacy_object_id_generator gen({0x2c, 0xdc, 0xd2}, 2358, fixed_clock(1307761900), 11057175);
  EXPECT_EQ(gen.next().to_hex(), "4df2dcec2cdcd20936a8b817");
  EXPECT_EQ(gen.next().to_hex(), "4df2dcec2cdcd20936a8b818");
}

TEST(LegacyGeneratorTest, DefaultUsesThisProcess) {
  oid::legacy_object_id_generator gen;
  const auto d = oid::inspect(gen.next());
  EXPECT_EQ(d.legacy_pid, static_cast<std::uint16_t>(getpid()));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(d.legacy_machine, oid::legacy_object_id_generator::machine_id_of(host));
  const auto child = ids_from_child(1, [&gen] { return gen.next(); });
  ASSERT_EQ(child.size(), 1u);
  EXPECT_NE(oid::inspect(child[0]).legacy_pid, d.legacy_pid);
}

}  // namespace
