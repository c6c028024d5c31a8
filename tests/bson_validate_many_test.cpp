// validate_many (bson/detail/validate.hpp): many documents validated by interleaved walks must give
// exactly the answer of validate_prefix on each in turn: the index of the first one rejected.
#include <gtest/gtest.h>

#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>
#include <oid/objectid/object_id.hpp>
#include <string>
#include <vector>

#include "bson/detail/validate.hpp"
#include "support/bson_bytes.hpp"

namespace {

using oid::bson::builder;
using oid::bson::validate_options;
using oid::bson::detail::doc_span;
using oid::bson::detail::validate_many;
using oid::testing::bytes_of;
using bytes = std::vector<std::uint8_t>;

// Keys and texts of every length around the walker's 32-byte windows, ASCII and not, nesting,
// and every type the walker checks itself (code with scope and the old binary subtype leave the
// document to validate_prefix: rare_doc).
bytes rich_doc() {
  builder scope;
  scope.append_int32("x", 1);
  builder b;
  const std::uint8_t bin[] = {1, 2, 3, 4, 5};
  b.append_string("short", "abc").append_string("empty", "");
  b.append_string(std::string(30, 'k'), std::string(31, 't'));
  b.append_string(std::string(31, 'k'), std::string(32, 't'));
  b.append_string(std::string(40, 'k'), std::string(33, 't'));
  b.append_string("caf\xC3\xA9", "na\xC3\xAFve and a long text past thirty-two bytes \xE2\x82\xAC");
  b.append_int32("i", -1).append_bool("yes", true).append_null("nothing");
  b.append_double("d", 0.5).append_int64("l", 1LL << 40);
  b.append_object_id("_id", oid::object_id::max_for_timestamp(7));
  b.open_document("user").append_string("name", "somebody").open_array("tags");
  b.append_string("0", "x").open_document("1").append_int32("deep", 2).close().close().close();
  b.append_binary("bin", 0x00, bin);
  b.append_decimal128("dec", {1, 0x3040000000000000}).append_timestamp("ts", {4, 5});
  b.append_regex("re", "a.*b", "i").append_db_pointer("p", "db.c", oid::object_id{});
  b.append_symbol("sym", "s").append_javascript("js", "1");
  b.append_min_key("min").append_max_key("max");
  return bytes_of(b.view());
}

bytes rare_doc() {
  builder scope;
  scope.append_int32("x", 1);
  const std::uint8_t bin[] = {1, 2, 3, 4, 5};
  builder b;
  b.append_int32("a", 1).append_javascript_with_scope("cws", "x", scope.view());
  b.append_binary("old", 0x02, bin);
  return bytes_of(b.view());
}

// What validate_prefix says of the documents one by one: the index of the first it rejects.
std::size_t one_by_one(const bytes& buffer, const std::vector<doc_span>& docs,
                       const validate_options& o) {
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto d = docs[i];
    if (d.offset > buffer.size() || d.size > buffer.size() - d.offset) return i;
    const auto v = oid::bson::validate_prefix(std::span(buffer).subspan(d.offset, d.size), o);
    if (!v || v->size() != d.size) return i;
  }
  return docs.size();
}

// `count` copies of `good` with `odd` at position `at`, then `padding` bytes.
struct batch {
  bytes buffer;
  std::vector<doc_span> docs;
};
batch make_batch(const bytes& good, const bytes& odd, std::size_t count, std::size_t at,
                 std::size_t padding) {
  batch b;
  for (std::size_t i = 0; i < count; ++i) {
    const bytes& d = i == at ? odd : good;
    b.docs.push_back(
        {static_cast<std::uint32_t>(b.buffer.size()), static_cast<std::uint32_t>(d.size())});
    b.buffer.insert(b.buffer.end(), d.begin(), d.end());
  }
  b.buffer.resize(b.buffer.size() + padding, 0xEE);
  return b;
}

std::vector<validate_options> option_sets() {
  validate_options lax;
  lax.check_utf8 = false;
  validate_options shallow;
  shallow.max_depth = 2;
  validate_options small;
  small.max_size = 200;
  return {validate_options{}, lax, shallow, small};
}

TEST(BsonValidateManyTest, AcceptsValidDocumentsWhereverTheyLie) {
  const bytes good = rich_doc();
  for (const std::size_t padding : {0, 1, 40, 200}) {
    for (const std::size_t count : {0, 1, 3, 4, 5, 9}) {
      const batch b = make_batch(good, good, count, 0, padding);
      EXPECT_EQ(validate_many(b.buffer, b.docs, {}), count) << padding << ' ' << count;
    }
  }
  // Documents the walks leave to validate_prefix, more than it keeps without allocating.
  const batch scoped = make_batch(rare_doc(), rare_doc(), 40, 0, 100);
  EXPECT_EQ(validate_many(scoped.buffer, scoped.docs, {}), 40u);
  bytes broken = rare_doc();
  broken.back() = 1;
  const batch late = make_batch(rare_doc(), broken, 40, 37, 100);
  EXPECT_EQ(validate_many(late.buffer, late.docs, {}), 37u);
}

// Every byte of one document of a batch changed to each of a few values: the first rejected is
// the one validate_prefix rejects, whichever of the four walks it fell to.
TEST(BsonValidateManyTest, AgreesWithValidatePrefixOnEverySingleByteChange) {
  int rejected = 0;
  for (const bytes& good : {rich_doc(), rare_doc()}) {
    for (const auto& o : option_sets()) {
      for (std::size_t i = 0; i < good.size(); ++i) {
        // Fixed values, and the byte one above and one below: lengths off by one.
        const auto up = static_cast<std::uint8_t>(good[i] + 1);
        const auto down = static_cast<std::uint8_t>(good[i] - 1);
        for (const std::uint8_t value : {std::uint8_t{0x00}, std::uint8_t{0x01}, std::uint8_t{0x05},
                                         std::uint8_t{0x20}, std::uint8_t{0x7F}, std::uint8_t{0x80},
                                         std::uint8_t{0xC3}, std::uint8_t{0xFF}, up, down}) {
          bytes odd = good;
          if (odd[i] == value) continue;
          odd[i] = value;
          for (const std::size_t at : {0, 2, 5}) {
            const batch b = make_batch(good, odd, 6, at, 100);
            const std::size_t want = one_by_one(b.buffer, b.docs, o);
            ASSERT_EQ(validate_many(b.buffer, b.docs, o), want)
                << "byte " << i << " = " << int{value} << ", document " << at;
            if (want != b.docs.size()) ++rejected;
          }
        }
      }
    }
  }
  EXPECT_GT(rejected, 1000);
}

// Declared lengths that differ from the span's size, spans outside the buffer, terminators
// missing.
TEST(BsonValidateManyTest, ChecksEachSpanAgainstItsDocument) {
  const bytes good = rich_doc();
  batch b = make_batch(good, good, 5, 0, 100);
  const auto size = static_cast<std::uint32_t>(good.size());
  auto with = [&](std::size_t k, doc_span d) {
    auto docs = b.docs;
    docs[k] = d;
    return docs;
  };
  EXPECT_EQ(validate_many(b.buffer, with(3, {b.docs[3].offset, size - 1}), {}), 3u);
  EXPECT_EQ(validate_many(b.buffer, with(3, {b.docs[3].offset, size + 1}), {}), 3u);
  EXPECT_EQ(validate_many(b.buffer, with(1, {b.docs[1].offset, 4}), {}), 1u);
  EXPECT_EQ(
      validate_many(b.buffer, with(2, {static_cast<std::uint32_t>(b.buffer.size()), size}), {}),
      2u);
  EXPECT_EQ(validate_many(b.buffer, with(4, {b.docs[4].offset + 50, size}), {}), 4u);
  b.buffer[b.docs[2].offset + size - 1] = 1;
  EXPECT_EQ(validate_many(b.buffer, b.docs, {}), 2u);
}

// Texts of every length up to 100 bytes with one non-ASCII byte (a valid two-byte sequence, or a
// lone continuation byte) at every position: the ASCII windows must find each.
TEST(BsonValidateManyTest, FindsEveryNonAsciiByteOfTextsAndKeys) {
  for (std::size_t length = 1; length <= 100; ++length) {
    for (std::size_t at = 0; at + 1 < length; ++at) {
      for (const bool valid : {true, false}) {
        std::string text(length, 'a');
        text[at] = static_cast<char>(valid ? 0xC3 : 0x80);
        text[at + 1] = static_cast<char>(valid ? 0xA9 : 'a');
        builder odd;
        odd.append_int32("n", 1).append_string("t", text).append_string(text, "v");
        builder good;
        good.append_int32("n", 1).append_string("t", std::string(length, 'a'));
        good.append_string(std::string(length, 'a'), "v");
        const batch b = make_batch(bytes_of(good.view()), bytes_of(odd.view()), 5, 1, 100);
        ASSERT_EQ(validate_many(b.buffer, b.docs, {}), valid ? 5u : 1u)
            << length << ' ' << at << ' ' << valid;
      }
    }
  }
}

// The last value of a document (or of an embedded one) whose length runs one to three bytes
// onto the terminator, or stops short of it.
TEST(BsonValidateManyTest, RejectsLastValuesThatRunOntoTheTerminator) {
  for (const bool nested : {false, true}) {
    for (const int kind : {0, 1, 2}) {
      builder b;
      b.append_int32("n", 1);
      if (nested) b.open_document("in");
      if (kind == 0) b.append_string("s", "text");
      if (kind == 1) b.open_document("d").append_int32("x", 1).close();
      if (kind == 2) b.append_binary("b", 0, std::vector<std::uint8_t>{1, 2, 3});
      if (nested) b.close();
      const bytes good = bytes_of(b.view());
      // The last value's length prefix: 4 bytes after the last key "s\0", "d\0" or "b\0".
      const std::size_t value = good.size() - (nested ? 2 : 1) -
                                (kind == 0   ? 4 + 5
                                 : kind == 1 ? 12
                                             : 5 + 3);
      for (const int delta : {-1, 1, 2, 3}) {
        bytes odd = good;
        odd[value] = static_cast<std::uint8_t>(odd[value] + delta);
        const batch many = make_batch(good, odd, 5, 2, 100);
        EXPECT_EQ(validate_many(many.buffer, many.docs, {}), 2u)
            << nested << ' ' << kind << ' ' << delta;
      }
    }
  }
}

TEST(BsonValidateManyTest, FollowsNestingToTheLimit) {
  for (const std::size_t depth : {1, 15, 16, 17, 40, 100, 101}) {
    builder b;
    for (std::size_t i = 0; i < depth; ++i) b.open_document("d");
    b.append_int32("x", 1);
    for (std::size_t i = 0; i < depth; ++i) b.close();
    const bytes doc = bytes_of(b.view());
    const batch many = make_batch(doc, doc, 5, 0, 100);
    EXPECT_EQ(validate_many(many.buffer, many.docs, {}), depth <= 100 ? 5u : 0u) << depth;
  }
}

}  // namespace
