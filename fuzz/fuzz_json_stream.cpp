// Property of bson::json_stream_reader: it terminates (each step moves forward or ends the
// reading), every error offset lies inside the input, every error's line and column are what
// position_of() says for the whole text at that offset (the reader works them out lazily, from
// the last position it knows), bytes_read() only grows and never passes the input's end, and every
// document it yields is valid BSON. The first input byte picks the options: legacy forms, and a
// 64-byte limit on a document's text (the reader's buffer then refills and moves all the time).
#include <cstdint>
#include <cstdlib>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/validate.hpp>
#include <sstream>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oid::bson;
  json_read_options options;
  std::size_t max_text = 64 * 1024 * 1024;
  if (size > 0) {
    options.legacy = (data[0] & 1) != 0;
    if ((data[0] & 2) != 0) max_text = 64;
    ++data;
    --size;
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  json_stream_reader reader(in, options, max_text);
  document doc;
  std::size_t read = 0;
  for (std::size_t steps = 0;; ++steps) {
    if (steps > size + 1) std::abort();  // no progress
    const auto more = reader.next(doc);
    if (reader.bytes_read() < read || reader.bytes_read() > size) std::abort();
    read = reader.bytes_read();
    if (!more) {
      if (more.error().offset > size) std::abort();
      if (!(reader.error_position() == position_of(text, more.error().offset))) std::abort();
      if (!reader.can_continue()) break;
      continue;
    }
    if (!*more) break;
    validate_options v;
    v.max_depth = 1000;
    v.max_size = 0x7FFFFFFF;
    if (!validate(doc.bytes(), v)) std::abort();
  }
  return 0;
}
