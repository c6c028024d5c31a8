// Every `oid mongo` subcommand against a server whose every string is hostile (names, documents,
// index specifications, aggregation results, error messages, the replica set name): nothing it
// sends reaches a terminal raw (no C0 or C1 control, DEL, bidirectional control or invalid
// UTF-8), and no newline it sends starts a line of oid's output (a forged "all collections
// verified OK"). The subcommands come from the command tree itself (make_app), so a new one
// without an invocation in the table below fails the test. Each runs in-process (standard output
// taken for a terminal, and for a pipe) and as the built binary on a pseudo-terminal (script(1)).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/objectid/object_id.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "support/run_cli.hpp"
#include "support/run_shell.hpp"
#include "support/scratch.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::testing::cli_outcome;
using oid::testing::run_shell;
using oid::testing::scratch_path;

// What the server puts in every string it sends: ESC sequences (colour, a cleared screen), C1
// CSI and OSC as UTF-8 (U+009B, U+009D: a new window title), a right-to-left override (U+202E),
// a carriage return, and a newline followed by a forged line.
const std::string evil =
    "e\x1b[31m-\xc2\x9b"
    "2J-\xc2\x9d"
    "0;title\x07-\xe2\x80\xae"
    "txet-a\rX\nFORGED: all collections verified OK\n";

// Where the first character a terminal acts on is in `s` (after the pseudo-terminal's "\r\n" is
// taken back to "\n"), or npos: a C0 control but the newline, DEL, a C1 control, a bidirectional
// formatting character, or a byte that is not part of valid UTF-8.
std::size_t first_unsafe(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n') || c == 0x7F) return i;
      ++i;
      continue;
    }
    std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (length == 0 || c > 0xF4 || i + length > s.size()) return i;
    char32_t cp = c & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return i;
      cp = cp << 6 | (b & 0x3F);
    }
    const bool overlong = (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    if (cp <= 0x9F) return i;  // C1
    if (cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
        (cp >= 0x2066 && cp <= 0x2069)) {
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

// `s` with each "\r\n" (a terminal's end of line) as "\n".
std::string without_crlf(std::string s) {
  for (std::size_t at = s.find("\r\n"); at != std::string::npos; at = s.find("\r\n", at)) {
    s.erase(at, 1);
  }
  return s;
}

// `s` without oid's own progress line on a terminal's standard error: each redraw starts with a
// carriage return before its count ("\r12 documents, ...", "\r1.0 / 2.0 MB"), and an erase is
// "\r" ESC "[K". A server's carriage return is followed by other text, and stays.
// (By hand, not <regex>: GCC 12's <regex> warns maybe-uninitialized under the asan preset.)
std::string without_progress(std::string s) {
  const std::string erase = "\r\x1b[K";
  for (std::size_t at = s.find(erase); at != std::string::npos; at = s.find(erase, at)) {
    s.erase(at, erase.size());
  }
  // After `at`: a number ("12", "1.5") and a space; the position after them, or npos.
  const auto number = [&s](std::size_t at) {
    const std::size_t end = s.find_first_not_of("0123456789.", at);
    return end == at || end == std::string::npos || s[end] != ' ' ? std::string::npos : end + 1;
  };
  for (std::size_t at = s.find('\r'); at != std::string::npos; at = s.find('\r', at + 1)) {
    std::size_t next = number(at + 1);
    if (next == std::string::npos) continue;
    if (s.compare(next, 2, "/ ") == 0) next = number(next + 2);
    if (next == std::string::npos) continue;
    if (s.compare(next, 9, "documents") == 0 || s.compare(next, 2, "MB") == 0) s[at] = '\n';
  }
  return s;
}

// True when a line of `s` starts with the server's forged text.
bool has_forged_line(const std::string& s) {
  return s.rfind("FORGED", 0) == 0 || s.find("\nFORGED") != std::string::npos;
}

// A hello that makes the server a replica set primary of a hostile name.
document hostile_hello(const std::string& address) {
  builder b;
  b.append_bool("isWritablePrimary", true).append_string("setName", evil);
  b.open_array("hosts").append_string("0", address).close();
  b.append_string("me", address);
  b.append_int32("maxBsonObjectSize", 16 * 1024 * 1024).append_int32("maxWireVersion", 17);
  b.append_int32("maxMessageSizeBytes", 48000000).append_int32("maxWriteBatchSize", 100000);
  b.append_double("ok", 1.0);
  return std::move(b).extract();
}

const oid::object_id file_id = oid::object_id::parse("5f0c8a8e0000000000000001").value();

// Opens {cursor: {id: 0, ns, firstBatch: [` in `b`; the caller adds the documents and closes
// the array, the cursor, and adds ok.
void open_batch(builder& b) {
  b.open_document("cursor").append_int64("id", 0).append_string("ns", "d.c");
  b.open_array("firstBatch");
}

// A server whose every string is hostile; its refusals carry the hostile text as errmsg and
// codeName.
class hostile_server {
 public:
  hostile_server() : server_([this](oid::testing::peer& p, int) { serve(p); }) {}
  std::string uri() const { return server_.uri(); }
  /// A URI without directConnection: the client discovers the (hostile) replica set and
  /// monitors it.
  std::string seed_uri() const {
    return "mongodb://" + server_.address() + "/?serverSelectionTimeoutMS=2000";
  }

 private:
  void serve(oid::testing::peer& p) {
    while (auto m = p.read()) {
      const std::string name = oid::testing::command_name(*m);
      const auto target = m->body.find(name);
      const std::string coll(target ? target->get_string().value_or("") : "");
      builder b;
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        const auto hello = hostile_hello(server_.address());
        p.reply(*m, hello.view());
        continue;
      }
      if (name == "buildInfo" || name == "buildinfo") {
        b.append_string("version", evil).append_string("ferretdbVersion", evil);
        b.append_double("ok", 1.0);
      } else if (name == "ping" || name == "endSessions" || name == "killCursors") {
        b.append_double("ok", 1.0);
      } else if (name == "listDatabases") {
        b.open_array("databases");
        b.open_document("0").append_string("name", evil).append_int64("sizeOnDisk", 1).close();
        b.open_document("1").append_string("name", "d").append_int64("sizeOnDisk", 2).close();
        b.close().append_double("ok", 1.0);
      } else if (name == "listCollections") {
        open_batch(b);
        b.open_document("0").append_string("name", evil).append_string("type", "collection");
        b.open_document("options").close().close();
        b.open_document("1").append_string("name", "c").append_string("type", "collection");
        b.open_document("options").append_string("comment", evil).close().close();
        b.close().close().append_double("ok", 1.0);
      } else if (name == "listIndexes") {
        open_batch(b);
        b.open_document("0").append_int32("v", 2);
        b.open_document("key").append_int32("_id", 1).close();
        b.append_string("name", "_id_").close();
        b.open_document("1").append_int32("v", 2);
        b.open_document("key").append_int32(evil, 1).close();
        b.append_string("name", evil).close();
        b.close().close().append_double("ok", 1.0);
      } else if (name == "find" && coll.ends_with(".files")) {
        open_batch(b);
        b.open_document("0").append_object_id("_id", file_id).append_string("filename", evil);
        b.append_int64("length", 3).append_int32("chunkSize", 261120);
        b.append_date_time("uploadDate", 1600000000000);
        b.open_document("metadata").append_string(evil, evil).close().close();
        b.close().close().append_double("ok", 1.0);
      } else if (name == "find" && coll.ends_with(".chunks")) {
        open_batch(b);
        b.open_document("0").append_object_id("files_id", file_id).append_int32("n", 0);
        const std::uint8_t data[] = {0x1b, '[', 'J'};
        b.append_binary("data", 0, data).close();
        b.close().close().append_double("ok", 1.0);
      } else if (name == "find" || (name == "aggregate" && !counts(m->body))) {
        open_batch(b);
        b.open_document("0").append_string("_id", evil).append_string(evil, evil);
        b.open_document("nested").open_array("a").append_string("0", evil).close().close();
        b.append_string("s", evil).close();
        b.close().close().append_double("ok", 1.0);
      } else if (name == "getMore") {
        b.open_document("cursor").append_int64("id", 0).append_string("ns", "d.c");
        b.open_array("nextBatch").close().close().append_double("ok", 1.0);
      } else if (name == "insert") {
        b.append_int32("n", 0).open_array("writeErrors").open_document("0");
        b.append_int32("index", 0).append_int32("code", 11000).append_string("errmsg", evil);
        b.close().close().append_double("ok", 1.0);
      } else if (name == "update") {
        b.append_int32("n", 1).append_int32("nModified", 0).open_array("upserted");
        b.open_document("0").append_int32("index", 0).append_string("_id", evil).close().close();
        b.append_double("ok", 1.0);
      } else {  // count's aggregate, delete, drop, createIndexes, collStats, ...: refused
        b.append_double("ok", 0.0).append_string("errmsg", evil).append_int32("code", 2);
        b.append_string("codeName", evil);
      }
      p.reply(*m, b.view());
    }
  }
  // True for count_documents' pipeline (it ends in $group).
  static bool counts(oid::bson::document_view body) {
    const auto pipeline = body.find("pipeline");
    if (!pipeline || !pipeline->get_array()) return false;
    const oid::bson::document_view list = *pipeline->get_array();
    for (const auto& stage : list) {
      const auto d = stage.get_document();
      if (d && d->find("$group")) return true;
    }
    return false;
  }
  oid::testing::script_server server_;
};

// One way to run a subcommand. In `args`, {uri} is the server's ({seed}: without
// directConnection), {docs} a JSON file of hostile
// documents, {csv} a CSV file with a hostile header, {dump} a dump directory with hostile
// documents and names, {file} a local file to store, {out} a new path, {tmp} a new directory.
struct invocation {
  std::string command;  // the subcommand's words after `oid mongo`
  std::vector<std::string> args;
  /// What standard output carries: text (checked whole, a pipe or a terminal); CSV (to a pipe,
  /// RFC 4180 keeps a newline inside a quoted field: checked on a terminal only); bytes that are
  /// data (an archive, a stored file: not checked to a pipe; refused on a terminal).
  enum kind { text, csv, binary } stdout_kind = text;
  /// Runs only as the built binary, ended by SIGINT after 4 s (topology --watch waits for one;
  /// discovering the set takes well under that).
  bool pty_only = false;
  /// The server's text shows in what it prints (false: it succeeds and names only the caller's
  /// own files).
  bool shows = true;
};

std::vector<invocation> invocations() {
  return {
      {"ping", {"{uri}"}},
      {"topology", {"{uri}"}},
      {"topology", {"{uri}", "--json"}},
      {"topology", {"{seed}", "--watch"}, invocation::text, true},
      {"topology", {"{seed}", "--watch", "--json"}, invocation::text, true},
      {"insert", {"{uri}", "d.c", "{docs}"}},
      {"find", {"{uri}", "d.c"}},
      {"find", {"{uri}", "d.c", "--sort", R"({"_id": 1})", "--limit", "5"}},
      {"export", {"{uri}", "d.c"}},
      {"export", {"{uri}", "d.c", "--jsonArray", "--pretty"}},
      {"export", {"{uri}", "d.c", "--type", "csv", "--fields", "s,_id"}, invocation::csv},
      {.command = "export", .args = {"{uri}", "d.c", "--out", "{out}"}, .shows = false},
      {"import", {"{uri}", "d.c", "{docs}"}},
      {.command = "import", .args = {"{uri}", "d.c", "{docs}", "--mode", "upsert"}, .shows = false},
      {"import", {"{uri}", "d.c", "{csv}", "--type", "csv", "--headerline"}},
      {"dump", {"{uri}", "--out", "{tmp}"}},
      {"dump", {"{uri}", "--archive=-"}, invocation::binary},
      {"restore", {"{uri}", "{dump}"}},
      {"count", {"{uri}", "d.c"}},
      {"update", {"{uri}", "d.c", "{}", R"({"$set": {"n": 1}})", "--upsert"}},
      {"delete", {"{uri}", "d.c", "{}"}},
      {"aggregate", {"{uri}", "d.c", R"([{"$match": {}}])"}},
      {"indexes list", {"{uri}", "d.c"}},
      {"indexes create", {"{uri}", "d.c", R"({"n": 1})"}},
      {"indexes drop", {"{uri}", "d.c", "n_1"}},
      {"indexes drop", {"{uri}", "d.c", "--all"}},
      {"drop", {"{uri}", "d.c"}},
      {"databases", {"{uri}"}},
      {"databases", {"{uri}", "--json"}},
      {"collections", {"{uri}", "d"}},
      {"collections", {"{uri}", "d", "--json"}},
      {"run", {"{uri}", "admin", R"({"buildInfo": 1})"}},
      {"run", {"{uri}", "admin", R"({"buildInfo": 1})", "--pretty"}},
      {"run", {"{uri}", "admin", R"({"dbStats": 1})"}},
      {"files put", {"{uri}", "d", "{file}"}},
      {.command = "files get", .args = {"{uri}", "d", "name", "--out", "{out}"}, .shows = false},
      {"files get", {"{uri}", "d", "name", "--out", "-"}, invocation::binary},
      {"files list", {"{uri}", "d"}},
      {"files list", {"{uri}", "d", "--json"}},
      {"files delete", {"{uri}", "d", "name"}},
  };
}

// The leaves of the `oid mongo` command tree, as their words after `oid mongo`.
std::vector<std::string> mongo_subcommands() {
  std::istringstream in;
  std::ostringstream out, err;
  oid::cli::context ctx{in, out, err, oid::cli::exit_ok, {}, false, 0, {}, false, {}, false};
  std::vector<std::string> topic;
  const auto app = oid::cli::make_app(ctx, topic);
  std::vector<std::string> leaves;
  const auto named = [](const CLI::App* c) { return !c->get_name().empty(); };
  const auto walk = [&](const auto& self, const CLI::App& app, const std::string& path) -> void {
    const auto subs = app.get_subcommands(named);
    if (subs.empty()) leaves.push_back(path);
    for (const CLI::App* sub : subs) {
      self(self, *sub, path.empty() ? sub->get_name() : path + " " + sub->get_name());
    }
  };
  walk(walk, *app->get_subcommand("mongo"), "");
  return leaves;
}

// The table covers every subcommand the tree has, and names none it does not have.
TEST(TerminalSafetyTest, EverySubcommandHasAnInvocation) {
  const auto leaves = mongo_subcommands();
  ASSERT_GE(leaves.size(), 20u);
  std::set<std::string> covered;
  for (const auto& i : invocations()) covered.insert(i.command);
  for (const auto& leaf : leaves) {
    EXPECT_TRUE(covered.count(leaf) == 1)
        << "oid mongo " << leaf << " has no invocation in invocations(): add one";
  }
  for (const auto& c : covered) {
    EXPECT_TRUE(std::find(leaves.begin(), leaves.end(), c) != leaves.end())
        << "oid mongo " << c << " is not a subcommand";
  }
}

// The files an invocation reads, made once.
struct fixture_files {
  std::string docs, csv, dump, file;
};

fixture_files make_files() {
  fixture_files f;
  builder doc;
  doc.append_string("_id", evil).append_string(evil, evil);
  f.docs = scratch_path("docs.json");
  std::ofstream(f.docs) << oid::bson::to_json(doc.view()) << '\n';
  f.csv = scratch_path("docs.csv");
  std::ofstream(f.csv) << "\"" << evil << ".int32()\",n\n\"" << evil << "\",1\n";
  f.dump = scratch_path("dump");
  std::filesystem::create_directories(f.dump + "/d");
  ::chmod(f.dump.c_str(), 0700);
  const auto bytes = doc.view().bytes();
  for (const std::string& name : {std::string("c"), evil.substr(0, evil.find('\n'))}) {
    std::ofstream(f.dump + "/d/" + name + ".bson", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  builder meta;
  meta.open_array("indexes").open_document("0").append_int32("v", 2);
  meta.open_document("key").append_int32(evil, 1).close().append_string("name", evil).close();
  meta.close().open_document("options").close();
  std::ofstream(f.dump + "/d/c.metadata.json") << oid::bson::to_json(meta.view()) << '\n';
  f.file = scratch_path("local.bin");
  std::ofstream(f.file) << evil;
  return f;
}

// The arguments of `i` with its placeholders filled in.
std::vector<std::string> arguments(const invocation& i, const hostile_server& server,
                                   const fixture_files& f) {
  std::vector<std::string> args{"mongo"};
  std::istringstream words(i.command);
  for (std::string w; words >> w;) args.push_back(w);
  for (const auto& a : i.args) {
    if (a == "{uri}") {
      args.push_back(server.uri());
    } else if (a == "{seed}") {
      args.push_back(server.seed_uri());
    } else if (a == "{docs}") {
      args.push_back(f.docs);
    } else if (a == "{csv}") {
      args.push_back(f.csv);
    } else if (a == "{dump}") {
      args.push_back(f.dump);
    } else if (a == "{file}") {
      args.push_back(f.file);
    } else if (a == "{out}") {
      args.push_back(scratch_path("out"));
    } else if (a == "{tmp}") {
      args.push_back(scratch_path("tmp"));
    } else {
      args.push_back(a);
    }
  }
  return args;
}

std::string joined(const std::vector<std::string>& args) {
  std::string s = "oid";
  for (const auto& a : args) s += " " + a;
  return s;
}

// The checks on what a run wrote to a terminal (or to standard error): nothing raw, no forged
// line.
void expect_safe(const std::string& what, const std::string& text) {
  const std::string s = without_progress(without_crlf(text));
  const auto at = first_unsafe(s);
  EXPECT_EQ(at, std::string::npos) << what << ": a raw control at byte " << at << " of:\n" << s;
  EXPECT_FALSE(has_forged_line(s)) << what << ": a forged line in:\n" << s;
}

TEST(TerminalSafetyTest, EverySubcommandInProcess) {
  hostile_server server;
  const auto files = make_files();
  for (const auto& i : invocations()) {
    if (i.pty_only) continue;
    const auto args = arguments(i, server, files);
    SCOPED_TRACE(joined(args));
    const std::vector<std::string_view> views(args.begin(), args.end());
    // Standard output taken for a terminal: nothing raw on either stream.
    std::istringstream in;
    std::ostringstream out, err;
    oid::cli::run(views, in, out, err, true);
    expect_safe("stdout", out.str());
    expect_safe("stderr", err.str());
    if (i.stdout_kind != invocation::binary && i.shows) {
      EXPECT_NE((out.str() + err.str()).find("FORGED"), std::string::npos)
          << "the server's text did not show: " << out.str() << err.str();
    }
    const cli_outcome piped = oid::testing::run_cli(views);
    expect_safe("stderr", piped.err);
    // To a pipe, Extended JSON is the writer's own bytes (C1 controls are JSON characters), but
    // a newline inside a string is still escaped, and nothing else is raw.
    if (i.stdout_kind == invocation::text) {
      EXPECT_FALSE(has_forged_line(piped.out)) << piped.out;
    }
  }
}

TEST(TerminalSafetyTest, EverySubcommandOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  hostile_server server;
  const auto files = make_files();
  for (const auto& i : invocations()) {
    const auto args = arguments(i, server, files);
    SCOPED_TRACE(joined(args));
    // The command line in a file that script(1) runs: no quoting of quotes within quotes.
    const std::string script = scratch_path("command.sh");
    {
      std::ofstream s(script);
      s << (i.pty_only ? "timeout -s INT 4 " : "exec ") << "'" << OID_BINARY << "'";
      for (const auto& a : args) s << " '" << a << "'";  // no argument holds a quote
      s << '\n';
    }
    const auto tty = run_shell("script -qec 'sh " + script + "' /dev/null </dev/null");
    expect_safe("the terminal", tty.out);
    if (i.stdout_kind != invocation::binary && i.shows) {
      EXPECT_NE(tty.out.find("FORGED"), std::string::npos)
          << "the server's text did not show: " << tty.out;
    }
  }
}

// `oid bson` prints what a file holds: its documents' strings, and file names (which a file's
// author may choose too). On a terminal nothing of either is raw; BSON itself is refused there.
TEST(TerminalSafetyTest, BsonCommandsOnATerminal) {
  builder doc;
  doc.append_string("_id", evil).append_string(evil, evil);
  const auto bytes = doc.view().bytes();
  // A file named by its author: a newline and ESC in the name; a cut document at its end.
  const std::string path = scratch_path("x\nFORGED: all collections verified OK\x1b[2J.bson");
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
    f.write("\x20\x00\x00\x00\x02", 5);
  }
  const std::string json = scratch_path("docs.json");
  std::ofstream(json) << oid::bson::to_json(doc.view()) << '\n';
  struct test_case {
    std::vector<std::string> args;
    int status;
  };
  const test_case cases[] = {
      {{"bson", "dump", path}, 1},
      {{"bson", "dump", path, "--type", "debug"}, 1},
      {{"bson", "validate", path}, 1},
      {{"bson", "from-json", json}, 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(joined(c.args));
    const std::vector<std::string_view> views(c.args.begin(), c.args.end());
    std::istringstream in;
    std::ostringstream out, err;
    EXPECT_EQ(oid::cli::run(views, in, out, err, true), c.status) << err.str();
    expect_safe("stdout", out.str());
    expect_safe("stderr", err.str());
    if (c.status != 2) {  // from-json refuses, and shows nothing of the file
      EXPECT_NE((out.str() + err.str()).find("FORGED"), std::string::npos)
          << out.str() << err.str();
    }
  }
  // To a pipe, from-json writes the BSON.
  const auto piped = oid::testing::run_cli({"bson", "from-json", json});
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace
