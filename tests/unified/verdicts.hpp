// tests/unified/verdicts.hpp: what oid_unified_runner says about each test, and whose gap a test
// that does not pass is. The runner runs a test and gets one of four raw outcomes (passed; not
// applicable: its runOnRequirements exclude every server given, or the file skips it; oid lacks:
// the first obstacle met is oid's; failed, with the failure's text). The skip list
// (tests/unified/skips.txt) then may turn a failure into a gap of the server's, the harness's,
// oid's, or of the test file's own, but only a failure whose text it names: a skip never turns a
// pass into anything, nor a failure it does not name, so it cannot hide a failure the test
// exists to catch.
//
// skips.txt, one rule a line ('#' starts a comment; fields separated by " | "):
//
//   KIND | SUITE/FILE | TEST | FAILURE | reason
//
//   KIND     server (FerretDB answers otherwise), harness (the test harness lacks it: the fault
//            proxy's fail points, its transactions without isolation, a slow host), oid (oid
//            lacks it), file (the test cannot pass as written, against any server). Any KIND
//            followed by " (sometimes)": a failure a run may not meet, because it depends on
//            what the run does not control (a margin of a few tens of milliseconds a loaded host
//            misses, data other tests left behind): the rule is never stale, and its verdict's
//            reason starts with "(sometimes) "
//   SUITE/FILE, TEST   fnmatch(3) globs on "<suite>/<file name>" and on the test's description
//   FAILURE  an fnmatch(3) glob on the failure's text (the runner's line for it, as the report
//            shows, e.g. "*(238 NotImplemented)*"); the rule applies only to a test that fails
//            with it. Every test is run: there is no rule that keeps one from running.
//   reason   one line, the same words for the same cause (docs/conformance.md groups by it)
//
// A rule is stale when, in a run over files its SUITE/FILE names, it matched no test, or its
// SUITE/FILE and TEST name a test that passed (unless TEST is `*` and FAILURE narrows it): the
// runner's --check-skips makes that an error. So a rule names only the tests it is meant for.
//
// Under --expect-failure (the format's valid-fail files, and oid's must-fail files) a failure is
// the runner refusing the test, which is what it must do, and no rule applies to it; a test that
// passes is the failure, unless a `server` rule names it with FAILURE "a valid-fail test passed"
// (the server accepts what the file expects it to refuse: FerretDB's gap, not the runner's). The
// refusal list (--refusals) says for each such test the failure it must be refused with; a test
// it names that ends otherwise (oid lacks what it needs, not applicable) is a failure too:
//
//   SUITE/FILE | TEST | REFUSAL       REFUSAL: a glob on the refusal's text
#pragma once

#include <istream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace oid::unified {

/// The verdicts, in the order of the table's columns.
enum class verdict { passed, not_applicable, server_differs, harness, oid_lacks, failed };

/// The verdict's name in the runner's report and output: "passed", "not-applicable",
/// "server-differs", "harness", "oid-lacks", "failed".
const char* verdict_name(verdict v);

/// One rule of skips.txt.
struct skip_rule {
  verdict kind = verdict::failed;  // server_differs, harness, oid_lacks or not_applicable (file)
  std::string file_glob;
  std::string test_glob;
  std::string failure_glob;
  std::string reason;
  int line = 0;            // in the file, for messages
  bool sometimes = false;  // `KIND (sometimes)`: never stale
  // What a run found: how many tests it applied to, and the tests it matched that passed.
  int applied = 0;
  std::vector<std::string> passed;
};

/// One line of the refusal list.
struct refusal_rule {
  std::string file_glob;
  std::string test_glob;
  std::string refusal_glob;
  int line = 0;
  int applied = 0;
};

/// skips.txt and the refusal list, and the decisions they take part in.
class verdict_rules {
 public:
  /// Reads skips.txt from `in`; `name` is used in messages. Returns an empty string, or the first
  /// malformed line's message ("skips.txt:12: ...").
  [[nodiscard]] std::string read_skips(std::istream& in, std::string_view name);

  /// Reads a refusal list, as read_skips does.
  [[nodiscard]] std::string read_refusals(std::istream& in, std::string_view name);

  /// The final verdict and reason of `test` of `file_key` ("suite/file.json"), from what running it
  /// gave (`raw`: passed, not_applicable, oid_lacks or failed, with `reason`). Records which rules
  /// applied and which matched a test that passed, for `stale`.
  std::pair<verdict, std::string> judge(const std::string& file_key, const std::string& test,
                                        verdict raw, std::string reason, bool expect_failure);

  /// The stale rules of a run over `file_keys`, one message each ("skips.txt:12: stale: ...").
  std::vector<std::string> stale(const std::set<std::string>& file_keys) const;

  /// Whether a refusal list was read (then every refused test must be in it).
  bool has_refusals() const { return !refusals_name_.empty(); }

  const std::vector<skip_rule>& skips() const { return skips_; }

 private:
  std::vector<skip_rule> skips_;
  std::vector<refusal_rule> refusals_;
  std::string skips_name_, refusals_name_;
};

}  // namespace oid::unified
