// Allocations per operation of the client: a command, a find of one document and an insert of
// one, in steady state (connection, session and selection lists in place) against a scripted
// one-member deployment discovered from one seed (a monitor checks it), as a standalone and as a
// replica set primary (retryable writes: txnNumber). Every operator new of the test's thread is
// counted while the operations run (the scripted server's and the monitor's threads are not);
// the count per operation must be at most today's, and the same over 100 and over 1,000
// operations (nothing grows with the number of operations). Its own binary: it replaces the
// global operator new.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <vector>

#include "support/script_server.hpp"

namespace {
// Only the test's thread counts, and only inside `allocations_of`.
thread_local bool counting = false;
thread_local std::uint64_t counted = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (counting) ++counted;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// Not inlined: GCC would see free() of operator new's pointer in the callers of this file and warn
// (-Wmismatched-new-delete).
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;

// The operator new calls of `n` runs of `op` on this thread.
template <class Op>
std::uint64_t allocations_of(int n, Op&& op) {
  counted = 0;
  counting = true;
  for (int i = 0; i < n; ++i) op();
  counting = false;
  return counted;
}

// A one-member deployment: hello (with sessions; with setName and hosts as a replica set
// primary), insert acknowledged, find answering one document with the cursor exhausted, ok to
// anything else.
class deployment {
 public:
  explicit deployment(bool replica_set)
      : replica_set_(replica_set), server_([this](peer& p, int) { serve(p); }) {}
  // One seed, no directConnection: the client discovers the server and monitors it (every
  // 500 ms, so that no connection sits idle long enough for the script to give it up).
  std::string uri() const {
    return "mongodb://" + server_.address() +
           "/?heartbeatFrequencyMS=500&serverSelectionTimeoutMS=5000";
  }

 private:
  // The server's address, as the connection `p` reached it (the script's threads read nothing
  // the test's thread writes).
  static std::string address_of(const peer& p) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    ::getsockname(p.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
    return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }

  document hello(const std::string& address) const {
    builder b;
    b.append_bool("isWritablePrimary", true);
    if (replica_set_) {
      b.append_bool("secondary", false).append_string("setName", "rs0");
      b.append_int32("setVersion", 1);
      b.open_array("hosts").append_string("0", address).close();
      b.append_string("primary", address).append_string("me", address);
    }
    b.append_int32("logicalSessionTimeoutMinutes", 30);
    b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", 17);
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  void serve(peer& p) const {
    const std::string address = address_of(p);
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        const document h = hello(address);
        p.reply(*m, h.view());
      } else if (name == "insert") {
        acknowledge_insert(p, *m, m->sequences.empty() ? 0 : m->sequences[0].documents.size());
      } else if (name == "find") {
        builder b;
        b.open_document("cursor").append_int64("id", 0).append_string("ns", "db.coll");
        b.open_array("firstBatch").open_document("0").append_int32("_id", 1);
        b.append_string("text", "one document").close().close().close();
        b.append_double("ok", 1.0);
        p.reply(*m, b.view());
      } else {
        const document ok = ok_reply();
        p.reply(*m, ok.view());
      }
    }
  }

  const bool replica_set_;
  script_server server_;
};

class client_allocations : public ::testing::TestWithParam<bool> {};

// Runs `op` 20 times (connection, session, selection lists), then counts over 100 and 1,000
// runs: at most `bound` per operation, and the same per operation both times.
template <class Op>
void expect_steady(const char* what, std::uint64_t bound, Op&& op) {
  (void)allocations_of(20, op);
  const std::uint64_t hundred = allocations_of(100, op);
  const std::uint64_t thousand = allocations_of(1000, op);
  EXPECT_EQ(thousand, 10 * hundred)
      << what << ": " << hundred << " allocations in 100 operations, " << thousand << " in 1,000";
  EXPECT_LE(hundred, 100 * bound) << what << ": " << static_cast<double>(hundred) / 100
                                  << " allocations per operation, at most " << bound << " expected";
}

// What each allocation is (a bound goes down when one goes; it goes up only with a reason):
// - every command: the command with lsid (and txnNumber) appended (attempt::command); the
//   message is written into the connection's send buffer, which it keeps (connection::sent);
// - run_command (2): the reply copied out;
// - find one (3): its command and the cursor's state; the receive buffer the connection gets in
//   place of the one the cursor keeps (its first batch is a view into it) is the last cursor's,
//   which the client kept (client_state::keep_spare_buffer);
// - insert_one (10): in bulk_write the ids, the documents given an _id and the statements (three
//   vectors), the document with its new _id, its {_id}, the insert command and the list of
//   document sequences; the reply copied out; insert_many_result's list of ids.
TEST_P(client_allocations, AreBoundedAndTheSameForEveryOperation) {
  deployment d(GetParam());
  auto c = mongo::client::create(d.uri()).value();
  auto coll = c.collection("db", "coll");
  const document ping = [] {
    builder b;
    b.append_int32("ping", 1);
    return std::move(b).extract();
  }();
  const document filter = [] {
    builder b;
    b.append_int32("_id", 1);
    return std::move(b).extract();
  }();
  const document small = [] {
    builder b;
    b.append_string("text", "a small document").append_int32("n", 1);
    return std::move(b).extract();
  }();
  mongo::find_options first;
  first.limit = 1;

  expect_steady("run_command", 2, [&] { ASSERT_TRUE(c.run_command("admin", ping.view())); });
  expect_steady("find one", 3, [&] {
    auto cur = coll.find(filter.view(), first);
    ASSERT_TRUE(cur);
    int found = 0;
    while (cur->next().value()) ++found;
    ASSERT_EQ(found, 1);
  });
  expect_steady("insert_one", 10, [&] {
    auto r = coll.insert_one(small.view());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->inserted, 1);
  });
}

INSTANTIATE_TEST_SUITE_P(Deployments, client_allocations, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ReplicaSet" : "Standalone"; });

}  // namespace
