// oid/mongo/gridfs.hpp: files larger than a document, stored by MongoDB's GridFS specification.
//
// A bucket is two collections, `<bucket>.files` (one document per file: `_id`, `length`,
// `chunkSize`, `uploadDate`, `filename`, `metadata`) and `<bucket>.chunks` (the bytes, in order,
// as `{files_id, n, data}` of `chunkSize` bytes each, the last one shorter). Every driver reads
// what another wrote. Uploads and downloads stream: memory stays near one batch of chunks
// (16 MiB), whatever the file's size.
//
//   auto bucket = client.database("media").gridfs_bucket();
//   std::ifstream in("talk.mp4", std::ios::binary);
//   auto id = bucket.upload_from_stream("talk.mp4", in);           // outcome<object_id>
//   std::ofstream out("copy.mp4", std::ios::binary);
//   auto n = bucket.download_to_stream_by_name("talk.mp4", out);   // outcome<std::uint64_t>
#pragma once

#include <atomic>
#include <cstdint>
#include <istream>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/cursor.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/write_concern.hpp>
#include <oid/objectid/object_id.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace oid::mongo {

/// What a bucket is called and how it writes and reads.
struct gridfs_bucket_options {
  /// The collections' prefix: `<bucket_name>.files` and `<bucket_name>.chunks`.
  std::string bucket_name = "fs";
  /// The bytes of each chunk a new file is cut into (255 KiB, the specification's default; at
  /// most 16 MiB).
  std::int32_t chunk_size_bytes = 255 * 1024;
  /// The write concern of uploads, deletes and renames (default: the database's).
  mongo::write_concern write_concern{};
  /// Where downloads and `find` read (default: the database's read preference).
  std::optional<mongo::read_preference> read_preference{};
};

/// Options of one upload.
struct gridfs_upload_options {
  /// This file's chunk size (default: the bucket's).
  std::optional<std::int32_t> chunk_size_bytes{};
  /// Stored as the files document's `metadata` (empty: none).
  bson::document_view metadata{};
  /// Also store the deprecated `md5` of the bytes (hex). The specification dropped it; ask only
  /// for readers that still check it.
  bool md5 = false;
};

/// A bucket of a database (`database::gridfs_bucket`). Cheap to copy; copies share the
/// knowledge that the indexes exist. Thread-safe.
///
/// Failures, besides those of the operations underneath: file_not_found (no file with that id or
/// name), revision_not_found (the name exists, that revision does not), corrupt_file (a chunk
/// missing, of the wrong size or extra, or a files document whose `length` or `chunkSize` is not
/// a sane number), stream_failed (the source could not be read or the destination written), and
/// invalid_value (`oid::errc`: a chunk size out of range, nothing sent).
class gridfs_bucket {
 public:
  /// Stores the bytes `source` yields until its end as a file named `filename`, with a new
  /// ObjectId, which is returned. The files and chunks indexes are created first when the files
  /// collection is empty (once per bucket). A failure part way deletes the chunks written.
  outcome<object_id> upload_from_stream(std::string_view filename, std::istream& source,
                                        const gridfs_upload_options& options = {});
  /// The same with the caller's id: any BSON value, given as the element `id` (its key is
  /// ignored), e.g. `doc.view().find("_id").value()`.
  outcome<done> upload_from_stream_with_id(bson::element id, std::string_view filename,
                                           std::istream& source,
                                           const gridfs_upload_options& options = {});
  /// `upload_from_stream` of the bytes `data`.
  outcome<object_id> upload_from_bytes(std::string_view filename,
                                       std::span<const std::uint8_t> data,
                                       const gridfs_upload_options& options = {});

  /// Writes the file whose `_id` is `id` to `out`; returns its length. The chunks are checked
  /// as they come (numbers in order, sizes as the files document says); bytes of good chunks
  /// before a bad one are already written.
  outcome<std::uint64_t> download_to_stream(bson::element id, std::ostream& out);
  outcome<std::uint64_t> download_to_stream(const object_id& id, std::ostream& out);
  /// Writes a revision of the file named `filename` to `out`: 0 the first stored, 1 the second,
  /// ..., -1 the most recent (the default), -2 the one before it, ...
  outcome<std::uint64_t> download_to_stream_by_name(std::string_view filename, std::ostream& out,
                                                    std::int32_t revision = -1);

  /// The files documents matching `filter` (empty: all), with find's options (sort, skip, limit,
  /// ...; the bucket's read preference unless the options name one).
  outcome<cursor> find(bson::document_view filter = {}, const find_options& options = {});

  /// Deletes the file `id`: its files document, then its chunks (which are deleted even when
  /// the files document is missing; that is still file_not_found).
  outcome<done> delete_file(bson::element id);
  outcome<done> delete_file(const object_id& id);
  /// Deletes every revision of the file named `filename`. Failures: file_not_found when there is
  /// none.
  outcome<done> delete_by_name(std::string_view filename);
  /// Renames the file `id`. Failures: file_not_found.
  outcome<done> rename(bson::element id, std::string_view new_filename);
  /// Renames every revision of the file named `filename`. Failures: file_not_found.
  outcome<done> rename_by_name(std::string_view filename, std::string_view new_filename);
  /// Drops the files and chunks collections (and so their indexes).
  outcome<done> drop();

  /// `<bucket>.files` and `<bucket>.chunks`.
  mongo::collection files() const { return files_; }
  mongo::collection chunks() const { return chunks_; }
  const gridfs_bucket_options& options() const noexcept { return options_; }

 private:
  friend class database;
  gridfs_bucket(mongo::collection files, mongo::collection chunks, gridfs_bucket_options options);
  class whole_operation;  // one timeoutMS for all the commands of one call (gridfs.cpp)
  outcome<done> ensure_indexes(const whole_operation& op);
  outcome<done> upload(bson::element id, std::string_view filename, std::istream& source,
                       const gridfs_upload_options& options);
  outcome<std::uint64_t> download(bson::document_view file, std::ostream& out,
                                  const whole_operation& op);

  mongo::collection files_, chunks_;
  gridfs_bucket_options options_;
  std::shared_ptr<std::atomic<bool>> indexed_;  // the indexes were checked (shared by copies)
};

}  // namespace oid::mongo
