// The verdicts of oid_unified_runner and the rules of skips.txt and the refusal lists
// (tests/unified/verdicts.hpp): a rule turns only a failure it names into a gap, never a pass,
// and a stale rule is reported.
#include "unified/verdicts.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using oid::unified::verdict;
using oid::unified::verdict_rules;

verdict_rules skips(const std::string& text) {
  verdict_rules r;
  std::istringstream in(text);
  EXPECT_EQ(r.read_skips(in, "skips.txt"), "");
  return r;
}

TEST(UnifiedVerdicts, NamesInTheReport) {
  EXPECT_STREQ(oid::unified::verdict_name(verdict::passed), "passed");
  EXPECT_STREQ(oid::unified::verdict_name(verdict::not_applicable), "not-applicable");
  EXPECT_STREQ(oid::unified::verdict_name(verdict::server_differs), "server-differs");
  EXPECT_STREQ(oid::unified::verdict_name(verdict::harness), "harness");
  EXPECT_STREQ(oid::unified::verdict_name(verdict::oid_lacks), "oid-lacks");
  EXPECT_STREQ(oid::unified::verdict_name(verdict::failed), "failed");
}

TEST(UnifiedVerdicts, ReadsTheKindsAndRefusesMalformedLines) {
  auto r = skips(
      "# a comment\n\n"
      "server | crud/a.json | t1 | *(238 NotImplemented)* | FerretDB lacks x\n"
      "harness | crud/a.json | t2 | *not supported by oid_failpoint_proxy* | the proxy lacks y\n"
      "oid | crud/a.json | t3 | * | oid lacks z\n"
      "file | csot/b.json | t4 | expected an error* | cannot pass as written\n");
  ASSERT_EQ(r.skips().size(), 4u);
  EXPECT_EQ(r.skips()[0].kind, verdict::server_differs);
  EXPECT_EQ(r.skips()[1].kind, verdict::harness);
  EXPECT_EQ(r.skips()[2].kind, verdict::oid_lacks);
  EXPECT_EQ(r.skips()[3].kind, verdict::not_applicable);
  EXPECT_EQ(r.skips()[3].failure_glob, "expected an error*");
  EXPECT_EQ(r.skips()[0].line, 3);

  for (const char* bad : {
           "server | crud/a.json | t | reason\n",                // the old 4 fields
           "server-error | crud/a.json | t | *x* | reason\n",    // an unknown kind
           "server (maybe) | crud/a.json | t | *x* | reason\n",  // an unknown qualifier
           "server | * | t | *x* | reason\n",                    // no suite named
           "server | crud/a.json | t | *x* | reason | more\n",   // 6 fields
           "server | crud/a.json |  | *x* | reason\n",           // an empty field
       }) {
    verdict_rules v;
    std::istringstream in(bad);
    EXPECT_NE(v.read_skips(in, "skips.txt"), "") << bad;
  }
}

TEST(UnifiedVerdicts, AFailureBecomesAGapOnlyWhenARuleNamesItsTestAndItsText) {
  auto r = skips("server | crud/a.json | t1 | *(238 NotImplemented)* | FerretDB lacks x\n");
  // The failure the rule names.
  EXPECT_EQ(
      r.judge("crud/a.json", "t1", verdict::failed, "find failed: no (238 NotImplemented)", false),
      std::make_pair(verdict::server_differs, std::string("FerretDB lacks x")));
  // Another failure of the same test stays a failure.
  EXPECT_EQ(r.judge("crud/a.json", "t1", verdict::failed, "find: result: expected 1, got 2", false),
            std::make_pair(verdict::failed, std::string("find: result: expected 1, got 2")));
  // The same failure in another test, or another file, stays a failure.
  EXPECT_EQ(r.judge("crud/a.json", "t2", verdict::failed, "x (238 NotImplemented)", false).first,
            verdict::failed);
  EXPECT_EQ(r.judge("crud/b.json", "t1", verdict::failed, "x (238 NotImplemented)", false).first,
            verdict::failed);
  // A pass stays a pass; so do not-applicable and oid's gaps found by the runner.
  EXPECT_EQ(r.judge("crud/a.json", "t1", verdict::passed, "", false).first, verdict::passed);
  EXPECT_EQ(
      r.judge("crud/a.json", "t1", verdict::not_applicable, "needs topology sharded", false).first,
      verdict::not_applicable);
  EXPECT_EQ(r.judge("crud/a.json", "t1", verdict::oid_lacks, "createChangeStream", false).first,
            verdict::oid_lacks);
}

TEST(UnifiedVerdicts, AFailureNoRuleNamesIsAFailureWhateverItsCode) {
  // NotImplemented and CommandNotFound used to be skipped by themselves: no more.
  verdict_rules none;
  EXPECT_EQ(none.judge("crud/a.json", "t", verdict::failed,
                       "runCommand failed: no such command: 'x' (59 CommandNotFound)", false)
                .first,
            verdict::failed);
  EXPECT_EQ(none.judge("crud/a.json", "t", verdict::failed,
                       "failPoint onPrimaryTransactionalWrite: not supported (2 BadValue)", false)
                .first,
            verdict::failed);
}

TEST(UnifiedVerdicts, UnderExpectFailureARefusalPassesAndNoRuleApplies) {
  auto r = skips(
      "server | unified-valid-fail/f.json | t | * | would hide the refusal\n"
      "server | unified-valid-fail/f.json | lets through | a valid-fail test passed | the server "
      "accepts it\n");
  // A refusal is the pass, whatever the skip list says.
  EXPECT_EQ(r.judge("unified-valid-fail/f.json", "t", verdict::failed, "wrong", true),
            std::make_pair(verdict::passed, std::string("refused: wrong")));
  // A test that passes is the failure...
  EXPECT_EQ(r.judge("unified-valid-fail/f.json", "t", verdict::passed, "", true),
            std::make_pair(verdict::failed, std::string("a valid-fail test passed")));
  // ... unless a server rule says the server let it through.
  EXPECT_EQ(r.judge("unified-valid-fail/f.json", "lets through", verdict::passed, "", true),
            std::make_pair(verdict::server_differs, std::string("the server accepts it")));
}

TEST(UnifiedVerdicts, TheRefusalListChecksWhyATestWasRefused) {
  verdict_rules r;
  std::istringstream in("must-fail/a.json | wrong result | *result: *expected 2*\n");
  ASSERT_EQ(r.read_refusals(in, "refusals.txt"), "");
  EXPECT_EQ(r.judge("must-fail/a.json", "wrong result", verdict::failed,
                    "find: result: [0].x: "
                    "expected 2 (int), got 1 (int)",
                    true)
                .first,
            verdict::passed);
  // Refused for a parse error: not what the file is for.
  auto typo = r.judge("must-fail/a.json", "wrong result", verdict::failed,
                      "operation: unknown field `expectResults`", true);
  EXPECT_EQ(typo.first, verdict::failed);
  EXPECT_NE(typo.second.find("refused for another reason"), std::string::npos) << typo.second;
  // A test the list names that oid cannot run is not refused: a failure.
  EXPECT_EQ(
      r.judge("must-fail/a.json", "wrong result", verdict::oid_lacks, "runner: loop", true).first,
      verdict::failed);
  // A refused test the list does not name.
  EXPECT_EQ(r.judge("must-fail/a.json", "other", verdict::failed, "x", true).first,
            verdict::failed);

  std::istringstream bad("must-fail/a.json | only two fields\n");
  verdict_rules v;
  EXPECT_NE(v.read_refusals(bad, "refusals.txt"), "");
}

TEST(UnifiedVerdicts, StaleRules) {
  auto r = skips(
      "server | crud/a.json | t1 | *(238 NotImplemented)* | used\n"
      "server | crud/a.json | never | *x* | matches no test\n"
      "server | crud/a.json | BulkWrite *On*e | *upserted* | names a test that passes\n"
      "server | crud/a.json | * | *(2 BadValue)* | narrowed by its text: a pass is no matter\n"
      "server | crud/a.json | * | * | the whole file, on any failure\n"
      "server | csot/b.json | t | *x* | another suite: not stale in a crud run\n");
  (void)r.judge("crud/a.json", "t1", verdict::failed, "x (238 NotImplemented)", false);
  (void)r.judge("crud/a.json", "BulkWrite updateOne", verdict::failed, "upserted[0].index", false);
  (void)r.judge("crud/a.json", "BulkWrite deleteOne", verdict::passed, "", false);
  (void)r.judge("crud/a.json", "t3", verdict::failed, "y (2 BadValue)", false);
  (void)r.judge("crud/a.json", "t4", verdict::failed, "z", false);
  auto stale = r.stale({"crud/a.json"});
  // A `sometimes` rule may meet no failure in a run, and its test may pass: never stale.
  auto timing = skips(
      "harness (sometimes) | csot/c.json | t | *expected more* | a loaded host\n"
      "server (sometimes) | crud/d.json | u | *succeeded* | data left behind\n");
  EXPECT_EQ(timing.skips()[1].kind, verdict::server_differs);
  EXPECT_EQ(timing.skips()[0].kind, verdict::harness);
  (void)timing.judge("csot/c.json", "t", verdict::passed, "", false);
  EXPECT_TRUE(timing.stale({"csot/c.json"}).empty());
  EXPECT_EQ(timing.judge("csot/c.json", "t", verdict::failed, "1 observed, expected more", false),
            std::make_pair(verdict::harness, std::string("(sometimes) a loaded host")));
  (void)timing.judge("crud/d.json", "u", verdict::passed, "", false);
  EXPECT_TRUE(timing.stale({"csot/c.json", "crud/d.json"}).empty());
  ASSERT_EQ(stale.size(), 3u) << ::testing::PrintToString(stale);
  EXPECT_NE(stale[0].find("skips.txt:2: stale: matched no test"), std::string::npos) << stale[0];
  EXPECT_NE(stale[1].find("skips.txt:3: stale:"), std::string::npos) << stale[1];
  EXPECT_NE(stale[1].find("BulkWrite deleteOne"), std::string::npos) << stale[1];
  EXPECT_NE(stale[2].find("skips.txt:5: stale:"), std::string::npos) << stale[2];
}

// The repository's own lists parse (a malformed line would stop every unified suite).
TEST(UnifiedVerdicts, TheRepositorysListsParse) {
  verdict_rules r;
  std::ifstream skips_file(OID_UNIFIED_DIR "/skips.txt");
  ASSERT_TRUE(skips_file);
  EXPECT_EQ(r.read_skips(skips_file, "skips.txt"), "");
  EXPECT_FALSE(r.skips().empty());
  std::ifstream refusals_file(OID_UNIFIED_DIR "/must-fail/refusals.txt");
  ASSERT_TRUE(refusals_file);
  EXPECT_EQ(r.read_refusals(refusals_file, "refusals.txt"), "");
}

}  // namespace
