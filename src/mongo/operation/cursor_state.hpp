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
#include <oid/mongo/outcome.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/operation.hpp"

namespace oid::mongo::detail {}  // namespace oid::mongo::detail

namespace oid::mongo {

// What a cursor keeps between getMores. In oid::mongo, not detail: `mongo::cursor` holds it as an
// opaque pointer (declared in its public header, defined only here).
struct cursor_state {
  std::shared_ptr<client_state> client;
  // The implicit session of the operation that opened the cursor: its getMore and killCursors
  // carry its lsid, and it goes back to the pool when the cursor is exhausted or closed.
  detail::implicit_session session;
  std::optional<detail::lease> conn;
  std::string db, coll;
  std::int64_t id = 0;
  std::int32_t batch_size = 0;
  // A tailable cursor: an empty batch is "nothing new yet", not the end. Its getMores carry
  // maxTimeMS = max_await_time when set (awaitData).
  bool tailable = false;
  std::optional<std::chrono::milliseconds> max_await_time;
  bool polled = false;              // tailable: the last getMore brought nothing
  detail::receive_buffer received;  // the reply the batch is in (from fetch)
  // Or the reply given to load (optional: a default document allocates, and most cursors read
  // into `received`).
  std::optional<bson::document> reply;
  bson::document_iterator it, end;
  bson::document_view current;

  // Takes the cursor document of a find/getMore/aggregate reply. Failure: unexpected_reply.
  outcome<done> load(bson::document&& r, std::string_view batch_key);
  // The same for a reply in `received`, after `fetch`.
  outcome<done> load(bson::document_view r, std::string_view batch_key);

  // Runs `cmd` on `l` and keeps the reply in `received` (`l` gets the previous batch's buffer):
  // transport errors and ok: 0 become failures, as detail::command.
  outcome<bson::document_view> fetch(detail::lease& l, std::string_view db,
                                     bson::document_view cmd);

  // Runs `cmd`, which opens a server cursor on `coll` (find, listCollections), on a connection
  // borrowed from `client`'s pool, in an implicit session, and returns the state holding the
  // first batch and, while the server has more, that connection and session. `retryable`: the
  // command is retried once after a retryable error (retryable reads; getMore never is).
  // `where`: the server to read from (null: the client's read preference).
  static outcome<std::unique_ptr<cursor_state>> open(std::shared_ptr<client_state> client,
                                                     std::string db, std::string coll,
                                                     bson::document_view cmd,
                                                     std::int32_t batch_size, bool retryable = true,
                                                     const read_preference* where = nullptr);
};

}  // namespace oid::mongo

namespace oid::mongo::detail {

using mongo::cursor_state;

// Every document left in `c`, copied out (the whole result of listCollections, listIndexes).
outcome<std::vector<bson::document>> read_all(mongo::cursor& c);

}  // namespace oid::mongo::detail
