// GridFS against the server MONGODB_URI names (FerretDB under scripts/test.sh): files of every
// size around the chunk boundaries, both ways; revisions by name; delete, rename, find, drop;
// the indexes the first upload makes; and what a download does with a damaged file, made by
// writing the chunks collection directly.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/gridfs.hpp>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

#include "support/documents.hpp"
#include "support/server_test.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;

// `size` bytes that differ from file to file (`seed`) and from chunk to chunk.
std::string bytes_of(std::size_t size, unsigned seed = 1) {
  std::string out(size, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : out) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return out;
}

class MongoGridfsTest : public server_test {
 protected:
  MongoGridfsTest() : server_test("oid_gridfs_") {}
  mongo::gridfs_bucket bucket(std::int32_t chunk_size = 1024) {
    mongo::gridfs_bucket_options o;
    o.chunk_size_bytes = chunk_size;
    return client_->database(db_).gridfs_bucket(o);
  }
  oid::object_id upload(mongo::gridfs_bucket& b, const std::string& name, const std::string& data) {
    std::istringstream in(data);
    auto id = b.upload_from_stream(name, in);
    EXPECT_TRUE(id.has_value()) << id.error().message;
    return id ? *id : oid::object_id();
  }
  std::string download(mongo::gridfs_bucket& b, const oid::object_id& id) {
    std::ostringstream out;
    auto n = b.download_to_stream(id, out);
    EXPECT_TRUE(n.has_value()) << n.error().message;
    if (n) {
      EXPECT_EQ(*n, out.str().size());
    }
    return out.str();
  }
  // `{key: id}`, kept until the test ends.
  oid::bson::document_view id_filter(const char* key, const oid::object_id& id) {
    builder f;
    f.append_object_id(key, id);
    return keep_.emplace_back(std::move(f).extract()).view();
  }
  std::deque<document> keep_;
};

TEST_F(MongoGridfsTest, EverySizeAroundTheChunkBoundariesComesBackTheSame) {
  auto b = bucket(1024);
  for (const std::size_t size : {0, 1, 1023, 1024, 1025, 3 * 1024 + 5, 20'000}) {
    SCOPED_TRACE(size);
    const std::string data = bytes_of(size, static_cast<unsigned>(size));
    const auto id = upload(b, "f" + std::to_string(size), data);
    EXPECT_EQ(download(b, id), data);
    // The files document says what the specification says it must.
    auto file = b.files().find_one(id_filter("_id", id));
    ASSERT_TRUE(file.has_value() && file->has_value());
    const auto v = (*file)->view();
    EXPECT_EQ(v.find("length")->get_int64().value(), static_cast<std::int64_t>(size));
    EXPECT_EQ(v.find("chunkSize")->get_int32().value(), 1024);
    EXPECT_EQ(v.find("filename")->get_string().value(), "f" + std::to_string(size));
    EXPECT_TRUE(v.find("uploadDate")->get_date_time().has_value());
    EXPECT_FALSE(v.contains("md5"));  // not unless asked
    auto chunks = b.chunks().count_documents(id_filter("files_id", id));
    ASSERT_TRUE(chunks.has_value());
    EXPECT_EQ(*chunks, static_cast<std::int64_t>((size + 1023) / 1024));
  }
}

TEST_F(MongoGridfsTest, TheFirstUploadMakesTheIndexes) {
  auto b = bucket();
  upload(b, "a", "x");
  EXPECT_EQ(index_names(b.files()), (std::vector<std::string>{"_id_", "filename_1_uploadDate_1"}));
  EXPECT_EQ(index_names(b.chunks()), (std::vector<std::string>{"_id_", "files_id_1_n_1"}));
  auto specs = b.chunks().list_indexes();
  ASSERT_TRUE(specs.has_value());
  for (const auto& s : *specs) {
    if (s.view().find("name")->get_string().value() == "files_id_1_n_1") {
      EXPECT_TRUE(s.view().find("unique")->get_bool().value());
    }
  }
}

TEST_F(MongoGridfsTest, RevisionsByName) {
  auto b = bucket();
  for (const char* text : {"first", "second", "third"}) upload(b, "notes.txt", text);
  const auto by_name = [&](std::int32_t revision) {
    std::ostringstream out;
    auto n = b.download_to_stream_by_name("notes.txt", out, revision);
    return n ? out.str() : "error " + n.error().message;
  };
  EXPECT_EQ(by_name(0), "first");
  EXPECT_EQ(by_name(1), "second");
  EXPECT_EQ(by_name(2), "third");
  EXPECT_EQ(by_name(-1), "third");
  EXPECT_EQ(by_name(-2), "second");
  EXPECT_EQ(by_name(-3), "first");
  std::ostringstream out;
  auto missing = b.download_to_stream_by_name("notes.txt", out, 3);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, mongo::errc::revision_not_found) << missing.error().message;
  auto none = b.download_to_stream_by_name("other.txt", out);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, mongo::errc::file_not_found) << none.error().message;
}

TEST_F(MongoGridfsTest, DeleteRenameFindAndDrop) {
  auto b = bucket();
  const auto a = upload(b, "a", bytes_of(3000));
  upload(b, "b", "1");
  upload(b, "b", "2");
  ASSERT_TRUE(b.delete_file(a).has_value());
  EXPECT_EQ(*b.chunks().count_documents(id_filter("files_id", a)), 0);
  auto again = b.delete_file(a);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, mongo::errc::file_not_found);

  ASSERT_TRUE(b.rename_by_name("b", "c").has_value());
  const document by_name = json(R"({"filename": "c"})");
  auto cur = b.find(by_name.view());
  ASSERT_TRUE(cur.has_value());
  int seen = 0;
  oid::object_id first;
  while (cur->next().value_or(false)) {
    if (seen++ == 0) first = cur->current().find("_id")->get_object_id().value();
  }
  EXPECT_EQ(seen, 2);
  ASSERT_TRUE(b.rename(*id_filter("_id", first).find("_id"), "d").has_value());
  EXPECT_EQ(download(b, first), "1");
  auto renamed = b.rename_by_name("nothing", "x");
  ASSERT_FALSE(renamed.has_value());
  EXPECT_EQ(renamed.error().code, mongo::errc::file_not_found);

  ASSERT_TRUE(b.delete_by_name("c").has_value());
  EXPECT_EQ(*b.files().count_documents(), 1);  // "d" is left
  EXPECT_EQ(b.delete_by_name("c").error().code, mongo::errc::file_not_found);
  ASSERT_TRUE(b.drop().has_value());
  EXPECT_EQ(*b.files().count_documents(), 0);
  EXPECT_EQ(*b.chunks().count_documents(), 0);
}

TEST_F(MongoGridfsTest, AnyIdMetadataAndMd5WhenAsked) {
  auto b = bucket();
  const document custom = json(R"({"_id": "my-file"})");
  std::istringstream in("hello");
  mongo::gridfs_upload_options o;
  const document meta = json(R"({"owner": "ada"})");
  o.metadata = meta.view();
  o.md5 = true;
  ASSERT_TRUE(b.upload_from_stream_with_id(*custom.view().find("_id"), "h", in, o).has_value());
  std::ostringstream out;
  ASSERT_TRUE(b.download_to_stream(*custom.view().find("_id"), out).has_value());
  EXPECT_EQ(out.str(), "hello");
  auto file = b.files().find_one(custom.view());
  ASSERT_TRUE(file.has_value() && file->has_value());
  EXPECT_EQ((*file)->view().find("md5")->get_string().value(), "5d41402abc4b2a76b9719d911017c592");
  EXPECT_EQ(oid::bson::to_json(*(*file)->view().find("metadata")->get_document()),
            R"({"owner":"ada"})");
  // The same id twice: the files document's unique _id refuses it, and the second upload's chunks
  // are removed (the first file is still whole).
  std::istringstream twice("other bytes");
  auto dup = b.upload_from_stream_with_id(*custom.view().find("_id"), "h", twice);
  ASSERT_FALSE(dup.has_value());
  std::ostringstream still;
  ASSERT_TRUE(b.download_to_stream(*custom.view().find("_id"), still).has_value());
  EXPECT_EQ(still.str(), "hello");
}

// A source that fails part way: stream_failed, and nothing of the file is left behind.
TEST_F(MongoGridfsTest, ASourceThatFailsLeavesNothing) {
  struct failing_buf : std::streambuf {
    int calls = 0;
    std::string block = std::string(1024, 'z');
    int_type underflow() override {
      if (++calls > 3) throw std::runtime_error("disk gone");
      setg(block.data(), block.data(), block.data() + block.size());
      return traits_type::to_int_type(block[0]);
    }
  } buf;
  std::istream in(&buf);
  auto b = bucket();
  auto id = b.upload_from_stream("broken", in);
  ASSERT_FALSE(id.has_value());
  EXPECT_EQ(id.error().code, mongo::errc::stream_failed) << id.error().message;
  EXPECT_NE(id.error().message.find("after 3072 bytes"), std::string::npos) << id.error().message;
  EXPECT_EQ(*b.chunks().count_documents(), 0);
  EXPECT_EQ(*b.files().count_documents(), 0);
}

TEST_F(MongoGridfsTest, BadChunkSizesAreRefusedBeforeSending) {
  auto b = bucket();
  for (const std::int32_t size : {0, -1, 16 * 1024 * 1024}) {
    std::istringstream in("x");
    mongo::gridfs_upload_options o;
    o.chunk_size_bytes = size;
    auto r = b.upload_from_stream("x", in, o);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, oid::errc::invalid_value) << r.error().message;
  }
  EXPECT_EQ(*b.files().count_documents(), 0);
}

// Damage made by hand, as a hostile or broken writer would leave it.
TEST_F(MongoGridfsTest, ADamagedFileIsCorruptAndSaysHow) {
  auto b = bucket(4);
  const auto expect_corrupt = [&](const oid::object_id& id, const std::string& words) {
    std::ostringstream out;
    auto r = b.download_to_stream(id, out);
    ASSERT_FALSE(r.has_value()) << words;
    EXPECT_EQ(r.error().code, mongo::errc::corrupt_file) << r.error().message;
    EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  };
  const auto missing = upload(b, "m", "abcdefghij");  // chunks 0, 1, 2 (2 bytes)
  builder n1;
  n1.append_object_id("files_id", missing).append_int32("n", 1);
  ASSERT_TRUE(b.chunks().delete_one(n1.view()).has_value());
  expect_corrupt(missing, "chunk 1 is missing (ChunkIsMissing)");

  const auto last = upload(b, "l", "abcdefghij");
  builder n2;
  n2.append_object_id("files_id", last).append_int32("n", 2);
  ASSERT_TRUE(b.chunks().delete_one(n2.view()).has_value());
  expect_corrupt(last, "chunk 2 is missing");

  const auto short_chunk = upload(b, "s", "abcdefghij");
  builder n0;
  n0.append_object_id("files_id", short_chunk).append_int32("n", 0);
  builder set;
  const std::uint8_t two[] = {'a', 'b'};
  set.open_document("$set").append_binary("data", 0, two).close();
  ASSERT_TRUE(b.chunks().update_one(n0.view(), set.view()).has_value());
  expect_corrupt(short_chunk, "chunk 0 holds 2 bytes, not 4 (ChunkIsWrongSize)");

  const auto extra = upload(b, "e", "abcdefghij");
  builder more;
  more.append_object_id("_id", oid::generate()).append_object_id("files_id", extra);
  more.append_int32("n", 3).append_binary("data", 0, two);
  ASSERT_TRUE(b.chunks().insert_one(more.view()).has_value());
  expect_corrupt(extra, "extra chunk, n 3");

  const auto lying = upload(b, "x", "abcd");
  builder bad_length;
  bad_length.open_document("$set").append_string("length", "four").close();
  ASSERT_TRUE(b.files().update_one(id_filter("_id", lying), bad_length.view()).has_value());
  expect_corrupt(lying, "length is not a size");
}

// More than one batch of chunks (16 MiB) each way.
TEST_F(MongoGridfsTest, AFileLargerThanABatch) {
  auto b = bucket(255 * 1024);
  const std::string data = bytes_of(17 * 1024 * 1024 + 7, 5);
  const auto id = upload(b, "big", data);
  EXPECT_TRUE(download(b, id) == data);
}

}  // namespace
