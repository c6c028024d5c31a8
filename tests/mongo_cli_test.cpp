// oid mongo ping | insert | find | topology | databases | collections | run, in-process. The
// tests that need a server use MONGODB_URI (scripts/test.sh starts FerretDB); without it they
// skip, and fail under CI=true.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/object_id.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/ci.hpp"
#include "support/run_cli.hpp"
#include "support/run_shell.hpp"
#include "support/script_server.hpp"

namespace {

using oid::testing::run_cli;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(MongoCliTest, RejectsBadArgumentsWithoutAServer) {
  auto srv = run_cli({"mongo", "ping", "mongodb+srv://cluster.example.com:27017"});
  EXPECT_EQ(srv.status, 1);
  EXPECT_NE(srv.err.find("SRV"), std::string::npos);
  auto bad = run_cli({"mongo", "ping", "mongodb://h/?connectTimeoutMS=soon"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("connectTimeoutMS"), std::string::npos) << bad.err;
  auto ns = run_cli({"mongo", "find", "mongodb://127.0.0.1:1/", "nodot"});
  EXPECT_EQ(ns.status, 2);
  EXPECT_NE(ns.err.find("DATABASE.COLLECTION"), std::string::npos);
  auto time = run_cli({"mongo", "find", "mongodb://127.0.0.1:1/", "d.c", "--since", "2010-13-01"});
  EXPECT_EQ(time.status, 1);
  EXPECT_NE(time.err.find("--since"), std::string::npos);
  auto json = run_cli({"mongo", "find", "mongodb://127.0.0.1:1/", "d.c", "--filter", "{\"a\":"});
  EXPECT_EQ(json.status, 1);
  EXPECT_NE(json.err.find("--filter"), std::string::npos);
  EXPECT_EQ(run_cli({"mongo"}).status, 2);
  auto limit = run_cli({"mongo", "find", "mongodb://127.0.0.1:1/", "d.c", "--limit", "-2"});
  EXPECT_EQ(limit.status, 2);
  EXPECT_NE(limit.err.find("--limit: a limit cannot be negative: -2"), std::string::npos)
      << limit.err;
}

// mongosh's Stable API flags: the client declares the version, and the command carries it.
TEST(MongoCliTest, StableApiFlagsDeclareTheVersionOnEveryCommand) {
  oid::testing::recording_server rec;
  // The Stable API fields of the last command (the command's time limit adds maxTimeMS).
  const auto api_of_last = [&] {
    oid::bson::builder b;
    const auto seen = rec.seen();  // named: a range-for would dangle on the temporary
    for (const auto& e : seen.back().body.view()) {
      if (e.key().starts_with("api")) b.append_element(e.key(), e);
    }
    return oid::bson::to_json(b.view());
  };
  auto r = run_cli(
      {"mongo", "run", rec.uri(), "admin", R"({"ping": 1})", "--apiVersion", "1", "--apiStrict"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(api_of_last(), R"({"apiVersion":"1","apiStrict":true})");
  auto both = run_cli({"mongo", "run", rec.uri(), "admin", R"({"ping": 1})", "--apiVersion", "1",
                       "--apiDeprecationErrors", "--apiStrict"});
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(api_of_last(), R"({"apiVersion":"1","apiStrict":true,"apiDeprecationErrors":true})");
  auto none = run_cli({"mongo", "run", rec.uri(), "admin", R"({"ping": 1})"});
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(api_of_last(), "{}");
  const auto sent = rec.seen().size();

  auto unknown = run_cli({"mongo", "ping", rec.uri(), "--apiVersion", "2"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("--apiVersion: unknown Stable API version \"2\""), std::string::npos)
      << unknown.err;
  auto alone = run_cli({"mongo", "ping", rec.uri(), "--apiStrict"});
  EXPECT_EQ(alone.status, 2);
  EXPECT_NE(alone.err.find("--apiStrict needs --apiVersion 1"), std::string::npos) << alone.err;
  EXPECT_EQ(rec.seen().size(), sent);  // refused before anything was sent
}

TEST(MongoCliTest, UserWithoutPasswordAndNoTerminalIsAUsageErrorSayingHow) {
  for (const char* command : {"ping", "find", "insert"}) {
    SCOPED_TRACE(command);
    std::vector<std::string_view> args = {"mongo", command, "mongodb://ann@127.0.0.1:1/"};
    if (std::string_view(command) != "ping") args.push_back("d.c");
    auto r = run_cli(args, "{}\n");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("user 'ann' but no password"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("mongodb://USER:PASSWORD@HOST/"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("terminal"), std::string::npos) << r.err;
  }
}

// Against the server of MONGODB_AUTH_URI (FerretDB with authentication; scripts/test.sh).
TEST(MongoCliTest, PingWithCredentialsAndAWrongPassword) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_AUTH_URI", uri);
  auto ok = run_cli({"mongo", "ping", uri});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("server version"), std::string::npos) << ok.out;
  // The same user with another password: refused, and the message shows neither password.
  const auto colon = uri.find(':', std::string_view("mongodb://").size());
  const auto at = uri.find('@');
  ASSERT_NE(colon, std::string::npos);
  ASSERT_NE(at, std::string::npos);
  const std::string password = uri.substr(colon + 1, at - colon - 1);
  const std::string wrong = uri.substr(0, colon + 1) + "Wr0ng-pw" + uri.substr(at);
  auto refused = run_cli({"mongo", "ping", wrong});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("AuthenticationFailed"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("Wr0ng-pw"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find(password), std::string::npos);
}

// mongo-tools' connection flags instead of a connection string, against the server with
// passwords (MONGODB_AUTH_URI: mongodb://USER:PASSWORD@HOST:PORT/...).
TEST(MongoCliTest, MongoToolsConnectionFlagsReachTheServer) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_AUTH_URI", uri);
  const std::size_t scheme = std::string_view("mongodb://").size();
  const auto colon = uri.find(':', scheme);
  const auto at = uri.find('@');
  const auto port_at = uri.find(':', at);
  const auto slash = uri.find('/', at);
  ASSERT_TRUE(colon != std::string::npos && at != std::string::npos &&
              port_at != std::string::npos && slash != std::string::npos)
      << uri;
  const std::string user = uri.substr(scheme, colon - scheme);
  const std::string password = uri.substr(colon + 1, at - colon - 1);
  const std::string host = uri.substr(at + 1, port_at - at - 1);
  const std::string port = uri.substr(port_at + 1, slash - port_at - 1);
  ASSERT_EQ(user.find('%'), std::string::npos);  // used as they are below
  ASSERT_EQ(password.find('%'), std::string::npos);

  auto ok = run_cli({"mongo", "ping", "--host", host, "--port", port, "-u", user, "-p", password,
                     "--authenticationDatabase", "admin"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("server version"), std::string::npos) << ok.out;
  // host:port in --host, and the user's password from the terminal's replacement, stdin.
  auto piped = run_cli(
      {"mongo", "ping", "--host", host + ":" + port, "--username", user, "--password-stdin"},
      password + "\n");
  EXPECT_EQ(piped.status, 0) << piped.err;
  // --uri is the URI argument.
  auto by_uri = run_cli({"mongo", "ping", "--uri", uri});
  EXPECT_EQ(by_uri.status, 0) << by_uri.err;
  // A wrong password through -p is refused, and no message shows it.
  auto wrong =
      run_cli({"mongo", "ping", "--host", host, "--port", port, "-u", user, "-p", "Wr0ng-pw"});
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.err.find("AuthenticationFailed"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("Wr0ng-pw"), std::string::npos) << wrong.err;
  // Without --host, the server on localhost.
  auto local = run_cli({"mongo", "ping", "--port", port, "-u", user, "-p", password});
  if (host == "127.0.0.1" || host == "localhost") {
    EXPECT_EQ(local.status, 0) << local.err;
  }
}

// Against the TLS listener of MONGODB_TLS_URI (client certificate required; scripts/test.sh).
TEST(MongoCliTest, PingOverTlsAndAnUntrustedServer) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_TLS_URI", uri);
  auto ok = run_cli({"mongo", "ping", uri});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("server version"), std::string::npos) << ok.out;
  // Trusting no CA but the system's: the test CA is unknown.
  const auto ca = uri.find("tlsCAFile=");
  ASSERT_NE(ca, std::string::npos);
  const std::string untrusted =
      uri.substr(0, ca) + "serverSelectionTimeoutMS=1000&" + uri.substr(uri.find('&', ca) + 1);
  auto refused = run_cli({"mongo", "ping", untrusted});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("unknown CA"), std::string::npos) << refused.err;
}

TEST(MongoCliTest, UnreachableServerFailsWithinTheSelectionTimeout) {
  auto r = run_cli({"mongo", "ping", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
}

class MongoCliServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri_);
    ns_ = "oid_cli_" + oid::generate().to_hex().substr(16) + ".c";
  }
  void TearDown() override {
    if (uri_.empty()) return;
    // Leave no database behind.
    auto c = oid::mongo::client::create(uri_);
    if (!c) return;
    oid::bson::builder drop;
    drop.append_int32("dropDatabase", 1);
    (void)c->run_command(ns_.substr(0, ns_.find('.')), drop.view());
  }
  std::string uri_, ns_;
};

TEST_F(MongoCliServerTest, PingInsertFind) {
  auto ping = run_cli({"mongo", "ping", uri_});
  ASSERT_EQ(ping.status, 0) << ping.err;
  EXPECT_EQ(ping.out.rfind("server version ", 0), 0u) << ping.out;
  EXPECT_NE(ping.out.find("round trip "), std::string::npos);

  const std::string input =
      "{\"name\": \"ada\", \"n\": 1}\n"
      "{\"_id\": {\"$oid\": \"4ca524800000000000000001\"}, \"name\": \"october\", \"n\": 2}\n"
      "{\"_id\": {\"$oid\": \"4cce03000000000000000001\"}, \"name\": \"november\", \"n\": 3}\n";
  auto ins = run_cli({"mongo", "insert", uri_, ns_, "-"}, input);
  ASSERT_EQ(ins.status, 0) << ins.err;
  const auto out = lines(ins.out);
  ASSERT_EQ(out.size(), 3u) << ins.out;
  EXPECT_EQ(out[0], "inserted 3 documents");
  EXPECT_EQ(out[1].substr(0, 6), "first ");
  EXPECT_TRUE(oid::object_id::from_hex(out[1].substr(6)).has_value());
  EXPECT_EQ(out[2], "last  4cce03000000000000000001");

  auto all = run_cli({"mongo", "find", uri_, ns_, "--sort", "{\"n\": -1}"});
  ASSERT_EQ(all.status, 0) << all.err;
  const auto docs = lines(all.out);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_NE(docs[0].find("november"), std::string::npos);
  EXPECT_NE(docs[2].find("ada"), std::string::npos);
  // The worked example of docs/command.md: --limit cuts the sorted result.
  auto top = run_cli({"mongo", "find", uri_, ns_, "--sort", "{\"n\": -1}", "--limit", "2"});
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(top.out,
            "{\"_id\":{\"$oid\":\"4cce03000000000000000001\"},\"name\":\"november\",\"n\":3}\n"
            "{\"_id\":{\"$oid\":\"4ca524800000000000000001\"},\"name\":\"october\",\"n\":2}\n");
  // --until alone: everything made before November 2010 (october), not ada's new id.
  auto until = run_cli({"mongo", "find", uri_, ns_, "--until", "2010-11-01"});
  ASSERT_EQ(until.status, 0) << until.err;
  ASSERT_EQ(lines(until.out).size(), 1u) << until.out;
  EXPECT_NE(until.out.find("october"), std::string::npos);

  auto october =
      run_cli({"mongo", "find", uri_, ns_, "--since", "2010-10-01", "--until", "2010-11-01"});
  ASSERT_EQ(october.status, 0) << october.err;
  EXPECT_EQ(october.out,
            "{\"_id\":{\"$oid\":\"4ca524800000000000000001\"},\"name\":\"october\",\"n\":2}\n");
  auto since = run_cli({"mongo", "find", uri_, ns_, "--since", "2010-10-15", "--filter",
                        "{\"n\": {\"$gte\": 2}}", "--limit", "5"});
  ASSERT_EQ(since.status, 0) << since.err;
  EXPECT_EQ(lines(since.out).size(), 1u) << since.out;
}

// The rest of mongoexport's and mongoimport's flags for the same jobs (docs/command.md's flag
// table): --skip, --pretty, --noHeaderLine, --fieldFile, --queryFile; --stopOnError (and
// --maintainInsertionOrder), --writeConcern, --ignoreBlanks, --bypassDocumentValidation; and
// --readPreference, which every command takes.
TEST_F(MongoCliServerTest, ExportAndImportTakeMongoToolsRemainingFlags) {
  const auto dir = std::filesystem::temp_directory_path() / ("oid_flags_" + ns_);
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  // --stopOnError: the duplicate stops the import; what came before it stays.
  const std::string docs =
      "{\"_id\": 1, \"a\": \"x\"}\n{\"_id\": 1}\n{\"_id\": 2, \"a\": \"y\"}\n"
      "{\"_id\": 3, \"a\": \"z\"}\n";
  for (const char* flag : {"--stopOnError", "--maintainInsertionOrder"}) {
    auto stopped = run_cli({"mongo", "import", uri_, ns_, "--drop", flag}, docs);
    EXPECT_EQ(stopped.status, 1) << flag;
    EXPECT_NE(stopped.err.find("stdin: document 2: duplicate key"), std::string::npos)
        << stopped.err;
    EXPECT_NE(stopped.err.find("stopped at stdin: document 2; the 2 after it"), std::string::npos)
        << stopped.err;
    auto n = run_cli({"mongo", "count", uri_, ns_});
    EXPECT_EQ(n.out, "1 documents\n") << flag;
  }
  // Without it, every other document goes in.
  auto all = run_cli({"mongo", "import", uri_, ns_, "--drop", "--writeConcern", "{w: 1, j: true}",
                      "--bypassDocumentValidation"},
                     docs);
  EXPECT_EQ(all.status, 1) << all.err;
  EXPECT_EQ(run_cli({"mongo", "count", uri_, ns_}).out, "3 documents\n");
  // A malformed line stops a --stopOnError import too; a bad --writeConcern is refused.
  auto bad_line = run_cli({"mongo", "import", uri_, ns_ + "2", "--stopOnError", "--quiet"},
                          "{\"_id\": 10}\n{nope\n{\"_id\": 11}\n");
  EXPECT_EQ(bad_line.status, 1);
  EXPECT_EQ(run_cli({"mongo", "count", uri_, ns_ + "2"}).out, "1 documents\n");
  auto bad_wc = run_cli({"mongo", "import", uri_, ns_, "--writeConcern", "{w: "}, docs);
  EXPECT_NE(bad_wc.status, 0);
  EXPECT_NE(bad_wc.err.find("--writeConcern"), std::string::npos) << bad_wc.err;

  // export: --skip and --pretty; --queryFile; --fieldFile with --noHeaderLine.
  auto skipped = run_cli({"mongo", "export", uri_, ns_, "--sort", "{\"_id\": 1}", "--skip", "1",
                          "--pretty", "--quiet"});
  ASSERT_EQ(skipped.status, 0) << skipped.err;
  EXPECT_EQ(skipped.out,
            "{\n  \"_id\": 2,\n  \"a\": \"y\"\n}\n{\n  \"_id\": 3,\n  \"a\": \"z\"\n}\n");
  const auto query = write("query.json", "{\"a\": {\"$gte\": \"y\"}}\n");
  const auto fields = write("fields.txt", "_id\r\n\na\n");
  auto csv = run_cli({"mongo", "export", uri_, ns_, "--type", "csv", "--fieldFile", fields,
                      "--queryFile", query, "--noHeaderLine", "--sort", "{\"_id\": 1}", "--quiet"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out, "2,y\n3,z\n");
  auto with_header = run_cli({"mongo", "export", uri_, ns_, "--type", "csv", "--fieldFile", fields,
                              "--limit", "1", "--sort", "{\"_id\": 1}", "--quiet"});
  EXPECT_EQ(with_header.out, "_id,a\n1,x\n");
  auto both = run_cli({"mongo", "export", uri_, ns_, "-q", "{}", "--queryFile", query});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--query and --queryFile"), std::string::npos) << both.err;
  auto missing = run_cli({"mongo", "export", uri_, ns_, "--queryFile", (dir / "none").string()});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot read the file"), std::string::npos) << missing.err;

  // import --ignoreBlanks: empty CSV fields are left out rather than stored as "".
  auto blanks = run_cli({"mongo", "import", uri_, ns_ + "3", "--type", "csv", "--headerline",
                         "--ignoreBlanks", "--quiet"},
                        "_id,a,b\n1,,x\n2,y,\n");
  ASSERT_EQ(blanks.status, 0) << blanks.err;
  auto imported = run_cli({"mongo", "find", uri_, ns_ + "3", "--sort", "{\"_id\": 1}"});
  EXPECT_EQ(imported.out, "{\"_id\":1,\"b\":\"x\"}\n{\"_id\":2,\"a\":\"y\"}\n");

  // --readPreference: a mode or mongo-tools' document; anything else is a usage error.
  auto nearest = run_cli(
      {"mongo", "export", uri_, ns_, "--readPreference", "nearest", "--quiet", "--limit", "1"});
  EXPECT_EQ(nearest.status, 0) << nearest.err;
  auto doc = run_cli({"mongo", "run", uri_, "admin", "{\"ping\": 1}", "--readPreference",
                      "{\"mode\": \"secondaryPreferred\"}"});
  EXPECT_EQ(doc.status, 0) << doc.err;
  for (const std::string bad : {"sometimes", "{\"mod\": \"nearest\"}", "{\"mode\": 1}"}) {
    auto refused = run_cli({"mongo", "export", uri_, ns_, "--readPreference", bad});
    EXPECT_EQ(refused.status, 2) << bad;
    EXPECT_NE(refused.err.find("--readPreference"), std::string::npos) << refused.err;
  }
  // It conflicts with the connection string's own.
  auto conflict = run_cli(
      {"mongo", "export",
       uri_ + (uri_.find('?') == std::string::npos ? "?" : "&") + "readPreference=secondary", ns_,
       "--readPreference", "nearest"});
  EXPECT_EQ(conflict.status, 2);
  EXPECT_NE(conflict.err.find("--readPreference conflicts with the connection string's "
                              "readPreference"),
            std::string::npos)
      << conflict.err;

  // -v (mongo-tools'): the connection string the flags made, on stderr, never the password.
  auto verbose = run_cli({"mongo", "count", uri_, ns_, "-v"});
  EXPECT_EQ(verbose.status, 0) << verbose.err;
  EXPECT_EQ(verbose.err.rfind("oid: connecting to mongodb://", 0), 0u) << verbose.err;
  auto with_password =
      run_cli({"mongo", "ping", uri_, "-u", "bob", "-p", "s3cret-pw", "--verbose", "-v"});
  EXPECT_NE(with_password.err.find("oid: connecting to mongodb://bob:<secret>@"), std::string::npos)
      << with_password.err;
  EXPECT_EQ(with_password.err.find("s3cret-pw"), std::string::npos) << with_password.err;

  for (const auto& extra : {ns_ + "2", ns_ + "3"}) {
    auto c = oid::mongo::client::create(uri_);
    if (c)
      (void)c->collection(extra.substr(0, extra.find('.')), extra.substr(extra.find('.') + 1))
          .drop();
  }
  std::filesystem::remove_all(dir);
}

TEST_F(MongoCliServerTest, DuplicateKeysPerDocumentAndUnordered) {
  const std::string input = "{\"_id\": 1}\n{\"_id\": 2}\n{\"_id\": 1}\n{\"_id\": 3}\n";
  auto unordered = run_cli({"mongo", "insert", uri_, ns_, "--unordered"}, input);
  EXPECT_EQ(unordered.status, 1);
  EXPECT_EQ(lines(unordered.out)[0], "inserted 3 documents, 1 refused");
  EXPECT_NE(unordered.err.find("document 3: duplicate key"), std::string::npos) << unordered.err;

  auto ordered =
      run_cli({"mongo", "insert", uri_, ns_}, "{\"_id\": 4}\n{\"_id\": 2}\n{\"_id\": 5}\n");
  EXPECT_EQ(ordered.status, 1);
  EXPECT_EQ(lines(ordered.out)[0],
            "inserted 1 documents, 1 refused; stopped at the first refusal (--unordered goes on)");
  EXPECT_NE(ordered.err.find("document 2: duplicate key"), std::string::npos) << ordered.err;

  auto fire = run_cli({"mongo", "insert", uri_, ns_, "--w0"}, "{\"_id\": 6}\n{\"_id\": 6}\n");
  EXPECT_EQ(fire.status, 0) << fire.err;
  EXPECT_EQ(lines(fire.out)[0], "sent 2 documents (w: 0, not acknowledged)");
  // Nothing acknowledged the w: 0 write, and this find runs on another connection: give the
  // server a moment to apply it.
  oid::testing::cli_outcome all;
  for (int attempt = 0; attempt < 50; ++attempt) {
    all = run_cli({"mongo", "find", uri_, ns_});
    if (lines(all.out).size() == 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(lines(all.out).size(), 5u) << all.out;  // 1, 2, 3, 4, 6
}

}  // namespace

// find --tail follows a capped collection: what is there, then what a writer appends, until
// nothing new came for --idle-timeout seconds. (Batches of one: FerretDB v1.24 closes a tailable
// cursor whose first batch holds every document, where MongoDB keeps it open.)
TEST_F(MongoCliServerTest, FindTailFollowsACappedCollectionUntilIdle) {
  const std::string db = ns_.substr(0, ns_.find('.'));
  auto c = oid::mongo::client::create(uri_).value();
  auto capped = oid::bson::builder();
  capped.append_bool("capped", true).append_int32("size", 1 << 20);
  ASSERT_TRUE(c.database(db).create_collection("c", capped.view()).has_value());
  auto coll = c.database(db).collection("c");
  const auto put = [&coll](int n) {
    oid::bson::builder b;
    b.append_int32("_id", n);
    return coll.insert_one(b.view()).has_value();
  };
  ASSERT_TRUE(put(1));
  ASSERT_TRUE(put(2));
  oid::testing::cli_outcome tailed;
  std::thread reader([&] {
    tailed = run_cli(
        {"mongo", "find", uri_, ns_, "--tail", "--batch-size", "1", "--idle-timeout", "1.5"});
  });
  for (int n = 3; n <= 5; ++n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(put(n));
  }
  reader.join();
  EXPECT_EQ(tailed.status, 0) << tailed.err;
  EXPECT_EQ(lines(tailed.out),
            (std::vector<std::string>{R"({"_id":1})", R"({"_id":2})", R"({"_id":3})",
                                      R"({"_id":4})", R"({"_id":5})"}));
  // Not capped: the server's refusal, said.
  auto plain = run_cli({"mongo", "find", uri_, db + ".plain", "--tail"});
  EXPECT_EQ(plain.status, 1);
  EXPECT_FALSE(plain.err.empty());
  auto lonely = run_cli({"mongo", "find", uri_, ns_, "--idle-timeout", "1"});
  EXPECT_EQ(lonely.status, 1);
  EXPECT_NE(lonely.err.find("--idleTimeout goes with --tail"), std::string::npos) << lonely.err;
}

// The built binary, interrupted: Ctrl-C (SIGINT) ends --tail with status 0 and what it printed.
TEST_F(MongoCliServerTest, FindTailEndsCleanlyOnSigint) {
  const std::string db = ns_.substr(0, ns_.find('.'));
  auto c = oid::mongo::client::create(uri_).value();
  auto capped = oid::bson::builder();
  capped.append_bool("capped", true).append_int32("size", 1 << 20);
  ASSERT_TRUE(c.database(db).create_collection("c", capped.view()).has_value());
  oid::bson::builder doc;
  doc.append_int32("_id", 7);
  ASSERT_TRUE(c.database(db).collection("c").insert_one(doc.view()).has_value());
  auto r =
      oid::testing::run_shell("timeout --preserve-status -s INT 2 '" + std::string(OID_BINARY) +
                              "' mongo find '" + uri_ + "' " + ns_ + " --tail --batch-size 1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "{\"_id\":7}\n");
}

TEST(MongoCliTest, AdminCommandsRefuseBadArgumentsWithoutAServer) {
  const std::string nowhere = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100";
  auto db = run_cli({"mongo", "collections", nowhere, "a/b"});
  EXPECT_EQ(db.status, 1);
  EXPECT_NE(db.err.find("DB \"a/b\""), std::string::npos) << db.err;
  auto json = run_cli({"mongo", "run", nowhere, "admin", R"({"ping": )"});
  EXPECT_EQ(json.status, 1);
  EXPECT_NE(json.err.find("COMMAND"), std::string::npos) << json.err;
  auto empty = run_cli({"mongo", "run", nowhere, "admin", "{}"});
  EXPECT_EQ(empty.status, 1);
  EXPECT_NE(empty.err.find("names no command"), std::string::npos) << empty.err;
  auto mode =
      run_cli({"mongo", "run", nowhere, "admin", R"({"ping": 1})", "--read-preference", "closest"});
  EXPECT_EQ(mode.status, 2);  // a connection flag's usage error, as every command's
  EXPECT_NE(mode.err.find("--readPreference: unknown mode \"closest\""), std::string::npos)
      << mode.err;
  EXPECT_EQ(run_cli({"mongo", "run", nowhere, "admin"}).status, 2);  // no COMMAND
}

// databases, collections and run against FerretDB: what mongosh's show dbs, show collections and
// db.runCommand show.
TEST_F(MongoCliServerTest, DatabasesCollectionsAndRun) {
  const std::string db = ns_.substr(0, ns_.find('.'));
  auto ins = run_cli({"mongo", "insert", uri_, ns_, "-"}, "{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n");
  ASSERT_EQ(ins.status, 0) << ins.err;

  auto dbs = run_cli({"mongo", "databases", uri_});
  ASSERT_EQ(dbs.status, 0) << dbs.err;
  bool listed = false;
  for (const auto& line : lines(dbs.out)) listed = listed || line.rfind(db + " ", 0) == 0;
  EXPECT_TRUE(listed) << dbs.out;
  auto dbs_json = run_cli({"mongo", "databases", uri_, "--json"});
  ASSERT_EQ(dbs_json.status, 0) << dbs_json.err;
  EXPECT_NE(dbs_json.out.find("\"name\":\"" + db + "\""), std::string::npos) << dbs_json.out;

  auto colls = run_cli({"mongo", "collections", uri_, db});
  ASSERT_EQ(colls.status, 0) << colls.err;
  const auto rows = lines(colls.out);
  ASSERT_EQ(rows.size(), 2u) << colls.out;
  EXPECT_EQ(rows[0].rfind("NAME  TYPE        DOCUMENTS", 0), 0u) << colls.out;
  EXPECT_EQ(rows[1].rfind("c     collection          3", 0), 0u) << colls.out;
  auto colls_json = run_cli({"mongo", "collections", uri_, db, "--json"});
  ASSERT_EQ(colls_json.status, 0) << colls_json.err;
  EXPECT_EQ(colls_json.out.rfind(R"({"name":"c","type":"collection","count":3,"size":)", 0), 0u)
      << colls_json.out;

  auto count = run_cli({"mongo", "run", uri_, db, R"({"count": "c", "query": {"n": {"$gt": 1}}})"});
  ASSERT_EQ(count.status, 0) << count.err;
  EXPECT_EQ(count.out, "{\"n\":2,\"ok\":1.0}\n");
  auto canonical = run_cli({"mongo", "run", uri_, db, R"({"count": "c"})", "--canonical",
                            "--read-preference", "primaryPreferred"});
  ASSERT_EQ(canonical.status, 0) << canonical.err;
  EXPECT_EQ(canonical.out, "{\"n\":{\"$numberInt\":\"3\"},\"ok\":{\"$numberDouble\":\"1.0\"}}\n");
  auto pretty = run_cli({"mongo", "run", uri_, db, R"({"count": "c"})", "--pretty"});
  ASSERT_EQ(pretty.status, 0) << pretty.err;
  EXPECT_EQ(pretty.out, "{\n  \"n\": 3,\n  \"ok\": 1.0\n}\n");
  auto refused = run_cli({"mongo", "run", uri_, db, R"({"noSuchCommand": 1})"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("noSuchCommand"), std::string::npos) << refused.err;
}

// oid mongo files: put, list, get (newest, by revision, by id, to stdout), delete; a failed get
// leaves no file behind.
TEST_F(MongoCliServerTest, FilesPutListGetDelete) {
  const std::string db = ns_.substr(0, ns_.find('.'));
  const auto dir = std::filesystem::temp_directory_path() / ("oid_files_" + db);
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  };
  const auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::string big(600 * 1024 + 17, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 1000);
  const auto v1 = write("report.bin", big);
  auto put = run_cli({"mongo", "files", "put", uri_, db, v1});
  ASSERT_EQ(put.status, 0) << put.err;
  EXPECT_EQ(put.out.rfind("stored report.bin as ", 0), 0u) << put.out;
  const std::string first_id = put.out.substr(std::string("stored report.bin as ").size(), 24);
  const auto v2 = write("v2", "second revision");
  auto put2 = run_cli({"mongo", "files", "put", uri_, db, v2, "--name", "report.bin", "--metadata",
                       R"({"by": "ada"})", "--chunk-size", "4"});
  ASSERT_EQ(put2.status, 0) << put2.err;

  auto list = run_cli({"mongo", "files", "list", uri_, db});
  ASSERT_EQ(list.status, 0) << list.err;
  const auto rows = lines(list.out);
  ASSERT_EQ(rows.size(), 3u) << list.out;
  EXPECT_EQ(rows[0].rfind("NAME         BYTES  UPLOADED", 0), 0u) << list.out;
  EXPECT_EQ(rows[1].rfind("report.bin  614417  20", 0), 0u) << list.out;
  EXPECT_NE(rows[1].find(first_id), std::string::npos) << list.out;
  EXPECT_EQ(rows[2].rfind("report.bin      15  20", 0), 0u) << list.out;
  auto json = run_cli({"mongo", "files", "list", uri_, db, "rep", "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find(R"("metadata":{"by":"ada"})"), std::string::npos) << json.out;
  EXPECT_EQ(run_cli({"mongo", "files", "list", uri_, db, "r.p"}).out,
            "NAME  BYTES  UPLOADED  ID\n");

  const auto out = dir / "out.bin";
  auto newest = run_cli({"mongo", "files", "get", uri_, db, "report.bin", "--out", out.string()});
  ASSERT_EQ(newest.status, 0) << newest.err;
  EXPECT_EQ(newest.out, "wrote " + out.string() + " (15 bytes)\n");
  EXPECT_EQ(read(out), "second revision");
  std::filesystem::remove(out);
  auto oldest = run_cli(
      {"mongo", "files", "get", uri_, db, "report.bin", "--revision", "0", "--out", out.string()});
  ASSERT_EQ(oldest.status, 0) << oldest.err;
  EXPECT_TRUE(read(out) == big);
  std::filesystem::remove(out);
  auto by_id = run_cli({"mongo", "files", "get", uri_, db, "--id", first_id, "--out", "-"});
  ASSERT_EQ(by_id.status, 0) << by_id.err;
  EXPECT_TRUE(by_id.out == big);

  auto missing = run_cli({"mongo", "files", "get", uri_, db, "nothing", "--out", out.string()});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no file named 'nothing'"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".partial"));

  auto del = run_cli({"mongo", "files", "delete", uri_, db, "report.bin"});
  ASSERT_EQ(del.status, 0) << del.err;
  EXPECT_EQ(del.out, "deleted report.bin\n");
  EXPECT_EQ(run_cli({"mongo", "files", "delete", uri_, db, "report.bin"}).status, 1);
  EXPECT_EQ(run_cli({"mongo", "files", "get", uri_, db}).status, 1);  // neither NAME nor --id
  std::filesystem::remove_all(dir);
}

TEST(MongoCliTest, TopologyOfAnUnreachableServerShowsItsError) {
  auto r = run_cli({"mongo", "topology", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300"});
  EXPECT_EQ(r.status, 1);
  // One seed without directConnection: Unknown until a check answers (none does).
  EXPECT_EQ(r.out.rfind("topology Unknown\n  127.0.0.1:1  Unknown  error: ", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("no server answered"), std::string::npos) << r.err;
}

// Against the server of MONGODB_URI (FerretDB without replica set: the seed's monitor finds a
// Standalone, which makes the topology Single).
TEST(MongoCliTest, TopologyOfAStandalone) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri);
  auto text = run_cli({"mongo", "topology", uri});
  EXPECT_EQ(text.status, 0) << text.err;
  const auto l = lines(text.out);
  ASSERT_EQ(l.size(), 2u) << text.out;
  EXPECT_EQ(l[0], "topology Single");
  EXPECT_NE(l[1].find("  Standalone  rtt "), std::string::npos) << l[1];
  auto json = run_cli({"mongo", "topology", uri, "--json"});
  EXPECT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\"type\":\"Single\",\"servers\":[{\"address\":", 0), 0u) << json.out;
  EXPECT_NE(json.out.find("\"type\":\"Standalone\",\"rttMS\":"), std::string::npos) << json.out;
}
