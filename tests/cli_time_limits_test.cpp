// The time limits of the `oid mongo` commands (docs/command.md, "Time limits"): a single round
// trip ends within --timeout, a transfer ends when it makes no progress for --stallTimeout, and
// `find --tail` keeps following an idle collection. And the warning about a password on the
// command line. Scripted servers play the faults: one that stops answering after the handshake,
// one whose cursor never ends. Short limits keep the tests short; no test asserts how long
// anything took.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <oid/bson/builder.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mongo/connect.hpp"
#include "support/run_cli.hpp"
#include "support/scratch.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::testing::peer;
using oid::testing::run_cli;
using oid::testing::script_server;

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Answers the handshake, then reads the requests and answers none: the connection stays open
// until the client closes it (or five seconds of silence pass, when peer::read gives up).
void stop_answering(peer& p, int) {
  if (!p.handshake()) return;
  while (p.read()) {
  }
}

// {cursor: {id, ns: "d.c", <batch>: [{_id: first}, ... `count` documents]}, ok: 1}.
oid::bson::document cursor_reply(std::int64_t id, const char* batch, int first, int count) {
  builder b;
  b.open_document("cursor").append_int64("id", id).append_string("ns", "d.c");
  b.open_array(batch);
  for (int i = 0; i < count; ++i) {
    b.open_document(std::to_string(i)).append_int32("_id", first + i).close();
  }
  b.close().close();
  b.append_double("ok", 1.0);
  return std::move(b).extract();
}

// Replies to `m` with cursor_reply(...).
void reply_cursor(peer& p, const oid::mongo::op_msg& m, std::int64_t id, const char* batch,
                  int first, int count) {
  const auto body = cursor_reply(id, batch, first, count);
  p.reply(m, body.view());
}

std::string command_name(const oid::mongo::op_msg& m) {
  const auto first = m.body.begin();
  return first == m.body.end() ? std::string() : std::string((*first).key());
}

// A server whose cursors never end: find and aggregate give one document and cursor id 42, and
// every getMore an empty batch with the same id. It knows what dump asks first: one collection
// `c` in database `d`, with the _id index.
void endless_cursor(peer& p, int) {
  if (!p.handshake()) return;
  while (auto m = p.read()) {
    const std::string name = command_name(*m);
    if (name == "find" || name == "aggregate") {
      reply_cursor(p, *m, 42, "firstBatch", 1, 1);
    } else if (name == "getMore") {
      reply_cursor(p, *m, 42, "nextBatch", 0, 0);
    } else if (name == "listCollections") {
      builder b;
      b.open_document("cursor").append_int64("id", 0).append_string("ns", "d.$cmd");
      b.open_array("firstBatch").open_document("0").append_string("name", "c");
      b.append_string("type", "collection").open_document("options").close();
      b.open_document("info").append_bool("readOnly", false).close().close();
      b.close().close().append_double("ok", 1.0);
      p.reply(*m, b.view());
    } else if (name == "listIndexes") {
      builder b;
      b.open_document("cursor").append_int64("id", 0).append_string("ns", "d.c");
      b.open_array("firstBatch").open_document("0").append_int32("v", 2);
      b.open_document("key").append_int32("_id", 1).close().append_string("name", "_id_");
      b.close().close().close().append_double("ok", 1.0);
      p.reply(*m, b.view());
    } else {
      builder b;
      b.append_double("ok", 1.0);
      p.reply(*m, b.view());
    }
  }
}

// A cursor that is slow but moves: each getMore brings one document after `pause`, and the
// cursor ends after `batches` of them.
void slow_cursor(peer& p, std::chrono::milliseconds pause, int batches) {
  if (!p.handshake()) return;
  int sent = 0;
  while (auto m = p.read()) {
    const std::string name = command_name(*m);
    if (name == "find") {
      reply_cursor(p, *m, 42, "firstBatch", 0, 1);
    } else if (name == "getMore") {
      std::this_thread::sleep_for(pause);
      ++sent;
      reply_cursor(p, *m, sent == batches ? 0 : 42, "nextBatch", sent, 1);
    } else {
      builder b;
      b.append_double("ok", 1.0);
      p.reply(*m, b.view());
    }
  }
}

// A tailable cursor on an idle capped collection: one document, then each getMore waits its
// maxTimeMS (at most a second) and brings nothing. With `answer_get_more` false, the first
// getMore is never answered: the server stopped.
void idle_capped(peer& p, bool answer_get_more) {
  if (!p.handshake()) return;
  while (auto m = p.read()) {
    const std::string name = command_name(*m);
    if (name == "find") {
      reply_cursor(p, *m, 7, "firstBatch", 1, 1);
    } else if (name == "getMore") {
      if (!answer_get_more) continue;
      std::int64_t wait = 1000;
      if (const auto t = m->body.find("maxTimeMS"))
        wait = std::min<std::int64_t>(wait, t->get_int64().value_or(wait));
      std::this_thread::sleep_for(std::chrono::milliseconds(wait));
      reply_cursor(p, *m, 7, "nextBatch", 0, 0);
    } else {
      builder b;
      b.append_double("ok", 1.0);
      p.reply(*m, b.view());
    }
  }
}

TEST(CliTimeLimitsTest, DurationsAreSecondsOrANumberWithAUnit) {
  using std::chrono::milliseconds;
  struct {
    const char* text;
    std::int64_t want_ms;  // -1: refused
  } const cases[] = {
      {"30", 30'000},      {"2.5", 2'500},
      {"500ms", 500},      {"90s", 90'000},
      {"5m", 300'000},     {"1h", 3'600'000},
      {"1.5h", 5'400'000}, {"0", 0},
      {"0s", 0},           {".5", 500},
      {"24.8d", -1},       {"", -1},
      {"abc", -1},         {"5x", -1},
      {"-1", -1},          {"1e3", -1},
      {"30 s", -1},        {"s", -1},
      {"0.0001", -1},      {"99999999999", -1},
      {"597h", -1},        {"596h", 2'145'600'000},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto d = oid::cli::parse_duration(c.text);
    if (c.want_ms < 0) {
      EXPECT_FALSE(d.has_value());
    } else {
      ASSERT_TRUE(d.has_value()) << d.error();
      EXPECT_EQ(d->count(), c.want_ms);
    }
  }
  EXPECT_EQ(oid::cli::duration_text(milliseconds(30'000)), "30s");
  EXPECT_EQ(oid::cli::duration_text(milliseconds(300'000)), "5m");
  EXPECT_EQ(oid::cli::duration_text(milliseconds(5'400'000)), "1h30m");
  EXPECT_EQ(oid::cli::duration_text(milliseconds(1'500)), "1500ms");
}

// A server that stops answering after the handshake: ping ends with the time limit, naming it
// and the flag, whether the limit comes from --timeout or from the URI's timeoutMS.
TEST(CliTimeLimitsTest, PingOfAServerThatStopsAnsweringEndsAtTheTimeout) {
  script_server server(stop_answering);
  const auto flag = run_cli({"mongo", "ping", server.uri(), "--timeout", "500ms"});
  EXPECT_EQ(flag.status, 1) << flag.err;
  EXPECT_EQ(flag.out, "");
  EXPECT_NE(flag.err.find("timed out"), std::string::npos) << flag.err;
  EXPECT_NE(flag.err.find("oid: the server did not answer within 500ms; --timeout DURATION "
                          "changes the limit (0: none)\n"),
            std::string::npos)
      << flag.err;

  const auto uri = run_cli({"mongo", "ping", server.uri("&timeoutMS=500")});
  EXPECT_EQ(uri.status, 1) << uri.err;
  EXPECT_NE(uri.err.find("timed out"), std::string::npos) << uri.err;

  // The same setting twice must say the same.
  const auto both = run_cli({"mongo", "ping", server.uri("&timeoutMS=500"), "--timeout", "2"});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--timeout conflicts with the connection string's timeoutMS"),
            std::string::npos)
      << both.err;
  // A limit that is not the command's (serverSelectionTimeoutMS here) gets no word about
  // --timeout: it did not run out.
  const auto nowhere =
      run_cli({"mongo", "ping", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100"});
  EXPECT_EQ(nowhere.status, 1);
  EXPECT_NE(nowhere.err.find("serverSelectionTimeoutMS"), std::string::npos) << nowhere.err;
  EXPECT_EQ(nowhere.err.find("--timeout"), std::string::npos) << nowhere.err;
  const auto bad = run_cli({"mongo", "count", server.uri(), "d.c", "--timeout", "soon"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--timeout: not a duration: \"soon\""), std::string::npos) << bad.err;
}

// Each command's default, as its client got it (-v says it): 30 s for a quick round trip, 5 min
// for one the server may work on for long, 5 min without progress for a transfer.
TEST(CliTimeLimitsTest, EveryCommandHasADefaultLimit) {
  const std::string nowhere = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100";
  struct {
    std::vector<std::string_view> args;
    const char* want;
  } const cases[] = {
      {{"mongo", "ping", nowhere, "-v"}, "oid: time limit: no answer within 30s (--timeout)\n"},
      {{"mongo", "count", nowhere, "d.c", "-v"}, "no answer within 30s (--timeout)\n"},
      {{"mongo", "run", nowhere, "d", "{\"ping\": 1}", "-v"}, "no answer within 30s (--timeout)\n"},
      {{"mongo", "collections", nowhere, "d", "-v"}, "no answer within 30s (--timeout)\n"},
      {{"mongo", "indexes", "list", nowhere, "d.c", "-v"}, "no answer within 30s (--timeout)\n"},
      {{"mongo", "update", nowhere, "d.c", "{}", "{\"$set\": {\"a\": 1}}", "-v"},
       "no answer within 5m (--timeout)\n"},
      {{"mongo", "indexes", "create", nowhere, "d.c", "{\"a\": 1}", "-v"},
       "no answer within 5m (--timeout)\n"},
      {{"mongo", "find", nowhere, "d.c", "-v"}, "no progress for 5m (--stallTimeout)\n"},
      {{"mongo", "export", nowhere, "d.c", "-v"}, "no progress for 5m (--stallTimeout)\n"},
      {{"mongo", "aggregate", nowhere, "d.c", "[]", "-v"}, "no progress for 5m (--stallTimeout)\n"},
      {{"mongo", "find", nowhere, "d.c", "--tail", "-v"}, "no progress for 5m (--stallTimeout)\n"},
      {{"mongo", "files", "get", nowhere, "d", "x", "--out", "-", "-v"},
       "no progress for 5m (--stallTimeout)\n"},
      {{"mongo", "find", nowhere, "d.c", "--stallTimeout", "90s", "-v"},
       "no progress for 1m30s (--stallTimeout)\n"},
      {{"mongo", "ping", nowhere, "--timeout", "0", "-v"}, "oid: time limit: none (--timeout 0)\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    SCOPED_TRACE(c.args[1]);
    const auto r = run_cli(c.args);
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
  }
}

// find, export, aggregate and dump against a cursor that never ends: each stops when no
// document came for --stallTimeout, with what it had, naming the stall and the flag.
TEST(CliTimeLimitsTest, ACursorThatNeverEndsStalls) {
  script_server server(endless_cursor);
  const std::string stalled =
      "the transfer stalled: no progress for 500ms (no answer to a request, "
      "or no new document); --stallTimeout DURATION changes the limit";
  for (const std::string_view command : {"find", "export"}) {
    SCOPED_TRACE(command);
    const auto r = run_cli({"mongo", command, server.uri(), "d.c", "--stallTimeout", "500ms"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, "{\"_id\":1}\n");
    EXPECT_NE(r.err.find(stalled), std::string::npos) << r.err;
  }
  const auto agg =
      run_cli({"mongo", "aggregate", server.uri(), "d.c", "[]", "--stallTimeout", "500ms"});
  EXPECT_EQ(agg.status, 1) << agg.err;
  EXPECT_NE(agg.err.find(stalled), std::string::npos) << agg.err;

  const auto dir =
      std::filesystem::temp_directory_path() / ("oid-stall-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string out = dir.string();
  const auto dump = run_cli({"mongo", "dump", server.uri(), "--db", "d", "--collection", "c",
                             "--out", out, "--stallTimeout", "500ms"});
  EXPECT_EQ(dump.status, 1) << dump.err;
  EXPECT_NE(dump.err.find("oid: mongo dump: " + stalled), std::string::npos) << dump.err;
  std::filesystem::remove_all(dir);
}

// insert and import to a server that stops answering: the batch's write ends at the stall limit,
// and the message says so.
TEST(CliTimeLimitsTest, WritesToAServerThatStopsAnsweringStall) {
  script_server server(stop_answering);
  for (const std::string_view command : {"insert", "import"}) {
    SCOPED_TRACE(command);
    const auto r =
        run_cli({"mongo", command, server.uri(), "d.c", "--stallTimeout", "500ms"}, "{\"a\": 1}\n");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the transfer stalled: no progress for 500ms"), std::string::npos)
        << r.err;
  }
  // restore from a dump directory: its batch stalls the same way, and says so.
  const std::string dump = oid::testing::scratch_path("stall-dump");
  std::filesystem::create_directories(dump + "/d");
  ::chmod(dump.c_str(), 0700);
  builder doc;
  doc.append_int32("a", 1);
  const auto bytes = doc.view().bytes();
  std::ofstream(dump + "/d/c.bson", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  const auto restore = run_cli({"mongo", "restore", server.uri(), dump, "--stallTimeout", "500ms"});
  EXPECT_EQ(restore.status, 1) << restore.err;
  EXPECT_NE(restore.err.find("the transfer stalled: no progress for 500ms"), std::string::npos)
      << restore.err;
}

// A slow transfer that keeps moving is not a stall: it takes longer than the limit in all, but
// each document comes well within it.
TEST(CliTimeLimitsTest, ASlowTransferThatMovesIsNotAStall) {
  script_server server([](peer& p, int) { slow_cursor(p, std::chrono::milliseconds(250), 12); });
  const auto r = run_cli({"mongo", "find", server.uri(), "d.c", "--stallTimeout", "2s"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(oid::testing::lines(r.out).size(), 13u) << r.out;
}

// find --tail keeps following a collection where nothing happens for longer than the stall
// limit (its own --idleTimeout ends it), and ends as a stall when the server stops answering.
TEST(CliTimeLimitsTest, TailKeepsFollowingAnIdleCollectionButNotASilentServer) {
  script_server idle([](peer& p, int) { idle_capped(p, true); });
  const auto followed = run_cli(
      {"mongo", "find", idle.uri(), "d.c", "--tail", "--stallTimeout", "1s", "--idleTimeout", "3"});
  EXPECT_EQ(followed.status, 0) << followed.err;
  EXPECT_EQ(followed.out, "{\"_id\":1}\n");

  script_server silent([](peer& p, int) { idle_capped(p, false); });
  const auto stopped =
      run_cli({"mongo", "find", silent.uri(), "d.c", "--tail", "--stallTimeout", "1s"});
  EXPECT_EQ(stopped.status, 1) << stopped.err;
  EXPECT_EQ(stopped.out, "{\"_id\":1}\n");
  EXPECT_NE(stopped.err.find("the transfer stalled: no progress for 1s"), std::string::npos)
      << stopped.err;
}

// A password in an argument (-p VALUE, --password=VALUE, USER:PASSWORD@ in the URI) is taken,
// with one warning saying how to avoid it; never the password itself. A password from
// --config FILE, standard input or the prompt is not on the command line: no warning.
TEST(CliTimeLimitsTest, APasswordOnTheCommandLineIsTakenWithOneWarning) {
  const std::string nowhere = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100";
  const std::string with_password =
      "mongodb://bob:s3cret-pw@127.0.0.1:1/?serverSelectionTimeoutMS=100";
  const std::string warning = "oid: warning: ";
  const std::string how =
      "put it in --config FILE (password: ..., chmod 600), give it on standard "
      "input with --passwordStdin, or give -p without a value to be asked for "
      "it on the terminal\n";
  struct {
    std::vector<std::string_view> args;
    std::string input;
    bool warns;
  } const cases[] = {
      {{"mongo", "ping", nowhere, "-u", "bob", "-p", "s3cret-pw"}, "", true},
      {{"mongo", "ping", nowhere, "-u", "bob", "--password=s3cret-pw"}, "", true},
      {{"mongo", "ping", with_password}, "", true},
      {{"mongo", "ping", "--uri", with_password}, "", true},
      {{"mongo", "find", with_password, "d.c", "-u", "bob", "-p", "s3cret-pw"}, "", true},
      {{"mongo", "ping", nowhere, "-u", "bob", "--passwordStdin"}, "s3cret-pw\n", false},
      {{"mongo", "ping", nowhere, "-u", "bob", "-p"}, "", false},
      {{"mongo", "ping", nowhere}, "", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.args.back()));
    const auto r = run_cli(c.args, c.input);
    EXPECT_EQ(count_of(r.err, warning), c.warns ? 1u : 0u) << r.err;
    EXPECT_EQ(count_of(r.err, how), c.warns ? 1u : 0u) << r.err;
    EXPECT_EQ(r.err.find("s3cret-pw"), std::string::npos) << r.err;
  }

  // --config FILE: the password is in a file, not in an argument.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("oid-password-warning-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "config.yaml").string();
  {
    std::ofstream f(file);
    f << "uri: " << with_password << "\n";
  }
  ::chmod(file.c_str(), 0600);
  const auto config = run_cli({"mongo", "ping", "--config", file});
  EXPECT_EQ(config.err.find(warning + "the password"), std::string::npos) << config.err;
  EXPECT_EQ(config.err.find("s3cret-pw"), std::string::npos) << config.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
