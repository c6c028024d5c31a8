// The pure parts of sessions and retries: the server session pool (driver sessions
// specification) and which failures an operation may retry (retryable writes and reads).
#include <gtest/gtest.h>

#include <chrono>
#include <oid/bson/builder.hpp>
#include <set>
#include <thread>
#include <vector>

#include "mongo/operation/retry.hpp"
#include "mongo/operation/session_pool.hpp"
#include "mongo/wire/reply.hpp"

namespace {

using oid::errc;
using oid::mongo::failure;
using oid::mongo::server_error;
using oid::mongo::detail::server_session;
using oid::mongo::detail::session_pool;
using namespace std::chrono_literals;
using clock_type = server_session::clock;

constexpr std::chrono::minutes timeout{30};

TEST(SessionPoolTest, NewSessionsHaveDistinctVersion4Ids) {
  std::set<std::array<std::uint8_t, 16>> seen;
  const auto now = clock_type::now();
  for (int i = 0; i < 1000; ++i) {
    const auto s = server_session::make(now);
    EXPECT_EQ(s.id[6] >> 4, 4) << "version nibble";
    EXPECT_EQ(s.id[8] >> 6, 2) << "RFC 4122 variant";
    EXPECT_EQ(s.txn_number, 0);
    EXPECT_FALSE(s.dirty);
    seen.insert(s.id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(SessionPoolTest, ChecksOutTheMostRecentlyUsedSessionFirst) {
  session_pool pool;
  const auto t0 = clock_type::now();
  auto a = pool.check_out(timeout, t0);
  auto b = pool.check_out(timeout, t0);
  ASSERT_NE(a.id, b.id);
  const auto a_id = a.id, b_id = b.id;
  a.last_use = t0 + 1s;
  pool.check_in(std::move(a), timeout, t0 + 1s);
  b.last_use = t0 + 2s;
  pool.check_in(std::move(b), timeout, t0 + 2s);
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.check_out(timeout, t0 + 3s).id, b_id);
  EXPECT_EQ(pool.check_out(timeout, t0 + 3s).id, a_id);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(SessionPoolTest, NeverHandsOutASessionWithLessThanAMinuteLeft) {
  session_pool pool;
  const auto t0 = clock_type::now();
  auto s = pool.check_out(timeout, t0);
  const auto id = s.id;
  pool.check_in(std::move(s), timeout, t0);
  // 29 minutes later the session has exactly a minute left: still usable.
  EXPECT_EQ(pool.check_out(timeout, t0 + 29min).id, id);
  auto again = server_session::make(t0);
  const auto old_id = again.id;
  pool.check_in(std::move(again), timeout, t0);
  // One second past that it is about to expire: dropped, and a new one is made.
  const auto fresh = pool.check_out(timeout, t0 + 29min + 1s);
  EXPECT_NE(fresh.id, old_id);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(SessionPoolTest, TimeoutsBeyondTheClocksRangeDoNotOverflow) {
  // logicalSessionTimeoutMinutes is the server's, any int64 (fuzz_hostile_server sent the
  // smallest; the largest wrapped to a negative count of nanoseconds).
  const auto t0 = clock_type::now();
  const auto s = server_session::make(t0);
  EXPECT_FALSE(s.about_to_expire(std::chrono::minutes::max(), t0 + 1h));
  EXPECT_FALSE(s.about_to_expire(std::chrono::minutes(153'722'867), t0 + 1h));
  EXPECT_TRUE(s.about_to_expire(std::chrono::minutes::min(), t0 + 1h));
  EXPECT_TRUE(s.about_to_expire(std::chrono::minutes(-1), t0 + 1s));
  EXPECT_TRUE(s.about_to_expire(std::chrono::minutes(0), t0 + 1s));
  EXPECT_FALSE(s.about_to_expire(std::chrono::minutes(1), t0));
  EXPECT_TRUE(s.about_to_expire(std::chrono::minutes(1), t0 + 1s));
  session_pool pool;
  auto a = pool.check_out(std::chrono::minutes::max(), t0);
  const auto id = a.id;
  pool.check_in(std::move(a), std::chrono::minutes::max(), t0 + 1s);
  EXPECT_EQ(pool.check_out(std::chrono::minutes::max(), t0 + 1h).id, id);
  auto b = pool.check_out(std::chrono::minutes::min(), t0);
  pool.check_in(std::move(b), std::chrono::minutes::min(), t0);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(SessionPoolTest, CheckInDropsDirtyAndExpiringSessionsAndPrunesTheBack) {
  session_pool pool;
  const auto t0 = clock_type::now();
  auto old = server_session::make(t0);
  pool.check_in(std::move(old), timeout, t0);
  auto dirty = server_session::make(t0 + 10min);
  dirty.dirty = true;
  pool.check_in(std::move(dirty), timeout, t0 + 10min);
  EXPECT_EQ(pool.size(), 1u) << "a dirty session is not pooled";
  auto stale = server_session::make(t0);
  pool.check_in(std::move(stale), timeout, t0 + 29min + 30s);
  EXPECT_EQ(pool.size(), 0u) << "the returned session and the one at the back both expire soon";
  auto recent = server_session::make(t0 + 29min + 30s);
  pool.check_in(std::move(recent), timeout, t0 + 29min + 30s);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(SessionPoolTest, DrainTakesEverySession) {
  session_pool pool;
  const auto now = clock_type::now();
  for (int i = 0; i < 5; ++i) pool.check_in(server_session::make(now), timeout, now);
  EXPECT_EQ(pool.drain().size(), 5u);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(SessionPoolTest, ThreadsShareOnePoolWithoutLosingOrDuplicatingSessions) {
  session_pool pool;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 500; ++i) {
        auto s = pool.check_out(timeout);
        s.last_use = clock_type::now();
        pool.check_in(std::move(s), timeout);
      }
    });
  }
  for (auto& t : threads) t.join();
  // Never more sessions than operations running at once, all distinct.
  const auto left = pool.drain();
  EXPECT_GE(left.size(), 1u);
  EXPECT_LE(left.size(), 4u);
  std::set<std::array<std::uint8_t, 16>> ids;
  for (const auto& s : left) ids.insert(s.id);
  EXPECT_EQ(ids.size(), left.size());
}

server_error with_code(std::int32_t code) {
  server_error e;
  e.code = code;
  return e;
}

failure server_failure(std::int32_t code) {
  failure f(oid::mongo::errc::server_error, "insert: refused");
  f.server = with_code(code);
  return f;
}

TEST(RetryTest, NetworkFailuresAreRetryableWritesOnEveryServerVersion) {
  for (const oid::mongo::errc code :
       {oid::mongo::errc::connection_failed, oid::mongo::errc::connection_closed,
        oid::mongo::errc::timeout}) {
    failure f(code, "gone");
    oid::mongo::detail::add_retryable_write_label(f, 17);
    EXPECT_TRUE(oid::mongo::detail::is_retryable_write_failure(f));
    EXPECT_TRUE(oid::mongo::detail::is_retryable_read_failure(f));
  }
  failure refused(oid::mongo::errc::unexpected_reply, "reply to another request");
  oid::mongo::detail::add_retryable_write_label(refused, 17);
  EXPECT_FALSE(oid::mongo::detail::is_retryable_write_failure(refused));
}

TEST(RetryTest, OldServersGetTheLabelFromTheCodeNewOnesMustSendIt) {
  auto stepped_down = server_failure(10107);  // NotWritablePrimary
  oid::mongo::detail::add_retryable_write_label(stepped_down, 8);
  EXPECT_TRUE(oid::mongo::detail::is_retryable_write_failure(stepped_down));
  auto unlabelled = server_failure(10107);
  oid::mongo::detail::add_retryable_write_label(unlabelled, 9);
  EXPECT_FALSE(oid::mongo::detail::is_retryable_write_failure(unlabelled))
      << "4.4 and later label their retryable errors themselves";
  auto labelled = server_failure(112);  // WriteConflict, labelled by the server
  labelled.labels = {"RetryableWriteError"};
  oid::mongo::detail::add_retryable_write_label(labelled, 17);
  EXPECT_TRUE(oid::mongo::detail::is_retryable_write_failure(labelled));
  EXPECT_EQ(labelled.labels.size(), 1u) << "not added twice";
  auto duplicate = server_failure(11000);
  oid::mongo::detail::add_retryable_write_label(duplicate, 8);
  EXPECT_FALSE(oid::mongo::detail::is_retryable_write_failure(duplicate));
  failure wc(oid::mongo::errc::write_concern_failed, "insert: write concern");
  wc.write_concern_error = with_code(91);  // ShutdownInProgress
  oid::mongo::detail::add_retryable_write_label(wc, 8);
  EXPECT_TRUE(oid::mongo::detail::is_retryable_write_failure(wc));
}

TEST(RetryTest, RetryableReadCodes) {
  for (const std::int32_t code :
       {11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262, 134}) {
    EXPECT_TRUE(oid::mongo::detail::is_retryable_read_failure(server_failure(code))) << code;
  }
  for (const std::int32_t code : {0, 2, 11000, 13, 50, 43}) {
    EXPECT_FALSE(oid::mongo::detail::is_retryable_read_failure(server_failure(code))) << code;
  }
}

TEST(RetryTest, FailureOfReadsTheServersErrorLabels) {
  oid::bson::builder b;
  b.append_double("ok", 0.0).append_int32("code", 91).append_string("errmsg", "shutting down");
  b.open_array("errorLabels").append_string("0", "RetryableWriteError").close();
  const auto f = oid::mongo::detail::failure_of(b.view(), "insert");
  EXPECT_EQ(f.labels, std::vector<std::string>{"RetryableWriteError"});
  EXPECT_TRUE(f.has_label("RetryableWriteError"));
  EXPECT_FALSE(f.has_label("TransientTransactionError"));
}

}  // namespace
