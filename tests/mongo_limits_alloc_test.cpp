// Memory a server cannot make the client take: a reply's header declaring a length the server
// does not send (47 MB, 2 GiB) is not allocated up front, and a cursor read through many
// getMore batches holds no more than its current batch's message and the connection's buffer.
// Its own binary: it replaces the global operator new to see the sizes the test's thread asks
// for (the scripted server's threads are not counted).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <oid/bson/builder.hpp>
#include <oid/detail/endian.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/script_server.hpp"

namespace {

// Blocks of at least this size that the counting thread allocates are followed until freed.
constexpr std::size_t large_block = 256 * 1024;

thread_local bool counting = false;

struct large_blocks {
  std::mutex mutex;
  std::array<std::pair<void*, std::size_t>, 64> live{};  // {nullptr, 0}: a free slot
  std::size_t live_bytes = 0, peak_bytes = 0, largest = 0;
  bool overflow = false;
};
large_blocks& blocks() {
  static large_blocks b;
  return b;
}

void note_allocation(void* p, std::size_t n) {
  auto& b = blocks();
  std::lock_guard lock(b.mutex);
  b.largest = std::max(b.largest, n);
  if (n < large_block) return;
  const auto slot = std::find(b.live.begin(), b.live.end(), std::pair<void*, std::size_t>{});
  if (slot == b.live.end()) {
    b.overflow = true;
    return;
  }
  *slot = {p, n};
  b.live_bytes += n;
  b.peak_bytes = std::max(b.peak_bytes, b.live_bytes);
}

void note_free(void* p) {
  if (p == nullptr) return;
  auto& b = blocks();
  std::lock_guard lock(b.mutex);
  for (auto& slot : b.live) {
    if (slot.first == p) {
      b.live_bytes -= slot.second;
      slot = {};
      return;
    }
  }
}

}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (counting) note_allocation(p, n);
  return p;
}
// Defined too, not left to forward to operator new: AddressSanitizer's runtime has its own, and
// the receive buffers are arrays.
void* operator new[](std::size_t n) { return ::operator new(n); }
// Not inlined: GCC would see free() of operator new's pointer in the callers of this file and warn
// (-Wmismatched-new-delete).
[[gnu::noinline]] void operator delete(void* p) noexcept {
  note_free(p);
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
  note_free(p);
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p) noexcept { ::operator delete(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;

// Starts counting the test thread's allocations (largest, and the large ones still live).
void start_counting() {
  auto& b = blocks();
  {
    std::lock_guard lock(b.mutex);
    b.largest = 0;
    b.peak_bytes = b.live_bytes;
  }
  counting = true;
}

// What `write` leaves: a header declaring `declared` bytes in reply to `request`, and the
// message's first `sent` bytes.
std::vector<std::uint8_t> declaring(const mongo::op_msg& request, std::uint32_t declared,
                                    std::size_t sent) {
  std::vector<std::uint8_t> out(sent, 0);
  oid::detail::store_le_u32(out.data(), declared);
  oid::detail::store_le_u32(out.data() + 4, 1);
  oid::detail::store_le_u32(out.data() + 8, static_cast<std::uint32_t>(request.request_id));
  oid::detail::store_le_u32(out.data() + 12, static_cast<std::uint32_t>(mongo::op_msg_opcode));
  return out;
}

TEST(MongoLimitsAllocTest, ADeclaredLengthIsNotAllocatedBeforeItArrives) {
  struct test_case {
    const char* name;
    std::uint32_t declared;
    bool close;  // else stall until the client gives up
    std::error_code want;
  };
  const test_case cases[] = {
      {"47 MB, then a stall", 47'000'000u, false, oid::mongo::errc::timeout},
      {"47 MB, then close", 47'000'000u, true, oid::mongo::errc::connection_closed},
      // Above the 48,000,000 bytes the client accepts, whatever the hello said.
      {"2 GiB - 1, then a stall", 0x7FFFFFFFu, false, errc::bad_length_prefix},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    script_server server([&](peer& p, int) {
      // The server claims it may send messages of 2^31-1 bytes.
      if (!p.handshake(100'000, 16 * 1024 * 1024, 0x7FFFFFFF)) return;
      auto m = p.read();
      if (!m) return;
      p.send(declaring(*m, c.declared, 100'000));
      if (c.close) return;
      while (p.read()) {  // stalls: until the client closes
      }
    });
    auto client = mongo::client::create(server.uri("&socketTimeoutMS=500")).value();
    const document cmd = ping();
    start_counting();
    auto r = client.run_command("admin", cmd.view());
    counting = false;
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, c.want) << r.error().message;
    // 100,000 bytes came: the buffer is at most twice that (from 64 KiB, doubling).
    std::size_t largest = 0;
    {
      std::lock_guard lock(blocks().mutex);
      largest = blocks().largest;
    }
    EXPECT_LE(largest, std::size_t{256 * 1024});
  }
}

// A cursor of `batches` batches (the first in find's reply, the others in getMore replies) of
// four documents of about 256 KiB each: about 1 MiB per message.
class cursor_server {
 public:
  explicit cursor_server(int batches)
      : server_([batches](peer& p, int) {
          if (!p.handshake()) return;
          const std::string pad(256 * 1024, 'x');
          int sent = 0;
          while (auto m = p.read()) {
            const std::string name = command_name(*m);
            if (name != "find" && name != "getMore") {
              const document ok = ok_reply();
              p.reply(*m, ok.view());
              continue;
            }
            ++sent;
            builder b;
            b.open_document("cursor").append_int64("id", sent < batches ? 42 : 0);
            b.append_string("ns", "db.c");
            b.open_array(name == "find" ? "firstBatch" : "nextBatch");
            for (int i = 0; i < 4; ++i) {
              b.open_document(std::to_string(i)).append_int32("n", sent * 4 + i);
              b.append_string("pad", pad).close();
            }
            b.close().close().append_double("ok", 1.0);
            p.reply(*m, b.view());
          }
        }) {}
  std::string uri() const { return server_.uri(); }

 private:
  script_server server_;
};

TEST(MongoLimitsAllocTest, ACursorHoldsItsBatchAndOneReceiveBufferWhateverTheBatches) {
  constexpr int batches = 30;
  constexpr std::size_t message = 4 * (256 * 1024 + 64);  // about one batch's reply
  cursor_server server(batches);
  auto client = mongo::client::create(server.uri()).value();
  start_counting();
  {
    auto cur = client.collection("db", "c").find({});
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
    int n = 0;
    while (true) {
      auto more = cur->next();
      ASSERT_TRUE(more.has_value()) << more.error().message;
      if (!*more) break;
      ++n;
    }
    EXPECT_EQ(n, 4 * batches);
  }
  counting = false;
  // Read under the lock, checked outside it: a failing check allocates and frees.
  bool overflow = false;
  std::size_t peak = 0;
  {
    auto& b = blocks();
    std::lock_guard lock(b.mutex);
    overflow = b.overflow;
    peak = b.peak_bytes;
  }
  EXPECT_FALSE(overflow);
  // The batch's buffer and the connection's (each about one message), and while a buffer grows,
  // its old and new blocks for a moment: never the 30 MiB of all the batches.
  EXPECT_LE(peak, 3 * message) << "peak of large blocks";
  EXPECT_GE(peak, message) << "the receive buffers were not seen";
}

}  // namespace
