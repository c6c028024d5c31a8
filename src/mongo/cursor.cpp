#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/mongo/cursor.hpp>
#include <optional>
#include <utility>

#include "mongo/operation/cursor_state.hpp"
#include "mongo/operation/retry.hpp"
#include "mongo/operation/write_checks.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

// cursor_state is declared in oid::mongo (the public cursor holds it opaquely) and works with the
// executor's types.
using detail::attempt;
using detail::int64_field;
using detail::lease;
using detail::op_session;
using detail::retry_kind;
using detail::time_limit;

outcome<done> detail::cursor_state::load(bson::document&& r, std::string_view batch_key) {
  reply.emplace(std::move(r));
  return load(reply->view(), batch_key);
}

outcome<done> detail::cursor_state::load(bson::document_view r, std::string_view batch_key) {
  indexed = {};
  const auto c = r.find("cursor");
  auto doc =
      c ? c->get_document() : result<bson::document_view>(oid::error{oid::errc::type_mismatch, 0});
  if (!doc) return failure(errc::unexpected_reply, "reply without a cursor document");
  const auto batch = doc->find(batch_key);
  auto arr = batch ? batch->get_array()
                   : result<bson::document_view>(oid::error{oid::errc::type_mismatch, 0});
  if (!arr)
    return failure(errc::unexpected_reply, "cursor reply without " + std::string(batch_key));
  id = int64_field(*doc, "id", 0);
  // The index describes the message at the start of `received`: it is this batch's only when the
  // reply lies there and the index's array is the one found here (a reply given to
  // load(document&&), or a batch found under another key or elsewhere in the reply, is read with
  // the iterator).
  const auto base = reinterpret_cast<std::uintptr_t>(received.data());
  const auto at = reinterpret_cast<std::uintptr_t>(r.data());
  if (received.batch_offset() != 0 && base != 0 && at >= base && at - base < received.capacity() &&
      arr->data() == received.data() + received.batch_offset()) {
    indexed = received.batch();
    it = end = arr->end();
  } else {
    it = arr->begin();
    end = arr->end();
  }
  if (id == 0) {  // nothing more to fetch: the connection and the session go back to the pools
    conn.reset();
    session.release();
  }
  return done{};
}

outcome<bson::document_view> detail::cursor_state::fetch(lease& l, std::string_view db,
                                                         bson::document_view cmd) {
  auto r = command_view(l, db, cmd);
  if (!r) return r;
  indexed = {};  // it points into the index `received` is about to give back
  l->take_reply(received);
  return r;
}

bool detail::cursor_state::next_in_batch() noexcept {
  if (!indexed.empty()) {
    // Validated by the connection's batch_check, and found in this batch by load.
    const bson::detail::doc_span d = indexed.front();
    indexed = indexed.subspan(1);
    current = bson::document_view::unchecked({received.data() + d.offset, d.size});
    return true;
  }
  auto doc = it->get_document();
  ++it;
  if (!doc) return false;
  current = *doc;
  return true;
}

void cursor_state::follow_namespace(bson::document_view reply) {
  const auto c = reply.find("cursor");
  const auto doc = c ? c->get_document() : result<bson::document_view>(c.error());
  const auto ns = doc ? doc->find("ns") : result<bson::element>(doc.error());
  const auto text = ns ? ns->get_string() : result<std::string_view>(ns.error());
  if (!text) return;
  // "<db>.<collection>": a database name has no '.', and neither part is empty or holds a NUL
  // (a BSON string may): anything else is not a namespace, and the command's stays.
  const auto dot = text->find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text->size() ||
      text->find('\0') != std::string_view::npos) {
    return;
  }
  db.assign(text->substr(0, dot));
  coll.assign(text->substr(dot + 1));
}

cursor_state::~cursor_state() {
  if (client && received.capacity() > 0) client->keep_spare_buffer(std::move(received));
}

void cursor_state::keep_comment(const mongo::comment& c) {
  if (c.empty()) return;
  bson::builder b;
  detail::append_comment(b, c);
  comment.emplace(std::move(b).extract());
}

outcome<detail::cursor_timeout> detail::cursor_timeout_of(
    const std::optional<std::chrono::milliseconds>& asked,
    const std::optional<std::chrono::milliseconds>& inherited, std::optional<timeout_mode> mode,
    bool tailable, bool await_data) {
  const auto timeout = asked ? asked : inherited;
  if (mode && !timeout) {
    return failure(errc::invalid_argument, "timeout_mode is set but timeoutMS is not");
  }
  if (tailable && mode == timeout_mode::cursor_lifetime) {
    return failure(errc::invalid_argument,
                   "a tailable cursor's timeoutMS applies to each iteration: timeout_mode "
                   "cursor_lifetime is refused");
  }
  const auto chosen =
      mode.value_or(tailable ? timeout_mode::iteration : timeout_mode::cursor_lifetime);
  return cursor_timeout{timeout, chosen, await_data || chosen == timeout_mode::cursor_lifetime};
}

outcome<std::unique_ptr<detail::cursor_state>> detail::cursor_state::open(
    std::shared_ptr<client_state> client, std::string db, std::string coll, bson::document_view cmd,
    std::int32_t batch_size, bool retryable, const read_preference* where,
    detail::cursor_timeout timeout, const detail::handle_context* ctx,
    const read_concern* concern) {
  auto state = std::make_unique<cursor_state>();
  state->received = client->take_spare_buffer();
  if (ctx != nullptr) state->explicit_session = ctx->session;
  state->session = op_session(*client, state->explicit_session.get());
  state->timeout = timeout;
  std::optional<lease> l;
  bson::document_view first;
  // No read preference of the operation's: its handle's (a database's, a collection's).
  const read_preference* fallback =
      ctx != nullptr ? &ctx->read_preference : &client->read_preference;
  const detail::operation op{.read = where != nullptr ? where : fallback,
                             .retry = retryable ? retry_kind::read : retry_kind::none,
                             .limit = time_limit::from(timeout.timeout),
                             .max_time = timeout.opening_max_time,
                             .session = state->explicit_session.get(),
                             .read_concern = concern};
  if (timeout.mode == timeout_mode::cursor_lifetime) state->limit = op.limit;
  auto ran = execute(*client, state->session, l, op, [&](attempt& a) -> outcome<done> {
    auto reply = state->fetch(a.conn, db, a.command(cmd));
    if (!reply) return std::move(reply).error();
    first = *reply;
    return done{};
  });
  if (!ran) return std::move(ran).error();
  l->read_preference.reset();  // getMore and killCursors follow the cursor to its server
  state->client = std::move(client);
  state->db = std::move(db);
  state->coll = std::move(coll);
  state->batch_size = batch_size;
  state->address = l->address;
  state->conn.emplace(std::move(*l));
  if (auto loaded = state->load(first, "firstBatch"); !loaded) return loaded.error();
  state->follow_namespace(first);
  return state;
}

cursor::cursor() noexcept = default;
cursor::cursor(std::unique_ptr<detail::cursor_state> state) noexcept : state_(std::move(state)) {}
cursor::cursor(cursor&&) noexcept = default;
cursor& cursor::operator=(cursor&& other) noexcept {
  if (this != &other) {
    cursor dropped(std::move(*this));  // kills our server cursor, if any
    state_ = std::move(other.state_);
  }
  return *this;
}

namespace {

// Sends killCursors for `s` when the server still holds its cursor, with timeoutMS `timeout`
// afresh (whatever was left of the cursor's): on the cursor's connection, or, when a getMore that
// timed out took that with it, on another connection to the same server.
outcome<done> kill(cursor_state& s, std::optional<std::chrono::milliseconds> timeout) {
  const bool connected = s.conn && !(*s.conn)->broken();
  if (s.id == 0 || (!connected && !s.orphaned)) return done{};
  bson::builder cmd;
  cmd.append_string("killCursors", s.coll);
  cmd.open_array("cursors").append_int64("0", s.id).close();
  s.session.append_for_cursor(cmd);
  s.id = 0;
  const auto limit = time_limit::from(timeout);
  std::optional<lease> other;
  if (!connected) {
    auto l = s.client->acquire_at(s.address, limit ? &*limit : nullptr);
    if (!l) return std::move(l).error();
    other.emplace(std::move(*l));
  }
  lease& l = connected ? *s.conn : *other;
  l.limit = limit;
  l.max_time = true;
  // Through the client's command path, so that command monitoring sees it.
  auto r = detail::command(l, s.db, cmd.view());
  s.conn.reset();
  s.session.release();
  if (!r) return std::move(r).error();
  return done{};
}

}  // namespace

cursor::~cursor() {
  if (state_) (void)kill(*state_, state_->timeout.timeout);
}

outcome<done> cursor::close(std::optional<std::chrono::milliseconds> timeout) {
  if (!state_) return done{};
  const auto state = std::move(state_);  // closed, whatever killCursors says
  return kill(*state, timeout ? timeout : state->timeout.timeout);
}

std::int64_t cursor::id() const noexcept { return state_ ? state_->id : 0; }

bool cursor::alive() const noexcept {
  return state_ && (state_->batch_left() || (state_->id != 0 && state_->conn));
}

bson::document_view cursor::current() const noexcept {
  return state_ ? state_->current : bson::document_view{};
}

outcome<bool> cursor::next() {
  if (!state_) return false;
  auto& s = *state_;
  // The getMores of this call: bounded by the cursor's life, or by a timeout of their own (made
  // at the first getMore: a document of the batch costs nothing more).
  std::optional<detail::time_limit> limit;
  bool limit_made = false;
  while (true) {
    if (s.batch_left()) {
      if (!s.next_in_batch()) {
        return failure(errc::unexpected_reply, "a cursor batch holds a non-document");
      }
      return true;
    }
    if (s.id == 0 || !s.conn) {
      s.current = {};
      return false;
    }
    if (!limit_made) {
      limit =
          s.timeout.mode == timeout_mode::iteration ? time_limit::from(s.timeout.timeout) : s.limit;
      limit_made = true;
    }
    if (s.tailable && s.polled && !(limit && !limit->unlimited())) {
      // Tailable: the last getMore found nothing new; say so rather than poll the server in a
      // loop. The next call asks again. Under a timeoutMS with a limit, the call instead waits
      // for a document until that runs out (the specification: one timeout for all the
      // getMores of one call), and then fails as a timeout.
      s.polled = false;
      s.current = {};
      return false;
    }
    bson::builder more;
    more.append_int64("getMore", s.id).append_string("collection", s.coll);
    if (s.batch_size > 0) more.append_int32("batchSize", s.batch_size);
    if (s.comment && (*s.conn)->server().max_wire_version >= 9) {
      more.append_element("comment", *s.comment->view().begin());
    }
    if (s.max_await_time) {
      // Under timeoutMS no longer than the time left minus the round trip (at least 1 ms).
      auto wait = *s.max_await_time;
      if (limit && !limit->unlimited()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            limit->deadline - std::chrono::steady_clock::now() - s.conn->min_rtt);
        wait = std::max(std::chrono::milliseconds(1), std::min(wait, left));
      }
      more.append_int64("maxTimeMS", wait.count());
    }
    s.session.append_for_cursor(more);
    s.conn->limit = limit;
    s.conn->max_time = false;  // the getMore's maxTimeMS is max_await_time's, if any
    auto reply = s.fetch(*s.conn, s.db, more.view());
    if (!reply && s.tailable && reply.error().code == errc::timeout && !(*s.conn)->broken()) {
      // The time ran out before the getMore was sent: the cursor is intact, and a later call
      // may ask again.
      s.polled = false;
      s.current = {};
      return std::move(reply).error();
    }
    if (!reply) {
      if (detail::is_network_failure(reply.error())) s.session.mark_dirty();
      if (reply.error().code == errc::timeout && (*s.conn)->broken()) {
        // The deadline cut the getMore off: the server still holds the cursor, which close (or
        // the destructor) kills through another connection, in the cursor's session.
        s.orphaned = true;
      } else {
        s.session.release();
        s.id = 0;  // the cursor is lost with the connection (or the server no longer has it)
      }
      s.conn.reset();
      s.current = {};
      return std::move(reply).error();
    }
    if (auto loaded = s.load(*reply, "nextBatch"); !loaded) {
      s.id = 0;
      s.conn.reset();
      s.session.release();
      return std::move(loaded).error();
    }
    s.polled = !s.batch_left();
  }
}

outcome<std::vector<bson::document>> detail::read_all(mongo::cursor& c) {
  std::vector<bson::document> out;
  while (true) {
    auto more = c.next();
    if (!more) return more.error();
    if (!*more) break;
    out.emplace_back(c.current());
  }
  return out;
}

}  // namespace oid::mongo
