// Properties of the Extended JSON reader (and of the writer it pairs with).
// 1. As text, in strict and in legacy mode: from_json() never crashes and any error offset lies
//    inside the text (or at its end). When it accepts, the document is valid BSON, and writing it
//    as canonical Extended JSON and reading that back gives exactly the same bytes.
// 2. As BSON bytes that validate: the canonical Extended JSON J1 of the document, when it reads
//    back at all (it may not: a nested key like "$oid" cannot round-trip, as the specification
//    warns), gives bytes whose canonical JSON is J1 again and which read back to themselves.
#include <cstdint>
#include <cstdlib>
#include <oid/bson/json_reader.hpp>
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

void from_text(std::string_view text, bool legacy) {
  json_read_options options;
  options.legacy = legacy;
  const auto doc = from_json(text, options);
  if (!doc) {
    check(doc.error().offset <= text.size());
    return;
  }
  check(validate(doc->bytes()).has_value());
  const std::string canonical = to_json(doc->view(), json_mode::canonical);
  const auto again = from_json(canonical);
  check(again.has_value() && again->bytes().size() == doc->bytes().size() && *again == *doc);
}

void from_bytes(std::span<const std::uint8_t> bytes) {
  const auto view = validate(bytes);
  if (!view) return;
  const std::string j1 = to_json(*view, json_mode::canonical);
  const auto b2 = from_json(j1);
  if (!b2) return;
  const std::string j2 = to_json(b2->view(), json_mode::canonical);
  check(j2 == j1);
  const auto b3 = from_json(j2);
  check(b3.has_value() && *b3 == *b2);
  // Relaxed output is always JSON: if the reader refuses it, it is for an Extended JSON reason.
  const auto relaxed = from_json(to_json(*view, json_mode::relaxed));
  check(relaxed.has_value() || relaxed.error().code == oid::errc::invalid_extended_json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  from_text(text, false);
  from_text(text, true);
  from_bytes({data, size});
  return 0;
}
