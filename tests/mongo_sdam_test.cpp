// Runs the Server Discovery and Monitoring specification's own tests (sdam of scripts/spec-data.sh:
// single, rs, sharded, errors, load-balanced, monitoring) against the pure state machine of
// oid/mongo/sdam.hpp: each file's hello replies and application errors go in, and the topology
// description (or, for monitoring, the events) that come out are compared with the file's
// outcome. Formats: source/server-discovery-and-monitoring/tests/README.md in
// mongodb/specifications. No case is skipped.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <oid/bson/json_reader.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mongo/sdam/sdam.hpp"
#include "support/ci.hpp"
#include "support/spec_data.hpp"
#include "support/spec_json.hpp"

namespace {

namespace fs = std::filesystem;
using namespace oid::mongo;
using oid::testing::array_of;
using oid::testing::object_of;
using simdjson::dom::element;

fs::path data_dir() { return oid::testing::spec_data_dir("sdam"); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The SDAM options of the suite's connection strings, which are all plain
// "mongodb://h1,h2/?k=v&k=v", read as the client reads them: one seed without directConnection
// starts Unknown (a standalone's answer then makes it Single), as the specification says.
topology_settings settings_of(std::string_view uri) {
  topology_settings s;
  uri.remove_prefix(std::string_view("mongodb://").size());
  const auto end = uri.find_first_of("/?");
  std::string_view hosts = uri.substr(0, end);
  while (!hosts.empty()) {
    const auto comma = hosts.find(',');
    s.seeds.emplace_back(hosts.substr(0, comma));
    if (comma == std::string_view::npos) break;
    hosts.remove_prefix(comma + 1);
  }
  const auto q = uri.find('?');
  std::string_view options = q == std::string_view::npos ? "" : uri.substr(q + 1);
  while (!options.empty()) {
    const auto amp = options.find('&');
    const auto pair = options.substr(0, amp);
    const auto eq = pair.find('=');
    const std::string key = lower(pair.substr(0, eq));
    const std::string_view value = pair.substr(eq + 1);
    if (key == "replicaset") s.replica_set = std::string(value);
    if (key == "directconnection") s.direct_connection = value == "true";
    if (key == "loadbalanced") s.load_balanced = value == "true";
    if (amp == std::string_view::npos) break;
    options.remove_prefix(amp + 1);
  }
  return s;
}

oid::bson::document to_bson(element e) {
  auto d = oid::bson::from_json(simdjson::to_string(e));
  EXPECT_TRUE(d.has_value()) << simdjson::to_string(e);
  return d.has_value() ? std::move(*d) : oid::bson::document();
}

// Appends each event of `u` to `events` and returns its description.
topology_description take(topology_update u, std::vector<sdam_event>& events) {
  events.insert(events.end(), u.events.begin(), u.events.end());
  return std::move(u.description);
}

std::string oid_hex(element e) {
  std::string_view hex;
  if (e["$oid"].get(hex) != simdjson::SUCCESS) return "?";
  return std::string(hex);
}

std::optional<topology_version> topology_version_of(element e) {
  if (e.is_null()) return std::nullopt;
  std::string_view counter;
  if (e["counter"]["$numberLong"].get(counter) != simdjson::SUCCESS) return std::nullopt;
  return topology_version{oid::object_id(oid_hex(e["processId"])),
                          std::stoll(std::string(counter))};
}

std::string show(const std::optional<std::string>& s) { return s ? "\"" + *s + "\"" : "null"; }
std::string show(const std::optional<std::int64_t>& n) { return n ? std::to_string(*n) : "null"; }

// Compares a field the outcome may give as null or a value; appends a difference to `why`.
void expect_string(std::ostringstream& why, std::string_view what, element want,
                   const std::optional<std::string>& got) {
  std::string_view w;
  const std::optional<std::string> want_value =
      want.get(w) == simdjson::SUCCESS ? std::optional<std::string>(std::string(w)) : std::nullopt;
  if (want_value != got)
    why << what << ": want " << show(want_value) << ", got " << show(got) << "; ";
}

void expect_integer(std::ostringstream& why, std::string_view what, element want,
                    const std::optional<std::int64_t>& got) {
  std::int64_t w = 0;
  const std::optional<std::int64_t> want_value =
      want.get(w) == simdjson::SUCCESS ? std::optional<std::int64_t>(w) : std::nullopt;
  if (want_value != got)
    why << what << ": want " << show(want_value) << ", got " << show(got) << "; ";
}

// The differences between a non-monitoring outcome and the description.
std::string compare_outcome(element outcome, const topology_description& t) {
  std::ostringstream why;
  for (auto [key, want] : object_of(outcome)) {
    if (key == "topologyType") {
      if (std::string_view(want.get_string().value_unsafe()) != to_string(t.type)) {
        why << "topologyType: want " << want << ", got " << to_string(t.type) << "; ";
      }
    } else if (key == "setName") {
      expect_string(why, "setName", want, t.set_name);
    } else if (key == "logicalSessionTimeoutMinutes") {
      expect_integer(why, "logicalSessionTimeoutMinutes", want, t.logical_session_timeout_minutes);
    } else if (key == "maxSetVersion") {
      expect_integer(why, "maxSetVersion", want, t.max_set_version);
    } else if (key == "maxElectionId") {
      const std::string got = t.max_election_id ? t.max_election_id->to_hex() : "null";
      if ((want.is_null() ? "null" : oid_hex(want)) != got)
        why << "maxElectionId: want " << want << ", got " << got << "; ";
    } else if (key == "compatible") {
      if (bool(want.get_bool().value_unsafe()) != t.compatible) {
        why << "compatible: want " << want << "; ";
      }
    } else if (key == "servers") {
      const auto servers = object_of(want);
      if (servers.size() != t.servers.size()) {
        why << "servers: want " << servers.size() << ", got " << t.servers.size() << " (";
        for (const auto& [address, s] : t.servers) why << address << " ";
        why << "); ";
      }
      for (auto [address, w] : servers) {
        const auto* s = t.find(address);
        if (s == nullptr) {
          why << address << ": missing; ";
          continue;
        }
        const std::string at = std::string(address) + ".";
        for (auto [field, value] : object_of(w)) {
          if (field == "type") {
            if (std::string_view(value.get_string().value_unsafe()) != to_string(s->type)) {
              why << at << "type: want " << value << ", got " << to_string(s->type) << "; ";
            }
          } else if (field == "setName") {
            expect_string(why, at + "setName", value, s->set_name);
          } else if (field == "setVersion") {
            expect_integer(why, at + "setVersion", value, s->set_version);
          } else if (field == "logicalSessionTimeoutMinutes") {
            expect_integer(why, at + "logicalSessionTimeoutMinutes", value,
                           s->logical_session_timeout_minutes);
          } else if (field == "minWireVersion" || field == "maxWireVersion") {
            // oid's wire versions default to 0, as the specification's ServerDescription says;
            // the load-balanced files write that default as null.
            const std::int32_t got =
                field == "minWireVersion" ? s->min_wire_version : s->max_wire_version;
            expect_integer(
                why, at + std::string(field), value,
                value.is_null() && got == 0 ? std::nullopt : std::optional<std::int64_t>(got));
          } else if (field == "error") {
            expect_string(why, at + "error", value, s->error);
          } else if (field == "electionId") {
            const std::string got = s->election_id ? s->election_id->to_hex() : "null";
            const std::string want_id = value.is_null() ? "null" : oid_hex(value);
            if (want_id != got)
              why << at << "electionId: want " << want_id << ", got " << got << "; ";
          } else if (field == "topologyVersion") {
            if (topology_version_of(value) != s->topology_version) {
              why << at << "topologyVersion: want " << value << "; ";
            }
          } else if (field == "pool") {
            expect_integer(why, at + "pool.generation", value["generation"],
                           static_cast<std::int64_t>(t.pool_generation(address)));
          } else {
            why << at << field << ": not compared by this runner; ";
          }
        }
      }
    } else {
      why << key << ": not compared by this runner; ";
    }
  }
  return why.str();
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> strings(element e) {
  std::vector<std::string> out;
  for (auto item : array_of(e)) {
    out.emplace_back(lower(item.get_string().value_unsafe()));
  }
  return out;
}

// The differences between a server description in an event and the one expected.
void compare_server(std::ostringstream& why, std::string_view what, element want,
                    const server_description& got) {
  for (auto [field, value] : object_of(want)) {
    const std::string at = std::string(what) + "." + std::string(field);
    if (field == "address") {
      if (lower(value.get_string().value_unsafe()) != got.address) why << at << "; ";
    } else if (field == "type") {
      if (std::string_view(value.get_string().value_unsafe()) != to_string(got.type)) {
        why << at << ": want " << value << ", got " << to_string(got.type) << "; ";
      }
    } else if (field == "hosts" || field == "passives" || field == "arbiters") {
      const auto& list = field == "hosts"      ? got.hosts
                         : field == "passives" ? got.passives
                                               : got.arbiters;
      if (sorted(strings(value)) != sorted(list)) why << at << "; ";
    } else if (field == "primary") {
      expect_string(why, at, value, got.primary);
    } else if (field == "setName") {
      expect_string(why, at, value, got.set_name);
    } else {
      why << at << ": not compared by this runner; ";
    }
  }
}

void compare_topology(std::ostringstream& why, std::string_view what, element want,
                      const topology_description& got) {
  for (auto [field, value] : object_of(want)) {
    const std::string at = std::string(what) + "." + std::string(field);
    if (field == "topologyType") {
      if (std::string_view(value.get_string().value_unsafe()) != to_string(got.type)) {
        why << at << ": want " << value << ", got " << to_string(got.type) << "; ";
      }
    } else if (field == "setName") {
      expect_string(why, at, value, got.set_name);
    } else if (field == "servers") {
      const auto servers = array_of(value);
      if (servers.size() != got.servers.size()) why << at << ": count; ";
      for (auto s : servers) {
        const auto* d = got.find(s["address"].get_string().value_unsafe());
        if (d == nullptr) {
          why << at << ": missing " << s["address"] << "; ";
        } else {
          compare_server(why, at, s, *d);
        }
      }
    } else {
      why << at << ": not compared by this runner; ";
    }
  }
}

std::string_view event_name(const sdam_event& e) {
  constexpr std::string_view names[] = {
      "topology_opening_event", "topology_closed_event", "topology_description_changed_event",
      "server_opening_event",   "server_closed_event",   "server_description_changed_event"};
  return names[e.index()];
}

std::string compare_events(element want, const std::vector<sdam_event>& got) {
  std::ostringstream why;
  const auto list = array_of(want);
  if (list.size() != got.size()) {
    why << "events: want " << list.size() << ", got " << got.size() << " (";
    for (const auto& e : got) why << event_name(e) << " ";
    why << "); ";
  }
  std::size_t i = 0;
  for (auto w : list) {
    if (i >= got.size()) break;
    const auto& e = got[i];
    const std::string at = "event " + std::to_string(i++);
    auto [name, body] = *object_of(w).begin();
    if (name != event_name(e)) {
      why << at << ": want " << name << ", got " << event_name(e) << "; ";
      continue;
    }
    if (const auto* o = std::get_if<server_opening_event>(&e)) {
      if (lower(body["address"].get_string().value_unsafe()) != o->address)
        why << at << " address; ";
    } else if (const auto* c = std::get_if<server_closed_event>(&e)) {
      if (lower(body["address"].get_string().value_unsafe()) != c->address)
        why << at << " address; ";
    } else if (const auto* s = std::get_if<server_description_changed_event>(&e)) {
      if (lower(body["address"].get_string().value_unsafe()) != s->address)
        why << at << " address; ";
      compare_server(why, at + ".previousDescription", body["previousDescription"], s->previous);
      compare_server(why, at + ".newDescription", body["newDescription"], s->current);
    } else if (const auto* t = std::get_if<topology_description_changed_event>(&e)) {
      compare_topology(why, at + ".previousDescription", body["previousDescription"], t->previous);
      compare_topology(why, at + ".newDescription", body["newDescription"], t->current);
    }
  }
  return why.str();
}

application_error application_error_of(element e) {
  application_error a;
  a.address = std::string(e["address"].get_string().value_unsafe());
  std::uint64_t generation = 0;
  if (e["generation"].get(generation) == simdjson::SUCCESS) a.generation = generation;
  std::int64_t wire = 0;
  if (e["maxWireVersion"].get(wire) == simdjson::SUCCESS)
    a.max_wire_version = static_cast<std::int32_t>(wire);
  a.phase = std::string_view(e["when"].get_string().value_unsafe()) == "beforeHandshakeCompletes"
                ? error_phase::before_handshake
                : error_phase::after_handshake;
  const std::string_view type = e["type"].get_string().value_unsafe();
  a.kind = type == "command"   ? error_kind::command
           : type == "timeout" ? error_kind::timeout
                               : error_kind::network;
  a.message = std::string(type) + " error";
  return a;
}

// Runs every file of one directory; returns {passed, total}.
std::pair<int, int> run_suite(const std::string& name) {
  const fs::path dir = data_dir() / name;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const bool monitoring = name == "monitoring";
  int passed = 0;
  simdjson::dom::parser parser;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    element doc;
    if (parser.load(file.string()).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << "cannot read " << file;
      continue;
    }
    std::vector<sdam_event> events;
    topology_description t =
        take(open_topology(settings_of(doc["uri"].get_string().value_unsafe())), events);
    std::string failures;
    int phase = 0;
    for (auto p : array_of(doc["phases"])) {
      element responses, errors;
      if (p["responses"].get(responses) == simdjson::SUCCESS) {
        for (auto r : array_of(responses)) {
          const std::string_view address = r.at(0).get_string().value_unsafe();
          const element reply = r.at(1).value_unsafe();
          if (object_of(reply).size() == 0) {
            t = take(apply_check_failure(t, address, "network error"), events);
          } else {
            const auto bytes = to_bson(reply);
            t = take(apply_hello(t, address, bytes.view(), 1.0), events);
          }
        }
      }
      if (p["applicationErrors"].get(errors) == simdjson::SUCCESS) {
        for (auto e : array_of(errors)) {
          auto a = application_error_of(e);
          element response;
          oid::bson::document bytes;
          if (e["response"].get(response) == simdjson::SUCCESS) bytes = to_bson(response);
          a.reply = bytes.view();
          t = take(apply_application_error(t, a), events);
        }
      }
      const element outcome = p["outcome"].value_unsafe();
      const std::string why =
          monitoring ? compare_events(outcome["events"], events) : compare_outcome(outcome, t);
      events.clear();
      if (!why.empty()) failures += "phase " + std::to_string(phase) + ": " + why + "\n";
      ++phase;
    }
    if (failures.empty()) {
      ++passed;
    } else {
      ADD_FAILURE() << file.filename() << "\n" << failures;
    }
  }
  std::cout << "sdam/" << name << ": " << passed << " of " << files.size() << " files passed\n";
  return {passed, static_cast<int>(files.size())};
}

class SdamSpecTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SdamSpecTest, EveryFilePasses) {
  const fs::path dir = data_dir() / GetParam();
  if (!fs::is_directory(dir)) {
    OID_SKIP_OR_FAIL_IN_CI("the specification tests are not here: " << dir);
  }
  const auto [passed, total] = run_suite(GetParam());
  EXPECT_EQ(passed, total);
  EXPECT_GT(total, 0);
}

INSTANTIATE_TEST_SUITE_P(Suites, SdamSpecTest,
                         ::testing::Values("single", "rs", "sharded", "errors", "load-balanced",
                                           "monitoring"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n.erase(std::remove(n.begin(), n.end(), '-'), n.end());
                           return n;
                         });

}  // namespace
