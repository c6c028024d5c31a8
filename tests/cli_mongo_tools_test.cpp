// oid mongo dump | restore, run in-process against the server of MONGODB_URI (FerretDB under
// scripts/test.sh); without it the tests skip, and fail under CI=true. The format checks with
// PyMongo's bson module run when a Python with it is found (build/pymongo-venv, which
// scripts/bench-client.sh makes, or python3), and fail under CI when none is.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/stream_reader.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "mongo/archive.hpp"
#include "support/ci.hpp"
#include "support/documents.hpp"
#include "support/run_cli.hpp"
#include "support/run_shell.hpp"
#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

namespace fs = std::filesystem;
namespace mongo = oid::mongo;
using oid::bson::document;
using oid::testing::run_cli;

std::string bytes_of(oid::bson::document_view d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

// The documents of a .bson file, as their bytes.
std::vector<std::string> read_bson_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  oid::bson::stream_reader reader(in);
  std::vector<std::string> out;
  while (true) {
    auto more = reader.next();
    EXPECT_TRUE(more.has_value()) << path;
    if (!more || !*more) break;
    out.push_back(bytes_of(reader.current()));
  }
  return out;
}

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

using oid::testing::id_at;
using oid::testing::json;

class MongoToolsCliTest : public oid::testing::server_test {
 protected:
  MongoToolsCliTest() : server_test("oid_tools_") {}
  void SetUp() override {
    server_test::SetUp();
    dir_ = fs::path(::testing::TempDir()) / ("oid_dump_" + db_);
    dir_text_ = dir_.string();  // arguments are views: of a string that lives as long as the test
  }
  void TearDown() override {
    server_test::TearDown();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  void insert(std::string_view name, const std::vector<document>& docs) {
    std::vector<oid::bson::document_view> views;
    for (const auto& d : docs) views.push_back(d.view());
    auto r = coll(name).insert_many(views);
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  // The documents of the collection as the server sends them, sorted by their bytes.
  std::vector<std::string> contents(std::string_view name) {
    auto cur = coll(name).find();
    EXPECT_TRUE(cur.has_value());
    std::vector<std::string> out;
    while (cur && cur->next().value_or(false)) out.push_back(bytes_of(cur->current()));
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> index_names(std::string_view name) {
    return oid::testing::index_names(coll(name));
  }
  // The collection's index specifications, as Extended JSON, sorted.
  std::vector<std::string> index_specs(std::string_view name) {
    std::vector<std::string> out;
    const auto list = coll(name).list_indexes();
    EXPECT_TRUE(list.has_value());
    if (!list) return out;
    for (const auto& spec : *list) out.push_back(oid::bson::to_json(spec.view()));
    std::sort(out.begin(), out.end());
    return out;
  }
  // Documents of many types, each with an ObjectId _id.
  void fill(std::string_view name, int count) {
    std::vector<document> docs;
    for (int i = 0; i < count; ++i) {
      docs.push_back(json(R"({"_id": {"$oid": ")" + oid::generate().to_hex() + R"("}, "n": )" +
                          std::to_string(i) + R"(, "s": "text é )" + std::to_string(i) +
                          R"(", "d": 1.5, "big": {"$numberLong": "9007199254740993"},
              "when": {"$date": "2024-05-06T07:08:09.123Z"}, "flag": true, "none": null,
              "bin": {"$binary": {"base64": "AAEC", "subType": "00"}},
              "nested": {"a": [1, "two", {"three": 3}]}, "re": {"$regularExpression":
              {"pattern": "^a", "options": "i"}}})"));
    }
    insert(name, docs);
  }
  // A unique index on n (fill()'s counter), as the round-trip tests restore it.
  void unique_n_index(std::string_view name) {
    mongo::index_options unique;
    unique.unique = true;
    const auto n_key = json(R"({"n": 1})");
    ASSERT_TRUE(coll(name).create_index(n_key.view(), unique).has_value());
  }
  fs::path file(std::string_view name) const { return dir_ / db_ / name; }

  fs::path dir_;
  std::string dir_text_;
};

TEST_F(MongoToolsCliTest, DumpDropRestoreGivesTheSameBytesAndIndexes) {
  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    fill("c", 300);
    unique_n_index("c");
    mongo::index_options sparse;
    sparse.sparse = true;
    const auto sd_key = json(R"({"s": 1, "d": -1})");
    ASSERT_TRUE(coll("c").create_index(sd_key.view(), sparse).has_value());
    fill("other", 5);
    const auto before = contents("c");
    const auto indexes_before = index_specs("c");
    ASSERT_EQ(before.size(), 300u);

    std::vector<std::string_view> args = {"mongo", "dump", uri_, "--db", db_, "--out", dir_text_};
    if (gzip) args.push_back("--gzip");
    auto dump = run_cli(args);
    ASSERT_EQ(dump.status, 0) << dump.err;
    EXPECT_EQ(dump.out, "");  // its log is on standard error, as mongodump's
    EXPECT_NE(dump.err.find("dumped 305 documents"), std::string::npos) << dump.err;
    EXPECT_NE(dump.err.find(db_ + ".c: 300 documents"), std::string::npos) << dump.err;
    const std::string gz = gzip ? ".gz" : "";
    ASSERT_TRUE(fs::exists(file("c.bson" + gz)));
    ASSERT_TRUE(fs::exists(file("c.metadata.json" + gz)));
    ASSERT_TRUE(fs::exists(file("other.bson" + gz)));
    EXPECT_FALSE(fs::exists(file("c.bson" + gz + ".partial")));
    if (!gzip) {
      // The file holds the documents exactly as the server sent them.
      auto dumped = read_bson_file(file("c.bson"));
      std::sort(dumped.begin(), dumped.end());
      EXPECT_EQ(dumped, before);
      const auto meta = json(oid::testing::read_file(file("c.metadata.json").string()));
      EXPECT_EQ(meta.view().find("collectionName")->get_string().value_or(""), "c");
      EXPECT_EQ(meta.view().find("type")->get_string().value_or(""), "collection");
    }

    ASSERT_TRUE(client_->collection(db_, "c").drop().has_value());
    ASSERT_TRUE(client_->collection(db_, "other").drop().has_value());
    auto restore = run_cli({"mongo", "restore", uri_, dir_text_});
    ASSERT_EQ(restore.status, 0) << restore.err;
    EXPECT_EQ(restore.out, "");
    EXPECT_NE(restore.err.find("restored 305 documents"), std::string::npos) << restore.err;
    EXPECT_EQ(contents("c"), before);
    EXPECT_EQ(contents("other").size(), 5u);
    EXPECT_EQ(index_names("c"), (std::vector<std::string>{"_id_", "n_1", "s_1_d_-1"}));
    EXPECT_EQ(index_specs("c"), indexes_before);  // as the server lists them
    ASSERT_TRUE(client_->collection(db_, "c").drop().has_value());
    ASSERT_TRUE(client_->collection(db_, "other").drop().has_value());
    fs::remove_all(dir_);
  }
}

// mongorestore's --dryRun (everything read and checked, nothing connected to or written, from a
// directory or an archive), --noOptionsRestore and --bypassDocumentValidation.
TEST_F(MongoToolsCliTest, RestoreDryRunNoOptionsRestoreAndBypassDocumentValidation) {
  const auto create = json(R"({"create": "capped", "capped": true, "size": 65536})");
  ASSERT_TRUE(client_->run_command(db_, create.view()).has_value());
  insert("capped", {json(R"({"_id": 1})"), json(R"({"_id": 2})"), json(R"({"_id": 3})")});
  fill("c", 5);
  const std::string archive = (dir_ / "all.archive").string();
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "-d", db_, "-o", dir_text_, "--quiet"}).status, 0);
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "-d", db_, "--archive=" + archive, "--quiet"}).status,
            0);
  const auto options_of = [&](std::string_view name) {
    auto listed = client_->list_collections(db_);
    EXPECT_TRUE(listed.has_value());
    for (const auto& entry : listed.value_or(std::vector<document>{})) {
      if (entry.view().find("name")->get_string().value_or("") != name) continue;
      const auto o = entry.view().find("options");
      return o ? oid::bson::to_json(o->get_document().value_or(oid::bson::document_view()))
               : std::string("{}");
    }
    return std::string("(none)");
  };
  ASSERT_NE(options_of("capped").find("\"capped\":true"), std::string::npos)
      << options_of("capped");
  ASSERT_TRUE(coll("capped").drop().has_value());
  ASSERT_TRUE(coll("c").drop().has_value());

  // --dryRun connects to nothing: a URI where no server listens is never tried.
  const std::string nowhere = "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200";
  for (const std::string& source : {"--dir=" + dir_text_, "--archive=" + archive}) {
    auto dry = run_cli({"mongo", "restore", nowhere, source, "--dryRun"});
    EXPECT_EQ(dry.status, 0) << source << ": " << dry.err;
    EXPECT_NE(dry.err.find("dry run: would restore 8 documents"), std::string::npos) << dry.err;
    EXPECT_NE(dry.err.find(db_ + ".capped: 3 documents"), std::string::npos) << dry.err;
  }
  EXPECT_EQ(options_of("capped"), "(none)");  // nothing was written
  EXPECT_EQ(options_of("c"), "(none)");
  // A damaged file is found by the dry run, as by a restore.
  const auto damaged = dir_ / "damaged";
  fs::create_directories(damaged / db_);
  const std::string bytes = oid::testing::read_file(file("c.bson").string());
  write_file(damaged / db_ / "c.bson", bytes.substr(0, bytes.size() - 3));
  auto dry_damaged = run_cli({"mongo", "restore", nowhere, damaged.string(), "--dryRun"});
  EXPECT_EQ(dry_damaged.status, 1);
  EXPECT_NE(dry_damaged.err.find("c.bson: document 4"), std::string::npos) << dry_damaged.err;

  // --noOptionsRestore: the capped collection comes back as a plain one, its documents in it.
  auto plain = run_cli({"mongo", "restore", uri_, dir_text_, "--noOptionsRestore",
                        "--bypassDocumentValidation", "--nsInclude", db_ + ".*", "--quiet"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(options_of("capped").find("capped"), std::string::npos) << options_of("capped");
  EXPECT_EQ(contents("capped").size(), 3u);
  EXPECT_EQ(contents("c").size(), 5u);
  // Without it, the options come back.
  auto with_options = run_cli({"mongo", "restore", uri_, dir_text_, "--drop", "--quiet"});
  ASSERT_EQ(with_options.status, 0) << with_options.err;
  EXPECT_NE(options_of("capped").find("\"capped\":true"), std::string::npos)
      << options_of("capped");
}

// mongorestore's -d DB DIR/DB (a database into another) and -d DB -c COLL FILE.bson (a file into
// a collection, with the metadata beside it).
TEST_F(MongoToolsCliTest, RestoreIntoAnotherDatabaseOrCollection) {
  fill("c", 4);
  unique_n_index("c");
  fill("d", 2);
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "-d", db_, "-o", dir_text_, "--quiet"}).status, 0);
  const std::string other = db_ + "_to";
  const auto in_other = [&](std::string_view name) { return client_->collection(other, name); };
  struct drop_other {
    mongo::client& c;
    std::string db;
    ~drop_other() {
      const auto drop = json(R"({"dropDatabase": 1})");
      (void)c.run_command(db, drop.view());
    }
  } cleanup{*client_, other};

  const std::string db_dir = (dir_ / db_).string();
  auto whole = run_cli({"mongo", "restore", uri_, "-d", other, db_dir, "--quiet"});
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_EQ(in_other("c").count_documents().value(), 4);
  EXPECT_EQ(in_other("d").count_documents().value(), 2);
  EXPECT_EQ(oid::testing::index_names(in_other("c")), (std::vector<std::string>{"_id_", "n_1"}));

  auto one = run_cli({"mongo", "restore", uri_, "--db", other, "--collection", "renamed",
                      (dir_ / db_ / "c.bson").string(), "--quiet"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(in_other("renamed").count_documents().value(), 4);  // not into c: -c wins
  EXPECT_EQ(oid::testing::index_names(in_other("renamed")),
            (std::vector<std::string>{"_id_", "n_1"}));  // the metadata beside the file

  // --nsFrom/--nsTo, from the directory and from an archive; a bad pair is a usage error, and a
  // name MongoDB would refuse is not restored.
  const std::string archive = (dir_ / "all.archive").string();
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "-d", db_, "--archive=" + archive, "--quiet"}).status,
            0);
  for (const std::string& source : {"--dir=" + dir_text_, "--archive=" + archive}) {
    auto renamed = run_cli({"mongo", "restore", uri_, source, "--nsInclude", db_ + ".*", "--nsFrom",
                            db_ + ".$name$", "--nsTo", other + ".from_$name$", "--quiet"});
    ASSERT_EQ(renamed.status, 0) << source << ": " << renamed.err;
    EXPECT_EQ(in_other("from_c").count_documents().value(), 4) << source;
    EXPECT_EQ(in_other("from_d").count_documents().value(), 2) << source;
    ASSERT_TRUE(in_other("from_c").drop().has_value());
    ASSERT_TRUE(in_other("from_d").drop().has_value());
  }
  auto unpaired = run_cli({"mongo", "restore", uri_, dir_text_, "--nsFrom", db_ + ".*"});
  EXPECT_EQ(unpaired.status, 2);
  EXPECT_NE(unpaired.err.find("come in pairs"), std::string::npos) << unpaired.err;
  auto bad_target = run_cli({"mongo", "restore", uri_, dir_text_, "--nsInclude", db_ + ".c",
                             "--nsFrom", db_ + ".*", "--nsTo", "a/b.*"});
  EXPECT_EQ(bad_target.status, 1);
  EXPECT_NE(bad_target.err.find("not restored: --nsTo makes it \"a/b.c\""), std::string::npos)
      << bad_target.err;

  // -c without -d, a directory with -c, a file without -c, and -d with an archive: refused.
  EXPECT_EQ(run_cli({"mongo", "restore", uri_, "-c", "x", dir_text_}).status, 2);
  auto dir_for_file = run_cli({"mongo", "restore", uri_, "-d", other, "-c", "x", db_dir});
  EXPECT_EQ(dir_for_file.status, 1);
  EXPECT_NE(dir_for_file.err.find("give a .bson or .bson.gz file"), std::string::npos)
      << dir_for_file.err;
  auto file_for_db =
      run_cli({"mongo", "restore", uri_, "-d", other, (dir_ / db_ / "c.bson").string()});
  EXPECT_EQ(file_for_db.status, 1);
  EXPECT_NE(file_for_db.err.find("give a database's directory"), std::string::npos)
      << file_for_db.err;
  EXPECT_EQ(run_cli({"mongo", "restore", uri_, "-d", other, "--archive=x"}).status, 2);
  auto bad_name = run_cli({"mongo", "restore", uri_, "-d", "a/b", db_dir});
  EXPECT_EQ(bad_name.status, 1);
  EXPECT_NE(bad_name.err.find("cannot contain '/'"), std::string::npos) << bad_name.err;
}

// mongodump's --viewsAsCollections, against a scripted server (FerretDB has no views): a view's
// documents are dumped as a collection's, without the view's definition and without asking for
// its indexes, which a server refuses for a view.
TEST(MongoToolsScriptTest, ViewsAsCollectionsDumpsAViewsDocuments) {
  oid::testing::recording_server server(
      [](const std::string& name, oid::bson::document_view body, std::size_t) {
        oid::bson::builder b;
        const auto target = body.begin()->get_string().value_or("");
        if (name == "hello" || name == "isMaster") {
          b.append_bool("isWritablePrimary", true).append_int32("maxWireVersion", 17);
        } else if (name == "buildInfo") {
          b.append_string("version", "7.0.0");
        } else if (name == "listIndexes" && target == "v") {
          b.append_double("ok", 0.0).append_string("errmsg",
                                                   "Namespace d.v is a view, not a collection");
          b.append_int32("code", 166).append_string("codeName", "CommandNotSupportedOnView");
          return std::move(b).extract();
        } else if (name == "listCollections" || name == "find" || name == "listIndexes") {
          b.open_document("cursor").append_int64("id", 0).append_string("ns", "d.x");
          b.open_array("firstBatch");
          if (name == "listCollections") {
            b.open_document("0").append_string("name", "c").append_string("type", "collection");
            b.open_document("options").close().close();
            b.open_document("1").append_string("name", "v").append_string("type", "view");
            b.open_document("options").append_string("viewOn", "c");
            b.open_array("pipeline").close().close().close();
          } else if (name == "find") {
            const int n = target == "v" ? 2 : 3;
            for (int i = 0; i < n; ++i)
              b.open_document(std::to_string(i)).append_int32("_id", i).close();
          } else {
            b.open_document("0").append_int32("v", 2).append_string("name", "_id_");
            b.open_document("key").append_int32("_id", 1).close().close();
          }
          b.close().close();
        }
        b.append_double("ok", 1.0);
        return std::move(b).extract();
      });
  const auto dir = fs::path(::testing::TempDir()) / ("oid_views_" + oid::generate().to_hex());
  const std::string out = dir.string();
  const auto read = [&](const char* name) {
    return oid::testing::read_file((dir / "d" / name).string());
  };

  auto plain = run_cli({"mongo", "dump", server.uri(), "-d", "d", "-o", out, "--quiet"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_FALSE(fs::exists(dir / "d" / "v.bson"));  // a view: its definition only
  EXPECT_NE(read("v.metadata.json").find(R"("viewOn":"c")"), std::string::npos);
  fs::remove_all(dir);

  auto views = run_cli(
      {"mongo", "dump", server.uri(), "-d", "d", "-o", out, "--quiet", "--viewsAsCollections"});
  ASSERT_EQ(views.status, 0) << views.err;
  EXPECT_EQ(read_bson_file(dir / "d" / "v.bson").size(), 2u);
  EXPECT_EQ(read_bson_file(dir / "d" / "c.bson").size(), 3u);
  const auto meta = read("v.metadata.json");
  EXPECT_EQ(meta.find("viewOn"), std::string::npos) << meta;
  EXPECT_NE(meta.find(R"("type":"collection")"), std::string::npos) << meta;
  fs::remove_all(dir);
}

TEST_F(MongoToolsCliTest, SinceAndUntilSelectByTheIdsTime) {
  std::vector<document> docs;
  const char* times[] = {"2020-06-01",           "2021-01-01T00:00:00Z", "2021-06-01",
                         "2022-12-31T23:59:59Z", "2023-01-01T00:00:00Z", "2024-01-01"};
  for (int i = 0; i < 6; ++i) {
    oid::bson::builder b;
    b.append_object_id("_id", id_at(times[i], i)).append_int32("i", i);
    docs.push_back(std::move(b).extract());
  }
  insert("c", docs);
  auto dump = run_cli({"mongo", "dump", uri_, "--db", db_, "--collection", "c", "--out", dir_text_,
                       "--since", "2021-01-01", "--until", "2023-01-01"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  const auto dumped = read_bson_file(file("c.bson"));
  std::vector<std::string> want = {bytes_of(docs[1].view()), bytes_of(docs[2].view()),
                                   bytes_of(docs[3].view())};
  auto got = dumped;
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);

  // --query narrows further (into an empty place: dump never replaces the files of another run).
  fs::remove_all(dir_ / db_);
  auto query = run_cli({"mongo", "dump", uri_, "--db", db_, "--collection", "c", "--out", dir_text_,
                        "--since", "2021-01-01", "--query", R"({"i": {"$gt": 2}})"});
  ASSERT_EQ(query.status, 0) << query.err;
  EXPECT_EQ(read_bson_file(file("c.bson")).size(), 3u);  // 3, 4, 5
}

TEST_F(MongoToolsCliTest, UsageAndArgumentErrors) {
  auto no_db =
      run_cli({"mongo", "dump", "mongodb://127.0.0.1:1/", "--collection", "c", "--out", dir_text_});
  EXPECT_EQ(no_db.status, 2);
  EXPECT_NE(no_db.err.find("--collection needs --db"), std::string::npos) << no_db.err;
  auto bad_time = run_cli(
      {"mongo", "dump", "mongodb://127.0.0.1:1/", "--out", dir_text_, "--since", "2021-13-01"});
  EXPECT_EQ(bad_time.status, 1);
  EXPECT_NE(bad_time.err.find("--since"), std::string::npos) << bad_time.err;
  auto bad_query = run_cli(
      {"mongo", "dump", "mongodb://127.0.0.1:1/", "--out", dir_text_, "--query", "{\"a\":"});
  EXPECT_EQ(bad_query.status, 1);
  EXPECT_NE(bad_query.err.find("--query"), std::string::npos) << bad_query.err;
  auto missing =
      run_cli({"mongo", "dump", uri_, "--db", db_, "--collection", "nope", "--out", dir_text_});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no collection nope"), std::string::npos) << missing.err;
  auto absent = run_cli({"mongo", "restore", uri_, dir_text_});
  EXPECT_EQ(absent.status, 1);
  EXPECT_NE(absent.err.find("cannot read " + dir_text_), std::string::npos) << absent.err;
  fs::create_directories(dir_ / "db");
  auto empty = run_cli({"mongo", "restore", uri_, dir_text_});
  EXPECT_EQ(empty.status, 1);
  EXPECT_NE(empty.err.find("nothing to restore"), std::string::npos) << empty.err;
}

TEST_F(MongoToolsCliTest, DuplicatesAreReportedPerDocumentAndCounted) {
  fill("c", 10);
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "--db", db_, "--out", dir_text_}).status, 0);
  const auto offsets_of = [&] {
    std::vector<std::uint64_t> offsets;
    std::ifstream in(file("c.bson"), std::ios::binary);
    oid::bson::stream_reader reader(in);
    while (reader.next().value_or(false)) offsets.push_back(reader.document_offset());
    return offsets;
  };
  const auto offsets = offsets_of();
  ASSERT_EQ(offsets.size(), 10u);
  // Three of the ten gone: those are restored, the seven others are duplicate keys.
  auto c = coll("c");
  for (int n : {2, 5, 7}) {
    oid::bson::builder f;
    f.append_int32("n", n);
    ASSERT_EQ(c.delete_one(f.view()).value(), 1);
  }
  auto r = run_cli({"mongo", "restore", uri_, dir_text_, "--noIndexRestore"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(db_ + ".c: 3 documents, 7 duplicate keys"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("7 duplicate keys, 0 other refusals"), std::string::npos) << r.err;
  const std::string path = file("c.bson").string();
  EXPECT_NE(r.err.find(path + ": document 0 (offset 0): duplicate key"), std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find(path + ": document 9 (offset " + std::to_string(offsets[9]) + "): duplicate key"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(contents("c").size(), 10u);

  // --ordered stops the file at its first refusal, and says so.
  for (int n : {2, 5, 7}) {
    oid::bson::builder f;
    f.append_int32("n", n);
    ASSERT_EQ(c.delete_one(f.view()).value(), 1);
  }
  auto ordered = run_cli({"mongo", "restore", uri_, dir_text_, "--ordered", "--noIndexRestore"});
  EXPECT_EQ(ordered.status, 1);
  EXPECT_NE(ordered.err.find("stopped at document 0 (--ordered)"), std::string::npos)
      << ordered.err;
  EXPECT_EQ(contents("c").size(), 7u);

  // --drop first: everything goes in again.
  auto dropped = run_cli({"mongo", "restore", uri_, dir_text_, "--drop"});
  EXPECT_EQ(dropped.status, 0) << dropped.err;
  EXPECT_EQ(contents("c").size(), 10u);
}

TEST_F(MongoToolsCliTest, CorruptTruncatedAndBadMetadataFilesAreReportedWithTheirOffsets) {
  std::string three;
  std::vector<std::uint64_t> offsets;
  for (int i = 0; i < 3; ++i) {
    offsets.push_back(three.size());
    const auto d = json(R"({"_id": )" + std::to_string(i) + R"(, "x": "abc"})");
    three += bytes_of(d.view());
  }
  const std::size_t second = offsets[1], third = offsets[2];
  // truncated: the third document cut in the middle.
  write_file(file("truncated.bson"), three.substr(0, three.size() - 5));
  // badlength: the second document's length prefix says 2.
  std::string bad = three;
  bad[second] = 2;
  bad[second + 1] = bad[second + 2] = bad[second + 3] = 0;
  write_file(file("badlength.bson"), bad);
  // badtype: the second document's first element has type 0x55, its length is sane.
  std::string badtype = three;
  badtype[second + 4] = 0x55;
  write_file(file("badtype.bson"), badtype);
  // badmeta: metadata that is not JSON; its documents are not restored.
  write_file(file("badmeta.bson"), three);
  write_file(file("badmeta.metadata.json"), "{\"indexes\": [\n  {\"key\": }]}");
  write_file(file("good.bson"), three);

  auto r = run_cli({"mongo", "restore", uri_, dir_text_});
  EXPECT_EQ(r.status, 1);
  const auto has = [&](const std::string& s) {
    EXPECT_NE(r.err.find(s), std::string::npos) << "want: " << s << "\nin:\n" << r.err;
  };
  has(file("truncated.bson").string() + ": document 2 at offset " + std::to_string(third));
  has(file("badlength.bson").string() + ": document 1 at offset " + std::to_string(second));
  has(file("badtype.bson").string() + ": document 1 at offset " + std::to_string(second));
  has("the rest of the file is not restored");
  has(file("badmeta.metadata.json").string() + ": line 2, column 11");
  has(db_ + ".badmeta not restored");
  EXPECT_EQ(contents("truncated").size(), 2u);
  EXPECT_EQ(contents("badlength").size(), 1u);
  EXPECT_EQ(contents("badtype").size(), 1u);
  EXPECT_EQ(contents("badmeta").size(), 0u);
  EXPECT_EQ(contents("good").size(), 3u);

  // --keep-going skips the document whose length is sane; a bad length still ends the file.
  auto again = run_cli({"mongo", "restore", uri_, dir_text_, "--drop", "--keep-going",
                        "--nsInclude", db_ + ".bad*", "--nsExclude", db_ + ".badmeta"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("skipped (--keepGoing)"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("truncated"), std::string::npos) << again.err;  // not included
  EXPECT_EQ(contents("badtype").size(), 2u);
  EXPECT_EQ(contents("badlength").size(), 1u);
}

TEST_F(MongoToolsCliTest, TruncatedGzipIsReported) {
  fill("c", 200);
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "--db", db_, "--out", dir_text_, "--gzip"}).status, 0);
  const auto path = file("c.bson.gz");
  const auto whole = oid::testing::read_file(path.string());
  write_file(path, whole.substr(0, whole.size() / 2));
  ASSERT_TRUE(coll("c").drop().has_value());
  auto r = run_cli({"mongo", "restore", uri_, dir_text_});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(path.string() + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("of the uncompressed data"), std::string::npos) << r.err;
  const auto restored = contents("c").size();
  EXPECT_GT(restored, 0u);
  EXPECT_LT(restored, 200u);
  EXPECT_NE(r.err.find(db_ + ".c: " + std::to_string(restored) + " documents (incomplete"),
            std::string::npos)
      << r.out;
}

// A Python with PyMongo's bson module, or "" when there is none. /usr/bin/python3 is Debian's,
// which has it from scripts/install-deps.sh (python3-bson) when the `python3` on PATH is another.
std::string pymongo_python() {
  for (const std::string& candidate :
       {oid::testing::environment("OID_PYMONGO_PYTHON"),
        std::string(OID_SOURCE_DIR) + "/build/pymongo-venv/bin/python", std::string("python3"),
        std::string("/usr/bin/python3")}) {
    if (candidate.empty()) continue;
    if (oid::testing::run_shell(candidate + " -c 'import bson, bson.json_util'").status == 0) {
      return candidate;
    }
  }
  return "";
}

TEST_F(MongoToolsCliTest, PyMongoReadsTheDumpAndOidRestoresAPyMongoDump) {
  const std::string python = pymongo_python();
  if (python.empty()) OID_SKIP_OR_FAIL_IN_CI("no Python with PyMongo's bson module");
  fill("c", 50);
  const auto key = json(R"({"n": -1})");
  ASSERT_TRUE(coll("c").create_index(key.view()).has_value());
  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    std::vector<std::string_view> args = {"mongo", "dump", uri_, "--db", db_, "--out", dir_text_};
    if (gzip) args.push_back("--gzip");
    ASSERT_EQ(run_cli(args).status, 0);
    const std::string script = R"(
import bson, gzip, json, sys
d, gz = sys.argv[1], sys.argv[2] == "1"
op = gzip.open if gz else open
with op(d + "/c.bson" + (".gz" if gz else ""), "rb") as f:
    docs = list(bson.decode_file_iter(f))
with op(d + "/c.metadata.json" + (".gz" if gz else ""), "rt") as f:
    meta = json.load(f)
print(len(docs), sum(x["n"] for x in docs), docs[0]["big"], meta["collectionName"],
      sorted(i["name"] for i in meta["indexes"]))
)";
    const std::string script_path = (dir_ / "check.py").string();
    write_file(script_path, script);
    auto r = oid::testing::run_shell(python + " " + script_path + " " + (dir_ / db_).string() +
                                     (gzip ? " 1" : " 0"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "50 1225 9007199254740993 c ['_id_', 'n_-1']\n");
    fs::remove_all(dir_ / db_);
  }

  // A dump directory as a PyMongo script writes one in mongodump's layout.
  const std::string writer = R"(
import bson, sys, os
from bson import json_util
from bson.objectid import ObjectId
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
with open(d + "/py.bson", "wb") as f:
    for i in range(20):
        f.write(bson.encode({"_id": ObjectId(), "i": i, "l": [i, str(i)], "sub": {"x": i * 0.5}}))
meta = {"options": {}, "indexes": [{"v": 2, "key": {"_id": 1}, "name": "_id_"},
        {"v": 2, "key": {"i": 1}, "name": "i_1", "unique": True}],
        "uuid": "0123456789abcdef0123456789abcdef", "collectionName": "py", "type": "collection"}
with open(d + "/py.metadata.json", "w") as f:
    f.write(json_util.dumps(meta, json_options=json_util.CANONICAL_JSON_OPTIONS))
)";
  const std::string writer_path = (dir_ / "write.py").string();
  write_file(writer_path, writer);
  auto w = oid::testing::run_shell(python + " " + writer_path + " " + (dir_ / db_).string());
  ASSERT_EQ(w.status, 0) << w.err;
  auto r = run_cli({"mongo", "restore", uri_, dir_text_, "--nsInclude", db_ + ".py"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(contents("py").size(), 20u);
  EXPECT_EQ(index_names("py"), (std::vector<std::string>{"_id_", "i_1"}));
}

}  // namespace

namespace {

using oid::testing::lines;

TEST_F(MongoToolsCliTest, ExportThenImportGivesTheSameDocuments) {
  fill("c", 40);
  const auto before = contents("c");
  const std::string ns = db_ + ".c";
  for (const bool array : {false, true}) {
    for (const bool canonical : {false, true}) {
      SCOPED_TRACE(std::string(array ? "array " : "lines ") +
                   (canonical ? "canonical" : "relaxed"));
      std::vector<std::string_view> args = {"mongo", "export", uri_, ns};
      if (array) args.push_back("--jsonArray");
      if (canonical) args.push_back("--canonical");
      auto exported = run_cli(args);
      ASSERT_EQ(exported.status, 0) << exported.err;
      EXPECT_NE(exported.err.find("exported 40 documents"), std::string::npos) << exported.err;
      if (array) {
        EXPECT_EQ(exported.out.front(), '[');
      } else {
        EXPECT_EQ(lines(exported.out).size(), 40u);
      }
      const std::string target = db_ + ".copy";
      auto imported = run_cli({"mongo", "import", uri_, target, "--drop"}, exported.out);
      ASSERT_EQ(imported.status, 0) << imported.err;
      EXPECT_NE(imported.err.find("imported 40 documents"), std::string::npos) << imported.err;
      EXPECT_EQ(contents("copy"), before);
    }
  }
  // Importing the same again: 40 duplicate keys, each named by its place.
  auto exported = run_cli({"mongo", "export", uri_, ns});
  auto again = run_cli({"mongo", "import", uri_, ns}, exported.out);
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("imported 0 documents"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("40 refused"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("stdin: document 40: duplicate key"), std::string::npos) << again.err;
  // --mode upsert replaces them; merge sets fields on them.
  auto upsert = run_cli({"mongo", "import", uri_, ns, "--mode", "upsert"}, exported.out);
  EXPECT_EQ(upsert.status, 0) << upsert.err;
  EXPECT_EQ(contents("c"), before);
  auto merge = run_cli({"mongo", "import", uri_, ns, "--mode", "merge", "--upsertFields", "n"},
                       "{\"n\": 3, \"extra\": true}\n{\"n\": 1000, \"extra\": true}\n");
  EXPECT_EQ(merge.status, 0) << merge.err;
  EXPECT_EQ(contents("c").size(), 41u);
  const auto extra = json(R"({"extra": true})");
  EXPECT_EQ(coll("c").count_documents(extra.view()).value(), 2);
}

// Invocations written for mongodump, mongorestore, mongoexport and mongoimport, run with
// `oid mongo` put in front of the subcommand: the same flags, the same result.
TEST_F(MongoToolsCliTest, ScriptsWrittenForMongoToolsRunUnchanged) {
  fill("c", 30);
  const auto before = contents("c");
  const std::string out = (dir_ / "dump").string(), json_file = (dir_ / "c.json").string();
  fs::create_directories(dir_);
  // mongodump --uri U -d DB -c COLL -o DIR --gzip -j 2
  auto dumped = run_cli({"mongo", "dump", "--uri", uri_, "-d", db_, "-c", "c", "-o", out, "--gzip",
                         "-j", "2", "--quiet"});
  ASSERT_EQ(dumped.status, 0) << dumped.err;
  EXPECT_TRUE(fs::exists(fs::path(out) / db_ / "c.bson.gz"));
  // mongorestore --uri U --dir DIR --drop --stopOnError --numParallelCollections 2
  //   --writeConcern "{w:'majority'}" --nsInclude 'DB.*'
  auto restored = run_cli({"mongo", "restore", "--uri", uri_, "--dir", out, "--drop",
                           "--stopOnError", "--numParallelCollections", "2", "--writeConcern",
                           "{w:'majority'}", "--nsInclude", db_ + ".*", "--quiet"});
  ASSERT_EQ(restored.status, 0) << restored.err;
  EXPECT_EQ(contents("c"), before);
  // mongoexport --uri U -d DB -c COLL -o FILE --jsonFormat canonical -q FILTER
  auto exported = run_cli({"mongo", "export", "--uri", uri_, "-d", db_, "-c", "c", "-o", json_file,
                           "--jsonFormat", "canonical", "-q", R"({"n": {"$lt": 10}})", "--quiet"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  std::ifstream in(json_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(lines(text).size(), 10u);
  EXPECT_NE(text.find(R"("$numberInt")"), std::string::npos);  // canonical
  // mongoimport --uri U -d DB -c COLL --file FILE --drop, and with the file as the positional
  for (const bool positional : {false, true}) {
    std::vector<std::string_view> args = {"mongo", "import", "--uri", uri_,    "-d",
                                          db_,     "-c",     "copy",  "--drop"};
    if (!positional) args.push_back("--file");
    args.push_back(json_file);
    auto imported = run_cli(args);
    ASSERT_EQ(imported.status, 0) << imported.err;
    EXPECT_EQ(coll("copy").count_documents().value(), 10);
  }
  // find and count take mongo-tools' -q for their filter.
  auto counted = run_cli({"mongo", "count", uri_, db_ + ".copy", "-q", R"({"n": {"$gte": 5}})"});
  EXPECT_EQ(counted.status, 0) << counted.err;
  EXPECT_NE(counted.out.find("5"), std::string::npos) << counted.out;
  // A namespace given twice, differently, and a write concern oid cannot read: refused.
  auto both = run_cli({"mongo", "export", uri_, db_ + ".c", "-d", "other"});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("differ"), std::string::npos) << both.err;
  auto bad =
      run_cli({"mongo", "restore", "--uri", uri_, "--dir", out, "--writeConcern", "{w: 1, x: 2}"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("'x'"), std::string::npos) << bad.err;
}

// mongodump's --excludeCollection, --excludeCollectionsWithPrefix (each repeatable, with --db)
// and --queryFile.
TEST_F(MongoToolsCliTest, DumpExcludesCollectionsAndReadsTheQueryFromAFile) {
  for (const char* name : {"keep", "skip", "tmp_a", "tmp_b", "other"}) fill(name, 3);
  const std::string out = (dir_ / "dump").string(), query = (dir_ / "query.json").string();
  auto dumped = run_cli({"mongo", "dump", uri_, "-d", db_, "-o", out, "--excludeCollection", "skip",
                         "--excludeCollection", "other", "--excludeCollectionsWithPrefix", "tmp_",
                         "--quiet"});
  ASSERT_EQ(dumped.status, 0) << dumped.err;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(out) / db_)) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"keep.bson", "keep.metadata.json"}));

  write_file(query, R"({"n": {"$gte": 1}})");
  fs::remove_all(fs::path(out) / db_);  // dump never replaces the files of another run
  auto filtered = run_cli(
      {"mongo", "dump", uri_, "-d", db_, "-c", "keep", "-o", out, "--queryFile", query, "--quiet"});
  ASSERT_EQ(filtered.status, 0) << filtered.err;
  EXPECT_EQ(read_bson_file(fs::path(out) / db_ / "keep.bson").size(), 2u);

  // Without --db, with --collection, or with both --query and --queryFile: usage errors.
  auto no_db = run_cli({"mongo", "dump", uri_, "--excludeCollection", "skip", "-o", out});
  EXPECT_EQ(no_db.status, 2);
  EXPECT_NE(no_db.err.find("need --db"), std::string::npos) << no_db.err;
  auto with_c = run_cli({"mongo", "dump", uri_, "-d", db_, "-c", "keep",
                         "--excludeCollectionsWithPrefix", "t", "-o", out});
  EXPECT_EQ(with_c.status, 2);
  auto both = run_cli({"mongo", "dump", uri_, "-d", db_, "-q", "{}", "--queryFile", query});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--query and --queryFile"), std::string::npos) << both.err;
  write_file(query, "{\"n\": ");
  auto bad = run_cli({"mongo", "dump", uri_, "-d", db_, "--queryFile", query, "-o", out});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--queryFile " + query), std::string::npos) << bad.err;
}

TEST_F(MongoToolsCliTest, CsvExportAndImport) {
  insert("c", {json(R"({"_id": 1, "name": "plain", "n": 5, "x": 1.5})"),
               json(R"({"_id": 2, "name": "with, comma and \"quotes\"", "n": 6})"),
               json(R"({"_id": 3, "name": "two\nlines", "n": 3000000000})")});
  auto exported = run_cli({"mongo", "export", uri_, db_ + ".c", "--type", "csv", "--fields",
                           "_id,name,n,x", "--sort", R"({"_id": 1})"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_EQ(exported.out,
            "_id,name,n,x\n1,plain,5,1.5\n2,\"with, comma and \"\"quotes\"\"\",6,\n"
            "3,\"two\nlines\",3000000000,\n");
  auto imported = run_cli({"mongo", "import", uri_, db_ + ".copy", "--type", "csv", "--headerline"},
                          exported.out);
  ASSERT_EQ(imported.status, 0) << imported.err;
  EXPECT_NE(imported.err.find("imported 3 documents"), std::string::npos) << imported.err;
  // Empty cells are empty strings (as mongoimport makes them); the rest compare equal.
  auto cur = coll("copy").find({}, {});
  ASSERT_TRUE(cur.has_value());
  std::vector<std::string> got;
  while (cur->next().value_or(false)) got.push_back(oid::bson::to_json(cur->current()));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{
                     R"({"_id":1,"name":"plain","n":5,"x":1.5})",
                     R"({"_id":2,"name":"with, comma and \"quotes\"","n":6,"x":""})",
                     R"({"_id":3,"name":"two\nlines","n":3000000000,"x":""})"}));
  // TSV with --fields.
  auto tsv = run_cli({"mongo", "import", uri_, db_ + ".tsv", "--type", "tsv", "--fields", "a,b"},
                     "1\tone\n2\ttwo\n");
  EXPECT_EQ(tsv.status, 0) << tsv.err;
  EXPECT_EQ(contents("tsv").size(), 2u);
}

TEST_F(MongoToolsCliTest, ImportErrorsNameTheLineAndColumn) {
  auto quote = run_cli({"mongo", "import", uri_, db_ + ".c", "--type", "csv", "--headerline"},
                       "a,b\n1,2\n3,\"open\n4,5\n");
  EXPECT_EQ(quote.status, 1);
  EXPECT_NE(quote.err.find("stdin: line 3, column 3: a quoted field is never closed"),
            std::string::npos)
      << quote.err;
  EXPECT_EQ(contents("c").size(), 1u);  // the good line before it
  auto inside = run_cli({"mongo", "import", uri_, db_ + ".d", "--type", "csv", "--fields", "a,b"},
                        "1,x\"y\n2,\"ok\"z\n3,3\n");
  EXPECT_EQ(inside.status, 1);
  EXPECT_NE(inside.err.find("line 1, column 4: a quote inside an unquoted field"),
            std::string::npos)
      << inside.err;
  EXPECT_NE(inside.err.find("line 2, column 7: text after a closing quote"), std::string::npos)
      << inside.err;
  EXPECT_EQ(contents("d").size(), 1u);
  auto json_line = run_cli({"mongo", "import", uri_, db_ + ".e"},
                           "{\"a\": 1}\n{\"a\": {\"$oid\": \"nothex\"}}\n{\"a\": 3}\n");
  EXPECT_EQ(json_line.status, 1);
  EXPECT_NE(json_line.err.find("stdin: line 2, column "), std::string::npos) << json_line.err;
  EXPECT_EQ(contents("e").size(), 2u);
  auto csv_no_fields = run_cli({"mongo", "export", uri_, db_ + ".e", "--type", "csv"});
  EXPECT_EQ(csv_no_fields.status, 2);
  EXPECT_NE(csv_no_fields.err.find("--type csv needs --fields"), std::string::npos);
}

// The progress line shows on a terminal only: script(1) gives the command one, with its standard
// output sent to /dev/null inside, so what script records is stderr alone.
TEST_F(MongoToolsCliTest, ProgressShowsOnATerminalOnly) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  std::vector<document> docs;
  for (int i = 0; i < 1000; ++i) {
    oid::bson::builder b;
    b.append_int32("i", i).append_string("pad", std::string(400, 'x'));
    docs.push_back(std::move(b).extract());
  }
  insert("c", docs);
  // Each run into an empty place: dump never replaces the files of another run.
  const std::string dump = "rm -rf " + (dir_ / db_).string() + " && " + std::string(OID_BINARY) +
                           " mongo dump " + uri_ + " --db " + db_ + " --out " + dir_text_ +
                           " --jobs 1";
  auto tty = oid::testing::run_shell("script -qec \"" + dump + " >/dev/null\" /dev/null");
  EXPECT_EQ(tty.status, 0) << tty.err;
  EXPECT_NE(tty.out.find("\r"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("1000 / 1000 documents (100%), 0.4 MB, "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(" MB/s"), std::string::npos) << tty.out;
  auto quiet = oid::testing::run_shell("script -qec \"" + dump + " --quiet >/dev/null\" /dev/null");
  EXPECT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.out.find(" MB/s"), std::string::npos) << quiet.out;
  // Not on a terminal: no progress line, the log lines alone.
  auto piped = oid::testing::run_shell(dump);
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.err.find("\r"), std::string::npos) << piped.err;
  EXPECT_EQ(piped.out, "");

  // export to a file: the line, then the summary; to the terminal itself: no line.
  const std::string json_file = (dir_ / "c.json").string();
  const std::string exp =
      std::string(OID_BINARY) + " mongo export " + uri_ + " " + db_ + ".c --out " + json_file;
  auto exported = oid::testing::run_shell("script -qec \"" + exp + "\" /dev/null");
  EXPECT_EQ(exported.status, 0) << exported.err;
  EXPECT_NE(exported.out.find("\r1000 / 1000 documents (100%), 0.4 MB, "), std::string::npos)
      << exported.out;
  EXPECT_NE(exported.out.find(" MB/s   \r\nexported 1000 documents, 439000 bytes of BSON, in "),
            std::string::npos)
      << exported.out;
  auto limited = oid::testing::run_shell("script -qec \"" + exp + " --limit 10\" /dev/null");
  EXPECT_NE(limited.out.find("\r10 / 10 documents (100%)"), std::string::npos) << limited.out;
  auto quiet_export = oid::testing::run_shell("script -qec \"" + exp + " --quiet\" /dev/null");
  EXPECT_EQ(quiet_export.status, 0);
  EXPECT_EQ(quiet_export.out, "");
  auto to_terminal =
      oid::testing::run_shell("script -qec \"" + std::string(OID_BINARY) + " mongo export " + uri_ +
                              " " + db_ + ".c --limit 3\" /dev/null");
  EXPECT_EQ(to_terminal.out.find(" MB/s"), std::string::npos) << to_terminal.out;
  EXPECT_EQ(lines(to_terminal.out).size(), 4u) << to_terminal.out;  // 3 documents, the summary

  // import from a file: of the file's size (its summary, on standard error too, follows).
  char total[64];
  std::snprintf(total, sizeof total, "1000 documents, %.1f / %.1f MB (100%%), ",
                static_cast<double>(fs::file_size(json_file)) / 1e6,
                static_cast<double>(fs::file_size(json_file)) / 1e6);
  const std::string imp =
      std::string(OID_BINARY) + " mongo import " + uri_ + " " + db_ + ".d " + json_file;
  auto imported = oid::testing::run_shell("script -qec \"" + imp + " >/dev/null\" /dev/null");
  EXPECT_EQ(imported.status, 0) << imported.err;
  EXPECT_NE(imported.out.find(std::string("\r") + total), std::string::npos) << imported.out;
  EXPECT_EQ(contents("d").size(), 1000u);
  auto quiet_import =
      oid::testing::run_shell("script -qec \"" + imp + " --drop --quiet >/dev/null\" /dev/null");
  EXPECT_EQ(quiet_import.status, 0);
  EXPECT_EQ(quiet_import.out, "");
  // Not on a terminal: no progress; the summary alone on standard error, nothing on standard
  // output (mongo-tools' way: logs on standard error).
  auto piped_import = oid::testing::run_shell(imp + " --drop");
  EXPECT_EQ(piped_import.status, 0) << piped_import.err;
  EXPECT_EQ(piped_import.out, "");
  EXPECT_EQ(piped_import.err.find("imported 1000 documents, " +
                                  std::to_string(fs::file_size(json_file)) + " bytes of json, in "),
            0u)
      << piped_import.err;
  EXPECT_EQ(lines(piped_import.err).size(), 1u) << piped_import.err;
}

// An error about one document, printed while the progress line shows, erases the line first
// and starts a line of its own; the next redraw puts the progress below it. The input waits two
// seconds before its bad line, so the line (redrawn every half second) is on the screen then.
TEST_F(MongoToolsCliTest, ProgressLineMakesWayForAnErrorMessage) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const fs::path script = dir_ / "import-slowly.sh";
  fs::create_directories(dir_);
  {
    std::ofstream out(script);
    out << "{ printf '{\"a\": 1}\\n'; sleep 2; printf '{\"a\": {\"$oid\": \"nothex\"}}\\n';"
        << " printf '{\"a\": 3}\\n'; } | " << OID_BINARY << " mongo import " << uri_ << " " << db_
        << ".slow >/dev/null\n";
  }
  auto tty = oid::testing::run_shell("script -qec \"bash " + script.string() + "\" /dev/null");
  EXPECT_EQ(tty.status, 1) << tty.out;  // one bad document
  const auto error = tty.out.find("oid: stdin: line 2, column ");
  ASSERT_NE(error, std::string::npos) << tty.out;
  EXPECT_NE(tty.out.substr(0, error).find(" MB/s"), std::string::npos)
      << "no progress line before the error: " << tty.out;
  EXPECT_EQ(tty.out.substr(error - 4, 4), "\r\x1b[K") << tty.out;
  EXPECT_NE(tty.out.find("2 documents, ", error), std::string::npos)
      << "the progress line comes back below: " << tty.out;
  EXPECT_EQ(contents("slow").size(), 2u);
}

}  // namespace

namespace {

// Documents of every type FerretDB stores, made by PyMongo (random, from a seed): double (finite,
// never -0.0, which FerretDB stores as 0.0), string (NUL and non-ASCII included), document,
// array, binary (subtypes 0, 3, 4, 5 and 128), ObjectId, bool, date, null, regex, int32, int64
// (outside int32's range, so that relaxed Extended JSON keeps the type), timestamp; nested three
// deep. FerretDB refuses decimal128, JavaScript, min/max key, NaN and the infinities, keys with a
// dot or a leading $, and arrays directly inside arrays. Writes them to argv[1] as a .bson file,
// and flat documents (string, int32, int64, double) to argv[2].
constexpr const char* random_documents_script = R"(
import bson, datetime, random, sys
from bson import Binary, Int64, ObjectId, Regex, Timestamp
rnd = random.Random(int(sys.argv[3]))
def text(letters="abcxyz é€\U0001F600\"\\\n\t,\x00"):
    return "".join(rnd.choice(letters) for _ in range(rnd.randint(0, 12)))
def key(i):
    return rnd.choice("abcdefghij") + text("abcXYZ_-é 1") + str(i)
def double():
    d = rnd.choice([rnd.uniform(-1e6, 1e6), rnd.uniform(-1, 1) * 10 ** rnd.randint(-300, 300),
                    float(rnd.randint(-100, 100)), 5e-324])
    return d if d != 0 else 0.0
def int64():
    n = rnd.randint(2 ** 31, 2 ** 63 - 1)
    return Int64(n if rnd.random() < 0.5 else -n)
def date():
    ms = rnd.randint(-2 * 10 ** 12, 8 * 10 ** 12)
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
def binary():
    sub = rnd.choice([0, 3, 4, 5, 128])
    n = 16 if sub in (3, 4) else rnd.randint(0, 20)
    return Binary(bytes(rnd.randrange(256) for _ in range(n)), sub)
def regex():
    return Regex(text("ab.*^$[]()\\"), "".join(sorted(rnd.sample("imsux", rnd.randint(0, 3)))))
scalars = [double, text, binary, ObjectId, lambda: rnd.random() < 0.5, date, lambda: None, regex,
           lambda: rnd.randint(-2 ** 31, 2 ** 31 - 1), int64,
           lambda: Timestamp(rnd.randint(1, 2 ** 32 - 1), rnd.randint(1, 2 ** 32 - 1))]
def value(depth, in_array=False):
    kind = rnd.randrange(len(scalars) + (0 if depth >= 3 else 1 if in_array else 2))
    if kind == len(scalars):
        return {key(i): value(depth + 1) for i in range(rnd.randint(0, 4))}
    if kind == len(scalars) + 1:
        return [value(depth + 1, True) for _ in range(rnd.randint(0, 4))]
    return scalars[kind]()
with open(sys.argv[1], "wb") as f:
    for _ in range(200):
        doc = {"_id": ObjectId()}
        for i in range(rnd.randint(1, 8)):
            doc[key(i)] = value(0)
        f.write(bson.encode(doc))
with open(sys.argv[2], "wb") as f:
    for i in range(100):
        f.write(bson.encode({"_id": i, "s": text("abcXYZ é,\"\n"), "n": rnd.randint(-2 ** 31, 2 ** 31 - 1),
                             "l": int64(), "d": rnd.uniform(-1e6, 1e6)}))
)";

// The document of `bytes` (a document as read_bson_file gives it).
document document_of(const std::string& bytes) {
  auto d = document::from_bytes(
      std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  EXPECT_TRUE(d.has_value());
  return d ? std::move(*d) : document();
}

// The documents of DB.COLL, sorted by _id, as canonical Extended JSON: equal strings are equal
// documents, field by field, types included.
std::vector<std::string> canonical_documents(mongo::client& client, const std::string& db,
                                             std::string_view coll) {
  const auto by_id = json(R"({"_id": 1})");
  mongo::find_options fo;
  fo.sort = by_id.view();
  auto cur = client.collection(db, coll).find({}, fo);
  EXPECT_TRUE(cur.has_value());
  std::vector<std::string> out;
  while (cur && cur->next().value_or(false)) {
    out.push_back(oid::bson::to_json(cur->current(), oid::bson::json_mode::canonical));
  }
  return out;
}

TEST_F(MongoToolsCliTest, RandomDocumentsOfEveryTypeRoundTrip) {
  const std::string python = pymongo_python();
  if (python.empty()) OID_SKIP_OR_FAIL_IN_CI("no Python with PyMongo's bson module");
  fs::create_directories(dir_);
  const std::string script = (dir_ / "make_documents.py").string();
  write_file(script, random_documents_script);
  const auto made =
      oid::testing::run_shell(python + " " + script + " " + (dir_ / "r.bson").string() + " " +
                              (dir_ / "flat.bson").string() + " 16");
  ASSERT_EQ(made.status, 0) << made.err;
  std::vector<document> docs;
  for (const auto& bytes : read_bson_file(dir_ / "r.bson")) {
    docs.push_back(document_of(bytes));
  }
  ASSERT_EQ(docs.size(), 200u);
  insert("r", docs);
  const auto want = canonical_documents(*client_, db_, "r");
  ASSERT_EQ(want.size(), 200u);

  // Dump, then restore into another database (the dump's directory renamed), with and without
  // gzip.
  const std::string other = db_ + "_2";
  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    std::vector<std::string_view> args = {"mongo",        "dump", uri_,    "--db",   db_,
                                          "--collection", "r",    "--out", dir_text_};
    if (gzip) args.push_back("--gzip");
    auto dump = run_cli(args);
    ASSERT_EQ(dump.status, 0) << dump.err;
    fs::rename(dir_ / db_, dir_ / other);
    auto restore = run_cli({"mongo", "restore", uri_, dir_text_, "--drop"});
    EXPECT_EQ(restore.status, 0) << restore.err;
    EXPECT_NE(restore.err.find("restored 200 documents"), std::string::npos) << restore.err;
    EXPECT_EQ(canonical_documents(*client_, other, "r"), want);
    fs::remove_all(dir_ / other);
  }
  ASSERT_TRUE(client_->collection(other, "r").drop().has_value());

  // Export, then import: relaxed and canonical Extended JSON.
  for (const bool canonical : {false, true}) {
    SCOPED_TRACE(canonical ? "canonical" : "relaxed");
    const std::string ns = db_ + ".r";
    std::vector<std::string_view> args = {"mongo", "export", uri_, ns};
    if (canonical) args.push_back("--canonical");
    auto exported = run_cli(args);
    ASSERT_EQ(exported.status, 0) << exported.err;
    auto imported = run_cli({"mongo", "import", uri_, db_ + ".copy", "--drop"}, exported.out);
    ASSERT_EQ(imported.status, 0) << imported.err;
    EXPECT_EQ(canonical_documents(*client_, db_, "copy"), want);
  }

  // CSV, for flat documents: strings, int32, int64 and doubles come back as they were.
  std::vector<document> flat;
  for (const auto& bytes : read_bson_file(dir_ / "flat.bson")) {
    flat.push_back(document_of(bytes));
  }
  insert("flat", flat);
  auto csv =
      run_cli({"mongo", "export", uri_, db_ + ".flat", "--type", "csv", "--fields", "_id,s,n,l,d"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  // Untyped, a string that looks like a number would become one; these have letters or are
  // empty, and an empty cell is an empty string.
  auto back = run_cli({"mongo", "import", uri_, db_ + ".flatcopy", "--type", "csv", "--headerline"},
                      csv.out);
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_NE(back.err.find("imported 100 documents"), std::string::npos) << back.err;
  const auto flat_want = canonical_documents(*client_, db_, "flat");
  EXPECT_EQ(flat_want.size(), 100u);
  EXPECT_EQ(canonical_documents(*client_, db_, "flatcopy"), flat_want);
}

TEST_F(MongoToolsCliTest, ImportColumnsHaveTypes) {
  const std::string csv =
      "name.string(),n.int32(),big.int64(),x.double(),ok.boolean(),"
      "when.date(2006-01-02T15:04:05.000Z07:00),day.date_go(02 Jan 2006),"
      "ms.date_ms(yyyy-MM-dd HH:mm:ss.fff),ora.date_oracle(YYYY-MM-DD HH24:MI:SS TZH:TZM),"
      "hex.binary(hex),b64.binary(base64),b32.binary(base32),any.auto()\n"
      "007,-12,5000000000,1.5,true,2024-05-06T07:08:09.120+02:00,06 May 2024,"
      "2024-05-06 07:08:09.5,2024-05-06 07:08:09 -01:30,0a0B,AAEC,MFRGG===,42\n"
      "\"a, b\",+7,-1,-2e3,F,2024-05-06T07:08:09.000Z,29 Feb 2024,1969-12-31 23:59:59.999,"
      "2000-01-01 00:00:00 +00:00,,,,x\n";
  auto r = run_cli(
      {"mongo", "import", uri_, db_ + ".t", "--type", "csv", "--headerline", "--columnsHaveTypes"},
      csv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("imported 2 documents"), std::string::npos) << r.err;
  auto got = canonical_documents(*client_, db_, "t");
  ASSERT_EQ(got.size(), 2u);
  // Without _id in the CSV the server order is insertion order: _id made on the client.
  for (auto& g : got) g = g.substr(g.find(",") + 1);  // without the _id
  EXPECT_EQ(got[0],
            R"("name":"007","n":{"$numberInt":"-12"},"big":{"$numberLong":"5000000000"},)"
            R"("x":{"$numberDouble":"1.5"},"ok":true,)"
            R"("when":{"$date":{"$numberLong":"1714972089120"}},)"
            R"("day":{"$date":{"$numberLong":"1714953600000"}},)"
            R"("ms":{"$date":{"$numberLong":"1714979289500"}},)"
            R"("ora":{"$date":{"$numberLong":"1714984689000"}},)"
            R"("hex":{"$binary":{"base64":"Cgs=","subType":"00"}},)"
            R"("b64":{"$binary":{"base64":"AAEC","subType":"00"}},)"
            R"("b32":{"$binary":{"base64":"YWJj","subType":"00"}},"any":{"$numberInt":"42"}})");
  EXPECT_EQ(got[1], R"("name":"a, b","n":{"$numberInt":"7"},"big":{"$numberLong":"-1"},)"
                    R"("x":{"$numberDouble":"-2000.0"},"ok":false,)"
                    R"("when":{"$date":{"$numberLong":"1714979289000"}},)"
                    R"("day":{"$date":{"$numberLong":"1709164800000"}},)"
                    R"("ms":{"$date":{"$numberLong":"-1"}},)"
                    R"("ora":{"$date":{"$numberLong":"946684800000"}},)"
                    R"("hex":{"$binary":{"base64":"","subType":"00"}},)"
                    R"("b64":{"$binary":{"base64":"","subType":"00"}},)"
                    R"("b32":{"$binary":{"base64":"","subType":"00"}},"any":"x"})");

  // A value that is not its column's type: reported with its line and column, the rest imported.
  auto bad = run_cli({"mongo", "import", uri_, db_ + ".u", "--type", "csv", "--columnsHaveTypes",
                      "--fields", "a.int32(),b.date(2006-01-02),d.boolean()"},
                     "1,2024-01-31,true\n2,2024-02-30,true\nx,2024-01-01,1\n"
                     "4,2024-01-01,yes\n5,2024-01-01,f\n");
  EXPECT_EQ(bad.status, 1);
  const auto has = [&](const std::string& want) {
    EXPECT_NE(bad.err.find(want), std::string::npos) << "want: " << want << "\nin:\n" << bad.err;
  };
  has("stdin: line 2, column 3: \"2024-02-30\" is not date(2006-01-02) (field b.date(2006-01-02))");
  has("stdin: line 3, column 1: \"x\" is not int32() (field a.int32())");
  has("stdin: line 4, column 14: \"yes\" is not boolean() (field d.boolean())");
  EXPECT_NE(bad.err.find("imported 2 documents"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("0 refused, 3 bad input"), std::string::npos) << bad.err;
  EXPECT_EQ(contents("u").size(), 2u);
  // --parseGrace: stop ends the import at the bad line; skipField leaves the field out; autoCast
  // reads it as an auto column would.
  const std::string typed = "1,2024-01-31,true\n2,2024-02-30,true\nx,2024-01-01,1\n";
  const std::string ns_g = db_ + ".g";  // the arguments below are views of it
  const std::vector<std::string_view> typed_args = {"mongo",
                                                    "import",
                                                    uri_,
                                                    ns_g,
                                                    "--type",
                                                    "csv",
                                                    "--columnsHaveTypes",
                                                    "--drop",
                                                    "--fields",
                                                    "a.int32(),b.date(2006-01-02),d.boolean()",
                                                    "--quiet",
                                                    "--parseGrace"};
  const auto with_grace = [&](std::string_view grace) {
    auto args = typed_args;
    args.push_back(grace);
    return run_cli(args, typed);
  };
  const auto stop = with_grace("stop");
  EXPECT_EQ(stop.status, 1);
  EXPECT_NE(stop.err.find("line 2, column 3"), std::string::npos) << stop.err;
  EXPECT_NE(stop.err.find("nothing after it imported"), std::string::npos) << stop.err;
  EXPECT_EQ(stop.err.find("line 3"), std::string::npos) << stop.err;
  EXPECT_EQ(contents("g").size(), 1u);
  const auto skip = with_grace("skipField");
  EXPECT_EQ(skip.status, 0) << skip.err;
  const auto count = [&](const std::string& filter) {
    auto n = run_cli({"mongo", "count", uri_, db_ + ".g", "-q", filter});
    EXPECT_EQ(n.status, 0) << n.err;
    return n.out;
  };
  EXPECT_EQ(count("{}"), "3 documents\n");
  EXPECT_EQ(count(R"({"b": {"$exists": false}, "a": 2})"), "1 documents\n");
  EXPECT_EQ(count(R"({"a": {"$exists": false}, "d": true})"), "1 documents\n");
  const auto cast = with_grace("autoCast");
  EXPECT_EQ(cast.status, 0) << cast.err;
  EXPECT_EQ(count("{}"), "3 documents\n");
  EXPECT_EQ(count(R"({"a": "x"})"), "1 documents\n");
  EXPECT_EQ(count(R"({"b": "2024-02-30"})"), "1 documents\n");
  EXPECT_EQ(with_grace("sometimes").status, 2);

  // decimal(): only a bad value here (FerretDB refuses decimal128 and closes the connection).
  auto decimal = run_cli({"mongo", "import", uri_, db_ + ".u", "--type", "csv",
                          "--columnsHaveTypes", "--fields", "c.decimal()"},
                         "1.2.3\n");
  EXPECT_EQ(decimal.status, 1);
  EXPECT_NE(decimal.err.find("stdin: line 1, column 1: \"1.2.3\" is not decimal()"),
            std::string::npos)
      << decimal.err;

  // Unknown types, missing types and bad arguments: the header's line and column, or --fields.
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"a.int32(),b.float()\n1,2\n",
       "stdin: line 1, column 11: \"b.float()\": unknown type float()"},
      {"a.int32(),b\n1,2\n", "stdin: line 1, column 11: \"b\" has no type"},
      {"a.binary(base58)\n",
       "line 1, column 1: \"a.binary(base58)\": binary() takes base64, base32 or hex"},
      {"a.date()\n", "\"a.date()\": date() needs a layout"},
      {"a.int32(5)\n", "\"a.int32(5)\": int32() takes no argument"}};
  for (const auto& [header, want] : headers) {
    SCOPED_TRACE(header);
    auto h = run_cli({"mongo", "import", uri_, db_ + ".h", "--type", "csv", "--headerline",
                      "--columnsHaveTypes"},
                     header);
    EXPECT_EQ(h.status, 1);
    EXPECT_NE(h.err.find(want), std::string::npos) << h.err;
    EXPECT_NE(h.err.find("nothing imported"), std::string::npos) << h.err;
  }
  auto fields = run_cli({"mongo", "import", uri_, db_ + ".h", "--type", "csv", "--columnsHaveTypes",
                         "--fields", "a.int32(),b.nope()"},
                        "1,2\n");
  EXPECT_EQ(fields.status, 1);
  EXPECT_NE(fields.err.find("--fields: field 2: \"b.nope()\": unknown type nope()"),
            std::string::npos)
      << fields.err;
  EXPECT_EQ(contents("h").size(), 0u);
}

TEST_F(MongoToolsCliTest, DottedCsvFieldsAreNestedDocuments) {
  insert("c", {json(R"({"_id": 1, "a": {"b": "x", "c": 2}, "d": [10, {"e": 20}]})"),
               json(R"({"_id": 2, "a": {"b": "y"}, "d": []})")});
  auto exported = run_cli({"mongo", "export", uri_, db_ + ".c", "--type", "csv", "--fields",
                           "_id,a.b,a.c,d.1.e", "--sort", R"({"_id": 1})"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_EQ(exported.out, "_id,a.b,a.c,d.1.e\n1,x,2,20\n2,y,,\n");
  // Import: a.b and a.c into one subdocument a, wherever their columns are.
  auto imported = run_cli({"mongo", "import", uri_, db_ + ".n", "--type", "csv", "--headerline"},
                          "a.b,z,a.c.d,a.e\n1,2,3,4\n");
  ASSERT_EQ(imported.status, 0) << imported.err;
  auto got = canonical_documents(*client_, db_, "n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(got[0].find(',') + 1),
            R"("a":{"b":{"$numberInt":"1"},"c":{"d":{"$numberInt":"3"}},"e":{"$numberInt":"4"}},)"
            R"("z":{"$numberInt":"2"}})");
  // A short record: a subdocument none of whose columns it has is left out.
  auto short_record = run_cli(
      {"mongo", "import", uri_, db_ + ".s", "--type", "csv", "--fields", "x,a.b,a.c,d.e"}, "1,2\n");
  ASSERT_EQ(short_record.status, 0) << short_record.err;
  got = canonical_documents(*client_, db_, "s");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(got[0].find(',') + 1),
            R"("x":{"$numberInt":"1"},"a":{"b":{"$numberInt":"2"}}})");
  // A field both a value and a document, or named twice: refused with its place.
  auto clash = run_cli({"mongo", "import", uri_, db_ + ".n", "--type", "csv", "--headerline"},
                       "x,a,a.b\n1,2,3\n");
  EXPECT_EQ(clash.status, 1);
  EXPECT_NE(clash.err.find("line 1, column 5: \"a.b\" and \"a\" (column 2) make a field both a "
                           "value and a document"),
            std::string::npos)
      << clash.err;
  auto twice = run_cli({"mongo", "import", uri_, db_ + ".n", "--type", "csv", "--fields", "a,b,a"},
                       "1,2,3\n");
  EXPECT_EQ(twice.status, 1);
  EXPECT_NE(twice.err.find("--fields: field 3: \"a\" and \"a\" (column 1) name the same field"),
            std::string::npos)
      << twice.err;
  auto empty =
      run_cli({"mongo", "import", uri_, db_ + ".n", "--type", "csv", "--fields", "a..b"}, "1\n");
  EXPECT_EQ(empty.status, 1);
  EXPECT_NE(empty.err.find("\"a..b\": an empty field name"), std::string::npos) << empty.err;
  EXPECT_EQ(contents("n").size(), 1u);
}

// ---- --archive ----------------------------------------------------------------------------------

// The documents of an archive's bytes, per DB.COLL, as their bytes, sorted; the namespaces' ends.
struct archive_contents {
  std::map<std::string, std::vector<std::string>> docs;
  std::vector<std::string> ends;
  std::string error;  // the first error, empty when none
};

archive_contents read_archive(const std::string& bytes) {
  std::istringstream in(bytes);
  oid::cli::archive::reader r(in);
  archive_contents out;
  if (auto p = r.read_prelude(); !p) {
    out.error = p.error().message;
    return out;
  }
  while (true) {
    auto it = r.next();
    if (!it) {
      if (out.error.empty()) out.error = it.error().message;
      if (!r.can_continue()) break;
      continue;
    }
    if (it->kind == oid::cli::archive::item::end) break;
    const auto& m = r.collections()[it->collection].meta;
    if (it->kind == oid::cli::archive::item::namespace_end) {
      out.ends.push_back(m.db + '.' + m.collection);
    } else {
      out.docs[m.db + '.' + m.collection].push_back(bytes_of(it->doc));
    }
  }
  for (auto& [ns, d] : out.docs) std::sort(d.begin(), d.end());
  std::sort(out.ends.begin(), out.ends.end());
  return out;
}

TEST_F(MongoToolsCliTest, ArchiveFileDumpDropRestoreGivesTheSameBytesAndIndexes) {
  fs::create_directories(dir_);
  const std::string archive = (dir_ / "all.archive").string();
  const std::string archive_flag = "--archive=" + archive;
  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    fill("c", 300);
    unique_n_index("c");
    fill("other", 5);
    const auto before = contents("c");
    const auto indexes_before = index_specs("c");

    std::vector<std::string_view> args = {"mongo", "dump", uri_, "--db", db_, archive_flag};
    if (gzip) args.push_back("--gzip");
    auto dump = run_cli(args);
    ASSERT_EQ(dump.status, 0) << dump.err;
    EXPECT_EQ(dump.out, "");
    EXPECT_NE(dump.err.find("dumped 305 documents"), std::string::npos) << dump.err;
    EXPECT_FALSE(fs::exists(archive + ".partial"));
    EXPECT_FALSE(fs::exists(dir_ / db_));  // no directory: the archive only
    const auto bytes = oid::testing::read_file(archive);
    if (gzip) {
      ASSERT_GE(bytes.size(), 2u);
      EXPECT_EQ(bytes.substr(0, 2), "\x1f\x8b");  // the whole archive is one gzip stream
    } else {
      // The documents exactly as the server sent them, each namespace ended with its CRC.
      const auto got = read_archive(bytes);
      EXPECT_EQ(got.error, "");
      EXPECT_EQ(got.docs.at(db_ + ".c"), before);
      EXPECT_EQ(got.docs.at(db_ + ".other").size(), 5u);
      EXPECT_EQ(got.ends, (std::vector<std::string>{db_ + ".c", db_ + ".other"}));
    }

    ASSERT_TRUE(coll("c").drop().has_value());
    const auto stale = json(R"({"stale": true})");
    ASSERT_TRUE(coll("other").insert_one(stale.view()).has_value());
    // gzip is recognized by its first bytes, with or without --gzip.
    std::vector<std::string_view> restore_args = {"mongo", "restore", uri_, archive_flag, "--drop"};
    if (gzip) restore_args.push_back("--gzip");
    auto restore = run_cli(restore_args);
    ASSERT_EQ(restore.status, 0) << restore.err;
    EXPECT_EQ(restore.out, "");
    EXPECT_NE(restore.err.find("restored 305 documents"), std::string::npos) << restore.err;
    EXPECT_EQ(contents("c"), before);
    EXPECT_EQ(contents("other").size(), 5u);  // --drop took the stale document away
    EXPECT_EQ(index_specs("c"), indexes_before);

    // Again without --drop: every document is a duplicate key, reported with its namespace and
    // its offset in the (uncompressed) archive.
    auto again = run_cli({"mongo", "restore", uri_, archive_flag, "--noIndexRestore"});
    EXPECT_EQ(again.status, 1);
    EXPECT_NE(again.err.find(archive + ": " + db_ + ".c: document 0 (offset "), std::string::npos)
        << again.err;
    EXPECT_NE(again.err.find("305 duplicate keys"), std::string::npos) << again.err;
    ASSERT_TRUE(coll("c").drop().has_value());
    ASSERT_TRUE(coll("other").drop().has_value());
  }
}

TEST_F(MongoToolsCliTest, ArchiveOnStandardOutputPipesIntoRestore) {
  fill("c", 200);
  fill("d", 3);
  const auto before = contents("c");
  // In process: the archive is all that goes to standard output, the log goes to stderr.
  auto dump = run_cli({"mongo", "dump", uri_, "-d", db_, "--archive"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.err.find("dumped 203 documents"), std::string::npos) << dump.err;
  const auto got = read_archive(dump.out);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.docs.at(db_ + ".c"), before);
  ASSERT_TRUE(coll("c").drop().has_value());
  // A bare --archive before the URI takes nothing from it: standard input.
  auto restore = run_cli({"mongo", "restore", "--archive", uri_, "--drop"}, dump.out);
  ASSERT_EQ(restore.status, 0) << restore.err;
  EXPECT_EQ(contents("c"), before);

  // The built binary in a pipeline, plain and gzip-compressed (--archive=- is the same): the
  // database dumped and restored over itself, without a duplicate key thanks to --drop.
  for (const std::string gzip : {"", " --gzip"}) {
    SCOPED_TRACE(gzip);
    const std::string bin = OID_BINARY;
    const auto piped = oid::testing::run_shell(
        bin + " mongo dump " + uri_ + " -d " + db_ + " --archive" + gzip + " | " + bin +
        " mongo restore " + uri_ + " --archive=- --drop --quiet");
    EXPECT_EQ(piped.status, 0) << piped.err;
    EXPECT_EQ(piped.out, "");
    EXPECT_EQ(contents("c"), before);
    EXPECT_EQ(contents("d").size(), 3u);
  }
}

TEST_F(MongoToolsCliTest, ArchiveDumpFiltersAndRestoreFilters) {
  fs::create_directories(dir_);
  fill("c", 20);
  fill("other", 4);
  mongo::index_options sparse;
  sparse.sparse = true;
  const auto key = json(R"({"s": 1})");
  ASSERT_TRUE(coll("c").create_index(key.view(), sparse).has_value());
  const auto before = contents("c");
  const std::string one = "--archive=" + (dir_ / "one.archive").string();
  const std::string all = "--archive=" + (dir_ / "all.archive").string();

  // -d DB -c COLL: only that collection in the archive.
  auto dump = run_cli({"mongo", "dump", uri_, "-d", db_, "-c", "c", one, "--quiet"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_EQ(dump.err, "");
  const auto got = read_archive(oid::testing::read_file((dir_ / "one.archive").string()));
  EXPECT_EQ(got.ends, (std::vector<std::string>{db_ + ".c"}));
  ASSERT_EQ(run_cli({"mongo", "dump", uri_, "-d", db_, all}).status, 0);

  // --nsInclude and --nsExclude pick from the archive; --noIndexRestore, --writeConcern and
  // --stopOnError are taken as with a directory.
  ASSERT_TRUE(coll("c").drop().has_value());
  ASSERT_TRUE(coll("other").drop().has_value());
  auto restore =
      run_cli({"mongo", "restore", uri_, all, "--nsInclude", db_ + ".*", "--nsExclude",
               db_ + ".other", "--noIndexRestore", "--writeConcern", "majority", "--stopOnError"});
  ASSERT_EQ(restore.status, 0) << restore.err;
  EXPECT_EQ(contents("c"), before);
  EXPECT_EQ(index_names("c"), (std::vector<std::string>{"_id_"}));
  EXPECT_EQ(contents("other").size(), 0u);
  auto other = run_cli({"mongo", "restore", uri_, all, "--nsInclude", db_ + ".other"});
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_EQ(contents("other").size(), 4u);
  EXPECT_EQ(other.err.find(db_ + ".c:"), std::string::npos) << other.err;

  // Usage errors: an archive and a directory, --out and --archive.
  auto both = run_cli({"mongo", "restore", uri_, dir_text_, all});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--archive"), std::string::npos) << both.err;
  auto out = run_cli({"mongo", "dump", uri_, "-d", db_, "--out", dir_text_, all});
  EXPECT_EQ(out.status, 2);
  EXPECT_NE(out.err.find("--archive"), std::string::npos) << out.err;
}

TEST_F(MongoToolsCliTest, ArchiveThatIsCutOrCorruptIsReportedAndWhatCameBeforeIsRestored) {
  fs::create_directories(dir_);
  fill("c", 100);
  auto dump = run_cli({"mongo", "dump", uri_, "-d", db_, "-c", "c", "--archive", "--quiet"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  const std::string& whole = dump.out;
  ASSERT_TRUE(coll("c").drop().has_value());

  // Cut in the middle of the data: the documents before the cut go in, the error says where.
  const std::size_t cut = whole.size() * 2 / 3;
  std::size_t readable = 0;
  {
    std::istringstream in(whole.substr(0, cut));
    oid::cli::archive::reader r(in);
    ASSERT_TRUE(r.read_prelude().has_value());
    while (true) {
      auto it = r.next();
      if (!it || it->kind != oid::cli::archive::item::document) break;
      ++readable;
    }
  }
  ASSERT_GT(readable, 10u);
  auto cut_restore = run_cli({"mongo", "restore", uri_, "--archive"}, whole.substr(0, cut));
  EXPECT_EQ(cut_restore.status, 1);
  EXPECT_NE(cut_restore.err.find("standard input: " + db_ + ".c: the archive ends inside"),
            std::string::npos)
      << cut_restore.err;
  EXPECT_NE(cut_restore.err.find("at byte " + std::to_string(cut)), std::string::npos)
      << cut_restore.err;
  EXPECT_NE(cut_restore.err.find("incomplete"), std::string::npos) << cut_restore.err;
  EXPECT_EQ(contents("c").size(), readable);

  // One byte of a document changed (still valid BSON): the CRC says so, naming the namespace.
  std::string corrupt = whole;
  const std::size_t at = corrupt.find("text \xc3\xa9 5");
  ASSERT_NE(at, std::string::npos);
  corrupt[at] = 'T';
  auto crc = run_cli({"mongo", "restore", uri_, "--archive", "--drop"}, corrupt);
  EXPECT_EQ(crc.status, 1);
  EXPECT_NE(crc.err.find(db_ + ".c: the CRC-64"), std::string::npos) << crc.err;

  // Not an archive at all (a .bson file's bytes): said, and nothing is written.
  ASSERT_TRUE(coll("c").drop().has_value());
  const auto empty = json("{}");
  auto bson = run_cli({"mongo", "restore", uri_, "--archive"}, bytes_of(empty.view()));
  EXPECT_EQ(bson.status, 1);
  EXPECT_NE(bson.err.find("not a mongodump archive"), std::string::npos) << bson.err;
  EXPECT_EQ(contents("c").size(), 0u);
}

}  // namespace
