// mongodump's archive format (cli/mongo/archive.hpp) without a server: the writer read back, an
// archive laid out byte by byte from mongo-tools' specification (common/archive/spec.md), and
// hostile archives: cut at every byte, a wrong CRC, a wrong magic number, oversize lengths, names
// that are paths or hold a NUL, headers that break the rules.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <oid/bson/builder.hpp>
#include <oid/objectid/object_id.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mongo/archive.hpp"
#include "support/run_cli.hpp"
#include "support/scratch.hpp"

namespace {

namespace archive = oid::cli::archive;
using archive::archive_errc;
using namespace std::string_literals;

std::string bytes_of(oid::bson::document_view d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

std::span<const std::uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string doc_n(int n, std::string_view text = "x") {
  oid::bson::builder b;
  b.append_int32("_id", n).append_string("s", text);
  return bytes_of(b.view());
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}

// A namespace header as the specification lays it out: {db, collection, EOF, CRC}.
std::string ns_header(std::string_view db, std::string_view coll, bool eof, std::uint64_t crc) {
  oid::bson::builder b;
  b.append_string("db", db).append_string("collection", coll).append_bool("EOF", eof);
  b.append_int64("CRC", static_cast<std::int64_t>(crc));
  return bytes_of(b.view());
}

// A prelude by hand: magic, header, one metadata document per {db, collection, type}, terminator.
std::string prelude(const std::vector<std::vector<std::string>>& collections) {
  std::string out = "\x6d\xe2\x99\x81";
  oid::bson::builder h;
  h.append_int32("concurrent_collections", 4)
      .append_string("version", "0.1")
      .append_string("server_version", "7.0.0")
      .append_string("tool_version", "test");
  out += bytes_of(h.view());
  for (const auto& c : collections) {
    oid::bson::builder m;
    m.append_string("db", c[0]).append_string("collection", c[1]);
    m.append_string("metadata", R"({"indexes":[],"collectionName":")" + c[1] + R"("})");
    m.append_int32("size", 0).append_string("type", c.size() > 2 ? c[2] : "collection");
    out += bytes_of(m.view());
  }
  put_u32(out, archive::terminator);
  return out;
}

// Everything a reader gives for `bytes`: the documents as DB.COLL and bytes, the namespaces'
// ends in order, and the error that stopped it (errors it can go on from are collected too).
struct read_result {
  std::vector<std::pair<std::string, std::string>> docs;
  std::vector<std::string> ends;
  std::vector<archive::archive_error> errors;  // the last one stopped it, unless `clean`
  bool clean = false;                          // the reader reached the end of the archive
  std::vector<archive::collection_entry> collections;
  archive::header header;
};

read_result read_all(const std::string& bytes) {
  std::istringstream in(bytes);
  archive::reader r(in);
  read_result out;
  if (auto p = r.read_prelude(); !p) {
    out.errors.push_back(p.error());
    return out;
  }
  out.collections = r.collections();
  out.header = r.prelude_header();
  const auto ns = [&](std::size_t i) {
    return out.collections[i].meta.db + '.' + out.collections[i].meta.collection;
  };
  for (int guard = 0; guard < 100000; ++guard) {
    auto it = r.next();
    if (!it) {
      out.errors.push_back(it.error());
      if (!r.can_continue()) return out;
      continue;
    }
    if (it->kind == archive::item::end) {
      out.clean = true;
      return out;
    }
    if (it->kind == archive::item::namespace_end) {
      out.ends.push_back(ns(it->collection));
    } else {
      out.docs.emplace_back(ns(it->collection), bytes_of(it->doc));
    }
  }
  ADD_FAILURE() << "the reader never ended";
  return out;
}

// A small archive from oid's writer: db.a with 3 documents, db.b with 2, a view db.v.
std::string small_archive(std::size_t segment_bytes = 1 << 20) {
  std::string out;
  archive::writer w([&](std::string_view b) {
    out += b;
    return true;
  });
  std::vector<archive::collection_metadata> meta(3);
  meta[0] = {"db", "a", R"({"indexes":[]})", 0, "collection"};
  meta[1] = {"db", "b", R"({"indexes":[]})", 0, "collection"};
  meta[2] = {"db", "v", R"({"options":{"viewOn":"a","pipeline":[]}})", 0, "view"};
  archive::header h;
  h.server_version = "7.0.0";
  h.tool_version = "oid test";
  EXPECT_TRUE(w.write_prelude(h, meta));
  archive::namespace_writer a(w, "db", "a", segment_bytes), b(w, "db", "b", segment_bytes),
      v(w, "db", "v", segment_bytes);
  // Interleaved: a, b, a, b, a.
  for (int i = 0; i < 5; ++i) {
    const auto d = doc_n(i, i % 2 == 0 ? "from a" : "from b");
    EXPECT_TRUE((i % 2 == 0 ? a : b).add(span_of(d)));
  }
  EXPECT_TRUE(a.finish());
  EXPECT_TRUE(v.finish());
  EXPECT_TRUE(b.finish());
  return out;
}

TEST(CliArchiveTest, Crc64IsGosEcmaCrc) {
  // CRC-64/XZ's check value, which Go's crc64.Checksum(data, crc64.MakeTable(crc64.ECMA)) gives.
  const std::string check = "123456789";
  EXPECT_EQ(archive::crc64(0, span_of(check)), 0x995dc9bbdf1939faULL);
  EXPECT_EQ(archive::crc64(0, {}), 0u);
  // Piece by piece is the same as at once, at every split (the 8-byte loop and the tail).
  const std::string long_text = "The quick brown fox jumps over the lazy dog, twice or more.";
  const auto whole = archive::crc64(0, span_of(long_text));
  for (std::size_t cut = 0; cut <= long_text.size(); ++cut) {
    const auto s = span_of(long_text);
    EXPECT_EQ(archive::crc64(archive::crc64(0, s.first(cut)), s.subspan(cut)), whole) << cut;
  }
  // The CRC mongodump 3.4 wrote in an EOF header for its one document of test.bar
  // (mongo-tools' mongorestore/testdata/test.bar.archive): {_id: ObjectId(...), foo: "bar"}.
  oid::bson::builder b;
  b.append_object_id("_id", oid::object_id("58ffb124b721bc6c3234333c")).append_string("foo", "bar");
  EXPECT_EQ(archive::crc64(0, span_of(bytes_of(b.view()))), 0x9369f0f35bec50d9ULL);
}

TEST(CliArchiveTest, WriterRoundTripsInterleavedNamespaces) {
  for (const std::size_t segment : {std::size_t{1}, std::size_t{40}, std::size_t{1} << 20}) {
    SCOPED_TRACE(segment);
    const auto r = read_all(small_archive(segment));
    ASSERT_TRUE(r.errors.empty()) << r.errors.front().message;
    EXPECT_TRUE(r.clean);
    ASSERT_EQ(r.collections.size(), 3u);
    EXPECT_EQ(r.collections[2].meta.type, "view");
    EXPECT_EQ(r.collections[2].meta.metadata, R"({"options":{"viewOn":"a","pipeline":[]}})");
    EXPECT_EQ(r.header.version, "0.1");
    EXPECT_EQ(r.header.server_version, "7.0.0");
    EXPECT_EQ(r.header.tool_version, "oid test");
    std::vector<std::pair<std::string, std::string>> want_a, want_b, got_a, got_b;
    for (int i = 0; i < 5; ++i) {
      (i % 2 == 0 ? want_a : want_b)
          .emplace_back(i % 2 == 0 ? "db.a" : "db.b", doc_n(i, i % 2 == 0 ? "from a" : "from b"));
    }
    for (const auto& d : r.docs) (d.first == "db.a" ? got_a : got_b).push_back(d);
    EXPECT_EQ(got_a, want_a);
    EXPECT_EQ(got_b, want_b);
    EXPECT_EQ(r.ends, (std::vector<std::string>{"db.a", "db.v", "db.b"}));
  }
}

TEST(CliArchiveTest, ReadsAnArchiveLaidOutByTheSpecification) {
  // As mongodump 3.4 wrote test.bar (no "type" in the metadata), with a second collection whose
  // documents come in two segments around the first's.
  std::string bytes = "\x6d\xe2\x99\x81";  // 0x8199e26d, little-endian
  oid::bson::builder h;
  h.append_int32("concurrent_collections", 4)
      .append_string("version", "0.1")
      .append_string("server_version", "3.4.3")
      .append_string("tool_version", "r3.4.3");
  bytes += bytes_of(h.view());
  oid::bson::builder m1;
  m1.append_string("db", "test")
      .append_string("collection", "bar")
      .append_string("metadata",
                     R"({"options":{},"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"}]})")
      .append_int32("size", 0);
  bytes += bytes_of(m1.view());
  oid::bson::builder m2;
  m2.append_string("db", "test").append_string("collection", "two").append_string("metadata", "");
  m2.append_int64("size", 0).append_string("type", "collection");
  bytes += bytes_of(m2.view());
  bytes += "\xff\xff\xff\xff";
  oid::bson::builder d;
  d.append_object_id("_id", oid::object_id("58ffb124b721bc6c3234333c")).append_string("foo", "bar");
  const std::string doc = bytes_of(d.view());
  // two: its first document; bar: its one document and its EOF; two: its second and its EOF.
  bytes += ns_header("test", "two", false, 0) + doc_n(1) + "\xff\xff\xff\xff"s;
  bytes += ns_header("test", "bar", false, 0) + doc + "\xff\xff\xff\xff"s;
  bytes += ns_header("test", "bar", true, 0x9369f0f35bec50d9ULL) + "\xff\xff\xff\xff"s;
  bytes += ns_header("test", "two", false, 0) + doc_n(2) + "\xff\xff\xff\xff"s;
  std::string two = doc_n(1) + doc_n(2);
  // Its CRC, computed bit by bit here (reflected ECMA-182, all ones in and out).
  std::uint64_t crc = ~std::uint64_t{0};
  for (const unsigned char c : two) {
    crc ^= c;
    for (int k = 0; k < 8; ++k)
      crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xc96c5795d7870f42ULL : crc >> 1;
  }
  bytes += ns_header("test", "two", true, ~crc) + "\xff\xff\xff\xff"s;

  const auto r = read_all(bytes);
  ASSERT_TRUE(r.errors.empty()) << r.errors.front().message;
  EXPECT_TRUE(r.clean);
  ASSERT_EQ(r.collections.size(), 2u);
  EXPECT_EQ(r.collections[0].meta.type, "");
  EXPECT_EQ(r.collections[0].problem, "");
  EXPECT_EQ(r.header.concurrent_collections, 4);
  EXPECT_EQ(r.header.server_version, "3.4.3");
  EXPECT_EQ(r.docs, (std::vector<std::pair<std::string, std::string>>{
                        {"test.two", doc_n(1)}, {"test.bar", doc}, {"test.two", doc_n(2)}}));
  EXPECT_EQ(r.ends, (std::vector<std::string>{"test.bar", "test.two"}));
}

TEST(CliArchiveTest, TruncatedAtEveryByteIsAClearErrorAtThatByte) {
  const std::string whole = small_archive(40);
  const auto full = read_all(whole);
  ASSERT_TRUE(full.clean);
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    SCOPED_TRACE(cut);
    const auto r = read_all(whole.substr(0, cut));
    ASSERT_FALSE(r.clean);
    ASSERT_FALSE(r.errors.empty());
    const auto& e = r.errors.back();
    // Inside something: truncated; between blocks: the namespaces not ended are named.
    EXPECT_TRUE(e.code == archive_errc::truncated || e.code == archive_errc::unfinished)
        << e.message;
    EXPECT_EQ(e.offset, cut) << e.message;
    EXPECT_NE(e.message.find("at byte " + std::to_string(cut)), std::string::npos) << e.message;
    if (e.code == archive_errc::unfinished) {
      EXPECT_FALSE(e.ns.empty());
    }
    // What came before the cut was read, in order.
    ASSERT_LE(r.docs.size(), full.docs.size());
    for (std::size_t i = 0; i < r.docs.size(); ++i) EXPECT_EQ(r.docs[i], full.docs[i]);
  }
  // Cut inside db.a's first document: the error names db.a.
  const std::size_t first = whole.find(doc_n(0, "from a"));
  ASSERT_NE(first, std::string::npos);
  const auto r = read_all(whole.substr(0, first + 7));
  ASSERT_FALSE(r.errors.empty());
  EXPECT_EQ(r.errors.back().code, archive_errc::truncated);
  EXPECT_EQ(r.errors.back().ns, "db.a");
  EXPECT_EQ(r.errors.back().offset, first + 7);
}

TEST(CliArchiveTest, AWrongCrcNamesTheNamespaceAndReadingGoesOn) {
  std::string bytes = small_archive();
  // One byte of a document's string changed: still valid BSON, another CRC.
  const std::size_t at = bytes.find("from b");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'F';
  const auto r = read_all(bytes);
  EXPECT_TRUE(r.clean);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, archive_errc::crc_mismatch);
  EXPECT_EQ(r.errors[0].ns, "db.b");
  EXPECT_EQ(r.errors[0].collection, 1u);
  EXPECT_EQ(r.docs.size(), 5u);
  EXPECT_EQ(r.ends, (std::vector<std::string>{"db.a", "db.v"}));  // db.b's end is the error
}

TEST(CliArchiveTest, NotAnArchive) {
  std::string bytes = small_archive();
  bytes[0] = '\x6e';
  auto r = read_all(bytes);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, archive_errc::not_an_archive);
  EXPECT_EQ(r.errors[0].offset, 0u);
  // A .bson file (documents one after the other) is not an archive either.
  r = read_all(doc_n(1) + doc_n(2));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, archive_errc::not_an_archive);
  r = read_all("");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, archive_errc::truncated);
}

TEST(CliArchiveTest, OversizeAndUndersizeLengthsAreRefusedWhereTheyAre) {
  const std::string head = prelude({{"db", "c"}}) + ns_header("db", "c", false, 0);
  struct test_case {
    const char* name;
    std::uint32_t length;
    archive_errc want;
  };
  const test_case cases[] = {
      {"16 MiB + 1", 16 * 1024 * 1024 + 1, archive_errc::too_large},
      {"2 GiB", 0x80000000u, archive_errc::too_large},
      {"4", 4, archive_errc::bad_length},
      {"0", 0, archive_errc::bad_length},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string bytes = head;
    put_u32(bytes, c.length);
    bytes += std::string(64, 'x');  // no 16 MiB follows: the length alone is refused
    const auto r = read_all(bytes);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].code, c.want);
    EXPECT_EQ(r.errors[0].offset, head.size());
    EXPECT_EQ(r.errors[0].ns, "db.c");
    EXPECT_NE(r.errors[0].message.find("at byte " + std::to_string(head.size())),
              std::string::npos);
  }
  // In the prelude too.
  std::string bytes = "\x6d\xe2\x99\x81";
  put_u32(bytes, 0x7fffffff);
  const auto r = read_all(bytes);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, archive_errc::too_large);
  EXPECT_EQ(r.errors[0].offset, 4u);
}

TEST(CliArchiveTest, HostileNamesAreMarkedAndUnannouncedNamespacesRefused) {
  const auto r = read_all(prelude({{"db", "ok"},
                                   {"..", "x"},
                                   {"../x", "c"},
                                   {"db", "../x"},
                                   {"a\0b"s, "c"},
                                   {"db", "a\0b"s},
                                   {"db", "$cmd"},
                                   {"db", "a/../../x"}}) +
                          ns_header("db", "ok", true, 0) + "\xff\xff\xff\xff"s);
  ASSERT_EQ(r.collections.size(), 8u);
  EXPECT_EQ(r.collections[0].problem, "");
  for (std::size_t i = 1; i <= 6; ++i) {
    EXPECT_NE(r.collections[i].problem, "") << i;
  }
  // A legal collection name (MongoDB allows '/'): a restore never makes it a path.
  EXPECT_EQ(r.collections[7].problem, "");
  EXPECT_EQ(r.collections[4].meta.db, "a\0b"s);  // kept whole, not cut at the NUL

  // Data for a namespace the prelude never announced.
  const auto u = read_all(prelude({{"db", "c"}}) + ns_header("db", "../x", false, 0) + doc_n(1) +
                          "\xff\xff\xff\xff"s);
  ASSERT_EQ(u.errors.size(), 1u);
  EXPECT_EQ(u.errors[0].code, archive_errc::unknown_namespace);
  EXPECT_EQ(u.errors[0].ns, "db.../x");
  EXPECT_TRUE(u.docs.empty());
}

TEST(CliArchiveTest, HeadersThatBreakTheRulesAreRefused) {
  const std::string ff = "\xff\xff\xff\xff";
  const std::string head = prelude({{"db", "c"}});
  oid::bson::builder extra;
  extra.append_string("db", "db").append_string("collection", "c").append_bool("EOF", false);
  extra.append_int64("CRC", 0).append_string("x", "y");
  oid::bson::builder wrong_type;
  wrong_type.append_string("db", "db").append_int32("collection", 7);
  std::string bad_doc = doc_n(1);
  bad_doc[4] = '\x55';  // an unknown type byte; the length is sane
  struct test_case {
    const char* name;
    std::string bytes;
    archive_errc want;
  };
  const test_case cases[] = {
      {"unknown field", head + bytes_of(extra.view()) + doc_n(1) + ff, archive_errc::bad_header},
      {"collection not a string", head + bytes_of(wrong_type.view()) + ff,
       archive_errc::bad_header},
      {"two terminators", head + ff, archive_errc::bad_header},
      {"data after an EOF header", head + ns_header("db", "c", true, 0) + doc_n(1) + ff,
       archive_errc::bad_header},
      {"header after the end",
       head + ns_header("db", "c", true, 0) + ff + ns_header("db", "c", false, 0) + doc_n(1) + ff,
       archive_errc::namespace_closed},
      {"never ended", head + ns_header("db", "c", false, 0) + doc_n(1) + ff,
       archive_errc::unfinished},
      {"never seen", head, archive_errc::unfinished},
      {"announced twice", prelude({{"db", "c"}, {"db", "c"}}), archive_errc::bad_header},
      {"invalid document", head + ns_header("db", "c", false, 0) + bad_doc + ff,
       archive_errc::invalid_document},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = read_all(c.bytes);
    ASSERT_FALSE(r.errors.empty());
    EXPECT_EQ(r.errors.front().code, c.want) << r.errors.front().message;
    EXPECT_NE(r.errors.front().message, "");
  }
  // An invalid document (its length sane) is skipped: the reader goes on past it.
  const auto r =
      read_all(head + ns_header("db", "c", false, 0) + bad_doc + doc_n(2) + ff +
               ns_header("db", "c", true, archive::crc64(0, span_of(bad_doc + doc_n(2)))) + ff);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, archive_errc::invalid_document);
  EXPECT_EQ(r.errors[0].offset, head.size() + ns_header("db", "c", false, 0).size() + 4);
  EXPECT_EQ(r.errors[0].ns, "db.c");
  EXPECT_TRUE(r.clean);
  EXPECT_EQ(r.docs.size(), 1u);
}

TEST(CliArchiveTest, TimeseriesBucketsAreTheirCollectionsData) {
  // mongodump before MongoDB 8.3 writes a timeseries' data as system.buckets.NAME.
  const std::string ff = "\xff\xff\xff\xff";
  const auto d = doc_n(1);
  const auto r = read_all(
      prelude({{"db", "t", "timeseries"}}) + ns_header("db", "system.buckets.t", false, 0) + d +
      ff + ns_header("db", "system.buckets.t", true, archive::crc64(0, span_of(d))) + ff);
  ASSERT_TRUE(r.errors.empty()) << r.errors.front().message;
  EXPECT_TRUE(r.clean);
  EXPECT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.ends, (std::vector<std::string>{"db.t"}));
}

TEST(CliArchiveTest, WriterStopsAfterTheSinkFails) {
  int calls = 0;
  archive::writer w([&](std::string_view) { return ++calls < 2; });
  archive::header h;
  EXPECT_TRUE(w.write_prelude(h, {}));
  EXPECT_FALSE(w.write_eof("db", "c", 0));
  EXPECT_FALSE(w.write_eof("db", "c", 0));
  EXPECT_EQ(calls, 2);
}

}  // namespace

namespace {

// An archive that announces `count` collections DB.cN (`system.` before the name when asked) and
// then ends without any of their data.
std::string announcing(std::size_t count, std::string_view prefix = "") {
  std::vector<archive::collection_metadata> meta(count);
  for (std::size_t i = 0; i < count; ++i) {
    meta[i] = {"db", std::string(prefix) + "c" + std::to_string(i), "", 0, "collection"};
  }
  std::string out;
  archive::append_prelude(out, {}, meta);
  return out;
}

// Before: a prelude could announce 1,000,000 collections (2.7 MB gzip-compressed), each held in
// memory several times over, and the archive's end listed every one in a 12 MB line.
TEST(CliArchiveTest, APreludeAnnouncesAtMostMaxCollections) {
  const auto at_limit = read_all(announcing(archive::max_collections));
  ASSERT_FALSE(at_limit.errors.empty());
  EXPECT_EQ(at_limit.errors[0].code, archive_errc::unfinished);
  EXPECT_EQ(at_limit.collections.size(), archive::max_collections);
  // The end names a few of the collections never seen, and counts the rest.
  EXPECT_LT(at_limit.errors[0].message.size(), 400u) << at_limit.errors[0].message;
  EXPECT_NE(at_limit.errors[0].message.find("db.c0, db.c1, db.c2, db.c3, db.c4 and 99,995 more"),
            std::string::npos)
      << at_limit.errors[0].message;

  const auto over = read_all(announcing(archive::max_collections + 1));
  ASSERT_EQ(over.errors.size(), 1u);
  EXPECT_EQ(over.errors[0].code, archive_errc::too_large);
  EXPECT_NE(over.errors[0].message.find("more than 100000 collections"), std::string::npos)
      << over.errors[0].message;
}

// Before: restore said each system.* collection left out on a line of its own, and the end of an
// archive whose collections never came named each one: a line per collection, or one line of
// megabytes. Every line names at most 5 and counts the rest.
TEST(CliArchiveTest, RestoreMessagesNameAFewAndCountTheRest) {
  std::vector<archive::collection_metadata> meta;
  for (int i = 0; i < 20000; ++i) {
    meta.push_back({"db", (i % 2 == 0 ? "system.s" : "c") + std::to_string(i), "", 0, ""});
  }
  std::string bytes;
  archive::append_prelude(bytes, {}, meta);
  const std::string file = oid::testing::scratch_path("announcing.archive");
  std::ofstream(file, std::ios::binary) << bytes;
  const std::string flag = "--archive=" + file;
  const auto r = oid::testing::run_cli(
      {"mongo", "restore", "mongodb://127.0.0.1:1", flag, "--dryRun", "--quiet"});
  EXPECT_EQ(r.status, 1);
  EXPECT_LT(r.err.size(), 1000u) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("db.system.s0, db.system.s2, db.system.s4, db.system.s6, db.system.s8 and "
                       "9,995 more not restored"),
            std::string::npos)
      << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("db.system.s0, db.c1, db.system.s2, db.c3, db.system.s4 and 19,995 more"),
            std::string::npos)
      << r.err.substr(0, 2000);
}

}  // namespace
