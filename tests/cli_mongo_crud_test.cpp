// oid mongo count | update | delete | aggregate | indexes | drop, run in-process against the server
// of MONGODB_URI (FerretDB under scripts/test.sh); without it the tests skip, and fail under
// CI=true.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <string>
#include <vector>

#include "support/documents.hpp"
#include "support/run_cli.hpp"
#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

namespace mongo = oid::mongo;
using oid::bson::document;
using oid::testing::run_cli;

using oid::testing::json;

// The hex of an ObjectId of time `when` (ISO-8601) whose other bytes are `n`.
std::string id_at(const char* when, int n) { return oid::testing::id_at(when, n).to_hex(); }

class MongoCrudCliTest : public oid::testing::server_test {
 protected:
  MongoCrudCliTest() : server_test("oid_crud_") {}
  void SetUp() override {
    server_test::SetUp();
    ns_ = db_ + ".c";
  }
  mongo::collection coll() { return client_->collection(db_, "c"); }
  // Five documents: n 1..5, made on the first day of October 2010 (n 1, 2), November (n 3, 4)
  // and December (n 5); s "a" for odd n, "b" for even.
  void fill() {
    const char* days[] = {"2010-10-01", "2010-10-01", "2010-11-01", "2010-11-01", "2010-12-01"};
    std::vector<document> docs;
    for (int n = 1; n <= 5; ++n) {
      docs.push_back(json(R"({"_id": {"$oid": ")" + id_at(days[n - 1], n) + R"("}, "n": )" +
                          std::to_string(n) + R"(, "s": ")" + (n % 2 == 1 ? "a" : "b") + "\"}"));
    }
    std::vector<oid::bson::document_view> views;
    for (const auto& d : docs) views.push_back(d.view());
    auto r = coll().insert_many(views);
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  // The documents of the collection without their _id, as relaxed Extended JSON, sorted by n.
  std::vector<std::string> contents() {
    const auto sort = json(R"({"n": 1})");
    const auto projection = json(R"({"_id": 0})");
    mongo::find_options fo;
    fo.sort = sort.view();
    fo.projection = projection.view();
    auto cur = coll().find({}, fo);
    EXPECT_TRUE(cur.has_value());
    std::vector<std::string> out;
    while (cur && cur->next().value_or(false)) out.push_back(oid::bson::to_json(cur->current()));
    return out;
  }
  std::vector<std::string> index_names() { return oid::testing::index_names(coll()); }
  void expect_run(std::vector<std::string_view> args, const std::string& out) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, out);
  }
  // Runs `args`, which must fail with `status`, print nothing and say exactly `err`.
  void expect_refused(std::vector<std::string_view> args, int status, const std::string& err) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, err);
  }

  std::string ns_;
};

TEST_F(MongoCrudCliTest, CountWithFilterAndIdTime) {
  fill();
  expect_run({"mongo", "count", uri_, ns_}, "5 documents\n");
  expect_run({"mongo", "count", uri_, ns_, "--filter", R"({"s": "a"})"}, "3 documents\n");
  expect_run({"mongo", "count", uri_, ns_, "--since", "2010-11-01"}, "3 documents\n");
  expect_run({"mongo", "count", uri_, ns_, "--since", "2010-10-01", "--until", "2010-11-01"},
             "2 documents\n");
  expect_run({"mongo", "count", uri_, ns_, "--filter", R"({"s": "a"})", "--until", "2010-12-01"},
             "2 documents\n");
  const std::string none = db_ + ".none";
  expect_run({"mongo", "count", uri_, none}, "0 documents\n");
}

TEST_F(MongoCrudCliTest, UpdateOneManyAndUpsert) {
  fill();
  expect_run({"mongo", "update", uri_, ns_, R"({"s": "a"})", R"({"$set": {"t": 1}})"},
             "matched 1, modified 1\n");
  expect_run({"mongo", "update", uri_, ns_, R"({"s": "a"})", R"({"$set": {"t": 1}})", "--many"},
             "matched 3, modified 2\n");
  expect_run({"mongo", "update", uri_, ns_, R"({"n": 9})", R"({"$set": {"t": 2}})"},
             "matched 0, modified 0\n");
  expect_run({"mongo", "update", uri_, ns_, R"({"_id": 9, "n": 9})", R"({"$set": {"s": "c"}})",
              "--upsert"},
             "matched 0, modified 0, upserted {\"_id\":9}\n");
  EXPECT_EQ(contents(),
            (std::vector<std::string>{R"({"n":1,"s":"a","t":1})", R"({"n":2,"s":"b"})",
                                      R"({"n":3,"s":"a","t":1})", R"({"n":4,"s":"b"})",
                                      R"({"n":5,"s":"a","t":1})", R"({"n":9,"s":"c"})"}));
  // An upserted document without an _id in the filter gets an ObjectId: printed as its hex.
  const auto r = run_cli(
      {"mongo", "update", uri_, ns_, R"({"n": 10})", R"({"$set": {"s": "d"}})", "--upsert"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string prefix = "matched 0, modified 0, upserted ";
  ASSERT_EQ(r.out.size(), prefix.size() + 25) << r.out;
  EXPECT_EQ(r.out.substr(0, prefix.size()), prefix);
  EXPECT_TRUE(oid::object_id::from_hex(r.out.substr(prefix.size(), 24)).has_value()) << r.out;
}

TEST_F(MongoCrudCliTest, UpdateAndDeleteWithAHint) {
  fill();
  const auto keys = json(R"({"n": 1})");
  ASSERT_TRUE(coll().create_index(keys.view()).has_value());
  expect_run(
      {"mongo", "update", uri_, ns_, R"({"n": 1})", R"({"$set": {"t": 1}})", "--hint", "n_1"},
      "matched 1, modified 1\n");
  expect_run({"mongo", "update", uri_, ns_, R"({"n": {"$gte": 4}})", R"({"$set": {"t": 2}})",
              "--many", "--hint", R"( {"n": 1})"},
             "matched 2, modified 2\n");
  expect_run({"mongo", "delete", uri_, ns_, R"({"n": 2})", "--hint", "n_1"}, "deleted 1\n");
  expect_run({"mongo", "delete", uri_, ns_, R"({"n": 3})", "--hint", R"({"n": 1})"}, "deleted 1\n");
  EXPECT_EQ(contents(),
            (std::vector<std::string>{R"({"n":1,"s":"a","t":1})", R"({"n":4,"s":"b","t":2})",
                                      R"({"n":5,"s":"a","t":2})"}));
}

TEST_F(MongoCrudCliTest, DeleteOneAndMany) {
  fill();
  expect_run({"mongo", "delete", uri_, ns_, R"({"s": "b"})"}, "deleted 1\n");
  expect_run({"mongo", "delete", uri_, ns_, R"({"s": "a"})", "--many"}, "deleted 3\n");
  expect_run({"mongo", "delete", uri_, ns_, R"({"s": "a"})", "--many"}, "deleted 0\n");
  EXPECT_EQ(contents(), (std::vector<std::string>{R"({"n":4,"s":"b"})"}));
}

TEST_F(MongoCrudCliTest, AggregatePrintsExtendedJsonLines) {
  fill();
  expect_run({"mongo", "aggregate", uri_, ns_,
              R"([{"$match": {"n": {"$gte": 3}}}, {"$sort": {"n": -1}},
                  {"$project": {"_id": 0, "n": 1}}])"},
             "{\"n\":5}\n{\"n\":4}\n{\"n\":3}\n");
  expect_run({"mongo", "aggregate", uri_, ns_,
              R"([{"$group": {"_id": "$s", "total": {"$sum": "$n"}}}, {"$sort": {"_id": 1}}])"},
             "{\"_id\":\"a\",\"total\":9}\n{\"_id\":\"b\",\"total\":6}\n");
  const auto all = run_cli({"mongo", "aggregate", uri_, ns_, R"([{"$sort": {"n": 1}}])"});
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(oid::testing::lines(all.out).size(), 5u);
  EXPECT_EQ(oid::testing::lines(all.out).front(),
            R"({"_id":{"$oid":")" + id_at("2010-10-01", 1) + R"("},"n":1,"s":"a"})");
}

TEST_F(MongoCrudCliTest, IndexesCreateListDrop) {
  fill();
  expect_run({"mongo", "indexes", "create", uri_, ns_, R"({"n": 1})", "--unique"},
             "created index n_1\n");
  expect_run({"mongo", "indexes", "create", uri_, ns_, R"({"s": 1, "n": -1})", "--name", "by_s"},
             "created index by_s\n");
  EXPECT_EQ(index_names(), (std::vector<std::string>{"_id_", "by_s", "n_1"}));
  const auto list = run_cli({"mongo", "indexes", "list", uri_, ns_});
  EXPECT_EQ(list.status, 0) << list.err;
  auto specs = oid::testing::lines(list.out);
  std::sort(specs.begin(), specs.end());
  EXPECT_EQ(specs, (std::vector<std::string>{R"({"v":2,"key":{"_id":1},"name":"_id_"})",
                                             R"({"v":2,"key":{"n":1},"name":"n_1","unique":true})",
                                             R"({"v":2,"key":{"s":1,"n":-1},"name":"by_s"})"}));
  // The unique index refuses a second n 1.
  const auto dup = run_cli({"mongo", "update", uri_, ns_, R"({"n": 2})", R"({"$set": {"n": 1}})"});
  EXPECT_EQ(dup.status, 1);
  EXPECT_EQ(dup.out, "");
  // The server's words: MongoDB says E11000, FerretDB its SQLite constraint.
  EXPECT_EQ(dup.err.rfind("oid: update: ", 0), 0u) << dup.err;
  EXPECT_EQ(contents()[1], R"({"n":2,"s":"b"})");
  expect_run({"mongo", "indexes", "drop", uri_, ns_, "n_1"}, "dropped index n_1\n");
  EXPECT_EQ(index_names(), (std::vector<std::string>{"_id_", "by_s"}));
  expect_run({"mongo", "indexes", "drop", uri_, ns_, "--all"}, "dropped every index but _id_\n");
  EXPECT_EQ(index_names(), (std::vector<std::string>{"_id_"}));
}

TEST_F(MongoCrudCliTest, DropTheCollection) {
  fill();
  expect_run({"mongo", "drop", uri_, ns_}, "dropped " + ns_ + "\n");
  EXPECT_EQ(contents(), std::vector<std::string>{});
  expect_run({"mongo", "drop", uri_, ns_}, "dropped " + ns_ + "\n");  // gone: not an error
}

TEST_F(MongoCrudCliTest, BadInputIsReportedWithWhatAndWhere) {
  fill();
  // Bad Extended JSON: exit 1, naming the argument and the column.
  expect_refused({"mongo", "count", uri_, ns_, "--filter", R"({"n": })"}, 1,
                 "oid: --filter: invalid JSON at column 7\n");
  expect_refused({"mongo", "update", uri_, ns_, R"({"n" 1})", R"({"$set": {"t": 1}})"}, 1,
                 "oid: FILTER: invalid JSON at column 6\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", R"({"$set": {"t": })"}, 1,
                 "oid: UPDATE: invalid JSON at column 16\n");
  expect_refused({"mongo", "delete", uri_, ns_, "{,}"}, 1,
                 "oid: FILTER: invalid JSON at column 2\n");
  expect_refused({"mongo", "aggregate", uri_, ns_, R"([{"$match": }])"}, 1,
                 "oid: PIPELINE: invalid JSON at column 13\n");
  expect_refused({"mongo", "aggregate", uri_, ns_, R"({"$match": {}})"}, 1,
                 "oid: PIPELINE: expected a JSON array of stages, e.g. '[{\"$match\": {}}]'\n");
  expect_refused({"mongo", "aggregate", uri_, ns_, R"([{"$match": {}}, 1])"}, 1,
                 "oid: PIPELINE: stage 2 is not a document\n");
  expect_refused({"mongo", "indexes", "create", uri_, ns_, "{n: 1}"}, 1,
                 "oid: KEYS: invalid JSON at column 2\n");
  expect_refused({"mongo", "count", uri_, ns_, "--since", "2010-13-01"}, 1,
                 "oid: --since: invalid time \"2010-13-01\" at column 6 (ISO-8601 date or "
                 "date-time, or Unix seconds)\n");
  // Usage: exit 2.
  const std::vector<oid::testing::failing_run> usage = {
      {{"mongo", "count", uri_, "nodot"}, "expected DATABASE.COLLECTION, got 'nodot'"},
      {{"mongo", "update", uri_, ns_, "{}"}, "UPDATE is required"},
      {{"mongo", "delete", uri_, ns_}, "FILTER is required"},
      {{"mongo", "indexes", "drop", uri_, ns_}, "give an index NAME or --all"},
      {{"mongo", "indexes", "drop", uri_, ns_, "n_1", "--all"}, "give an index NAME or --all"},
      {{"mongo", "indexes", uri_, ns_}, "A subcommand is required"},
  };
  oid::testing::expect_failures(usage, 2);
  // Nothing was changed by any of them.
  EXPECT_EQ(contents().size(), 5u);
}

TEST_F(MongoCrudCliTest, BadPipelinesArrayFiltersAndHints) {
  fill();
  const std::string set = R"({"$set": {"a.$[e]": 0}})";
  expect_refused({"mongo", "update", uri_, ns_, "{}", R"([{"$set": }])"}, 1,
                 "oid: UPDATE: invalid JSON at column 11\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", R"([{"$set": {"a": 1}}, 2])"}, 1,
                 "oid: UPDATE: stage 2 is not a document\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", "[]"}, 1,
                 "oid: an update pipeline needs at least one stage\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", R"([{"n": 1}])"}, 1,
                 "oid: update pipeline stage 0 is not a document of one field named after a stage "
                 "({$set: ...})\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", set, "--arrayFilters", R"({"e": 1})"}, 1,
                 "oid: --arrayFilters: expected a JSON array of filters, e.g. "
                 "'[{\"e.n\": {\"$gt\": 1}}]'\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", set, "--arrayFilters", R"([{"e": 1}, 1])"}, 1,
                 "oid: --arrayFilters: filter 2 is not a document\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", set, "--arrayFilters", "[{e: 1}]"}, 1,
                 "oid: --arrayFilters: invalid JSON at column 3\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", R"([{"$set": {"a": 1}}])", "--arrayFilters",
                  R"([{"e": 1}])"},
                 1, "oid: array filters apply to update operators, not to a pipeline\n");
  expect_refused({"mongo", "update", uri_, ns_, "{}", set, "--hint", R"({"n": })"}, 1,
                 "oid: --hint: invalid JSON at column 7\n");
  expect_refused({"mongo", "delete", uri_, ns_, "{}", "--hint", "{n}"}, 1,
                 "oid: --hint: invalid JSON at column 2\n");
  EXPECT_EQ(contents().size(), 5u);
}

// FerretDB refuses arrayFilters and pipeline updates: the scripted server shows what is sent.
TEST(MongoCrudCliScriptTest, UpdateSendsArrayFiltersPipelinesAndHints) {
  std::mutex mutex;
  std::vector<std::string> writes;      // the update and delete commands, as Extended JSON
  std::vector<std::int64_t> max_times;  // their maxTimeMS: the command's time limit, left
  oid::testing::script_server server([&](oid::testing::peer& p, int) {
    if (!p.handshake()) return;
    while (auto m = p.read()) {
      const std::string name = oid::testing::command_name(*m);
      if (name == "update" || name == "delete") {
        oid::bson::builder b;  // without $db, lsid and maxTimeMS (checked apart: it varies)
        for (const auto& e : m->body) {
          if (e.key() != "$db" && e.key() != "lsid" && e.key() != "maxTimeMS") b.append_element(e);
        }
        std::lock_guard lock(mutex);
        const auto max_time = m->body.find("maxTimeMS");
        max_times.push_back(max_time ? max_time->get_int64().value_or(-1) : -1);
        writes.push_back(oid::bson::to_json(b.view()));
      }
      const auto reply = json(R"({"n": 2, "nModified": 1, "ok": 1})");
      p.reply(*m, reply.view());
    }
  });
  const std::string uri = server.uri();
  const auto r1 =
      run_cli({"mongo", "update", uri, "db.c", R"({"a": 1})", R"({"$set": {"a.$[e].x": 0}})",
               "--arrayFilters", R"([{"e.x": {"$gt": 2}}, {"f": 1}])", "--hint", "a_1", "--many"});
  EXPECT_EQ(r1.status, 0) << r1.err;
  EXPECT_EQ(r1.out, "matched 2, modified 1\n");
  const auto r2 = run_cli({"mongo", "update", uri, "db.c", "{}",
                           R"( [{"$set": {"m": {"$add": ["$n", 1]}}}, {"$unset": "old"}])",
                           "--hint", R"({"n": -1})", "--upsert"});
  EXPECT_EQ(r2.status, 0) << r2.err;
  const auto r3 = run_cli({"mongo", "delete", uri, "db.c", R"({"a": 1})", "--hint", "a_1"});
  EXPECT_EQ(r3.status, 0) << r3.err;
  EXPECT_EQ(r3.out, "deleted 2\n");
  std::lock_guard lock(mutex);
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(
      writes[0],
      R"({"update":"c","updates":[{"q":{"a":1},"u":{"$set":{"a.$[e].x":0}},"upsert":false,)"
      R"("multi":true,"arrayFilters":[{"e.x":{"$gt":2}},{"f":1}],"hint":"a_1"}],"ordered":true})");
  EXPECT_EQ(writes[1],
            R"({"update":"c","updates":[{"q":{},"u":[{"$set":{"m":{"$add":["$n",1]}}},)"
            R"({"$unset":"old"}],"upsert":true,"multi":false,"hint":{"n":-1}}],"ordered":true})");
  EXPECT_EQ(writes[2],
            R"({"delete":"c","deletes":[{"q":{"a":1},"limit":1,"hint":"a_1"}],"ordered":true})");
  // Under the commands' default --timeout (5 min: docs/command.md, "Time limits"), so the
  // server stops too.
  EXPECT_EQ(max_times.size(), 3u);
  for (const auto t : max_times) {
    EXPECT_GT(t, 0);
    EXPECT_LE(t, 300'000);
  }
}

}  // namespace

namespace {

// find and count send the --readConcern they are given; a level that is none is refused before
// anything is sent.
TEST(MongoCrudCliScriptTest, FindAndCountSendTheirReadConcern) {
  oid::testing::recording_server server;
  const std::string uri = server.uri();
  const auto find = run_cli({"mongo", "find", uri, "db.c", "--readConcern", "majority"});
  EXPECT_EQ(find.status, 0) << find.err;
  EXPECT_NE(server.last().find(R"("readConcern":{"level":"majority"})"), std::string::npos)
      << server.last();
  const auto count =
      run_cli({"mongo", "count", uri, "db.c", "--readConcern", R"({"level": "local"})"});
  EXPECT_EQ(count.status, 0) << count.err;
  EXPECT_EQ(count.out, "0 documents\n");
  EXPECT_NE(server.last().find(R"("readConcern":{"level":"local"})"), std::string::npos)
      << server.last();
  const auto seen = server.seen().size();
  for (const char* bad : {"bogus", R"({"level": "bogus"})", R"({"level": "local", "x": 1})"}) {
    const auto r = run_cli({"mongo", "count", uri, "db.c", "--readConcern", bad});
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_NE(r.err.find("oid: --readConcern: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is not a read concern"), std::string::npos) << r.err;
  }
  EXPECT_EQ(server.seen().size(), seen) << "a refused read concern sends nothing";
}

}  // namespace
