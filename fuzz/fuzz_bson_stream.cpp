// Property: bson::stream_reader terminates (each step either moves past at least 5 bytes or
// ends the reading), never reads past the input (every document it yields is the input's bytes
// at document_offset(), and no offset lies beyond the input's end), yields only documents that
// validate with its options, accounts for every byte (the documents and the skipped bad ones are
// contiguous, and a clean end is at the input's end), and stays ended after an error it cannot
// go on from. The first input byte picks the options: UTF-8 checks, a small size limit, a small
// depth limit.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oid/bson/stream_reader.hpp>
#include <oid/bson/validate.hpp>
#include <span>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oid::bson;
  validate_options options;
  if (size > 0) {
    options.check_utf8 = (data[0] & 1) != 0;
    if ((data[0] & 2) != 0) options.max_size = 64;
    if ((data[0] & 4) != 0) options.max_depth = 2;
    ++data;
    --size;
  }
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  stream_reader reader(in, options);
  std::uint64_t at = 0;  // where the next document must start
  for (std::size_t steps = 0;; ++steps) {
    if (steps > size / 5 + 1) std::abort();  // no progress
    const auto more = reader.next();
    if (reader.document_offset() != at && (more.has_value() || reader.can_continue())) {
      std::abort();
    }
    if (!more) {
      if (more.error().offset > size) std::abort();
      if (!reader.can_continue()) {
        const auto after = reader.next();
        if (!after || *after || reader.bytes_read() != at) std::abort();
        break;
      }
      if (reader.bytes_read() <= at || reader.bytes_read() > size) std::abort();
      at = reader.bytes_read();
      continue;
    }
    if (!*more) {
      if (at != size) std::abort();
      break;
    }
    const document_view v = reader.current();
    if (at + v.size() > size || reader.bytes_read() != at + v.size()) std::abort();
    if (std::memcmp(v.data(), data + at, v.size()) != 0) std::abort();
    if (!validate(std::span<const std::uint8_t>(v.data(), v.size()), options)) std::abort();
    at += v.size();
  }
  return 0;
}
