// bson::stream_reader: concatenated documents in order, across buffer refills and larger than the
// first buffer; each framing error (what, where, and that the reader stops) and a bad document
// with a sane length (skipped); the validation options; a failing stream; moving a reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/bson/stream_reader.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::stream_reader;
using oid::bson::validate_options;
using oid::testing::HasErrorAt;
using oid::testing::HasValue;

std::string bytes_of(const document& d) {
  return {reinterpret_cast<const char*>(d.bytes().data()), d.bytes().size()};
}

document doc(int n, std::size_t pad = 0) {
  builder b;
  b.append_int32("n", n).append_string("pad", std::string(pad, 'x'));
  return std::move(b).extract();
}

// A document with a sane length whose only element has type byte 0x20, which BSON lacks.
const std::string bad_type("\x0c\x00\x00\x00\x20x\x00\x01\x00\x00\x00\x00", 12);

TEST(BsonStreamReaderTest, ReadsEveryDocumentInOrder) {
  std::string stream;
  std::vector<std::uint64_t> offsets;
  for (int i = 0; i < 3; ++i) {
    offsets.push_back(stream.size());
    stream += bytes_of(doc(i));
  }
  std::istringstream in(stream);
  stream_reader reader(in);
  EXPECT_TRUE(reader.current().empty());
  for (int i = 0; i < 3; ++i) {
    ASSERT_THAT(reader.next(), HasValue(true));
    const auto d = doc(i);
    EXPECT_EQ(reader.current(), d.view());
    EXPECT_EQ(reader.index(), static_cast<std::size_t>(i));
    EXPECT_EQ(reader.document_offset(), offsets[static_cast<std::size_t>(i)]);
    EXPECT_EQ(reader.length_prefix(), std::optional<std::int32_t>(d.size()));
    EXPECT_EQ(reader.bytes_read(), offsets[static_cast<std::size_t>(i)] + d.size());
  }
  EXPECT_THAT(reader.next(), HasValue(false));
  EXPECT_THAT(reader.next(), HasValue(false));
  EXPECT_TRUE(reader.can_continue());
  EXPECT_EQ(reader.bytes_read(), stream.size());

  std::istringstream empty;
  EXPECT_THAT(stream_reader(empty).next(), HasValue(false));
}

TEST(BsonStreamReaderTest, DocumentsAcrossAndBeyondTheBuffer) {
  // Documents of many sizes straddle every 1 MiB block boundary; two are larger than a block.
  std::string stream;
  std::vector<document> want;
  for (int i = 0; i < 400; ++i) {
    want.push_back(doc(i, static_cast<std::size_t>(i) * 37 % 20011));
    if (i == 100 || i == 300) want.back() = doc(i, 3 << 20);
    stream += bytes_of(want.back());
  }
  std::istringstream in(stream);
  stream_reader reader(in);
  for (const auto& d : want) {
    ASSERT_THAT(reader.next(), HasValue(true));
    ASSERT_EQ(reader.current(), d.view());
  }
  EXPECT_THAT(reader.next(), HasValue(false));
}

TEST(BsonStreamReaderTest, FramingErrorsStopTheReader) {
  const std::string one = bytes_of(doc(1));
  const std::string two = bytes_of(doc(2));
  const auto n1 = one.size();
  validate_options small;
  small.max_size = 20;
  struct framing_case {
    const char* name;
    std::string stream;
    validate_options options;
    errc code;
    std::uint64_t offset;  // absolute, of the problem
    std::optional<std::int32_t> prefix;
  };
  const framing_case cases[] = {
      {"input ends inside the prefix", one + two.substr(0, 3), {}, errc::truncated, n1 + 3, {}},
      {"impossible prefix 4",
       one + std::string("\x04\0\0\0\0", 5),
       {},
       errc::bad_length_prefix,
       n1,
       4},
      {"negative prefix",
       one + std::string("\xff\xff\xff\xff", 4) + two,
       {},
       errc::bad_length_prefix,
       n1,
       -1},
      {"above the limit", bytes_of(doc(1, 20)), small, errc::too_large, 0,
       static_cast<std::int32_t>(doc(1, 20).size())},
      {"truncated document",
       one + two.substr(0, 10),
       {},
       errc::truncated,
       n1 + 10,
       static_cast<std::int32_t>(two.size())},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::istringstream in(c.stream);
    stream_reader reader(in, c.options);
    if (c.offset > 0) {
      ASSERT_THAT(reader.next(), HasValue(true));
    }
    EXPECT_THAT(reader.next(), HasErrorAt(c.code, c.offset));
    EXPECT_FALSE(reader.can_continue());
    EXPECT_EQ(reader.index(), c.offset > 0 ? 1u : 0u);
    EXPECT_EQ(reader.document_offset(), c.offset > 0 ? n1 : 0u);
    EXPECT_EQ(reader.length_prefix(), c.prefix);
    EXPECT_EQ(reader.bytes_read(), reader.document_offset());
    EXPECT_TRUE(reader.current().empty());
    EXPECT_THAT(reader.next(), HasValue(false));  // the reader has ended
  }
}

TEST(BsonStreamReaderTest, ABadDocumentWithASaneLengthIsSkipped) {
  const std::string one = bytes_of(doc(1));
  const std::string three = bytes_of(doc(3));
  std::istringstream in(one + bad_type + three);
  stream_reader reader(in);
  ASSERT_THAT(reader.next(), HasValue(true));
  EXPECT_THAT(reader.next(), HasErrorAt(errc::unknown_type, one.size() + 4));
  EXPECT_TRUE(reader.can_continue());
  EXPECT_EQ(reader.index(), 1u);
  EXPECT_EQ(reader.document_offset(), one.size());
  EXPECT_EQ(reader.bytes_read(), one.size() + bad_type.size());
  EXPECT_TRUE(reader.current().empty());
  ASSERT_THAT(reader.next(), HasValue(true));
  EXPECT_EQ(document(reader.current()), doc(3));
  EXPECT_THAT(reader.next(), HasValue(false));
}

TEST(BsonStreamReaderTest, ValidationOptions) {
  builder b;
  b.append_string("s", "\xff");  // not UTF-8
  b.open_document("a").open_document("b").close().close();
  const std::string d = bytes_of(std::move(b).extract());
  {
    std::istringstream in(d);
    EXPECT_THAT(stream_reader(in).next(), HasErrorAt(errc::invalid_utf8, 11));
  }
  validate_options lax;
  lax.check_utf8 = false;
  {
    std::istringstream in(d);
    EXPECT_THAT(stream_reader(in, lax).next(), HasValue(true));
  }
  lax.max_depth = 1;
  {
    std::istringstream in(d);
    stream_reader reader(in, lax);
    EXPECT_THAT(reader.next(), HasErrorAt(errc::too_deep, 23));
    EXPECT_TRUE(reader.can_continue());
  }
  lax.max_depth = 100;
  lax.max_size = d.size();  // a document exactly at the limit is accepted
  {
    std::istringstream in(d);
    EXPECT_THAT(stream_reader(in, lax).next(), HasValue(true));
  }
}

// A stream buffer that gives `good` bytes to reads it can fill, and fails a read it cannot (a
// short read would be the end of the input).
class failing_buf : public std::streambuf {
 public:
  explicit failing_buf(std::string good) : good_(std::move(good)) {}

 protected:
  std::streamsize xsgetn(char* out, std::streamsize n) override {
    if (static_cast<std::size_t>(n) > good_.size() - at_) throw std::runtime_error("disk on fire");
    std::copy_n(good_.data() + at_, n, out);
    at_ += static_cast<std::size_t>(n);
    return n;
  }
  int_type underflow() override { throw std::runtime_error("disk on fire"); }

 private:
  std::string good_;
  std::size_t at_ = 0;
};

TEST(BsonStreamReaderTest, AFailingStreamIsAnIoError) {
  // With a 64-byte limit the reader reads 68 bytes at a time: three whole documents and two
  // bytes of the fourth, whose next read fails.
  const std::string one = bytes_of(doc(1));
  ASSERT_EQ(one.size(), 22u);
  failing_buf buf(one + one + one + one);
  std::istream in(&buf);
  validate_options small;
  small.max_size = 64;
  stream_reader reader(in, small);
  for (int i = 0; i < 3; ++i) ASSERT_THAT(reader.next(), HasValue(true));
  EXPECT_THAT(reader.next(), HasErrorAt(errc::io_error, 68));
  EXPECT_FALSE(reader.can_continue());
  EXPECT_EQ(reader.document_offset(), 66u);
}

TEST(BsonStreamReaderTest, AMovedReaderGoesOn) {
  std::istringstream in(bytes_of(doc(1)) + bytes_of(doc(2)));
  stream_reader first(in);
  ASSERT_THAT(first.next(), HasValue(true));
  stream_reader second(std::move(first));
  EXPECT_EQ(document(second.current()), doc(1));
  ASSERT_THAT(second.next(), HasValue(true));
  EXPECT_EQ(document(second.current()), doc(2));
  EXPECT_THAT(second.next(), HasValue(false));
}

}  // namespace
