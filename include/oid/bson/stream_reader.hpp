// oid/bson/stream_reader.hpp: concatenated BSON documents from a stream, one at a time.
//
// A `stream_reader` reads what mongodump writes to a .bson file, and what `oid bson from-json`
// writes: BSON documents one after the other, with nothing between them. It reads through one
// buffer that grows only as far as the largest document allowed, so a stream of any size costs
// bounded memory, and it validates each document (validate.hpp) before handing out a view of it.
// Its shape is the client's cursor's: `next()` moves, `current()` reads.
//
//     oid::bson::stream_reader reader(file);
//     for (;;) {
//       auto more = reader.next();                      // result<bool>
//       if (!more) {                                    // what, and where (absolute offsets)
//         report(reader.index(), reader.document_offset(), more.error());
//         if (!reader.can_continue()) break;            // the document boundaries are lost
//         continue;                                     // one bad document, skipped
//       }
//       if (!*more) break;                              // the end of the stream
//       use(reader.current());                          // valid until the next next()
//     }
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <oid/result.hpp>
#include <optional>

namespace oid::bson {

/// Reads concatenated BSON documents from a stream, validating each. Movable (a moved-from reader
/// may only be destroyed or assigned to), not copyable; the stream must outlive the reader.
/// Memory: one buffer of at most max(1 MiB, `max_size` + 4) bytes.
class stream_reader {
 public:
  /// Reads from `in`. Each document is checked with `validate(bytes, options)`: `max_size` (at
  /// most 2^31 - 1) bounds a document and so the buffer, `check_utf8` and `max_depth` are as
  /// there, and `allow_trailing` is ignored (a document is exactly what its length prefix says).
  explicit stream_reader(std::istream& in, const validate_options& options = {});
  ~stream_reader();
  stream_reader(stream_reader&&) noexcept;
  stream_reader& operator=(stream_reader&&) noexcept;
  stream_reader(const stream_reader&) = delete;
  stream_reader& operator=(const stream_reader&) = delete;

  /// Moves to the next document: true when there is one (read it with `current()`), false at the
  /// end of the stream. Every error offset is absolute in the stream. The errors after which the
  /// reader cannot go on (`can_continue()` is false; `next()` returns false from then on), all
  /// about the document at `document_offset()`:
  ///
  ///   truncated           the stream ends inside the length prefix (`length_prefix()` is empty)
  ///                       or before the end the prefix declares; offset: where the stream ends,
  ///                       so `offset - document_offset()` bytes of the document are there
  ///   bad_length_prefix   a length prefix below 5; offset: the document's
  ///   too_large           a length prefix above `max_size`; offset: the document's
  ///   io_error            the stream failed before the end of the document (or of its prefix);
  ///                       offset: how far it was read
  ///
  /// After any other error the document's length was sane and the reader has moved past it
  /// (`can_continue()` is true): the error is `validate()`'s for that document (which may also be
  /// truncated or bad_length_prefix, for a length inside it), at its absolute offset.
  result<bool> next();

  /// The document `next()` moved to. Valid until the next call to `next()` or the reader's end;
  /// the empty document before the first document and after an error.
  document_view current() const noexcept;
  /// False after an error the reader cannot go on from.
  bool can_continue() const noexcept;
  /// The 0-based index of the current document, or of the last one attempted.
  std::size_t index() const noexcept;
  /// The offset in the stream of that document's first byte.
  std::uint64_t document_offset() const noexcept;
  /// That document's length prefix; empty when the stream ended inside it.
  std::optional<std::int32_t> length_prefix() const noexcept;
  /// The offset in the stream just after the last document the reader moved past (the start of
  /// the document it stopped at, after an error it cannot go on from).
  std::uint64_t bytes_read() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace oid::bson
