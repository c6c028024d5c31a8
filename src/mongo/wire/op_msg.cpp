#include <array>
#include <cstring>
#include <limits>
#include <oid/bson/validate.hpp>
#include <oid/detail/endian.hpp>
#include <oid/mongo/op_msg.hpp>

#include "bson/detail/validate.hpp"
#include "mongo/wire/batch_check.hpp"
#include "mongo/wire/connection.hpp"

namespace oid::mongo {
namespace {

// CRC-32C with a 256-entry table built at compile time. Checksums are optional in OP_MSG: mongod
// only checks them when present and oid does not ask for them on the hot path, so one table
// lookup per byte is plenty. It is also portable; the SSE4.2 crc32 instruction would be ~10x
// faster but needs a CPU check and a second code path for a feature that is rarely used.
constexpr std::array<std::uint32_t, 256> make_crc32c_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected poly
    table[i] = c;
  }
  return table;
}
constexpr auto crc32c_table = make_crc32c_table();

using oid::detail::load_le_i32;
using oid::detail::load_le_u32;

// Appends `v` little-endian.
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.resize(out.size() + 4);
  oid::detail::store_le_u32(out.data() + out.size() - 4, v);
}

// The smallest OP_MSG: header, flags, kind byte and the empty document.
constexpr std::size_t min_message = message_header_size + 4 + 1 + 5;

oid::error shifted(oid::error e, std::size_t base) { return {e.code, e.offset + base}; }

// Validates the document at `at` inside [at, end) of `bytes`, the elements in `checked` (when
// they are in this document) taken as validated.
result<bson::document_view> section_document(std::span<const std::uint8_t> bytes, std::size_t at,
                                             std::size_t end, const op_msg_limits& limits,
                                             detail::checked_batch checked = {}) {
  const auto span = bytes.subspan(at, end - at);
  if (span.size() >= 4) {
    const std::int32_t declared = load_le_i32(span.data());
    // validate_prefix would call a too-long document "truncated": here it runs past its section.
    if (declared >= 5 && static_cast<std::size_t>(declared) > span.size()) {
      return oid::error{oid::errc::bad_length_prefix, at};
    }
  }
  const auto options = detail::section_options(limits);
  auto doc = checked.begin > at ? bson::detail::validate_prefix_skipping(
                                      span, options, checked.begin - at, checked.end - at)
                                : bson::validate_prefix(span, options);
  if (!doc) return shifted(doc.error(), at);
  return *doc;
}

}  // namespace

bson::validate_options detail::section_options(const op_msg_limits& limits) {
  bson::validate_options options;
  options.max_size = limits.max_document_size;
  return options;
}

std::uint32_t crc32c(std::span<const std::uint8_t> bytes) noexcept {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const std::uint8_t b : bytes) c = crc32c_table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

result<message_header> decode_header(std::span<const std::uint8_t> bytes,
                                     const op_msg_limits& limits) noexcept {
  if (bytes.size() < message_header_size) return oid::error{oid::errc::truncated, 0};
  message_header h;
  h.message_length = load_le_i32(bytes.data());
  h.request_id = load_le_i32(bytes.data() + 4);
  h.response_to = load_le_i32(bytes.data() + 8);
  h.op_code = load_le_i32(bytes.data() + 12);
  if (h.message_length < static_cast<std::int32_t>(message_header_size) ||
      static_cast<std::size_t>(h.message_length) > limits.max_message_size) {
    return oid::error{oid::errc::bad_length_prefix, 0};
  }
  return h;
}

namespace {

// The encoder behind encode_op_msg and detail::encode_request: when `db` is not null, the body
// goes out with a `$db` string element appended (its bytes copied up to their terminator, then
// the element, a new terminator and the new length), so that a command needs no copy of its own
// before it is encoded. The message replaces what `out` held, in its capacity when it fits.
result<void> encode(std::int32_t request_id, std::int32_t response_to, std::uint32_t flags,
                    bson::document_view body, const std::string_view* db,
                    std::span<const document_sequence> sequences, std::size_t body_position,
                    std::vector<std::uint8_t>& out) {
  if (body_position > sequences.size()) return oid::error{errc::invalid_message, 0};
  const std::size_t db_element = db == nullptr ? 0 : 1 + 4 + 4 + db->size() + 1;
  const std::size_t body_size = body.size() + db_element;
  std::size_t total = message_header_size + 4 + 1 + body_size;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    const auto& seq = sequences[i];
    if (seq.identifier.find('\0') != std::string_view::npos) {
      return oid::error{oid::errc::invalid_key, i};
    }
    total += 1 + 4 + seq.identifier.size() + 1;
    for (const auto& d : seq.documents) total += d.size();
  }
  if (flags & op_msg_flags::checksum_present) total += 4;
  if (total > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return oid::error{oid::errc::too_large, 0};
  }

  out.clear();
  out.reserve(total);
  put_u32(out, static_cast<std::uint32_t>(total));
  put_u32(out, static_cast<std::uint32_t>(request_id));
  put_u32(out, static_cast<std::uint32_t>(response_to));
  put_u32(out, static_cast<std::uint32_t>(op_msg_opcode));
  put_u32(out, flags);
  const auto put_body = [&] {
    out.push_back(0);
    if (db == nullptr) {
      out.insert(out.end(), body.data(), body.data() + body.size());
      return;
    }
    put_u32(out, static_cast<std::uint32_t>(body_size));
    out.insert(out.end(), body.data() + 4, body.data() + body.size() - 1);
    out.push_back(static_cast<std::uint8_t>(bson::type::string));
    out.insert(out.end(), {'$', 'd', 'b', 0});
    put_u32(out, static_cast<std::uint32_t>(db->size() + 1));
    out.insert(out.end(), db->begin(), db->end());
    out.push_back(0);
    out.push_back(0);
  };
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    if (i == body_position) put_body();
    const auto& seq = sequences[i];
    out.push_back(1);
    const std::size_t size_at = out.size();
    put_u32(out, 0);
    out.insert(out.end(), seq.identifier.begin(), seq.identifier.end());
    out.push_back(0);
    for (const auto& d : seq.documents) out.insert(out.end(), d.data(), d.data() + d.size());
    oid::detail::store_le_u32(out.data() + size_at,
                              static_cast<std::uint32_t>(out.size() - size_at));
  }
  if (body_position == sequences.size()) put_body();
  if (flags & op_msg_flags::checksum_present) put_u32(out, crc32c(out));
  return {};
}

}  // namespace

result<std::vector<std::uint8_t>> encode_op_msg(const op_msg& msg) {
  std::vector<std::uint8_t> out;
  if (auto r = encode(msg.request_id, msg.response_to, msg.flags, msg.body, nullptr, msg.sequences,
                      msg.body_position, out);
      !r) {
    return r.error();
  }
  return out;
}

result<void> detail::encode_request(std::int32_t request_id, std::uint32_t flags,
                                    bson::document_view command, std::string_view db,
                                    std::span<const document_sequence> sequences,
                                    std::vector<std::uint8_t>& out) {
  return encode(request_id, 0, flags, command, &db, sequences, 0, out);
}

result<op_msg> decode_op_msg(std::span<const std::uint8_t> bytes, const op_msg_limits& limits) {
  return detail::decode_op_msg(bytes, limits, {});
}

result<op_msg> detail::decode_op_msg(std::span<const std::uint8_t> bytes,
                                     const op_msg_limits& limits, checked_batch checked) {
  if (bytes.size() < 4) return oid::error{oid::errc::truncated, 0};
  const std::int32_t declared = load_le_i32(bytes.data());
  if (declared < static_cast<std::int32_t>(min_message) ||
      static_cast<std::size_t>(declared) > limits.max_message_size) {
    return oid::error{oid::errc::bad_length_prefix, 0};
  }
  const auto length = static_cast<std::size_t>(declared);
  if (bytes.size() < length) return oid::error{oid::errc::truncated, 0};
  if (bytes.size() > length) return oid::error{oid::errc::trailing_bytes, length};

  op_msg msg;
  msg.request_id = load_le_i32(bytes.data() + 4);
  msg.response_to = load_le_i32(bytes.data() + 8);
  if (load_le_i32(bytes.data() + 12) != op_msg_opcode) return oid::error{errc::invalid_message, 12};
  msg.flags = load_le_u32(bytes.data() + 16);
  if (msg.flags & 0xFFFFu & ~op_msg_flags::known_required) {
    return oid::error{errc::invalid_message, 16};
  }
  std::size_t end = length;
  if (msg.flags & op_msg_flags::checksum_present) {
    if (length < min_message + 4) return oid::error{oid::errc::bad_length_prefix, 0};
    end = length - 4;
    if (crc32c(bytes.first(end)) != load_le_u32(bytes.data() + end)) {
      return oid::error{errc::checksum_mismatch, end};
    }
  }

  bool have_body = false;
  std::size_t pos = message_header_size + 4;
  while (pos < end) {
    const std::uint8_t kind = bytes[pos];
    if (kind == 0) {
      if (have_body) return oid::error{errc::invalid_message, pos};
      // The checked batch is in the body only when the body is the first section.
      auto doc = section_document(bytes, pos + 1, end, limits,
                                  pos == message_header_size + 4 ? checked : checked_batch{});
      if (!doc) return doc.error();
      msg.body = *doc;
      msg.body_position = msg.sequences.size();
      have_body = true;
      pos += 1 + doc->size();
    } else if (kind == 1) {
      const std::size_t size_at = pos + 1;
      if (end - size_at < 4) return oid::error{oid::errc::bad_length_prefix, size_at};
      const std::int32_t size = load_le_i32(bytes.data() + size_at);
      // At least the size itself and an identifier's NUL, and inside the sections.
      if (size < 5 || static_cast<std::size_t>(size) > end - size_at) {
        return oid::error{oid::errc::bad_length_prefix, size_at};
      }
      const std::size_t section_end = size_at + static_cast<std::size_t>(size);
      const std::size_t id_at = size_at + 4;
      const auto* id_begin = bytes.data() + id_at;
      const auto* nul =
          static_cast<const std::uint8_t*>(std::memchr(id_begin, 0, section_end - id_at));
      if (nul == nullptr) return oid::error{oid::errc::missing_terminator, id_at};
      document_sequence seq;
      seq.identifier = std::string_view(reinterpret_cast<const char*>(id_begin),
                                        static_cast<std::size_t>(nul - id_begin));
      if (auto utf8 = bson::check_utf8(seq.identifier); !utf8) {
        return shifted(utf8.error(), id_at);
      }
      std::size_t at = id_at + seq.identifier.size() + 1;
      while (at < section_end) {
        auto doc = section_document(bytes, at, section_end, limits);
        if (!doc) return doc.error();
        seq.documents.push_back(*doc);
        at += doc->size();
      }
      msg.sequences.push_back(std::move(seq));
      pos = section_end;
    } else {
      return oid::error{errc::invalid_message, pos};
    }
  }
  if (!have_body) return oid::error{errc::invalid_message, end};
  return msg;
}

}  // namespace oid::mongo
