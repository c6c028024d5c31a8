// oid mongo ping | insert | find | topology: the MongoDB client commands.
#include <openssl/crypto.h>
#include <pthread.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/ensure_id.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_stream_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/server_codes.hpp>
#include <oid/objectid/time.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "cli.hpp"
#include "mongo/loader.hpp"
#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {

void report(context& ctx, const mongo::failure& f) {
  ctx.err << "oid: " << printable(f.message) << '\n';
  if (ran_out_of_time_limit(ctx, f.code, f.message)) {
    ctx.err << "oid: " << time_limit_hint(ctx) << '\n';
  }
  ctx.bad_input();
}

// DB.COLL: the database is everything before the first dot (database names have none).
std::pair<std::string, std::string> namespace_of(const std::string& ns) {
  const auto dot = ns.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == ns.size()) {
    throw CLI::ValidationError("DB.COLL", "expected DATABASE.COLLECTION, got '" + ns + "'");
  }
  return {ns.substr(0, dot), ns.substr(dot + 1)};
}

std::pair<std::string, std::string> namespace_of(const std::string& ns, const std::string& db,
                                                 const std::string& coll) {
  if (ns.empty()) {
    if (db.empty() || coll.empty()) {
      throw CLI::ValidationError("DB.COLL", "give DB.COLL, or --db DB and --collection COLL");
    }
    return {db, coll};
  }
  auto split = namespace_of(ns);
  if ((!db.empty() && db != split.first) || (!coll.empty() && coll != split.second)) {
    throw CLI::ValidationError("DB.COLL", "'" + ns + "' and --db/--collection differ: give one");
  }
  return split;
}

namespace {

// An `_id` for people: the hex of an ObjectId, else the value as relaxed Extended JSON, made
// printable() (it came from the input file).
std::string id_text(bson::document_view id_doc) {
  const auto e = id_doc.find("_id");
  if (!e) return "?";
  if (auto id = e->get_object_id()) return id->to_hex();
  return printable(bson::to_json(id_doc));
}

// ---- ping -----------------------------------------------------------------------------------

void run_ping(context& ctx, const std::string& uri_text) {
  auto c = make_client(ctx, uri_text);
  if (!c) return;
  bson::builder info;
  info.append_int32("buildInfo", 1);
  auto build = c->run_command("admin", info.view());  // connects (handshake) first
  if (!build) return report(ctx, build.error());
  bson::builder ping;
  ping.append_int32("ping", 1);
  const auto start = std::chrono::steady_clock::now();
  auto pong = c->run_command("admin", ping.view());
  const auto rtt = std::chrono::steady_clock::now() - start;
  if (!pong) return report(ctx, pong.error());
  const auto b = build->view();
  const auto version = b.find("version");
  ctx.out << "server version " << printable(version ? version->get_string().value_or("?") : "?");
  if (const auto ferret = b.find("ferretdbVersion")) {
    ctx.out << " (FerretDB " << printable(ferret->get_string().value_or("?")) << ")";
  }
  ctx.out << "\nround trip " << std::fixed << std::setprecision(3)
          << std::chrono::duration<double, std::milli>(rtt).count() << " ms\n";
}

// ---- topology -------------------------------------------------------------------------------

// Waits until every server of the topology was checked (or serverSelectionTimeoutMS passed),
// then prints the topology type and each server: type, round trip time, set name, last error.
void run_topology(context& ctx, const std::string& uri_text, bool json) {
  auto c = make_client(ctx, uri_text);
  if (!c) return;
  const auto timeout = c->uri().server_selection_timeout().value_or(std::chrono::seconds(30));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // A server used directly is described by the handshake of a connection: open one.
  if (c->topology().type == mongo::topology_type::single) (void)c->server();
  auto t = c->topology();
  const auto all_checked = [](const mongo::topology_description& d) {
    return std::all_of(d.servers.begin(), d.servers.end(),
                       [](const auto& s) { return s.second.is_known() || s.second.error; });
  };
  while (!all_checked(t) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t = c->topology();
  }
  bool any_known = false;
  for (const auto& [address, s] : t.servers) any_known = any_known || s.is_known();
  if (json) {
    bson::builder b;
    b.append_string("type", mongo::to_string(t.type));
    if (t.set_name) b.append_string("setName", *t.set_name);
    b.open_array("servers");
    std::size_t i = 0;
    for (const auto& [address, s] : t.servers) {
      b.open_document(std::to_string(i++));
      b.append_string("address", address).append_string("type", mongo::to_string(s.type));
      if (s.round_trip_time_ms) b.append_double("rttMS", *s.round_trip_time_ms);
      if (s.set_name) b.append_string("setName", *s.set_name);
      if (s.error) b.append_string("error", *s.error);
      b.close();
    }
    b.close();
    document_output(ctx).json_line(b.view());
  } else {
    ctx.out << "topology " << mongo::to_string(t.type);
    if (t.set_name) ctx.out << " (replica set " << printable(*t.set_name) << ")";
    ctx.out << '\n';
    for (const auto& [address, s] : t.servers) {
      ctx.out << "  " << printable(address) << "  " << mongo::to_string(s.type);
      if (s.round_trip_time_ms) {
        ctx.out << "  rtt " << std::fixed << std::setprecision(1) << *s.round_trip_time_ms << " ms";
      }
      if (s.set_name) ctx.out << "  set " << printable(*s.set_name);
      if (s.error) ctx.out << "  error: " << printable(*s.error);
      ctx.out << '\n';
    }
  }
  if (!any_known) {
    ctx.err << "oid: no server answered within serverSelectionTimeoutMS\n";
    ctx.bad_input();
  }
}

// ---- topology --watch ------------------------------------------------------------------------

// The wall clock as ISO 8601 UTC with milliseconds: 2026-12-03T16:40:00.123Z.
std::string now_utc() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm t{};
  ::gmtime_r(&seconds, &t);
  char text[40];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &t);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms.count()));
  return text;
}

double ms_of(std::chrono::microseconds d) { return static_cast<double>(d.count()) / 1000.0; }

bool is_heartbeat(const mongo::sdam_event& e) {
  return std::holds_alternative<mongo::server_heartbeat_started_event>(e) ||
         std::holds_alternative<mongo::server_heartbeat_succeeded_event>(e) ||
         std::holds_alternative<mongo::server_heartbeat_failed_event>(e);
}

// "RSPrimary (set rs0, rtt 1.2 ms)", "Unknown (error: ...)": a server description in a line.
std::string server_text(const mongo::server_description& s) {
  std::ostringstream out;
  out << mongo::to_string(s.type);
  std::string sep = " (";
  if (s.set_name) {
    out << sep << "set " << printable(*s.set_name);
    sep = ", ";
  }
  if (s.round_trip_time_ms) {
    out << sep << "rtt " << std::fixed << std::setprecision(1) << *s.round_trip_time_ms << " ms";
    sep = ", ";
  }
  if (s.error) {
    out << sep << "error: " << printable(*s.error);
    sep = ", ";
  }
  if (sep == ", ") out << ')';
  return out.str();
}

// One SDAM event as a line of text (without the time).
std::string event_text(const mongo::sdam_event& event) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);
  std::visit(
      [&out](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, mongo::topology_opening_event>) {
          out << "topology opening";
        } else if constexpr (std::is_same_v<T, mongo::topology_closed_event>) {
          out << "topology closed";
        } else if constexpr (std::is_same_v<T, mongo::topology_description_changed_event>) {
          out << "topology changed " << mongo::to_string(e.previous.type) << " -> "
              << mongo::to_string(e.current.type);
          if (e.current.set_name) out << " (replica set " << printable(*e.current.set_name) << ")";
        } else if constexpr (std::is_same_v<T, mongo::server_opening_event>) {
          out << "server opening " << printable(e.address);
        } else if constexpr (std::is_same_v<T, mongo::server_closed_event>) {
          out << "server closed " << printable(e.address);
        } else if constexpr (std::is_same_v<T, mongo::server_description_changed_event>) {
          out << "server changed " << printable(e.address) << ' '
              << mongo::to_string(e.previous.type) << " -> " << server_text(e.current);
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_started_event>) {
          out << "heartbeat started " << printable(e.address);
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_succeeded_event>) {
          out << "heartbeat succeeded " << printable(e.address) << ' ' << ms_of(e.duration)
              << " ms";
        } else {
          out << "heartbeat failed " << printable(e.address) << ' ' << ms_of(e.duration)
              << " ms: " << printable(e.failure);
        }
      },
      event);
  return out.str();
}

// One SDAM event as a JSON document, named as the monitoring specification names it.
std::string event_json(const mongo::sdam_event& event, const std::string& time) {
  bson::builder b;
  b.append_string("time", time);
  std::visit(
      [&b](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, mongo::topology_opening_event>) {
          b.append_string("event", "topologyOpening");
        } else if constexpr (std::is_same_v<T, mongo::topology_closed_event>) {
          b.append_string("event", "topologyClosed");
        } else if constexpr (std::is_same_v<T, mongo::topology_description_changed_event>) {
          b.append_string("event", "topologyDescriptionChanged");
          b.append_string("previousType", mongo::to_string(e.previous.type));
          b.append_string("newType", mongo::to_string(e.current.type));
          if (e.current.set_name) b.append_string("setName", *e.current.set_name);
        } else if constexpr (std::is_same_v<T, mongo::server_opening_event>) {
          b.append_string("event", "serverOpening").append_string("address", e.address);
        } else if constexpr (std::is_same_v<T, mongo::server_closed_event>) {
          b.append_string("event", "serverClosed").append_string("address", e.address);
        } else if constexpr (std::is_same_v<T, mongo::server_description_changed_event>) {
          b.append_string("event", "serverDescriptionChanged").append_string("address", e.address);
          b.append_string("previousType", mongo::to_string(e.previous.type));
          b.append_string("newType", mongo::to_string(e.current.type));
          if (e.current.set_name) b.append_string("setName", *e.current.set_name);
          if (e.current.round_trip_time_ms) b.append_double("rttMS", *e.current.round_trip_time_ms);
          if (e.current.error) b.append_string("error", *e.current.error);
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_started_event>) {
          b.append_string("event", "serverHeartbeatStarted").append_string("address", e.address);
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_succeeded_event>) {
          b.append_string("event", "serverHeartbeatSucceeded").append_string("address", e.address);
          b.append_double("durationMS", ms_of(e.duration));
        } else {
          b.append_string("event", "serverHeartbeatFailed").append_string("address", e.address);
          b.append_double("durationMS", ms_of(e.duration)).append_string("failure", e.failure);
        }
      },
      event);
  return bson::to_json(b.view());
}

// Prints each SDAM event (heartbeats with `heartbeats`) as it happens, one line each, until
// SIGINT or SIGTERM; then closes the client (its closing events print too) and ends with 0.
void run_topology_watch(context& ctx, const std::string& uri_text, bool json, bool heartbeats) {
  // Blocked here before the client's threads start (they inherit the mask), so that only
  // sigwait below receives them.
  sigset_t stop_signals, saved;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &saved);
  std::mutex m;
  document_output out(ctx);
  mongo::client_options options;
  options.on_topology = [&out, &m, json, heartbeats](const mongo::sdam_event& e) {
    if (!heartbeats && is_heartbeat(e)) return;
    const std::string time = now_utc();
    std::lock_guard lock(m);
    if (json) {
      out.json(event_json(e, time) + '\n');
    } else {
      out.record(time + " " + event_text(e));
    }
    out.flush();
  };
  {
    auto c = make_client(ctx, uri_text, std::move(options));
    if (c) {
      int received = 0;
      ::sigwait(&stop_signals, &received);
    }
  }
  // A second signal that came while the client closed (timeout(1) signals the command, then its
  // process group) is taken here: unblocked, it would end the process before its exit status.
  const timespec no_wait{};
  while (::sigtimedwait(&stop_signals, nullptr, &no_wait) > 0) {
  }
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

// ---- insert ---------------------------------------------------------------------------------

struct insert_options {
  std::string uri, ns, file;
  bool w0 = false;
  bool unordered = false;
};

// A progress line on stderr for long inputs, only when stderr is a terminal (and the command
// runs as the real program, not in a test).
class insert_progress {
 public:
  explicit insert_progress(context& ctx)
      : enabled_(&ctx.err == &std::cerr && ::isatty(STDERR_FILENO) == 1),
        start_(std::chrono::steady_clock::now()) {}
  ~insert_progress() {
    if (shown_) std::fputs("\n", stderr);
  }
  void update(std::uint64_t documents) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(500)) {
      return;
    }
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r%llu documents, %.0f/s   ", static_cast<unsigned long long>(documents),
                 static_cast<double>(documents) / s);
    shown_ = true;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

void run_insert(context& ctx, const insert_options& o) {
  const auto [db, coll_name] = namespace_of(o.ns);
  auto c = make_client(ctx, o.uri);
  if (!c) return;
  std::ifstream file;
  std::istream* in = &ctx.in;
  if (!o.file.empty() && o.file != "-") {
    file.open(o.file, std::ios::binary);
    if (!file) {
      ctx.err << "oid: mongo insert: cannot open " << printable(o.file) << '\n';
      return ctx.bad_input();
    }
    in = &file;
  }
  batch_loader::settings settings;
  settings.insert.ordered = !o.unordered;
  if (o.w0) settings.insert.write_concern = mongo::write_concern::unacknowledged();
  std::vector<std::size_t> numbers;  // 1-based input position of each pending document
  std::string first_id, last_id;
  insert_progress bar(ctx);
  const auto report_batch = [&](const loaded_batch& done) {
    if (done.failed != nullptr) report(ctx, *done.failed);
    for (const auto& r : done.refused) {
      ctx.err << "oid: document " << numbers[r.index] << ": "
              << (r.duplicate ? "duplicate key: " : "refused: ") << printable(r.message) << '\n';
    }
    if (!done.refused.empty()) ctx.bad_input();
    // The ids of the documents that went in (with w: 0, all that were sent).
    for (std::size_t i = 0; i < done.documents.size(); ++i) {
      if (!done.went_in(i)) continue;
      bson::builder id;
      id.append_element(*done.documents[i].view().begin());
      const bson::document idd = std::move(id).extract();
      if (first_id.empty()) first_id = id_text(idd.view());
      last_id = id_text(idd.view());
    }
    numbers.clear();
  };
  batch_loader loader(c->collection(db, coll_name), settings, report_batch);

  bson::json_stream_reader reader(*in);
  bson::document doc;
  while (!loader.stopped()) {
    auto more = reader.next(doc);
    if (!more) {
      const auto where = reader.error_position();
      ctx.err << "oid: line " << where.line << ", column " << where.column << ": "
              << more.error().message() << '\n';
      ctx.bad_input();
      if (!reader.can_continue()) break;
      continue;
    }
    if (!*more) break;
    numbers.push_back(reader.index() + 1);
    // _id made here, on the client, so that the ids are known whatever the server answers.
    loader.add(bson::ensure_id(doc.view()));
    bar.update(loader.sent());
  }
  const bool stop = !loader.flush();
  const std::uint64_t sent = loader.sent(), inserted = loader.inserted(),
                      refused = loader.refused();
  if (o.w0) {
    ctx.out << "sent " << sent << " documents (w: 0, not acknowledged)\n";
  } else {
    ctx.out << "inserted " << inserted << " documents";
    if (refused > 0) ctx.out << ", " << refused << " refused";
    if (stop && refused > 0) ctx.out << "; stopped at the first refusal (--unordered goes on)";
    ctx.out << '\n';
  }
  if (!first_id.empty()) ctx.out << "first " << first_id << "\nlast  " << last_id << '\n';
}

// ---- find -----------------------------------------------------------------------------------

struct find_cli_options {
  std::string uri, ns, filter, sort, since, until, read_concern;
  std::int64_t limit = 0;
  std::int32_t batch_size = 0;
  bool tail = false;
  double idle_timeout = 0;  // --tail: seconds without a new document before ending (0: never)
};

// Set by SIGINT or SIGTERM while `find --tail` follows a collection: it then ends as if done.
volatile std::sig_atomic_t tail_stop = 0;
extern "C" void on_tail_signal(int) { tail_stop = 1; }

// SIGINT and SIGTERM end `find --tail` cleanly (exit status 0, output flushed) while it is in
// scope; the previous handlers are put back after. No SA_RESTART is needed: a getMore waits at
// most its max_await_time, and the loop checks the flag after each.
class tail_signals {
 public:
  tail_signals() {
    tail_stop = 0;
    struct sigaction a {};
    a.sa_handler = on_tail_signal;
    sigemptyset(&a.sa_mask);
    ok_ = ::sigaction(SIGINT, &a, &saved_int_) == 0 && ::sigaction(SIGTERM, &a, &saved_term_) == 0;
  }
  ~tail_signals() {
    ::sigaction(SIGINT, &saved_int_, nullptr);
    ::sigaction(SIGTERM, &saved_term_, nullptr);
  }
  tail_signals(const tail_signals&) = delete;
  tail_signals& operator=(const tail_signals&) = delete;
  bool ok() const { return ok_; }

 private:
  struct sigaction saved_int_ {};
  struct sigaction saved_term_ {};
  bool ok_ = false;
};

}  // namespace

std::optional<bson::document> json_argument(context& ctx, const std::string& name,
                                            const std::string& text) {
  auto d = bson::from_json(text);
  if (!d) {
    const auto where = bson::position_of(text, d.error().offset);
    ctx.err << "oid: " << name << ": " << d.error().message() << " at column " << where.column
            << '\n';
    ctx.bad_input();
    return std::nullopt;
  }
  return std::move(*d);
}

std::optional<std::string> read_argument_file(context& ctx, std::string_view flag,
                                              const std::string& path) {
  constexpr std::size_t max_size = 16 * 1024 * 1024;
  std::ifstream file(path, std::ios::binary);
  std::string text;
  if (file) {
    text.resize(max_size + 1);
    file.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(file.gcount()));
  }
  if (!file && !file.eof()) {
    ctx.err << "oid: " << flag << ' ' << printable(path) << ": cannot read the file\n";
    ctx.status = exit_usage;
    return std::nullopt;
  }
  if (text.size() > max_size) {
    ctx.err << "oid: " << flag << ' ' << printable(path) << ": larger than 16 MiB\n";
    ctx.status = exit_usage;
    return std::nullopt;
  }
  return text;
}

std::optional<mongo::read_concern> read_concern_argument(context& ctx, const std::string& text) {
  static constexpr std::string_view levels[] = {"local", "available", "majority", "linearizable",
                                                "snapshot"};
  const auto known = [](std::string_view l) {
    return std::find(std::begin(levels), std::end(levels), l) != std::end(levels);
  };
  if (text.empty()) return mongo::read_concern{};
  if (known(text)) return mongo::read_concern{text};
  if (text.find('{') != std::string::npos) {
    const auto d = json_argument(ctx, "--readConcern", text);
    if (!d) return std::nullopt;
    // Exactly {level: "<a known level>"}.
    const auto view = d->view();
    const auto first = view.begin();
    if (first != view.end() && std::next(first) == view.end() && first->key() == "level") {
      if (const auto name = first->get_string(); name && known(*name)) {
        return mongo::read_concern{std::string(*name)};
      }
    }
  }
  ctx.err << "oid: --readConcern: " << quote(text)
          << " is not a read concern (local, available, majority, linearizable, snapshot, or "
             "{\"level\": ...})\n";
  ctx.bad_input();
  return std::nullopt;
}

std::optional<mongo::write_concern> write_concern_argument(context& ctx, const std::string& text) {
  mongo::write_concern wc;
  const auto bad = [&](std::string_view why) -> std::optional<mongo::write_concern> {
    ctx.err << "oid: --writeConcern: " << quote(text) << " " << why
            << " (majority, a number of members, a tag, or {w: N or 'tag', j: true, wtimeout: "
               "MS})\n";
    ctx.bad_input();
    return std::nullopt;
  };
  const bool digits = !text.empty() && text.size() <= 9 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    wc.w = static_cast<std::int32_t>(std::stol(text));
    return wc;
  }
  if (text.empty() || text.front() != '{') {
    if (text.empty()) return bad("is empty");
    wc.w_tag = text;
    return wc;
  }
  // The document as mongo-tools' users write it: {w: 'majority', j: true, wtimeout: 500}, its
  // keys quoted or not, its strings in single or double quotes. Read here rather than as
  // Extended JSON, which wants keys in double quotes.
  std::string_view rest(text);
  rest.remove_prefix(1);
  const auto skip_blanks = [&] {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  };
  // A quoted string or a bare word (letters, digits, '_', '-', '.').
  const auto token = [&](std::string& out) {
    skip_blanks();
    out.clear();
    if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
      const char q = rest.front();
      const auto close = rest.find(q, 1);
      if (close == std::string_view::npos) return false;
      out.assign(rest.substr(1, close - 1));
      rest.remove_prefix(close + 1);
      return true;
    }
    while (!rest.empty() && (std::isalnum(static_cast<unsigned char>(rest.front())) != 0 ||
                             rest.front() == '_' || rest.front() == '-' || rest.front() == '.')) {
      out += rest.front();
      rest.remove_prefix(1);
    }
    return !out.empty();
  };
  std::string key, value;
  while (true) {
    skip_blanks();
    if (!rest.empty() && rest.front() == '}') break;
    const bool key_ok = token(key);
    skip_blanks();
    if (!key_ok || rest.empty() || rest.front() != ':') return bad("is not {key: value, ...}");
    rest.remove_prefix(1);
    skip_blanks();
    const bool quoted = !rest.empty() && (rest.front() == '\'' || rest.front() == '"');
    if (!token(value)) return bad("is not {key: value, ...}");
    const bool number =
        !quoted && value.size() <= 9 && value.find_first_not_of("0123456789") == std::string::npos;
    if (key == "w" && number) {
      wc.w = static_cast<std::int32_t>(std::stol(value));
    } else if (key == "w" && quoted) {
      wc.w_tag = value;
    } else if ((key == "j" || key == "journal" || key == "fsync") && !quoted &&
               (value == "true" || value == "false")) {
      wc.journal = value == "true";
    } else if ((key == "wtimeout" || key == "wtimeoutMS") && number) {
      wc.timeout = std::chrono::milliseconds(std::stol(value));
    } else {
      return bad("has a field oid does not read, or a value of the wrong type: '" + printable(key) +
                 "'");
    }
    skip_blanks();
    if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
  }
  rest.remove_prefix(1);
  skip_blanks();
  if (!rest.empty()) return bad("has text after its closing brace");
  return wc;
}

result<std::optional<std::chrono::sys_seconds>> time_argument(context& ctx, const std::string& name,
                                                              const std::string& text) {
  if (text.empty()) return std::optional<std::chrono::sys_seconds>();
  auto t = parse_time(text);
  if (!t) {
    ctx.err << "oid: " << name << ": invalid time " << quote(text) << " at column "
            << t.error().offset + 1 << " (ISO-8601 date or date-time, or Unix seconds)\n";
    ctx.bad_input();
    return t.error();
  }
  return std::optional<std::chrono::sys_seconds>(*t);
}

std::optional<bson::document> created_filter_argument(context& ctx, const std::string& filter_name,
                                                      const std::string& filter_text,
                                                      const std::string& since_text,
                                                      const std::string& until_text) {
  std::optional<bson::document> filter = bson::document();
  if (!filter_text.empty() && !(filter = json_argument(ctx, filter_name, filter_text))) {
    return std::nullopt;
  }
  // Both read (and reported) before giving up.
  const auto since = time_argument(ctx, "--since", since_text);
  const auto until = time_argument(ctx, "--until", until_text);
  if (!since || !until) return std::nullopt;
  auto f = mongo::created_between_filter(*since, *until, filter->view());
  if (!f) {
    ctx.err << "oid: --since/--until: " << f.error().message() << '\n';
    ctx.bad_input();
    return std::nullopt;
  }
  return std::move(*f);
}

namespace {

void run_find(context& ctx, const find_cli_options& o) {
  const auto [db, coll_name] = namespace_of(o.ns);
  const auto f = created_filter_argument(ctx, "--filter", o.filter, o.since, o.until);
  if (!f) return;
  std::optional<bson::document> sort = bson::document();
  if (!o.sort.empty() && !(sort = json_argument(ctx, "--sort", o.sort))) return;
  const auto concern = read_concern_argument(ctx, o.read_concern);
  if (!concern) return;
  // Tailing, the stall limit is each getMore's answer (socketTimeoutMS): waiting for new
  // documents is not a stall.
  if (o.tail) ctx.time.kind = command_time::stream;
  auto c = make_client(ctx, o.uri);
  if (!c) return;
  mongo::find_options fo;
  fo.timeout_mode = mongo::timeout_mode::iteration;  // the stall limit for each getMore afresh
  if (!concern->is_default()) fo.read_concern = *concern;
  fo.sort = sort->view();
  fo.limit = o.limit;
  fo.batch_size = o.batch_size;
  std::optional<tail_signals> signals;
  if (o.tail) {
    // Each getMore waits up to a second for new documents, so a signal or the idle timeout is
    // noticed within about a second.
    fo.cursor_kind = mongo::cursor_type::tailable_await;
    fo.timeout_mode.reset();
    fo.max_await_time = std::chrono::seconds(1);
    // Shorter than the time an answer may take, or every wait would end as a stall.
    const auto answer = c->uri().socket_timeout().value_or(std::chrono::milliseconds(0));
    if (answer.count() > 0) fo.max_await_time = std::min(*fo.max_await_time, answer / 2);
    signals.emplace();
    if (!signals->ok()) {
      ctx.err << "oid: --tail: cannot handle SIGINT: " << std::strerror(errno) << '\n';
      return ctx.bad_input();
    }
  }
  auto cur = c->collection(db, coll_name).find(f->view(), fo);
  if (!cur) return report(ctx, cur.error());
  document_output out(ctx);
  using clock = std::chrono::steady_clock;
  const auto idle_limit = std::chrono::duration<double>(o.idle_timeout);
  auto last_new = clock::now();
  while (true) {
    auto more = cur->next();
    if (!more) return report(ctx, more.error());
    if (!*more) {
      // The end; or, tailing, nothing new yet: show what came and wait again.
      if (!o.tail || !cur->alive() || tail_stop != 0) break;
      out.flush();
      if (!ctx.out) break;
      if (o.idle_timeout > 0 && clock::now() - last_new >= idle_limit) break;
      continue;
    }
    last_new = clock::now();
    out.json_line(cur->current());
    if (!ctx.out || tail_stop != 0) break;
  }
}

}  // namespace

void add_mongo_commands(CLI::App& app, context& ctx) {
  auto* mongo = app.add_subcommand("mongo", "Talk to a MongoDB server (URI: mongodb://...)");
  mongo->require_subcommand(1);
  {
    auto uri = std::make_shared<std::string>();
    auto* cmd = mongo->add_subcommand("ping", "Connect; print the server's version and round trip");
    add_uri_options(*cmd, ctx, *uri);
    cmd->final_callback([&ctx, uri] { run_ping(ctx, *uri); });
  }
  {
    auto uri = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto watch = std::make_shared<bool>(false);
    auto heartbeats = std::make_shared<bool>(false);
    auto* cmd = mongo->add_subcommand(
        "topology", "Print the deployment the client sees: each server's type, round trip, set");
    add_uri_options(*cmd, ctx, *uri);
    cmd->add_flag("--json", *json,
                  "One JSON document instead of lines of text (with --watch: one per event)");
    cmd->add_flag("--watch", *watch,
                  "Print the discovery and monitoring events as they happen, one a line, until "
                  "interrupted (SIGINT or SIGTERM)");
    cmd->add_flag("--heartbeats", *heartbeats, "With --watch: the monitors' heartbeats too")
        ->needs("--watch");
    cmd->final_callback([&ctx, uri, json, watch, heartbeats] {
      if (*watch) {
        run_topology_watch(ctx, *uri, *json, *heartbeats);
      } else {
        run_topology(ctx, *uri, *json);
      }
    });
  }
  {
    auto o = std::make_shared<insert_options>();
    auto* cmd = mongo->add_subcommand(
        "insert", "Insert Extended JSON documents (one a line, or a JSON array); _id made here");
    add_uri_options(*cmd, ctx, o->uri, command_time::batches);
    cmd->add_option("DB.COLL", o->ns, "Database and collection, e.g. shop.orders")->required();
    cmd->add_option("FILE", o->file, "A JSON file, or - for stdin (the default)")
        ->type_name("FILE");
    cmd->add_flag("--w0", o->w0, "Fire-and-forget (write concern w: 0): nothing is acknowledged");
    cmd->add_flag("--unordered", o->unordered,
                  "Report refused documents (e.g. duplicate keys) and insert the rest");
    cmd->final_callback([&ctx, o] { run_insert(ctx, *o); });
  }
  {
    auto o = std::make_shared<find_cli_options>();
    auto* cmd = mongo->add_subcommand("find", "Print matching documents as Extended JSON lines");
    add_uri_options(*cmd, ctx, o->uri, command_time::batches);
    cmd->add_option("DB.COLL", o->ns, "Database and collection")->required();
    cmd->add_option("--filter,-q,--query", o->filter,
                    "Query filter as Extended JSON, e.g. '{\"n\": 1}'");
    cmd->add_option("--since", o->since, "Only documents whose ObjectId _id is from this time on");
    cmd->add_option("--until", o->until, "Only documents whose ObjectId _id is before this time");
    // Not CLI::NonNegativeNumber: its message prints DBL_MAX in full.
    cmd->add_option("--limit", o->limit, "At most this many documents")
        ->check(CLI::Validator(
            [](const std::string& s) {
              return s.find('-') == std::string::npos ? std::string()
                                                      : "a limit cannot be negative: " + s;
            },
            "N"));
    cmd->add_option("--sort", o->sort, "Sort order as Extended JSON, e.g. '{\"_id\": -1}'");
    cmd->add_option("--readConcern", o->read_concern,
                    "Read concern: local, available, majority, linearizable or snapshot (or "
                    "'{\"level\": \"majority\"}')");
    cmd->add_option("--batchSize,--batch-size", o->batch_size,
                    "Documents per batch (default: the server's)")
        ->check(CLI::Range(0, std::numeric_limits<std::int32_t>::max()));
    cmd->add_flag("--tail", o->tail,
                  "Follow a capped collection like tail -f: print new documents as they arrive, "
                  "until Ctrl-C (or --idleTimeout)");
    cmd->add_option("--idleTimeout,--idle-timeout", o->idle_timeout,
                    "With --tail: end after this many seconds without a new document")
        ->check(CLI::PositiveNumber);
    cmd->final_callback([&ctx, o] {
      if (o->idle_timeout > 0 && !o->tail) {
        ctx.err << "oid: --idleTimeout goes with --tail\n";
        return ctx.bad_input();
      }
      run_find(ctx, *o);
    });
  }
  add_mongo_tool_commands(*mongo, ctx);
  add_mongo_crud_commands(*mongo, ctx);
  add_mongo_admin_commands(*mongo, ctx);
  add_mongo_files_commands(*mongo, ctx);
}

}  // namespace oid::cli
