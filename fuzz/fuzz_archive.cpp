// `oid mongo restore --archive` over an archive someone else made (cli/mongo/archive.hpp): the
// input is the archive. The properties: reading ends in the archive's end or an error, never a
// crash or a hang; every document handed out validates and lies inside the input; offsets only
// grow; and the bytes consumed never exceed the input.
#include <cstdint>
#include <cstdlib>
#include <oid/bson/validate.hpp>
#include <sstream>
#include <string>

#include "mongo/archive.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  oid::cli::archive::reader reader(in);
  if (!reader.read_prelude()) return 0;
  std::uint64_t last_offset = 0;
  // Each step consumes at least a length's four bytes: more steps than that is a hang.
  for (std::size_t steps = 0; steps <= size / 4 + 2; ++steps) {
    const auto item = reader.next();
    check(reader.bytes_read() <= size);
    if (!item) {
      check(item.error().offset <= size);
      if (!reader.can_continue()) return 0;
      continue;
    }
    if (item->kind == oid::cli::archive::item::end) return 0;
    check(item->collection < reader.collections().size());
    check(item->offset >= last_offset && item->offset <= size);
    last_offset = item->offset;
    if (item->kind == oid::cli::archive::item::document) {
      check(oid::bson::validate(item->doc.bytes()).has_value());
      check(item->offset + item->doc.size() <= size);
    }
  }
  std::abort();  // the reader neither ended nor stopped
}
