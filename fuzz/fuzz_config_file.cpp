// `oid mongo ... --config FILE` (parse_connection_config, cli/mongo/connect.hpp): the YAML subset
// of mongo-tools' --config files. The properties: parsing never crashes; a refusal names a line
// of the file (1 to the number of lines) and says what is wrong; an accepted file's values
// written back as double-quoted YAML parse to the same values; and no message ever shows a value.
//
// "No message shows a value" is made checkable with a canary: the input is a list of lines, some
// raw, some `KEY: VALUE` lines written here whose VALUE holds a canary text (plain, single-quoted,
// double-quoted, or double-quoted with the canary as \x escapes) that appears nowhere else in
// the file. No message may hold the canary, raw or decoded. A value line's raw bytes never hold a
// line break (a value broken over two lines makes its second half a line of its own, which the
// parser may quote as a key).
//
// Input: byte 0 picks the mode: even, the rest is the file as it is; odd, the rest is entries,
// each a kind byte and a length byte and that many bytes: kind % 4 == 0, a raw line; else a
// `KEY: VALUE` line, KEY the bytes up to the first ':' (uri, password or anything else; no line
// break), VALUE the bytes after it around the canary, written in style kind % 4 (1 plain, 2
// single-quoted, 3 double-quoted) and, with kind & 4 in double quotes, the canary escaped.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "mongo/connect.hpp"

namespace {

using oid::cli::config_error;
using oid::cli::connection_config;

constexpr std::string_view canary = "Qz7canaryXw4";
constexpr std::string_view canary_escaped =
    "\\x51\\x7a\\x37\\x63\\x61\\x6e\\x61\\x72\\x79\\x58\\x77\\x34";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config_file: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::size_t count_lines(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::size_t n = 0;
  while (!text.empty()) {
    ++n;
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return n;
}

// `value` as a double-quoted YAML scalar that the parser reads back as `value`.
std::string double_quoted(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::variant<connection_config, config_error> parse_checked(std::string_view text) {
  auto parsed = oid::cli::parse_connection_config(text);
  if (const auto* e = std::get_if<config_error>(&parsed)) {
    if (e->message.empty()) fail("an error without a message", std::to_string(e->line));
    if (e->line == 0 || e->line > count_lines(text)) {
      fail("an error names no line of the file", std::to_string(e->line) + ": " + e->message);
    }
    return parsed;
  }
  // Written back, an accepted file reads the same.
  const auto& c = std::get<connection_config>(parsed);
  std::string again;
  if (c.uri) again += "uri: " + double_quoted(c.uri->reveal()) + "\n";
  if (c.password) again += "password: " + double_quoted(c.password->reveal()) + "\n";
  auto reread = oid::cli::parse_connection_config(again);
  const auto* r = std::get_if<connection_config>(&reread);
  if (r == nullptr) fail("an accepted file written back is refused", again);
  if (r->uri.has_value() != c.uri.has_value() || (c.uri && !(*r->uri == *c.uri)) ||
      r->password.has_value() != c.password.has_value() ||
      (c.password && !(*r->password == *c.password))) {
    fail("an accepted file written back reads otherwise", again);
  }
  return parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) == 0) {
    parse_checked(rest);
    return 0;
  }
  std::string text;
  std::string others;  // the raw lines and the keys
  bool has_canary = false;
  std::size_t i = 0;
  while (i + 2 <= rest.size()) {
    const auto kind = static_cast<std::uint8_t>(rest[i]);
    const std::size_t n =
        std::min<std::size_t>(static_cast<std::uint8_t>(rest[i + 1]), rest.size() - i - 2);
    std::string bytes(rest.substr(i + 2, n));
    i += 2 + n;
    if (kind % 4 == 0) {
      text += bytes + "\n";
      others += bytes + "\n";
      continue;
    }
    const auto colon = bytes.find(':');
    std::string key = bytes.substr(0, colon);
    std::string value = colon == std::string::npos ? std::string() : bytes.substr(colon + 1);
    for (auto& c : key) c = c == '\n' ? ' ' : c;
    others += key + "\n";
    const auto half = value.size() / 2;
    std::string line = key + ": ";
    if (kind % 4 == 1 || kind % 4 == 2) {
      for (auto& c : value) c = c == '\n' ? ' ' : c;
      const std::string v = value.substr(0, half) + std::string(canary) + value.substr(half);
      if (kind % 4 == 1) {
        line += v;
      } else {
        line += "'";
        for (const char c : v) line += c == '\'' ? std::string("''") : std::string(1, c);
        line += "'";
      }
    } else {
      std::string q = double_quoted(value);  // "...": the canary goes after its first half
      const std::size_t cut = double_quoted(value.substr(0, half)).size() - 1;
      q.insert(cut, kind & 4 ? canary_escaped : canary);
      line += q;
    }
    text += line + "\n";
    has_canary = true;
  }
  auto parsed = parse_checked(text);
  // The property holds for the canaries put in values: none may be in a raw line or a key.
  if (!has_canary || others.find(canary) != std::string::npos ||
      others.find(canary_escaped) != std::string::npos) {
    return 0;
  }
  if (const auto* e = std::get_if<config_error>(&parsed)) {
    if (e->message.find(canary) != std::string::npos ||
        e->message.find(canary_escaped) != std::string::npos) {
      fail("an error message shows a value", e->message);
    }
  }
  return 0;
}
