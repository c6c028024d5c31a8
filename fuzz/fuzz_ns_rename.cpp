// `oid mongo restore --nsFrom/--nsTo` (ns_renamer, cli/mongo/restore.hpp): the operator's
// patterns against the namespaces of a dump someone else made. The properties: make() never
// crashes, refuses exactly the pairs its contract refuses (another number of --nsFrom than --nsTo,
// an unclosed `$`, a `\` at the end, another number of `*`, a `$name$` its --nsFrom lacks) with a
// message naming the flag; rename() never crashes or hangs, gives the same answer twice, leaves a
// namespace no --nsFrom matches unchanged, and otherwise gives exactly what a reference written
// here from the contract gives: the first matching pair, each wildcard taking the shortest text
// that lets the rest match (earlier wildcards first), the --nsTo's `*`s taking the --nsFrom's `*`
// captures in order and each `$name$` the capture of the first wildcard of that name.
//
// Input: byte 0: bits 0-1 the number of --nsFrom, bits 2-3 the number of --nsTo when bit 4 is set
// (else as many as --nsFrom); then NUL-separated fields: the --nsFrom patterns, the --nsTo
// patterns, then namespaces to rename (NUL: no namespace holds one, nor does a command line).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/restore.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_ns_rename: %s: %s\n", what, detail.c_str());
  std::abort();
}

struct piece {
  bool wildcard = false;
  std::string text;  // the literal, or the wildcard's name (empty for `*`)
};

// The contract's pattern syntax, independently of restore.cpp.
std::optional<std::vector<piece>> parse(std::string_view p) {
  std::vector<piece> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' || (p[i] != '*' && p[i] != '$')) {
      if (p[i] == '\\' && ++i == p.size()) return std::nullopt;
      if (out.empty() || out.back().wildcard) out.push_back({});
      out.back().text += p[i];
    } else if (p[i] == '*') {
      out.push_back({true, {}});
    } else {
      const auto close = p.find('$', i + 1);
      if (close == std::string_view::npos || close == i + 1) return std::nullopt;
      out.push_back({true, std::string(p.substr(i + 1, close - i - 1))});
      i = close;
    }
  }
  return out;
}

// The captures of `pieces` matching all of `s`, each wildcard the shortest that lets the rest
// match, or nothing. `rest[p][i]`: pieces p.. match s[i..].
std::optional<std::vector<std::string_view>> match(const std::vector<piece>& pieces,
                                                   std::string_view s) {
  const std::size_t n = s.size() + 1;
  std::vector<char> rest((pieces.size() + 1) * n, 0);
  const auto at = [&](std::size_t p, std::size_t i) -> char& { return rest[p * n + i]; };
  at(pieces.size(), s.size()) = 1;
  for (std::size_t p = pieces.size(); p-- > 0;) {
    bool any_after =
        false;  // a wildcard: pieces p.. match from i when p+1.. match from some j >= i
    for (std::size_t i = s.size() + 1; i-- > 0;) {
      if (pieces[p].wildcard) {
        any_after = any_after || at(p + 1, i);
        at(p, i) = any_after;
      } else {
        const auto& t = pieces[p].text;
        at(p, i) = s.substr(i, t.size()) == t && at(p + 1, i + t.size());
      }
    }
  }
  if (!at(0, 0)) return std::nullopt;
  std::vector<std::string_view> captures;
  std::size_t i = 0;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    if (!pieces[p].wildcard) {
      i += pieces[p].text.size();
      continue;
    }
    std::size_t end = i;
    while (!at(p + 1, end)) ++end;
    captures.push_back(s.substr(i, end - i));
    i = end;
  }
  return captures;
}

std::size_t stars(const std::vector<piece>& ps) {
  std::size_t k = 0;
  for (const auto& p : ps) k += p.wildcard && p.text.empty();
  return k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  std::vector<std::string> fields;
  {
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    while (true) {
      const auto nul = rest.find('\0');
      fields.emplace_back(rest.substr(0, nul));
      if (nul == std::string_view::npos) break;
      rest.remove_prefix(nul + 1);
    }
  }
  const std::size_t nfrom = flags & 3;
  const std::size_t nto = flags & 0x10 ? (flags >> 2) & 3 : nfrom;
  std::vector<std::string> from, to, names;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    (i < nfrom ? from : i < nfrom + nto ? to : names).push_back(fields[i]);
  }

  // What make() should say, from the contract.
  bool expect_ok = from.size() == to.size();
  std::vector<std::pair<std::vector<piece>, std::vector<piece>>> rules;
  for (std::size_t i = 0; expect_ok && i < from.size(); ++i) {
    auto f = parse(from[i]);
    auto t = parse(to[i]);
    expect_ok = f && t && stars(*f) == stars(*t);
    for (std::size_t k = 0; expect_ok && k < t->size(); ++k) {
      const auto& p = (*t)[k];
      if (!p.wildcard || p.text.empty()) continue;
      bool known = false;
      for (const auto& q : *f) known = known || (q.wildcard && q.text == p.text);
      expect_ok = known;
    }
    if (expect_ok) rules.emplace_back(std::move(*f), std::move(*t));
  }

  auto made = oid::cli::ns_renamer::make(from, to);
  if (made.has_value() != expect_ok) {
    fail("make() disagrees with the contract", made ? "accepted" : made.error());
  }
  if (!made) {
    const auto& e = made.error();
    if (e.find("--ns") == std::string::npos) fail("make()'s error names no flag", e);
    return 0;
  }
  if (made->empty() != from.empty()) fail("empty() is wrong", std::to_string(from.size()));

  for (const auto& ns : names) {
    const std::string got = made->rename(ns);
    if (made->rename(ns) != got) fail("rename() is not deterministic", ns);
    std::string expected = ns;
    for (const auto& rule : rules) {
      const auto& f = rule.first;  // not a structured binding: the lambda below captures it
      const auto& t = rule.second;
      const auto captures = match(f, ns);
      if (!captures) continue;
      std::vector<std::string_view> star_captures;
      std::size_t k = 0;
      for (const auto& q : f) {
        if (!q.wildcard) continue;
        if (q.text.empty()) star_captures.push_back((*captures)[k]);
        ++k;
      }
      const auto named = [&](const std::string& name) {
        std::size_t w = 0;
        for (const auto& q : f) {
          if (!q.wildcard) continue;
          if (q.text == name) return (*captures)[w];
          ++w;
        }
        fail("a $name$ missing from --nsFrom was accepted", name);
      };
      expected.clear();
      std::size_t star = 0;
      for (const auto& p : t) {
        expected += !p.wildcard      ? std::string_view(p.text)
                    : p.text.empty() ? star_captures[star++]
                                     : named(p.text);
      }
      break;
    }
    if (got != expected) fail("rename() differs from the contract", ns + " -> " + got);
  }
  return 0;
}
