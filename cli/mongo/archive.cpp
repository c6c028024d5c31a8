// mongodump's archive format: the writer and the reader (archive.hpp).
#include "mongo/archive.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>

#include "mongo/name_list.hpp"
#include "mongo/tools.hpp"

namespace oid::cli::archive {
namespace {

// ---- CRC-64 (Go's hash/crc64, ECMA table), slicing by 8 -------------------------------------

constexpr std::uint64_t ecma_reflected = 0xc96c5795d7870f42;

using crc_tables = std::array<std::array<std::uint64_t, 256>, 8>;

constexpr crc_tables make_tables() {
  crc_tables t{};
  for (std::uint64_t i = 0; i < 256; ++i) {
    std::uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ ecma_reflected : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t i = 0; i < 256; ++i) {
    for (std::size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr crc_tables tables = make_tables();

// ---- little-endian bytes -----------------------------------------------------------------------

void put_u32(std::string& out, std::uint32_t v) {
  const char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 24)};
  out.append(b, 4);
}

void put_u64(std::string& out, std::uint64_t v) {
  put_u32(out, static_cast<std::uint32_t>(v));
  put_u32(out, static_cast<std::uint32_t>(v >> 32));
}

std::uint32_t get_u32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

void put_string_element(std::string& out, std::string_view key, std::string_view value) {
  out += '\x02';
  out += key;
  out += '\0';
  put_u32(out, static_cast<std::uint32_t>(value.size() + 1));
  out += value;
  out += '\0';
}

// A namespace header, {db, collection, EOF, CRC} in that order, as mongo-tools write it (the
// non-EOF header carries CRC 0 too).
void append_namespace_header(std::string& out, std::string_view db, std::string_view collection,
                             bool eof, std::uint64_t crc) {
  const std::size_t start = out.size();
  put_u32(out, 0);  // back-patched
  put_string_element(out, "db", db);
  put_string_element(out, "collection", collection);
  out += '\x08';
  out.append("EOF", 4);
  out += eof ? '\x01' : '\x00';
  out += '\x12';
  out.append("CRC", 4);
  put_u64(out, crc);
  out += '\0';
  const auto length = static_cast<std::uint32_t>(out.size() - start);
  for (int i = 0; i < 4; ++i) out[start + i] = static_cast<char>(length >> (8 * i));
}

std::string_view bytes_of(bson::document_view d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

}  // namespace

std::uint64_t crc64(std::uint64_t crc, std::span<const std::uint8_t> bytes) noexcept {
  crc = ~crc;
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  while (n >= 8) {
    crc ^= std::uint64_t{p[0]} | std::uint64_t{p[1]} << 8 | std::uint64_t{p[2]} << 16 |
           std::uint64_t{p[3]} << 24 | std::uint64_t{p[4]} << 32 | std::uint64_t{p[5]} << 40 |
           std::uint64_t{p[6]} << 48 | std::uint64_t{p[7]} << 56;
    crc = tables[7][crc & 0xff] ^ tables[6][(crc >> 8) & 0xff] ^ tables[5][(crc >> 16) & 0xff] ^
          tables[4][(crc >> 24) & 0xff] ^ tables[3][(crc >> 32) & 0xff] ^
          tables[2][(crc >> 40) & 0xff] ^ tables[1][(crc >> 48) & 0xff] ^ tables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  for (; n > 0; --n, ++p) crc = tables[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// ---- writing ------------------------------------------------------------------------------------

void append_prelude(std::string& out, const header& h,
                    std::span<const collection_metadata> collections) {
  put_u32(out, magic_number);
  bson::builder b;
  b.append_int32("concurrent_collections", h.concurrent_collections)
      .append_string("version", h.version)
      .append_string("server_version", h.server_version)
      .append_string("tool_version", h.tool_version);
  out += bytes_of(b.view());
  for (const auto& c : collections) {
    bson::builder m;
    m.append_string("db", c.db)
        .append_string("collection", c.collection)
        .append_string("metadata", c.metadata);
    // mongo-tools' `size` is a Go int: int32 when it fits, else int64.
    if (c.size >= INT32_MIN && c.size <= INT32_MAX) {
      m.append_int32("size", static_cast<std::int32_t>(c.size));
    } else {
      m.append_int64("size", c.size);
    }
    m.append_string("type", c.type);
    out += bytes_of(m.view());
  }
  put_u32(out, terminator);
}

void append_segment(std::string& out, std::string_view db, std::string_view collection,
                    std::string_view documents) {
  append_namespace_header(out, db, collection, false, 0);
  out += documents;
  put_u32(out, terminator);
}

void append_eof(std::string& out, std::string_view db, std::string_view collection,
                std::uint64_t crc) {
  append_namespace_header(out, db, collection, true, crc);
  put_u32(out, terminator);
}

bool writer::put(std::string_view head, std::string_view body) {
  if (failed_) return false;
  if (!sink_(head) || (!body.empty() && !sink_(body))) failed_ = true;
  return !failed_;
}

bool writer::write_prelude(const header& h, std::span<const collection_metadata> collections) {
  std::lock_guard lock(mutex_);
  scratch_.clear();
  append_prelude(scratch_, h, collections);
  return put(scratch_, {});
}

bool writer::write_segment(std::string_view db, std::string_view collection,
                           std::string_view documents) {
  std::lock_guard lock(mutex_);
  // The header, then the caller's documents as they are (no copy), then the terminator with the
  // next block's header or alone.
  scratch_.clear();
  append_namespace_header(scratch_, db, collection, false, 0);
  if (!put(scratch_, documents)) return false;
  scratch_.clear();
  put_u32(scratch_, terminator);
  return put(scratch_, {});
}

bool writer::write_eof(std::string_view db, std::string_view collection, std::uint64_t crc) {
  std::lock_guard lock(mutex_);
  scratch_.clear();
  append_eof(scratch_, db, collection, crc);
  return put(scratch_, {});
}

namespace_writer::namespace_writer(writer& w, std::string db, std::string collection,
                                   std::size_t segment_bytes)
    : w_(w),
      db_(std::move(db)),
      collection_(std::move(collection)),
      segment_bytes_(segment_bytes) {}

bool namespace_writer::add(std::span<const std::uint8_t> document) {
  crc_ = crc64(crc_, document);
  buffer_.append(reinterpret_cast<const char*>(document.data()), document.size());
  return buffer_.size() < segment_bytes_ || flush();
}

bool namespace_writer::flush() {
  if (buffer_.empty()) return true;
  const bool ok = w_.write_segment(db_, collection_, buffer_);
  buffer_.clear();  // keeps its capacity for the next segment
  return ok;
}

bool namespace_writer::finish() { return flush() && w_.write_eof(db_, collection_, crc_); }

// ---- reading ------------------------------------------------------------------------------------

namespace {

constexpr std::size_t initial_buffer = std::size_t{1} << 20;

const char* type_name(bson::type t) {
  switch (t) {
  case bson::type::string: return "a string";
  case bson::type::int32: return "an int32";
  case bson::type::int64: return "an int64";
  case bson::type::boolean: return "a boolean";
  case bson::type::double_: return "a double";
  default: return "another type";
  }
}

}  // namespace

reader::reader(std::istream& in) : in_(in) {}

archive_error reader::fail(archive_errc code, std::uint64_t offset, std::string ns,
                           std::string what) {
  if (code != archive_errc::crc_mismatch && code != archive_errc::invalid_document) {
    stopped_ = true;
  }
  archive_error e;
  e.code = code;
  e.offset = offset;
  e.message = ns.empty() ? std::move(what) : ns + ": " + what;
  e.message += " (at byte " + std::to_string(offset) + " of the archive)";
  e.ns = std::move(ns);
  return e;
}

bool reader::fill(std::size_t n) {
  if (end_ - begin_ >= n) return true;
  if (buf_.size() < n || begin_ + n > buf_.size()) {
    // Move what is left to the front, growing the buffer only as far as `n` needs.
    const std::size_t left = end_ - begin_;
    if (buf_.size() < n) {
      std::vector<std::uint8_t> bigger(std::max(n, initial_buffer));
      std::copy(buf_.begin() + static_cast<std::ptrdiff_t>(begin_),
                buf_.begin() + static_cast<std::ptrdiff_t>(end_), bigger.begin());
      buf_.swap(bigger);
    } else if (left > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, left);
    }
    consumed_ += begin_;
    begin_ = 0;
    end_ = left;
  }
  while (end_ - begin_ < n) {
    if (!in_.good()) {
      io_ = io_ || in_.bad();
      return false;
    }
    in_.read(reinterpret_cast<char*>(buf_.data() + end_),
             static_cast<std::streamsize>(buf_.size() - end_));
    end_ += static_cast<std::size_t>(in_.gcount());
  }
  return true;
}

// The 4 bytes of a length or a terminator. `eof` is set (and a value of 0 returned) when the
// input ends cleanly before them.
result<std::uint32_t, archive_error> reader::read_length(std::size_t ns_index, bool& eof) {
  eof = false;
  const std::uint64_t at = bytes_read();
  const auto ns = [&] { return ns_name(ns_index); };
  if (!fill(4)) {
    if (io_) return fail(archive_errc::io_error, at + (end_ - begin_), ns(), "read failed");
    if (end_ == begin_) {
      eof = true;
      return std::uint32_t{0};
    }
    return fail(archive_errc::truncated, at + (end_ - begin_), ns(),
                "the archive ends inside a length");
  }
  const std::uint32_t v = get_u32(buf_.data() + begin_);
  if (v == terminator) {
    begin_ += 4;
    return v;
  }
  if (v < 5) {
    return fail(archive_errc::bad_length, at, ns(),
                "a length of " + std::to_string(v) + " is neither a document's nor a terminator");
  }
  if (v > max_document_size) {
    return fail(archive_errc::too_large, at, ns(),
                "a document of " + std::to_string(v) + " bytes (at most " +
                    std::to_string(max_document_size) + ")");
  }
  return v;
}

// The document whose length prefix (already read, not consumed) is `length`: its bytes, not yet
// validated. The caller validates and consumes.
result<std::span<const std::uint8_t>, archive_error> reader::read_document(std::uint32_t length,
                                                                           std::size_t ns_index) {
  const std::uint64_t at = bytes_read();
  if (!fill(length)) {
    if (io_)
      return fail(archive_errc::io_error, at + (end_ - begin_), ns_name(ns_index), "read failed");
    return fail(archive_errc::truncated, at + (end_ - begin_), ns_name(ns_index),
                "the archive ends inside a document of " + std::to_string(length) +
                    " bytes that starts at byte " + std::to_string(at));
  }
  return std::span<const std::uint8_t>(buf_.data() + begin_, length);
}

std::string reader::key_of(std::string_view db, std::string_view collection) {
  // The database's length first: names may hold any byte, NUL included.
  std::string key = std::to_string(db.size());
  key += ':';
  key += db;
  key += collection;
  return key;
}

std::string reader::ns_name(std::size_t i) const {
  if (i >= collections_.size()) return {};
  return collections_[i].meta.db + '.' + collections_[i].meta.collection;
}

result<void, archive_error> reader::read_prelude() {
  if (!fill(4)) {
    if (io_) return fail(archive_errc::io_error, end_, "", "read failed");
    return fail(archive_errc::truncated, end_, "",
                end_ == 0 ? "the archive is empty" : "the archive ends inside its magic number");
  }
  if (get_u32(buf_.data()) != magic_number) {
    return fail(archive_errc::not_an_archive, 0, "",
                "not a mongodump archive (its first bytes are not the magic number 6d e2 99 81)");
  }
  begin_ += 4;

  // A prelude document: validated whole (it is small), then read field by field.
  const auto next_document =
      [&](std::string_view what,
          bool& is_terminator) -> result<bson::document_view, archive_error> {
    bool eof = false;
    const std::uint64_t at = bytes_read();
    auto length = read_length(none, eof);
    if (!length) return std::move(length).error();
    if (eof) {
      return fail(archive_errc::truncated, at, "",
                  std::string("the archive ends before its ") + std::string(what));
    }
    is_terminator = *length == terminator;
    if (is_terminator) return bson::document_view();
    auto doc = read_document(*length, none);
    if (!doc) return std::move(doc).error();
    auto valid = bson::validate(*doc);
    if (!valid) {
      return fail(archive_errc::bad_header, at + valid.error().offset, "",
                  std::string("the ") + std::string(what) +
                      " is not valid BSON: " + valid.error().message());
    }
    if (at + *length > max_prelude_bytes) {
      return fail(archive_errc::too_large, at, "",
                  "the prelude is larger than " + std::to_string(max_prelude_bytes) + " bytes");
    }
    begin_ += *length;
    return *valid;
  };
  const auto wrong_type = [&](std::uint64_t at, std::string_view what, const bson::element& e,
                              std::string_view want) {
    return fail(archive_errc::bad_header, at, "",
                std::string(what) + ": \"" + std::string(e.key()) + "\" is " + type_name(e.type()) +
                    ", not " + std::string(want));
  };

  bool is_terminator = false;
  const std::uint64_t header_at = bytes_read();
  auto h = next_document("header", is_terminator);
  if (!h) return std::move(h).error();
  if (is_terminator) {
    return fail(archive_errc::bad_header, header_at, "", "the archive has no header document");
  }
  for (const auto& e : *h) {
    const auto key = e.key();
    if (key == "concurrent_collections") {
      auto v = e.get_int32();
      if (!v) return wrong_type(header_at, "the header", e, "an int32");
      header_.concurrent_collections = *v;
    } else if (key == "version" || key == "server_version" || key == "tool_version") {
      auto v = e.get_string();
      if (!v) return wrong_type(header_at, "the header", e, "a string");
      (key == "version"          ? header_.version
       : key == "server_version" ? header_.server_version
                                 : header_.tool_version) = std::string(*v);
    }
  }

  index_.clear();
  while (true) {
    const std::uint64_t at = bytes_read();
    auto doc = next_document("collections' metadata", is_terminator);
    if (!doc) return std::move(doc).error();
    if (is_terminator) break;
    if (collections_.size() == max_collections) {
      return fail(archive_errc::too_large, at, "",
                  "the prelude announces more than " + std::to_string(max_collections) +
                      " collections (the most oid restores from one archive)");
    }
    collection_entry c;
    bool has_db = false, has_collection = false;
    for (const auto& e : *doc) {
      const auto key = e.key();
      if (key == "db" || key == "collection" || key == "metadata" || key == "type") {
        auto v = e.get_string();
        if (!v) return wrong_type(at, "a collection's metadata", e, "a string");
        if (key == "db") {
          c.meta.db = std::string(*v);
          has_db = true;
        } else if (key == "collection") {
          c.meta.collection = std::string(*v);
          has_collection = true;
        } else {
          (key == "metadata" ? c.meta.metadata : c.meta.type) = std::string(*v);
        }
      } else if (key == "size") {
        if (auto i32 = e.get_int32()) {
          c.meta.size = *i32;
        } else if (auto i64 = e.get_int64()) {
          c.meta.size = *i64;
        } else {
          return wrong_type(at, "a collection's metadata", e, "an integer");
        }
      }
    }
    if (!has_db || !has_collection) {
      return fail(archive_errc::bad_header, at, "",
                  "a collection's metadata without \"db\" or \"collection\"");
    }
    c.problem = database_name_problem(c.meta.db);
    if (c.problem.empty()) c.problem = collection_name_problem(c.meta.db, c.meta.collection);
    if (!index_.emplace(key_of(c.meta.db, c.meta.collection), collections_.size()).second) {
      return fail(archive_errc::bad_header, at, c.meta.db + '.' + c.meta.collection,
                  "announced twice in the prelude");
    }
    collections_.push_back(std::move(c));
  }
  states_.assign(collections_.size(), state::unopened);
  crcs_.assign(collections_.size(), 0);
  return {};
}

result<bool, archive_error> reader::read_block_header(item& out) {
  const std::uint64_t at = bytes_read();
  bool eof = false;
  auto length = read_length(none, eof);
  if (!length) return std::move(length).error();
  if (eof) {
    // The end: every announced namespace must have had its EOF. The message names a few.
    name_list open, unseen;
    std::size_t first = none;
    for (std::size_t i = 0; i < collections_.size(); ++i) {
      if (states_[i] == state::closed) continue;
      if (first == none) first = i;
      (states_[i] == state::open ? open : unseen).add(ns_name(i));
    }
    if (first != none) {
      std::string what = "the archive ends before the end of";
      if (!open.empty()) what += " the data of " + open.text();
      if (!open.empty() && !unseen.empty()) what += " and of";
      if (!unseen.empty()) what += " " + unseen.text() + " (never seen)";
      return fail(archive_errc::unfinished, at, ns_name(first), what);
    }
    stopped_ = true;
    out = item{};
    return true;
  }
  if (*length == terminator) {
    return fail(archive_errc::bad_header, at, "",
                "a terminator where a namespace's header should be");
  }
  auto doc = read_document(*length, none);
  if (!doc) return std::move(doc).error();
  auto valid = bson::validate(*doc);
  if (!valid) {
    return fail(archive_errc::bad_header, at + valid.error().offset, "",
                "a namespace header that is not valid BSON: " + valid.error().message());
  }
  std::string db, collection;
  bool has_db = false, has_collection = false, is_eof = false;
  std::uint64_t crc = 0;
  for (const auto& e : *valid) {
    const auto key = e.key();
    bool ok = true;
    if (key == "db" || key == "collection") {
      auto v = e.get_string();
      ok = v.has_value();
      if (ok) (key == "db" ? db : collection) = std::string(*v);
      (key == "db" ? has_db : has_collection) = true;
    } else if (key == "EOF") {
      auto v = e.get_bool();
      ok = v.has_value();
      if (ok) is_eof = *v;
    } else if (key == "CRC") {
      auto v = e.get_int64();
      ok = v.has_value();
      if (ok) crc = static_cast<std::uint64_t>(*v);
    } else {
      // As mongo-tools: a namespace header has these four fields and no other.
      return fail(archive_errc::bad_header, at, "",
                  "a namespace header with an unknown field \"" + std::string(key) + "\"");
    }
    if (!ok) {
      return fail(
          archive_errc::bad_header, at, "",
          "a namespace header whose \"" + std::string(key) + "\" is " + type_name(e.type()));
    }
  }
  begin_ += *length;
  if (!has_db || !has_collection || collection.empty()) {
    return fail(archive_errc::bad_header, at, "",
                "a namespace header without \"db\" or \"collection\"");
  }
  // The namespace: one the prelude announced, or (as mongodump writes a timeseries collection's
  // data before MongoDB 8.3) system.buckets.NAME of an announced timeseries NAME.
  // Found by a hash of the names: a prelude of many collections is not searched per block.
  std::size_t i = none;
  bool buckets = false;
  if (const auto it = index_.find(key_of(db, collection)); it != index_.end()) {
    i = it->second;
  } else if (constexpr std::string_view prefix = "system.buckets.";
             collection.starts_with(prefix)) {
    const auto of = index_.find(key_of(db, std::string_view(collection).substr(prefix.size())));
    if (of != index_.end() && collections_[of->second].meta.type == "timeseries") {
      i = of->second;
      buckets = true;
    }
  }
  const std::string ns = db + '.' + collection;
  if (i == none) {
    return fail(archive_errc::unknown_namespace, at, ns,
                "data for a namespace the archive's prelude does not announce");
  }
  if (states_[i] == state::closed) {
    return fail(archive_errc::namespace_closed, at, ns, "a header after the namespace's end");
  }
  states_[i] = state::open;
  in_block_ = true;
  if (!is_eof) {
    current_ = i;
    current_buckets_ = buckets;
    return false;
  }
  current_ = none;
  states_[i] = state::closed;
  if (crcs_[i] != crc) {
    auto e = fail(archive_errc::crc_mismatch, at, ns,
                  "the CRC-64 of the namespace's documents is " + std::to_string(crcs_[i]) +
                      ", its end says " + std::to_string(crc) + ": the data is corrupt");
    e.collection = i;
    return e;
  }
  out = item{};
  out.kind = item::namespace_end;
  out.collection = i;
  out.offset = at;
  out.buckets = buckets;
  return true;
}

result<item, archive_error> reader::next() {
  if (stopped_) return item{};
  while (true) {
    if (!in_block_) {
      item out;
      auto done = read_block_header(out);
      if (!done) return std::move(done).error();
      if (*done) return out;
      continue;
    }
    bool eof = false;
    auto length = read_length(current_, eof);
    if (!length) return std::move(length).error();
    if (eof) {
      return fail(archive_errc::truncated, bytes_read(), ns_name(current_),
                  "the archive ends inside a block (no terminator)");
    }
    if (*length == terminator) {
      in_block_ = false;
      current_ = none;
      continue;
    }
    const std::uint64_t at = bytes_read();
    if (current_ == none) {
      return fail(archive_errc::bad_header, at, "",
                  "a document after a namespace's end header (a block without a header)");
    }
    auto doc = read_document(*length, current_);
    if (!doc) return std::move(doc).error();
    const std::span<const std::uint8_t> bytes = *doc;
    crcs_[current_] = crc64(crcs_[current_], bytes);
    begin_ += *length;  // the bytes stay in buf_ until the next fill
    auto valid = bson::validate(bytes);
    if (!valid) {
      auto e = fail(archive_errc::invalid_document, at + valid.error().offset, ns_name(current_),
                    "the document at byte " + std::to_string(at) + ": " + valid.error().message());
      e.collection = current_;
      return e;
    }
    item out;
    out.kind = item::document;
    out.collection = current_;
    out.doc = *valid;
    out.offset = at;
    out.buckets = current_buckets_;
    return out;
  }
}

}  // namespace oid::cli::archive
