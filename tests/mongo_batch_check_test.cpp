// detail::batch_check: a cursor reply's documents validated piece by piece while the reply arrives,
// and decode_op_msg skipping them. The property that matters: the result, and any error with its
// offset, is exactly what decoding the whole reply without the check gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>
#include <oid/detail/endian.hpp>
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

// Where one element of a batch is in its message: its type byte, its document, and past its end.
struct element_at {
  std::size_t start = 0, doc = 0, end = 0;
};

// The elements of the batch `key` of `m` (which must decode) and the batch's terminating NUL.
std::pair<std::vector<element_at>, std::size_t> batch_elements(const bytes& m,
                                                               std::string_view key = "nextBatch") {
  const auto msg = decode_op_msg(m).value();
  const auto batch = msg.body.find("cursor")->get_document()->find(key)->get_array().value();
  std::vector<element_at> out;
  for (const auto& e : batch) {
    const auto start = static_cast<std::size_t>(e.raw().data() - m.data());
    const auto doc = static_cast<std::size_t>(e.get_document().value().data() - m.data());
    out.push_back({start, doc, start + e.raw().size()});
  }
  return {out, static_cast<std::size_t>(batch.data() - m.data()) + batch.size() - 1};
}

// The document {d: {d: ... {}}}, `levels` deep.
oid::bson::document nested(int levels) {
  builder b;
  for (int level = 0; level < levels; ++level) b.open_document("d");
  for (int level = 0; level < levels; ++level) b.close();
  return std::move(b).extract();
}

// A batch of `n` tweets, but for document `deep`, nested 98 levels deep: one more than the
// validator allows at three levels below the body. `twin`: that document is instead a string of
// the same size (a valid message with the same elements at the same offsets).
bytes batch_reply(int n, int deep, bool twin = false) {
  const oid::bson::document too_deep = nested(98);
  builder body;
  body.open_document("cursor").open_array("nextBatch");
  for (int i = 0; i < n; ++i) {
    if (i != deep) {
      append_tweet(body, i);
    } else if (twin) {
      // {d: "..."}: length, type, "d", the string's length and NUL, the terminator: 13 bytes.
      body.open_document(std::to_string(i))
          .append_string("d", std::string(too_deep.view().size() - 13, 'x'))
          .close();
    } else {
      body.append_document(std::to_string(i), too_deep.view());
    }
  }
  body.close().append_int64("id", 0).append_string("ns", "db.c").close().append_double("ok", 1);
  op_msg msg;
  msg.response_to = 1;
  msg.body = body.view();
  return encode_op_msg(msg).value();
}

// What can be wrong with one document of a batch: inside it, where only validating the document
// finds it, or in its element's header, where batch_check's walk over the elements stops.
enum class fault { utf8, string_length, boolean, short_length, long_length, type_byte, key_utf8 };
constexpr std::string_view fault_names[] = {
    "a string not UTF-8",  "a string's length too large", "a boolean of 2", "its length one short",
    "its length one long", "an int32 type byte",          "a key not UTF-8"};
constexpr bool in_header(fault f) { return f == fault::type_byte || f == fault::key_utf8; }

// Makes `e` (a tweet) wrong in `m` as `f` says.
void corrupt(bytes& m, const element_at& e, fault f) {
  const auto find = [&](std::string_view text) {
    const bytes needle(text.begin(), text.end());  // compared as bytes, not as (signed) chars
    const auto it =
        std::search(m.begin() + static_cast<std::ptrdiff_t>(e.doc),
                    m.begin() + static_cast<std::ptrdiff_t>(e.end), needle.begin(), needle.end());
    EXPECT_NE(it, m.begin() + static_cast<std::ptrdiff_t>(e.end)) << text;
    return static_cast<std::size_t>(it - m.begin());
  };
  const auto doc_size = static_cast<std::uint32_t>(e.end - e.doc);
  switch (f) {
  case fault::utf8: m[find("Zo\xC3\xAB") + 2] = 0xFF; break;
  case fault::string_length:  // runs far past the document
    oid::detail::store_le_u32(m.data() + find(std::string_view("text\0", 5)) + 5, 0x7FFFFFF0u);
    break;
  case fault::boolean: m[find(std::string_view("seen\0", 5)) + 5] = 2; break;
  case fault::short_length: oid::detail::store_le_u32(m.data() + e.doc, doc_size - 1); break;
  case fault::long_length: oid::detail::store_le_u32(m.data() + e.doc, doc_size + 1); break;
  case fault::type_byte: m[e.start] = static_cast<std::uint8_t>(oid::bson::type::int32); break;
  case fault::key_utf8: m[e.start + 1] = 0xFF; break;
  }
}

// The documents batch_check must have checked after `got` bytes of a batch whose first invalid
// element is `bad`: those before it that have arrived whole.
std::size_t expected_checked(const std::vector<element_at>& els, std::size_t bad, std::size_t got) {
  std::size_t j = 0;
  while (j < els.size() && j < bad && els[j].end <= got) ++j;
  return j;
}

// batch_check has checked the first `j` elements of `els` (the batch ending at `term`), and its
// index lists their documents.
void expect_checked(const batch_check& check, const std::vector<element_at>& els, std::size_t term,
                    std::size_t j) {
  const checked_batch c = check.checked();
  if (c.begin == 0) {  // the batch not found yet: its first bytes had not all arrived
    EXPECT_EQ(j, 0u);
    EXPECT_TRUE(check.index().empty());
    return;
  }
  EXPECT_EQ(c.begin, els.empty() ? term : els.front().start);
  EXPECT_EQ(c.end, j < els.size() ? els[j].start : term);
  EXPECT_EQ(check.complete(), j == els.size());
  ASSERT_EQ(check.index().size(), j);
  for (std::size_t i = 0; i < j; ++i) {
    EXPECT_EQ(check.index()[i].offset, els[i].doc) << "document " << i;
    EXPECT_EQ(check.index()[i].size, els[i].end - els[i].doc) << "document " << i;
  }
}

// The error decode_op_msg reports with what `check` checked is the one it reports alone.
void expect_same_error(const bytes& m, const batch_check& check) {
  const auto plain = decode_op_msg(m);
  const auto checked = oid::mongo::detail::decode_op_msg(m, {}, check.checked());
  ASSERT_FALSE(plain.has_value());
  ASSERT_FALSE(checked.has_value());
  EXPECT_EQ(checked.error().code, plain.error().code);
  EXPECT_EQ(checked.error().offset, plain.error().offset);
}

// An invalid document at the start, in the middle or at the end of a batch, alone or after a
// document whose element header is also wrong: however the reply is cut into pieces, the checked
// range stops at the first invalid element (the documents before it arrived whole), the index
// lists the documents before it, and decoding reports the error the whole reply gives without
// the check. The documents of one piece are validated together (validate_many), so the first
// invalid one must be found among them, not merely some invalid one.
TEST(MongoBatchCheckTest, AnInvalidDocumentStopsTheCheckWhereverThePiecesEnd) {
  constexpr int n = 9;
  struct test_case {
    std::string name;
    bytes m;
    std::size_t bad;      // the first invalid element
    bool invalid_itself;  // its document is invalid (not only its element's header)
    bytes layout;         // a valid message with the same elements at the same offsets
  };
  std::vector<test_case> cases;
  const bytes good = cursor_reply(n);
  const auto good_els = batch_elements(good).first;
  for (const fault f : {fault::utf8, fault::string_length, fault::boolean, fault::short_length,
                        fault::long_length, fault::type_byte, fault::key_utf8}) {
    for (const std::size_t bad : {0u, 1u, 4u, 8u}) {
      bytes m = good;
      corrupt(m, good_els[bad], f);
      const std::string name =
          std::string(fault_names[static_cast<int>(f)]) + " in document " + std::to_string(bad);
      cases.push_back({name, m, bad, !in_header(f), good});
      if (bad + 2 < n) {  // and a header fault further on, in the same piece
        corrupt(m, good_els[bad + 2], fault::type_byte);
        cases.push_back({name + ", a bad type byte two later", m, bad, !in_header(f), good});
      }
    }
  }
  for (const std::size_t deep : {0u, 4u, 8u}) {
    const bytes m = batch_reply(n, static_cast<int>(deep));
    cases.push_back({"too deep in document " + std::to_string(deep), m, deep, true,
                     batch_reply(n, static_cast<int>(deep), true)});
  }
  auto options = oid::mongo::detail::section_options({});
  options.max_depth -= 3;  // a batch document is three levels below the body
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const bytes& m = c.m;
    const auto [els, term] = batch_elements(c.layout);
    ASSERT_EQ(els.size(), static_cast<std::size_t>(n));
    // Validating each document alone: the first one rejected is the one made wrong.
    for (std::size_t i = 0; i < c.bad; ++i) {
      EXPECT_TRUE(
          oid::bson::validate_prefix({m.data() + els[i].doc, els[i].end - els[i].doc}, options))
          << "document " << i;
    }
    if (c.invalid_itself) {
      EXPECT_FALSE(oid::bson::validate_prefix(
          {m.data() + els[c.bad].doc, els[c.bad].end - els[c.bad].doc}, options));
    }
    // The error the whole reply gives is about that document (a wrong header may make the
    // validator see the batch array itself as wrong).
    const auto plain = decode_op_msg(m);
    ASSERT_FALSE(plain.has_value());
    if (c.invalid_itself) {
      EXPECT_GE(plain.error().offset, els[c.bad].doc);
      EXPECT_LE(plain.error().offset, els[c.bad].end);
    }
    // Stops at the first cut that fails, rather than repeat its failures for every cut.
    const auto failures = [] {
      return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
    };
    const int before = failures();

    // Every cut into two pieces.
    for (std::size_t cut = 1; cut < m.size(); ++cut) {
      batch_check check;
      check.advance({m.data(), cut});
      expect_checked(check, els, term, expected_checked(els, c.bad, cut));
      check.advance({m.data(), m.size()});
      expect_checked(check, els, term, c.bad);
      expect_same_error(m, check);
      if (failures() > before) {
        ADD_FAILURE() << "cut at " << cut;
        break;
      }
    }
    // Pieces of a few sizes, then the whole message (as the connection does: its last call).
    for (const std::size_t piece : {1u, 7u, 64u, 300u}) {
      batch_check check;
      for (std::size_t got = piece; got < m.size(); got += piece) {
        check.advance({m.data(), got});
        expect_checked(check, els, term, expected_checked(els, c.bad, got));
      }
      check.advance({m.data(), m.size()});
      expect_checked(check, els, term, c.bad);
      expect_same_error(m, check);
      if (failures() > before) {
        ADD_FAILURE() << "pieces of " << piece;
        break;
      }
    }
  }
}

// Feeds the valid reply `m` to `check` `piece` bytes at a time: after each piece every document
// that has arrived whole is checked, and at the end every one.
void expect_all_checked(batch_check& check, const bytes& m, const std::vector<element_at>& els,
                        std::size_t term, std::size_t piece) {
  for (std::size_t got = piece; got < m.size(); got += piece) {
    check.advance({m.data(), got});
    expect_checked(check, els, term, expected_checked(els, els.size(), got));
  }
  check.advance({m.data(), m.size()});
  expect_checked(check, els, term, els.size());
}

// A whole batch, in pieces or in one: the index lists every document, in order, and says where
// the batch array is; decoding skips the whole batch and gives the same reply.
TEST(MongoBatchCheckTest, TheIndexListsEveryDocumentOfAWholeBatch) {
  for (const std::string_view key : {"nextBatch", "firstBatch"}) {
    for (const int n : {0, 1, 3, 4, 5, 200}) {
      const bytes m = cursor_reply(n, key);
      const auto [els, term] = batch_elements(m, key);
      for (const std::size_t piece :
           {std::size_t{1}, std::size_t{13}, std::size_t{512}, m.size()}) {
        SCOPED_TRACE(std::string(key) + ", " + std::to_string(n) + " documents, pieces of " +
                     std::to_string(piece));
        batch_check check;
        expect_all_checked(check, m, els, term, piece);
        EXPECT_TRUE(check.complete());
        const auto [first, batch_term] = batch_span(m, key);
        EXPECT_EQ(check.array_offset(), first - 4);
        EXPECT_EQ(batch_term, term);
        const auto plain = decode_op_msg(m);
        const auto checked = oid::mongo::detail::decode_op_msg(m, {}, check.checked());
        ASSERT_TRUE(checked.has_value());
        EXPECT_EQ(checked->body, plain->body);
      }
    }
  }
}

// A batch's keys are read byte by byte while they are short and ASCII (the indexes a server
// sends); any other key takes the general way, with the same result.
TEST(MongoBatchCheckTest, KeysOtherThanIndexesAreCheckedTheSame) {
  const std::vector<std::string> keys = {
      "", "7", "1234567", "12345678", "123456789", "a key of twenty bytes", "é", "1é", "1234567é"};
  builder body;
  body.open_document("cursor").open_array("nextBatch");
  for (const auto& k : keys) {
    body.open_document(k).append_int32("n", 1).append_string("s", "Zoë").close();
  }
  body.close().append_int64("id", 0).append_string("ns", "db.c").close().append_double("ok", 1);
  const bytes m = encoded(body);
  const auto [els, term] = batch_elements(m);
  ASSERT_EQ(els.size(), keys.size());
  for (const std::size_t piece : {std::size_t{1}, std::size_t{5}, std::size_t{64}, m.size()}) {
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    batch_check check;
    expect_all_checked(check, m, els, term, piece);
  }
  // A byte that is not UTF-8 at each place of a long key, and in a short one after ASCII bytes:
  // the check stops where decoding alone reports it.
  for (const std::size_t e : std::vector<std::size_t>{1, 2, 3, 4, 5, 7, 8}) {
    for (std::size_t at = 0; at < keys[e].size(); ++at) {
      bytes bad = m;
      bad[els[e].start + 1 + at] = 0xFF;
      for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, bad.size()}) {
        SCOPED_TRACE("key " + std::to_string(e) + ", byte " + std::to_string(at));
        expect_same_decoding(bad, piece);
      }
    }
  }
}

// The storage given for the index keeps its capacity and loses its contents. A batch of up to
// 16 documents is indexed on the stack only, and the storage given away then is empty.
TEST(MongoBatchCheckTest, TheIndexReusesTheStorageItIsGiven) {
  for (const int n : {17, 40}) {
    oid::mongo::detail::doc_index storage;
    for (std::uint32_t i = 0; i < 100; ++i) storage.push_back({i, 2});
    const auto* const data = storage.docs().data();
    const bytes m = cursor_reply(n);
    batch_check check({}, std::move(storage));
    check.advance({m.data(), m.size()});
    ASSERT_EQ(check.index().size(), static_cast<std::size_t>(n));
    EXPECT_EQ(check.index().data(), data);
    EXPECT_NE(check.index()[0].offset, 0u);
    EXPECT_TRUE(check.indexed());
    const auto taken = check.take_index();
    EXPECT_EQ(taken.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(taken.docs().data(), data);
  }
  for (const int n : {0, 1, 16}) {
    const bytes m = cursor_reply(n);
    batch_check check;
    check.advance({m.data(), m.size()});
    EXPECT_TRUE(check.complete());
    EXPECT_EQ(check.index().size(), static_cast<std::size_t>(n));
    EXPECT_EQ(check.indexed(), n == 0);  // an empty batch's index is the empty one
    EXPECT_EQ(check.take_index().size(), 0u);
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

// A body larger than the limit on a section's document: nothing is checked or indexed (decoding
// refuses the message), and the error is decoding's.
TEST(MongoBatchCheckTest, ABodyAboveTheDocumentLimitIsLeftToDecoding) {
  const bytes m = cursor_reply(40);
  oid::mongo::op_msg_limits limits;
  limits.max_document_size = m.size() / 2;
  for (const std::size_t piece : {7u, 100000u}) {
    batch_check check(limits);
    for (std::size_t got = std::min(piece, m.size());; got = std::min(got + piece, m.size())) {
      check.advance({m.data(), got});
      if (got == m.size()) break;
    }
    EXPECT_EQ(check.checked().begin, check.checked().end);
    EXPECT_TRUE(check.index().empty());
    EXPECT_FALSE(check.complete());
    const auto plain = decode_op_msg(m, limits);
    const auto checked = oid::mongo::detail::decode_op_msg(m, limits, check.checked());
    ASSERT_FALSE(plain.has_value());
    ASSERT_FALSE(checked.has_value());
    EXPECT_EQ(checked.error().code, plain.error().code);
    EXPECT_EQ(checked.error().offset, plain.error().offset);
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
