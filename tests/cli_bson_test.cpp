// oid bson dump | from-json | validate: in-process through oid::cli::run with string streams,
// and as the built binary with files and pipes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_cli.hpp"
#include "support/run_shell.hpp"

namespace {

using oid::testing::run_cli;
using oid::testing::run_shell;

std::string bytes_of(const oid::bson::document& d) {
  return {reinterpret_cast<const char*>(d.bytes().data()), d.bytes().size()};
}

oid::bson::document doc(int n) {
  oid::bson::builder b;
  b.append_int32("n", n).append_string("s", "caf\xc3\xa9");
  b.open_document("d").append_int64("big", 1LL << 40).close();
  return std::move(b).extract();
}

std::string relaxed(const oid::bson::document& d) { return oid::bson::to_json(d.view()) + "\n"; }

// Relaxed Extended JSON of doc(n), without the newline.
std::string json_of(int n) {
  const auto d = doc(n);
  return oid::bson::to_json(d.view());
}

// A document with a sane length whose first element has type byte 0x20, which BSON lacks.
std::string bad_type_document() {
  return std::string("\x0c\x00\x00\x00\x20x\x00\x01\x00\x00\x00\x00", 12);
}

TEST(CliBsonTest, DumpPrintsOneDocumentPerLine) {
  const auto one = doc(1);
  const std::string input = bytes_of(one) + bytes_of(doc(2)) + bytes_of(doc(3));
  const auto r = run_cli({"bson", "dump"}, input);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, relaxed(doc(1)) + relaxed(doc(2)) + relaxed(doc(3)));
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), R"({"n":1,"s":"café","d":{"big":1099511627776}})");

  const auto c = run_cli({"bson", "dump", "--mode", "canonical", "-"}, input);
  EXPECT_EQ(c.status, 0);
  EXPECT_EQ(c.out.substr(0, c.out.find('\n')),
            oid::bson::to_json(one.view(), oid::bson::json_mode::canonical));

  const auto p = run_cli({"bson", "dump", "--pretty"}, bytes_of(doc(1)));
  oid::bson::json_options pretty;
  pretty.pretty = true;
  EXPECT_EQ(p.out, oid::bson::to_json(one.view(), pretty) + "\n");
}

// bsondump's --type=debug: each document's layout, its keys made printable.
TEST(CliBsonTest, DumpTypeDebugShowsEachElementsTypeSizeAndOffset) {
  oid::bson::builder b;
  b.append_int32("a", 1).append_string("s\x1b", "x");
  b.open_array("arr").append_bool("0", true).close();
  const auto first = std::move(b).extract();
  oid::bson::builder c;
  c.append_null("n");
  const auto second = std::move(c).extract();
  const auto r = run_cli({"bson", "dump", "--type", "debug"}, bytes_of(first) + bytes_of(second));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "document 1: 36 bytes at 0\n"
            "    a  int  7 bytes at 4\n"            // type, "a", NUL, 4 bytes
            "    s\\x1b  string  10 bytes at 11\n"  // the key's ESC shown, not sent
            "    arr  array  14 bytes at 21\n"      // 1 + "arr" NUL + a 9-byte document
            "        0  bool  4 bytes at 30\n"      // after the array's own length
            "document 2: 8 bytes at 36\n"
            "    n  null  3 bytes at 40\n");
  EXPECT_EQ(run_cli({"bson", "dump", "--type", "yaml"}, bytes_of(first)).status, 2);
}

TEST(CliBsonTest, DumpEmptyInput) {
  const auto r = run_cli({"bson", "dump"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(CliBsonTest, DumpTruncatedFilePrintsWhatCameBefore) {
  const std::string one = bytes_of(doc(1)), two = bytes_of(doc(2));
  const auto r = run_cli({"bson", "dump"}, one + two.substr(0, 10));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, relaxed(doc(1)));
  EXPECT_EQ(r.err, "oid: bson dump: stdin: document 2 at byte " + std::to_string(one.size()) +
                       ": truncated: the length prefix says " + std::to_string(two.size()) +
                       " bytes, the input has 10\n");
  const auto cut_prefix = run_cli({"bson", "dump"}, one + two.substr(0, 3));
  EXPECT_EQ(cut_prefix.status, 1);
  EXPECT_EQ(cut_prefix.out, relaxed(doc(1)));
  EXPECT_NE(cut_prefix.err.find("input ends inside a length prefix (3 of 4 bytes)"),
            std::string::npos);
}

TEST(CliBsonTest, DumpGarbage) {
  // "garb" as a length is 0x62726167: far above 16 MiB.
  const auto r = run_cli({"bson", "dump"}, "garbage, not BSON");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "oid: bson dump: stdin: document 1 at byte 0: length prefix 1651663207 is above the "
            "limit of 16777216 bytes (--maxSize)\n");
  const auto tiny = run_cli({"bson", "dump"}, std::string("\x04\x00\x00\x00\x00", 5));
  EXPECT_EQ(tiny.status, 1);
  EXPECT_NE(tiny.err.find("impossible length prefix 4"), std::string::npos);
  const auto limit = run_cli({"bson", "dump", "--max-size", "20"}, bytes_of(doc(1)));
  EXPECT_EQ(limit.status, 1);
  EXPECT_NE(limit.err.find("above the limit of 20 bytes"), std::string::npos);
}

TEST(CliBsonTest, DumpKeepGoingSkipsABadDocumentWithASaneLength) {
  const std::string one = bytes_of(doc(1)), bad = bad_type_document(), three = bytes_of(doc(3));
  const std::string input = one + bad + three;
  const std::string where = "document 2 at byte " + std::to_string(one.size()) +
                            ": unknown BSON type at byte " + std::to_string(one.size() + 4);

  const auto stop = run_cli({"bson", "dump"}, input);
  EXPECT_EQ(stop.status, 1);
  EXPECT_EQ(stop.out, relaxed(doc(1)));
  EXPECT_NE(stop.err.find(where), std::string::npos) << stop.err;

  const auto go_on = run_cli({"bson", "dump", "--keep-going"}, input);
  EXPECT_EQ(go_on.status, 1);
  EXPECT_EQ(go_on.out, relaxed(doc(1)) + relaxed(doc(3)));
  EXPECT_NE(go_on.err.find(where), std::string::npos) << go_on.err;

  // A damaged length prefix ends the reading even with --keep-going.
  const auto lost = run_cli({"bson", "dump", "--keep-going"}, one + "\xff\xff\xff\xff" + three);
  EXPECT_EQ(lost.status, 1);
  EXPECT_EQ(lost.out, relaxed(doc(1)));
  EXPECT_NE(lost.err.find("impossible length prefix -1"), std::string::npos);
}

TEST(CliBsonTest, ValidateReportsEachBadDocument) {
  const std::string one = bytes_of(doc(1)), bad = bad_type_document();
  const auto ok = run_cli({"bson", "validate"}, one + one);
  EXPECT_EQ(ok.status, 0);
  EXPECT_EQ(ok.out,
            "stdin: 2 valid documents, 0 bad, " + std::to_string(2 * one.size()) + " bytes\n");
  EXPECT_EQ(ok.err, "");

  const std::string input = bad + one + bad + one.substr(0, 7);
  const auto r = run_cli({"bson", "validate"}, input);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "oid: bson validate: stdin: document 1 at byte 0: unknown BSON type at byte 4\n"
            "oid: bson validate: stdin: document 3 at byte " +
                std::to_string(bad.size() + one.size()) + ": unknown BSON type at byte " +
                std::to_string(bad.size() + one.size() + 4) +
                "\n"
                "oid: bson validate: stdin: document 4 at byte " +
                std::to_string(2 * bad.size() + one.size()) +
                ": truncated: the length prefix says " + std::to_string(one.size()) +
                " bytes, the input has 7\n");
  EXPECT_EQ(r.out, "stdin: 1 valid document, 3 bad; stopped at byte " +
                       std::to_string(2 * bad.size() + one.size()) +
                       ": the rest cannot be read as documents\n");
}

TEST(CliBsonTest, FromJsonWritesABsonStream) {
  const std::string lines = relaxed(doc(1)) + "\n  \n" + relaxed(doc(2));
  const auto r = run_cli({"bson", "from-json"}, lines);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, bytes_of(doc(1)) + bytes_of(doc(2)));

  const auto array =
      run_cli({"bson", "from-json"}, "[\n" + json_of(1) + ",\n" + json_of(2) + "\n]\n");
  EXPECT_EQ(array.status, 0);
  EXPECT_EQ(array.out, bytes_of(doc(1)) + bytes_of(doc(2)));

  const auto empty = run_cli({"bson", "from-json"}, "");
  EXPECT_EQ(empty.status, 0);
  EXPECT_EQ(empty.out, "");
}

TEST(CliBsonTest, FromJsonErrorsSayLineAndColumn) {
  const std::string input = "{\"a\": 1}\n{\"a\": tru}\n{\"b\": {\"$oid\": \"12\"}}\n{\"a\": 2}\n";
  const auto r = run_cli({"bson", "from-json"}, input);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "oid: bson from-json: stdin: line 2, column 7: invalid JSON (document 2, byte 15)\n"
            "oid: bson from-json: stdin: line 3, column 16: invalid Extended JSON (document 3, "
            "byte 35)\n");
  const auto a1 = oid::bson::from_json(R"({"a": 1})"), a2 = oid::bson::from_json(R"({"a": 2})");
  EXPECT_EQ(r.out, bytes_of(*a1) + bytes_of(*a2));

  const auto legacy = run_cli({"bson", "from-json"}, R"({"d": {"$date": 0}})");
  EXPECT_EQ(legacy.status, 1);
  const auto accepted = run_cli({"bson", "from-json", "--legacy"}, R"({"d": {"$date": 0}})");
  EXPECT_EQ(accepted.status, 0);
  EXPECT_EQ(accepted.out.size(), 16u);
}

TEST(CliBsonTest, FromJsonEnsureId) {
  const auto r =
      run_cli({"bson", "from-json", "--ensure-id"}, "{\"a\": 1}\n{\"a\": 2, \"_id\": 7}\n");
  ASSERT_EQ(r.status, 0);
  const auto back = run_cli({"bson", "dump"}, r.out);
  ASSERT_EQ(back.status, 0);
  const auto second = back.out.substr(back.out.find('\n') + 1);
  EXPECT_EQ(back.out.substr(0, 16), R"({"_id":{"$oid":")");
  EXPECT_EQ(back.out.substr(40, 10), R"("},"a":1})"
                                     "\n");
  EXPECT_EQ(second, "{\"_id\":7,\"a\":2}\n");
}

TEST(CliBsonTest, CanonicalDumpReadsBackToTheSameBytes) {
  const std::string input = bytes_of(doc(1)) + bytes_of(doc(-2));
  const auto json = run_cli({"bson", "dump", "--mode", "canonical"}, input);
  const auto back = run_cli({"bson", "from-json"}, json.out);
  EXPECT_EQ(back.status, 0);
  EXPECT_EQ(back.out, input);
}

// ---- the binary -------------------------------------------------------------------------------

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "oid_bson_" + std::to_string(getpid()) + "_" + name;
}

TEST(CliBsonBinaryTest, DumpsAFileAndPipesThroughFromJson) {
  const std::string file = temp_path("in.bson");
  const std::string input = bytes_of(doc(1)) + bytes_of(doc(2));
  std::ofstream(file, std::ios::binary) << input;
  const std::string oid = std::string("'") + OID_BINARY + "'";

  const auto dump = run_shell(oid + " bson dump " + file);
  EXPECT_EQ(dump.status, 0);
  EXPECT_EQ(dump.out, relaxed(doc(1)) + relaxed(doc(2)));

  const auto round =
      run_shell(oid + " bson dump --mode canonical " + file + " | " + oid + " bson from-json -");
  EXPECT_EQ(round.status, 0);
  EXPECT_EQ(round.out, input);

  std::ofstream(file, std::ios::binary) << input.substr(0, input.size() - 1);
  const auto damaged = run_shell(oid + " bson dump " + file);
  EXPECT_EQ(damaged.status, 1);
  EXPECT_EQ(damaged.out, relaxed(doc(1)));
  EXPECT_NE(damaged.err.find("document 2 at byte " + std::to_string(bytes_of(doc(1)).size())),
            std::string::npos);

  const auto missing = run_shell(oid + " bson validate " + temp_path("no-such-file"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos);
  std::remove(file.c_str());
}

// bsondump's --bsonFile and --outFile: the same output in a file, nothing on stdout; a file that
// cannot be made is an error that names it, and a damaged input keeps what came before.
TEST(CliBsonBinaryTest, DumpTakesBsondumpsFileFlags) {
  const std::string in = temp_path("flags.bson"), out = temp_path("flags.json");
  const std::string input = bytes_of(doc(1)) + bytes_of(doc(2));
  std::ofstream(in, std::ios::binary) << input;
  const std::string oid = std::string("'") + OID_BINARY + "'";
  const auto dump = run_shell(oid + " bson dump --bsonFile " + in + " --outFile " + out);
  EXPECT_EQ(dump.status, 0) << dump.err;
  EXPECT_EQ(dump.out, "");
  std::ifstream written(out, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(written)), {});
  EXPECT_EQ(text, relaxed(doc(1)) + relaxed(doc(2)));

  std::ofstream(in, std::ios::binary) << input.substr(0, input.size() - 1);
  const auto damaged = run_shell(oid + " bson dump " + in + " --outFile=" + out);
  EXPECT_EQ(damaged.status, 1);
  std::ifstream again(out, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), relaxed(doc(1)));

  const auto nowhere =
      run_shell(oid + " bson dump " + in + " --outFile " + temp_path("no/dir.json"));
  EXPECT_EQ(nowhere.status, 1);
  EXPECT_NE(nowhere.err.find("--outFile"), std::string::npos) << nowhere.err;
  EXPECT_NE(nowhere.err.find("cannot create"), std::string::npos) << nowhere.err;
  std::remove(in.c_str());
  std::remove(out.c_str());
}

// The progress line (bytes, documents, rate) shows only when stderr is a terminal and the input is
// a file. script(1) (util-linux, essential in Debian) gives the command a pseudo-terminal; stdout
// goes to /dev/null inside it, so what script records is the progress line alone.
TEST(CliBsonBinaryTest, ProgressLineOnlyOnATerminalWithAFile) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string file = temp_path("progress.bson");
  std::ofstream(file, std::ios::binary) << bytes_of(doc(1)) + bytes_of(doc(2));
  const std::string oid = std::string("'") + OID_BINARY + "'";
  auto in_terminal = [](const std::string& command) {
    return run_shell("script -qec \"" + command + "\" /dev/null");
  };
  for (const char* command : {" bson dump ", " bson validate "}) {
    SCOPED_TRACE(command);
    const auto tty = in_terminal(oid + command + file + " >/dev/null");
    EXPECT_EQ(tty.status, 0);
    EXPECT_NE(tty.out.find("2 documents"), std::string::npos) << tty.out;
    EXPECT_NE(tty.out.find("MB/s"), std::string::npos) << tty.out;
    const auto piped = in_terminal("cat " + file + " | " + oid + command + "- >/dev/null");
    EXPECT_EQ(piped.status, 0);
    EXPECT_EQ(piped.out, "");  // stdin is not a file: no size, no progress
    const auto no_tty = run_shell(oid + command + file);
    EXPECT_EQ(no_tty.status, 0);
    EXPECT_EQ(no_tty.err, "");
  }
  std::remove(file.c_str());
}

// Strings from a file reach a terminal with C1 controls and bidirectional formatting characters
// escaped as JSON escapes (\u009b: the same JSON); to a pipe or a file the output is the writer's.
TEST(CliBsonBinaryTest, WhatJsonLeavesRawIsEscapedOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string file = temp_path("hostile.bson");
  oid::bson::builder b;
  b.append_string("s",
                  "x\xc2\x9b"
                  "2J\xe2\x80\xae"
                  "y");  // CSI, then RIGHT-TO-LEFT OVERRIDE
  const auto d = std::move(b).extract();
  std::ofstream(file, std::ios::binary)
      << std::string(reinterpret_cast<const char*>(d.view().data()), d.view().size());
  const std::string oid = std::string("'") + OID_BINARY + "'";
  const auto tty = run_shell("script -qec \"" + oid + " bson dump " + file + "\" /dev/null");
  EXPECT_EQ(tty.status, 0);
  EXPECT_NE(tty.out.find(R"({"s":"x\u009b2J\u202ey"})"), std::string::npos) << tty.out;
  const auto piped = run_shell(oid + " bson dump " + file);
  EXPECT_EQ(piped.status, 0);
  EXPECT_EQ(piped.out,
            "{\"s\":\"x\xc2\x9b"
            "2J\xe2\x80\xae"
            "y\"}\n");
  std::remove(file.c_str());
}

}  // namespace
