// Explicit sessions against the server MONGODB_URI names (FerretDB under scripts/test.sh, a
// standalone): one lsid on every command of a session, its cursors included; causal reads; and a
// transaction, which FerretDB cannot run, failing with the server's reason and the client's
// advice instead of writing anything. Transactions themselves are checked against the scripted
// replica set (mongo_transaction_test.cpp) and the unified suites (through the fault proxy).
#include <gtest/gtest.h>

#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/session.hpp>
#include <string>
#include <variant>
#include <vector>

#include "support/server_test.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

// A client of MONGODB_URI that keeps every command it starts.
struct observed {
  std::mutex m;
  std::vector<document> started;
  std::optional<mongo::client> client;

  explicit observed(const std::string& uri) {
    mongo::client_options o;
    o.on_command = [this](const mongo::command_event& e) {
      if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
        std::lock_guard lock(m);
        started.push_back(s->command);
      }
    };
    client.emplace(mongo::client::create(uri, std::move(o)).value());
  }
  std::vector<document> commands() {
    std::lock_guard lock(m);
    return started;
  }
};

std::string lsid_json(document_view cmd) {
  const auto l = cmd.find("lsid");
  if (!l) return "(none)";
  return oid::bson::to_json(l->get_document().value());
}

class MongoSessionServerTest : public server_test {};

TEST_F(MongoSessionServerTest, EveryCommandOfASessionAndItsCursorsCarriesItsLsid) {
  observed o(uri_);
  auto s = o.client->start_session().value();
  auto c = o.client->collection(db_, "c").with_session(s);
  std::vector<document> docs;
  for (int i = 0; i < 7; ++i) {
    builder b;
    b.append_int32("_id", i);
    docs.push_back(std::move(b).extract());
  }
  std::vector<document_view> views;
  for (const auto& d : docs) views.push_back(d.view());
  ASSERT_TRUE(c.insert_many(views));
  auto cur = c.find({}, {.batch_size = 2}).value();
  int n = 0;
  while (true) {
    auto more = cur.next();
    ASSERT_TRUE(more) << more.error().message;
    if (!*more) break;
    ++n;
  }
  EXPECT_EQ(n, 7);
  ASSERT_EQ(c.count_documents().value(), 7);
  ASSERT_TRUE(c.delete_many({}));

  const document id = s.id().value();
  const std::string want = oid::bson::to_json(id.view());
  int get_mores = 0;
  for (const auto& cmd : o.commands()) {
    const auto name = std::string(cmd.view().begin()->key());
    if (name == "hello" || name == "isMaster" || name == "endSessions") continue;
    get_mores += name == "getMore";
    EXPECT_EQ(lsid_json(cmd.view()), want) << name;
  }
  EXPECT_GE(get_mores, 3) << "seven documents in batches of two";
}

// FerretDB sends no operationTime, so a causally consistent session has nothing to wait for and
// its reads carry no afterClusterTime; an operation time the application gives the session
// (advance_operation_time) is sent, and FerretDB accepts it (and ignores it).
TEST_F(MongoSessionServerTest, CausalReadsCarryTheOperationTimeTheSessionKnows) {
  observed o(uri_);
  auto s = o.client->start_session().value();
  auto c = o.client->collection(db_, "c").with_session(s);
  builder d;
  d.append_int32("_id", 1);
  const auto doc = std::move(d).extract();
  ASSERT_TRUE(c.insert_one(doc.view()));
  EXPECT_FALSE(s.operation_time().has_value()) << "FerretDB sent an operationTime";
  ASSERT_TRUE(c.find_one());
  s.advance_operation_time({1'700'000'000, 1});
  const auto found = c.find_one();
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->has_value());
  std::vector<std::string> concerns;
  for (const auto& cmd : o.commands()) {
    if (cmd.view().begin()->key() != "find") continue;
    const auto rc = cmd.view().find("readConcern");
    concerns.push_back(rc ? oid::bson::to_json(rc->get_document().value()) : "(none)");
  }
  ASSERT_EQ(concerns.size(), 2u);
  EXPECT_EQ(concerns[0], "(none)");
  EXPECT_EQ(concerns[1], R"({"afterClusterTime":{"$timestamp":{"t":1700000000,"i":1}}})");
}

// FerretDB refuses the transaction's first command: the failure says why in the server's words
// and what the application needs, the commit fails too, and nothing was written.
TEST_F(MongoSessionServerTest, ATransactionFailsClearlyOnAServerThatCannotRunIt) {
  auto s = client_->start_session().value();
  auto c = coll().with_session(s);
  ASSERT_TRUE(s.start_transaction());
  builder d;
  d.append_int32("_id", 1);
  const auto doc = std::move(d).extract();
  const auto inserted = c.insert_one(doc.view());
  ASSERT_FALSE(inserted);
  EXPECT_NE(inserted.error().message.find("cannot run transactions"), std::string::npos)
      << inserted.error().message;
  EXPECT_NE(inserted.error().message.find("replica set"), std::string::npos);
  ASSERT_TRUE(inserted.error().server.has_value());
  const auto committed = s.commit_transaction();
  ASSERT_FALSE(committed);
  EXPECT_NE(committed.error().message.find("cannot run transactions"), std::string::npos)
      << committed.error().message;
  EXPECT_EQ(coll().count_documents().value(), 0) << "a refused transaction wrote nothing";
}

}  // namespace
