#include <gtest/gtest.h>

#include <cstring>
#include <oid/bson/builder.hpp>
#include <oid/mongo/op_msg.hpp>
#include <string>
#include <vector>

#include "mongo/wire/connection.hpp"
#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::mongo::decode_op_msg;
using oid::mongo::encode_op_msg;
using oid::mongo::op_msg;
using oid::testing::HasErrorAt;
namespace flags = oid::mongo::op_msg_flags;
using bytes = std::vector<std::uint8_t>;

document command() {
  builder b;
  b.append_int32("insert", 1).append_string("$db", "test");
  return std::move(b).extract();
}

document numbered(int i) {
  builder b;
  b.append_int32("_id", i).append_string("name", "doc " + std::to_string(i));
  return std::move(b).extract();
}

std::uint32_t read_u32(const bytes& b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}
void write_u32(bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// A message from raw parts: header with the right length, flags, then `sections` as given.
bytes raw_message(std::uint32_t flag_bits, const bytes& sections) {
  bytes out(20, 0);
  out.insert(out.end(), sections.begin(), sections.end());
  write_u32(out, 0, static_cast<std::uint32_t>(out.size()));
  write_u32(out, 4, 1);
  write_u32(out, 12, 2013);
  write_u32(out, 16, flag_bits);
  return out;
}
bytes kind0(const document& d) {
  bytes out{0};
  out.insert(out.end(), d.bytes().begin(), d.bytes().end());
  return out;
}
bytes operator+(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(MongoOpMsgTest, Crc32cKnownValues) {
  const std::string check = "123456789";  // the standard check input of CRC catalogues
  EXPECT_EQ(oid::mongo::crc32c({reinterpret_cast<const std::uint8_t*>(check.data()), check.size()}),
            0xE3069283u);
  EXPECT_EQ(oid::mongo::crc32c({}), 0u);
  const bytes zeros(32, 0);  // RFC 3720 (iSCSI) B.4 test vector
  EXPECT_EQ(oid::mongo::crc32c(zeros), 0x8A9136AAu);
}

TEST(MongoOpMsgTest, EncodesTheWireLayoutAndDecodesItBack) {
  const document body = command(), a = numbered(1), b = numbered(2);
  op_msg msg;
  msg.request_id = 42;
  msg.response_to = 7;
  msg.body = body.view();
  msg.sequences.push_back({"documents", {a.view(), b.view()}});
  const auto encoded = encode_op_msg(msg);
  ASSERT_TRUE(encoded.has_value());
  const bytes& wire = *encoded;
  const std::size_t seq_size = 4 + 10 + a.size() + b.size();
  ASSERT_EQ(wire.size(), 16 + 4 + 1 + body.size() + 1 + seq_size);
  EXPECT_EQ(read_u32(wire, 0), wire.size());
  EXPECT_EQ(read_u32(wire, 4), 42u);
  EXPECT_EQ(read_u32(wire, 8), 7u);
  EXPECT_EQ(read_u32(wire, 12), 2013u);
  EXPECT_EQ(read_u32(wire, 16), 0u);
  EXPECT_EQ(wire[20], 0);
  EXPECT_EQ(0, std::memcmp(wire.data() + 21, body.bytes().data(), body.size()));
  const std::size_t s = 21 + body.size();
  EXPECT_EQ(wire[s], 1);
  EXPECT_EQ(read_u32(wire, s + 1), seq_size);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(wire.data() + s + 5)), "documents");

  const auto decoded = decode_op_msg(wire);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message() << " at " << decoded.error().offset;
  EXPECT_EQ(decoded->request_id, 42);
  EXPECT_EQ(decoded->response_to, 7);
  EXPECT_EQ(decoded->flags, 0u);
  EXPECT_EQ(decoded->body, body.view());
  ASSERT_EQ(decoded->sequences.size(), 1u);
  EXPECT_EQ(decoded->sequences[0].identifier, "documents");
  ASSERT_EQ(decoded->sequences[0].documents.size(), 2u);
  EXPECT_EQ(decoded->sequences[0].documents[0], a.view());
  EXPECT_EQ(decoded->sequences[0].documents[1], b.view());
  EXPECT_EQ(encode_op_msg(*decoded).value(), wire);
}

TEST(MongoOpMsgTest, KeepsSectionOrderAndEmptySequences) {
  const document body = command(), a = numbered(1);
  const bytes id_docs = {'d', 0}, id_empty = {'e', 0};
  bytes seq1{1, 0, 0, 0, 0};
  seq1.insert(seq1.end(), id_docs.begin(), id_docs.end());
  seq1.insert(seq1.end(), a.bytes().begin(), a.bytes().end());
  write_u32(seq1, 1, static_cast<std::uint32_t>(seq1.size() - 1));
  bytes seq2{1, 6, 0, 0, 0};
  seq2.insert(seq2.end(), id_empty.begin(), id_empty.end());
  const bytes wire = raw_message(0, seq1 + kind0(body) + seq2);
  const auto decoded = decode_op_msg(wire);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message() << " at " << decoded.error().offset;
  EXPECT_EQ(decoded->body_position, 1u);
  ASSERT_EQ(decoded->sequences.size(), 2u);
  EXPECT_EQ(decoded->sequences[1].identifier, "e");
  EXPECT_TRUE(decoded->sequences[1].documents.empty());
  EXPECT_EQ(encode_op_msg(*decoded).value(), wire);
}

// A connection's requests: the command with $db appended, written without building that body,
// into one buffer reused for every message (longer and shorter than the one before).
TEST(MongoOpMsgTest, EncodeRequestAppendsDbAsABuiltBodyWould) {
  builder insert;
  insert.append_string("insert", "c").append_bool("ordered", true);
  const document cmd = std::move(insert).extract(), a = numbered(1), b = numbered(2), empty;
  std::vector<std::uint8_t> got(1000, 0xAB);  // what a buffer held before: never in a message
  for (const std::string_view db : {"admin", "", "a.very.long.database.name"}) {
    for (const std::uint32_t f : {0u, flags::checksum_present | flags::more_to_come}) {
      for (const document* c : {&cmd, &empty}) {
        builder body;
        for (const auto& e : c->view()) body.append_element(e);
        body.append_string("$db", db);
        op_msg msg;
        msg.request_id = 7;
        msg.flags = f;
        msg.body = body.view();
        msg.sequences = {{"documents", {a.view(), b.view()}}, {"updates", {}}};
        const auto want = encode_op_msg(msg).value();
        ASSERT_TRUE(oid::mongo::detail::encode_request(7, f, c->view(), db, msg.sequences, got)
                        .has_value());
        EXPECT_EQ(got, want) << "db " << db << ", flags " << f;
        const auto decoded = decode_op_msg(got);
        ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
        EXPECT_EQ(decoded->body.find("$db")->get_string().value(), db);
      }
    }
  }
  const std::vector<oid::mongo::document_sequence> bad{{std::string_view("a\0b", 3), {}}};
  EXPECT_THAT(oid::mongo::detail::encode_request(1, 0, cmd.view(), "db", bad, got),
              HasErrorAt(errc::invalid_key, 0));
}

TEST(MongoOpMsgTest, EveryFlagBit) {
  const document body = command();
  for (int bit = 0; bit < 32; ++bit) {
    SCOPED_TRACE("bit " + std::to_string(bit));
    op_msg msg;
    msg.body = body.view();
    msg.flags = 1u << bit;
    const bytes wire = encode_op_msg(msg).value();
    const auto decoded = decode_op_msg(wire);
    if (bit >= 2 && bit <= 15) {
      // Required bits oid does not know: the specification says to reject the message.
      EXPECT_THAT(decoded, HasErrorAt(oid::mongo::errc::invalid_message, 16));
    } else {
      // 0 checksumPresent, 1 moreToCome, 16 exhaustAllowed; 17-31 optional and ignored.
      ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
      EXPECT_EQ(decoded->flags, 1u << bit);
      EXPECT_EQ(decoded->body, body.view());
      EXPECT_EQ(wire.size(), 16 + 4 + 1 + body.size() + (bit == 0 ? 4 : 0));
    }
  }
}

TEST(MongoOpMsgTest, ChecksumIsWrittenAndCheckedOnEveryByte) {
  const document body = command(), a = numbered(1);
  op_msg msg;
  msg.body = body.view();
  msg.flags = flags::checksum_present | flags::exhaust_allowed;
  msg.sequences.push_back({"documents", {a.view()}});
  const bytes wire = encode_op_msg(msg).value();
  EXPECT_EQ(read_u32(wire, wire.size() - 4), oid::mongo::crc32c({wire.data(), wire.size() - 4}));
  ASSERT_TRUE(decode_op_msg(wire).has_value());
  // Any change to what the checksum covers, past the fields checked first (length, opCode,
  // flags), is a checksum mismatch; so is a change to the checksum itself.
  for (std::size_t i = 4; i < wire.size(); ++i) {
    if (i >= 12 && i < 20) continue;
    SCOPED_TRACE("byte " + std::to_string(i));
    bytes damaged = wire;
    damaged[i] ^= 0x20;
    EXPECT_THAT(decode_op_msg(damaged),
                HasErrorAt(oid::mongo::errc::checksum_mismatch, wire.size() - 4));
  }
  // A message with the checksum bit but too short to hold a checksum.
  bytes short_one = raw_message(flags::checksum_present, kind0(document()));
  EXPECT_THAT(decode_op_msg(short_one), HasErrorAt(errc::bad_length_prefix, 0));
}

TEST(MongoOpMsgTest, EveryTruncationIsAnError) {
  const document body = command(), a = numbered(1);
  op_msg msg;
  msg.body = body.view();
  msg.sequences.push_back({"documents", {a.view()}});
  const bytes wire = encode_op_msg(msg).value();
  for (std::size_t n = 0; n < wire.size(); ++n) {
    SCOPED_TRACE("first " + std::to_string(n) + " bytes");
    EXPECT_THAT(decode_op_msg(std::span(wire).first(n)), HasErrorAt(errc::truncated, 0));
  }
}

TEST(MongoOpMsgTest, BadMessageLengths) {
  const document body = command();
  op_msg msg;
  msg.body = body.view();
  const bytes wire = encode_op_msg(msg).value();
  const std::size_t n = wire.size();
  struct test_case {
    const char* name;
    std::uint32_t length;
    std::error_code want;
    std::size_t offset;
  };
  const test_case cases[] = {
      {"zero", 0, errc::bad_length_prefix, 0},
      {"negative", 0xFFFFFFFFu, errc::bad_length_prefix, 0},
      {"header only", 16, errc::bad_length_prefix, 0},
      {"one short of the smallest", 25, errc::bad_length_prefix, 0},
      {"above the limit", 48'000'001, errc::bad_length_prefix, 0},
      {"more than given", static_cast<std::uint32_t>(n + 1), errc::truncated, 0},
      {"less than given", static_cast<std::uint32_t>(n - 1), errc::trailing_bytes, n - 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    bytes damaged = wire;
    write_u32(damaged, 0, c.length);
    EXPECT_THAT(decode_op_msg(damaged), HasErrorAt(c.want, c.offset));
  }
}

TEST(MongoOpMsgTest, MalformedSections) {
  const document body = command(), a = numbered(1);
  const bytes doc_a(a.bytes().begin(), a.bytes().end());
  const std::size_t s = 20;  // where sections start
  const auto seq = [&](std::uint32_t size, const bytes& rest) {
    bytes out{1, 0, 0, 0, 0};
    write_u32(out, 1, size);
    return out + rest;
  };
  bytes bad_bool = kind0(body);  // {insert: 1, $db: "test"} with a bool whose byte is 2
  {
    builder b;
    b.append_bool("ok", true);
    const document d = std::move(b).extract();
    bad_bool = bytes{0};
    bad_bool.insert(bad_bool.end(), d.bytes().begin(), d.bytes().end());
    bad_bool[1 + 4 + 1 + 3] = 2;  // kind, length, type byte, "ok\0"
  }
  const bytes body_bytes = kind0(body);
  struct test_case {
    const char* name;
    bytes wire;
    std::error_code want;
    std::size_t offset;
  };
  const bytes id = {'d', 'o', 'c', 's', 0};
  const test_case cases[] = {
      {"wrong opCode", [&] {
         bytes w = raw_message(0, body_bytes);
         write_u32(w, 12, 2004);  // OP_QUERY
         return w;
       }(),
       oid::mongo::errc::invalid_message, 12},
      {"no kind-0 section", raw_message(0, seq(4 + 5, id)), oid::mongo::errc::invalid_message, s + 10},
      {"two kind-0 sections", raw_message(0, body_bytes + body_bytes), oid::mongo::errc::invalid_message,
       s + body_bytes.size()},
      {"unknown section kind", raw_message(0, body_bytes + bytes{2, 0, 0, 0, 0, 0}),
       oid::mongo::errc::invalid_message, s + body_bytes.size()},
      {"kind-1 size below minimum", raw_message(0, body_bytes + seq(4, {})),
       errc::bad_length_prefix, s + body_bytes.size() + 1},
      {"kind-1 size past the end", raw_message(0, body_bytes + seq(100, id)),
       errc::bad_length_prefix, s + body_bytes.size() + 1},
      {"kind-1 size cut", raw_message(0, body_bytes + bytes{1, 9, 0}), errc::bad_length_prefix,
       s + body_bytes.size() + 1},
      {"identifier without NUL", raw_message(0, body_bytes + seq(8, {'d', 'o', 'c', 's'})),
       errc::missing_terminator, s + body_bytes.size() + 5},
      {"document past its sequence",
       raw_message(0, seq(static_cast<std::uint32_t>(4 + 5 + doc_a.size() - 1),
                          id + bytes(doc_a.begin(), doc_a.end() - 1)) +
                          bytes{doc_a.back()} + body_bytes),
       errc::bad_length_prefix, s + 1 + 4 + 5},
      {"body past the message", [&] {
         bytes b = body_bytes;
         write_u32(b, 1, static_cast<std::uint32_t>(body.size() + 1));
         return raw_message(0, b);
       }(),
       errc::bad_length_prefix, s + 1},
      {"invalid BSON in the body", raw_message(0, bad_bool), errc::invalid_bool, s + 1 + 8},
      {"invalid BSON in a sequence", raw_message(0, body_bytes + seq(4 + 5 + 5, id + bytes{5, 0, 0, 0, 1})),
       errc::missing_terminator, s + body_bytes.size() + 1 + 4 + 5 + 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decode_op_msg(c.wire), HasErrorAt(c.want, c.offset));
  }
}

TEST(MongoOpMsgTest, EncodeRejectsWhatCannotBeWritten) {
  const document body = command();
  op_msg msg;
  msg.body = body.view();
  msg.sequences.push_back({"ok", {}});
  msg.sequences.push_back({std::string_view("bad\0id", 6), {}});
  EXPECT_THAT(encode_op_msg(msg), HasErrorAt(errc::invalid_key, 1));
  msg.sequences.pop_back();
  msg.body_position = 2;
  EXPECT_THAT(encode_op_msg(msg), HasErrorAt(oid::mongo::errc::invalid_message, 0));
}

TEST(MongoOpMsgTest, DecodeHeader) {
  const document body = command();
  op_msg msg;
  msg.request_id = 9;
  msg.response_to = 3;
  msg.body = body.view();
  const bytes wire = encode_op_msg(msg).value();
  const auto h = oid::mongo::decode_header(wire);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->message_length, static_cast<std::int32_t>(wire.size()));
  EXPECT_EQ(h->request_id, 9);
  EXPECT_EQ(h->response_to, 3);
  EXPECT_EQ(h->op_code, 2013);
  EXPECT_THAT(oid::mongo::decode_header(std::span(wire).first(15)), HasErrorAt(errc::truncated, 0));
  bytes small = wire;
  write_u32(small, 0, 15);
  EXPECT_THAT(oid::mongo::decode_header(small), HasErrorAt(errc::bad_length_prefix, 0));
  oid::mongo::op_msg_limits limits;
  limits.max_message_size = wire.size() - 1;
  EXPECT_THAT(oid::mongo::decode_header(wire, limits), HasErrorAt(errc::bad_length_prefix, 0));
  EXPECT_THAT(decode_op_msg(wire, limits), HasErrorAt(errc::bad_length_prefix, 0));
}

}  // namespace
