// oid_unified_runner: runs MongoDB's unified test format files (schema 1.x) against a server
// with oid's client, and says for every test whose gap it is when it does not pass: passed; not
// applicable (its runOnRequirements exclude the servers, or the file skips it); server differs
// (FerretDB answers otherwise); harness (the fault proxy or the host lacks it); oid lacks; or
// failed. Every test is run; only a failure skips.txt names, by file, test and the failure's
// text, becomes a gap of the server's, the harness's, oid's or the
// file's (verdicts.hpp). oid's own gaps the runner finds itself (an entity, operation, argument
// or option oid lacks), and they count only when they are the test's first obstacle.
//
//   oid_unified_runner [--suite NAME] [--skips FILE] [--check-skips] [--report FILE]
//                      [--expect-failure] [--refusals FILE] [--data-lake] [--uri URI]
//                      [--rs-uri URI] [--rs-auth-uri URI] [--verbose] FILE_OR_DIR...
//
// --uri names a standalone server, --rs-uri a replica set and --rs-auth-uri a replica set with
// authentication, its URI holding a user and password (defaults: MONGODB_PROXY_URI,
// MONGODB_RS_PROXY_URI and MONGODB_RS_AUTH_PROXY_URI, the fault-injecting proxies
// scripts/test.sh puts in front of FerretDB, which answer configureFailPoint). A test runs on the
// first of them its runOnRequirements allow. --skips names the list of failures that are not
// oid's (tests/unified/skips.txt: each line says whose and why); --check-skips makes a stale line
// (one that matched no test of the files run, or names a test that passed) an error.
// --expect-failure is for the format's valid-fail files and oid's must-fail files: every test
// must be refused (a failure), skips.txt does not apply, and one that passes is the failure;
// --refusals names the list of the failure each must be refused with (must-fail/refusals.txt).
// --data-lake is for the Atlas Data Lake suite: its tests run only on a deployment whose buildInfo
// has `dataLake`, and are not applicable anywhere else.
// --report writes one line per test (suite, file, test, verdict, reason; tab-separated) for
// docs/conformance.md (scripts/conformance.py). An input that does not exist as given is looked for
// under the specification data directory ($OID_SPEC_DATA_DIR, else the build's;
// scripts/spec-data.sh).
//
// Exit status: 0 when no test failed (and, with --check-skips, no skips.txt line is stale), 1
// otherwise, 2 for bad arguments, 77 when no server is given (a ctest skip; under CI=true that is
// a failure, 1).
//
// How it follows the specification (source/unified-test-format/unified-test-format.md):
// entities are made per test and dropped after it; initialData is written with an internal client
// (w: majority); fail points are disabled after each test; command events for configureFailPoint
// and for redacted (sensitive) commands are not recorded; outcome compares documents exactly, in
// any key order, numbers by value. What the runner does not implement yet is reported as
// "oid lacks" with a line saying what, like any other gap of oid's. An entity oid cannot make is
// an obstacle only for the tests that use it.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/command_event.hpp>
#include <oid/mongo/pool_event.hpp>
#include <oid/mongo/sdam_event.hpp>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "unified/entities.hpp"
#include "unified/match.hpp"
#include "unified/verdicts.hpp"

namespace fs = std::filesystem;
using namespace std::string_view_literals;

namespace oid::unified {
namespace {

// ---- outcomes of a test -----------------------------------------------------------------------

// Thrown inside a test to end it: the runner catches them in run_test. (verdict and its names:
// verdicts.hpp.)
struct skip_oid {
  std::string reason;
};
struct test_failed {
  std::string reason;
};

[[noreturn]] void fail(std::string reason) { throw test_failed{std::move(reason)}; }

// An operation inside withTransaction's callback failed without an expectError: the failure
// leaves the callback (with_transaction decides what to do with it), not the test.
struct callback_failed {
  mongo::failure error;
};

// ---- reading BSON ------------------------------------------------------------------------------

std::string to_text(const bson::element& e) {
  bson::builder b;
  b.append_element("v", e);
  auto json = bson::to_json(b.view(), bson::json_mode::relaxed);
  // {"v":...} -> ...
  const auto colon = json.find(':');
  if (colon == std::string::npos || json.size() < colon + 2) return json;
  return json.substr(colon + 1, json.size() - colon - 2);
}

std::optional<bson::element> field(bson::document_view d, std::string_view key) {
  auto e = d.find(key);
  if (!e) return std::nullopt;
  return *e;
}

std::string string_field(bson::document_view d, std::string_view key, std::string_view where) {
  auto e = field(d, key);
  if (!e) fail(std::string(where) + ": `" + std::string(key) + "` is missing");
  auto s = e->get_string();
  if (!s) fail(std::string(where) + ": `" + std::string(key) + "` is not a string");
  return std::string(*s);
}

std::optional<std::string> optional_string(bson::document_view d, std::string_view key) {
  auto e = field(d, key);
  if (!e) return std::nullopt;
  auto s = e->get_string();
  if (!s) fail("`" + std::string(key) + "` is not a string");
  return std::string(*s);
}

bson::document_view doc_field(bson::document_view d, std::string_view key, std::string_view where) {
  auto e = field(d, key);
  if (!e) fail(std::string(where) + ": `" + std::string(key) + "` is missing");
  auto v = e->type() == bson::type::array ? e->get_array() : e->get_document();
  if (!v) fail(std::string(where) + ": `" + std::string(key) + "` is not a document or array");
  return *v;
}

std::optional<bson::document_view> optional_doc(bson::document_view d, std::string_view key) {
  auto e = field(d, key);
  if (!e) return std::nullopt;
  auto v = e->type() == bson::type::array ? e->get_array() : e->get_document();
  if (!v) fail("`" + std::string(key) + "` is not a document or array");
  return *v;
}

std::optional<double> number(const bson::element& e) {
  switch (e.type()) {
  case bson::type::int32: return *e.get_int32();
  case bson::type::int64: return static_cast<double>(*e.get_int64());
  case bson::type::double_: return *e.get_double();
  default: return std::nullopt;
  }
}

std::optional<std::int64_t> optional_int(bson::document_view d, std::string_view key) {
  auto e = field(d, key);
  if (!e) return std::nullopt;
  auto n = number(*e);
  if (!n) fail("`" + std::string(key) + "` is not a number");
  return static_cast<std::int64_t>(*n);
}

bool bool_field(bson::document_view d, std::string_view key, bool fallback) {
  auto e = field(d, key);
  if (!e) return fallback;
  auto b = e->get_bool();
  if (!b) fail("`" + std::string(key) + "` is not a boolean");
  return *b;
}

std::vector<std::string> string_list(bson::document_view d, std::string_view key) {
  std::vector<std::string> out;
  auto list = optional_doc(d, key);
  if (!list) return out;
  for (const auto& e : *list) {
    auto s = e.get_string();
    if (!s) fail("`" + std::string(key) + "` holds a value that is not a string");
    out.emplace_back(*s);
  }
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Fields of `d` not in `known`: the format forbids unknown fields, so they fail the test.
void only_fields(bson::document_view d, std::initializer_list<std::string_view> known,
                 std::string_view where) {
  for (const auto& e : d) {
    if (std::find(known.begin(), known.end(), e.key()) == known.end()) {
      fail(std::string(where) + ": unknown field `" + std::string(e.key()) + "`");
    }
  }
}

// ---- versions
// ------------------------------------------------------------------------------------

std::vector<int> parse_version(std::string_view text) {
  std::vector<int> parts;
  std::size_t i = 0;
  while (i < text.size()) {
    int n = 0;
    bool digits = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      digits = true;
      ++i;
      if (n > 1'000'000) break;
    }
    if (!digits) break;
    parts.push_back(n);
    if (i < text.size() && text[i] == '.')
      ++i;
    else
      break;
  }
  return parts;
}

// -1, 0, 1 as a < b, a == b, a > b; missing components count as 0.
int compare_versions(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    int x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// The newest schema version this runner reads. Files up to it are run; features of it the runner
// lacks make their tests "oid lacks".
constexpr std::string_view supported_schema = "1.28";

// ---- the deployments
// ------------------------------------------------------------------------------

struct deployment {
  std::string name;  // "single" or "replicaset"
  std::string uri;
  std::optional<mongo::client> internal;  // for initialData, outcome, fail points off, asserts
  std::vector<int> version;
  std::string version_text;
  bool auth = false;
  bool data_lake = false;  // Atlas Data Lake: buildInfo has a `dataLake` document
  std::map<std::string, std::optional<bson::document>> parameters;  // getParameter cache
};

std::optional<deployment> connect(std::string name, std::string uri) {
  deployment d;
  d.name = std::move(name);
  d.uri = std::move(uri);
  auto c = mongo::client::create(d.uri);
  if (!c) {
    std::fprintf(stderr, "oid_unified_runner: %s: %s\n", d.name.c_str(), c.error().message.c_str());
    return std::nullopt;
  }
  d.internal.emplace(std::move(*c));
  bson::builder b;
  b.append_int32("buildInfo", 1);
  auto info = d.internal->run_command("admin", b.view());
  if (!info) {
    std::fprintf(stderr, "oid_unified_runner: %s: buildInfo: %s\n", d.name.c_str(),
                 info.error().message.c_str());
    return std::nullopt;
  }
  if (auto v = info->view().find("version"); v && v->get_string()) {
    d.version_text = std::string(*v->get_string());
    d.version = parse_version(d.version_text);
  }
  d.auth = d.internal->uri().username().has_value();
  if (auto dl = info->view().find("dataLake")) d.data_lake = dl->type() == bson::type::document;
  return d;
}

// True when `d` or a document or array inside it has a field named `key`.
bool holds_key(bson::document_view d, std::string_view key) {
  for (const auto& e : d) {
    if (e.key() == key) return true;
    if (e.type() == bson::type::document && holds_key(*e.get_document(), key)) return true;
    if (e.type() == bson::type::array && holds_key(*e.get_array(), key)) return true;
  }
  return false;
}

// ---- the state of one test
// -------------------------------------------------------------------------

struct test_context {
  deployment* server = nullptr;
  entity_map entities;
  std::vector<std::string> fail_point_names;  // to turn off after the test
  // Set by any thread entity's operation too, hence atomic.
  std::atomic<bool> unacknowledged_writes = false;  // an operation was sent with w: 0
  // The longest blockTimeMS of the test's fail points, and whether an operation timed out: a
  // command the client gave up on still reaches the server once the proxy lets it go.
  std::chrono::milliseconds longest_block{0};
  std::atomic<bool> timed_out = false;
  // Inside withTransaction's callback: an operation's unexpected failure is the callback's.
  bool in_callback = false;
  // The file's entities oid could not make, each with why (skip_oid's reason): an obstacle only
  // for the tests that use them.
  std::map<std::string, std::string, std::less<>> unavailable;
  // The test configures a fail point: its clients check their servers every 500 ms unless they
  // set heartbeatFrequencyMS (the format lets a runner do so, to recover quickly; without it a
  // check after a fail point came 10 s later, as late as a waitForEvent gives up).
  bool quick_heartbeats = false;
  match_context match;

  // Ends the test as "oid lacks" when it uses `id`, an entity oid could not make.
  void require_entity(std::string_view id) const {
    if (auto it = unavailable.find(id); it != unavailable.end()) throw skip_oid{it->second};
  }

  test_context() {
    match.entity = [this](std::string_view id) -> std::optional<bson::document> {
      if (auto* v = entities.find<value_entity>(id)) return v->value;
      return std::nullopt;
    };
    match.session_lsid = [this](std::string_view id) -> std::optional<bson::document> {
      if (auto* s = entities.find<session_entity>(id)) return s->lsid;
      return std::nullopt;
    };
  }  // The entities first: a thread entity's operation may still be using this context.
  ~test_context() { entities.clear(); }
  test_context(const test_context&) = delete;
  test_context& operator=(const test_context&) = delete;
};

// ---- runOnRequirements
// ---------------------------------------------------------------------------

// The server parameter `key` of `d` as {"v": value} (getParameter, asked once per deployment);
// nullopt when the server has none.
const std::optional<bson::document>& server_parameter(deployment& d, const std::string& key) {
  auto it = d.parameters.find(key);
  if (it == d.parameters.end()) {
    bson::builder b;
    b.append_int32("getParameter", 1);
    b.append_int32(key, 1);
    auto r = d.internal->run_command("admin", b.view());
    std::optional<bson::document> value;
    if (r) {
      if (auto v = r->view().find(key)) value = wrap(*v);
    }
    it = d.parameters.emplace(key, std::move(value)).first;
  }
  return it->second;
}

// Why `req` (one runOnRequirement) is not met by `d`; empty when it is.
std::string unmet(bson::document_view req, deployment& d) {
  only_fields(req,
              {"minServerVersion", "maxServerVersion", "topologies", "serverless", "auth",
               "authMechanism", "serverParameters", "csfle"},
              "runOnRequirement");
  // First: whatever the server, oid has no client-side encryption, the first obstacle.
  if (auto e = field(req, "csfle")) {
    auto b = e->get_bool();
    if (!b || *b) throw skip_oid{"client-side field level encryption"};
  }
  if (auto v = optional_string(req, "minServerVersion")) {
    if (compare_versions(d.version, parse_version(*v)) < 0) {
      return "needs server version >= " + *v + " (the server is " + d.version_text + ")";
    }
  }
  if (auto v = optional_string(req, "maxServerVersion")) {
    if (compare_versions(d.version, parse_version(*v)) > 0) {
      return "needs server version <= " + *v + " (the server is " + d.version_text + ")";
    }
  }
  if (req.contains("topologies")) {
    auto t = string_list(req, "topologies");
    if (!contains(t, d.name)) {
      std::string all;
      for (const auto& x : t) all += (all.empty() ? "" : ", ") + x;
      return "needs topology " + all;
    }
  }
  if (auto s = optional_string(req, "serverless"); s && *s == "require") {
    return "needs Atlas Serverless";
  }
  if (auto e = field(req, "auth")) {
    auto want = e->get_bool();
    if (!want) fail("runOnRequirement: `auth` is not a boolean");
    if (*want != d.auth) return *want ? "needs authentication enabled" : "needs authentication off";
  }
  if (auto m = optional_string(req, "authMechanism")) {
    const auto& mechanisms = server_parameter(d, "authenticationMechanisms");
    bool listed = false;
    if (mechanisms) {
      if (auto list = unwrap(*mechanisms).get_array()) {
        for (const auto& e : *list) listed |= e.get_string() && *e.get_string() == *m;
      }
    }
    if (!listed) return "needs the server's authenticationMechanisms to hold " + *m;
  }
  if (auto params = optional_doc(req, "serverParameters")) {
    for (const auto& p : *params) {
      std::string key(p.key());
      const auto& value = server_parameter(d, key);
      if (!value) return "needs server parameter " + key + " (the server has none)";
      match_context none;
      if (!match(p, unwrap(*value), none, false).empty()) {
        return "needs server parameter " + key + " = " + to_text(p);
      }
    }
  }
  return {};
}

// Empty when one of `reqs` is met by `d`, else why none is (the first one's reason).
std::string unmet_any(std::optional<bson::document_view> reqs, deployment& d) {
  if (!reqs) return {};
  std::string first;
  for (const auto& r : *reqs) {
    auto doc = r.get_document();
    if (!doc) fail("runOnRequirements holds a value that is not a document");
    auto why = unmet(*doc, d);
    if (why.empty()) return {};
    if (first.empty()) first = why;
  }
  return first.empty() ? "no requirement listed" : first;
}

// ---- events
// ---------------------------------------------------------------------------------------

const std::set<std::string, std::less<>> command_events = {
    "commandStartedEvent", "commandSucceededEvent", "commandFailedEvent"};
const std::set<std::string, std::less<>> cmap_events = {"poolCreatedEvent",
                                                        "poolReadyEvent",
                                                        "poolClearedEvent",
                                                        "poolClosedEvent",
                                                        "connectionCreatedEvent",
                                                        "connectionReadyEvent",
                                                        "connectionClosedEvent",
                                                        "connectionCheckOutStartedEvent",
                                                        "connectionCheckOutFailedEvent",
                                                        "connectionCheckedOutEvent",
                                                        "connectionCheckedInEvent"};
const std::set<std::string, std::less<>> sdam_events = {"serverDescriptionChangedEvent",
                                                        "serverHeartbeatStartedEvent",
                                                        "serverHeartbeatSucceededEvent",
                                                        "serverHeartbeatFailedEvent",
                                                        "topologyDescriptionChangedEvent",
                                                        "topologyOpeningEvent",
                                                        "topologyClosedEvent"};

std::string event_kind(bson::document_view event) {
  auto it = event.begin();
  return it == event.end() ? std::string() : std::string(it->key());
}

bson::document command_event_doc(const mongo::command_event& e) {
  bson::builder b;
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, mongo::command_started_event>) {
          b.open_document("commandStartedEvent");
          b.append_document("command", ev.command.view());
        } else if constexpr (std::is_same_v<T, mongo::command_succeeded_event>) {
          b.open_document("commandSucceededEvent");
          b.append_document("reply", ev.reply.view());
        } else {
          b.open_document("commandFailedEvent");
        }
        b.append_string("commandName", ev.command_name);
        b.append_string("databaseName", ev.database_name);
        // What hasServerConnectionId and hasServiceId ask about.
        if (ev.server_connection_id) b.append_int64("serverConnectionId", *ev.server_connection_id);
        if (ev.service_id) b.append_object_id("serviceId", *ev.service_id);
        b.close();
      },
      e);
  return std::move(b).extract();
}

std::string closed_reason(mongo::connection_closed_reason r) {
  switch (r) {
  case mongo::connection_closed_reason::stale: return "stale";
  case mongo::connection_closed_reason::idle: return "idle";
  case mongo::connection_closed_reason::error: return "error";
  case mongo::connection_closed_reason::pool_closed: return "poolClosed";
  }
  return "error";
}

std::string check_out_failed_reason(mongo::check_out_failed_reason r) {
  switch (r) {
  case mongo::check_out_failed_reason::pool_closed: return "poolClosed";
  case mongo::check_out_failed_reason::timeout: return "timeout";
  case mongo::check_out_failed_reason::connection_error: return "connectionError";
  }
  return "connectionError";
}

bson::document pool_event_doc(const mongo::pool_event& e) {
  bson::builder b;
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, mongo::pool_created_event>) {
          b.open_document("poolCreatedEvent");
        } else if constexpr (std::is_same_v<T, mongo::pool_ready_event>) {
          b.open_document("poolReadyEvent");
        } else if constexpr (std::is_same_v<T, mongo::pool_cleared_event>) {
          b.open_document("poolClearedEvent");
        } else if constexpr (std::is_same_v<T, mongo::pool_closed_event>) {
          b.open_document("poolClosedEvent");
        } else if constexpr (std::is_same_v<T, mongo::connection_created_event>) {
          b.open_document("connectionCreatedEvent");
        } else if constexpr (std::is_same_v<T, mongo::connection_ready_event>) {
          b.open_document("connectionReadyEvent");
        } else if constexpr (std::is_same_v<T, mongo::connection_closed_event>) {
          b.open_document("connectionClosedEvent");
          b.append_string("reason", closed_reason(ev.reason));
        } else if constexpr (std::is_same_v<T, mongo::connection_check_out_started_event>) {
          b.open_document("connectionCheckOutStartedEvent");
        } else if constexpr (std::is_same_v<T, mongo::connection_check_out_failed_event>) {
          b.open_document("connectionCheckOutFailedEvent");
          b.append_string("reason", check_out_failed_reason(ev.reason));
        } else if constexpr (std::is_same_v<T, mongo::connection_checked_out_event>) {
          b.open_document("connectionCheckedOutEvent");
        } else {
          b.open_document("connectionCheckedInEvent");
        }
        b.close();
      },
      e);
  return std::move(b).extract();
}

// An SDAM event as the format names it: serverDescriptionChangedEvent and
// topologyDescriptionChangedEvent with the descriptions' `type` (the SDAM specification's names,
// which oid's to_string gives), the three heartbeat events with `awaited` (always false: oid's
// monitors poll with hello and never send an awaitable one), topologyOpeningEvent and
// topologyClosedEvent. The format has no server opening and closing events: nullopt.
std::optional<bson::document> sdam_event_doc(const mongo::sdam_event& e) {
  bson::builder b;
  const auto description = [&](std::string_view key, std::string_view type) {
    b.open_document(key).append_string("type", type).close();
  };
  bool known = true;
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, mongo::topology_opening_event>) {
          b.open_document("topologyOpeningEvent");
        } else if constexpr (std::is_same_v<T, mongo::topology_closed_event>) {
          b.open_document("topologyClosedEvent");
        } else if constexpr (std::is_same_v<T, mongo::topology_description_changed_event>) {
          b.open_document("topologyDescriptionChangedEvent");
          description("previousDescription", mongo::to_string(ev.previous.type));
          description("newDescription", mongo::to_string(ev.current.type));
        } else if constexpr (std::is_same_v<T, mongo::server_description_changed_event>) {
          b.open_document("serverDescriptionChangedEvent");
          b.append_string("address", ev.address);
          description("previousDescription", mongo::to_string(ev.previous.type));
          description("newDescription", mongo::to_string(ev.current.type));
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_started_event>) {
          b.open_document("serverHeartbeatStartedEvent");
          b.append_bool("awaited", false);
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_succeeded_event>) {
          b.open_document("serverHeartbeatSucceededEvent");
          b.append_bool("awaited", false);
        } else if constexpr (std::is_same_v<T, mongo::server_heartbeat_failed_event>) {
          b.open_document("serverHeartbeatFailedEvent");
          b.append_bool("awaited", false);
        } else {  // server_opening_event, server_closed_event
          known = false;
          b.open_document("none");
        }
        b.close();
      },
      e);
  if (!known) return std::nullopt;
  return std::move(b).extract();
}

// Whether the observed event `actual` matches the expected event `expected` (one key each).
// Empty when it does; else why not.
std::string match_event(bson::document_view expected, bson::document_view actual,
                        const match_context& ctx) {
  auto kind = event_kind(expected);
  if (kind != event_kind(actual)) return "expected " + kind + ", got " + event_kind(actual);
  auto want = expected.begin()->get_document();
  auto got = actual.begin()->get_document();
  if (!want || !got) fail("an expected event's value is not a document");
  for (const auto& f : *want) {
    auto k = f.key();
    if (k == "hasServiceId" || k == "hasServerConnectionId") {
      // Whether the event carries the id (the server's serviceId behind a load balancer; the
      // connectionId of the server's hello).
      const auto asked = f.get_bool();
      if (!asked) fail(std::string(k) + " is not a boolean");
      const std::string_view id = k == "hasServiceId" ? "serviceId" : "serverConnectionId";
      if (*asked != got->contains(id)) {
        return kind + ": " + (*asked ? "expected a " : "expected no ") + std::string(id);
      }
      continue;
    }
    if (k == "interruptInUseConnections") {
      throw skip_oid{"poolClearedEvent: no interruptInUseConnections"};
    }
    bool root = k == "command" || k == "reply";
    auto why = match(f, field(*got, k), ctx, root);
    if (!why.empty()) return kind + "." + std::string(k) + ": " + why;
  }
  return {};
}

// The events of `client` of one type ("command", "cmap", "sdam").
std::vector<bson::document> events_of(client_entity& c, std::string_view type) {
  std::vector<bson::document> out;
  const auto& kinds = type == "cmap" ? cmap_events : type == "sdam" ? sdam_events : command_events;
  for (auto& e : c.events->snapshot()) {
    if (kinds.contains(event_kind(e.view()))) out.push_back(std::move(e));
  }
  return out;
}

std::string event_type_of(std::string_view kind) {
  if (command_events.contains(kind)) return "command";
  if (cmap_events.contains(kind)) return "cmap";
  if (sdam_events.contains(kind)) return "sdam";
  return {};
}

// ---- entities
// -------------------------------------------------------------------------------------

// A URI option's value as connection string text.
std::string uri_value(const bson::element& e, std::string_view key) {
  switch (e.type()) {
  case bson::type::string: return std::string(*e.get_string());
  case bson::type::boolean: return *e.get_bool() ? "true" : "false";
  case bson::type::int32: return std::to_string(*e.get_int32());
  case bson::type::int64: return std::to_string(*e.get_int64());
  case bson::type::double_: {
    auto d = *e.get_double();
    if (d == static_cast<double>(static_cast<std::int64_t>(d))) {
      return std::to_string(static_cast<std::int64_t>(d));
    }
    return std::to_string(d);
  }
  case bson::type::document: {  // authMechanismProperties: {K: V, ...} -> K:V,K:V
    std::string out;
    auto properties = *e.get_document();  // a named view: the result<> is a temporary
    for (const auto& p : properties) {
      if (p.type() == bson::type::document && p.get_document()->contains("$$placeholder")) {
        throw skip_oid{"uriOptions: $$placeholder values from the environment"};
      }
      out += (out.empty() ? "" : ",") + std::string(p.key()) + ":" + uri_value(p, key);
    }
    return out;
  }
  default: fail("uriOptions." + std::string(key) + ": a value the runner cannot write");
  }
}

// The base URI with `options` added (overriding options of the same name).
std::string with_uri_options(const std::string& base, bson::document_view options) {
  auto q = base.find('?');
  std::string head = q == std::string::npos ? base : base.substr(0, q);
  if (head.find('/', head.find("://") + 3) == std::string::npos) head += '/';
  std::vector<std::pair<std::string, std::string>> pairs;
  if (q != std::string::npos) {
    std::stringstream ss(base.substr(q + 1));
    std::string kv;
    while (std::getline(ss, kv, '&')) {
      auto eq = kv.find('=');
      if (eq != std::string::npos) pairs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  for (const auto& o : options) {
    std::string key(o.key());
    if (o.type() == bson::type::document && o.get_document()->contains("$$placeholder")) {
      throw skip_oid{"uriOptions: $$placeholder values from the environment"};
    }
    std::erase_if(pairs, [&](const auto& p) { return lower(p.first) == lower(key); });
    if (key == "readPreferenceTags" && o.type() == bson::type::array) {
      auto tags = *o.get_array();
      for (const auto& tag : tags) pairs.emplace_back(key, uri_value(tag, key));
      continue;
    }
    pairs.emplace_back(key, uri_value(o, key));
  }
  std::string out = head;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    out += (i == 0 ? "?" : "&") + pairs[i].first + "=" + pairs[i].second;
  }
  return out;
}

void run_operation(test_context& t, bson::document_view op);

void make_client(test_context& t, bson::document_view spec) {
  only_fields(
      spec,
      {"id", "uriOptions", "useMultipleMongoses", "observeEvents", "ignoreCommandMonitoringEvents",
       "observeSensitiveCommands", "storeEventsAsEntities", "serverApi", "observeLogMessages",
       "awaitMinPoolSizeMS", "autoEncryptOpts", "observeTracingMessages"},
      "client entity");
  auto id = string_field(spec, "id", "client entity");
  if (spec.contains("storeEventsAsEntities")) throw skip_oid{"runner: storeEventsAsEntities"};
  // observeLogMessages: oid has no logging (issue 50). Observing alone asserts nothing; a test
  // that expects log messages (expectLogMessages) is reported "oid lacks" once the rest of it ran.
  if (spec.contains("observeTracingMessages")) throw skip_oid{"tracing (OpenTelemetry)"};
  if (spec.contains("autoEncryptOpts")) throw skip_oid{"client-side field level encryption"};
  client_entity c;
  c.uri = t.server->uri;
  if (auto o = optional_doc(spec, "uriOptions")) {
    // An option oid's parser does not know is ignored with a warning: oid lacks it.
    const auto& known = mongo::uri::supported_options();
    for (const auto& option : *o) {
      if (std::find(known.begin(), known.end(), lower(option.key())) == known.end()) {
        throw skip_oid{"client: no `" + std::string(option.key()) + "` connection string option"};
      }
    }
    c.uri = with_uri_options(c.uri, *o);
  }
  if (t.quick_heartbeats) {
    const auto o = optional_doc(spec, "uriOptions");
    bool own = false;
    if (o) {
      for (const auto& option : *o) own = own || lower(option.key()) == "heartbeatfrequencyms";
    }
    if (!own) {
      bson::builder quick;
      quick.append_int32("heartbeatFrequencyMS", 500);
      c.uri = with_uri_options(c.uri, quick.view());
    }
  }
  auto observe = string_list(spec, "observeEvents");
  for (const auto& kind : observe) {
    if (event_type_of(kind).empty()) fail("client entity: unknown event type " + kind);
  }
  auto ignore = string_list(spec, "ignoreCommandMonitoringEvents");
  bool sensitive = bool_field(spec, "observeSensitiveCommands", false);
  mongo::client_options options;
  if (auto api = optional_doc(spec, "serverApi")) {
    only_fields(*api, {"version", "strict", "deprecationErrors"}, "client entity serverApi");
    auto version = mongo::server_api::parse_version(string_field(*api, "version", "serverApi"));
    if (!version) fail("client " + id + ": " + version.error().message);
    mongo::server_api declared;
    declared.version = *version;
    if (api->contains("strict")) declared.strict = bool_field(*api, "strict", false);
    if (api->contains("deprecationErrors")) {
      declared.deprecation_errors = bool_field(*api, "deprecationErrors", false);
    }
    options.server_api = declared;
  }
  auto events = c.events;
  auto checked_out = c.checked_out;
  bool want_started = contains(observe, "commandStartedEvent"),
       want_succeeded = contains(observe, "commandSucceededEvent"),
       want_failed = contains(observe, "commandFailedEvent");
  if (want_started || want_succeeded || want_failed) {
    options.on_command = [=](const mongo::command_event& e) {
      bool keep = std::visit(
          [&](const auto& ev) {
            using T = std::decay_t<decltype(ev)>;
            if (ev.command_name == "configureFailPoint" || contains(ignore, ev.command_name)) {
              return false;
            }
            if (!sensitive && mongo::is_sensitive_command(ev.command_name)) return false;
            if constexpr (std::is_same_v<T, mongo::command_started_event>) {
              // hello with speculativeAuthenticate comes redacted: an empty command.
              if (!sensitive && ev.command.empty()) return false;
              return want_started;
            } else if constexpr (std::is_same_v<T, mongo::command_succeeded_event>) {
              if (!sensitive && ev.reply.empty()) return false;
              return want_succeeded;
            } else {
              return want_failed;
            }
          },
          e);
      if (keep) events->add(command_event_doc(e));
    };
  }
  std::vector<std::string> pool_kinds;
  for (const auto& k : observe) {
    if (cmap_events.contains(k)) pool_kinds.push_back(k);
  }
  std::vector<std::string> sdam_kinds;
  for (const auto& k : observe) {
    if (sdam_events.contains(k)) sdam_kinds.push_back(k);
  }
  if (!sdam_kinds.empty()) {
    options.on_topology = [=](const mongo::sdam_event& e) {
      auto doc = sdam_event_doc(e);
      if (doc && contains(sdam_kinds, event_kind(doc->view()))) events->add(std::move(*doc));
    };
  }
  auto ready = std::make_shared<std::atomic<std::int64_t>>(0);
  options.on_pool = [=](const mongo::pool_event& e) {
    if (std::holds_alternative<mongo::connection_ready_event>(e)) ++*ready;
    if (std::holds_alternative<mongo::connection_checked_out_event>(e)) ++*checked_out;
    if (std::holds_alternative<mongo::connection_checked_in_event>(e)) --*checked_out;
    if (pool_kinds.empty()) return;
    auto doc = pool_event_doc(e);
    if (contains(pool_kinds, event_kind(doc.view()))) events->add(std::move(doc));
  };
  auto made = mongo::client::create(c.uri, std::move(options));
  if (!made) {
    if (made.error().code == oid::mongo::errc::unsupported ||
        made.error().code == oid::mongo::errc::invalid_uri) {
      throw skip_oid{"client: " + made.error().message};
    }
    fail("client " + id + ": " + made.error().message);
  }
  c.client.emplace(std::move(*made));
  // awaitMinPoolSizeMS: wait until the pool holds minPoolSize connections, then forget the events
  // that filling it published (FerretDB here is one data-bearing server).
  if (auto wait = optional_int(spec, "awaitMinPoolSizeMS")) {
    std::int64_t min_pool = 0;
    if (auto o = optional_doc(spec, "uriOptions")) {
      if (auto n = optional_int(*o, "minPoolSize")) min_pool = *n;
    }
    if (min_pool > 0) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(*wait);
      // The pool opens its connections once the server is known: a round trip starts that.
      bson::builder ping;
      ping.append_int32("ping", 1);
      (void)c.client->run_command("admin", ping.view());
      while (ready->load() < min_pool) {
        if (std::chrono::steady_clock::now() > deadline) {
          fail("client " + id + ": the pool did not reach minPoolSize " + std::to_string(min_pool) +
               " within awaitMinPoolSizeMS");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      c.events->clear();
      *checked_out = 0;
    }
  }
  if (!t.entities.add(id, std::move(c))) fail("entity " + id + " is defined twice");
}

void make_entity(test_context& t, bson::document_view entity) {
  auto it = entity.begin();
  if (it == entity.end()) fail("an entity with no type");
  auto type = it->key();
  auto spec = it->get_document();
  if (!spec) fail("entity " + std::string(type) + " is not a document");
  // An entity made from one oid could not make cannot be made either, for the same reason.
  for (const auto parent : {"client"sv, "database"sv}) {
    if (auto e = spec->find(parent); e && e->get_string()) t.require_entity(*e->get_string());
  }
  if (type == "client") return make_client(t, *spec);
  if (type == "database") {
    only_fields(*spec, {"id", "client", "databaseName", "databaseOptions"}, "database entity");
    auto id = string_field(*spec, "id", "database entity");
    auto client = string_field(*spec, "client", "database entity");
    auto* made = t.entities.find<client_entity>(client);
    if (!made) fail("database " + id + ": no client " + client);
    database_entity d{client, string_field(*spec, "databaseName", "database entity"), {}, {}, {}};
    if (auto o = optional_doc(*spec, "databaseOptions")) d.options = bson::document(*o);
    // The database's handle carries its options (read and write concern, read preference,
    // timeoutMS), as a driver's database object does.
    if (made->client) {
      d.handle = made->client->database(d.name);
      d.gaps = apply_entity_options(d.options.view(), "database", *d.handle);
    }
    if (!t.entities.add(id, std::move(d))) fail("entity " + id + " is defined twice");
    return;
  }
  if (type == "collection") {
    only_fields(*spec, {"id", "database", "collectionName", "collectionOptions"},
                "collection entity");
    auto id = string_field(*spec, "id", "collection entity");
    auto db_id = string_field(*spec, "database", "collection entity");
    auto* db = t.entities.find<database_entity>(db_id);
    if (!db) fail("collection " + id + ": no database " + db_id);
    collection_entity c{
        db->client, db->name, string_field(*spec, "collectionName", "collection entity"),
        {},         {},       {}};
    if (auto own = optional_doc(*spec, "collectionOptions")) c.options = bson::document(*own);
    // The database's collection inherits the database's options (oid's handles do); its own go
    // over them.
    if (db->handle) {
      c.handle = db->handle->collection(c.name);
      c.gaps = apply_entity_options(c.options.view(), "collection", *c.handle, db->gaps);
    }
    if (!t.entities.add(id, std::move(c))) fail("entity " + id + " is defined twice");
    return;
  }
  if (type == "session") {
    only_fields(*spec, {"id", "client", "sessionOptions"}, "session entity");
    auto id = string_field(*spec, "id", "session entity");
    auto client = string_field(*spec, "client", "session entity");
    auto* c = t.entities.find<client_entity>(client);
    if (!c || !c->client) fail("session: no client " + client);
    mongo::session_options options;
    if (auto o = optional_doc(*spec, "sessionOptions")) {
      for (const auto& e : *o) {
        const auto k = e.key();
        if (k == "causalConsistency" && e.get_bool()) {
          options.causal_consistency = *e.get_bool();
        } else if (k == "snapshot" && e.get_bool()) {
          options.snapshot = *e.get_bool();
        } else if (k == "defaultTransactionOptions" && e.get_document()) {
          std::string gap, malformed;
          auto t_options = read_transaction_options(*e.get_document(), gap, malformed);
          if (!malformed.empty()) fail("session " + id + ": " + malformed);
          if (!t_options) throw skip_oid{"session: " + gap};
          options.default_transaction_options = std::move(*t_options);
        } else if (k == "defaultTimeoutMS" && (e.get_int32() || e.get_int64())) {
          options.default_timeout =
              std::chrono::milliseconds(e.get_int32() ? *e.get_int32() : *e.get_int64());
        } else {
          throw skip_oid{"session: no `" + std::string(k) + "` option"};
        }
      }
    }
    auto made = c->client->start_session(options);
    if (!made) fail("session " + id + ": " + made.error().message);
    auto s = std::make_shared<mongo::session>(std::move(*made));
    auto lsid = s->id();
    if (!lsid) fail("session " + id + ": " + lsid.error().message);
    session_entity e{client, std::move(s), std::move(*lsid)};
    if (!t.entities.add(id, std::move(e))) fail("entity " + id + " is defined twice");
    return;
  }
  if (type == "bucket") {
    only_fields(*spec, {"id", "database", "bucketOptions"}, "bucket entity");
    auto id = string_field(*spec, "id", "bucket entity");
    auto db_id = string_field(*spec, "database", "bucket entity");
    auto* db = t.entities.find<database_entity>(db_id);
    if (!db) fail("bucket " + id + ": no database " + db_id);
    bucket_entity b{db->client, db->name, {}};
    if (auto o = optional_doc(*spec, "bucketOptions")) b.options = bson::document(*o);
    if (!t.entities.add(id, std::move(b))) fail("entity " + id + " is defined twice");
    return;
  }
  if (type == "thread") {
    only_fields(*spec, {"id"}, "thread entity");
    auto id = string_field(*spec, "id", "thread entity");
    auto worker =
        std::make_shared<thread_worker>([&t](bson::document_view op) { run_operation(t, op); });
    if (!t.entities.add(id, thread_entity{std::move(worker)})) {
      fail("entity " + id + " is defined twice");
    }
    return;
  }
  if (type == "clientEncryption") throw skip_oid{"client-side field level encryption"};
  fail("unknown entity type " + std::string(type));
}

// ---- data setup and checks
// --------------------------------------------------------------------------

// A failure's message with the server's code and code name: "... (238 NotImplemented)". A
// skips.txt line names a failure by this text.
std::string error_text(const mongo::failure& f) {
  std::string s = f.message;
  if (f.server) s += " (" + std::to_string(f.server->code) + " " + f.server->code_name + ")";
  return s;
}

void must(const mongo::outcome<bson::document>& r, std::string_view what) {
  if (!r) fail(std::string(what) + ": " + r.error().message);
}

// killAllSessions: ends the transactions an earlier test left open (the format runs it before
// each test). Against the fault proxy, which runs transactions without isolation, it also undoes
// what an open transaction wrote, which a server would not show: the runner sends it before
// reading a test's outcome too. A server without the command (FerretDB alone) is not an error.
void kill_all_sessions(deployment& d) {
  bson::builder b;
  b.open_array("killAllSessions").close();
  (void)d.internal->run_command("admin", b.view());
}

void set_up_data(deployment& d, bson::document_view initial) {
  auto& c = *d.internal;
  kill_all_sessions(d);
  for (const auto& item : initial) {
    auto data = item.get_document();
    if (!data) fail("initialData holds a value that is not a document");
    only_fields(*data, {"collectionName", "databaseName", "documents", "createOptions"},
                "initialData");
    auto db = string_field(*data, "databaseName", "initialData");
    auto name = string_field(*data, "collectionName", "initialData");
    // drop, then create (with the options), then insert, each with w: majority.
    {
      bson::builder b;
      b.append_string("drop", name);
      b.open_document("writeConcern").append_string("w", "majority").close();
      auto r = c.run_command(db, b.view());
      if (!r && !(r.error().server && r.error().server->code == 26)) {
        must(r, "initialData: drop " + name);
      }
    }
    {
      bson::builder b;
      b.append_string("create", name);
      if (auto o = optional_doc(*data, "createOptions")) b.append_elements(*o);
      b.open_document("writeConcern").append_string("w", "majority").close();
      auto r = c.run_command(db, b.view());
      if (!r) {
        // A server that refuses the options fails the test: skips.txt may name the refusal.
        const auto options = field(*data, "createOptions");
        fail("initialData: create " + name + (options ? " with " + to_text(*options) : "") + ": " +
             error_text(r.error()));
      }
    }
    auto docs = doc_field(*data, "documents", "initialData");
    if (docs.empty()) continue;
    bson::builder b;
    b.append_string("insert", name);
    b.open_array("documents");
    int i = 0;
    for (const auto& doc : docs) b.append_element(std::to_string(i++), doc);
    b.close();
    b.open_document("writeConcern").append_string("w", "majority").close();
    must(c.run_command(db, b.view()), "initialData: insert into " + name);
  }
}

// Documents equal in any key order; numbers by value (the outcome rule: exact, not matching).
bool same_value(const bson::element& a, const bson::element& b);

bool same_document(bson::document_view a, bson::document_view b, bool array) {
  std::size_t na = 0, nb = 0;
  for ([[maybe_unused]] const auto& e : a) ++na;
  for ([[maybe_unused]] const auto& e : b) ++nb;
  if (na != nb) return false;
  if (array) {
    auto ia = a.begin(), ib = b.begin();
    for (; ia != a.end(); ++ia, ++ib) {
      if (!same_value(*ia, *ib)) return false;
    }
    return true;
  }
  for (const auto& e : a) {
    auto other = b.find(e.key());
    if (!other || !same_value(e, *other)) return false;
  }
  return true;
}

bool same_value(const bson::element& a, const bson::element& b) {
  auto na = number(a), nb = number(b);
  if (na && nb) return *na == *nb;
  if (a.type() != b.type()) return false;
  if (a.type() == bson::type::document) {
    return same_document(*a.get_document(), *b.get_document(), false);
  }
  if (a.type() == bson::type::array) return same_document(*a.get_array(), *b.get_array(), true);
  auto ra = a.raw_value(), rb = b.raw_value();
  return std::equal(ra.begin(), ra.end(), rb.begin(), rb.end());
}

void check_outcome(deployment& d, bson::document_view outcome) {
  for (const auto& item : outcome) {
    auto data = item.get_document();
    if (!data) fail("outcome holds a value that is not a document");
    auto db = string_field(*data, "databaseName", "outcome");
    auto name = string_field(*data, "collectionName", "outcome");
    auto expected = doc_field(*data, "documents", "outcome");
    bson::builder sort;
    sort.append_int32("_id", 1);
    mongo::find_options by_id;
    by_id.sort = sort.view();
    auto cur = d.internal->collection(db, name).find({}, by_id);
    if (!cur) fail("outcome: find in " + name + ": " + cur.error().message);
    std::vector<bson::document> got;
    while (true) {
      auto more = cur->next();
      if (!more) fail("outcome: find in " + name + ": " + more.error().message);
      if (!*more) break;
      got.emplace_back(cur->current());
    }
    std::size_t i = 0;
    for (const auto& want : expected) {
      if (i >= got.size()) {
        fail("outcome: " + name + " has " + std::to_string(got.size()) + " documents, expected " +
             std::to_string(i + 1) + " or more");
      }
      auto w = want.get_document();
      if (!w || !same_document(*w, got[i].view(), false)) {
        fail("outcome: " + name + "[" + std::to_string(i) + "]: expected " + to_text(want) +
             ", got " + bson::to_json(got[i].view()));
      }
      ++i;
    }
    if (i != got.size()) {
      fail("outcome: " + name + " has " + std::to_string(got.size()) + " documents, expected " +
           std::to_string(i));
    }
  }
}

// ---- operations
// --------------------------------------------------------------------------------------

// The operations the format defines for each entity type (an operation not listed is an error in
// the test file; one listed that oid lacks is "oid lacks").
const std::map<std::string, std::set<std::string>, std::less<>> known_operations = {
    {"client",
     {"close", "appendMetadata", "createChangeStream", "clientBulkWrite", "watch", "listDatabases",
      "listDatabaseNames", "listDatabaseObjects", "startSession", "dropDatabase"}},
    {"database",
     {"aggregate", "createChangeStream", "listCollections", "listCollectionNames",
      "listCollectionObjects", "runCommand", "runCursorCommand", "createCommandCursor", "watch",
      "createCollection", "dropCollection", "modifyCollection"}},
    {"collection",
     {"aggregate",
      "bulkWrite",
      "count",
      "countDocuments",
      "createChangeStream",
      "createFindCursor",
      "createIndex",
      "createIndexes",
      "createSearchIndex",
      "createSearchIndexes",
      "deleteMany",
      "deleteOne",
      "distinct",
      "drop",
      "dropIndex",
      "dropIndexes",
      "dropSearchIndex",
      "estimatedDocumentCount",
      "find",
      "findOne",
      "findOneAndDelete",
      "findOneAndReplace",
      "findOneAndUpdate",
      "insertMany",
      "insertOne",
      "listIndexes",
      "listIndexNames",
      "listSearchIndexes",
      "rename",
      "replaceOne",
      "updateMany",
      "updateOne",
      "updateSearchIndex",
      "watch",
      "mapReduce"}},
    {"cursor", {"iterateUntilDocumentOrError", "iterateOnce", "close"}},
    {"session",
     {"startTransaction", "commitTransaction", "abortTransaction", "withTransaction",
      "endSession"}},
    {"bucket",
     {"delete", "deleteByName", "download", "downloadByName", "drop", "find", "rename",
      "renameByName", "upload", "uploadWithId"}},
};

std::string entity_type(test_context& t, std::string_view id) {
  if (t.entities.find<client_entity>(id)) return "client";
  if (t.entities.find<database_entity>(id)) return "database";
  if (t.entities.find<collection_entity>(id)) return "collection";
  if (t.entities.find<cursor_entity>(id)) return "cursor";
  if (t.entities.find<bucket_entity>(id)) return "bucket";
  if (t.entities.find<session_entity>(id)) return "session";
  if (t.entities.find<value_entity>(id)) return "value";
  if (t.entities.find<thread_entity>(id)) return "thread";
  if (t.entities.find<topology_entity>(id)) return "topology description";
  return {};
}

client_entity& client_arg(test_context& t, bson::document_view args, std::string_view op) {
  auto id = string_field(args, "client", op);
  auto* c = t.entities.find<client_entity>(id);
  if (!c) fail(std::string(op) + ": no client entity " + id);
  return *c;
}

bson::document_view event_arg(bson::document_view args, std::string_view op) {
  auto e = doc_field(args, "event", op);
  auto kind = event_kind(e);
  if (event_type_of(kind).empty()) fail(std::string(op) + ": unknown event " + kind);
  return e;
}

std::int64_t count_matching(test_context& t, client_entity& c, bson::document_view expected) {
  std::int64_t n = 0;
  for (const auto& e : events_of(c, event_type_of(event_kind(expected)))) {
    if (match_event(expected, e.view(), t.match).empty()) ++n;
  }
  return n;
}

std::optional<bson::document> last_two_lsids(client_entity& c, std::string_view op, int which) {
  auto events = events_of(c, "command");
  std::vector<bson::document> started;
  for (auto& e : events) {
    if (event_kind(e.view()) == "commandStartedEvent") started.push_back(std::move(e));
  }
  if (started.size() < 2) fail(std::string(op) + ": fewer than two commands were observed");
  auto& ev = started[started.size() - 1 - which];
  auto cmd = ev.view().begin()->get_document()->find("command");
  auto lsid = (*cmd).get_document()->find("lsid");
  if (!lsid) return std::nullopt;
  return wrap(*lsid);
}

bool collection_exists(deployment& d, const std::string& db, const std::string& name) {
  auto list = d.internal->list_collections(db);
  if (!list) fail("listCollections on " + db + ": " + list.error().message);
  for (const auto& c : *list) {
    auto n = c.view().find("name");
    if (n && n->get_string() && *n->get_string() == name) return true;
  }
  return false;
}

bool index_exists(deployment& d, const std::string& db, const std::string& coll,
                  const std::string& name) {
  auto list = d.internal->collection(db, coll).list_indexes();
  if (!list) fail("listIndexes on " + coll + ": " + list.error().message);
  for (const auto& i : *list) {
    auto n = i.view().find("name");
    if (n && n->get_string() && *n->get_string() == name) return true;
  }
  return false;
}

void run_operations(test_context& t, bson::document_view operations);

session_entity& session_arg(test_context& t, bson::document_view args, std::string_view op) {
  auto id = string_field(args, "session", op);
  auto* s = t.entities.find<session_entity>(id);
  if (!s) fail(std::string(op) + ": no session entity " + id);
  return *s;
}

std::string transaction_state_name(mongo::transaction_state s) {
  switch (s) {
  case mongo::transaction_state::none: return "none";
  case mongo::transaction_state::starting: return "starting";
  case mongo::transaction_state::in_progress: return "in_progress";
  case mongo::transaction_state::committed: return "committed";
  case mongo::transaction_state::aborted: return "aborted";
  }
  return "?";
}

// startTransaction, commitTransaction, abortTransaction, withTransaction and endSession on a
// session entity.
op_outcome run_session_operation(test_context& t, session_entity& s, std::string_view name,
                                 bson::document_view args) {
  op_outcome out;
  const auto take = [&](mongo::outcome<mongo::done> r) {
    if (!r) {
      out.error = std::move(r).error();
      const auto code = out.error->code;
      out.client_error =
          !out.error->server && out.error->write_errors.empty() &&
          !out.error->write_concern_error &&
          (code == mongo::errc::session_misuse || code == mongo::errc::invalid_argument);
    }
    return std::move(out);
  };
  const auto options = [&](bson::document_view d) {
    std::string gap, malformed;
    auto o = read_transaction_options(d, gap, malformed);
    if (!malformed.empty()) fail(std::string(name) + ": " + malformed);
    if (!o) throw skip_oid{std::string(name) + ": " + gap};
    return *o;
  };
  if (name == "startTransaction") return take(s.session->start_transaction(options(args)));
  // commitTransaction and abortTransaction take timeoutMS.
  std::optional<std::chrono::milliseconds> timeout;
  if (name == "commitTransaction" || name == "abortTransaction") {
    only_fields(args, {"timeoutMS"}, name);
    if (auto ms = optional_int(args, "timeoutMS")) timeout = std::chrono::milliseconds(*ms);
  }
  if (name == "commitTransaction") return take(s.session->commit_transaction(timeout));
  if (name == "abortTransaction") return take(s.session->abort_transaction(timeout));
  if (name == "endSession") {
    s.session->end_session();
    return out;
  }
  if (name == "withTransaction") {
    const auto callback = doc_field(args, "callback", name);
    bson::builder rest;
    std::optional<std::chrono::milliseconds> call_timeout;
    for (const auto& e : args) {
      if (e.key() == "timeoutMS" && (e.get_int32() || e.get_int64())) {
        call_timeout = std::chrono::milliseconds(e.get_int32() ? *e.get_int32() : *e.get_int64());
      } else if (e.key() != "callback") {
        rest.append_element(e);
      }
    }
    const auto rest_doc = std::move(rest).extract();
    const auto chosen = options(rest_doc.view());
    auto r = s.session->with_transaction(
        [&](mongo::session&) -> mongo::outcome<mongo::done> {
          const bool outer = t.in_callback;
          t.in_callback = true;
          try {
            run_operations(t, callback);
          } catch (callback_failed& f) {
            t.in_callback = outer;
            return std::move(f.error);
          } catch (...) {
            t.in_callback = outer;
            throw;
          }
          t.in_callback = outer;
          return mongo::done{};
        },
        chosen, call_timeout);
    return take(std::move(r));
  }
  fail(std::string(name) + ": not an operation of a session entity");
}

thread_worker& thread_arg(test_context& t, bson::document_view args, std::string_view op) {
  auto id = string_field(args, "thread", op);
  auto* th = t.entities.find<thread_entity>(id);
  if (!th) fail(std::string(op) + ": no thread entity " + id);
  return *th->worker;
}

// waitForThread: the thread's operations must end within 10 s (the format's limit); the first
// one's failure or skip becomes the test's.
void wait_for_thread(thread_worker& worker, const std::string& id) {
  std::exception_ptr error;
  if (!worker.wait(std::chrono::seconds(10), error)) {
    fail("waitForThread: thread " + id + " did not finish its operations in 10 s");
  }
  if (error) std::rethrow_exception(error);
}

void run_special(test_context& t, std::string_view name, bson::document_view args) {
  if (name == "failPoint") {
    only_fields(args, {"failPoint", "client"}, "failPoint");
    auto& c = client_arg(t, args, name);
    auto fp = doc_field(args, "failPoint", name);
    auto fp_name = fp.find("configureFailPoint");
    if (!fp_name || !fp_name->get_string()) fail("failPoint: no configureFailPoint name");
    if (!c.client) fail("failPoint: the client is closed");
    auto r = c.client->run_command("admin", fp);
    // A fail point the fault proxy (or the server) refuses fails the test: skips.txt may name it
    // as the harness's gap, by the refusal's text.
    if (!r) fail("failPoint " + std::string(*fp_name->get_string()) + ": " + error_text(r.error()));
    t.fail_point_names.emplace_back(*fp_name->get_string());
    if (auto data = fp.find("data"); data && data->get_document()) {
      const auto block = data->get_document()->find("blockTimeMS");
      if (block && block->get_int32()) {
        t.longest_block = std::max(t.longest_block, std::chrono::milliseconds(*block->get_int32()));
      }
    }
    return;
  }
  if (name == "createEntities") {
    for (const auto& e : doc_field(args, "entities", name)) {
      auto d = e.get_document();
      if (!d) fail("createEntities: an entity that is not a document");
      make_entity(t, *d);
    }
    return;
  }
  if (name == "assertCollectionExists" || name == "assertCollectionNotExists") {
    auto db = string_field(args, "databaseName", name);
    auto coll = string_field(args, "collectionName", name);
    bool want = name == "assertCollectionExists";
    if (collection_exists(*t.server, db, coll) != want) {
      fail(std::string(name) + ": " + db + "." + coll);
    }
    return;
  }
  if (name == "assertIndexExists" || name == "assertIndexNotExists") {
    auto db = string_field(args, "databaseName", name);
    auto coll = string_field(args, "collectionName", name);
    auto index = string_field(args, "indexName", name);
    bool want = name == "assertIndexExists";
    if (index_exists(*t.server, db, coll, index) != want) {
      fail(std::string(name) + ": " + db + "." + coll + " " + index);
    }
    return;
  }
  if (name == "assertNumberConnectionsCheckedOut") {
    auto& c = client_arg(t, args, name);
    auto want = optional_int(args, "connections");
    if (!want) fail("assertNumberConnectionsCheckedOut: `connections` is missing");
    if (c.checked_out->load() != *want) {
      fail("assertNumberConnectionsCheckedOut: " + std::to_string(c.checked_out->load()) +
           " checked out, expected " + std::to_string(*want));
    }
    return;
  }
  if (name == "assertSameLsidOnLastTwoCommands" || name == "assertDifferentLsidOnLastTwoCommands") {
    auto& c = client_arg(t, args, name);
    auto a = last_two_lsids(c, name, 1), b = last_two_lsids(c, name, 0);
    if (!a || !b) fail(std::string(name) + ": a command without lsid");
    bool same =
        a->view().bytes().size() == b->view().bytes().size() &&
        std::equal(a->view().bytes().begin(), a->view().bytes().end(), b->view().bytes().begin());
    if (same != (name == "assertSameLsidOnLastTwoCommands")) {
      fail(std::string(name) + ": " + to_text(unwrap(*a)) + " and " + to_text(unwrap(*b)));
    }
    return;
  }
  if (name == "wait") {
    auto ms = optional_int(args, "ms");
    if (!ms) fail("wait: `ms` is missing");
    std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
    return;
  }
  if (name == "waitForEvent" || name == "assertEventCount") {
    auto& c = client_arg(t, args, name);
    auto event = event_arg(args, name);
    auto count = optional_int(args, "count");
    if (!count) fail(std::string(name) + ": `count` is missing");
    if (name == "waitForEvent") {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (count_matching(t, c, event) < *count) {
        if (std::chrono::steady_clock::now() > deadline) {
          fail("waitForEvent: fewer than " + std::to_string(*count) + " " + event_kind(event) +
               " in 10 s (" + std::to_string(count_matching(t, c, event)) + " seen)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    } else if (auto n = count_matching(t, c, event); n != *count) {
      fail("assertEventCount: " + std::to_string(n) + " " + event_kind(event) + ", expected " +
           std::to_string(*count));
    }
    return;
  }
  if (name == "targetedFailPoint") {
    // On a replica set (no mongos to be pinned to) the session's server is the primary: the
    // fail point goes through the session's client like failPoint's.
    only_fields(args, {"failPoint", "session"}, name);
    auto& s = session_arg(t, args, name);
    bson::builder b;
    b.append_string("client", s.client);
    b.append_document("failPoint", doc_field(args, "failPoint", name));
    const auto converted = std::move(b).extract();
    return run_special(t, "failPoint", converted.view());
  }
  if (name == "assertSessionTransactionState") {
    auto& s = session_arg(t, args, name);
    const auto want = string_field(args, "state", name);
    const auto got = transaction_state_name(s.session->transaction_state());
    if (got != want) fail(std::string(name) + ": the transaction is " + got + ", expected " + want);
    return;
  }
  if (name == "assertSessionPinned" || name == "assertSessionUnpinned") {
    auto& s = session_arg(t, args, name);
    const auto pinned = s.session->pinned_server();
    if (pinned.empty() != (name == "assertSessionUnpinned")) {
      fail(std::string(name) + ": the session is " +
           (pinned.empty() ? "not pinned" : "pinned to " + pinned));
    }
    return;
  }
  if (name == "assertSessionDirty" || name == "assertSessionNotDirty") {
    auto& s = session_arg(t, args, name);
    if (s.session->dirty() != (name == "assertSessionDirty")) {
      fail(std::string(name) + ": the session is " + (s.session->dirty() ? "" : "not ") + "dirty");
    }
    return;
  }
  if (name == "runOnThread") {
    only_fields(args, {"thread", "operation"}, name);
    auto& worker = thread_arg(t, args, name);
    worker.schedule(bson::document(doc_field(args, "operation", name)));
    return;
  }
  if (name == "waitForThread") {
    only_fields(args, {"thread"}, name);
    wait_for_thread(thread_arg(t, args, name), string_field(args, "thread", name));
    return;
  }
  if (name == "loop") throw skip_oid{"runner: loop"};
  if (name == "recordTopologyDescription") {
    only_fields(args, {"client", "id"}, name);
    auto& c = client_arg(t, args, name);
    auto id = string_field(args, "id", name);
    if (!c.client) fail(std::string(name) + ": the client is closed");
    if (!t.entities.add(id, topology_entity{c.client->topology()})) {
      fail(std::string(name) + ": entity " + id + " exists");
    }
    return;
  }
  if (name == "assertTopologyType") {
    only_fields(args, {"topologyDescription", "topologyType"}, name);
    auto id = string_field(args, "topologyDescription", name);
    auto* d = t.entities.find<topology_entity>(id);
    if (!d) fail(std::string(name) + ": no topology description entity " + id);
    auto want = string_field(args, "topologyType", name);
    auto got = std::string(mongo::to_string(d->description.type));
    if (got != want) fail(std::string(name) + ": " + id + " is " + got + ", expected " + want);
    return;
  }
  if (name == "waitForPrimaryChange") {
    only_fields(args, {"client", "priorTopologyDescription", "timeoutMS"}, name);
    auto& c = client_arg(t, args, name);
    auto id = string_field(args, "priorTopologyDescription", name);
    auto* prior = t.entities.find<topology_entity>(id);
    if (!prior) fail(std::string(name) + ": no topology description entity " + id);
    const auto primary_of = [](const mongo::topology_description& d) -> std::string {
      for (const auto& [address, server] : d.servers) {
        if (server.type == mongo::server_type::rs_primary) return address;
      }
      return {};
    };
    const auto before = primary_of(prior->description);
    const auto limit = std::chrono::milliseconds(optional_int(args, "timeoutMS").value_or(10'000));
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      if (!c.client) fail(std::string(name) + ": the client is closed");
      const auto now = primary_of(c.client->topology());
      if (!now.empty() && now != before) return;
      if (std::chrono::steady_clock::now() > deadline) {
        fail(std::string(name) + ": no new primary in " + std::to_string(limit.count()) +
             " ms (before: " + (before.empty() ? "none" : before) + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  fail("unknown testRunner operation " + std::string(name));
}

void check_error(test_context& t, const op_outcome& r, bson::document_view expect) {
  only_fields(expect,
              {"isError", "isClientError", "isTimeoutError", "errorContains", "errorCode",
               "errorCodeName", "errorLabelsContain", "errorLabelsOmit", "writeErrors",
               "writeConcernErrors", "errorResponse", "expectResult"},
              "expectError");
  if (!r.error) {
    fail("expected an error, the operation succeeded" +
         (r.result ? ": " + to_text(unwrap(*r.result)) : std::string()));
  }
  const auto& f = *r.error;
  bool from_server = f.server.has_value() || !f.write_errors.empty() || f.write_concern_error;
  if (auto e = field(expect, "isClientError")) {
    if (*e->get_bool() != !from_server) {
      fail(std::string("expected ") + (*e->get_bool() ? "a client error" : "a server error") +
           ", got " + error_text(f));
    }
  }
  if (auto e = field(expect, "isTimeoutError")) {
    const bool timed_out = f.code == oid::mongo::errc::timeout;
    if (*e->get_bool() && !timed_out) fail("expected a timeout, got " + error_text(f));
    if (!*e->get_bool() && timed_out) fail("expected no timeout, got " + error_text(f));
  }
  if (auto s = optional_string(expect, "errorContains")) {
    std::string all = f.message;
    if (f.server) all += " " + f.server->message;
    for (const auto& w : f.write_errors) all += " " + w.message;
    if (f.write_concern_error) all += " " + f.write_concern_error->message;
    if (lower(all).find(lower(*s)) == std::string::npos) {
      fail("expected an error containing \"" + *s + "\", got " + error_text(f));
    }
  }
  // The server's code: the command's, else the write concern error's, else the first write error's.
  std::optional<mongo::server_error> server = f.server;
  if (!server && f.write_concern_error) server = f.write_concern_error;
  if (!server && !f.write_errors.empty()) server = f.write_errors.front();
  if (auto code = optional_int(expect, "errorCode")) {
    if (!server || server->code != *code) {
      fail("expected error code " + std::to_string(*code) + ", got " + error_text(f));
    }
  }
  if (auto name = optional_string(expect, "errorCodeName")) {
    if (!server || lower(server->code_name) != lower(*name)) {
      fail("expected error code name " + *name + ", got " + error_text(f));
    }
  }
  for (const auto& label : string_list(expect, "errorLabelsContain")) {
    if (!f.has_label(label)) fail("expected error label " + label + ", got " + error_text(f));
  }
  for (const auto& label : string_list(expect, "errorLabelsOmit")) {
    if (f.has_label(label)) fail("expected no error label " + label + ", got " + error_text(f));
  }
  if (expect.contains("writeErrors") || expect.contains("writeConcernErrors")) {
    throw skip_oid{"clientBulkWrite (writeErrors/writeConcernErrors of its error)"};
  }
  if (auto response = optional_doc(expect, "errorResponse")) {
    // oid's failure keeps the reply's code, codeName, errmsg and labels, not the reply itself.
    for (const auto& k : *response) {
      if (k.key() != "code" && k.key() != "codeName" && k.key() != "errmsg") {
        throw skip_oid{"failure: no server reply (errorResponse." + std::string(k.key()) + ")"};
      }
    }
    if (!f.server) fail("expected a server reply, got " + error_text(f));
    bson::builder b;
    b.append_int32("code", f.server->code);
    b.append_string("codeName", f.server->code_name);
    b.append_string("errmsg", f.server->message);
    auto why = match_document(*response, b.view(), t.match);
    if (!why.empty()) fail("errorResponse: " + why);
  }
  if (auto e = field(expect, "expectResult")) {
    if (!r.partial_result) fail("expectError.expectResult: the error carries no result");
    auto why = match(*e, unwrap(*r.partial_result), t.match, true);
    if (!why.empty()) fail("expectError.expectResult: " + why);
  }
}

void run_operation(test_context& t, bson::document_view op) {
  only_fields(op,
              {"name", "object", "arguments", "expectError", "expectResult", "saveResultAsEntity",
               "ignoreResultAndError"},
              "operation");
  auto name = string_field(op, "name", "operation");
  auto object = string_field(op, "object", "operation " + name);
  bson::document empty_args;
  auto args = optional_doc(op, "arguments").value_or(empty_args.view());
  bool ignore = bool_field(op, "ignoreResultAndError", false);
  if (ignore && (op.contains("expectError") || op.contains("expectResult") ||
                 op.contains("saveResultAsEntity"))) {
    fail(name + ": ignoreResultAndError with an expectation");
  }
  if (op.contains("expectError") &&
      (op.contains("expectResult") || op.contains("saveResultAsEntity"))) {
    fail(name + ": expectError with expectResult or saveResultAsEntity");
  }
  for (const auto key : {"client"sv, "session"sv}) {
    if (auto e = args.find(key); e && e->get_string()) t.require_entity(*e->get_string());
  }
  if (object == "testRunner") return run_special(t, name, args);
  t.require_entity(object);
  auto type = entity_type(t, object);
  if (type.empty()) fail(name + ": no entity " + object);
  auto ops = known_operations.find(type);
  if (ops == known_operations.end() || !ops->second.contains(name)) {
    fail(name + ": not an operation of a " + (type.empty() ? "value" : type) + " entity");
  }
  if (type == "client" && name == "close") {
    // The client entity stays (the format: operations on it fail from now on); its last copy
    // going stops its monitors and closes its connections (topologyClosedEvent).
    only_fields(args, {}, name);
    t.entities.find<client_entity>(object)->client.reset();
    return;
  }
  auto r = type == "session"
               ? run_session_operation(t, *t.entities.find<session_entity>(object), name, args)
               : run_entity_operation(t.entities, object, name, args);
  if (r.unacknowledged) t.unacknowledged_writes = true;
  if (r.error && r.error->code == oid::mongo::errc::timeout) t.timed_out = true;
  if (!r.malformed.empty()) fail(name + ": " + r.malformed);
  if (!r.unsupported.empty()) throw skip_oid{r.unsupported};
  // Inside withTransaction's callback an operation's failure leaves the callback once its
  // expectations are checked (with_transaction decides what follows), even when the test
  // ignores it or expected it.
  if (ignore) {
    if (r.error && t.in_callback) throw callback_failed{*r.error};
    return;
  }
  if (auto expect = optional_doc(op, "expectError")) {
    check_error(t, r, *expect);
    if (t.in_callback) throw callback_failed{*r.error};
    return;
  }
  if (r.error && t.in_callback) throw callback_failed{*r.error};
  // Any failure the test does not expect fails it, NotImplemented (238) and CommandNotFound (59)
  // too: skips.txt may name one as FerretDB's gap, by file, test and the failure's text.
  if (r.error) fail(name + " failed: " + error_text(*r.error));
  if (auto e = field(op, "expectResult")) {
    if (!r.result) fail(name + ": expected a result, the operation returned none");
    // The documents of a cursor (find, aggregate, list*) are root-level documents; the values of
    // distinct are not.
    static const std::set<std::string, std::less<>> cursor_results = {
        "find",        "aggregate",        "listDatabases",    "listCollections",
        "listIndexes", "runCursorCommand", "listSearchIndexes"};
    auto why = cursor_results.contains(name) ? match_root_array(*e, unwrap(*r.result), t.match)
                                             : match(*e, unwrap(*r.result), t.match, true);
    if (!why.empty()) fail(name + ": result: " + why);
  }
  if (auto save = optional_string(op, "saveResultAsEntity")) {
    entity e;
    if (r.cursor) {
      e = cursor_entity{std::move(r.cursor)};
    } else if (r.collection) {
      e = std::move(*r.collection);
    } else if (r.result) {
      e = value_entity{std::move(*r.result)};
    } else {
      fail(name + ": saveResultAsEntity, but the operation returned nothing");
    }
    if (!t.entities.add(*save, std::move(e))) fail(name + ": entity " + *save + " exists");
  }
}

void run_operations(test_context& t, bson::document_view operations) {
  for (const auto& op : operations) {
    auto d = op.get_document();
    if (!d) fail("an operation that is not a document");
    run_operation(t, *d);
  }
}

// The observed events in one line, for a failure's message: each event's relaxed Extended JSON,
// the whole cut at 1,500 characters.
std::string summary(const std::vector<bson::document>& events) {
  std::string out;
  for (const auto& e : events) {
    if (!out.empty()) out += ", ";
    out += bson::to_json(e.view());
    if (out.size() > 1'500) return out.substr(0, 1'500) + "...";
  }
  return out;
}

void check_events(test_context& t, bson::document_view expect_events) {
  for (const auto& item : expect_events) {
    auto spec = item.get_document();
    if (!spec) fail("expectEvents holds a value that is not a document");
    only_fields(*spec, {"client", "eventType", "events", "ignoreExtraEvents"}, "expectEvents");
    auto id = string_field(*spec, "client", "expectEvents");
    t.require_entity(id);
    auto* c = t.entities.find<client_entity>(id);
    if (!c) fail("expectEvents: no client entity " + id);
    auto type = optional_string(*spec, "eventType").value_or("command");
    if (type != "command" && type != "cmap" && type != "sdam")
      fail("expectEvents: unknown eventType " + type);
    auto expected = doc_field(*spec, "events", "expectEvents");
    bool extra_ok = bool_field(*spec, "ignoreExtraEvents", false);
    auto actual = events_of(*c, type);
    std::size_t i = 0;
    for (const auto& e : expected) {
      auto want = e.get_document();
      if (!want) fail("expectEvents: an event that is not a document");
      auto kind = event_kind(*want);
      if (event_type_of(kind) != type) {
        fail("expectEvents: " + kind + " in a list of " + type + " events");
      }
      if (i >= actual.size()) {
        fail("expectEvents: " + std::to_string(actual.size()) + " " + type +
             " events observed, expected more (next: " + to_text(e) + ")");
      }
      auto why = match_event(*want, actual[i].view(), t.match);
      if (!why.empty()) {
        fail("expectEvents[" + std::to_string(i) + "]: " + why + "; observed " +
             bson::to_json(actual[i].view()));
      }
      ++i;
    }
    if (!extra_ok && i != actual.size()) {
      fail("expectEvents: " + std::to_string(actual.size()) + " " + type +
           " events observed, expected " + std::to_string(i) +
           " (first extra: " + bson::to_json(actual[i].view()) + "; all: " + summary(actual) + ")");
    }
  }
}

void disable_fail_points(test_context& t) {
  for (const auto& name : t.fail_point_names) {
    bson::builder b;
    b.append_string("configureFailPoint", name);
    b.append_string("mode", "off");
    (void)t.server->internal->run_command("admin", b.view());
  }
  t.fail_point_names.clear();
}

// Waits until the test's unacknowledged (w: 0) writes are applied: a server serves a connection's
// messages in order, and the pool lends a thread the connection it checked in last, so a ping
// through each client returns only after that connection's earlier writes were done. Without it a
// late write can land in the next test's data (seen: an update that recreated a collection
// between initialData's drop and create, which then failed with NamespaceExists).
// Only then: a ping may have to wait for the server's monitor after an error marked it unknown.
//
// So is a command whose client timed out while the proxy held it (blockConnection): it runs once
// the block ends, and a delete that lands after the next test's initialData removes its documents
// (seen: GridFS chunks "missing" in the next file). Waiting out the longest block lets it land.
void settle_unacknowledged_writes(test_context& t) {
  if (t.timed_out && t.longest_block.count() > 0) {
    std::this_thread::sleep_for(std::min(t.longest_block, std::chrono::milliseconds(5'000)));
  }
  if (!t.unacknowledged_writes) return;
  t.entities.each_client([](client_entity& c) {
    if (!c.client) return;
    bson::builder b;
    b.append_int32("ping", 1);
    (void)c.client->run_command("admin", b.view());
  });
}

// ---- files and tests
// -----------------------------------------------------------------------------------

struct test_result {
  std::string file, test;
  verdict v;
  std::string reason;
};

struct runner {
  std::string suite;
  verdict_rules rules;               // skips.txt and the refusal list (verdicts.hpp)
  std::vector<deployment*> servers;  // in order of preference: single, replicaset
  bool expect_failure = false;
  bool check_skips = false;
  // --data-lake: the files are for Atlas Data Lake only (a mongohoused with its test.driverdata;
  // the suite's README), though they carry no runOnRequirements saying so.
  bool data_lake_only = false;
  bool verbose = false;
  std::vector<test_result> results;
  std::set<std::string> file_keys;

  // `raw` is what running the test gave (passed, not_applicable, oid_lacks or failed); the rules
  // make it the final verdict.
  void record(const std::string& file, const std::string& test, verdict raw, std::string reason) {
    auto [v, why] = rules.judge(file, test, raw, std::move(reason), expect_failure);
    if (verbose || v == verdict::failed) {
      std::printf("%-14s %s: %s%s%s\n", verdict_name(v), file.c_str(), test.c_str(),
                  why.empty() ? "" : ": ", why.c_str());
    }
    results.push_back({file, test, v, std::move(why)});
  }

  void run_file(const fs::path& path) {
    std::string file_key = suite + "/" + path.filename().string();
    file_keys.insert(file_key);
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto text = ss.str();
    bson::json_read_options options;
    options.max_depth = 200;
    auto parsed = bson::from_json(text, options);
    if (!parsed) {
      record(file_key, "(file)", verdict::failed, "not Extended JSON: " + parsed.error().message());
      return;
    }
    auto file = parsed->view();
    auto tests_e = file.find("tests");
    std::vector<std::pair<std::string, bson::document_view>> tests;
    if (tests_e && tests_e->get_array()) {
      auto list = *tests_e->get_array();
      for (const auto& t : list) {
        auto d = t.get_document();
        if (!d) continue;
        auto desc = d->find("description");
        tests.emplace_back(desc && desc->get_string() ? std::string(*desc->get_string()) : "?", *d);
      }
    }
    if (tests.empty()) {
      record(file_key, "(file)", verdict::failed, "no tests");
      return;
    }
    auto schema = file.find("schemaVersion");
    std::string why_not;
    if (!schema || !schema->get_string()) {
      why_not = "no schemaVersion";
    } else {
      auto v = parse_version(*schema->get_string());
      auto ours = parse_version(supported_schema);
      if (v.empty() || v[0] != ours[0] || compare_versions(v, ours) > 0) {
        why_not = "schemaVersion " + std::string(*schema->get_string()) +
                  " is not supported (the runner reads 1.0 to " + std::string(supported_schema) +
                  ")";
      }
    }
    for (auto& [description, test] : tests) {
      if (!why_not.empty()) {
        record(file_key, description, verdict::failed, why_not);
        continue;
      }
      auto [v, reason] = run_test(file, test);
      record(file_key, description, v, std::move(reason));
    }
  }

  // What running `test` gave: passed, not_applicable, oid_lacks or failed, with the reason.
  std::pair<verdict, std::string> run_test(bson::document_view file, bson::document_view test) {
    test_context t;
    try {
      only_fields(test,
                  {"description", "runOnRequirements", "skipReason", "operations", "expectEvents",
                   "expectLogMessages", "expectTracingMessages", "outcome"},
                  "test");
      only_fields(file,
                  {"description", "schemaVersion", "runOnRequirements", "createEntities",
                   "initialData", "tests", "_yamlAnchors"},
                  "file");
      if (auto s = optional_string(test, "skipReason")) {
        return {verdict::not_applicable, "the file skips it: " + *s};
      }
      // The first deployment that meets the file's and the test's requirements.
      std::vector<std::pair<std::string, std::string>> unmet_by;  // deployment, why
      for (auto* d : servers) {
        auto a = data_lake_only && !d->data_lake
                     ? std::string(
                           "needs Atlas Data Lake (buildInfo.dataLake; a mongohoused "
                           "with the suite's test.driverdata)")
                     : unmet_any(optional_doc(file, "runOnRequirements"), *d);
        if (a.empty()) a = unmet_any(optional_doc(test, "runOnRequirements"), *d);
        if (a.empty()) {
          t.server = d;
          break;
        }
        unmet_by.emplace_back(d->name + (d->auth ? " with auth" : ""), std::move(a));
      }
      if (!t.server) {
        // One reason when the deployments agree, else one per deployment.
        std::string why;
        const bool agree = std::all_of(unmet_by.begin(), unmet_by.end(), [&](const auto& u) {
          return u.second == unmet_by.front().second;
        });
        for (const auto& [name, reason] : unmet_by) {
          if (agree) {
            why = reason;
            break;
          }
          why += (why.empty() ? "" : "; ") + name + ": " + reason;
        }
        return {verdict::not_applicable, why.empty() ? "no server given" : why};
      }
      if (test.contains("expectTracingMessages")) throw skip_oid{"tracing (OpenTelemetry)"};
      t.quick_heartbeats = holds_key(test, "configureFailPoint");
      if (auto initial = optional_doc(file, "initialData")) set_up_data(*t.server, *initial);
      if (auto create = optional_doc(file, "createEntities")) {
        for (const auto& e : *create) {
          auto d = e.get_document();
          if (!d) fail("createEntities: an entity that is not a document");
          // An entity oid cannot make ends only the tests that use it (require_entity); a
          // valid-fail or must-fail test is about its file's entities too, so it ends there.
          try {
            make_entity(t, *d);
          } catch (const skip_oid& s) {
            if (expect_failure) throw;
            std::optional<bson::element> id;
            if (d->begin() != d->end()) {
              if (auto spec = d->begin()->get_document()) {
                if (auto e = spec->find("id")) id = *e;
              }
            }
            if (!id || !id->get_string()) throw;
            t.unavailable.emplace(std::string(*id->get_string()), s.reason);
          }
        }
      }
      std::string failure;
      try {
        run_operations(t, doc_field(test, "operations", "test"));
        // A thread entity's work that no waitForThread awaited still counts.
        for (const auto& worker : t.entities.threads()) wait_for_thread(*worker, "entity");
      } catch (const test_failed& f) {
        failure = f.reason;
      }
      disable_fail_points(t);
      if (!failure.empty()) throw test_failed{failure};
      if (auto events = optional_doc(test, "expectEvents")) check_events(t, *events);
      // The rest of the test ran and held; its log messages cannot be checked.
      if (test.contains("expectLogMessages")) throw skip_oid{"no logging (issue 50)"};
      // Sessions end before the outcome is read: a transaction left open is aborted.
      t.entities.each_session([](session_entity& s) { s.session->end_session(); });
      settle_unacknowledged_writes(t);
      if (test.contains("outcome")) kill_all_sessions(*t.server);
      if (auto outcome = optional_doc(test, "outcome")) check_outcome(*t.server, *outcome);
      t.entities.clear();
      return {verdict::passed, {}};
    } catch (const test_failed& f) {
      if (t.server) disable_fail_points(t);
      settle_unacknowledged_writes(t);
      return {verdict::failed, f.reason};
    } catch (const skip_oid& s) {
      if (t.server) disable_fail_points(t);
      return {verdict::oid_lacks, s.reason};
    }
  }

  int summary(const std::string& report) {
    std::map<verdict, int> counts;
    std::map<std::pair<verdict, std::string>, int> reasons;
    for (const auto& r : results) {
      ++counts[r.v];
      if (r.v != verdict::passed && r.v != verdict::failed) ++reasons[{r.v, r.reason}];
    }
    std::printf(
        "suite %s: files %zu, tests %zu, passed %d, not-applicable %d, server-differs %d, "
        "harness %d, oid-lacks %d, failed %d\n",
        suite.c_str(), file_keys.size(), results.size(), counts[verdict::passed],
        counts[verdict::not_applicable], counts[verdict::server_differs], counts[verdict::harness],
        counts[verdict::oid_lacks], counts[verdict::failed]);
    for (const auto& [key, n] : reasons) {
      std::printf("  %-14s %4d  %s\n", verdict_name(key.first), n, key.second.c_str());
    }
    const auto stale = rules.stale(file_keys);
    for (const auto& s : stale) std::printf("%s\n", s.c_str());
    if (!report.empty()) {
      std::ofstream out(report, std::ios::trunc);
      for (const auto& r : results) {
        auto clean = [](std::string s) {
          for (auto& c : s) {
            if (c == '\t' || c == '\n' || c == '\r') c = ' ';
          }
          return s;
        };
        out << suite << '\t' << clean(r.file) << '\t' << clean(r.test) << '\t' << verdict_name(r.v)
            << '\t' << clean(r.reason) << '\n';
      }
      if (!out) {
        std::fprintf(stderr, "oid_unified_runner: cannot write %s\n", report.c_str());
        return 1;
      }
    }
    if (check_skips && !stale.empty()) return 1;
    return counts[verdict::failed] == 0 ? 0 : 1;
  }
};

int usage() {
  std::fputs(
      "usage: oid_unified_runner [--suite NAME] [--skips FILE] [--check-skips] [--report FILE] "
      "[--expect-failure] [--refusals FILE] [--data-lake] [--uri URI] [--rs-uri URI] "
      "[--rs-auth-uri URI] [--verbose] FILE_OR_DIR...\n",
      stderr);
  return 2;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

fs::path spec_root() {
  auto dir = env("OID_SPEC_DATA_DIR");
  return dir.empty() ? fs::path(OID_SPEC_DATA_DIR) : fs::path(dir);
}

}  // namespace
}  // namespace oid::unified

int main(int argc, char** argv) {
  using namespace oid::unified;
  runner r;
  std::string uri = env("MONGODB_PROXY_URI"), rs_uri = env("MONGODB_RS_PROXY_URI"),
              rs_auth_uri = env("MONGODB_RS_AUTH_PROXY_URI"), report, skips, refusals;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--suite") {
      r.suite = value();
    } else if (a == "--skips") {
      skips = value();
    } else if (a == "--check-skips") {
      r.check_skips = true;
    } else if (a == "--refusals") {
      refusals = value();
    } else if (a == "--report") {
      report = value();
    } else if (a == "--uri") {
      uri = value();
    } else if (a == "--rs-uri") {
      rs_uri = value();
    } else if (a == "--rs-auth-uri") {
      rs_auth_uri = value();
    } else if (a == "--expect-failure") {
      r.expect_failure = true;
    } else if (a == "--data-lake") {
      r.data_lake_only = true;
    } else if (a == "--verbose") {
      r.verbose = true;
    } else if (a.starts_with("--")) {
      return usage();
    } else {
      inputs.emplace_back(a);
    }
  }
  if (inputs.empty()) return usage();
  // Reads a rule file into r.rules; a file that cannot be read or a malformed line is exit 2.
  const auto read_rules = [&](const std::string& path, bool is_skips) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "oid_unified_runner: cannot read %s: %s\n", path.c_str(),
                   std::strerror(errno));
      std::exit(2);
    }
    auto error = is_skips ? r.rules.read_skips(in, path) : r.rules.read_refusals(in, path);
    if (!error.empty()) {
      std::fprintf(stderr, "oid_unified_runner: %s\n", error.c_str());
      std::exit(2);
    }
  };
  if (!skips.empty()) read_rules(skips, true);
  if (!refusals.empty()) read_rules(refusals, false);
  std::vector<fs::path> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      for (const auto& e : fs::directory_iterator(in, ec)) {
        if (e.path().extension() == ".json") files.push_back(e.path());
      }
    } else if (fs::exists(in, ec)) {
      files.push_back(in);
    } else if (auto spec = spec_root() / in; in.is_relative() && fs::is_directory(spec, ec)) {
      for (const auto& e : fs::directory_iterator(spec, ec)) {
        if (e.path().extension() == ".json") files.push_back(e.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  bool ci = env("CI") == "true";
  if (files.empty()) {
    std::fprintf(stderr,
                 "oid_unified_runner: no .json files in the inputs (scripts/spec-data.sh)\n");
    return ci ? 1 : 77;
  }
  if (r.suite.empty()) r.suite = files.front().parent_path().filename().string();
  if (uri.empty() && rs_uri.empty() && rs_auth_uri.empty()) {
    std::fprintf(stderr,
                 "oid_unified_runner: no server (MONGODB_PROXY_URI, MONGODB_RS_PROXY_URI: "
                 "scripts/test.sh starts them)\n");
    return ci ? 1 : 77;
  }
  std::optional<deployment> single, rs, rs_auth;
  if (!uri.empty()) {
    single = connect("single", uri);
    if (!single) return 1;
    r.servers.push_back(&*single);
  }
  if (!rs_uri.empty()) {
    rs = connect("replicaset", rs_uri);
    if (!rs) return 1;
    r.servers.push_back(&*rs);
  }
  // Last: only the tests that ask for authentication (auth: true) reach it.
  if (!rs_auth_uri.empty()) {
    rs_auth = connect("replicaset", rs_auth_uri);
    if (!rs_auth) return 1;
    r.servers.push_back(&*rs_auth);
  }
  for (const auto& f : files) r.run_file(f);
  return r.summary(report);
}
