// cli/uniqueness.hpp: finding duplicate ObjectIds among any number of them, in bounded memory.
//
// `duplicate_finder` takes ids in any order and reports every id that occurs more than once, with
// its count, plus a summary. It keeps at most `memory_budget` bytes of ids in memory; beyond that
// it sorts what it holds and writes it to an unlinked temporary file (a "run"), and at the end
// merges the runs (an external merge sort), in several passes when there are more runs than the
// budget can read at once. So a file of billions of ids is checked with a few hundred megabytes,
// and disk space about the size of the input.
//
// This is how the fleet test and `oid check-unique` count duplicates; see docs/uniqueness.md for
// why ObjectIds from independent processes can collide and how often.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <oid/objectid/object_id.hpp>
#include <span>
#include <string>

namespace oid {

/// How much memory a `duplicate_finder` may use and where it spills.
struct duplicate_finder_options {
  /// Bytes of ids held in memory before spilling a sorted run (12 bytes per id). Values below
  /// 1,024 are raised to 1,024. The merge reads all runs through buffers of this size in total.
  std::size_t memory_budget = std::size_t{256} << 20;
  /// Directory for the temporary run files; empty: `$TMPDIR`, else `/tmp`. The files are unlinked
  /// as soon as they are created, so nothing is left behind, even after a crash.
  std::string temp_dir;
};

/// What a `duplicate_finder` saw.
struct uniqueness_summary {
  std::uint64_t ids = 0;              ///< ids added
  std::uint64_t distinct = 0;         ///< different ids among them
  std::uint64_t duplicated = 0;       ///< distinct ids that occur more than once
  std::uint64_t duplicates = 0;       ///< copies beyond the first of each id: `ids - distinct`
  std::uint64_t colliding_pairs = 0;  ///< pairs of equal ids: the sum of count*(count-1)/2
  std::uint64_t max_count = 0;        ///< the most copies of one id; 0 when no ids were added
  std::uint64_t runs = 0;             ///< sorted runs written to temporary files; 0: all in memory
};

/// Finds the ids that occur more than once among all ids added, in bounded memory.
///
///     oid::duplicate_finder finder({.memory_budget = 64 << 20});
///     finder.add(ids);                                   // any number of times
///     auto s = finder.finish([](const oid::object_id& id, std::uint64_t n) {
///       std::cout << id << " occurs " << n << " times\n";  // ascending id order
///     });
///     if (s.duplicates != 0) { ... }
///
/// Not thread-safe. Throws `oid::exception` with `errc::io_error` (and the file and OS message in
/// `what()`) when a temporary file cannot be created, written or read.
class duplicate_finder {
 public:
  /// Called once for each id that occurs more than once, with its count (>= 2), in ascending order.
  using duplicate_callback = std::function<void(const object_id& id, std::uint64_t count)>;

  explicit duplicate_finder(duplicate_finder_options options = {});
  ~duplicate_finder();
  duplicate_finder(const duplicate_finder&) = delete;
  duplicate_finder& operator=(const duplicate_finder&) = delete;

  /// Adds ids. Amortised O(log n) per id; spills a run when the memory budget is full.
  void add(std::span<const object_id> ids);
  /// Adds one id.
  void add(const object_id& id) { add(std::span<const object_id>(&id, 1)); }

  /// Sorts or merges everything added, calls `on_duplicate` (when given) for each duplicated id
  /// and returns the summary. Call once; afterwards the finder is empty and may be used again.
  uniqueness_summary finish(const duplicate_callback& on_duplicate = {});

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace oid
