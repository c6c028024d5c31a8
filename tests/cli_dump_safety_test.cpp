// oid mongo dump and restore against a hostile server and a hostile dump directory: names from a
// server never become paths unchecked, files are created new (never through a symbolic link) and
// private, and restore writes only the namespaces it checked and filtered. The scripted server
// (tests/support/script_server.hpp) says what FerretDB would refuse to hold; the restore tests
// that need a real server use MONGODB_URI (skipped without it, failing under CI=true).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "mongo/archive.hpp"
#include "mongo/tools.hpp"
#include "support/run_cli.hpp"
#include "support/run_shell.hpp"
#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using oid::testing::run_cli;

TEST(DumpNamesTest, DatabaseAndCollectionNamesFollowTheServersRules) {
  using oid::cli::collection_name_problem;
  using oid::cli::database_name_problem;
  for (const std::string& good : {"shop"s, "a-b_c"s, "Ünïcode"s, std::string(64, 'd')}) {
    EXPECT_EQ(database_name_problem(good), "") << good;
  }
  for (const std::string& bad :
       {""s, ".."s, "."s, "/etc"s, "a/b"s, "a\\b"s, "a b"s, "a\"b"s, "a$b"s, "a*b"s, "a<b"s, "a>b"s,
        "a:b"s, "a|b"s, "a?b"s, "a\0b"s, std::string(65, 'd')}) {
    EXPECT_NE(database_name_problem(bad), "") << bad;
  }
  for (const std::string& good : {"c"s, "a/../../x"s, "x.."s, "a.b"s, "system.users"s}) {
    EXPECT_EQ(collection_name_problem("db", good), "") << good;
  }
  for (const std::string& bad : {""s, "."s, ".."s, ".hidden"s, "a$b"s, "a\0b"s}) {
    EXPECT_NE(collection_name_problem("db", bad), "") << bad;
  }
  EXPECT_NE(collection_name_problem("db", std::string(253, 'c')), "");
  EXPECT_EQ(collection_name_problem("db", std::string(252, 'c')), "");
}

// A server whose listDatabases and listCollections name what no MongoDB holds: paths out of the
// dump directory, a NUL that would cut the name at open(2), beside one good database with one
// good collection of one document.
class lying_server {
 public:
  lying_server() : server_([this](oid::testing::peer& p, int) { serve(p); }) {}
  std::string uri() const { return server_.uri(); }
  std::set<std::string> finds() {
    std::lock_guard lock(m_);
    return finds_;
  }

  static std::vector<std::string> bad_databases() {
    return {"..", "/tmp", "../escape", "a\0b"s, "x/y"};
  }
  static std::vector<std::string> collections() {
    return {"good", "a/../../x", "..", "a\0b"s, "$cmd", "."};
  }

 private:
  void serve(oid::testing::peer& p) {
    if (!p.handshake()) return;
    while (auto m = p.read()) {
      const std::string name = oid::testing::command_name(*m);
      const auto db = std::string(m->body.find("$db")->get_string().value_or(""));
      oid::bson::builder b;
      if (name == "listDatabases") {
        b.open_array("databases");
        int i = 0;
        for (const auto& n : bad_databases()) {
          b.open_document(std::to_string(i++)).append_string("name", n).close();
        }
        b.open_document(std::to_string(i++)).append_string("name", "fine").close();
        b.close().append_double("ok", 1.0);
      } else if (name == "listCollections" || name == "listIndexes" || name == "find") {
        b.open_document("cursor").append_int64("id", 0).append_string("ns", db + ".x");
        b.open_array("firstBatch");
        if (name == "listCollections") {
          int i = 0;
          for (const auto& n : collections()) {
            b.open_document(std::to_string(i++)).append_string("name", n);
            b.append_string("type", "collection").open_document("options").close().close();
          }
        } else if (name == "find") {
          std::lock_guard lock(m_);
          finds_.insert(db + "." + std::string(m->body.find("find")->get_string().value_or("")));
          b.open_document("0").append_int32("_id", 1).close();
        }
        b.close().close().append_double("ok", 1.0);
      } else {
        b.append_double("ok", 1.0);
      }
      p.reply(*m, b.view());
    }
  }
  std::mutex m_;
  std::set<std::string> finds_;
  oid::testing::script_server server_;
};

// Every regular file below `dir`, relative to it.
std::set<std::string> files_below(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

// Before: "../escape" and "/tmp" were joined to --out as they came, "a/../../x" was written as
// a%2F..%2F..%2Fx (safe only by luck of the escape), and a NUL cut the name.
TEST(DumpSafetyTest, NamesNoServerCouldHoldAreRefusedAndTheRestIsDumped) {
  lying_server server;
  const fs::path root = oid::testing::scratch_path("lying");
  fs::remove_all(root);
  const fs::path out = root / "out";
  const auto r = run_cli({"mongo", "dump", server.uri(), "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.status, 1) << r.err;
  for (const auto* n : {"\"..\"", "\"/tmp\"", "\"../escape\"", "\"a\\x00b\"", "\"x/y\""}) {
    EXPECT_NE(r.err.find("skipping database "s + n), std::string::npos) << n << '\n' << r.err;
  }
  for (const auto* n : {"\"..\"", "\"a\\x00b\"", "\"$cmd\"", "\".\""}) {
    EXPECT_NE(r.err.find("skipping collection "s + n + " of database fine"), std::string::npos)
        << n << '\n'
        << r.err;
  }
  // Nothing outside --out: the scratch directory holds only it.
  std::set<std::string> top;
  for (const auto& e : fs::directory_iterator(root)) top.insert(e.path().filename().string());
  EXPECT_EQ(top, (std::set<std::string>{"out"}));
  EXPECT_FALSE(fs::exists(root / "escape"));
  // The good collections are there, the odd-but-valid name percent-encoded into one file name.
  EXPECT_EQ(files_below(out), (std::set<std::string>{"fine/good.bson", "fine/good.metadata.json",
                                                     "fine/a%2F..%2F..%2Fx.bson",
                                                     "fine/a%2F..%2F..%2Fx.metadata.json"}));
  EXPECT_EQ(server.finds(), (std::set<std::string>{"fine.good", "fine.a/../../x"}));
  // Private: the directories 0700, the files 0600 (the umask may take more, never add).
  struct stat st {};
  ASSERT_EQ(::stat((out / "fine").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
  ASSERT_EQ(::stat((out / "fine" / "good.bson").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0177, 0u) << std::oct << st.st_mode;
}

// Before: the .partial file was opened with fopen("wb"), which writes through a link planted at
// that predictable name.
TEST(DumpSafetyTest, ALinkPlantedAtThePartialNameIsNotFollowed) {
  lying_server server;
  const fs::path root = oid::testing::scratch_path("planted");
  fs::remove_all(root);
  const fs::path out = root / "out", victim = root / "victim";
  fs::create_directories(out / "fine");
  fs::permissions(out / "fine", fs::perms::owner_all);
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, out / "fine" / "good.bson.partial");
  // And a database directory that is a link: refused, not followed.
  fs::create_directories(root / "elsewhere");
  fs::create_directory_symlink(root / "elsewhere", out / "other");
  const auto r = run_cli({"mongo", "dump", server.uri(), "--db", "fine", "--out", out.string()});
  EXPECT_EQ(r.status, 1) << r.err;  // the collections with bad names
  EXPECT_EQ(oid::testing::read_file(victim.string()), "precious");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out / "fine" / "good.bson")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "fine" / "good.bson.partial")));

  const auto linked =
      run_cli({"mongo", "dump", server.uri(), "--db", "other", "--out", out.string()});
  EXPECT_EQ(linked.status, 1);
  EXPECT_NE(linked.err.find("symbolic link, not followed"), std::string::npos) << linked.err;
  EXPECT_TRUE(fs::is_empty(root / "elsewhere"));
}

// A server with one database, "fine", holding the collections named, each with one document
// {_id: 1, from: NAME}, so that a file shows whose documents it holds.
class named_server {
 public:
  explicit named_server(std::vector<std::string> names)
      : names_(std::move(names)), server_([this](oid::testing::peer& p, int) { serve(p); }) {}
  std::string uri() const { return server_.uri(); }

 private:
  void serve(oid::testing::peer& p) {
    if (!p.handshake()) return;
    while (auto m = p.read()) {
      const std::string name = oid::testing::command_name(*m);
      const auto db = std::string(m->body.find("$db")->get_string().value_or(""));
      oid::bson::builder b;
      if (name == "listDatabases") {
        b.open_array("databases").open_document("0").append_string("name", "fine").close();
        b.close().append_double("ok", 1.0);
      } else if (name == "listCollections" || name == "listIndexes" || name == "find") {
        b.open_document("cursor").append_int64("id", 0).append_string("ns", db + ".x");
        b.open_array("firstBatch");
        if (name == "listCollections" && db == "fine") {
          int i = 0;
          for (const auto& n : names_) {
            b.open_document(std::to_string(i++)).append_string("name", n);
            b.append_string("type", "collection").open_document("options").close().close();
          }
        } else if (name == "find") {
          b.open_document("0").append_int32("_id", 1);
          b.append_string("from", m->body.find("find")->get_string().value_or("")).close();
        }
        b.close().close().append_double("ok", 1.0);
      } else {
        b.append_double("ok", 1.0);
      }
      p.reply(*m, b.view());
    }
  }
  std::vector<std::string> names_;
  oid::testing::script_server server_;
};

// The "from" field of the one document in the dump file `path` ("" when it holds no document).
std::string from_of(const fs::path& path) {
  const std::string bytes = oid::testing::read_file(path.string());
  const auto d = oid::bson::validate(
      std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  if (!d) return "";
  const auto from = d->find("from");
  return from ? std::string(from->get_string().value_or("")) : "";
}

// Before: dump wrote into an existing --out, or database directory, whatever its owner and mode:
// one that another user owns, or that group or others may write to, lets them plant, read or
// swap what the dump writes (docs/command.md promises directories only the owner can use).
TEST(DumpSafetyTest, AnExistingDirectoryAnotherUserControlsIsRefused) {
  named_server server({"good"});
  struct test_case {
    const char* name;
    const char* where;  // "out" or "db": which directory is made before the dump
    fs::perms mode;
    uid_t owner;  // the test's own uid, or nobody's
    const char* words;
  };
  const uid_t me = ::geteuid(), other = 65534;  // nobody
  const test_case cases[] = {
      {"--out mode 0777", "out", fs::perms::all, me, "may be written by its group or others"},
      {"--out mode 0770", "out", fs::perms::owner_all | fs::perms::group_all, me,
       "may be written by its group or others"},
      {"--out owned by nobody", "out", fs::perms::owner_all, other, "belongs to another user"},
      {"database directory mode 0777", "db", fs::perms::all, me,
       "may be written by its group or others"},
      {"database directory owned by nobody", "db", fs::perms::owner_all, other,
       "belongs to another user"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path root = oid::testing::scratch_path("shared_dir");
    fs::remove_all(root);
    const fs::path out = root / "out", dir = std::string(c.where) == "out" ? out : out / "fine";
    fs::create_directories(dir);
    fs::permissions(out, fs::perms::owner_all);
    fs::permissions(dir, c.mode);
    if (c.owner != me) {
      if (me != 0) GTEST_SKIP() << "chown to another user needs root";
      ASSERT_EQ(::chown(dir.c_str(), c.owner, static_cast<gid_t>(-1)), 0);
    }
    const auto r = run_cli({"mongo", "dump", server.uri(), "--db", "fine", "--out", out.string()});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(dir.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
    EXPECT_TRUE(files_below(out).empty()) << r.err;
  }
  // The control: an existing --out of the test's own, mode 0755, keeps its mode and takes the dump.
  const fs::path root = oid::testing::scratch_path("own_dir");
  fs::remove_all(root);
  fs::create_directories(root / "out");
  fs::permissions(root / "out", fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
  const auto r = run_cli(
      {"mongo", "dump", server.uri(), "--db", "fine", "--out", (root / "out").string(), "--quiet"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(files_below(root / "out"),
            (std::set<std::string>{"fine/good.bson", "fine/good.metadata.json"}));
  fs::remove_all(root);
}

// Before: a file already at DIR/DB/COLL.bson (an older dump's, or one planted there, or a link)
// was replaced by the rename that ends each file. Now dump never replaces a file it did not write
// in this run: it says which, leaves it as it was, and dumps the other collections.
TEST(DumpSafetyTest, AFileDumpDidNotWriteIsNeverReplaced) {
  named_server server({"good", "other"});
  const fs::path root = oid::testing::scratch_path("existing_file");
  fs::remove_all(root);
  const fs::path out = root / "out", victim = root / "victim";
  fs::create_directories(out / "fine");
  fs::permissions(out, fs::perms::owner_all);
  fs::permissions(out / "fine", fs::perms::owner_all);
  std::ofstream(out / "fine" / "good.bson") << "precious";
  std::ofstream(victim) << "precious too";
  fs::create_symlink(victim, out / "fine" / "other.metadata.json");
  const auto r = run_cli({"mongo", "dump", server.uri(), "--db", "fine", "--out", out.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find((out / "fine" / "good.bson").string() + " already exists"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find((out / "fine" / "other.metadata.json").string() + " already exists"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(oid::testing::read_file((out / "fine" / "good.bson").string()), "precious");
  EXPECT_TRUE(fs::is_symlink(out / "fine" / "other.metadata.json"));
  EXPECT_EQ(oid::testing::read_file(victim.string()), "precious too");
  // No leftover .partial; what could be written was (other.metadata.json is the link).
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out / "fine")) {
    names.insert(e.path().filename().string());
  }
  EXPECT_EQ(names, (std::set<std::string>{"good.bson", "other.bson", "other.metadata.json"}));
  EXPECT_EQ(from_of(out / "fine" / "other.bson"), "other");

  // A second dump into the directory of a first: refused file by file, the first dump kept.
  const fs::path again = root / "again";
  ASSERT_EQ(run_cli({"mongo", "dump", server.uri(), "--out", again.string(), "--quiet"}).status, 0);
  const auto before = files_below(again);
  const auto second = run_cli({"mongo", "dump", server.uri(), "--out", again.string(), "--quiet"});
  EXPECT_EQ(second.status, 1);
  EXPECT_NE(second.err.find("already exists"), std::string::npos) << second.err;
  EXPECT_EQ(files_below(again), before);
  fs::remove_all(root);
}

// Before: "Users" and "users" were written to Users.bson and users.bson, which a case-insensitive
// file system (macOS, Windows, ext4 with casefold) takes for one file: the second dumped replaced
// the first. Now the second of two names whose files would differ only in letter case is not
// dumped (said on stderr, exit 1); neither file is written over, and the others are dumped.
TEST(DumpSafetyTest, CollectionsWhoseFilesDifferOnlyInCaseAreNotBothWritten) {
  named_server server({"Users", "other", "users", "USERS", "a/b", "A/b"});
  const fs::path root = oid::testing::scratch_path("case_names");
  fs::remove_all(root);
  const fs::path out = root / "out";
  const auto r =
      run_cli({"mongo", "dump", server.uri(), "--db", "fine", "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.status, 1) << r.err;
  for (const auto& [name, file, first] :
       {std::tuple{"users", "users", "Users"}, std::tuple{"USERS", "USERS", "Users"},
        std::tuple{"A/b", "A%2Fb", "a/b"}}) {
    EXPECT_NE(r.err.find("fine."s + name + ": not dumped: its files would be named " + file +
                         ".bson and " + file +
                         ".metadata.json, which a case-insensitive file "
                         "system takes for those of collection \"" +
                         first + "\""),
              std::string::npos)
        << name << '\n'
        << r.err;
  }
  EXPECT_EQ(files_below(out),
            (std::set<std::string>{"fine/Users.bson", "fine/Users.metadata.json", "fine/other.bson",
                                   "fine/other.metadata.json", "fine/a%2Fb.bson",
                                   "fine/a%2Fb.metadata.json"}));
  EXPECT_EQ(from_of(out / "fine" / "Users.bson"), "Users");
  EXPECT_EQ(from_of(out / "fine" / "a%2Fb.bson"), "a/b");
  EXPECT_NE(oid::testing::read_file((out / "fine" / "Users.metadata.json").string())
                .find(R"("collectionName":"Users")"),
            std::string::npos);
  // With --archive each name is a field of its own: all are dumped.
  const auto archive = run_cli({"mongo", "dump", server.uri(), "--db", "fine",
                                "--archive=" + (root / "all.archive").string(), "--quiet"});
  EXPECT_EQ(archive.status, 0) << archive.err;
  fs::remove_all(root);
}

// Names FerretDB holds (and MongoDB allows) that look like paths or escapes: each is dumped into
// one file inside --out/DB, nothing is written beside --out, and restore puts every document back
// under the name it came from.
class DumpRealServerTest : public oid::testing::server_test {
 protected:
  DumpRealServerTest() : server_test("oid_dsafe_") {}
};

TEST_F(DumpRealServerTest, PathLikeCollectionNamesStayInsideOutAndRoundTrip) {
  const std::vector<std::string> names = {"a/../../x", "x..", "%2F", "a%2Fb", "a/b", "a\\b", "a b"};
  for (const auto& n : names) {
    oid::bson::builder b;
    b.append_string("from", n);
    ASSERT_TRUE(client_->collection(db_, n).insert_one(b.view()).has_value()) << n;
  }
  const fs::path root = oid::testing::scratch_path("realnames_" + db_);
  fs::remove_all(root);
  const fs::path out = root / "out";
  const auto r = run_cli({"mongo", "dump", uri_, "--db", db_, "--out", out.string(), "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<std::string> top;
  for (const auto& e : fs::directory_iterator(root)) top.insert(e.path().filename().string());
  EXPECT_EQ(top, (std::set<std::string>{"out"}));
  std::set<std::string> dirs;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (e.is_directory()) dirs.insert(fs::relative(e.path(), out).string());
  }
  EXPECT_EQ(dirs, (std::set<std::string>{db_}));  // "a/b" did not become a directory
  EXPECT_EQ(files_below(out).size(), 2 * names.size());

  for (const auto& n : names) {
    ASSERT_TRUE(client_->collection(db_, n).drop().has_value()) << n;
  }
  const auto back = run_cli({"mongo", "restore", uri_, out.string()});
  ASSERT_EQ(back.status, 0) << back.err;
  for (const auto& n : names) {
    const auto c = client_->collection(db_, n).count_documents();
    ASSERT_TRUE(c.has_value()) << n;
    EXPECT_EQ(*c, 1) << n;
  }
  fs::remove_all(root);
}

// ---- restore, against the real server --------------------------------------------------------

class RestoreSafetyTest : public oid::testing::server_test {
 protected:
  RestoreSafetyTest() : server_test("oid_rsafe_") {}
  void SetUp() override {
    server_test::SetUp();
    if (IsSkipped()) return;
    dir_ = oid::testing::scratch_path("restore_" + db_);
    fs::remove_all(dir_);
    fs::create_directories(dir_ / db_);
  }
  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / db_ / name, std::ios::binary) << bytes;
  }
  static std::string one_document() {
    oid::bson::builder b;
    b.append_int32("_id", 1);
    const auto v = b.view();
    return {reinterpret_cast<const char*>(v.data()), v.size()};
  }
  std::int64_t count(const std::string& coll) {
    const auto n = client_->collection(db_, coll).count_documents();
    return n ? *n : -1;
  }
  fs::path dir_;
};

// Before: the filters saw "decoy" (the file's name), while the metadata sent the documents to
// "target", and --drop dropped "target".
TEST_F(RestoreSafetyTest, FiltersAndDropSeeTheNamespaceTheMetadataWrites) {
  write("decoy.bson", one_document());
  write("decoy.metadata.json", R"({"indexes": [], "collectionName": "target"})");
  oid::bson::builder keep;
  keep.append_int32("_id", 7);
  ASSERT_TRUE(client_->collection(db_, "target").insert_one(keep.view()).has_value());

  const auto r =
      run_cli({"mongo", "restore", uri_, dir_.string(), "--drop", "--nsExclude", db_ + ".target"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // nothing left to restore
  EXPECT_EQ(count("target"), 1);             // not dropped
  EXPECT_EQ(count("decoy"), 0);

  const auto included =
      run_cli({"mongo", "restore", uri_, dir_.string(), "--nsInclude", db_ + ".decoy"});
  EXPECT_EQ(included.status, 1) << included.out << included.err;
  EXPECT_EQ(count("target"), 1);
}

// Before: admin.system.users (or any system.*) was restored like any collection.
TEST_F(RestoreSafetyTest, SystemCollectionsNeedTheirFlag) {
  write("system.users.bson", one_document());
  write("plain.bson", one_document());
  const auto r = run_cli({"mongo", "restore", uri_, dir_.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(db_ + ".system.users not restored"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--restoreDbUsersAndRoles"), std::string::npos) << r.err;
  EXPECT_EQ(count("plain"), 1);
}

// A name from the metadata that MongoDB would refuse, a directory no database could be named, and
// links to files outside the dump: none is read or restored.
TEST_F(RestoreSafetyTest, BadNamesAndLinksInTheDumpAreRefused) {
  write("bad.bson", one_document());
  write("bad.metadata.json", R"({"indexes": [], "collectionName": "x$y"})");
  const fs::path outside = oid::testing::scratch_path("outside_" + db_ + ".bson");
  std::ofstream(outside, std::ios::binary) << one_document();
  fs::create_symlink(outside, dir_ / db_ / "linked.bson");
  fs::create_directories(dir_ / "a b");
  std::ofstream(dir_ / "a b" / "c.bson", std::ios::binary) << one_document();
  write("fine.bson", one_document());

  const auto r = run_cli({"mongo", "restore", uri_, dir_.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("\"x$y\" in " + db_ + " not restored"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("linked.bson: a symbolic link, not followed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a b: not restored"), std::string::npos) << r.err;
  EXPECT_EQ(count("fine"), 1);
  EXPECT_EQ(count("linked"), 0);
  EXPECT_EQ(count("bad"), 0);
  fs::remove(outside);
}

}  // namespace

// ---- restore of a hostile dump, against a recording server ----------------------------------
// Where a restore may write is decided on the namespace it writes, after --nsFrom/--nsTo, for a
// directory and an archive alike: the commands the server received are the proof.

namespace restore_rules {

std::string one_document() {
  oid::bson::builder b;
  b.append_int32("_id", 1);
  const auto v = b.view();
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

// A dump directory: DIR/DB/FILE.bson for each {DB, collection}, each with one document; the
// collection's name in its metadata (so that any name can be given).
fs::path dump_dir(const std::string& tag,
                  const std::vector<std::pair<std::string, std::string>>& collections) {
  const fs::path dir = oid::testing::scratch_path("rules_" + tag);
  fs::remove_all(dir);
  int i = 0;
  for (const auto& [db, coll] : collections) {
    fs::create_directories(dir / db);
    const std::string file = "c" + std::to_string(i++);
    std::ofstream(dir / db / (file + ".bson"), std::ios::binary) << one_document();
    oid::bson::builder m;
    m.open_array("indexes").close().append_string("collectionName", coll);
    std::ofstream(dir / db / (file + ".metadata.json")) << oid::bson::to_json(m.view());
  }
  return dir;
}

// The same collections as a mongodump archive.
std::string dump_archive(const std::vector<std::pair<std::string, std::string>>& collections) {
  namespace archive = oid::cli::archive;
  std::string out;
  archive::writer w([&](std::string_view b) {
    out += b;
    return true;
  });
  std::vector<archive::collection_metadata> meta;
  for (const auto& [db, coll] : collections) {
    meta.push_back({db, coll, R"({"indexes":[]})", 0, "collection"});
  }
  EXPECT_TRUE(w.write_prelude({}, meta));
  const std::string doc = one_document();
  for (const auto& [db, coll] : collections) {
    archive::namespace_writer n(w, db, coll);
    EXPECT_TRUE(n.add({reinterpret_cast<const std::uint8_t*>(doc.data()), doc.size()}));
    EXPECT_TRUE(n.finish());
  }
  return out;
}

// DB.COLL of every command the server received that writes (create, insert, drop,
// createIndexes).
std::set<std::string> written(oid::testing::recording_server& server) {
  std::set<std::string> out;
  for (const auto& r : server.seen()) {
    const auto first = r.body.view().begin();
    if (first == r.body.view().end()) continue;
    const std::string name(first->key());
    if (name != "create" && name != "insert" && name != "drop" && name != "createIndexes") {
      continue;
    }
    const auto db = r.body.view().find("$db");
    out.insert(std::string(db ? db->get_string().value_or("") : "") + '.' +
               std::string(first->get_string().value_or("")));
  }
  return out;
}

struct restore_case {
  const char* name;
  std::vector<std::pair<std::string, std::string>> collections;  // the dump's
  std::vector<std::string_view> args;                            // after DIR or --archive
  std::set<std::string> want_written;
  std::string want_said;  // a piece of stderr
};

// Restores `c` from a directory and from an archive against a recording server, and with
// --dryRun from both; checks what was written and said.
void check_restore(const restore_case& c) {
  SCOPED_TRACE(c.name);
  const fs::path dir = dump_dir(c.name, c.collections);
  const std::string archive_file = oid::testing::scratch_path(std::string(c.name) + ".archive");
  std::ofstream(archive_file, std::ios::binary) << dump_archive(c.collections);
  const std::string archive_flag = "--archive=" + archive_file;
  for (const bool from_archive : {false, true}) {
    for (const bool dry : {false, true}) {
      SCOPED_TRACE(std::string(from_archive ? "archive" : "directory") + (dry ? " --dryRun" : ""));
      oid::testing::recording_server server;
      const std::string uri = server.uri();
      std::vector<std::string_view> args = {"mongo", "restore", uri};
      args.push_back(from_archive ? std::string_view(archive_flag) : std::string_view(dir.c_str()));
      args.insert(args.end(), c.args.begin(), c.args.end());
      if (dry) args.push_back("--dryRun");
      const auto r = run_cli(args);
      EXPECT_EQ(r.out, "");
      EXPECT_NE(r.err.find(c.want_said), std::string::npos) << r.err;
      if (dry) {
        EXPECT_TRUE(written(server).empty());
        // The dry run names each namespace as it would be written, and nothing else.
        std::set<std::string> would;
        for (const auto& line : oid::testing::lines(r.err)) {
          const auto at = line.find(": 1 documents");
          if (at == std::string::npos) continue;
          would.insert(line.substr(0, std::min(at, line.find(" (from "))));
        }
        EXPECT_EQ(would, c.want_written) << r.err;
      } else {
        EXPECT_EQ(written(server), c.want_written) << r.err;
      }
    }
  }
}

// Before: the system.* rule saw the dump's names (admin.bak_system.users, test.admin.system.users)
// and --nsFrom/--nsTo then renamed them into admin.system.users, which was created and filled.
TEST(RestoreRulesTest, ARenameCannotReachSystemCollections) {
  const restore_case cases[] = {
      {"bak_prefix",
       {{"admin", "bak_system.users"}, {"admin", "bak_data"}},
       {"--nsFrom", "admin.bak_*", "--nsTo", "admin.*"},
       {"admin.data"},
       "admin.bak_system.users (renamed admin.system.users) not restored"},
      {"db_in_collection",
       {{"test", "admin.system.users"}, {"test", "shop.orders"}},
       {"--nsFrom", "test.*", "--nsTo", "*"},
       {"shop.orders"},
       "test.admin.system.users (renamed admin.system.users) not restored"},
      {"named_variable",
       {{"x", "system.roles"}, {"x", "y"}},
       {"--nsFrom", "$d$.$c$", "--nsTo", "$d$.system.$c$"},
       {},
       "x.y (renamed x.system.y) not restored"},
  };
  for (const auto& c : cases) check_restore(c);
  // With --restoreDbUsersAndRoles the rename is what the operator asked for.
  check_restore({"bak_prefix_flag",
                 {{"admin", "bak_system.users"}},
                 {"--nsFrom", "admin.bak_*", "--nsTo", "admin.*", "--restoreDbUsersAndRoles"},
                 {"admin.system.users"},
                 "admin.system.users (from admin.bak_system.users): "});
}

// Before: a dump's local and config databases (the oplog, the sharding catalogue) were restored
// like any other, and a rename could write into them.
TEST(RestoreRulesTest, LocalAndConfigNeedTheirFlag) {
  check_restore({"local_config",
                 {{"local", "oplog.rs"}, {"config", "settings"}, {"test", "local"}, {"LOCAL", "x"}},
                 {},
                 {"test.local"},
                 "not restored (the local and config databases need --restoreLocalAndConfig)"});
  check_restore({"renamed_into_local",
                 {{"test", "oplog.rs"}, {"test", "kept"}},
                 {"--nsFrom", "test.oplog.rs", "--nsTo", "local.oplog.rs"},
                 {"test.kept"},
                 "test.oplog.rs (renamed local.oplog.rs) not restored"});
  check_restore({"local_config_flag",
                 {{"local", "oplog.rs"}, {"config", "settings"}},
                 {"--restoreLocalAndConfig"},
                 {"local.oplog.rs", "config.settings"},
                 "restore"});
}

// Before: a name the rename made invalid was refused, but only after the system.* rule had been
// passed on the dump's name; a bad name is refused wherever it comes from.
TEST(RestoreRulesTest, ARenameToABadNameIsRefused) {
  check_restore({"bad_rename",
                 {{"test", "a"}, {"test", "b"}},
                 {"--nsFrom", "test.a", "--nsTo", "te st.a"},
                 {"test.b"},
                 "test.a not restored: --nsTo makes it \"te st.a\""});
}

// Before: a collection's name, a file's name and a server's error message were put into
// restore's messages as they came, and the messages printed with their newlines kept: a dump (or
// a server) could print a line of its own, such as a reassuring one.
TEST(RestoreRulesTest, NamesAndServerTextCannotForgeALine) {
  const std::string forged = "oid: all collections verified OK";
  const std::string name = "x\n" + forged;
  oid::testing::recording_server server([&](const std::string& cmd, oid::bson::document_view,
                                            std::size_t) {
    oid::bson::builder b;
    if (cmd == "insert") {
      b.append_int32("n", 0).open_array("writeErrors").open_document("0");
      b.append_int32("index", 0)
          .append_int32("code", 121)
          .append_string("errmsg", "no\r\n" + forged);
      b.close().close().append_double("ok", 1.0);
    } else if (cmd == "create" || cmd == "createIndexes") {
      b.append_double("ok", 0.0).append_int32("code", 2).append_string("errmsg", "no\n" + forged);
    } else {
      b.append_double("ok", 1.0);
    }
    return std::move(b).extract();
  });
  const std::string uri = server.uri();
  const fs::path dir = dump_dir("forged", {{"test", name}, {"test\n" + forged, "c"}});
  // A file whose own name holds the line, and a linked database directory named so.
  std::ofstream(dir / "test" / (name + ".bson"), std::ios::binary) << one_document();
  fs::create_directory_symlink(dir / "test", dir / ("db\n" + forged));
  const std::string archive_file = oid::testing::scratch_path("forged.archive");
  std::ofstream(archive_file, std::ios::binary)
      << dump_archive({{"test", name}, {"test", "ok"}, {"test", "system." + name}});
  const std::string archive_flag = "--archive=" + archive_file;
  // And an archive cut short, so that the names are in the reader's error.
  const std::string cut_file = oid::testing::scratch_path("forged_cut.archive");
  const std::string whole = dump_archive({{"test", name}, {"test", name + "2"}});
  std::ofstream(cut_file, std::ios::binary) << whole.substr(0, whole.size() - 30);
  const std::string cut_flag = "--archive=" + cut_file;
  for (const std::vector<std::string_view>& args :
       {std::vector<std::string_view>{"mongo", "restore", uri, dir.c_str()},
        {"mongo", "restore", uri, dir.c_str(), "--dryRun"},
        {"mongo", "restore", uri, dir.c_str(), "--nsFrom", "test.*", "--nsTo", "te st.*"},
        {"mongo", "restore", uri, archive_flag},
        {"mongo", "restore", uri, archive_flag, "--dryRun"},
        {"mongo", "restore", uri, cut_flag}}) {
    SCOPED_TRACE(args.back());
    const auto r = run_cli(args);
    EXPECT_NE(r.err.find(forged), std::string::npos) << r.err;  // said, escaped
    for (const auto& line : oid::testing::lines(r.err)) {
      EXPECT_FALSE(line.starts_with(forged)) << r.err;
      EXPECT_EQ(line.find('\r'), std::string::npos) << r.err;
    }
  }
}

}  // namespace restore_rules
