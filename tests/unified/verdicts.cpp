// tests/unified/verdicts.cpp: skips.txt, the refusal list and the verdicts (verdicts.hpp).
#include "unified/verdicts.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <utility>

namespace oid::unified {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

// The fields of a line split on " | ", trimmed; an empty vector for a blank or comment line.
std::vector<std::string> fields(const std::string& line) {
  auto t = trim(line);
  if (t.empty() || t[0] == '#') return {};
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto bar = t.find(" | ", start);
    if (bar == std::string::npos) break;
    parts.push_back(trim(std::string_view(t).substr(start, bar - start)));
    start = bar + 3;
  }
  parts.push_back(trim(std::string_view(t).substr(start)));
  return parts;
}

// Calls `parse(fields, line number)` for each line of `in` that is not blank or a comment; the
// first message `parse` returns (an error, prefixed with where) ends the reading.
template <class Parse>
std::string each_line(std::istream& in, const std::string& name, Parse&& parse) {
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto parts = fields(line);
    if (parts.empty()) continue;
    if (auto error = parse(parts, number); !error.empty()) {
      return name + ":" + std::to_string(number) + ": " + error;
    }
  }
  return {};
}

bool glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

std::optional<verdict> kind_of(std::string_view k) {
  if (k == "server") return verdict::server_differs;
  if (k == "harness") return verdict::harness;
  if (k == "oid") return verdict::oid_lacks;
  if (k == "file") return verdict::not_applicable;
  return std::nullopt;
}

constexpr std::string_view valid_fail_passed = "a valid-fail test passed";

}  // namespace

const char* verdict_name(verdict v) {
  switch (v) {
  case verdict::passed: return "passed";
  case verdict::not_applicable: return "not-applicable";
  case verdict::server_differs: return "server-differs";
  case verdict::harness: return "harness";
  case verdict::oid_lacks: return "oid-lacks";
  case verdict::failed: return "failed";
  }
  return "?";
}

std::string verdict_rules::read_skips(std::istream& in, std::string_view name) {
  skips_name_ = std::string(name);
  return each_line(in, skips_name_, [&](std::vector<std::string>& parts, int number) {
    if (parts.size() != 5) {
      return "expected \"KIND | SUITE/FILE | TEST | FAILURE | reason\" (5 fields, got " +
             std::to_string(parts.size()) + ")";
    }
    constexpr std::string_view qualifier = " (sometimes)";
    const bool sometimes = parts[0].ends_with(qualifier);
    auto kind =
        kind_of(sometimes ? std::string_view(parts[0]).substr(0, parts[0].size() - qualifier.size())
                          : std::string_view(parts[0]));
    if (!kind) {
      return "KIND is one of server, harness, oid, file (each may be followed by \" "
             "(sometimes)\"), "
             "not \"" +
             parts[0] + "\"";
    }
    for (int i = 1; i < 5; ++i) {
      if (parts[i].empty()) return std::string("an empty field");
    }
    if (parts[1].find('/') == std::string::npos || parts[1][0] == '*') {
      return "SUITE/FILE names a suite (\"crud/*.json\", not \"" + parts[1] + "\")";
    }
    skip_rule r;
    r.kind = *kind;
    r.file_glob = parts[1];
    r.test_glob = parts[2];
    r.failure_glob = parts[3];
    r.reason = parts[4];
    r.line = number;
    r.sometimes = sometimes;
    skips_.push_back(std::move(r));
    return std::string();
  });
}

std::string verdict_rules::read_refusals(std::istream& in, std::string_view name) {
  refusals_name_ = std::string(name);
  return each_line(in, refusals_name_, [&](std::vector<std::string>& parts, int number) {
    if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
      return std::string("expected \"SUITE/FILE | TEST | REFUSAL\"");
    }
    refusals_.push_back({parts[0], parts[1], parts[2], number, 0});
    return std::string();
  });
}

std::pair<verdict, std::string> verdict_rules::judge(const std::string& file_key,
                                                     const std::string& test, verdict raw,
                                                     std::string reason, bool expect_failure) {
  if (expect_failure) {
    if (raw == verdict::failed) {
      // The runner refused the test, as it must; with a refusal list, for the reason meant.
      if (!has_refusals()) return {verdict::passed, "refused: " + reason};
      for (auto& r : refusals_) {
        if (glob(r.file_glob, file_key) && glob(r.test_glob, test)) {
          ++r.applied;
          if (glob(r.refusal_glob, reason)) return {verdict::passed, "refused: " + reason};
          return {verdict::failed, "refused for another reason than " + refusals_name_ + ":" +
                                       std::to_string(r.line) + " (" + r.refusal_glob +
                                       "): " + reason};
        }
      }
      return {verdict::failed, "refused, but " + refusals_name_ +
                                   " does not say with what (refused: " + reason + ")"};
    }
    if (raw != verdict::passed) {
      // Not judged (oid lacks what it needs, or it does not apply): a test the refusal list
      // names must be refused all the same.
      for (auto& r : refusals_) {
        if (glob(r.file_glob, file_key) && glob(r.test_glob, test)) {
          ++r.applied;
          return {verdict::failed, "not refused (" + std::string(verdict_name(raw)) + ": " +
                                       reason + "), though " + refusals_name_ + ":" +
                                       std::to_string(r.line) + " names it"};
        }
      }
      return {raw, std::move(reason)};
    }
    const std::string passed(valid_fail_passed);
    for (auto& r : skips_) {
      if (r.kind == verdict::server_differs && r.failure_glob == passed &&
          glob(r.file_glob, file_key) && glob(r.test_glob, test)) {
        ++r.applied;
        return {r.kind, r.reason};
      }
    }
    return {verdict::failed, passed};
  }
  if (raw == verdict::passed) {
    for (auto& r : skips_) {
      if (glob(r.file_glob, file_key) && glob(r.test_glob, test)) r.passed.push_back(test);
    }
    return {raw, std::move(reason)};
  }
  if (raw != verdict::failed) return {raw, std::move(reason)};
  for (auto& r : skips_) {
    if (glob(r.file_glob, file_key) && glob(r.test_glob, test) && glob(r.failure_glob, reason)) {
      ++r.applied;
      // A `sometimes` rule's verdict says so: scripts/conformance.py allows for it when it compares
      // README.md's counts with a run's.
      return {r.kind, r.sometimes ? "(sometimes) " + r.reason : r.reason};
    }
  }
  return {raw, std::move(reason)};
}

std::vector<std::string> verdict_rules::stale(const std::set<std::string>& file_keys) const {
  std::vector<std::string> out;
  const auto covers = [&](const std::string& pattern) {
    return std::any_of(file_keys.begin(), file_keys.end(),
                       [&](const std::string& k) { return glob(pattern, k); });
  };
  for (const auto& r : skips_) {
    if (r.sometimes || !covers(r.file_glob)) continue;
    const auto where = skips_name_ + ":" + std::to_string(r.line) + ": stale: ";
    if (r.applied == 0) {
      out.push_back(where + "matched no test (" + r.file_glob + " | " + r.test_glob + " | " +
                    r.failure_glob + ")");
    } else if ((r.failure_glob == "*" || r.test_glob != "*") && !r.passed.empty()) {
      // A rule that names tests names only tests that fail; one that names none (TEST `*`) is
      // narrowed by its failure's text.
      out.push_back(where + "its TEST glob also names a test that passed (" + r.passed.front() +
                    ")");
    }
  }
  for (const auto& r : refusals_) {
    if (covers(r.file_glob) && r.applied == 0) {
      out.push_back(refusals_name_ + ":" + std::to_string(r.line) + ": stale: matched no test (" +
                    r.file_glob + " | " + r.test_glob + ")");
    }
  }
  return out;
}

}  // namespace oid::unified
