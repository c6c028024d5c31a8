// duplicate_finder: the same answers in memory and through temporary files, in every merge shape.
#include "uniqueness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <oid/error.hpp>
#include <random>
#include <utility>
#include <vector>

namespace {

using oid::duplicate_finder;
using oid::object_id;

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A different id for every i, with all 12 bytes varying.
object_id id_from(std::uint64_t i) {
  const std::uint64_t a = splitmix(i), b = splitmix(i ^ 0xABCDEF);
  object_id::bytes_type bytes;
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<std::uint8_t>(a >> (8 * k));
  for (int k = 0; k < 4; ++k) bytes[8 + k] = static_cast<std::uint8_t>(b >> (8 * k));
  return object_id(bytes);
}

struct found {
  oid::uniqueness_summary summary;
  std::vector<std::pair<object_id, std::uint64_t>> duplicates;
};

found check(const std::vector<object_id>& ids, std::size_t budget, std::size_t chunk = 1000) {
  duplicate_finder finder({.memory_budget = budget, .temp_dir = ::testing::TempDir()});
  for (std::size_t i = 0; i < ids.size(); i += chunk) {
    finder.add(std::span(ids).subspan(i, std::min(chunk, ids.size() - i)));
  }
  found f;
  f.summary = finder.finish(
      [&](const object_id& id, std::uint64_t n) { f.duplicates.emplace_back(id, n); });
  return f;
}

/// `distinct` different ids, of which the first ones are repeated as `extra` says, shuffled.
std::vector<object_id> make_input(std::size_t distinct, const std::vector<std::uint64_t>& extra,
                                  std::uint32_t seed) {
  std::vector<object_id> ids;
  for (std::size_t i = 0; i < distinct; ++i) ids.push_back(id_from(i));
  for (std::size_t i = 0; i < extra.size(); ++i) {
    for (std::uint64_t k = 0; k < extra[i]; ++k) ids.push_back(id_from(i));
  }
  std::mt19937 rng(seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

TEST(UniquenessTest, EmptyInput) {
  duplicate_finder finder;
  bool called = false;
  const auto s = finder.finish([&](const object_id&, std::uint64_t) { called = true; });
  EXPECT_FALSE(called);
  EXPECT_EQ(s.ids, 0u);
  EXPECT_EQ(s.distinct, 0u);
  EXPECT_EQ(s.duplicates, 0u);
  EXPECT_EQ(s.max_count, 0u);
  EXPECT_EQ(s.runs, 0u);
}

TEST(UniquenessTest, SameAnswerInMemoryAndInEveryMergeShape) {
  // id 0 occurs 1 + 4 times, id 1 twice, id 2 not repeated, id 3 three times.
  const std::vector<std::uint64_t> extra = {4, 1, 0, 2};
  const std::size_t distinct = 80000;  // 960 KB: 4 runs of 256 KiB
  const auto ids = make_input(distinct, extra, 7);

  std::vector<std::pair<object_id, std::uint64_t>> want = {
      {id_from(0), 5}, {id_from(1), 2}, {id_from(3), 3}};
  std::sort(want.begin(), want.end());

  struct test_case {
    const char* name;
    std::size_t budget;
    bool spills;
  };
  const test_case cases[] = {
      {"in memory", std::size_t{64} << 20, false},
      {"one merge pass, 4 runs at a time", std::size_t{256} << 10, true},
      {"many passes, 2 runs at a time (smallest budget)", 1024, true},
      {"budget below the minimum is raised", 1, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto f = check(ids, c.budget);
    EXPECT_EQ(f.duplicates, want);
    EXPECT_EQ(f.summary.ids, ids.size());
    EXPECT_EQ(f.summary.distinct, distinct);
    EXPECT_EQ(f.summary.duplicated, 3u);
    EXPECT_EQ(f.summary.duplicates, 4u + 1u + 2u);
    EXPECT_EQ(f.summary.colliding_pairs, 10u + 1u + 3u);  // C(5,2) + C(2,2) + C(3,2)
    EXPECT_EQ(f.summary.max_count, 5u);
    EXPECT_EQ(f.summary.runs != 0, c.spills) << f.summary.runs;
  }
}

TEST(UniquenessTest, SpillsAtTheBudget) {
  // 1,024 bytes hold 85 ids: 1,000 ids make 12 runs (11 full ones and the rest).
  const auto f = check(make_input(1000, {}, 1), 1024, 7);
  EXPECT_EQ(f.summary.runs, 12u);
  EXPECT_EQ(f.summary.distinct, 1000u);
  EXPECT_TRUE(f.duplicates.empty());
}

TEST(UniquenessTest, ReportsInByteOrder) {
  // Ids that differ only in the last byte, only in the first, and in the middle: the callback
  // order must be the ids' own order (bytes compared as unsigned).
  std::vector<object_id> ids;
  for (const int pos : {0, 5, 8, 11}) {
    for (const int v : {0x00, 0x7F, 0x80, 0xFF}) {
      object_id::bytes_type b{};
      b[static_cast<std::size_t>(pos)] = static_cast<std::uint8_t>(v);
      ids.emplace_back(b);
      ids.emplace_back(b);
    }
  }
  std::reverse(ids.begin(), ids.end());
  for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{1024}}) {
    SCOPED_TRACE(budget);
    std::vector<object_id> seen;
    duplicate_finder finder({.memory_budget = budget, .temp_dir = ::testing::TempDir()});
    for (const auto& id : ids) finder.add(id);  // one at a time: spills mid-way with 1 KiB
    const auto s = finder.finish([&](const object_id& id, std::uint64_t n) {
      EXPECT_EQ(n, id == object_id() ? 8u : 2u);  // the all-zero id is made by every position
      seen.push_back(id);
    });
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(seen.size(), 13u);  // 4 positions x 3 non-zero values + the zero id
    EXPECT_EQ(s.ids, 32u);
    EXPECT_EQ(s.distinct, 13u);
  }
}

TEST(UniquenessTest, MatchesABruteForceCountOnRandomInput) {
  // Ids drawn from a small pool, so that many repeat a random number of times.
  std::mt19937_64 rng(42);
  std::vector<object_id> ids;
  std::map<object_id, std::uint64_t> counts;
  for (int i = 0; i < 30000; ++i) {
    const object_id id = id_from(rng() % 20000);
    ids.push_back(id);
    ++counts[id];
  }
  std::vector<std::pair<object_id, std::uint64_t>> want;
  std::uint64_t pairs = 0;
  for (const auto& [id, n] : counts) {
    if (n > 1) want.emplace_back(id, n);
    pairs += n * (n - 1) / 2;
  }
  for (const std::size_t budget : {std::size_t{1} << 24, std::size_t{4096}, std::size_t{1024}}) {
    SCOPED_TRACE(budget);
    const auto f = check(ids, budget, 333);
    EXPECT_EQ(f.duplicates, want);
    EXPECT_EQ(f.summary.distinct, counts.size());
    EXPECT_EQ(f.summary.duplicates, ids.size() - counts.size());
    EXPECT_EQ(f.summary.colliding_pairs, pairs);
  }
}

TEST(UniquenessTest, FinderCanBeReusedAfterFinish) {
  duplicate_finder finder({.memory_budget = 1024, .temp_dir = ::testing::TempDir()});
  const auto first = make_input(500, {3}, 3);
  finder.add(first);
  EXPECT_EQ(finder.finish().duplicates, 3u);
  finder.add(id_from(1));
  const auto s = finder.finish();
  EXPECT_EQ(s.ids, 1u);
  EXPECT_EQ(s.duplicates, 0u);
  EXPECT_EQ(s.runs, 0u);
}

TEST(UniquenessTest, UnwritableTempDirIsAnIoError) {
  duplicate_finder finder({.memory_budget = 1024, .temp_dir = "/nonexistent/oid-test"});
  const auto ids = make_input(200, {}, 5);  // more than 85 ids: must spill
  try {
    finder.add(ids);
    ADD_FAILURE() << "no exception";
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code(), oid::errc::io_error);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/oid-test"), std::string::npos) << e.what();
  }
}

}  // namespace
