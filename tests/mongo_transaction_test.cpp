// Explicit sessions, causal consistency, read concern and transactions against the scripted
// replica set (support/script_replica_set.hpp), which runs transactions on a copy of its store and
// keeps a logical clock (operationTime, $clusterTime). What each command carries is checked as
// the server saw it. FerretDB has no transactions: mongo_session_server_test.cpp checks what it
// does with sessions.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/session.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/script_replica_set.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

document with_id(std::int32_t id) {
  builder b;
  b.append_int32("_id", id).append_int32("x", 1);
  return std::move(b).extract();
}

// The commands of `rs` named `name`, bodies only.
std::vector<document> bodies(script_replica_set& rs, std::string_view name) {
  std::vector<document> out;
  for (auto& c : rs.seen(name)) out.push_back(c.body);
  return out;
}

bool has(document_view d, std::string_view key) { return d.contains(key); }

std::string json_of(document_view d, std::string_view key) {
  const auto e = d.find(key);
  if (!e) return "(none)";
  builder b;
  b.append_element("v", *e);
  return oid::bson::to_json(b.view());
}

// A fault on the next command named `command`.
fault on_next(std::string command, fault::action what, std::int32_t code = 10107,
              std::vector<std::string> labels = {}) {
  fault f;
  f.command = std::move(command);
  f.what = what;
  f.code = code;
  f.labels = std::move(labels);
  return f;
}

mongo::read_preference secondary() {
  mongo::read_preference p;
  p.mode = mongo::read_mode::secondary;
  return p;
}

struct fixture : ::testing::Test {
  script_replica_set rs{make_options()};
  mongo::client client = mongo::client::create(rs.uri()).value();
  mongo::collection coll = client.collection("db", "c");
  std::deque<document> docs;

  static replica_set_options make_options() {
    replica_set_options o;
    o.cluster_time = true;
    return o;
  }
  // {_id: id, x: 1}, kept for the test's duration.
  document_view doc(std::int32_t id) { return docs.emplace_back(with_id(id)).view(); }
};

using MongoTransactionTest = fixture;

TEST_F(MongoTransactionTest, OperationsOfASessionShareItsLsid) {
  auto s = client.start_session().value();
  auto bound = coll.with_session(s);
  ASSERT_TRUE(bound.insert_one(doc(1)));
  ASSERT_TRUE(bound.find_one());
  ASSERT_TRUE(bound.count_documents());
  const auto inserts = rs.seen("insert");
  const auto finds = rs.seen("find");
  ASSERT_EQ(inserts.size(), 1u);
  ASSERT_EQ(finds.size(), 1u);
  EXPECT_FALSE(inserts[0].lsid.empty());
  EXPECT_EQ(inserts[0].lsid, finds[0].lsid);
  EXPECT_EQ(inserts[0].lsid, rs.seen("aggregate").at(0).lsid);
  // id() names the same session.
  const auto id = s.id().value();
  EXPECT_NE(oid::bson::to_json(id.view()).find("$binary"), std::string::npos);
}

TEST_F(MongoTransactionTest, CausalReadsAskForTheSessionsOperationTime) {
  auto s = client.start_session().value();
  auto bound = coll.with_session(s);
  ASSERT_TRUE(bound.insert_one(doc(1)));
  const auto after_insert = s.operation_time();
  ASSERT_TRUE(after_insert.has_value());
  ASSERT_TRUE(bound.find_one());
  const auto find = bodies(rs, "find").at(0);
  const auto rc = find.view().find("readConcern");
  ASSERT_TRUE(rc) << oid::bson::to_json(find.view());
  const auto after = rc->get_document()->find("afterClusterTime");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->get_timestamp().value(), *after_insert);
  // Gossip: commands after the first reply carry the highest $clusterTime seen.
  EXPECT_FALSE(has(bodies(rs, "insert").at(0).view(), "$clusterTime"));
  EXPECT_TRUE(has(find.view(), "$clusterTime"));
  // Not causally consistent: no afterClusterTime.
  auto plain = client.start_session({.causal_consistency = false}).value();
  ASSERT_TRUE(coll.with_session(plain).find_one());
  EXPECT_FALSE(has(bodies(rs, "find").at(1).view(), "readConcern"));
}

TEST_F(MongoTransactionTest, ReadConcernComesFromTheOperationTheHandleOrTheConnectionString) {
  auto by_uri = mongo::client::create(rs.uri("&readConcernLevel=majority")).value();
  ASSERT_TRUE(by_uri.collection("db", "c").find_one());
  EXPECT_EQ(json_of(bodies(rs, "find").at(0).view(), "readConcern"),
            R"({"v":{"level":"majority"}})");
  ASSERT_TRUE(coll.with_read_concern({.level = "local"}).find_one());
  EXPECT_EQ(json_of(bodies(rs, "find").at(1).view(), "readConcern"), R"({"v":{"level":"local"}})");
  mongo::find_options o;
  o.read_concern = mongo::read_concern{"linearizable"};
  ASSERT_TRUE(coll.with_read_concern({.level = "local"}).find_one({}, o));
  EXPECT_EQ(json_of(bodies(rs, "find").at(2).view(), "readConcern"),
            R"({"v":{"level":"linearizable"}})");
  // Writes take none.
  ASSERT_TRUE(by_uri.collection("db", "c").insert_one(doc(1)));
  EXPECT_FALSE(has(bodies(rs, "insert").at(0).view(), "readConcern"));
}

TEST_F(MongoTransactionTest, ATransactionsCommandsCarryItsFieldsAndCommitAppliesThem) {
  auto s = client.start_session().value();
  auto bound = coll.with_session(s);
  ASSERT_TRUE(s.start_transaction({.read_concern = mongo::read_concern{"snapshot"},
                                   .write_concern = mongo::write_concern::acknowledged()}));
  EXPECT_EQ(s.transaction_state(), mongo::transaction_state::starting);
  mongo::insert_options majority;
  majority.write_concern.w_tag = "majority";
  ASSERT_TRUE(bound.insert_one(doc(1), majority));
  EXPECT_EQ(s.transaction_state(), mongo::transaction_state::in_progress);
  ASSERT_TRUE(bound.insert_one(doc(2)));
  EXPECT_EQ(rs.documents(), 0u) << "nothing is visible before the commit";
  ASSERT_TRUE(s.commit_transaction());
  EXPECT_EQ(s.transaction_state(), mongo::transaction_state::committed);
  EXPECT_EQ(rs.documents(), 2u);
  EXPECT_EQ(rs.commits(), 1);

  const auto inserts = bodies(rs, "insert");
  ASSERT_EQ(inserts.size(), 2u);
  const auto first = inserts[0].view();
  EXPECT_EQ(json_of(first, "startTransaction"), R"({"v":true})");
  EXPECT_EQ(json_of(first, "autocommit"), R"({"v":false})");
  EXPECT_EQ(json_of(first, "txnNumber"), R"({"v":1})");
  EXPECT_EQ(json_of(first, "readConcern"), R"({"v":{"level":"snapshot"}})");
  EXPECT_FALSE(has(first, "writeConcern")) << "an operation in a transaction sends none";
  const auto second = inserts[1].view();
  EXPECT_FALSE(has(second, "startTransaction"));
  EXPECT_FALSE(has(second, "readConcern"));
  EXPECT_EQ(json_of(second, "autocommit"), R"({"v":false})");
  EXPECT_EQ(json_of(second, "txnNumber"), R"({"v":1})");
  const auto commit = bodies(rs, "commitTransaction").at(0);
  EXPECT_EQ(json_of(commit.view(), "txnNumber"), R"({"v":1})");
  EXPECT_EQ(json_of(commit.view(), "autocommit"), R"({"v":false})");
  EXPECT_EQ(json_of(commit.view(), "writeConcern"), R"({"v":{"w":1}})");
  EXPECT_EQ(json_of(commit.view(), "$db"), R"({"v":"admin"})");

  // The next transaction has the next number; an operation after it runs outside.
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(bound.insert_one(doc(3)));
  ASSERT_TRUE(s.commit_transaction());
  EXPECT_EQ(json_of(bodies(rs, "insert").at(2).view(), "txnNumber"), R"({"v":2})");
  ASSERT_TRUE(bound.find_one());
  EXPECT_FALSE(has(bodies(rs, "find").back().view(), "autocommit"));
}

TEST_F(MongoTransactionTest, AbortDiscardsTheWrites) {
  auto s = client.start_session().value();
  auto bound = coll.with_session(s);
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(bound.insert_one(doc(1)));
  ASSERT_TRUE(s.abort_transaction());
  EXPECT_EQ(s.transaction_state(), mongo::transaction_state::aborted);
  EXPECT_EQ(rs.documents(), 0u);
  EXPECT_EQ(rs.seen("abortTransaction").size(), 1u);
  // Ending a session aborts its transaction.
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(bound.insert_one(doc(2)));
  s.end_session();
  EXPECT_EQ(rs.seen("abortTransaction").size(), 2u);
  EXPECT_EQ(rs.documents(), 0u);
}

TEST_F(MongoTransactionTest, TheStateMachineRefusesCallsOutOfOrder) {
  auto s = client.start_session().value();
  EXPECT_EQ(s.commit_transaction().error().code, mongo::errc::session_misuse);
  EXPECT_EQ(s.abort_transaction().error().code, mongo::errc::session_misuse);
  ASSERT_TRUE(s.start_transaction());
  EXPECT_EQ(s.start_transaction().error().code, mongo::errc::session_misuse);
  // Nothing was sent: commit and abort send nothing either.
  ASSERT_TRUE(s.commit_transaction());
  ASSERT_TRUE(s.commit_transaction());
  EXPECT_EQ(s.abort_transaction().error().code, mongo::errc::session_misuse);
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(s.abort_transaction());
  EXPECT_EQ(s.abort_transaction().error().code, mongo::errc::session_misuse);
  EXPECT_EQ(s.commit_transaction().error().code, mongo::errc::session_misuse);
  EXPECT_TRUE(rs.seen("commitTransaction").empty());
  EXPECT_TRUE(rs.seen("abortTransaction").empty());
  EXPECT_EQ(
      s.start_transaction({.write_concern = mongo::write_concern::unacknowledged()}).error().code,
      mongo::errc::invalid_argument);
}

TEST_F(MongoTransactionTest, ACommandAskingASecondaryInsideATransactionIsRefused) {
  auto s = client.start_session().value();
  auto db = client.database("db").with_session(s);
  ASSERT_TRUE(s.start_transaction());
  const document find = oid::bson::from_json(R"({"find": "c"})").value();
  const auto before = rs.seen("find").size();
  auto r = db.run_command(find.view(), secondary());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, mongo::errc::invalid_argument);
  EXPECT_EQ(r.error().message, "read preference in a transaction must be primary");
  EXPECT_EQ(rs.seen("find").size(), before);  // nothing sent
  // The primary is what the transaction reads from anyway.
  ASSERT_TRUE(db.run_command(find.view(), mongo::read_preference{}).has_value());
  ASSERT_TRUE(s.abort_transaction());
}

TEST_F(MongoTransactionTest, MisusedSessionsAreRefusedBeforeAnythingIsSent) {
  auto s = client.start_session().value();
  auto other = mongo::client::create(rs.uri()).value();
  EXPECT_EQ(other.collection("db", "c").with_session(s).find_one().error().code,
            mongo::errc::session_misuse);
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  EXPECT_EQ(coll.with_session(s).insert_one(doc(1), w0).error().code,
            mongo::errc::invalid_argument);
  ASSERT_TRUE(s.start_transaction({.read_preference = secondary()}));
  const auto refused = coll.with_session(s).find_one();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("must be primary"), std::string::npos);
  auto bound = coll.with_session(s);
  s.end_session();
  EXPECT_EQ(bound.find_one().error().code, mongo::errc::session_misuse);
  EXPECT_TRUE(rs.seen("find").empty());
  EXPECT_TRUE(rs.seen("insert").empty());
}

TEST_F(MongoTransactionTest, CommitRetriesOnceWithMajorityAfterANetworkError) {
  auto s = client.start_session().value();
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(coll.with_session(s).insert_one(doc(1)));
  rs.add_fault(on_next("commitTransaction", fault::action::apply_then_reset));
  ASSERT_TRUE(s.commit_transaction());
  const auto commits = bodies(rs, "commitTransaction");
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_FALSE(has(commits[0].view(), "writeConcern"));
  EXPECT_EQ(json_of(commits[1].view(), "writeConcern"),
            R"({"v":{"w":"majority","wtimeout":10000}})");
  EXPECT_EQ(rs.commits(), 1);
  EXPECT_EQ(rs.documents(), 1u);
}

TEST_F(MongoTransactionTest, CommitFailingTwiceSaysItsOutcomeIsUnknown) {
  auto s = client.start_session().value();
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(coll.with_session(s).insert_one(doc(1)));
  rs.add_fault(on_next("commitTransaction", fault::action::reset));
  rs.add_fault(on_next("commitTransaction", fault::action::reset));
  const auto r = s.commit_transaction();
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().has_label("UnknownTransactionCommitResult")) << r.error().message;
  EXPECT_FALSE(r.error().has_label("TransientTransactionError"));
  // Called again, the commit runs again, and this time it goes through.
  ASSERT_TRUE(s.commit_transaction());
  EXPECT_EQ(rs.commits(), 1);
}

TEST_F(MongoTransactionTest, ANetworkErrorInsideATransactionIsTransient) {
  auto s = client.start_session().value();
  ASSERT_TRUE(s.start_transaction());
  rs.add_fault(on_next("insert", fault::action::reset));
  const auto r = coll.with_session(s).insert_one(doc(1));
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().has_label("TransientTransactionError")) << r.error().message;
  EXPECT_EQ(rs.seen("insert").size(), 1u) << "nothing is retried inside a transaction";
  EXPECT_TRUE(s.dirty());
}

// The issue's acceptance test: TransientTransactionError twice (the whole transaction runs
// again), then UnknownTransactionCommitResult once (the commit alone runs again): exactly one
// transaction is committed, and its write is in the store once.
TEST_F(MongoTransactionTest, WithTransactionRetriesTransientErrorsAndUnknownCommits) {
  auto s = client.start_session().value();
  auto bound = coll.with_session(s);
  rs.add_fault(on_next("insert", fault::action::refuse, 112, {"TransientTransactionError"}));
  rs.add_fault(on_next("insert", fault::action::refuse, 112, {"TransientTransactionError"}));
  rs.add_fault(on_next("commitTransaction", fault::action::apply_then_reset));
  int calls = 0;
  const auto r = s.with_transaction([&](mongo::session&) -> mongo::outcome<mongo::done> {
    ++calls;
    auto inserted = bound.insert_one(doc(1));
    if (!inserted) return inserted.error();
    return mongo::done{};
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(rs.commits(), 1);
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(s.transaction_state(), mongo::transaction_state::committed);
  // Three transactions started (numbers 1, 2, 3); the two that failed were aborted.
  const auto inserts = bodies(rs, "insert");
  ASSERT_EQ(inserts.size(), 3u);
  EXPECT_EQ(json_of(inserts[2].view(), "txnNumber"), R"({"v":3})");
  EXPECT_EQ(rs.seen("abortTransaction").size(), 2u);
  EXPECT_EQ(rs.seen("commitTransaction").size(), 2u);
}

TEST_F(MongoTransactionTest, WithTransactionReturnsAFailureWithoutLabelsAfterAborting) {
  auto s = client.start_session().value();
  auto bound = coll.with_session(s);
  int calls = 0;
  const auto r = s.with_transaction([&](mongo::session&) -> mongo::outcome<mongo::done> {
    ++calls;
    if (auto a = bound.insert_one(doc(1)); !a) return a.error();
    return mongo::failure(mongo::errc::invalid_argument, "the application changed its mind");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the application changed its mind");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.transaction_state(), mongo::transaction_state::aborted);
  EXPECT_EQ(rs.documents(), 0u);
}

TEST(MongoTransactionRecoveryTest, CommitAndAbortCarryTheLastRecoveryToken) {
  replica_set_options o;
  o.recovery_tokens = true;
  script_replica_set rs(o);
  auto client = mongo::client::create(rs.uri()).value();
  auto s = client.start_session().value();
  auto coll = client.collection("db", "c").with_session(s);
  const auto one = with_id(1), two = with_id(2);
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(coll.insert_one(one.view()));
  ASSERT_TRUE(s.commit_transaction());
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(coll.insert_one(two.view()));
  ASSERT_TRUE(s.abort_transaction());
  const auto commit = bodies(rs, "commitTransaction").at(0);
  EXPECT_EQ(json_of(commit.view(), "recoveryToken"), R"({"v":{"member":1,"txn":1}})");
  const auto abort = bodies(rs, "abortTransaction").at(0);
  EXPECT_EQ(json_of(abort.view(), "recoveryToken"), R"({"v":{"member":1,"txn":2}})")
      << "the token of the transaction being aborted, not the one before";
}

TEST_F(MongoTransactionTest, ACursorOpenedInATransactionGetsMoreInIt) {
  for (int i = 0; i < 5; ++i) rs.add_document(id_key(doc(i)));
  auto s = client.start_session().value();
  ASSERT_TRUE(s.start_transaction());
  auto cur = coll.with_session(s).find({}, {.batch_size = 2}).value();
  int n = 0;
  while (true) {
    auto more = cur.next();
    ASSERT_TRUE(more) << more.error().message;
    if (!*more) break;
    ++n;
  }
  EXPECT_EQ(n, 5);
  const auto gets = rs.seen("getMore");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0].lsid, rs.seen("find").at(0).lsid);
  EXPECT_EQ(json_of(gets[0].body.view(), "autocommit"), R"({"v":false})");
  EXPECT_EQ(json_of(gets[0].body.view(), "txnNumber"), R"({"v":1})");
  ASSERT_TRUE(s.commit_transaction());
}

// Two scripted mongoses of one sharded cluster: a transaction's commands, its commit included, go
// to the mongos its first command went to; operations outside it are spread by server selection;
// an error labelled TransientTransactionError unpins.
class two_mongoses {
 public:
  two_mongoses()
      : a_([this](peer& p, int) { serve(p, 0); }), b_([this](peer& p, int) { serve(p, 1); }) {}
  // localThresholdMS wide enough that both mongoses stay in the latency window on a loaded
  // machine, where one monitor's round trips can take 15 ms longer than the other's (the
  // default window) and every unpinned operation would then go to the faster one.
  std::string uri() const {
    return "mongodb://" + a_.address() + "," + b_.address() + "/?localThresholdMS=10000";
  }
  std::string address(int i) const { return i == 0 ? a_.address() : b_.address(); }
  // (mongos, command name) of every command but hello, in order.
  std::vector<std::pair<int, std::string>> seen() {
    std::lock_guard lock(m_);
    return seen_;
  }
  void forget() {
    std::lock_guard lock(m_);
    seen_.clear();
  }
  void refuse_next_insert_as_transient() {
    std::lock_guard lock(m_);
    refuse_insert_ = true;
  }

 private:
  void serve(peer& p, int i) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      builder b;
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        b.append_bool("isWritablePrimary", true).append_string("msg", "isdbgrid");
        b.append_int32("logicalSessionTimeoutMinutes", 30);
        b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", 17);
      } else {
        std::lock_guard lock(m_);
        seen_.emplace_back(i, name);
        if (name == "insert" && refuse_insert_) {
          refuse_insert_ = false;
          b.append_double("ok", 0.0).append_int32("code", 112);
          b.append_string("errmsg", "scripted write conflict");
          append_labels(b, {"TransientTransactionError"});
          const document refused = std::move(b).extract();
          p.reply(*m, refused.view());
          continue;
        }
        if (name == "insert") b.append_int32("n", 1);
      }
      b.append_double("ok", 1.0);
      const document reply = std::move(b).extract();
      p.reply(*m, reply.view());
    }
  }
  std::mutex m_;
  std::vector<std::pair<int, std::string>> seen_;
  bool refuse_insert_ = false;
  script_server a_, b_;
};

TEST(MongoTransactionMongosTest, ATransactionStaysOnTheMongosItStartedOn) {
  two_mongoses cluster;
  auto client = mongo::client::create(cluster.uri()).value();
  auto coll = client.collection("db", "c");
  // Let the client's monitors check both mongoses before counting: selection skips a server still
  // Unknown, and the inserts outside the transaction would all go to the other one (waiting for
  // five pings alone failed so under load: 20 of 20 on one mongos).
  const auto known_mongoses = [&] {
    std::size_t n = 0;
    for (const auto& [address, d] : client.topology().servers) {
      n += d.type == mongo::server_type::mongos;
    }
    return n;
  };
  const auto ping = oid::bson::from_json(R"({"ping": 1})").value();
  for (int i = 0; i < 500 && known_mongoses() < 2; ++i) {
    ASSERT_TRUE(client.run_command("admin", ping.view()));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(known_mongoses(), 2u);
  cluster.forget();

  auto s = client.start_session().value();
  auto in = coll.with_session(s);
  const auto doc = with_id(1);
  ASSERT_TRUE(s.start_transaction());
  EXPECT_EQ(s.pinned_server(), "");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(in.insert_one(doc.view()));
  const std::string pinned = s.pinned_server();
  ASSERT_FALSE(pinned.empty());
  ASSERT_TRUE(s.commit_transaction());
  const int mongos = pinned == cluster.address(0) ? 0 : 1;
  auto seen = cluster.seen();
  ASSERT_EQ(seen.size(), 21u);
  for (const auto& [m, name] : seen) EXPECT_EQ(m, mongos) << name;
  EXPECT_EQ(seen.back().second, "commitTransaction");

  // Outside a transaction: unpinned, and spread over both.
  cluster.forget();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(in.insert_one(doc.view()));
  EXPECT_EQ(s.pinned_server(), "");
  seen = cluster.seen();
  const auto on_a =
      std::count_if(seen.begin(), seen.end(), [](const auto& c) { return c.first == 0; });
  EXPECT_GT(on_a, 0);
  EXPECT_LT(on_a, 20);

  // A transient error unpins: the transaction may run again on any mongos.
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(in.insert_one(doc.view()));
  ASSERT_FALSE(s.pinned_server().empty());
  cluster.refuse_next_insert_as_transient();
  const auto refused = in.insert_one(doc.view());
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().has_label("TransientTransactionError"));
  EXPECT_EQ(s.pinned_server(), "");
  ASSERT_TRUE(s.abort_transaction());
}

}  // namespace
