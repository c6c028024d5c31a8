// Properties of the Extended JSON writer over any bytes that validate:
// 1. Canonical and relaxed output, compact and pretty, is JSON (simdjson, an independent parser,
//    accepts it) whenever strings were checked for UTF-8.
// 2. Pretty output with the whitespace outside strings removed is exactly the compact output, for
//    any indentation: pretty printing only adds layout.
// 3. The appending form appends exactly the returned text and leaves what `out` held.
// 4. With UTF-8 checks off, writing still cannot crash or read out of bounds (ASan/UBSan).
// The first input byte picks the indentation; the rest is the document.
#include <simdjson.h>

#include <cstdint>
#include <cstdlib>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <span>
#include <string>
#include <string_view>

namespace {

using namespace oid::bson;

void check(bool ok) {
  if (!ok) std::abort();
}

// `json` without the spaces and newlines outside strings.
std::string strip_layout(std::string_view json) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\') {
        out += json[++i];
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c != ' ' && c != '\n') {
      out += c;
      in_string = c == '"';
    }
  }
  return out;
}

bool is_json(simdjson::dom::parser& parser, const std::string& text) {
  simdjson::dom::element root;
  return parser.parse(simdjson::padded_string(text)).get(root) == simdjson::SUCCESS;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int indent = data[0] % 5;
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  static simdjson::dom::parser parser;

  for (const bool utf8 : {true, false}) {
    validate_options options;
    options.check_utf8 = utf8;
    const auto doc = validate(bytes, options);
    if (!doc) continue;
    for (const json_mode mode : {json_mode::canonical, json_mode::relaxed}) {
      const std::string compact = to_json(*doc, mode);
      const std::string pretty = to_json(*doc, json_options{mode, true, indent});
      check(strip_layout(pretty) == compact);
      std::string appended = "[";
      to_json(*doc, json_options{mode}, appended);
      check(appended.size() == compact.size() + 1 &&
            appended.compare(1, compact.size(), compact) == 0);
      if (utf8) {
        check(is_json(parser, compact));
        check(is_json(parser, pretty));
      }
    }
    if (utf8) break;  // a document valid with UTF-8 checks gives the same text without them
  }
  return 0;
}
