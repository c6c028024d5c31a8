#include "mongo/cluster/connection_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace oid::mongo::detail {

namespace {

using std::chrono::milliseconds;

std::int64_t ms_of(pool_clock::duration d) {
  return std::chrono::duration_cast<milliseconds>(d).count();
}

// The pool and id of the connection this thread checked in last (pool_state::preferred).
struct checked_in {
  const void* pool = nullptr;
  std::uint64_t id = 0;
};
constinit thread_local checked_in last_checked_in;

}  // namespace

connection_factory open_with(connection_options options) {
  return [options = std::move(options)](const mongo::host& h, pool_clock::time_point deadline) {
    connection_options o = options;
    if (deadline != pool_clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - pool_clock::now());
      if (o.connect_timeout.count() == 0 || left < o.connect_timeout) {
        o.connect_timeout = std::max(left, milliseconds(1));
      }
    }
    return connection::open(h, o);
  };
}

// The pool's state, shared by the pool and the connections it lent (which may outlive it).
struct pool_state {
  enum class phase { paused, ready, closed };

  // A connection the pool holds: idle, or about to be closed.
  struct held {
    connection conn;
    std::uint64_t id = 0;
    std::uint64_t generation = 0;
    pool_clock::time_point since;  // when it became idle
  };

  pool_state(mongo::host h, pool_options o, connection_factory f, pool_listener l,
             pool_error_handler e)
      : host(std::move(h)),
        address(server_address::of(host).name),
        options(o),
        factory(std::move(f)),
        listener(std::move(l)),
        on_error(std::move(e)) {
    options.max_connecting = std::max<std::size_t>(options.max_connecting, 1);
  }

  // Queues an event; called with `mutex` held, so that the queue's order is the order of the
  // changes. `deliver` hands them to the listener once `mutex` is released.
  void emit(pool_event e) {
    if (!listener) return;
    std::lock_guard lock(queue_mutex);
    events.push_back(std::move(e));
  }

  // Hands the queued events to the listener, in order. Called without `mutex`. When it returns,
  // every event queued before the call has been delivered (by this thread or another). A
  // listener may call the pool: the nested call delivers the next events, still in order.
  void deliver() {
    if (!listener) return;
    std::lock_guard delivering(delivery_mutex);
    while (true) {
      pool_event e;
      {
        std::lock_guard lock(queue_mutex);
        if (events.empty()) return;
        e = std::move(events.front());
        events.pop_front();
      }
      try {
        listener(e);
      } catch (...) {
        // A listener's exception has nowhere to go (check-in runs in destructors): dropped.
      }
    }
  }

  bool undelivered() {
    std::lock_guard lock(queue_mutex);
    return !events.empty();
  }

  // Why the idle connection `h` must not be lent, if it must not.
  std::optional<connection_closed_reason> perished(const held& h, pool_clock::time_point now) {
    if (h.generation != generation) return connection_closed_reason::stale;
    if (options.max_idle_time.count() > 0 && now - h.since > options.max_idle_time) {
      return connection_closed_reason::idle;
    }
    if (h.conn.broken()) return connection_closed_reason::error;
    return std::nullopt;
  }

  // Forgets `h`, which `doomed` closes once `mutex` is released (closing may wait for the
  // server). Called with `mutex` held.
  void close_connection(held&& h, connection_closed_reason why, std::vector<connection>& doomed) {
    --total;
    emit(connection_closed_event{address, h.id, why});
    doomed.push_back(std::move(h.conn));
    changed.notify_all();  // room for a new connection
    if (total < options.min_pool_size) wake_maintenance();
  }

  // Closes the idle connections that have perished. Called with `mutex` held.
  void close_perished(std::vector<connection>& doomed) {
    const auto now = pool_clock::now();
    std::vector<held> kept;
    kept.reserve(available.capacity());
    for (held& h : available) {
      if (auto why = perished(h, now)) {
        close_connection(std::move(h), *why, doomed);
      } else {
        kept.push_back(std::move(h));
      }
    }
    available = std::move(kept);
  }

  bool may_open() const {
    return pending < options.max_connecting &&
           (options.max_pool_size == 0 || total < options.max_pool_size);
  }

  void wake_maintenance() {
    maintenance_due = true;
    maintenance_wake.notify_one();
  }

  // Makes `h` available, or closes it when the pool is closed or it is stale or broken. Called
  // with `mutex` held.
  void keep_or_close(held&& h, std::vector<connection>& doomed) {
    if (state == phase::closed) {
      close_connection(std::move(h), connection_closed_reason::pool_closed, doomed);
    } else if (h.generation != generation) {
      close_connection(std::move(h), connection_closed_reason::stale, doomed);
    } else if (h.conn.broken()) {
      close_connection(std::move(h), connection_closed_reason::error, doomed);
    } else {
      available.push_back(std::move(h));
      changed.notify_all();
    }
  }

  // The connection this thread checked in last, where `available` has it among its few most
  // recent, or else the most recent: a thread keeps its connection while it is idle. Threads
  // that swap connections (plain most-recent-first does, when two threads check in between each
  // other's operations) swap the server's threads that serve them as well, so each request
  // wakes a thread that last ran on another core: with two threads on the canned server, 700 to
  // 800 migrations and ~50% more CPU per find_one, client and server alike, than libmongoc's
  // thread-bound clients (5 migrations). Called with `mutex` held and `available` not empty.
  std::vector<held>::iterator preferred() {
    constexpr std::size_t look_back = 4;
    if (last_checked_in.pool == this) {
      const std::size_t n = std::min(look_back, available.size());
      for (auto it = available.end(); it != available.end() - static_cast<std::ptrdiff_t>(n);) {
        --it;
        if (it->id == last_checked_in.id) return it;
      }
    }
    return available.end() - 1;
  }

  void check_in(std::uint64_t id, std::uint64_t gen, connection&& c) {
    last_checked_in = {this, id};
    std::vector<connection> doomed;
    {
      std::lock_guard lock(mutex);
      emit(connection_checked_in_event{address, id});
      keep_or_close(held{std::move(c), id, gen, pool_clock::now()}, doomed);
    }
    doomed.clear();
    deliver();
  }

  // The background thread: runs every maintenance_interval, or sooner when woken.
  void maintain() {
    std::unique_lock lock(mutex);
    while (true) {
      maintenance_wake.wait_for(lock, options.maintenance_interval, [this] {
        return stopping || state == phase::closed || maintenance_due;
      });
      if (stopping || state == phase::closed) return;
      maintenance_due = false;
      std::vector<connection> doomed;
      close_perished(doomed);
      // Open connections up to minPoolSize, one at a time; when maxConnecting is reached the run
      // ends rather than wait (the next run continues).
      while (state == phase::ready && total < options.min_pool_size && may_open() && !stopping) {
        const std::uint64_t id = next_id++;
        const std::uint64_t gen = generation;
        ++total;
        ++pending;
        emit(connection_created_event{address, id});
        const auto created = pool_clock::now();
        lock.unlock();
        doomed.clear();
        deliver();
        auto opened = factory(host, pool_clock::time_point::max());
        lock.lock();
        --pending;
        changed.notify_all();
        if (!opened) {
          --total;
          // SDAM's handling first (it clears the pool), then the connection's end, as the
          // specification's tests order the events.
          lock.unlock();
          deliver();
          if (on_error) on_error(opened.error());
          lock.lock();
          emit(connection_closed_event{address, id, connection_closed_reason::error});
          break;
        }
        emit(connection_ready_event{address, id, pool_clock::now() - created});
        keep_or_close(held{std::move(*opened), id, gen, pool_clock::now()}, doomed);
      }
      lock.unlock();
      doomed.clear();
      deliver();
      lock.lock();
    }
  }

  const mongo::host host;
  const std::string address;
  pool_options options;
  const connection_factory factory;
  const pool_listener listener;
  const pool_error_handler on_error;

  std::mutex mutex;                          // guards everything below but the event queue
  std::condition_variable changed;           // check-outs wait on it
  std::condition_variable maintenance_wake;  // the background thread waits on it
  phase state = phase::paused;
  std::uint64_t generation = 0;
  std::uint64_t next_id = 1;
  std::uint64_t next_ticket = 0;
  // Idle connections, least recently used first. A vector, not a deque: checking a connection out
  // from the end and in again keeps the vector's capacity, where the deque freed and allocated a
  // node each time (mongo_alloc_tests counted one allocation per operation).
  std::vector<held> available;
  std::deque<std::uint64_t> queue;  // tickets of the waiting check-outs, first come first
  std::size_t total = 0;            // pending + available + in use
  std::size_t pending = 0;          // being opened
  bool maintenance_due = false;
  bool stopping = false;
  std::thread maintenance;

  std::mutex queue_mutex;               // guards `events`
  std::deque<pool_event> events;        // not yet delivered
  std::recursive_mutex delivery_mutex;  // one delivery at a time (re-entered by a listener)
};

pooled_connection::pooled_connection(std::shared_ptr<pool_state> pool, connection&& c,
                                     std::uint64_t id, std::uint64_t generation)
    : pool_(std::move(pool)), conn_(std::move(c)), id_(id), generation_(generation) {}

pooled_connection::pooled_connection(pooled_connection&& other) noexcept
    : pool_(std::move(other.pool_)),
      conn_(std::move(other.conn_)),
      id_(other.id_),
      generation_(other.generation_) {
  other.conn_.reset();
}

pooled_connection::~pooled_connection() {
  if (pool_ && conn_) {
    const auto pool = std::move(pool_);
    pool->check_in(id_, generation_, std::move(*conn_));
  }
}

connection_pool::connection_pool(mongo::host h, pool_options options, connection_factory factory,
                                 pool_listener listener, pool_error_handler on_error)
    : state_(std::make_shared<pool_state>(std::move(h), options, std::move(factory),
                                          std::move(listener), std::move(on_error))) {
  state_->emit(pool_created_event{state_->address, state_->options});
  state_->deliver();
  if (state_->options.maintenance_interval.count() > 0) {
    // The thread shares the state, so that a pool destroyed from its own background thread (an
    // error handler that drops the last reference) can let the thread finish on its own.
    state_->maintenance = std::thread([s = state_] { s->maintain(); });
  }
}

connection_pool::~connection_pool() {
  close();
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    state_->maintenance_wake.notify_all();
  }
  if (!state_->maintenance.joinable()) return;
  if (state_->maintenance.get_id() == std::this_thread::get_id()) {
    state_->maintenance.detach();  // it sees `stopping` and returns when this call unwinds
  } else {
    state_->maintenance.join();
  }
}

outcome<pooled_connection> connection_pool::check_out(pool_clock::time_point deadline,
                                                      check_out_failed_reason* reason,
                                                      bool wait_queue_timeout) {
  pool_state& s = *state_;
  const auto started = pool_clock::now();
  std::vector<connection> doomed;
  std::unique_lock lock(s.mutex);
  s.emit(connection_check_out_started_event{s.address});

  const auto fail = [&](check_out_failed_reason why, failure f) -> outcome<pooled_connection> {
    if (reason) *reason = why;
    s.emit(connection_check_out_failed_event{s.address, why, pool_clock::now() - started});
    lock.unlock();
    doomed.clear();
    s.deliver();
    return f;
  };
  const auto closed = [&] {
    return fail(check_out_failed_reason::pool_closed,
                failure(errc::pool_closed, "the connection pool for " + s.address + " is closed"));
  };
  if (s.state == pool_state::phase::closed) return closed();
  if (s.state == pool_state::phase::paused) {
    return fail(check_out_failed_reason::connection_error,
                failure(errc::pool_cleared, "the connection pool for " + s.address +
                                                " is paused (cleared after an error, or the "
                                                "server not checked yet); the operation may be "
                                                "retried"));
  }

  auto wait_until = deadline;
  const bool queue_limit = wait_queue_timeout && s.options.wait_queue_timeout.count() > 0 &&
                           started + s.options.wait_queue_timeout < deadline;
  if (queue_limit) wait_until = started + s.options.wait_queue_timeout;
  const std::uint64_t ticket = s.next_ticket++;
  const std::uint64_t generation = s.generation;
  s.queue.push_back(ticket);
  const auto leave = [&] {
    s.queue.erase(std::find(s.queue.begin(), s.queue.end(), ticket));
    s.changed.notify_all();  // the next in line may be at the front now
  };

  std::optional<pool_state::held> found;
  std::uint64_t new_id = 0;
  while (true) {
    if (s.state == pool_state::phase::closed) {
      leave();
      return closed();
    }
    if (s.state == pool_state::phase::paused || s.generation != generation) {
      leave();
      return fail(check_out_failed_reason::connection_error,
                  failure(errc::pool_cleared, "the connection pool for " + s.address +
                                                  " was cleared while this operation waited for "
                                                  "a connection; the operation may be retried"));
    }
    if (s.queue.front() == ticket) {
      const auto now = pool_clock::now();
      while (!found && !s.available.empty()) {
        const auto at = s.preferred();
        pool_state::held h = std::move(*at);
        s.available.erase(at);
        if (auto why = s.perished(h, now)) {
          s.close_connection(std::move(h), *why, doomed);
        } else {
          found = std::move(h);
        }
      }
      if (found) break;
      if (s.may_open()) {
        new_id = s.next_id++;
        ++s.total;
        ++s.pending;
        s.emit(connection_created_event{s.address, new_id});
        break;
      }
    }
    if (pool_clock::now() >= wait_until) {
      leave();
      const std::size_t in_use = s.total - s.available.size() - s.pending;
      std::string why = "timed out after " + std::to_string(ms_of(pool_clock::now() - started)) +
                        " ms waiting for a connection to " + s.address + " (";
      why += queue_limit
                 ? "waitQueueTimeoutMS " + std::to_string(s.options.wait_queue_timeout.count())
                 : std::string("the operation's time limit");
      why += "; " + std::to_string(in_use) + " in use, " + std::to_string(s.pending) +
             " being opened, maxPoolSize " + std::to_string(s.options.max_pool_size) +
             ", maxConnecting " + std::to_string(s.options.max_connecting) + ")";
      return fail(check_out_failed_reason::timeout, failure(errc::timeout, std::move(why)));
    }
    if (s.undelivered()) {
      // Deliver what this request caused (its start, connections it closed) before waiting.
      lock.unlock();
      doomed.clear();
      s.deliver();
      lock.lock();
      continue;
    }
    if (wait_until == pool_clock::time_point::max()) {
      s.changed.wait(lock);
    } else {
      s.changed.wait_until(lock, wait_until);
    }
  }
  leave();

  if (found) {
    s.emit(connection_checked_out_event{s.address, found->id, pool_clock::now() - started});
    pooled_connection lent(state_, std::move(found->conn), found->id, found->generation);
    lock.unlock();
    doomed.clear();
    s.deliver();
    return lent;
  }

  // Open the new connection without the lock: other threads check in and out meanwhile.
  const auto created = pool_clock::now();
  lock.unlock();
  doomed.clear();
  s.deliver();
  auto opened = s.factory(s.host, deadline);
  lock.lock();
  --s.pending;
  s.changed.notify_all();
  if (!opened) {
    --s.total;
    if (s.total < s.options.min_pool_size) s.wake_maintenance();
    s.emit(connection_closed_event{s.address, new_id, connection_closed_reason::error});
    return fail(check_out_failed_reason::connection_error, std::move(opened).error());
  }
  const auto now = pool_clock::now();
  s.emit(connection_ready_event{s.address, new_id, now - created});
  s.emit(connection_checked_out_event{s.address, new_id, now - started});
  pooled_connection lent(state_, std::move(*opened), new_id, generation);
  lock.unlock();
  s.deliver();
  return lent;
}

outcome<done> connection_pool::check_in(pooled_connection&& c) {
  if (c.pool_ && c.pool_ != state_) {
    return failure(errc::unsupported, "connection " + std::to_string(c.id_) +
                                          " belongs to the pool of " + c.pool_->address +
                                          ", not to the pool of " + state_->address);
  }
  if (c.pool_ && c.conn_) {
    const auto pool = std::move(c.pool_);
    pool->check_in(c.id_, c.generation_, std::move(*c.conn_));
    c.conn_.reset();
  }
  return done{};
}

void connection_pool::clear() {
  pool_state& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    if (s.state == pool_state::phase::closed) return;
    ++s.generation;
    if (s.state == pool_state::phase::ready) {
      s.state = pool_state::phase::paused;
      s.emit(pool_cleared_event{s.address});
    }
    s.changed.notify_all();  // the waiting check-outs fail now
    s.wake_maintenance();    // which closes the idle connections, now stale
  }
  s.deliver();
}

void connection_pool::ready() {
  pool_state& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    if (s.state != pool_state::phase::paused) return;
    s.state = pool_state::phase::ready;
    s.emit(pool_ready_event{s.address});
    s.wake_maintenance();
  }
  s.deliver();
}

void connection_pool::close() {
  pool_state& s = *state_;
  std::vector<connection> doomed;
  {
    std::lock_guard lock(s.mutex);
    if (s.state == pool_state::phase::closed) return;
    s.state = pool_state::phase::closed;
    for (pool_state::held& h : s.available) {
      s.close_connection(std::move(h), connection_closed_reason::pool_closed, doomed);
    }
    s.available.clear();
    s.emit(pool_closed_event{s.address});
    s.changed.notify_all();
    s.maintenance_wake.notify_all();
  }
  doomed.clear();
  s.deliver();
}

std::uint64_t connection_pool::generation() const {
  std::lock_guard lock(state_->mutex);
  return state_->generation;
}

const std::string& connection_pool::address() const noexcept { return state_->address; }

connection_pool::counts connection_pool::count() const {
  std::lock_guard lock(state_->mutex);
  return {state_->total, state_->available.size(), state_->pending};
}

}  // namespace oid::mongo::detail
