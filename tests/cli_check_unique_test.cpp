// oid check-unique, run in-process: text and binary input, files and stdin, limits, bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <oid/objectid/object_id.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_cli.hpp"

namespace {

using oid::testing::run_cli;

/// The id whose 12 bytes are `i` big-endian in bytes 4-11 (and `t` in bytes 0-3).
oid::object_id id_of(std::uint64_t i, std::uint32_t t = 0x6744d1c2) {
  oid::object_id::bytes_type b{};
  for (int k = 0; k < 4; ++k)
    b[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(t >> (24 - 8 * k));
  for (int k = 0; k < 8; ++k)
    b[static_cast<std::size_t>(11 - k)] = static_cast<std::uint8_t>(i >> (8 * k));
  return oid::object_id(b);
}

std::string records(const std::vector<oid::object_id>& ids) {
  std::string s;
  for (const auto& id : ids) s.append(reinterpret_cast<const char*>(id.bytes().data()), 12);
  return s;
}

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path =
      ::testing::TempDir() + "check_unique_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(CliCheckUniqueTest, ListsEachDuplicateWithItsCountThenASummary) {
  const std::string a = id_of(1).to_hex(), b = id_of(2).to_hex(), c = id_of(3).to_hex();
  const auto r =
      run_cli({"check-unique"}, c + "\n" + a + "\n" + b + "\n" + a + "\n" + c + "\n" + a + "\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, a + " 3\n" + c + " 2\n" +
                       "checked 6 ids: 3 distinct, 3 duplicates (2 ids occur more than once, up to "
                       "3 times; 4 colliding pairs)\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliCheckUniqueTest, NoDuplicatesExitsZero) {
  std::string in;
  for (int i = 0; i < 5000; ++i) in += id_of(static_cast<std::uint64_t>(i)).to_hex() + "\n";
  const auto r = run_cli({"check-unique"}, in);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "checked 5000 ids: 5000 distinct, 0 duplicates\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliCheckUniqueTest, EmptyInput) {
  const auto r = run_cli({"check-unique"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "checked 0 ids: 0 distinct, 0 duplicates\n");
}

TEST(CliCheckUniqueTest, HexAndBase64OfOneIdAreTheSameId) {
  const auto r = run_cli({"check-unique"},
                         "4df2dcec2cdcd20936a8b817\nTfLc7Czc0gk2qLgX\n4DF2DCEC2CDCD20936A8B817\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.substr(0, 27), "4df2dcec2cdcd20936a8b817 3\n");
}

TEST(CliCheckUniqueTest, BadLinesAreReportedAndTheRestIsChecked) {
  const std::string a = id_of(7).to_hex();
  const std::string in = a + "\n" + "xyz\n" + "\n" + a.substr(0, 23) + "g\n" +
                         std::string(5000, 'a') + "\n" + id_of(8).to_hex() + "\n";
  const auto r = run_cli({"check-unique"}, in);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "checked 2 ids: 2 distinct, 0 duplicates\n");
  const std::string want_err =
      "oid: check-unique: line 2: \"xyz\": invalid length: expected 24 hex or 16 base64 "
      "characters, got 3\n"
      "oid: check-unique: line 3: empty line\n"
      "oid: check-unique: line 4: \"" +
      a.substr(0, 23) +
      "g\": invalid hex character \"g\" at column 24\n"
      "oid: check-unique: line 5: line too long (an id is 24 or 16 characters)\n";
  EXPECT_EQ(r.err, want_err);
}

TEST(CliCheckUniqueTest, BinaryRecords) {
  std::vector<oid::object_id> ids;
  for (int i = 0; i < 100000; ++i) ids.push_back(id_of(static_cast<std::uint64_t>(i) * 977));
  ids.push_back(id_of(977 * 5));
  ids.push_back(id_of(0xFFFFFFFFFFull, 0xFFFFFFFF));
  ids.push_back(id_of(0xFFFFFFFFFFull, 0xFFFFFFFF));
  const auto r = run_cli({"check-unique", "--binary"}, records(ids));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, id_of(977 * 5).to_hex() + " 2\nffffffff000000ffffffffff 2\n" +
                       "checked 100003 ids: 100001 distinct, 2 duplicates (2 ids occur more than "
                       "once, up to 2 times; 2 colliding pairs)\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliCheckUniqueTest, BinaryInputWithAPartialRecord) {
  const std::string in = records({id_of(1), id_of(2)}) + "\x01\x02\x03\x04\x05";
  const auto r = run_cli({"check-unique", "--binary"}, in);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "checked 2 ids: 2 distinct, 0 duplicates\n");
  EXPECT_EQ(r.err,
            "oid: check-unique: input ends with 5 bytes that are not a whole 12-byte record (at "
            "byte 24)\n");
}

TEST(CliCheckUniqueTest, LimitCapsTheListNotTheCount) {
  std::string in;
  for (int i = 0; i < 4; ++i) in += id_of(static_cast<std::uint64_t>(i)).to_hex() + "\n";
  in += in;
  const auto r = run_cli({"check-unique", "--limit", "1"}, in);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, id_of(0).to_hex() + " 2\n(3 more duplicated ids not listed: see --limit)\n" +
                       "checked 8 ids: 4 distinct, 4 duplicates (4 ids occur more than once, up to "
                       "2 times; 4 colliding pairs)\n");
  const auto none = run_cli({"check-unique", "--limit", "0"}, in);
  EXPECT_EQ(none.out.substr(0, 1), "(");
}

TEST(CliCheckUniqueTest, BoundedMemorySpillsToTheTempDirAndGivesTheSameAnswer) {
  // 1 MiB holds 87,381 ids: 250,000 ids (3 MB) go through temporary files.
  std::vector<oid::object_id> ids;
  for (int i = 0; i < 250000; ++i)
    ids.push_back(id_of(static_cast<std::uint64_t>(i) * 31 % 200000));
  const std::string tmp = ::testing::TempDir();
  const auto r =
      run_cli({"check-unique", "--binary", "--memory", "1", "--temp-dir", tmp, "--limit", "0"},
              records(ids));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "(50000 more duplicated ids not listed: see --limit)\n"
            "checked 250000 ids: 200000 distinct, 50000 duplicates (50000 ids occur more than "
            "once, up to 2 times; 50000 colliding pairs)\n");
  const auto bad = run_cli({"check-unique", "--binary", "--memory", "1", "--temp-dir",
                            "/nonexistent/oid", "--limit", "0"},
                           records(ids));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("cannot create a temporary file in /nonexistent/oid"), std::string::npos)
      << bad.err;
}

TEST(CliCheckUniqueTest, FilesAndStdinTogether) {
  const std::string a = id_of(1).to_hex(), b = id_of(2).to_hex();
  const std::string f1 = temp_file("one", a + "\n" + b + "\n");
  const std::string f2 = temp_file("two", a + "\n");
  const auto r = run_cli({"check-unique", f1, "-", f2}, b + "\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, a + " 2\n" + b + " 2\n" +
                       "checked 4 ids: 2 distinct, 2 duplicates (2 ids occur more than once, up to "
                       "2 times; 2 colliding pairs)\n");

  const auto bad = run_cli({"check-unique", f1, "/nonexistent/ids.txt", "--binary"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("cannot open \"/nonexistent/ids.txt\": No such file"), std::string::npos)
      << bad.err;
  // f1 has 50 bytes: 4 whole records and 2 bytes over.
  EXPECT_NE(bad.err.find(f1 + ": input ends with 2 bytes"), std::string::npos) << bad.err;

  const auto named = run_cli({"check-unique", f1}, "");
  EXPECT_EQ(named.status, 0);
  const std::string f3 = temp_file("three", "nope\n");
  const auto where = run_cli({"check-unique", f3});
  EXPECT_EQ(where.err.substr(0, 19 + f3.size() + 10), "oid: check-unique: " + f3 + ": line 1: ");
}

TEST(CliCheckUniqueTest, UsageErrors) {
  EXPECT_EQ(run_cli({"check-unique", "--memory", "0"}).status, 2);
  EXPECT_EQ(run_cli({"check-unique", "--limit", "x"}).status, 2);
  EXPECT_EQ(run_cli({"check-unique", "--no-such-flag"}).status, 2);
  const auto help = run_cli({"check-unique", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--binary"), std::string::npos);
}

}  // namespace
