// What a cursor holds: its batch, its server cursor id and the connection it reads from. Shared by
// the cursor and the operations that open one (find, aggregate, listCollections). The batch stays
// in the buffer the reply was received in (taken from the connection, which gets the previous
// batch's buffer in exchange): its documents are views, never copied.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/cursor.hpp>
#include <oid/mongo/operation_options.hpp>
#include <oid/mongo/outcome.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/operation.hpp"
#include "mongo/operation/session_state.hpp"
#include "mongo/wire/connection.hpp"

namespace oid::mongo::detail {

// timeoutMS of an operation that opens a cursor, and what it bounds
// (oid/mongo/operation_options.hpp).
struct cursor_timeout {
  std::optional<std::chrono::milliseconds> timeout;  // unset: the legacy timeouts
  timeout_mode mode = timeout_mode::cursor_lifetime;
  // The opening command carries maxTimeMS: a cursor whose life timeoutMS bounds, and a tailable
  // awaitData one (whose getMores then carry min(max_await_time, time left - round trip)).
  bool opening_max_time = true;
};

// The timeoutMS that `asked` (an operation's own) or `inherited` (its handle's) gives a cursor,
// with the mode asked for or the default for the kind of cursor; invalid_argument for a mode
// without timeoutMS, or cursor_lifetime for a tailable cursor.
outcome<cursor_timeout> cursor_timeout_of(const std::optional<std::chrono::milliseconds>& asked,
                                          const std::optional<std::chrono::milliseconds>& inherited,
                                          std::optional<timeout_mode> mode, bool tailable,
                                          bool await_data = false);

}  // namespace oid::mongo::detail

namespace oid::mongo {

// What a cursor keeps between getMores. In oid::mongo, not detail: `mongo::cursor` holds it as an
// opaque pointer (declared in its public header, defined only here).
struct cursor_state {
  cursor_state() = default;
  cursor_state(const cursor_state&) = delete;
  cursor_state& operator=(const cursor_state&) = delete;
  // Gives `received` to the client for the next cursor (client_state::keep_spare_buffer).
  ~cursor_state();

  std::shared_ptr<client_state> client;
  // The implicit session of the operation that opened the cursor: its getMore and killCursors
  // carry its lsid, and it goes back to the pool when the cursor is exhausted or closed.
  detail::op_session session;
  // The explicit session, kept alive while the cursor lives (null: an implicit one).
  std::shared_ptr<session_state> explicit_session;
  std::optional<detail::lease> conn;
  std::string db, coll;
  std::int64_t id = 0;
  // The server the cursor lives on, and whether a getMore that timed out took the connection
  // with it while the server still holds the cursor (`close` kills it through another one).
  std::string address;
  bool orphaned = false;
  std::int32_t batch_size = 0;
  // A tailable cursor: an empty batch is "nothing new yet", not the end. Its getMores carry
  // maxTimeMS = max_await_time when set (awaitData).
  bool tailable = false;
  std::optional<std::chrono::milliseconds> max_await_time;
  // {comment: value} of the operation that opened the cursor: its getMores carry it too on a
  // server that takes it there (MongoDB 4.4, wire version 9, and later).
  std::optional<bson::document> comment;
  void keep_comment(const mongo::comment& c);
  // getMore and killCursors go to the namespace the first reply's cursor names (`ns`: a view's,
  // a database aggregate's "$cmd.aggregate", the target of a command run by run_cursor_command),
  // when it names a well-formed one; else to the command's.
  void follow_namespace(bson::document_view reply);
  bool polled = false;  // tailable: the last getMore brought nothing
  // timeoutMS: cursor_lifetime keeps the opening operation's limit for every getMore; iteration
  // gives each next() the timeout afresh; killCursors always gets it afresh.
  detail::cursor_timeout timeout;
  std::optional<detail::time_limit> limit;
  detail::receive_buffer received;  // the reply the batch is in (from fetch)
  // Or the reply given to load (optional: a default document allocates, and most cursors read
  // into `received`).
  std::optional<bson::document> reply;
  // The batch's documents not yet read: through the index `received` came with, when it lists
  // this batch (the connection made it while validating them, connection::read_reply), else
  // with the iterator. The index saves reading each element's header again from a batch of up to
  // 16 MB that has left the CPU caches since it was validated; `it` and `end` are then equal.
  std::span<const bson::detail::doc_span> indexed;
  bson::document_iterator it, end;
  bson::document_view current;

  // Takes the cursor document of a find/getMore/aggregate reply. Failure: unexpected_reply.
  outcome<done> load(bson::document&& r, std::string_view batch_key);
  // The same for a reply in `received`, after `fetch`.
  outcome<done> load(bson::document_view r, std::string_view batch_key);

  // True while the batch has documents left to read.
  bool batch_left() const noexcept { return !indexed.empty() || it != end; }
  // Moves `current` to the batch's next document; false when that element is not a document
  // (which only a batch read with the iterator can hold). Precondition: batch_left(). (It sets
  // `current` rather than returning the view: cursor::next then copies no optional, whose two
  // halves, stored apart and loaded as one, cost a stalled load per document.)
  bool next_in_batch() noexcept;

  // Runs `cmd` on `l` and keeps the reply in `received` (`l` gets the previous batch's buffer):
  // transport errors and ok: 0 become failures, as detail::command.
  outcome<bson::document_view> fetch(detail::lease& l, std::string_view db,
                                     bson::document_view cmd);

  // Runs `cmd`, which opens a server cursor on `coll` (find, listCollections), on a connection
  // borrowed from `client`'s pool, in an implicit session, and returns the state holding the
  // first batch and, while the server has more, that connection and session. `retryable`: the
  // command is retried once after a retryable error (retryable reads; getMore never is).
  // `where`: the server to read from (null: the read preference of `ctx`, the handle's, or
  // without one the client's). `ctx`: the handle's explicit session, if any; `concern`: the read
  // concern, for commands that take one.
  static outcome<std::unique_ptr<cursor_state>> open(
      std::shared_ptr<client_state> client, std::string db, std::string coll,
      bson::document_view cmd, std::int32_t batch_size, bool retryable = true,
      const read_preference* where = nullptr, detail::cursor_timeout timeout = {},
      const detail::handle_context* ctx = nullptr, const read_concern* concern = nullptr);
};

}  // namespace oid::mongo

namespace oid::mongo::detail {

using mongo::cursor_state;

// Every document left in `c`, copied out (the whole result of listCollections, listIndexes).
outcome<std::vector<bson::document>> read_all(mongo::cursor& c);

}  // namespace oid::mongo::detail
