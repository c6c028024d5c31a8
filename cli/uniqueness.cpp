#include "uniqueness.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <oid/detail/endian.hpp>
#include <oid/error.hpp>
#include <utility>
#include <vector>

namespace oid {
namespace {

constexpr std::size_t min_budget = 1024;
// Each merge input gets at least this much buffer when the budget allows, so that a merge reads
// the disk in large blocks; a small budget then merges fewer runs per pass instead.
constexpr std::size_t min_merge_buffer = std::size_t{64} << 10;
constexpr std::size_t max_fan_in = 256;

[[noreturn]] void fail(const std::string& what, int err) {
  throw exception(error{errc::io_error, 0}, what + ": " + std::strerror(err));
}

// Byte order, as `object_id`'s own ordering, in two integer comparisons (of big-endian words)
// instead of twelve.
inline bool id_less(const object_id& a, const object_id& b) noexcept {
  const std::uint64_t ah = detail::load_be_u64(a.bytes().data());
  const std::uint64_t bh = detail::load_be_u64(b.bytes().data());
  if (ah != bh) return ah < bh;
  return detail::load_be_u32(a.bytes().data() + 8) < detail::load_be_u32(b.bytes().data() + 8);
}

/// A sorted run in an unlinked temporary file.
class run_file {
 public:
  explicit run_file(const std::string& dir) {
    std::string path = dir + "/oid-unique-XXXXXX";
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ < 0) fail("cannot create a temporary file in " + dir, errno);
    ::unlink(path.c_str());  // space is freed when the descriptor is closed
  }
  ~run_file() {
    if (fd_ >= 0) ::close(fd_);
  }
  run_file(run_file&& o) noexcept : fd_(std::exchange(o.fd_, -1)), count_(o.count_) {}
  run_file& operator=(run_file&&) = delete;

  void append(std::span<const object_id> ids) {
    const auto* p = reinterpret_cast<const char*>(ids.data());
    std::size_t left = ids.size_bytes();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot write a temporary file", n < 0 ? errno : ENOSPC);
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    count_ += ids.size();
  }

  /// Reads up to out.size() ids starting at id number `first`; returns how many.
  std::size_t read(std::uint64_t first, std::span<object_id> out) const {
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(out.size(), count_ > first ? count_ - first : 0));
    auto* p = reinterpret_cast<char*>(out.data());
    std::size_t done = 0;
    const std::size_t bytes = want * object_id::size;
    while (done < bytes) {
      const ssize_t n =
          ::pread(fd_, p + done, bytes - done, static_cast<off_t>(first * object_id::size + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot read a temporary file", n < 0 ? errno : EIO);
      done += static_cast<std::size_t>(n);
    }
    return want;
  }

  std::uint64_t count() const noexcept { return count_; }

 private:
  int fd_ = -1;
  std::uint64_t count_ = 0;
};

/// Reads one run in order through a buffer.
class run_reader {
 public:
  run_reader(const run_file& f, std::size_t buffer_ids) : file_(&f), buf_(buffer_ids) {}
  /// The current id; precondition: !done().
  const object_id& front() const noexcept { return buf_[pos_]; }
  bool done() const noexcept { return pos_ == size_; }
  void pop() {
    if (++pos_ == size_) refill();
  }
  void refill() {
    size_ = file_->read(next_, buf_);
    next_ += size_;
    pos_ = 0;
  }

 private:
  const run_file* file_;
  std::vector<object_id> buf_;
  std::uint64_t next_ = 0;
  std::size_t pos_ = 0, size_ = 0;
};

/// Merges sorted runs, handing each id to `sink` in ascending order (duplicates included).
template <class Sink>
void merge(std::span<run_file> runs, std::size_t buffer_ids, Sink&& sink) {
  std::vector<run_reader> readers;
  readers.reserve(runs.size());
  for (auto& r : runs) {
    readers.emplace_back(r, buffer_ids);
    readers.back().refill();
  }
  // A binary min-heap of reader indices keyed by their current id.
  std::vector<std::size_t> heap;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    if (!readers[i].done()) heap.push_back(i);
  }
  const auto greater = [&](std::size_t a, std::size_t b) {
    return id_less(readers[b].front(), readers[a].front());
  };
  std::make_heap(heap.begin(), heap.end(), greater);
  while (!heap.empty()) {
    run_reader& r = readers[heap.front()];
    sink(r.front());
    r.pop();
    if (r.done()) {
      std::pop_heap(heap.begin(), heap.end(), greater);
      heap.pop_back();
    } else {
      // Sift the top down in place: cheaper than pop_heap + push_heap.
      const std::size_t n = heap.size();
      std::size_t i = 0;
      const std::size_t top = heap[0];
      for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && greater(heap[child], heap[child + 1])) ++child;
        if (!greater(top, heap[child])) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = top;
    }
  }
}

/// Counts equal neighbours in a sorted stream.
class counting_sink {
 public:
  counting_sink(uniqueness_summary& s, const duplicate_finder::duplicate_callback& cb)
      : s_(s), cb_(cb) {}
  void operator()(const object_id& id) {
    if (n_ != 0 && id == current_) {
      ++n_;
      return;
    }
    flush();
    current_ = id;
    n_ = 1;
  }
  void flush() {
    if (n_ == 0) return;
    ++s_.distinct;
    s_.max_count = std::max(s_.max_count, n_);
    if (n_ > 1) {
      ++s_.duplicated;
      s_.duplicates += n_ - 1;
      s_.colliding_pairs += n_ * (n_ - 1) / 2;
      if (cb_) cb_(current_, n_);
    }
    n_ = 0;
  }

 private:
  uniqueness_summary& s_;
  const duplicate_finder::duplicate_callback& cb_;
  object_id current_;
  std::uint64_t n_ = 0;
};

std::string default_temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

}  // namespace

struct duplicate_finder::impl {
  explicit impl(duplicate_finder_options o)
      : budget(std::max(o.memory_budget, min_budget)),
        capacity(budget / object_id::size),
        dir(o.temp_dir.empty() ? default_temp_dir() : std::move(o.temp_dir)) {}

  void spill() {
    std::sort(buf.begin(), buf.end(), id_less);
    run_file f(dir);
    f.append(buf);
    runs.push_back(std::move(f));
    ++runs_written;
    buf.clear();
  }

  std::size_t budget;
  std::size_t capacity;  // ids held in memory before a spill
  std::string dir;
  std::vector<object_id> buf;
  std::deque<run_file> runs;
  std::uint64_t total = 0;
  std::uint64_t runs_written = 0;
};

duplicate_finder::duplicate_finder(duplicate_finder_options options)
    : impl_(std::make_unique<impl>(std::move(options))) {}

duplicate_finder::~duplicate_finder() = default;

void duplicate_finder::add(std::span<const object_id> ids) {
  impl& m = *impl_;
  m.total += ids.size();
  while (!ids.empty()) {
    if (m.buf.size() == m.capacity) m.spill();
    if (m.buf.size() == m.buf.capacity()) {
      // Grow in steps, never past the budget (a plain push_back could double past it).
      m.buf.reserve(std::min(m.capacity, std::max<std::size_t>(4096, 2 * m.buf.capacity())));
    }
    const std::size_t n = std::min(ids.size(), m.buf.capacity() - m.buf.size());
    m.buf.insert(m.buf.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    ids = ids.subspan(n);
  }
}

uniqueness_summary duplicate_finder::finish(const duplicate_callback& on_duplicate) {
  impl& m = *impl_;
  uniqueness_summary s;
  s.ids = m.total;
  counting_sink count(s, on_duplicate);
  if (m.runs.empty()) {
    std::sort(m.buf.begin(), m.buf.end(), id_less);
    for (const auto& id : m.buf) count(id);
  } else {
    if (!m.buf.empty()) m.spill();
    m.buf = {};  // the merge buffers take the budget now
    const std::size_t fan_in = std::clamp<std::size_t>(m.budget / min_merge_buffer, 2, max_fan_in);
    // Merge the oldest runs into one until a single pass can take the rest. Each pass keeps every
    // copy, so the counts come out right in the final pass.
    while (m.runs.size() > fan_in) {
      std::vector<run_file> group;
      for (std::size_t i = 0; i < fan_in; ++i) {
        group.push_back(std::move(m.runs.front()));
        m.runs.pop_front();
      }
      const std::size_t ids_per_buffer = std::max<std::size_t>(
          1, m.budget / (fan_in + 1) / object_id::size);  // + 1: the output buffer
      run_file out(m.dir);
      std::vector<object_id> pending;
      pending.reserve(ids_per_buffer);
      merge(group, ids_per_buffer, [&](const object_id& id) {
        pending.push_back(id);
        if (pending.size() == ids_per_buffer) {
          out.append(pending);
          pending.clear();
        }
      });
      out.append(pending);
      m.runs.push_back(std::move(out));
    }
    std::vector<run_file> last;
    while (!m.runs.empty()) {
      last.push_back(std::move(m.runs.front()));
      m.runs.pop_front();
    }
    const std::size_t ids_per_buffer =
        std::max<std::size_t>(1, m.budget / last.size() / object_id::size);
    merge(last, ids_per_buffer, count);
  }
  count.flush();
  s.runs = m.runs_written;
  m.buf = {};
  m.runs.clear();
  m.total = 0;
  m.runs_written = 0;
  return s;
}

}  // namespace oid
