// GridFS (oid/mongo/gridfs.hpp) on the public collection operations: nothing here talks to the
// wire. A file's bytes are read and written one batch of chunks at a time, so memory does not
// grow with the file; everything a server sends back (the files document, each chunk) is checked
// before it is trusted, as a hostile server could send anything.
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/mongo/database.hpp>
#include <oid/mongo/error.hpp>
#include <oid/mongo/gridfs.hpp>
#include <oid/objectid/generator.hpp>
#include <span>
#include <string>
#include <vector>

#include "mongo/operation/time_limit.hpp"

namespace oid::mongo {

namespace {

// The largest chunk size a files document may name: a chunk is a document of at most 16 MiB.
constexpr std::int64_t max_chunk_size = 16 * 1024 * 1024 - 1024;
// The bytes of chunks sent in one insert (one message's worth): the memory an upload holds.
constexpr std::size_t upload_batch_bytes = 16 * 1024 * 1024;

failure problem(errc code, std::string message) {
  return failure(make_error_code(code), std::move(message));
}

// The filter `{key: {$eq: value}}`: an id that is a document such as `{$gt: ""}` matches itself
// only, never every file (the specification asks for $eq).
bson::document equals(std::string_view key, const bson::element& value) {
  bson::builder b;
  b.open_document(key).append_element("$eq", value).close();
  return std::move(b).extract();
}

bson::document object_id_field(const object_id& id) {
  bson::builder b;
  b.append_object_id("_id", id);
  return std::move(b).extract();
}

// A whole number a server wrote as int32, int64 or a double without a fraction.
std::optional<std::int64_t> integer_of(const bson::element& e) {
  if (auto v = e.get_int32()) return *v;
  if (auto v = e.get_int64()) return *v;
  if (auto v = e.get_double()) {
    if (*v >= -9.0e15 && *v <= 9.0e15 && *v == static_cast<double>(static_cast<std::int64_t>(*v))) {
      return static_cast<std::int64_t>(*v);
    }
  }
  return std::nullopt;
}

// True when index key patterns `a` and `b` name the same fields in the same order with the same
// directions, 1 and 1.0 being the same (as the specification asks).
bool same_keys(bson::document_view a, bson::document_view b) {
  auto i = a.begin(), j = b.begin();
  for (; i != a.end() && j != b.end(); ++i, ++j) {
    if (i->key() != j->key()) return false;
    const auto x = integer_of(*i), y = integer_of(*j);
    if (!x || !y || *x != *y) return false;
  }
  return i == a.end() && j == b.end();
}

// Creates the index `keys` on `c` unless one with those keys is there.
outcome<done> ensure_index(collection c, bson::document_view keys, bool unique) {
  auto list = c.list_indexes();
  if (!list) return std::move(list).error();
  for (const auto& spec : *list) {
    const auto key = spec.view().find("key");
    if (key && key->get_document() && same_keys(*key->get_document(), keys)) return done{};
  }
  index_options options;
  options.unique = unique;
  auto made = c.create_index(keys, options);
  if (!made) return std::move(made).error();
  return done{};
}

// MD5 of a stream of bytes, for the deprecated `md5` field (every OpenSSL call checked).
class md5_digest {
 public:
  md5_digest() : ctx_(EVP_MD_CTX_new()) {
    ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_, EVP_md5(), nullptr) == 1;
  }
  ~md5_digest() { EVP_MD_CTX_free(ctx_); }
  md5_digest(const md5_digest&) = delete;
  md5_digest& operator=(const md5_digest&) = delete;
  void update(std::span<const std::uint8_t> bytes) {
    ok_ = ok_ && EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()) == 1;
  }
  /// The digest as lowercase hex; nullopt when OpenSSL failed (e.g. MD5 disabled by FIPS).
  std::optional<std::string> hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned int size = 0;
    if (!ok_ || EVP_DigestFinal_ex(ctx_, out.data(), &size) != 1 || size != 16) return std::nullopt;
    static constexpr char digits[] = "0123456789abcdef";
    std::string text;
    for (unsigned i = 0; i < size; ++i) {
      text += digits[out[i] >> 4];
      text += digits[out[i] & 15];
    }
    return text;
  }

 private:
  EVP_MD_CTX* ctx_;
  bool ok_ = false;
};

// Reads up to `buffer.size()` bytes; the count, or nullopt when the stream failed (not at its end).
std::optional<std::size_t> read_some(std::istream& in, std::span<std::uint8_t> buffer) {
  std::size_t got = 0;
  while (got < buffer.size() && in) {
    in.read(reinterpret_cast<char*>(buffer.data() + got),
            static_cast<std::streamsize>(buffer.size() - got));
    got += static_cast<std::size_t>(in.gcount());
  }
  if (in.bad()) return std::nullopt;
  return got;
}

}  // namespace

// ---- the bucket -----------------------------------------------------------------------------

// One timeoutMS for a whole call of the bucket (the GridFS section of the client-side operations
// timeout specification): each command of an upload, a download, a delete, a rename or a drop
// gets what is left of the bucket's timeoutMS (its database's), not a timeout of its own. Without
// timeoutMS the collections are used as they are.
class gridfs_bucket::whole_operation {
 public:
  explicit whole_operation(const gridfs_bucket& b)
      : bucket_(b), limit_(detail::time_limit::from(b.files_.timeout())) {}
  // The files and chunks collections with the time that is left: 0 (no limit) for timeoutMS 0,
  // at least 1 ms otherwise (a command given 1 ms that is already gone fails as a timeout).
  mongo::collection files() const { return bound(bucket_.files_); }
  mongo::collection chunks() const { return bound(bucket_.chunks_); }

 private:
  mongo::collection bound(const mongo::collection& c) const {
    if (!limit_) return c;
    if (limit_->unlimited()) return c.with_timeout(std::chrono::milliseconds(0));
    return c.with_timeout(std::max(std::chrono::milliseconds(1), limit_->remaining()));
  }
  const gridfs_bucket& bucket_;
  std::optional<detail::time_limit> limit_;
};

gridfs_bucket database::gridfs_bucket(gridfs_bucket_options options) const {
  const std::string prefix = options.bucket_name;
  return mongo::gridfs_bucket(collection(prefix + ".files"), collection(prefix + ".chunks"),
                              std::move(options));
}

gridfs_bucket::gridfs_bucket(mongo::collection files, mongo::collection chunks,
                             gridfs_bucket_options options)
    : files_(std::move(files)),
      chunks_(std::move(chunks)),
      options_(std::move(options)),
      indexed_(std::make_shared<std::atomic<bool>>(false)) {}

outcome<done> gridfs_bucket::ensure_indexes(const whole_operation& op) {
  if (indexed_->load()) return done{};
  // Only a bucket whose files collection is empty gets its indexes made: one in use has them,
  // or its owner chose otherwise. Read on the primary, where the writes go.
  find_options probe;
  bson::builder id_only;
  id_only.append_int32("_id", 1);
  probe.projection = id_only.view();
  probe.read_preference = read_preference{};
  auto any = op.files().find_one({}, probe);
  if (!any) return std::move(any).error();
  if (!*any) {
    bson::builder files_keys;
    files_keys.append_int32("filename", 1).append_int32("uploadDate", 1);
    if (auto r = ensure_index(op.files(), files_keys.view(), false); !r) return r;
    bson::builder chunk_keys;
    chunk_keys.append_int32("files_id", 1).append_int32("n", 1);
    if (auto r = ensure_index(op.chunks(), chunk_keys.view(), true); !r) return r;
  }
  indexed_->store(true);
  return done{};
}

outcome<object_id> gridfs_bucket::upload_from_stream(std::string_view filename,
                                                     std::istream& source,
                                                     const gridfs_upload_options& options) {
  const object_id id = generate();
  const bson::document holder = object_id_field(id);
  auto r = upload(*holder.view().find("_id"), filename, source, options);
  if (!r) return std::move(r).error();
  return id;
}

outcome<done> gridfs_bucket::upload_from_stream_with_id(bson::element id, std::string_view filename,
                                                        std::istream& source,
                                                        const gridfs_upload_options& options) {
  return upload(id, filename, source, options);
}

outcome<object_id> gridfs_bucket::upload_from_bytes(std::string_view filename,
                                                    std::span<const std::uint8_t> data,
                                                    const gridfs_upload_options& options) {
  // A stream over the caller's bytes, without copying them.
  struct span_buf : std::streambuf {
    explicit span_buf(std::span<const std::uint8_t> d) {
      char* p = const_cast<char*>(reinterpret_cast<const char*>(d.data()));
      setg(p, p, p + d.size());
    }
  } buf(data);
  std::istream in(&buf);
  return upload_from_stream(filename, in, options);
}

outcome<done> gridfs_bucket::upload(bson::element id, std::string_view filename,
                                    std::istream& source, const gridfs_upload_options& options) {
  const std::int64_t chunk_size = options.chunk_size_bytes.value_or(options_.chunk_size_bytes);
  if (chunk_size <= 0 || chunk_size > max_chunk_size) {
    failure f(oid::error{oid::errc::invalid_value, 0});
    f.message = "GridFS chunk size " + std::to_string(chunk_size) + " is not in 1.." +
                std::to_string(max_chunk_size);
    return f;
  }
  const whole_operation op(*this);
  if (auto r = ensure_indexes(op); !r) return r;

  insert_options writes;
  writes.write_concern = options_.write_concern;
  // On failure part way, the chunks this upload wrote go, by their own _ids (not by files_id: a
  // file already stored under the same id keeps its chunks). Best effort: the first error is the
  // one reported.
  std::vector<object_id> written;
  const auto abandon = [&](failure f) -> outcome<done> {
    write_options w;
    w.write_concern = options_.write_concern;
    constexpr std::size_t per_delete = 10'000;
    for (std::size_t at = 0; at < written.size(); at += per_delete) {
      bson::builder filter;
      filter.open_document("_id").open_array("$in");
      const std::size_t end = std::min(written.size(), at + per_delete);
      for (std::size_t i = at; i < end; ++i) {
        filter.append_object_id(std::to_string(i - at), written[i]);
      }
      filter.close().close();
      (void)op.chunks().delete_many(filter.view(), w);
    }
    return f;
  };

  std::optional<md5_digest> md5;
  if (options.md5) md5.emplace();
  const std::size_t per_batch =
      std::max<std::size_t>(1, upload_batch_bytes / static_cast<std::size_t>(chunk_size));
  // Each chunk is read straight into its document, with no buffer to copy from: a full chunk,
  // the common case, goes out as read; the shorter last one is written again at its length.
  const auto chunk_bytes = static_cast<std::size_t>(chunk_size);
  std::vector<bson::document> batch;
  std::vector<bson::document_view> views;
  std::int64_t length = 0;
  std::int32_t n = 0;
  bool end = false;
  while (!end) {
    batch.clear();
    while (batch.size() < per_batch) {
      const object_id chunk_id = generate();
      bson::builder chunk(chunk_bytes + 256);
      chunk.append_object_id("_id", chunk_id);
      chunk.append_element("files_id", id);
      chunk.append_int32("n", n);
      auto space =
          chunk.try_append_binary_space("data", bson::binary_subtype::generic, chunk_bytes);
      if (!space) {
        return abandon(problem(errc::stream_failed, "GridFS upload: a chunk of " +
                                                        std::to_string(chunk_bytes) +
                                                        " bytes does not fit a document"));
      }
      const auto got = read_some(source, *space);
      if (!got) {
        return abandon(problem(errc::stream_failed, "GridFS upload of '" + std::string(filename) +
                                                        "': reading the source failed after " +
                                                        std::to_string(length) + " bytes"));
      }
      if (*got == 0) {
        end = true;
        break;
      }
      if (n == std::numeric_limits<std::int32_t>::max()) {
        return abandon(
            problem(errc::stream_failed, "GridFS upload: more chunks than n can number"));
      }
      const std::span<const std::uint8_t> bytes(space->data(), *got);
      if (md5) md5->update(bytes);
      if (*got < chunk_bytes) {
        bson::builder last(*got + 256);
        last.append_object_id("_id", chunk_id);
        last.append_element("files_id", id);
        last.append_int32("n", n);
        last.append_binary("data", bson::binary_subtype::generic, bytes);
        batch.push_back(std::move(last).extract());
        end = true;
      } else {
        batch.push_back(std::move(chunk).extract());
      }
      ++n;
      length += static_cast<std::int64_t>(*got);
      if (end) break;
    }
    if (batch.empty()) break;
    views.clear();
    for (const auto& d : batch) views.push_back(d.view());
    auto inserted = op.chunks().insert_many(views, writes);
    // Ordered inserts: what went before the first refused chunk is stored.
    const std::size_t stored =
        inserted ? batch.size()
                 : static_cast<std::size_t>(std::max<std::int64_t>(
                       0, std::min<std::int64_t>(inserted.error().partial_result.inserted,
                                                 static_cast<std::int64_t>(batch.size()))));
    for (std::size_t i = 0; i < stored; ++i) {
      written.push_back(batch[i].view().find("_id")->get_object_id().value());
    }
    if (!inserted) return abandon(std::move(inserted).error());
  }

  bson::builder file;
  file.append_element("_id", id);
  file.append_int64("length", length);
  file.append_int32("chunkSize", static_cast<std::int32_t>(chunk_size));
  const auto now =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  file.append_date_time("uploadDate", now.time_since_epoch().count());
  file.append_string("filename", filename);
  if (md5) {
    const auto hex = md5->hex();
    if (!hex) return abandon(problem(errc::crypto_failed, "GridFS upload: MD5 failed (OpenSSL)"));
    file.append_string("md5", *hex);
  }
  if (!options.metadata.empty()) file.append_document("metadata", options.metadata);
  const bson::document file_doc = std::move(file).extract();
  auto stored = op.files().insert_one(file_doc.view(), writes);
  if (!stored) return abandon(std::move(stored).error());
  return done{};
}

// ---- downloads ------------------------------------------------------------------------------

outcome<std::uint64_t> gridfs_bucket::download_to_stream(bson::element id, std::ostream& out) {
  const bson::document filter = equals("_id", id);
  find_options o;
  o.read_preference = options_.read_preference;
  const whole_operation op(*this);
  auto file = op.files().find_one(filter.view(), o);
  if (!file) return std::move(file).error();
  if (!*file) return problem(errc::file_not_found, "GridFS: no file with that _id");
  return download((*file)->view(), out, op);
}

outcome<std::uint64_t> gridfs_bucket::download_to_stream(const object_id& id, std::ostream& out) {
  const bson::document holder = object_id_field(id);
  return download_to_stream(*holder.view().find("_id"), out);
}

outcome<std::uint64_t> gridfs_bucket::download_to_stream_by_name(std::string_view filename,
                                                                 std::ostream& out,
                                                                 std::int32_t revision) {
  bson::builder filter;
  filter.append_string("filename", filename);
  // Uploads in the same millisecond share an uploadDate; _id breaks the tie, and for the
  // ObjectIds the bucket makes (increasing within a process) that is the order of upload.
  const std::int32_t direction = revision >= 0 ? 1 : -1;
  bson::builder sort;
  sort.append_int32("uploadDate", direction).append_int32("_id", direction);
  find_options o;
  o.sort = sort.view();
  o.skip = revision >= 0 ? revision : -static_cast<std::int64_t>(revision) - 1;
  o.limit = 1;
  o.read_preference = options_.read_preference;
  const whole_operation op(*this);
  auto file = op.files().find_one(filter.view(), o);
  if (!file) return std::move(file).error();
  if (*file) return download((*file)->view(), out, op);
  // No such revision: is there any file of that name?
  find_options any;
  any.read_preference = options_.read_preference;
  auto first = op.files().find_one(filter.view(), any);
  if (!first) return std::move(first).error();
  if (!*first) {
    return problem(errc::file_not_found, "GridFS: no file named '" + std::string(filename) + "'");
  }
  return problem(errc::revision_not_found, "GridFS: the file '" + std::string(filename) +
                                               "' has no revision " + std::to_string(revision));
}

outcome<std::uint64_t> gridfs_bucket::download(bson::document_view file, std::ostream& out,
                                               const whole_operation& op) {
  const auto id = file.find("_id");
  const auto length_e = file.find("length");
  const auto chunk_e = file.find("chunkSize");
  // Plain numbers with -1 for "absent" (GCC 12 misreads optionals here as uninitialized).
  std::int64_t length = -1, chunk_size = -1;
  if (length_e) length = integer_of(*length_e).value_or(-1);
  if (chunk_e) chunk_size = integer_of(*chunk_e).value_or(-1);
  if (!id) return problem(errc::corrupt_file, "GridFS: a files document without _id");
  if (length < 0) {
    return problem(errc::corrupt_file, "GridFS: the files document's length is not a size");
  }
  if (chunk_size <= 0 || chunk_size > max_chunk_size) {
    return problem(errc::corrupt_file, "GridFS: the files document's chunkSize is not in 1.." +
                                           std::to_string(max_chunk_size));
  }
  if (length == 0) return std::uint64_t{0};
  // No overflow for any length a server may claim.
  const std::int64_t count = length / chunk_size + (length % chunk_size != 0 ? 1 : 0);
  const std::int64_t last_size = length - (count - 1) * chunk_size;

  const bson::document filter = equals("files_id", *id);
  bson::builder sort;
  sort.append_int32("n", 1);
  find_options o;
  o.sort = sort.view();
  // At most about 8 MiB of chunks a batch: the memory a download holds, and well inside the
  // 16 MiB reply a server may send (FerretDB v1 does not cut batches by size itself).
  o.batch_size = static_cast<std::int32_t>(std::max<std::int64_t>(1, (8 << 20) / chunk_size));
  o.read_preference = options_.read_preference;
  // The chunks' cursor lives within what is left (timeout_mode cursor_lifetime, the default).
  auto cur = op.chunks().find(filter.view(), o);
  if (!cur) return std::move(cur).error();
  std::int64_t expected = 0;
  std::uint64_t written = 0;
  while (true) {
    auto more = cur->next();
    if (!more) return std::move(more).error();
    if (!*more) break;
    const auto chunk = cur->current();
    const auto n_e = chunk.find("n");
    const auto n = n_e ? integer_of(*n_e) : std::nullopt;
    if (!n || *n > expected) {
      return problem(errc::corrupt_file,
                     "GridFS: chunk " + std::to_string(expected) + " is missing (ChunkIsMissing)");
    }
    if (*n < expected || *n >= count) {
      return problem(errc::corrupt_file, "GridFS: an extra chunk, n " + std::to_string(*n) +
                                             ", beyond the " + std::to_string(count) +
                                             " the length needs (ExtraChunk)");
    }
    const auto data_e = chunk.find("data");
    const auto data = data_e
                          ? data_e->get_binary()
                          : oid::result<bson::binary_view>(oid::error{oid::errc::type_mismatch, 0});
    const std::int64_t want = *n == count - 1 ? last_size : chunk_size;
    if (!data || static_cast<std::int64_t>(data->bytes.size()) != want) {
      return problem(errc::corrupt_file,
                     "GridFS: chunk " + std::to_string(*n) + " holds " +
                         (data ? std::to_string(data->bytes.size()) + " bytes" : "no binary data") +
                         ", not " + std::to_string(want) + " (ChunkIsWrongSize)");
    }
    out.write(reinterpret_cast<const char*>(data->bytes.data()),
              static_cast<std::streamsize>(data->bytes.size()));
    if (!out) {
      return problem(errc::stream_failed, "GridFS download: writing the destination failed after " +
                                              std::to_string(written) + " bytes");
    }
    written += data->bytes.size();
    ++expected;
  }
  if (expected < count) {
    return problem(errc::corrupt_file,
                   "GridFS: chunk " + std::to_string(expected) + " is missing (ChunkIsMissing)");
  }
  return written;
}

// ---- the rest -------------------------------------------------------------------------------

outcome<cursor> gridfs_bucket::find(bson::document_view filter, const find_options& options) {
  find_options o = options;
  if (!o.read_preference) o.read_preference = options_.read_preference;
  return files_.find(filter, o);
}

outcome<done> gridfs_bucket::delete_file(bson::element id) {
  write_options w;
  w.write_concern = options_.write_concern;
  const bson::document filter = equals("_id", id);
  const whole_operation op(*this);
  auto removed = op.files().delete_one(filter.view(), w);
  if (!removed) return std::move(removed).error();
  const bson::document chunks = equals("files_id", id);
  auto gone = op.chunks().delete_many(chunks.view(), w);
  if (!gone) return std::move(gone).error();
  if (*removed == 0) return problem(errc::file_not_found, "GridFS: no file with that _id");
  return done{};
}

outcome<done> gridfs_bucket::delete_file(const object_id& id) {
  const bson::document holder = object_id_field(id);
  return delete_file(*holder.view().find("_id"));
}

outcome<done> gridfs_bucket::delete_by_name(std::string_view filename) {
  bson::builder filter;
  filter.append_string("filename", filename);
  find_options o;
  bson::builder id_only;
  id_only.append_int32("_id", 1);
  o.projection = id_only.view();
  o.read_preference = read_preference{};  // the primary, where the deletes go
  const whole_operation op(*this);
  auto cur = op.files().find(filter.view(), o);
  if (!cur) return std::move(cur).error();
  // The ids first, then the deletes: `$in` of every id, in batches that stay well inside a
  // message.
  std::vector<bson::document> ids;
  while (true) {
    auto more = cur->next();
    if (!more) return std::move(more).error();
    if (!*more) break;
    ids.emplace_back(cur->current());
  }
  if (ids.empty()) {
    return problem(errc::file_not_found, "GridFS: no file named '" + std::string(filename) + "'");
  }
  write_options w;
  w.write_concern = options_.write_concern;
  constexpr std::size_t per_delete = 10'000;
  for (std::size_t at = 0; at < ids.size(); at += per_delete) {
    bson::builder in_files, in_chunks;
    in_files.open_document("_id").open_array("$in");
    in_chunks.open_document("files_id").open_array("$in");
    const std::size_t end = std::min(ids.size(), at + per_delete);
    for (std::size_t i = at; i < end; ++i) {
      const auto id = ids[i].view().find("_id");
      if (!id) continue;
      in_files.append_element(std::to_string(i - at), *id);
      in_chunks.append_element(std::to_string(i - at), *id);
    }
    in_files.close().close();
    in_chunks.close().close();
    auto f = op.files().delete_many(in_files.view(), w);
    if (!f) return std::move(f).error();
    auto c = op.chunks().delete_many(in_chunks.view(), w);
    if (!c) return std::move(c).error();
  }
  return done{};
}

outcome<done> gridfs_bucket::rename(bson::element id, std::string_view new_filename) {
  const bson::document filter = equals("_id", id);
  bson::builder set;
  set.open_document("$set").append_string("filename", new_filename).close();
  write_options w;
  w.write_concern = options_.write_concern;
  auto r = files_.update_one(filter.view(), set.view(), w);
  if (!r) return std::move(r).error();
  if (r->matched == 0) return problem(errc::file_not_found, "GridFS: no file with that _id");
  return done{};
}

outcome<done> gridfs_bucket::rename_by_name(std::string_view filename,
                                            std::string_view new_filename) {
  bson::builder filter;
  filter.append_string("filename", filename);
  bson::builder set;
  set.open_document("$set").append_string("filename", new_filename).close();
  write_options w;
  w.write_concern = options_.write_concern;
  auto r = files_.update_many(filter.view(), set.view(), w);
  if (!r) return std::move(r).error();
  if (r->matched == 0) {
    return problem(errc::file_not_found, "GridFS: no file named '" + std::string(filename) + "'");
  }
  return done{};
}

outcome<done> gridfs_bucket::drop() {
  const whole_operation op(*this);
  if (auto r = op.files().drop(); !r) return r;
  if (auto r = op.chunks().drop(); !r) return r;
  indexed_->store(false);
  return done{};
}

}  // namespace oid::mongo
