// oid_failpoint_proxy: a fault-injecting proxy between a MongoDB client and a server that has no
// fail points (FerretDB), for the tests of MongoDB's unified test format (issue 26).
//
//   oid_failpoint_proxy --upstream HOST:PORT [--listen HOST:PORT]
//
// It listens on loopback (default 127.0.0.1:0, a free port), prints one line,
// mongodb://127.0.0.1:PORT/, on stdout once it accepts connections, and runs until SIGTERM or
// SIGINT; then it closes every connection and exits 0 (2 for a usage error, 1 when it cannot
// listen). Both addresses must be loopback (127.0.0.0/8, [::1], localhost): tests stay on the
// machine. Each client connection gets a connection of its own to the upstream server.
//
// What it implements:
//   - Forwarding: every message either way, byte for byte, except what is listed below. OP_MSG
//     requests with moreToCome (w: 0) get no reply; replies with moreToCome (exhaust cursors,
//     streaming hello) keep flowing. Other opcodes (OP_QUERY, OP_REPLY, OP_COMPRESSED) pass
//     through unchanged and unexamined: a fail point never applies to them.
//   - Retryable writes (insert, update, delete, findAndModify, bulkWrite with lsid and txnNumber,
//     outside a transaction): FerretDB ignores txnNumber, so the proxy keeps the reply to each
//     one the server applied (ok: 1, no writeErrors) and answers a repeat of the same (lsid,
//     txnNumber) with it instead of forwarding it, as a server's transaction table does: a
//     driver's retry after an injected writeConcernError then finds the write done once. While
//     onPrimaryTransactionalWrite is on (and for a repeat of a write run so), insert, update,
//     delete and findAndModify run as the server runs them: update and delete one statement at a
//     time, an insert's documents as one batch (one at a time when the batch fails), each
//     statement the server applied kept by (lsid, txnNumber, index) and answered from there on a
//     retry, never applied twice; the reply is made from the statements' outcomes (n,
//     nModified, upserted, writeErrors, the server's writeConcernError).
//   - Transactions (commands with autocommit: false), which FerretDB refuses: run over its storage
//     by copying each collection a transaction writes and putting the copy back on abort, without
//     isolation (see transaction_emulator).
//   - readConcern.afterClusterTime on insert, update, delete and findAndModify (a causally
//     consistent session's write, with a time of the proxy's clock), which FerretDB refuses, as
//     it refuses any readConcern on a write: removed before forwarding, with readConcern when
//     nothing else is in it. The rest goes on (a snapshot session's level: snapshot, which
//     FerretDB refuses on a write as MongoDB does).
//   - A replica set's replies (hello said setName) carry operationTime and $clusterTime from a
//     logical clock of the proxy's, as a member's do: FerretDB sends neither.
//   - hello, isMaster and ismaster replies (OP_MSG): `me`, `primary` and the strings of `hosts`,
//     `passives` and `arbiters` that name the upstream (its port on any loopback address) name
//     the proxy instead, so that a replica-set client discovers the proxy, not the server.
//   - configureFailPoint on admin, answered by the proxy and never forwarded, with MongoDB's
//     failCommand fail point: mode "alwaysOn", "off", {times: N} (fires N times, then turns
//     itself off) or {skip: N} (lets N matching commands through, then fires on every one); the
//     reply is {count: <times the fail point fired so far>, ok: 1}. One fail point for the whole
//     proxy (all connections). `data`:
//       failCommands (names; isMaster/ismaster and findAndModify/findandmodify are aliases),
//       failAllCommands, appName (only connections whose first hello carried
//       client.application.name equal to it), blockConnection + blockTimeMS (wait that long,
//       then go on), closeConnection (close the client's socket, no reply), errorCode (reply
//       {ok: 0, errmsg: "Failing command via 'failCommand' failpoint", code, codeName when
//       known, errorLabels} without forwarding), writeConcernError (forward, then put that
//       document in the server's reply), errorLabels (the reply's labels, replacing any; when
//       absent, RetryableWriteError is added as a 4.4+ server does: for a retryable write, i.e. a
//       command with txnNumber and no autocommit, or commitTransaction/abortTransaction, whose
//       errorCode or writeConcernError code is one of the retryable writes specification's
//       retryable codes). configureFailPoint itself never fires it. As the server does, a fail
//       point fires (and counts) only for a matching command when it has an effect (block,
//       close, error or write concern error).
//     onPrimaryTransactionalWrite, with the same modes: evaluated once per write a retryable
//     write (lsid and txnNumber, outside a transaction) commits, as the server evaluates it
//     where it records the write: per statement of an update or delete, once for an insert's
//     batch (then per document when the batch fails), once for a findAndModify; a statement
//     that writes nothing (no match, no upsert) does not meet it. `data`: closeConnection
//     (default true: the write commits, the rest of the command runs, then the client's socket
//     is closed without a reply) and failBeforeCommitExceptionCode (the statement is not
//     applied and fails with that code: a writeErrors entry of insert, update and delete, the
//     reply's error for findAndModify; the proxy asks the server whether the statement would
//     write, since FerretDB cannot take a write back).
//     failGetMoreAfterCursorCheckout, with the same modes: a getMore of a cursor the server has
//     (the proxy's killCursors for it finds it: the cursor is killed, as the server deletes a
//     cursor whose getMore failed) is answered {ok: 0, errmsg: "Hit the
//     'failGetMoreAfterCursorCheckout' failpoint", code: data.errorCode (default 1,
//     InternalError)}; a cursor the server does not have goes on to it (CursorNotFound), and the
//     fail point is not met. `data`: errorCode, appName; closeConnection and failCommands are
//     taken and ignored, as the server ignores them here.
// What it does not implement:
//   - Any other fail point (the reply is ok: 0, code 2, naming it as not supported by the proxy),
//     the modes activationProbability and the data fields threadName, namespace, errorExtraInfo
//     and tassert (ok: 0 naming the field); waitForFailPoint is forwarded like any command.
//   - onPrimaryTransactionalWrite on a write inside a transaction or on bulkWrite (the client
//     bulk write command, which FerretDB lacks); an update that matches a document and changes
//     nothing counts as a write. An insert's batch is not split at the server's 64 documents.
//   - The labels a server adds besides RetryableWriteError (TransientTransactionError,
//     NoWritesPerformed, ResumableChangeStreamError) and topologyVersion in state-change errors.
//     (ResumableChangeStreamError goes on a change stream's getMore that
//     failGetMoreAfterCursorCheckout fails; FerretDB v1 has no change streams, so no such cursor
//     reaches the proxy.)
//   - A retry that arrives while the first attempt is still at the server is forwarded (a
//     server would wait for the first); only the last 10,000 retryable writes are remembered.
//   - Concurrency within a connection: its messages are handled one at a time, in order, so
//     while blockConnection holds a command nothing else on that connection moves (replies are
//     matched to requests by responseTo; clients wait for each reply anyway).
//
// One thread per client connection, each polling its two sockets and the stop signal: the code
// stays sequential (read a message, decide, forward), and blockConnection sleeps only the
// connection it blocks, as the server's does. Tests open a few dozen connections; the proxy
// refuses more than 1,024 at once.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
using oid::bson::element;
namespace mongo = oid::mongo;

constexpr std::size_t max_message_size = 48'000'000;  // MongoDB's maxMessageSizeBytes
constexpr std::size_t max_connections = 1024;
constexpr std::size_t max_pending_replies = 10'000;  // per connection
constexpr std::size_t read_chunk = 64 * 1024;
constexpr std::string_view failpoint_errmsg = "Failing command via 'failCommand' failpoint";
constexpr std::string_view retryable_write_label = "RetryableWriteError";
constexpr std::int32_t bad_value = 2, unauthorized = 13;

std::mutex log_mutex;

// One line on stderr, whole even when connections log at once.
void log(const std::string& line) {
  const std::lock_guard lock(log_mutex);
  std::fprintf(stderr, "oid_failpoint_proxy: %s\n", line.c_str());
  std::fflush(stderr);
}

std::string errno_text(int e) { return std::strerror(e); }

// ---- Addresses -----------------------------------------------------------------------------

struct endpoint {
  sockaddr_storage addr{};
  socklen_t size = 0;
  int family = AF_INET;
  std::string host;  // as it goes into a connection string: 127.0.0.1 or [::1]
  std::uint16_t port = 0;
};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// "HOST:PORT" split into host (brackets removed) and port text; nullopt when it has no port or
// an IPv6 address without brackets.
std::optional<std::pair<std::string, std::string_view>> split_host_port(std::string_view text) {
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::nullopt;
    }
    return std::pair{std::string(text.substr(1, close - 1)), text.substr(close + 2)};
  }
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos ||
      text.substr(0, colon).find(':') != std::string_view::npos) {
    return std::nullopt;
  }
  return std::pair{std::string(text.substr(0, colon)), text.substr(colon + 1)};
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

// A loopback endpoint from "HOST:PORT", or a sentence in `why`. Names are not resolved:
// localhost means 127.0.0.1, anything else must be a numeric loopback address.
std::optional<endpoint> parse_loopback(std::string_view text, std::string& why) {
  const auto parts = split_host_port(text);
  if (!parts) {
    why = "'" + std::string(text) + "' is not HOST:PORT (write IPv6 as [::1]:PORT)";
    return std::nullopt;
  }
  auto [host, port_text] = *parts;
  const auto port = parse_port(port_text);
  if (!port) {
    why = "'" + std::string(port_text) + "' is not a port (0-65535)";
    return std::nullopt;
  }
  if (equals_ignoring_case(host, "localhost")) host = "127.0.0.1";
  endpoint e;
  e.port = *port;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    if ((ntohl(v4.s_addr) >> 24) != 127) {
      why = host +
            " is not a loopback address (127.0.0.0/8, [::1], localhost): tests stay on "
            "the machine";
      return std::nullopt;
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(*port);
    sa.sin_addr = v4;
    std::memcpy(&e.addr, &sa, sizeof sa);
    e.size = sizeof sa;
    e.family = AF_INET;
    e.host = host;
    return e;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (!IN6_IS_ADDR_LOOPBACK(&v6)) {
      why = host +
            " is not a loopback address (127.0.0.0/8, [::1], localhost): tests stay on "
            "the machine";
      return std::nullopt;
    }
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(*port);
    sa.sin6_addr = v6;
    std::memcpy(&e.addr, &sa, sizeof sa);
    e.size = sizeof sa;
    e.family = AF_INET6;
    e.host = "[" + host + "]";
    return e;
  }
  why = "'" + host + "' is not a numeric loopback address or localhost (names are not resolved)";
  return std::nullopt;
}

// True when "HOST:PORT" (from a hello reply) names the server on loopback port `port`: any
// loopback address or localhost with that port. Upstreams are loopback only, so that is it.
bool names_upstream(std::string_view text, std::uint16_t port) {
  std::string why;
  const auto e = parse_loopback(text, why);
  return e && e->port == port;
}

// ---- BSON helpers --------------------------------------------------------------------------

// An integer given as int32, int64 or a double without a fraction.
std::optional<std::int64_t> integral(const element& e) {
  if (const auto v = e.get_int32()) return *v;
  if (const auto v = e.get_int64()) return *v;
  if (const auto v = e.get_double()) {
    if (std::isfinite(*v) && std::trunc(*v) == *v && std::fabs(*v) < 9.0e15) {
      return static_cast<std::int64_t>(*v);
    }
  }
  return std::nullopt;
}

// A boolean given as a boolean or a number (non-zero is true), as the server reads its flags.
std::optional<bool> boolean(const element& e) {
  if (const auto v = e.get_bool()) return *v;
  if (const auto v = e.get_double()) return *v != 0;
  if (const auto v = integral(e)) return *v != 0;
  return std::nullopt;
}

// The strings of an array; nullopt when it is not an array of strings.
std::optional<std::vector<std::string>> strings(const element& e) {
  const auto arr = e.get_array();
  if (!arr) return std::nullopt;
  std::vector<std::string> out;
  for (const element& x : *arr) {
    const auto s = x.get_string();
    if (!s) return std::nullopt;
    out.emplace_back(*s);
  }
  return out;
}

std::string_view string_field(document_view d, std::string_view key) {
  const auto e = d.find(key);
  if (!e) return {};
  return e->get_string().value_or(std::string_view{});
}

void append_labels(builder& b, const std::vector<std::string>& labels) {
  b.open_array("errorLabels");
  for (std::size_t i = 0; i < labels.size(); ++i) b.append_string(std::to_string(i), labels[i]);
  b.close();
}

// The server's code names for the codes tests use; others get no codeName.
std::string_view code_name(std::int32_t code) {
  struct entry {
    std::int32_t code;
    std::string_view name;
  };
  static constexpr entry names[] = {
      {1, "InternalError"},
      {2, "BadValue"},
      {4, "NoSuchKey"},
      {6, "HostUnreachable"},
      {7, "HostNotFound"},
      {8, "UnknownError"},
      {9, "FailedToParse"},
      {11, "UserNotFound"},
      {13, "Unauthorized"},
      {14, "TypeMismatch"},
      {18, "AuthenticationFailed"},
      {20, "IllegalOperation"},
      {24, "LockTimeout"},
      {26, "NamespaceNotFound"},
      {43, "CursorNotFound"},
      {48, "NamespaceExists"},
      {50, "MaxTimeMSExpired"},
      {59, "CommandNotFound"},
      {64, "WriteConcernFailed"},
      {72, "InvalidOptions"},
      {89, "NetworkTimeout"},
      {91, "ShutdownInProgress"},
      {96, "OperationFailed"},
      {100, "UnsatisfiableWriteConcern"},
      {112, "WriteConflict"},
      {115, "CommandNotSupported"},
      {121, "DocumentValidationFailure"},
      {133, "FailedToSatisfyReadPreference"},
      {134, "ReadConcernMajorityNotAvailableYet"},
      {175, "QueryPlanKilled"},
      {189, "PrimarySteppedDown"},
      {234, "RetryChangeStream"},
      {237, "CursorKilled"},
      {246, "SnapshotUnavailable"},
      {251, "NoSuchTransaction"},
      {256, "TransactionCommitted"},
      {262, "ExceededTimeLimit"},
      {263, "OperationNotSupportedInTransaction"},
      {267, "PreparedTransactionInProgress"},
      {280, "ChangeStreamFatalError"},
      {286, "ChangeStreamHistoryLost"},
      {391, "ReauthenticationRequired"},
      {9001, "SocketException"},
      {10107, "NotWritablePrimary"},
      {11000, "DuplicateKey"},
      {11600, "InterruptedAtShutdown"},
      {11601, "Interrupted"},
      {11602, "InterruptedDueToReplStateChange"},
      {13435, "NotPrimaryNoSecondaryOk"},
      {13436, "NotPrimaryOrSecondary"},
  };
  for (const auto& n : names) {
    if (n.code == code) return n.name;
  }
  return {};
}

// The codes the retryable writes specification lists as retryable ("Determining Retryable
// Write Errors"): the server labels an error of a retryable write RetryableWriteError for them.
bool is_retryable_code(std::int64_t code) {
  static constexpr std::int32_t codes[] = {11600, 11602, 10107, 13435, 13436, 189,
                                           91,    7,     6,     89,    9001,  262};
  return std::find(std::begin(codes), std::end(codes), code) != std::end(codes);
}

// The server's rule for RetryableWriteError: the command is a retryable write (txnNumber
// without autocommit) or ends a transaction (commitTransaction or abortTransaction with
// txnNumber), and its error code is retryable.
bool in_retryable_write(document_view command, std::string_view name) {
  if (!command.contains("txnNumber")) return false;
  if (!command.contains("autocommit")) return true;
  return name == "commitTransaction" || name == "abortTransaction";
}

document error_reply(std::int32_t code, std::string_view message,
                     const std::vector<std::string>& labels = {}) {
  builder b;
  b.append_double("ok", 0.0).append_string("errmsg", message).append_int32("code", code);
  if (const auto name = code_name(code); !name.empty()) b.append_string("codeName", name);
  if (!labels.empty()) append_labels(b, labels);
  return std::move(b).extract();
}

// The server's rule for TransientTransactionError on an error inside a transaction: a code a new
// attempt of the whole transaction may not meet (LockTimeout, WriteConflict, SnapshotUnavailable,
// NoSuchTransaction, PreparedTransactionInProgress) and, for a command other than commit and
// abort, the retryable codes (a primary stepping down).
bool is_transient_in_transaction(std::string_view name, std::int64_t code) {
  constexpr std::int64_t transient[] = {24, 112, 246, 251, 267};
  if (std::find(std::begin(transient), std::end(transient), code) != std::end(transient)) {
    return true;
  }
  return name != "commitTransaction" && name != "abortTransaction" && is_retryable_code(code);
}

// The writes FerretDB refuses a readConcern on.
bool is_plain_write(std::string_view name) {
  return name == "insert" || name == "update" || name == "delete" || name == "findAndModify" ||
         name == "findandmodify";
}

// `body` without readConcern.afterClusterTime, and without readConcern when nothing else is in
// it; nullopt when its readConcern has no afterClusterTime.
std::optional<document> without_after_cluster_time(document_view body) {
  const auto rc = body.find("readConcern");
  if (!rc) return std::nullopt;
  const auto concern = rc->get_document();
  if (!concern || !concern->contains("afterClusterTime")) return std::nullopt;
  builder b(body.size());
  for (const element& e : body) {
    if (e.key() != "readConcern") {
      b.append_element(e);
      continue;
    }
    const bool more = std::any_of(concern->begin(), concern->end(),
                                  [](const element& f) { return f.key() != "afterClusterTime"; });
    if (!more) continue;
    b.open_document("readConcern");
    for (const element& f : *concern) {
      if (f.key() != "afterClusterTime") b.append_element(f);
    }
    b.close();
  }
  return std::move(b).extract();
}

// True for a reply with ok: 1.
bool reply_ok(document_view reply) {
  const auto ok = reply.find("ok");
  return ok && boolean(*ok).value_or(false);
}

// An integer field of a reply, 0 when absent.
std::int64_t count_field(document_view reply, std::string_view key) {
  const auto e = reply.find(key);
  return e ? integral(*e).value_or(0) : 0;
}

bool is_hello(std::string_view name) {
  return name == "hello" || name == "isMaster" || name == "ismaster";
}

// Command names as the server matches failCommands: a name or one of its aliases.
bool same_command(std::string_view a, std::string_view b) {
  if (a == b) return true;
  const auto alias = [](std::string_view n) {
    if (n == "isMaster" || n == "ismaster") return std::string_view("isMaster");
    if (n == "findAndModify" || n == "findandmodify") return std::string_view("findAndModify");
    return n;
  };
  return alias(a) == alias(b);
}

// ---- The fail points -----------------------------------------------------------------------

// What a fail point's `data` asks for, checked. failCommand uses every field but
// fail_before_commit; onPrimaryTransactionalWrite close_connection and fail_before_commit;
// failGetMoreAfterCursorCheckout error_code and app_name.
struct fail_action {
  std::vector<std::string> commands;
  bool all_commands = false;
  std::optional<std::string> app_name;
  std::optional<std::int64_t> block_ms;
  bool close_connection = false;
  std::optional<std::int32_t> error_code;
  std::optional<std::vector<std::string>> error_labels;
  std::optional<document> write_concern_error;
  std::optional<std::int32_t> fail_before_commit;  // failBeforeCommitExceptionCode

  bool has_effect() const {
    return block_ms || close_connection || error_code || write_concern_error;
  }
  bool app_matches(const std::optional<std::string>& client_app) const {
    return !app_name || (client_app && *client_app == *app_name);
  }
  bool matches(std::string_view command, const std::optional<std::string>& client_app) const {
    if (command == "configureFailPoint") return false;
    if (!app_matches(client_app)) return false;
    if (all_commands) return true;
    return std::any_of(commands.begin(), commands.end(),
                       [&](const std::string& c) { return same_command(c, command); });
  }
  // The labels of a reply the fail point made or changed: errorLabels as given, else
  // `existing` plus RetryableWriteError where the server would add it for `code`.
  std::vector<std::string> labels(std::vector<std::string> existing, bool retryable_write,
                                  std::optional<std::int64_t> code) const {
    if (error_labels) return *error_labels;
    if (retryable_write && code && is_retryable_code(*code) &&
        std::find(existing.begin(), existing.end(), retryable_write_label) == existing.end()) {
      existing.emplace_back(retryable_write_label);
    }
    return existing;
  }
};

// An error code given as a 32-bit integer.
std::optional<std::int32_t> code_value(const element& e) {
  const auto v = integral(e);
  if (!v || *v < std::numeric_limits<std::int32_t>::min() ||
      *v > std::numeric_limits<std::int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(*v);
}

// failCommand's `data` checked into an action, or the sentence that refuses it.
std::optional<fail_action> parse_data(document_view data, std::string& why) {
  fail_action a;
  bool block = false;
  std::optional<std::int64_t> block_ms;
  for (const element& e : data) {
    const std::string_view key = e.key();
    const auto refuse = [&](std::string_view what) {
      why = "configureFailPoint: data." + std::string(key) + " " + std::string(what);
      return std::nullopt;
    };
    if (key == "failCommands") {
      auto names = strings(e);
      if (!names) return refuse("must be an array of command names");
      a.commands = std::move(*names);
    } else if (key == "failAllCommands") {
      const auto v = boolean(e);
      if (!v) return refuse("must be a boolean");
      a.all_commands = *v;
    } else if (key == "appName") {
      const auto v = e.get_string();
      if (!v) return refuse("must be a string");
      a.app_name = std::string(*v);
    } else if (key == "blockConnection") {
      const auto v = boolean(e);
      if (!v) return refuse("must be a boolean");
      block = *v;
    } else if (key == "blockTimeMS") {
      const auto v = integral(e);
      if (!v || *v < 0 || *v > std::numeric_limits<std::int32_t>::max()) {
        return refuse("must be a non-negative integer (milliseconds, at most 2^31-1)");
      }
      block_ms = *v;
    } else if (key == "closeConnection") {
      const auto v = boolean(e);
      if (!v) return refuse("must be a boolean");
      a.close_connection = *v;
    } else if (key == "errorCode") {
      const auto v = code_value(e);
      if (!v) return refuse("must be an integer error code (32 bits)");
      a.error_code = *v;
    } else if (key == "errorLabels") {
      auto labels = strings(e);
      if (!labels) return refuse("must be an array of strings");
      a.error_labels = std::move(*labels);
    } else if (key == "writeConcernError") {
      const auto v = e.get_document();
      if (!v) return refuse("must be a document");
      a.write_concern_error.emplace(*v);
    } else if (key == "failInternalCommands" || key == "failLocalClients") {
      // The proxy has no internal or local clients: every connection is an outside client.
      if (!boolean(e)) return refuse("must be a boolean");
    } else if (key == "threadName" || key == "namespace" || key == "errorExtraInfo" ||
               key == "tassert") {
      return refuse("is not supported by oid_failpoint_proxy");
    } else {
      return refuse("is not a field of failCommand's data (oid_failpoint_proxy)");
    }
  }
  if (block) {
    if (!block_ms) {
      why = "configureFailPoint: data.blockTimeMS is required when blockConnection is true";
      return std::nullopt;
    }
    a.block_ms = block_ms;
  }
  return a;
}

// onPrimaryTransactionalWrite's `data`: closeConnection (default true) and
// failBeforeCommitExceptionCode, the two the server reads.
std::optional<fail_action> parse_transactional_write_data(document_view data, std::string& why) {
  fail_action a;
  a.close_connection = true;
  for (const element& e : data) {
    const std::string_view key = e.key();
    const auto refuse = [&](std::string_view what) {
      why = "configureFailPoint: data." + std::string(key) + " " + std::string(what);
      return std::nullopt;
    };
    if (key == "closeConnection") {
      const auto v = boolean(e);
      if (!v) return refuse("must be a boolean");
      a.close_connection = *v;
    } else if (key == "failBeforeCommitExceptionCode") {
      const auto v = code_value(e);
      if (!v) return refuse("must be an integer error code (32 bits)");
      a.fail_before_commit = *v;
    } else {
      return refuse(
          "is not a field of onPrimaryTransactionalWrite's data (closeConnection, "
          "failBeforeCommitExceptionCode)");
    }
  }
  return a;
}

// failGetMoreAfterCursorCheckout's `data`: errorCode (default InternalError, 1) and the fields of
// failCommand's that decide whether it applies to a client (appName; failCommands, which the
// server replaces by getMore). closeConnection is taken and, as by the server, ignored.
std::optional<fail_action> parse_get_more_data(document_view data, std::string& why) {
  fail_action a;
  a.error_code = 1;
  for (const element& e : data) {
    const std::string_view key = e.key();
    const auto refuse = [&](std::string_view what) {
      why = "configureFailPoint: data." + std::string(key) + " " + std::string(what);
      return std::nullopt;
    };
    if (key == "errorCode") {
      const auto v = code_value(e);
      if (!v) return refuse("must be an integer error code (32 bits)");
      a.error_code = *v;
    } else if (key == "appName") {
      const auto v = e.get_string();
      if (!v) return refuse("must be a string");
      a.app_name = std::string(*v);
    } else if (key == "failCommands") {
      if (!strings(e)) return refuse("must be an array of command names");
    } else if (key == "closeConnection" || key == "failInternalCommands" ||
               key == "failLocalClients") {
      if (!boolean(e)) return refuse("must be a boolean");
    } else if (key == "threadName" || key == "namespace") {
      return refuse("is not supported by oid_failpoint_proxy");
    } else {
      return refuse("is not a field of failGetMoreAfterCursorCheckout's data (errorCode, appName)");
    }
  }
  return a;
}

// One fail point's mode and action, shared by the connections' threads.
class fail_point {
 public:
  enum class mode { off, always_on, times, skip };

  // Sets the mode (times: fire N times, then off; skip: let N through, then always on) and the
  // action; returns how often it fired so far.
  std::int64_t set(mode m, std::int64_t n, std::shared_ptr<const fail_action> action) {
    const std::lock_guard lock(mutex_);
    if (m == mode::times && n == 0) m = mode::off;  // fires no time at all
    mode_ = m;
    remaining_ = n;
    action_ = m == mode::off ? nullptr : std::move(action);
    return entered_;
  }

  bool active() {
    const std::lock_guard lock(mutex_);
    return mode_ != mode::off && action_;
  }

  // The action when the fail point fires for a point of evaluation `applies` accepts (it is
  // called, under the fail point's lock, only when the fail point is on); null when it does not.
  // Counts the firing (times, skip, count), as the server counts only what passed its filter.
  template <typename F>
  std::shared_ptr<const fail_action> fire(F&& applies) {
    const std::lock_guard lock(mutex_);
    if (mode_ == mode::off || !action_ || !applies(*action_)) return nullptr;
    if (mode_ == mode::skip && remaining_ > 0) {
      --remaining_;
      return nullptr;
    }
    auto action = action_;
    if (mode_ == mode::times && --remaining_ <= 0) {
      mode_ = mode::off;
      action_ = nullptr;
    }
    ++entered_;
    return action;
  }

 private:
  std::mutex mutex_;
  mode mode_ = mode::off;
  std::int64_t remaining_ = 0;  // times: firings left; skip: evaluations still to let through
  std::shared_ptr<const fail_action> action_;
  std::int64_t entered_ = 0;
};

// The fail points the proxy implements, one of each for the whole proxy (all connections).
struct fail_points {
  fail_point command;        // failCommand
  fail_point transactional;  // onPrimaryTransactionalWrite
  fail_point get_more;       // failGetMoreAfterCursorCheckout

  // Answers configureFailPoint (`command` is its body); a refused command changes nothing.
  document configure(document_view body) {
    const auto first = body.begin();
    const auto name = first == body.end() ? oid::result<std::string_view>(std::string_view{})
                                          : first->get_string();
    if (!name) {
      return error_reply(bad_value, "configureFailPoint: the fail point's name must be a string");
    }
    fail_point* target = nullptr;
    std::optional<fail_action> (*parse)(document_view, std::string&) = nullptr;
    if (*name == "failCommand") {
      target = &command;
      parse = parse_data;
    } else if (*name == "onPrimaryTransactionalWrite") {
      target = &transactional;
      parse = parse_transactional_write_data;
    } else if (*name == "failGetMoreAfterCursorCheckout") {
      target = &get_more;
      parse = parse_get_more_data;
    } else {
      return error_reply(bad_value, "configureFailPoint: fail point '" + std::string(*name) +
                                        "' is not supported by oid_failpoint_proxy (it "
                                        "implements failCommand, onPrimaryTransactionalWrite "
                                        "and failGetMoreAfterCursorCheckout)");
    }
    const auto mode_field = body.find("mode");
    if (!mode_field) return error_reply(bad_value, "configureFailPoint: mode is missing");
    fail_point::mode parsed = fail_point::mode::off;
    std::int64_t n = 0;
    if (const auto s = mode_field->get_string()) {
      if (*s == "off") {
        parsed = fail_point::mode::off;
      } else if (*s == "alwaysOn") {
        parsed = fail_point::mode::always_on;
      } else {
        return error_reply(bad_value, "configureFailPoint: mode '" + std::string(*s) +
                                          "' is not off, alwaysOn, {times: N} or {skip: N}");
      }
    } else if (const auto d = mode_field->get_document()) {
      const auto it = d->begin();
      if (it == d->end() || std::next(it) != d->end()) {
        return error_reply(bad_value,
                           "configureFailPoint: mode must be a document with one field, times "
                           "or skip");
      }
      const auto count = integral(*it);
      if (it->key() == "times") {
        parsed = fail_point::mode::times;
      } else if (it->key() == "skip") {
        parsed = fail_point::mode::skip;
      } else if (it->key() == "activationProbability") {
        return error_reply(bad_value,
                           "configureFailPoint: mode activationProbability is not supported "
                           "by oid_failpoint_proxy");
      } else {
        return error_reply(bad_value, "configureFailPoint: mode." + std::string(it->key()) +
                                          " is not times or skip");
      }
      if (!count || *count < 0) {
        return error_reply(bad_value, "configureFailPoint: mode." + std::string(it->key()) +
                                          " must be a non-negative integer");
      }
      n = *count;
    } else {
      return error_reply(bad_value,
                         "configureFailPoint: mode must be \"off\", \"alwaysOn\", {times: N} or "
                         "{skip: N}");
    }
    std::shared_ptr<const fail_action> action;
    if (parsed != fail_point::mode::off) {
      document_view data;
      if (const auto d = body.find("data")) {
        const auto v = d->get_document();
        if (!v) return error_reply(bad_value, "configureFailPoint: data must be a document");
        data = *v;
      }
      std::string why;
      auto a = parse(data, why);
      if (!a) return error_reply(bad_value, why);
      action = std::make_shared<const fail_action>(std::move(*a));
    }
    const std::int64_t count = target->set(parsed, n, std::move(action));
    builder b;
    b.append_int64("count", count).append_double("ok", 1.0);
    return std::move(b).extract();
  }
};

// ---- Retryable writes ----------------------------------------------------------------------

// The key of a retryable write (insert, update, delete, findAndModify or bulkWrite with lsid and
// txnNumber, outside a transaction): the session id's bytes and the transaction number; none for
// any other command.
std::optional<std::string> retryable_write_key(document_view command, std::string_view name) {
  if (name != "insert" && name != "update" && name != "delete" &&
      !same_command(name, "findAndModify") && name != "bulkWrite") {
    return std::nullopt;
  }
  if (command.contains("autocommit")) return std::nullopt;
  const auto lsid = command.find("lsid");
  const auto txn = command.find("txnNumber");
  if (!lsid || !txn || !lsid->get_document()) return std::nullopt;
  const auto number = integral(*txn);
  if (!number) return std::nullopt;
  const auto session = lsid->raw_value();
  return std::string(reinterpret_cast<const char*>(session.data()), session.size()) + ':' +
         std::to_string(*number);
}

// True for a write's reply that says it was applied: ok: 1 and no writeErrors.
bool write_applied(document_view reply) {
  const auto ok = reply.find("ok");
  if (!ok) return false;
  const auto value = ok->get_double();
  const auto whole = integral(*ok);
  return ((value && *value == 1.0) || (whole && *whole == 1)) && !reply.contains("writeErrors");
}

// FerretDB ignores txnNumber: a write the client retries (after a write concern error the proxy
// added to a write the server had applied, or a connection onPrimaryTransactionalWrite closed
// after the write) would be applied twice. A server keeps each retryable write's outcome by
// session, transaction number and statement, and answers a repeat with it; so does the proxy,
// for the writes it forwarded and the server applied, whatever connection the repeat comes on:
// the whole reply of a command forwarded as one, or the outcome of each statement of a command
// it ran statement by statement (see session::statement_write). The oldest are forgotten past
// 10,000 commands.
class transaction_table {
 public:
  // The reply to the write `key` names, when it was `command` and was applied as one.
  std::optional<document> find(const std::string& key, std::string_view command) {
    const std::lock_guard lock(mutex_);
    const auto it = writes_.find(key);
    if (it == writes_.end() || !same_command(it->second.command, command)) return std::nullopt;
    return it->second.reply;
  }
  // The outcomes of the statements of `key` the server applied, by index in the command; empty
  // when none (or it was another command).
  std::map<std::size_t, document> statements(const std::string& key, std::string_view command) {
    const std::lock_guard lock(mutex_);
    const auto it = writes_.find(key);
    if (it == writes_.end() || !same_command(it->second.command, command)) return {};
    return it->second.statements;
  }
  void store(const std::string& key, std::string command, document reply) {
    const std::lock_guard lock(mutex_);
    at(key, std::move(command)).reply = std::move(reply);
  }
  void store_statement(const std::string& key, std::string command, std::size_t index,
                       document outcome) {
    const std::lock_guard lock(mutex_);
    at(key, std::move(command)).statements.insert_or_assign(index, std::move(outcome));
  }

 private:
  static constexpr std::size_t capacity = 10'000;
  struct entry {
    std::string command;
    std::optional<document> reply;
    std::map<std::size_t, document> statements;
  };

  // The entry of `key` for `command` (a new one, replacing one of another command); with the
  // lock held.
  entry& at(const std::string& key, std::string command) {
    auto it = writes_.find(key);
    if (it != writes_.end()) {
      if (!same_command(it->second.command, command))
        it->second = entry{std::move(command), {}, {}};
      return it->second;
    }
    if (writes_.size() >= capacity && !order_.empty()) {
      writes_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    return writes_.emplace(key, entry{std::move(command), {}, {}}).first->second;
  }

  std::mutex mutex_;
  std::unordered_map<std::string, entry> writes_;
  std::deque<std::string> order_;  // keys, oldest first
};

// ---- Transactions --------------------------------------------------------------------------

// FerretDB v1 has no transactions: it refuses a command with startTransaction. The proxy runs
// them as a replica set member answers them, over FerretDB's storage, so that the transactions
// tests check the client's side of the protocol against real data:
//   - A command with `autocommit` belongs to the transaction (lsid, txnNumber). The one with
//     `startTransaction: true` opens it (a higher txnNumber than the session's last; an open
//     transaction of a lower number is aborted first). A command of a transaction the proxy does
//     not know, or that ended, is refused with NoSuchTransaction (251) and the
//     TransientTransactionError label, as the server does.
//   - Its commands go on to the server without startTransaction, autocommit, txnNumber and
//     readConcern. Before the transaction first writes a collection (insert, update, delete,
//     findAndModify, create, createIndexes, drop), the proxy copies it (every document, or that
//     it did not exist) through a connection of its own to the server.
//   - commitTransaction forgets the copies and answers ok (again for a commit repeated);
//     abortTransaction, and a command of the transaction the server refuses (ok: 0 or
//     writeErrors, which abort a transaction on a server), put the copies back: the documents as
//     they were, a collection the transaction made dropped.
//   - `count`, which a server refuses in a transaction, is refused with
//     OperationNotSupportedInTransaction (263).
// What it does not do: isolation. Other sessions see a transaction's writes before its commit
// (a server shows them nothing until then), and two transactions writing one collection at once
// undo each other's work on abort. Indexes a transaction made on an existing collection stay
// after an abort. The tests that rely on these are skipped (skips.txt).
class transaction_emulator {
 public:
  explicit transaction_emulator(const endpoint& upstream)
      : uri_("mongodb://" + upstream.host + ":" + std::to_string(upstream.port) +
             "/?directConnection=true&serverSelectionTimeoutMS=5000") {}

  struct decision {
    std::optional<document> reply;    // answer this, forward nothing
    std::optional<document> forward;  // or forward this body
    std::string key;                  // the transaction, for `on_reply`
  };

  decision on_command(document_view body, std::string_view name) {
    std::lock_guard lock(mutex_);
    decision d;
    const std::string lsid = lsid_of(body);
    std::optional<std::int64_t> number;
    if (const auto t = body.find("txnNumber")) number = integral(*t);
    if (lsid.empty() || !number) {
      d.reply = error_reply(bad_value, "a transaction's command needs lsid and txnNumber");
      return d;
    }
    auto it = open_.find(lsid);
    if (const auto s = body.find("startTransaction"); s && boolean(*s).value_or(false)) {
      if (it != open_.end() && it->second.number >= *number) {
        d.reply = no_such_transaction(*number);
        return d;
      }
      if (it != open_.end() && it->second.where == state::open) restore(it->second);
      open_[lsid] = transaction{*number, state::open, {}};
      it = open_.find(lsid);
    }
    if (it == open_.end() || it->second.number != *number) {
      d.reply = no_such_transaction(*number);
      return d;
    }
    auto& t = it->second;
    if (name == "commitTransaction") {
      if (t.where == state::aborted) {
        d.reply = no_such_transaction(*number);
      } else {
        t.where = state::committed;
        t.saved.clear();
        d.reply = ok_reply();
      }
      return d;
    }
    if (name == "abortTransaction") {
      if (t.where == state::committed) {
        d.reply = error_reply(256, "Transaction has been committed");  // TransactionCommitted
      } else if (t.where == state::aborted) {
        d.reply = no_such_transaction(*number);
      } else {
        restore(t);
        t.where = state::aborted;
        d.reply = ok_reply();
      }
      return d;
    }
    if (t.where != state::open) {
      d.reply = no_such_transaction(*number);
      return d;
    }
    if (name == "count") {
      // A server refuses the count command in a transaction (and the refusal ends it).
      restore(t);
      t.where = state::aborted;
      d.reply = error_reply(263, "Cannot run 'count' in a multi-document transaction.");
      return d;
    }
    if (is_write(name)) {
      const std::string db(string_field(body, "$db"));
      const std::string coll(string_field(body, name));
      if (!coll.empty()) {
        if (auto refused = save(t, db, coll)) {
          d.reply = std::move(*refused);
          return d;
        }
      }
    }
    builder b(body.size());
    for (const element& e : body) {
      const auto k = e.key();
      if (k == "startTransaction" || k == "autocommit" || k == "txnNumber" || k == "readConcern") {
        continue;
      }
      b.append_element(e);
    }
    d.forward = std::move(b).extract();
    d.key = lsid + "/" + std::to_string(*number);
    return d;
  }

  // killAllSessions: every open transaction is aborted (its writes undone), as a server's
  // killAllSessions aborts them.
  void abort_all() {
    std::lock_guard lock(mutex_);
    for (auto& [lsid, t] : open_) {
      if (t.where != state::open) continue;
      restore(t);
      t.where = state::aborted;
    }
  }

  // The server's reply to a forwarded command of transaction `key`: a refusal aborts it.
  void on_reply(const std::string& key, document_view reply) {
    const bool refused = !boolean(reply.find("ok").value_or(element{})).value_or(false) ||
                         reply.contains("writeErrors");
    if (!refused) return;
    std::lock_guard lock(mutex_);
    const auto slash = key.rfind('/');
    const auto it = open_.find(key.substr(0, slash));
    if (it == open_.end() || std::to_string(it->second.number) != key.substr(slash + 1) ||
        it->second.where != state::open) {
      return;
    }
    restore(it->second);
    it->second.where = state::aborted;
  }

 private:
  enum class state { open, committed, aborted };
  struct saved_collection {
    bool existed = false;
    std::vector<document> documents;
  };
  struct transaction {
    std::int64_t number = 0;
    state where = state::open;
    std::map<std::string, saved_collection> saved;  // by "db.collection"
  };

  static bool is_write(std::string_view name) {
    return name == "insert" || name == "update" || name == "delete" ||
           same_command(name, "findAndModify") || name == "create" || name == "createIndexes" ||
           name == "drop";
  }

  static std::string lsid_of(document_view body) {
    const auto l = body.find("lsid");
    if (!l || !l->get_document()) return "";
    const auto id = l->get_document()->find("id");
    if (!id) return "";
    const auto bin = id->get_binary();
    if (!bin) return "";
    return std::string(reinterpret_cast<const char*>(bin->bytes.data()), bin->bytes.size());
  }

  static document ok_reply() {
    builder b;
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  static document no_such_transaction(std::int64_t number) {
    return error_reply(251,
                       "Transaction with txnNumber " + std::to_string(number) +
                           " has been aborted or was never started",
                       {"TransientTransactionError"});
  }

  mongo::client& side() {
    if (!side_) side_.emplace(mongo::client::create(uri_).value());
    return *side_;
  }

  // Copies `db.coll` before the transaction first writes it; a refusal when it cannot.
  std::optional<document> save(transaction& t, const std::string& db, const std::string& coll) {
    const std::string ns = db + "." + coll;
    if (t.saved.contains(ns)) return std::nullopt;
    builder filter;
    filter.append_string("name", coll);
    auto names = side().database(db).list_collection_names(filter.view());
    if (!names) {
      return error_reply(bad_value, "the proxy cannot copy " + ns +
                                        " for the transaction: " + names.error().message);
    }
    saved_collection c;
    c.existed = !names->empty();
    if (c.existed) {
      auto cursor = side().collection(db, coll).find();
      if (!cursor) {
        return error_reply(bad_value,
                           "the proxy cannot copy " + ns + ": " + cursor.error().message);
      }
      while (true) {
        auto more = cursor->next();
        if (!more) {
          return error_reply(bad_value,
                             "the proxy cannot copy " + ns + ": " + more.error().message);
        }
        if (!*more) break;
        c.documents.emplace_back(cursor->current());
      }
    }
    t.saved.emplace(ns, std::move(c));
    return std::nullopt;
  }

  // Puts back every collection the transaction wrote, as it was before.
  void restore(transaction& t) {
    for (auto& [ns, c] : t.saved) {
      const auto dot = ns.find('.');
      auto coll = side().collection(ns.substr(0, dot), ns.substr(dot + 1));
      if (!c.existed) {
        if (auto r = coll.drop(); !r)
          log("transaction abort: dropping " + ns + ": " + r.error().message);
        continue;
      }
      if (auto r = coll.delete_many({}); !r) {
        log("transaction abort: emptying " + ns + ": " + r.error().message);
        continue;
      }
      if (c.documents.empty()) continue;
      std::vector<document_view> views;
      for (const auto& d : c.documents) views.push_back(d.view());
      if (auto r = coll.insert_many(views); !r) {
        log("transaction abort: restoring " + ns + ": " + r.error().message);
      }
    }
    t.saved.clear();
  }

  std::string uri_;
  std::mutex mutex_;
  std::optional<mongo::client> side_;
  std::map<std::string, transaction> open_;  // by the session id's bytes: its latest
};

// ---- Connections ---------------------------------------------------------------------------

struct proxy_state {
  endpoint upstream;
  std::string address;  // the proxy's own HOST:PORT, put in hello replies
  int stop_fd = -1;     // an eventfd: readable once the proxy is stopping
  fail_points failpoints;
  transaction_table transactions;
  std::unique_ptr<transaction_emulator> emulated;  // made once `upstream` is known
  // The logical clock of operationTime and $clusterTime on a replica set's replies: the
  // proxy's start in seconds, and an increment that ticks once per reply.
  std::uint32_t clock_seconds = 0;
  std::atomic<std::uint32_t> clock_ticks{0};
};

bool set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

bool set_nodelay(int fd) {
  const int one = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
}

// Closes a file descriptor it owns.
class fd_guard {
 public:
  explicit fd_guard(int fd = -1) : fd_(fd) {}
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// One client connection and its upstream connection, served by one thread.
class session {
 public:
  session(int client_fd, std::string peer, proxy_state& proxy)
      : client_(client_fd), peer_(std::move(peer)), proxy_(proxy) {}

  void run() {
    try {
      serve();
    } catch (const std::exception& e) {  // the builder's too_large, bad_alloc: end this one only
      log(peer_ + ": " + e.what() + "; connection closed");
    }
  }

 private:
  enum class step { keep, close };

  // What to do with the reply to a request: rewrite hello, add a write concern error, keep it
  // for the write's retries.
  struct pending {
    bool hello = false;
    std::shared_ptr<const fail_action> write_concern;
    bool retryable_write = false;
    std::string write_key;  // retryable_write_key, or empty
    std::string command;
    std::string transaction;  // the emulated transaction of the command, or empty
  };

  // Bytes read from one side and not yet handled: whole messages are taken from `start`.
  struct inbox {
    std::vector<std::uint8_t> bytes;
    std::size_t start = 0;
  };

  void serve() {
    if (!connect_upstream()) return;
    if (!set_nonblocking(client_.get()) || !set_nodelay(client_.get())) {
      log(peer_ + ": cannot set up the client socket: " + errno_text(errno));
      return;
    }
    while (true) {
      pollfd fds[3] = {
          {client_.get(), POLLIN, 0}, {upstream_.get(), POLLIN, 0}, {proxy_.stop_fd, POLLIN, 0}};
      if (poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        log(peer_ + ": poll: " + errno_text(errno));
        return;
      }
      if (fds[2].revents != 0) return;
      if (fds[0].revents != 0 && (!receive(client_.get(), from_client_, "client") ||
                                  drain(from_client_, true) == step::close)) {
        return;
      }
      if (fds[1].revents != 0 && (!receive(upstream_.get(), from_upstream_, "upstream") ||
                                  drain(from_upstream_, false) == step::close)) {
        return;
      }
    }
  }

  bool connect_upstream() {
    const auto& up = proxy_.upstream;
    upstream_.reset(socket(up.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (upstream_.get() < 0) {
      log(peer_ + ": socket: " + errno_text(errno));
      return false;
    }
    if (connect(upstream_.get(), reinterpret_cast<const sockaddr*>(&up.addr), up.size) != 0) {
      if (errno != EINPROGRESS) {
        log(peer_ + ": cannot connect to the upstream " + up.host + ":" + std::to_string(up.port) +
            ": " + errno_text(errno));
        return false;
      }
      if (!wait_for(upstream_.get(), POLLOUT)) return false;
      int error = 0;
      socklen_t size = sizeof error;
      if (getsockopt(upstream_.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) {
        log(peer_ + ": cannot connect to the upstream " + up.host + ":" + std::to_string(up.port) +
            ": " + errno_text(error != 0 ? error : errno));
        return false;
      }
    }
    if (!set_nodelay(upstream_.get())) {
      log(peer_ + ": setsockopt TCP_NODELAY: " + errno_text(errno));
      return false;
    }
    return true;
  }

  // Waits until `fd` is ready for `events`; false when the proxy stops or poll fails.
  bool wait_for(int fd, short events) {
    while (true) {
      pollfd fds[2] = {{fd, events, 0}, {proxy_.stop_fd, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        log(peer_ + ": poll: " + errno_text(errno));
        return false;
      }
      if (fds[1].revents != 0) return false;
      if (fds[0].revents != 0) return true;
    }
  }

  // Sleeps `ms` milliseconds (blockConnection); false when the proxy stops meanwhile.
  bool pause(std::int64_t ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            until - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return true;
      pollfd stop{proxy_.stop_fd, POLLIN, 0};
      // +1: poll rounds down, and a block must last at least blockTimeMS.
      const int r = poll(&stop, 1, static_cast<int>(std::min<std::int64_t>(left + 1, 1'000'000)));
      if (r < 0 && errno != EINTR) {
        log(peer_ + ": poll: " + errno_text(errno));
        return false;
      }
      if (r > 0) return false;
    }
  }

  // Reads what `fd` has into `in`; false when the peer closed or the read failed.
  bool receive(int fd, inbox& in, const char* side) {
    const std::size_t used = in.bytes.size();
    in.bytes.resize(used + read_chunk);
    const ssize_t n = recv(fd, in.bytes.data() + used, read_chunk, 0);
    in.bytes.resize(used + (n > 0 ? static_cast<std::size_t>(n) : 0));
    if (n > 0) return true;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    const bool partial = in.bytes.size() > in.start;
    if (n < 0 && errno != ECONNRESET) {
      log(peer_ + ": reading from the " + side + ": " + errno_text(errno));
    } else if (partial || std::string_view(side) == "upstream") {
      log(peer_ + ": the " + side + " closed the connection" +
          (partial ? " in the middle of a message" : ""));
    }
    return false;
  }

  bool send_all(int fd, std::span<const std::uint8_t> bytes, const char* side) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!wait_for(fd, POLLOUT)) return false;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        if (errno != EPIPE && errno != ECONNRESET) {
          log(peer_ + ": writing to the " + side + ": " + errno_text(errno));
        }
        return false;
      }
    }
    return true;
  }

  bool send_reply(std::int32_t response_to, document_view body) {
    std::optional<document> stamped;
    if (replica_set_) {
      stamped = with_clock(body);
      body = stamped->view();
    }
    mongo::op_msg reply;
    reply.request_id = next_request_id_++;
    reply.response_to = response_to;
    reply.body = body;
    const auto bytes = mongo::encode_op_msg(reply);
    if (!bytes) {
      log(peer_ + ": cannot encode a reply: " + bytes.error().message());
      return false;
    }
    return send_all(client_.get(), *bytes, "client");
  }

  // Handles every whole message in `in`.
  step drain(inbox& in, bool from_client) {
    const char* side = from_client ? "client" : "upstream";
    mongo::op_msg_limits limits;
    limits.max_message_size = max_message_size;
    while (in.bytes.size() - in.start >= mongo::message_header_size) {
      const std::span<const std::uint8_t> rest(in.bytes.data() + in.start,
                                               in.bytes.size() - in.start);
      const auto header = mongo::decode_header(rest, limits);
      if (!header) {
        log(peer_ + ": the " + side + " sent a message header the proxy refuses (" +
            header.error().message() + ": messageLength must be 16 to 48,000,000); closed");
        return step::close;
      }
      const auto size = static_cast<std::size_t>(header->message_length);
      if (rest.size() < size) break;
      const auto message = rest.first(size);
      if ((from_client ? from_client_message(message, header->op_code)
                       : from_upstream_message(message, header->op_code)) == step::close) {
        return step::close;
      }
      in.start += size;
    }
    compact(in);
    return step::keep;
  }

  step from_client_message(std::span<const std::uint8_t> bytes, std::int32_t op_code) {
    if (op_code != mongo::op_msg_opcode) {
      return send_all(upstream_.get(), bytes, "upstream") ? step::keep : step::close;
    }
    const auto msg = mongo::decode_op_msg(bytes, limits());
    if (!msg) {
      log(peer_ + ": the client sent an OP_MSG the proxy cannot read (" + msg.error().message() +
          " at byte " + std::to_string(msg.error().offset) + "); closed");
      return step::close;
    }
    const document_view body = msg->body;
    const std::string name(body.empty() ? std::string_view() : body.begin()->key());
    const bool reply_expected = (msg->flags & mongo::op_msg_flags::more_to_come) == 0;

    if (name == "configureFailPoint") {
      const document reply =
          string_field(body, "$db") == "admin"
              ? proxy_.failpoints.configure(body)
              : error_reply(unauthorized,
                            "configureFailPoint may only be run against the admin database");
      if (!reply_expected) return step::keep;
      return send_reply(msg->request_id, reply.view()) ? step::keep : step::close;
    }
    if (name == "killAllSessions") {
      // FerretDB has no killAllSessions; what it would kill here is the proxy's transactions.
      proxy_.emulated->abort_all();
      if (!reply_expected) return step::keep;
      builder ok;
      ok.append_double("ok", 1.0);
      const document reply = std::move(ok).extract();
      return send_reply(msg->request_id, reply.view()) ? step::keep : step::close;
    }
    if (is_hello(name) && !handshake_seen_) {
      // The server takes the client's metadata from the connection's first hello only.
      handshake_seen_ = true;
      if (const auto c = body.find("client")) {
        if (const auto client = c->get_document()) {
          if (const auto a = client->find("application")) {
            if (const auto application = a->get_document()) {
              if (const auto n = application->find("name")) {
                if (const auto s = n->get_string()) app_name_ = std::string(*s);
              }
            }
          }
        }
      }
    }

    const auto action = proxy_.failpoints.command.fire(
        [&](const fail_action& a) { return a.has_effect() && a.matches(name, app_name_); });
    const bool retryable_write = in_retryable_write(body, name);
    if (action) {
      if (action->block_ms && !pause(*action->block_ms)) return step::close;
      if (action->close_connection) return step::close;
      if (action->error_code) {
        if (!reply_expected) return step::keep;
        auto labels = action->labels({}, retryable_write, action->error_code);
        if (!action->error_labels && body.contains("autocommit") &&
            is_transient_in_transaction(name, *action->error_code)) {
          labels.emplace_back("TransientTransactionError");  // as the server labels it
        }
        const document reply = error_reply(*action->error_code, failpoint_errmsg, labels);
        return send_reply(msg->request_id, reply.view()) ? step::keep : step::close;
      }
    }
    if (name == "getMore" && reply_expected) {
      const auto failed = get_more_failure(body);
      if (failed.close) return step::close;
      if (failed.reply) {
        return send_reply(msg->request_id, failed.reply->view()) ? step::keep : step::close;
      }
    }
    if (body.contains("autocommit")) {
      return transaction_message(*msg, name, action, retryable_write, reply_expected);
    }
    // A write of a causally consistent session carries readConcern {afterClusterTime}, from the
    // proxy's own logical clock, which FerretDB refuses ("unknown field", as it refuses any
    // readConcern on a write): it goes without afterClusterTime, and without readConcern when
    // nothing else is in it. Anything else in it goes on, for FerretDB to refuse as MongoDB
    // refuses it (level snapshot on a write).
    std::optional<document> without_after;
    if (is_plain_write(name)) without_after = without_after_cluster_time(body);
    const document_view upstream_body = without_after ? without_after->view() : body;
    const bool hello = is_hello(name);
    const bool write_concern = action && action->write_concern_error;
    const auto write_key = reply_expected ? retryable_write_key(body, name) : std::nullopt;
    if (write_key) {
      if (auto applied = proxy_.transactions.find(*write_key, name)) {
        // A retry of a write the server applied: its first reply, as a server answers it.
        if (write_concern) {
          applied = rewrite(applied->view(), pending{false, action, retryable_write, {}, {}, {}});
        }
        return send_reply(msg->request_id, applied->view()) ? step::keep : step::close;
      }
      if (is_plain_write(name) && (proxy_.failpoints.transactional.active() ||
                                   !proxy_.transactions.statements(*write_key, name).empty())) {
        return statement_write(*msg, upstream_body, name, *write_key,
                               write_concern ? action : nullptr, retryable_write);
      }
    }
    if (reply_expected && (hello || write_concern || write_key)) {
      if (pending_.size() >= max_pending_replies) {
        log(peer_ + ": the client has " + std::to_string(pending_.size()) +
            " requests without replies; closed");
        return step::close;
      }
      pending_[msg->request_id] = pending{
          hello, write_concern ? action : nullptr, retryable_write, write_key.value_or(""), name,
          {}};
    }
    if (without_after) return send_with_body(*msg, upstream_body, upstream_.get(), "upstream");
    return send_all(upstream_.get(), bytes, "upstream") ? step::keep : step::close;
  }

  // Drops the handled messages at the front of `in`, so that the buffer holds at most one
  // message and a read.
  static void compact(inbox& in) {
    if (in.start == in.bytes.size()) {
      in.bytes.clear();
      in.start = 0;
    } else if (in.start > 0) {
      in.bytes.erase(in.bytes.begin(), in.bytes.begin() + static_cast<std::ptrdiff_t>(in.start));
      in.start = 0;
    }
  }

  // Sends `body` to the upstream as a request of the proxy's own and returns the body of its
  // reply; whatever else the upstream sends meanwhile goes on to the client as usual. nullopt
  // (logged) when the connection fails or the proxy stops.
  std::optional<document> call_upstream(document_view body) {
    mongo::op_msg request;
    request.request_id = next_upstream_request_id_;
    next_upstream_request_id_ =
        next_upstream_request_id_ == std::numeric_limits<std::int32_t>::max()
            ? own_request_ids
            : next_upstream_request_id_ + 1;
    request.body = body;
    const auto encoded = mongo::encode_op_msg(request);
    if (!encoded) {
      log(peer_ + ": cannot encode a command for the upstream: " + encoded.error().message());
      return std::nullopt;
    }
    if (!send_all(upstream_.get(), *encoded, "upstream")) return std::nullopt;
    inbox& in = from_upstream_;
    while (true) {
      while (in.bytes.size() - in.start >= mongo::message_header_size) {
        const std::span<const std::uint8_t> rest(in.bytes.data() + in.start,
                                                 in.bytes.size() - in.start);
        const auto header = mongo::decode_header(rest, limits());
        if (!header) {
          log(peer_ + ": the upstream sent a message header the proxy refuses (" +
              header.error().message() + "); closed");
          return std::nullopt;
        }
        const auto size = static_cast<std::size_t>(header->message_length);
        if (rest.size() < size) break;
        const auto message = rest.first(size);
        if (header->op_code == mongo::op_msg_opcode && header->response_to == request.request_id) {
          const auto msg = mongo::decode_op_msg(message, limits());
          if (!msg) {
            log(peer_ + ": the upstream answered the proxy with an OP_MSG it cannot read (" +
                msg.error().message() + "); closed");
            return std::nullopt;
          }
          document reply(msg->body);
          in.start += size;
          compact(in);
          return reply;
        }
        if (from_upstream_message(message, header->op_code) == step::close) return std::nullopt;
        in.start += size;
      }
      compact(in);
      if (!wait_for(upstream_.get(), POLLIN) ||
          !receive(upstream_.get(), from_upstream_, "upstream")) {
        return std::nullopt;
      }
    }
  }

  // What failGetMoreAfterCursorCheckout makes of a getMore: when it fires, the server's error
  // (the cursor killed first, as the server deletes a cursor whose getMore failed after its
  // checkout); no reply when it does not. As the server's, it applies only once the cursor is
  // checked out, i.e. to a cursor the server has: the proxy's killCursors finds out, and a cursor
  // the server does not know is the server's to answer (CursorNotFound). `close` when the
  // upstream connection failed.
  struct get_more_outcome {
    bool close = false;
    std::optional<document> reply;
  };
  get_more_outcome get_more_failure(document_view body) {
    get_more_outcome out;
    if (!proxy_.failpoints.get_more.active()) return out;
    const auto id_field = body.find("getMore");
    const auto id = id_field ? integral(*id_field) : std::nullopt;
    const std::string coll(string_field(body, "collection"));
    const std::string db(string_field(body, "$db"));
    if (!id || coll.empty() || db.empty()) return out;
    const auto action = proxy_.failpoints.get_more.fire([&](const fail_action& a) {
      if (!a.app_matches(app_name_)) return false;
      builder kill;
      kill.append_string("killCursors", coll);
      kill.open_array("cursors").append_int64("0", *id).close();
      kill.append_string("$db", db);
      const auto reply = call_upstream(kill.view());
      if (!reply) {
        out.close = true;
        return false;
      }
      const auto killed = reply->view().find("cursorsKilled");
      const auto ids = killed ? killed->get_array() : oid::result<document_view>(document_view{});
      if (!ids) return false;
      return std::any_of(ids->begin(), ids->end(),
                         [&](const element& e) { return integral(e) == *id; });
    });
    if (!action) return out;
    std::vector<std::string> labels;
    if (body.contains("autocommit") &&
        is_transient_in_transaction("getMore", *action->error_code)) {
      labels.emplace_back("TransientTransactionError");  // as the server labels it
    }
    out.reply = error_reply(*action->error_code,
                            "Hit the 'failGetMoreAfterCursorCheckout' failpoint", labels);
    return out;
  }

  // True when the collection of `command` (`name`'s value, in $db) holds a document matching
  // `filter`, with the statement's collation and hint; false when not or when the server
  // refuses the query (then the statement fails too, writing nothing).
  bool finds(document_view command, std::string_view name, document_view filter,
             document_view statement) {
    builder b;
    b.append_string("find", string_field(command, name));
    b.append_document("filter", filter);
    for (const char* key : {"collation", "hint"}) {
      if (const auto e = statement.find(key)) b.append_element(*e);
    }
    b.open_document("projection").append_int32("_id", 1).close();
    b.append_int32("limit", 1).append_bool("singleBatch", true);
    b.append_string("$db", string_field(command, "$db"));
    const auto reply = call_upstream(b.view());
    if (!reply || !reply_ok(reply->view())) return false;
    const auto cursor = reply->view().find("cursor");
    if (!cursor || !cursor->get_document()) return false;
    const auto batch = cursor->get_document()->find("firstBatch");
    const auto docs = batch ? batch->get_array() : oid::result<document_view>(document_view{});
    return docs && docs->begin() != docs->end();
  }

  // A retryable insert, update, delete or findAndModify, run as the server runs it while
  // onPrimaryTransactionalWrite is on (or when an earlier attempt of it was run so): statement by
  // statement for update and delete, the documents of an insert as one batch (one at a time when
  // the batch fails), each statement's outcome kept in the transaction table once the server
  // applied it, and a statement the table holds answered from it, not applied again.
  // The fail point is evaluated where the server evaluates it, once per write that commits (a
  // statement that changes nothing is no write): with failBeforeCommitExceptionCode before the
  // write (the proxy asks the server whether the statement would write, and does not run it when
  // the fail point fires: that statement fails with the code), otherwise after it. When it fires
  // with closeConnection (the default), the rest of the command still runs and the client's
  // connection is then closed without a reply, as the server ends the session and goes on.
  step statement_write(const mongo::op_msg& msg, document_view body, const std::string& name,
                       const std::string& key, const std::shared_ptr<const fail_action>& wce,
                       bool retryable_write) {
    const bool find_and_modify = same_command(name, "findAndModify");
    const std::string_view field = name == "insert"   ? "documents"
                                   : name == "update" ? "updates"
                                   : name == "delete" ? "deletes"
                                                      : "";
    std::vector<document_view> statements;
    if (find_and_modify) {
      statements.push_back(body);
    } else {
      if (const auto a = body.find(field)) {
        if (const auto arr = a->get_array()) {
          for (const element& e : *arr) {
            if (const auto d = e.get_document()) statements.push_back(*d);
          }
        }
      }
      for (const auto& s : msg.sequences) {
        if (s.identifier == field) {
          statements.insert(statements.end(), s.documents.begin(), s.documents.end());
        }
      }
    }
    const auto ordered_field = body.find("ordered");
    const bool ordered = !ordered_field || boolean(*ordered_field).value_or(true);
    struct outcome {
      std::optional<document> applied;  // {n, nModified, upserted}, or findAndModify's reply
      std::optional<document> error;    // a writeErrors entry
    };
    std::vector<outcome> out(statements.size());
    for (auto& [i, applied] : proxy_.transactions.statements(key, name)) {
      if (i < out.size()) out[i].applied = std::move(applied);
    }
    bool close = false;
    std::optional<document> server_wce, refusal;
    fail_point& fp = proxy_.failpoints.transactional;
    // failBeforeCommitExceptionCode: evaluated before a write that `would` make.
    const auto fire_before = [&](auto&& would) {
      auto a = fp.fire([&](const fail_action& f) { return f.fail_before_commit && would(); });
      if (a && a->close_connection) close = true;
      return a;
    };
    // Without it: evaluated after a write.
    const auto fire_after = [&] {
      const auto a = fp.fire([](const fail_action& f) { return !f.fail_before_commit; });
      if (a && a->close_connection) close = true;
    };
    std::string session = "session";
    if (const auto l = body.find("lsid"); l && l->get_document()) {
      if (const auto id = l->get_document()->find("id")) {
        if (const auto bin = id->get_binary()) {
          static constexpr char hex[] = "0123456789abcdef";
          session.clear();
          for (const auto byte : bin->bytes) {
            session += hex[byte >> 4];
            session += hex[byte & 15];
          }
        }
      }
    }
    const std::string txn = std::to_string(count_field(body, "txnNumber"));
    const auto failed = [&](std::int32_t code, std::size_t index) {
      builder e;
      e.append_int32("index", static_cast<std::int32_t>(index)).append_int32("code", code);
      if (const auto n = code_name(code); !n.empty()) e.append_string("codeName", n);
      e.append_string("errmsg", "Failing write for " + session + ":" + txn +
                                    " due to failpoint. The write must not be reflected.");
      out[index].error = std::move(e).extract();
    };
    // The command with `docs` as its statements, to the server; its reply (a write concern error
    // in it kept for the whole reply), or nullopt when the connection failed.
    const auto run = [&](std::span<const document_view> docs) -> std::optional<document> {
      builder b(body.size());
      for (const element& e : body) {
        if (e.key() != field) b.append_element(e);
      }
      b.open_array(field);
      for (std::size_t k = 0; k < docs.size(); ++k) b.append_document(std::to_string(k), docs[k]);
      b.close();
      const document command = std::move(b).extract();
      auto reply = call_upstream(command.view());
      if (reply) {
        if (const auto w = reply->view().find("writeConcernError")) {
          if (const auto d = w->get_document()) server_wce.emplace(*d);
        }
      }
      return reply;
    };
    // The writeErrors of a reply, by index.
    const auto write_errors = [](document_view reply) {
      std::vector<std::pair<std::size_t, document_view>> errors;
      if (const auto w = reply.find("writeErrors")) {
        if (const auto arr = w->get_array()) {
          for (const element& e : *arr) {
            const auto d = e.get_document();
            if (!d) continue;
            const auto index = d->find("index");
            const auto i = index ? integral(*index) : std::nullopt;
            if (i && *i >= 0) errors.emplace_back(static_cast<std::size_t>(*i), *d);
          }
        }
      }
      return errors;
    };
    // `error` (a writeErrors entry) with `index` instead of its own.
    const auto reindexed = [](document_view error, std::size_t index) {
      builder e;
      e.append_int32("index", static_cast<std::int32_t>(index));
      for (const element& f : error) {
        if (f.key() != "index") e.append_element(f);
      }
      return std::move(e).extract();
    };
    const auto keep = [&](std::size_t i, document applied) {
      proxy_.transactions.store_statement(key, name, i, document(applied.view()));
      out[i].applied = std::move(applied);
    };
    const auto one = [] {
      builder b;
      b.append_int32("n", 1);
      return std::move(b).extract();
    };

    std::optional<document> reply;
    if (find_and_modify) {
      if (out[0].applied) {
        reply = std::move(out[0].applied);
      } else {
        const auto would = [&] {
          const auto upsert = body.find("upsert");
          if (upsert && boolean(*upsert).value_or(false)) return true;
          const auto query = body.find("query");
          const auto filter =
              query && query->get_document() ? *query->get_document() : document_view{};
          return finds(body, name, filter, body);
        };
        if (const auto f = fire_before(would)) {
          const std::int32_t code = *f->fail_before_commit;
          reply = error_reply(code,
                              "Failing write for " + session + ":" + txn +
                                  " due to failpoint. The write must not be reflected.",
                              f->labels({}, retryable_write, code));
        } else {
          reply = call_upstream(body);
          if (!reply) return step::close;
          const auto leo = reply->view().find("lastErrorObject");
          const auto le = leo && leo->get_document() ? *leo->get_document() : document_view{};
          if (reply_ok(reply->view()) && (count_field(le, "n") > 0 || le.contains("upserted"))) {
            proxy_.transactions.store_statement(key, name, 0, document(reply->view()));
            fire_after();
          }
        }
      }
    } else if (name == "insert") {
      std::vector<std::size_t> todo;
      for (std::size_t i = 0; i < out.size(); ++i) {
        if (!out[i].applied) todo.push_back(i);
      }
      // A document the server would insert: one whose _id is not there yet.
      const auto is_new = [&](std::size_t i) {
        const auto id = statements[i].find("_id");
        if (!id) return true;
        builder filter;
        filter.append_element("_id", *id);
        return !finds(body, name, filter.view(), document_view{});
      };
      const auto batch_failed =
          todo.size() > 1
              ? fire_before([&] { return std::all_of(todo.begin(), todo.end(), is_new); })
              : nullptr;
      if (todo.size() == 1 || batch_failed) {
        // One at a time, as the server inserts a batch that failed.
        for (const std::size_t i : todo) {
          if (const auto f = fire_before([&] { return is_new(i); })) {
            failed(*f->fail_before_commit, i);
            if (ordered) break;
            continue;
          }
          const auto r = run(std::span(&statements[i], 1));
          if (!r) return step::close;
          if (!reply_ok(r->view())) {
            refusal = std::move(*r);
            break;
          }
          if (const auto errors = write_errors(r->view()); !errors.empty()) {
            out[i].error = reindexed(errors.front().second, i);
            if (ordered) break;
            continue;
          }
          keep(i, one());
          fire_after();
        }
      } else if (!todo.empty()) {
        std::vector<document_view> docs;
        for (const std::size_t i : todo) docs.push_back(statements[i]);
        const auto r = run(docs);
        if (!r) return step::close;
        if (!reply_ok(r->view())) {
          refusal = std::move(*r);
        } else {
          const auto errors = write_errors(r->view());
          std::vector<bool> erred(todo.size(), false);
          for (const auto& [j, e] : errors) {
            if (j < todo.size()) {
              erred[j] = true;
              out[todo[j]].error = reindexed(e, todo[j]);
            }
          }
          std::size_t inserted = 0;
          for (std::size_t j = 0; j < todo.size(); ++j) {
            if (erred[j]) {
              if (ordered) break;
              continue;
            }
            keep(todo[j], one());
            ++inserted;
          }
          // One commit for the batch; after a failure the server inserts one at a time.
          for (std::size_t k = 0;
               k < (errors.empty() ? std::min<std::size_t>(inserted, 1) : inserted); ++k) {
            fire_after();
          }
        }
      }
    } else {
      for (std::size_t i = 0; i < statements.size(); ++i) {
        if (out[i].applied) continue;
        const document_view s = statements[i];
        const auto would = [&] {
          const auto upsert = s.find("upsert");
          if (name == "update" && upsert && boolean(*upsert).value_or(false)) return true;
          const auto q = s.find("q");
          return finds(body, name, q && q->get_document() ? *q->get_document() : document_view{},
                       s);
        };
        if (const auto f = fire_before(would)) {
          failed(*f->fail_before_commit, i);
          if (ordered) break;
          continue;
        }
        const auto r = run(std::span(&statements[i], 1));
        if (!r) return step::close;
        if (!reply_ok(r->view())) {
          refusal = std::move(*r);
          break;
        }
        if (const auto errors = write_errors(r->view()); !errors.empty()) {
          out[i].error = reindexed(errors.front().second, i);
          if (ordered) break;
          continue;
        }
        builder applied;
        const std::int64_t n = count_field(r->view(), "n");
        applied.append_int64("n", n);
        if (name == "update")
          applied.append_int64("nModified", count_field(r->view(), "nModified"));
        bool upserted = false;
        const auto u = r->view().find("upserted");
        if (const auto list = u ? u->get_array() : oid::result<document_view>(document_view{})) {
          for (const element& e : *list) {
            const auto d = e.get_document();
            if (!d) continue;
            if (const auto id = d->find("_id")) {
              applied.append_element("upserted", *id);
              upserted = true;
              break;
            }
          }
        }
        document result = std::move(applied).extract();
        if (n > 0 || upserted) {
          // A statement that wrote nothing leaves no trace: a retry runs it again.
          keep(i, std::move(result));
          fire_after();
        } else {
          out[i].applied = std::move(result);
        }
      }
    }
    if (close) return step::close;

    if (!reply) {
      if (refusal) {
        reply = std::move(refusal);
      } else {
        // The statements' outcomes as the server reports them: up to the first error when
        // ordered, all of them when not.
        std::int64_t n = 0, modified = 0;
        builder b;
        builder upserts, errors;
        std::size_t upsert_count = 0, error_count = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
          if (out[i].error) {
            errors.append_document(std::to_string(error_count++), out[i].error->view());
            if (ordered) break;
            continue;
          }
          if (!out[i].applied) continue;
          const document_view a = out[i].applied->view();
          n += count_field(a, "n");
          modified += count_field(a, "nModified");
          if (const auto id = a.find("upserted")) {
            upserts.open_document(std::to_string(upsert_count++));
            upserts.append_int32("index", static_cast<std::int32_t>(i)).append_element("_id", *id);
            upserts.close();
          }
        }
        b.append_int32("n", static_cast<std::int32_t>(n));
        if (name == "update") b.append_int32("nModified", static_cast<std::int32_t>(modified));
        if (upsert_count > 0) b.append_array("upserted", upserts.view());
        if (error_count > 0) b.append_array("writeErrors", errors.view());
        if (server_wce) b.append_document("writeConcernError", server_wce->view());
        b.append_double("ok", 1.0);
        reply = std::move(b).extract();
      }
    }
    if (wce) reply = rewrite(reply->view(), pending{false, wce, retryable_write, {}, {}, {}});
    return send_reply(msg.request_id, reply->view()) ? step::keep : step::close;
  }

  // A command of a transaction (see transaction_emulator): answered by the proxy, or forwarded
  // without the transaction's fields. A fail point's write concern error goes into the answer.
  step transaction_message(const mongo::op_msg& msg, const std::string& name,
                           const std::shared_ptr<const fail_action>& action, bool retryable_write,
                           bool reply_expected) {
    auto d = proxy_.emulated->on_command(msg.body, name);
    const bool write_concern = action && action->write_concern_error;
    if (d.reply) {
      if (!reply_expected) return step::keep;
      if (write_concern) {
        d.reply = rewrite(d.reply->view(), pending{false, action, retryable_write, {}, {}, {}});
      }
      return send_reply(msg.request_id, d.reply->view()) ? step::keep : step::close;
    }
    if (reply_expected) {
      if (pending_.size() >= max_pending_replies) {
        log(peer_ + ": the client has " + std::to_string(pending_.size()) +
            " requests without replies; closed");
        return step::close;
      }
      pending_[msg.request_id] =
          pending{false, write_concern ? action : nullptr, retryable_write, {}, name, d.key};
    }
    return send_with_body(msg, d.forward->view(), upstream_.get(), "upstream");
  }

  step from_upstream_message(std::span<const std::uint8_t> bytes, std::int32_t op_code) {
    if (op_code != mongo::op_msg_opcode) {
      return send_all(client_.get(), bytes, "client") ? step::keep : step::close;
    }
    const auto msg = mongo::decode_op_msg(bytes, limits());
    if (!msg) {
      log(peer_ + ": the upstream sent an OP_MSG the proxy cannot read (" + msg.error().message() +
          " at byte " + std::to_string(msg.error().offset) + "); closed");
      return step::close;
    }
    const auto it = pending_.find(msg->response_to);
    if (it == pending_.end()) {
      if (!replica_set_) return send_all(client_.get(), bytes, "client") ? step::keep : step::close;
      return send_rewritten(*msg, with_clock(msg->body));
    }
    const pending p = std::move(it->second);
    pending_.erase(it);
    if (p.hello && msg->body.contains("setName")) replica_set_ = true;
    // With moreToCome the next reply answers this one (exhaust): it gets the same treatment.
    if ((msg->flags & mongo::op_msg_flags::more_to_come) != 0) pending_[msg->request_id] = p;

    if (!p.write_key.empty() && write_applied(msg->body)) {
      proxy_.transactions.store(p.write_key, p.command, document(msg->body));
    }
    if (!p.transaction.empty()) proxy_.emulated->on_reply(p.transaction, msg->body);
    if (!p.hello && !p.write_concern && !replica_set_) {
      return send_all(client_.get(), bytes, "client") ? step::keep : step::close;
    }
    const document body = rewrite(msg->body, p);
    return send_rewritten(*msg, replica_set_ && !p.hello ? with_clock(body.view()) : body);
  }

  // A reply `msg` with `body` instead of its own, to the client.
  step send_rewritten(const mongo::op_msg& msg, const document& body) {
    return send_with_body(msg, body.view(), client_.get(), "client");
  }

  // `msg` (its flags, ids and document sequences) with `body` instead of its own, to `fd`.
  step send_with_body(const mongo::op_msg& msg, document_view body, int fd, const char* side) {
    mongo::op_msg out = msg;
    out.body = body;
    const auto encoded = mongo::encode_op_msg(out);
    if (!encoded) {
      log(peer_ + ": cannot encode a message for the " + side + ": " + encoded.error().message());
      return step::close;
    }
    return send_all(fd, *encoded, side) ? step::keep : step::close;
  }

  // A replica set member's reply carries the cluster's logical time: `reply` with operationTime
  // and $clusterTime (FerretDB sends neither), each added unless it is there.
  document with_clock(document_view reply) {
    builder b(reply.size() + 96);
    b.append_elements(reply);
    const oid::bson::timestamp_value now{proxy_.clock_seconds, ++proxy_.clock_ticks};
    if (!reply.contains("operationTime")) b.append_timestamp("operationTime", now);
    if (!reply.contains("$clusterTime")) {
      b.open_document("$clusterTime").append_timestamp("clusterTime", now);
      b.open_document("signature");
      static const std::uint8_t no_key[20] = {};
      b.append_binary("hash", oid::bson::binary_subtype::generic, no_key);
      b.append_int64("keyId", 0).close().close();
    }
    return std::move(b).extract();
  }

  std::string_view proxied(std::string_view address) const {
    return names_upstream(address, proxy_.upstream.port) ? std::string_view(proxy_.address)
                                                         : address;
  }

  // The reply with hello's addresses made the proxy's, or with the fail point's write concern
  // error and labels; every other field as it was, in its place.
  document rewrite(document_view reply, const pending& p) const {
    builder b(reply.size() + 256);
    std::vector<std::string> labels;
    for (const element& e : reply) {
      const std::string_view key = e.key();
      if (p.hello && (key == "me" || key == "primary") && e.get_string()) {
        b.append_string(key, proxied(*e.get_string()));
      } else if (const auto members = e.get_array();
                 p.hello && (key == "hosts" || key == "passives" || key == "arbiters") && members) {
        b.open_array(key);
        for (const element& h : *members) {
          if (const auto s = h.get_string()) {
            b.append_string(h.key(), proxied(*s));
          } else {
            b.append_element(h);
          }
        }
        b.close();
      } else if (p.write_concern && key == "writeConcernError") {
        // Replaced below.
      } else if (p.write_concern && key == "errorLabels") {
        if (auto existing = strings(e)) labels = std::move(*existing);
      } else {
        b.append_element(e);
      }
    }
    if (p.write_concern) {
      const document_view wce = p.write_concern->write_concern_error->view();
      b.append_document("writeConcernError", wce);
      std::optional<std::int64_t> code;
      if (const auto c = wce.find("code")) code = integral(*c);
      labels = p.write_concern->labels(std::move(labels), p.retryable_write, code);
      if (!labels.empty()) append_labels(b, labels);
    }
    return std::move(b).extract();
  }

  static mongo::op_msg_limits limits() {
    mongo::op_msg_limits l;
    l.max_message_size = max_message_size;
    return l;
  }

  fd_guard client_;
  fd_guard upstream_;
  std::string peer_;
  proxy_state& proxy_;
  inbox from_client_, from_upstream_;
  std::unordered_map<std::int32_t, pending> pending_;
  bool handshake_seen_ = false;
  std::optional<std::string> app_name_;
  // The upstream said it is a replica set member (setName in hello): its replies carry
  // operationTime and $clusterTime.
  bool replica_set_ = false;
  std::int32_t next_request_id_ = 1;
  // The ids of the proxy's own requests to the upstream (call_upstream), far from a client's.
  static constexpr std::int32_t own_request_ids = 1'500'000'000;
  std::int32_t next_upstream_request_id_ = own_request_ids;
};

std::string describe_peer(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof text) == nullptr) return "client";
    return std::string("client ") + text + ":" + std::to_string(ntohs(a->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text) == nullptr) return "client";
    return std::string("client [") + text + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  return "client";
}

struct worker {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> done;
};

int usage(const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "oid_failpoint_proxy: %s\n", problem.c_str());
  std::fprintf(stderr, "usage: oid_failpoint_proxy --upstream HOST:PORT [--listen HOST:PORT]\n");
  return 2;
}

int run(int argc, char** argv) {
  std::string upstream_text, listen_text = "127.0.0.1:0";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--upstream" || arg == "--listen") && i + 1 < argc) {
      (arg == "--upstream" ? upstream_text : listen_text) = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      usage("");
      return 0;
    } else {
      return usage("unexpected argument '" + std::string(arg) + "'");
    }
  }
  if (upstream_text.empty()) return usage("--upstream HOST:PORT is required");
  std::string why;
  auto upstream = parse_loopback(upstream_text, why);
  if (!upstream) return usage("--upstream: " + why);
  if (upstream->port == 0) return usage("--upstream: port 0 is not a server's port");
  const auto listen_at = parse_loopback(listen_text, why);
  if (!listen_at) return usage("--listen: " + why);

  // SIGINT and SIGTERM arrive through a signalfd, blocked in every thread (the workers inherit
  // the mask); a closed peer must not kill the process with SIGPIPE.
  sigset_t signals;
  if (sigemptyset(&signals) != 0 || sigaddset(&signals, SIGINT) != 0 ||
      sigaddset(&signals, SIGTERM) != 0 || pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) {
    log("cannot block SIGINT and SIGTERM");
    return 1;
  }
  if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    log("cannot ignore SIGPIPE");
    return 1;
  }
  const fd_guard signal_fd(signalfd(-1, &signals, SFD_CLOEXEC));
  if (signal_fd.get() < 0) {
    log("signalfd: " + errno_text(errno));
    return 1;
  }
  const fd_guard stop_fd(eventfd(0, EFD_CLOEXEC));
  if (stop_fd.get() < 0) {
    log("eventfd: " + errno_text(errno));
    return 1;
  }

  fd_guard listener(socket(listen_at->family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  if (listener.get() < 0 ||
      setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(listener.get(), reinterpret_cast<const sockaddr*>(&listen_at->addr), listen_at->size) !=
          0 ||
      listen(listener.get(), 128) != 0) {
    log("cannot listen on " + listen_text + ": " + errno_text(errno));
    return 1;
  }
  sockaddr_storage bound{};
  socklen_t bound_size = sizeof bound;
  if (getsockname(listener.get(), reinterpret_cast<sockaddr*>(&bound), &bound_size) != 0) {
    log("getsockname: " + errno_text(errno));
    return 1;
  }
  const std::uint16_t port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);

  proxy_state proxy;
  proxy.upstream = *upstream;
  proxy.address = listen_at->host + ":" + std::to_string(port);
  proxy.stop_fd = stop_fd.get();
  proxy.emulated = std::make_unique<transaction_emulator>(*upstream);
  proxy.clock_seconds =
      static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  if (std::printf("mongodb://%s/\n", proxy.address.c_str()) < 0 || std::fflush(stdout) != 0) {
    log("cannot write the connection string on stdout");
    return 1;
  }

  std::list<worker> workers;
  const auto reap = [&] {
    for (auto it = workers.begin(); it != workers.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  };
  while (true) {
    pollfd fds[2] = {{listener.get(), POLLIN, 0}, {signal_fd.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log("poll: " + errno_text(errno));
      break;
    }
    if (fds[1].revents != 0) break;  // SIGINT or SIGTERM
    if (fds[0].revents == 0) continue;
    sockaddr_storage peer{};
    socklen_t peer_size = sizeof peer;
    const int fd =
        accept4(listener.get(), reinterpret_cast<sockaddr*>(&peer), &peer_size, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      log("accept: " + errno_text(errno));
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // until some close
        continue;
      }
      break;
    }
    reap();
    std::string who = describe_peer(peer);
    if (workers.size() >= max_connections) {
      log(who + ": refused, " + std::to_string(max_connections) + " connections are open");
      ::close(fd);
      continue;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    try {
      workers.push_back(worker{std::thread([fd, who, done, &proxy] {
                                 session(fd, who, proxy).run();
                                 done->store(true);
                               }),
                               done});
    } catch (const std::system_error& e) {  // no thread: that connection only
      log(who + ": cannot start a thread (" + e.what() + "); closed");
      ::close(fd);
    }
  }

  // Stop: every worker polls stop_fd, which stays readable once written.
  const std::uint64_t wake = 1;
  if (write(stop_fd.get(), &wake, sizeof wake) != static_cast<ssize_t>(sizeof wake)) {
    log("cannot signal the connections to stop: " + errno_text(errno));
    return 1;
  }
  listener.reset(-1);
  for (auto& w : workers) w.thread.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    log(std::string("stopped: ") + e.what());
    return 1;
  }
}
