// What command events say besides the command: the operation they belong to (`operation_id`),
// the pool's connection (`connection_id`), the server's id of it (`server_connection_id`, from
// the handshake's connectionId) and, behind a load balancer, the server's `service_id`, as the
// command logging and monitoring specification lists them. Against scripted servers whose
// handshake gives those ids; mongo_client_test.cpp checks FerretDB's connectionId comes through.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/mongo/client.hpp>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "support/documents.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

const oid::object_id service = oid::object_id::from_hex("65a1b2c3d4e5f60718293a4b").value();

// A server whose hello says connectionId 1000 + the connection's number (and, when
// `load_balanced`, a serviceId), taking at most two documents per insert; find returns one
// document and a cursor id whose getMore ends it.
std::unique_ptr<script_server> server(bool load_balanced) {
  return std::make_unique<script_server>([load_balanced](peer& p, int number) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      builder b;
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        b.append_bool("isWritablePrimary", true).append_int32("maxWriteBatchSize", 2);
        b.append_int32("maxWireVersion", 17).append_int32("connectionId", 1000 + number);
        if (load_balanced) b.append_object_id("serviceId", service);
        if (load_balanced) b.append_string("msg", "isdbgrid");
      } else if (name == "insert") {
        b.append_int32("n", 2);
      } else if (name == "find" || name == "getMore") {
        b.open_document("cursor").append_int64("id", name == "find" ? 7 : 0);
        b.append_string("ns", "db.c").open_array(name == "find" ? "firstBatch" : "nextBatch");
        b.open_document("0").append_int32("_id", 1).close().close().close();
      }
      b.append_double("ok", 1.0);
      const document reply = std::move(b).extract();
      p.reply(*m, reply.view());
    }
  });
}

// The command events of a client, in order.
struct recorder {
  std::mutex m;
  std::vector<mongo::command_event> events;
  mongo::client_options options() {
    mongo::client_options o;
    o.on_command = [this](const mongo::command_event& e) {
      std::lock_guard lock(m);
      events.push_back(e);
    };
    return o;
  }
  std::vector<mongo::command_event> all() {
    std::lock_guard lock(m);
    return events;
  }
};

template <class F>
auto field_of(const mongo::command_event& e, F f) {
  return std::visit([&](const auto& ev) { return f(ev); }, e);
}

TEST(MongoCommandEventTest, EventsCarryTheOperationTheConnectionAndTheServersIdOfIt) {
  auto s = server(false);
  recorder r;
  auto client = mongo::client::create(s->uri(), r.options()).value();
  auto c = client.collection("db", "c");
  std::vector<document_view> docs;
  documents keep;
  for (int i = 0; i < 5; ++i) docs.push_back(keep(R"({"x": 1})"));
  ASSERT_TRUE(c.insert_many(docs));  // three inserts: 2 + 2 + 1
  auto cur = c.find();
  ASSERT_TRUE(cur) << cur.error().message;
  int n = 0;
  while (auto more = cur->next()) {
    if (!*more) break;
    ++n;
  }
  EXPECT_EQ(n, 2);  // find's document, then getMore's
  ASSERT_TRUE(c.insert_one(keep(R"({"x": 2})")));

  const auto events = r.all();
  ASSERT_EQ(events.size(), 12u);  // 3 inserts, find, getMore, insert: started and succeeded each
  std::vector<std::int64_t> ops;
  for (const auto& e : events) {
    const auto op = field_of(e, [](const auto& ev) { return ev.operation_id; });
    EXPECT_GT(op, 0);
    ops.push_back(op);
    // One connection: the pool's first, which the server numbered 0.
    EXPECT_EQ(field_of(e, [](const auto& ev) { return ev.connection_id; }), 1u);
    EXPECT_EQ(field_of(e, [](const auto& ev) { return ev.server_connection_id; }),
              std::optional<std::int64_t>(1000));
    EXPECT_FALSE(field_of(e, [](const auto& ev) { return ev.service_id; }).has_value());
  }
  // The batches of the bulk write share one id; the cursor's getMore has its find's; the next
  // operation has a new one.
  for (int i = 1; i < 6; ++i) EXPECT_EQ(ops[i], ops[0]) << i;
  EXPECT_EQ(ops[6], ops[7]);
  EXPECT_EQ(ops[8], ops[6]) << "the getMore of the find's cursor";
  EXPECT_EQ(ops[9], ops[6]);
  EXPECT_NE(ops[6], ops[0]);
  EXPECT_EQ(ops[10], ops[11]);
  EXPECT_EQ(std::set<std::int64_t>(ops.begin(), ops.end()).size(), 3u);
}

TEST(MongoCommandEventTest, BehindALoadBalancerEventsCarryTheServiceId) {
  auto s = server(true);
  recorder r;
  // No directConnection (script_server::uri's), which loadBalanced refuses.
  auto client =
      mongo::client::create("mongodb://" + s->address() + "/?loadBalanced=true", r.options());
  ASSERT_TRUE(client) << client.error().message;
  documents keep;
  ASSERT_TRUE(client->collection("db", "c").insert_one(keep(R"({"x": 1})")));
  const auto events = r.all();
  ASSERT_EQ(events.size(), 2u);
  for (const auto& e : events) {
    EXPECT_EQ(field_of(e, [](const auto& ev) { return ev.service_id; }),
              std::optional<oid::object_id>(service));
    EXPECT_EQ(field_of(e, [](const auto& ev) { return ev.server_connection_id; }),
              std::optional<std::int64_t>(1000));
  }
}

}  // namespace
