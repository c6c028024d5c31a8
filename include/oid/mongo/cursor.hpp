// oid/mongo/cursor.hpp: the results of a find, fetched batch by batch.
//
// A `cursor` holds the current batch of a server cursor and the connection it came from. `next()`
// steps through the batch and, when it runs out while the server still has results, sends
// `getMore` for the next batch. Dropping a cursor the server still holds sends `killCursors`, so
// the server frees it at once instead of after its ten-minute idle timeout.
//
// The documents are not copied: `current()` is a view into the reply as it was received (and
// validated), which the cursor keeps until it fetches the next batch. Copy a document that must
// outlive the next `next()` (`oid::bson::document(c->current())`).
//
//     auto c = coll.find(filter);                       // outcome<cursor>
//     while (true) {
//       auto more = c->next();                          // outcome<bool>
//       if (!more) return report(more.error());         // getMore failed
//       if (!*more) break;                              // no more documents
//       use(c->current());                              // valid until the next next()
//     }
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <oid/bson/view.hpp>
#include <oid/mongo/outcome.hpp>
#include <optional>

namespace oid::mongo {

struct cursor_state;  // opaque: a cursor's state between batches, defined inside the library

/// A server cursor being read. Movable, not copyable; use from one thread at a time. Holds one of
/// the client's connections until it is exhausted or destroyed.
class cursor {
 public:
  /// An exhausted cursor.
  cursor() noexcept;
  cursor(cursor&&) noexcept;
  cursor& operator=(cursor&&) noexcept;
  cursor(const cursor&) = delete;
  cursor& operator=(const cursor&) = delete;
  /// Sends killCursors when the server still holds the cursor (errors are ignored; see `close`).
  ~cursor();

  /// Closes the cursor now: killCursors when the server still holds it (with timeoutMS
  /// `timeout`, else the cursor's, given afresh), and the connection goes back to the pool. A
  /// cursor whose getMore timed out lost its connection with the server's cursor still open: it
  /// is killed through another connection to the same server. The cursor is exhausted
  /// afterwards, whatever the outcome. Errors: those of the killCursors command.
  outcome<done> close(std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  /// Moves to the next document: true when there is one (read it with `current()`), false at the
  /// end. Fetches the next batch with getMore when needed. Errors: those of a command (transport
  /// codes, or server_error such as CursorNotFound); after an error the cursor is exhausted.
  ///
  /// A tailable cursor (find_options::cursor_kind) returns false when a getMore brought nothing
  /// new (with awaitData, after the server waited up to max_await_time) and stays `alive()`:
  /// call `next()` again later for what was appended since.
  ///
  ///     while (cur.alive()) {
  ///       while (auto more = cur.next(); more && *more) follow(cur.current());
  ///     }
  outcome<bool> next();
  /// True while the cursor may still give documents: a batch not yet read, or a server cursor
  /// still open. False once the results are read, after an error, and for a tailable cursor
  /// whose server cursor died (its capped collection was dropped, say).
  bool alive() const noexcept;
  /// The document `next()` moved to: a view into the received batch, valid until the next call
  /// to `next()` or the cursor's destruction.
  bson::document_view current() const noexcept;
  /// The server's cursor id: 0 once the server has no more results.
  std::int64_t id() const noexcept;

 private:
  friend class collection;
  friend class client;
  friend class database;
  explicit cursor(std::unique_ptr<cursor_state> state) noexcept;
  std::unique_ptr<cursor_state> state_;
};

}  // namespace oid::mongo
