// detail::batch_check: a cursor reply's documents validated piece by piece while the reply arrives,
// and decode_op_msg skipping them. The property that matters: the result, and any error with its
// offset, is exactly what decoding the whole reply without the check gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/mongo/op_msg.hpp>
#include <string>
#include <vector>

#include "mongo/wire/batch_check.hpp"

namespace {

using oid::bson::builder;
using oid::mongo::decode_op_msg;
using oid::mongo::encode_op_msg;
using oid::mongo::op_msg;
using oid::mongo::detail::batch_check;
using oid::mongo::detail::checked_batch;
using bytes = std::vector<std::uint8_t>;

// A batch document: numbers, an ASCII and a non-ASCII string, a boolean, a nested document.
void append_tweet(builder& b, int i) {
  b.open_document(std::to_string(i))
      .append_int32("_id", i)
      .append_string("text", "tweet number " + std::to_string(i))
      .append_bool("seen", i % 2 == 0)
      .open_document("user")
      .append_string("name", "Zoë")
      .append_double("score", i * 0.5)
      .close()
      .close();
}

// {cursor: {<batch_key>: [n documents], id: 0, ns: "db.c"}, ok: 1}, as a server sends it.
bytes cursor_reply(int n, std::string_view batch_key = "nextBatch") {
  builder body;
  body.open_document("cursor").open_array(batch_key);
  for (int i = 0; i < n; ++i) append_tweet(body, i);
  body.close().append_int64("id", 0).append_string("ns", "db.c").close().append_double("ok", 1);
  op_msg msg;
  msg.response_to = 1;
  msg.body = body.view();
  return encode_op_msg(msg).value();
}

bytes encoded(const builder& body) {
  op_msg msg;
  msg.body = body.view();
  return encode_op_msg(msg).value();
}

// What batch_check has checked after seeing `m` arrive `piece` bytes at a time; each step checks
// that the range only grows, from a fixed start.
checked_batch check_in_pieces(const bytes& m, std::size_t piece) {
  batch_check check;
  checked_batch before;
  for (std::size_t got = std::min(piece, m.size());; got = std::min(got + piece, m.size())) {
    check.advance({m.data(), got});
    const checked_batch now = check.checked();
    EXPECT_LE(now.end, got);
    if (before.end > before.begin) {
      EXPECT_EQ(now.begin, before.begin);
      EXPECT_GE(now.end, before.end);
    }
    before = now;
    if (got == m.size()) break;
  }
  return before;
}

// Offsets in `m` of the batch's first element and of its terminating NUL.
std::pair<std::size_t, std::size_t> batch_span(const bytes& m, std::string_view key = "nextBatch") {
  const auto msg = decode_op_msg(m).value();
  const auto batch = msg.body.find("cursor")->get_document()->find(key)->get_array().value();
  const auto at = static_cast<std::size_t>(batch.data() - m.data());
  return {at + 4, at + batch.size() - 1};
}

// Decoding with what batch_check checked gives what decoding without it gives.
void expect_same_decoding(const bytes& m, std::size_t piece) {
  const checked_batch c = check_in_pieces(m, piece);
  const auto plain = decode_op_msg(m);
  const auto checked = oid::mongo::detail::decode_op_msg(m, {}, c);
  ASSERT_EQ(plain.has_value(), checked.has_value()) << "pieces of " << piece;
  if (plain) {
    EXPECT_EQ(plain->body, checked->body);
  } else {
    EXPECT_EQ(plain.error().code, checked.error().code) << "pieces of " << piece;
    EXPECT_EQ(plain.error().offset, checked.error().offset) << "pieces of " << piece;
  }
}

TEST(MongoBatchCheckTest, ChecksEveryDocumentThatHasArrivedWhole) {
  for (const std::string_view key : {"nextBatch", "firstBatch"}) {
    const bytes m = cursor_reply(40, key);
    const auto [first, term] = batch_span(m, key);
    for (const std::size_t piece : {1u, 3u, 64u, 1000u, 100000u}) {
      const checked_batch c = check_in_pieces(m, piece);
      EXPECT_EQ(c.begin, first) << key << ", pieces of " << piece;
      EXPECT_EQ(c.end, term) << key << ", pieces of " << piece;
      expect_same_decoding(m, piece);
    }
  }
}

TEST(MongoBatchCheckTest, StopsAtTheFirstDocumentNotYetWhole) {
  const bytes m = cursor_reply(40);
  const auto [first, term] = batch_span(m);
  const op_msg msg = decode_op_msg(m).value();
  const auto batch =
      msg.body.find("cursor")->get_document()->find("nextBatch")->get_array().value();
  for (const std::size_t got : {first + 1, (first + term) / 2, term - 1}) {
    batch_check check;
    check.advance({m.data(), got});
    const checked_batch c = check.checked();
    EXPECT_EQ(c.begin, first);
    // The end is where an element starts, and the element there has not arrived whole.
    bool at_element = c.end == first;
    for (const auto& e : batch) {
      const auto start = static_cast<std::size_t>(e.raw().data() - m.data());
      if (start == c.end) {
        at_element = true;
        EXPECT_GT(start + e.raw().size(), got);
      }
      if (start < c.end) {
        EXPECT_LE(start + e.raw().size(), c.end);
      }
    }
    EXPECT_TRUE(at_element) << "after " << got << " bytes: " << c.end;
  }
}

// Every single-byte corruption of a reply, arriving in pieces of several sizes: the same result,
// and any error at the same offset, as decoding without the check. Some of them fail after some
// documents were checked, which is what the check must not hide or move.
TEST(MongoBatchCheckTest, AnyCorruptionIsReportedAsWithoutTheCheck) {
  const bytes good = cursor_reply(4);
  std::size_t failed_after_checking = 0;
  for (std::size_t at = 0; at < good.size(); ++at) {
    for (const std::uint8_t v : {0x00, 0x01, 0x05, 0x7F, 0x80, 0xC3, 0xFF}) {
      bytes m = good;
      if (m[at] == v) continue;
      m[at] = v;
      SCOPED_TRACE("byte " + std::to_string(at) + " = " + std::to_string(v));
      for (const std::size_t piece : {1u, 7u, 100u, 100000u}) expect_same_decoding(m, piece);
      const checked_batch c = check_in_pieces(m, 7);
      if (c.end > c.begin && !decode_op_msg(m)) ++failed_after_checking;
    }
  }
  EXPECT_GT(failed_after_checking, 100u);
}

// Decoding trusts the range it is given: a corruption inside it, made after the check, is not
// seen. (So the range must come from batch_check over the same bytes, as the connection does.)
TEST(MongoBatchCheckTest, DecodingTakesTheCheckedDocumentsAsChecked) {
  bytes m = cursor_reply(3);
  const checked_batch c = check_in_pieces(m, m.size());
  ASSERT_GT(c.end, c.begin);
  const bytes zoe{'Z', 'o', 0xC3, 0xAB};
  const auto it = std::search(m.begin() + static_cast<std::ptrdiff_t>(c.begin), m.end(),
                              zoe.begin(), zoe.end());
  ASSERT_NE(it, m.end());
  it[2] = 0xFF;  // no longer UTF-8
  EXPECT_FALSE(decode_op_msg(m).has_value());
  EXPECT_TRUE(oid::mongo::detail::decode_op_msg(m, {}, c).has_value());
}

TEST(MongoBatchCheckTest, OtherShapesAreLeftToDecoding) {
  const auto nothing_checked = [](const bytes& m) {
    const checked_batch c = check_in_pieces(m, 5);
    EXPECT_EQ(c.begin, c.end);
    expect_same_decoding(m, 5);
  };
  {  // the cursor is not the body's first element
    builder b;
    b.append_double("ok", 1).open_document("cursor").open_array("firstBatch");
    append_tweet(b, 0);
    b.close().close();
    nothing_checked(encoded(b));
  }
  {  // the batch is not the cursor's first element
    builder b;
    b.open_document("cursor").append_int64("id", 0).open_array("firstBatch");
    append_tweet(b, 0);
    b.close().close();
    nothing_checked(encoded(b));
  }
  {  // another array first
    builder b;
    b.open_document("cursor").open_array("documents");
    append_tweet(b, 0);
    b.close().close();
    nothing_checked(encoded(b));
  }
  {  // a batch of numbers
    builder b;
    b.open_document("cursor").open_array("nextBatch").append_int32("0", 1).close().close();
    nothing_checked(encoded(b));
  }
  {  // a document sequence before the body
    builder b;
    b.open_document("cursor").open_array("nextBatch");
    append_tweet(b, 0);
    b.close().close();
    const bytes reply = cursor_reply(1);
    op_msg msg;
    msg.body = b.view();
    const op_msg decoded = decode_op_msg(reply).value();
    msg.sequences = {{"documents", {decoded.body}}};
    msg.body_position = 1;
    nothing_checked(encode_op_msg(msg).value());
  }
}

// Nesting: a batch document is three levels below the body, so the depth limit (100) applies to
// it as it does inside the whole reply.
TEST(MongoBatchCheckTest, DepthCountsFromTheBody) {
  for (const int levels : {96, 97, 98}) {
    builder b;
    b.open_document("cursor").open_array("nextBatch").open_document("0");
    for (int i = 0; i < levels; ++i) b.open_document("d");
    for (int i = 0; i < levels; ++i) b.close();
    b.close().close().close();
    const bytes m = encoded(b);
    SCOPED_TRACE(std::to_string(levels) + " levels");
    EXPECT_EQ(decode_op_msg(m).has_value(), levels <= 97);
    for (const std::size_t piece : {1u, 50u, 100000u}) expect_same_decoding(m, piece);
  }
}

}  // namespace
