// mongodump's archive format (mongo-tools' common/archive/spec.md), written by
// `oid mongo dump --archive` and read by `oid mongo restore --archive`: pure bytes, no server, no
// file, so that tests/cli_archive_test.cpp holds it to the specification alone.
//
// An archive is the magic number 0x8199e26d (little-endian: 6d e2 99 81); a header document
// {concurrent_collections, version: "0.1", server_version, tool_version}; one collection-metadata
// document per collection {db, collection, metadata: the .metadata.json text, size, type}; the
// terminator ffffffff; then, in any interleaving, namespace segments (a header {db, collection,
// EOF: false, CRC: 0}, one or more documents, the terminator) and one namespace-EOF per collection
// (a header {db, collection, EOF: true, CRC: the CRC-64 of all the namespace's document bytes},
// the terminator). A view's namespace has an EOF and no segment.
//
// The reader takes every byte as hostile: each length is bounded (16 MiB a document, as the
// server's limit and mongo-tools' parser), each document validated (oid/bson/validate.hpp) before
// it is handed out, each namespace must have been announced before its data, and every error
// says what, where (the byte offset in the uncompressed archive) and in which namespace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <mutex>
#include <oid/bson/view.hpp>
#include <oid/result.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace oid::cli::archive {

/// The magic number, as a little-endian uint32 at the archive's start.
inline constexpr std::uint32_t magic_number = 0x8199e26d;
/// Ends the prelude and each block (namespace segment or EOF).
inline constexpr std::uint32_t terminator = 0xffffffff;
/// The largest document (or header) an archive may hold: MongoDB's 16 MiB; larger is refused.
inline constexpr std::size_t max_document_size = 16 * 1024 * 1024;
/// The most collections an archive's prelude may announce, and the most bytes it may take: the
/// prelude is held in memory whole, so a small (gzip-compressed) archive could otherwise make a
/// restore hold gigabytes. More is refused (too_large) before anything is restored.
inline constexpr std::size_t max_collections = 100'000;
inline constexpr std::uint64_t max_prelude_bytes = std::uint64_t{64} << 20;
/// The format version this code writes.
inline constexpr std::string_view format_version = "0.1";

/// The CRC an EOF header carries: CRC-64 with the ECMA-182 polynomial, reflected, initial value
/// and final XOR all ones (Go's hash/crc64 with crc64.ECMA, which mongo-tools use; also called
/// CRC-64/XZ). `crc` is the value so far (0 for none); returns it updated with `bytes`, so that
/// `crc64(crc64(0, a), b) == crc64(0, a + b)`. O(bytes.size()), no allocation.
std::uint64_t crc64(std::uint64_t crc, std::span<const std::uint8_t> bytes) noexcept;

/// The header document after the magic number.
struct header {
  std::int32_t concurrent_collections = 1;
  std::string version{format_version};
  std::string server_version, tool_version;
};

/// One collection-metadata document of the prelude.
struct collection_metadata {
  std::string db, collection;
  std::string metadata;   ///< canonical Extended JSON, what a .metadata.json file holds; may be ""
  std::int64_t size = 0;  ///< the collection's uncompressed size in bytes (mongodump writes 0)
  std::string type;       ///< "collection", "view", "timeseries" (or "": a collection)
};

// ---- writing --------------------------------------------------------------------------------

/// Appends the magic number, the header, each collection's metadata and the terminator to `out`.
void append_prelude(std::string& out, const header& h,
                    std::span<const collection_metadata> collections);
/// Appends a namespace segment: the header of `db`.`collection`, `documents` (whole BSON
/// documents, one after the other, at least one) and the terminator.
void append_segment(std::string& out, std::string_view db, std::string_view collection,
                    std::string_view documents);
/// Appends the namespace's EOF: its header with EOF true and `crc`, then the terminator.
void append_eof(std::string& out, std::string_view db, std::string_view collection,
                std::uint64_t crc);

/// Writes an archive through `sink` (which returns false when writing failed): the prelude first,
/// then the namespaces' blocks, from any number of threads (each call writes one whole block,
/// under a lock). Once the sink has failed, every later call returns false without writing.
class writer {
 public:
  using sink_fn = std::function<bool(std::string_view)>;
  explicit writer(sink_fn sink) : sink_(std::move(sink)) {}

  bool write_prelude(const header& h, std::span<const collection_metadata> collections);
  bool write_segment(std::string_view db, std::string_view collection, std::string_view documents);
  bool write_eof(std::string_view db, std::string_view collection, std::uint64_t crc);

 private:
  bool put(std::string_view head, std::string_view body);  // under mutex_
  sink_fn sink_;
  std::mutex mutex_;
  std::string scratch_;  // a block's header (under mutex_)
  bool failed_ = false;
};

/// One collection's documents on their way into a `writer`: buffered into segments of about
/// `segment_bytes`, with the CRC kept. Used by one thread at a time.
class namespace_writer {
 public:
  namespace_writer(writer& w, std::string db, std::string collection,
                   std::size_t segment_bytes = std::size_t{1} << 20);
  /// Appends one whole BSON document (the caller's: a server's reply); false when writing failed.
  bool add(std::span<const std::uint8_t> document);
  /// Writes what is buffered and the namespace's EOF; false when writing failed. Not calling it
  /// (a collection that could not be read to its end) leaves the namespace unfinished in the
  /// archive, which a reader reports.
  bool finish();
  std::uint64_t crc() const noexcept { return crc_; }

 private:
  bool flush();
  writer& w_;
  std::string db_, collection_, buffer_;
  std::size_t segment_bytes_;
  std::uint64_t crc_ = 0;
};

// ---- reading --------------------------------------------------------------------------------

/// What went wrong in an archive.
enum class archive_errc {
  not_an_archive = 1,  ///< the first four bytes are not the magic number
  truncated,           ///< the input ends inside the prelude, a length, a document or a block
  bad_length,          ///< a length below 5 that is not the terminator
  too_large,           ///< a length above max_document_size (or a prelude beyond its bounds)
  invalid_document,    ///< a document (of a namespace's data) that validate() refuses
  bad_header,          ///< a header or metadata document with a wrong field, or a block without
                       ///< a header
  unknown_namespace,   ///< data or an EOF for a namespace the prelude did not announce
  namespace_closed,    ///< a header for a namespace whose EOF was already read
  crc_mismatch,        ///< a namespace's EOF CRC differs from that of its documents
  unfinished,          ///< the archive ends with announced namespaces open or never seen
  io_error,            ///< reading the stream failed
};

/// An error: its code, the byte offset in the (uncompressed) archive, the namespace ("DB.COLL",
/// empty when none) and the whole message for a person (names not yet made printable).
struct archive_error {
  archive_errc code{};
  std::uint64_t offset = 0;
  std::string ns;
  std::string message;
  /// The namespace's index in `reader::collections()` (crc_mismatch, invalid_document), else
  /// static_cast<std::size_t>(-1).
  std::size_t collection = static_cast<std::size_t>(-1);
};

/// A collection of the prelude, as the reader keeps it.
struct collection_entry {
  collection_metadata meta;
  /// Why MongoDB would refuse the name (database_name_problem, collection_name_problem), or
  /// empty: a restore writes nothing under a name with a problem.
  std::string problem;
};

/// What `reader::next()` moved to.
struct item {
  enum kind_t { document, namespace_end, end } kind = end;
  std::size_t collection = 0;  ///< the index in `reader::collections()` (document, end of ns)
  bson::document_view doc;     ///< document: valid until the next `next()`
  std::uint64_t offset = 0;    ///< the document's (or EOF header's) offset in the archive
  bool buckets = false;        ///< the data is a timeseries' system.buckets.COLL
};

/// Reads an archive from a stream, through one buffer of 1 MiB that grows only as far as the
/// largest document (at most max_document_size). `in` must outlive the reader. Each document is
/// read into the buffer once and handed out as a view of it: no allocation per document.
class reader {
 public:
  explicit reader(std::istream& in);

  /// Reads the magic number, the header and the collections' metadata up to the terminator.
  /// Errors: not_an_archive, truncated, bad_length, too_large, bad_header (a document that does
  /// not validate, a field of the wrong type, a collection without db or collection, one
  /// announced twice), io_error. Call once, before `next()`.
  result<void, archive_error> read_prelude();
  const archive::header& prelude_header() const noexcept { return header_; }
  const std::vector<collection_entry>& collections() const noexcept { return collections_; }

  /// The next document, the end of a namespace (its CRC checked), or the end of the archive
  /// (every announced namespace ended). After `crc_mismatch` (the namespace is ended anyway) and
  /// `invalid_document` (the reader has moved past it) `can_continue()` is true; after any other
  /// error `next()` returns the end from then on.
  result<item, archive_error> next();
  bool can_continue() const noexcept { return !stopped_; }
  /// Bytes consumed from the stream so far.
  std::uint64_t bytes_read() const noexcept { return consumed_ + begin_; }

 private:
  enum class state { unopened, open, closed };
  // At least `n` bytes in buf_[begin_, end_); false at the end of input (or an error, io_).
  bool fill(std::size_t n);
  archive_error fail(archive_errc code, std::uint64_t offset, std::string ns, std::string what);
  result<std::uint32_t, archive_error> read_length(std::size_t ns_index, bool& eof);
  result<std::span<const std::uint8_t>, archive_error> read_document(std::uint32_t length,
                                                                     std::size_t ns_index);
  // A block's header: true with `out` set (a namespace's end, the archive's end), false when a
  // segment opened (its documents follow).
  result<bool, archive_error> read_block_header(item& out);
  std::string ns_name(std::size_t i) const;
  static std::string key_of(std::string_view db, std::string_view collection);

  std::istream& in_;
  std::vector<std::uint8_t> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t consumed_ = 0;  // bytes of the stream before buf_[0]
  bool io_ = false;             // the stream failed (not only ended)
  bool stopped_ = false;
  archive::header header_;
  std::vector<collection_entry> collections_;
  std::unordered_map<std::string, std::size_t> index_;  // key_of(db, collection) -> collections_
  std::vector<state> states_;
  std::vector<std::uint64_t> crcs_;
  // The block being read: its namespace (index), or none between blocks / after an EOF header.
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t current_ = none;
  bool in_block_ = false;  // a header was read and its terminator not yet
  bool current_buckets_ = false;
};

}  // namespace oid::cli::archive
