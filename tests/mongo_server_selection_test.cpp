// Runs the Server Selection and Max Staleness specifications' own tests against the pure
// functions of oid/mongo/server_selection.hpp and read_preference.hpp:
//   server-selection/server_selection  suitable servers and latency window per topology type
//   max-staleness                      the same with maxStalenessSeconds (and its validation)
//   server-selection/rtt               the round trip time's moving average
//   server-selection/in_window         the choice within the window; oid has no pool yet, so
//                                      the files' operation counts are given to choose_server
//                                      as they are (the README's "mocked_topology_state")
// Formats: source/server-selection/tests/README.md in mongodb/specifications. No case is skipped.
// Below them, oid's own cases for the read preference's names, validation and $readPreference.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/server_selection.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/ci.hpp"
#include "support/matchers.hpp"
#include "support/spec_data.hpp"
#include "support/spec_json.hpp"

namespace {

namespace fs = std::filesystem;
using namespace oid::mongo;
using namespace oid::testing;  // array_of, object_of, spec_data_dir, the matchers
using simdjson::dom::element;

// The .json files under `dir` and its subdirectories, sorted.
std::vector<fs::path> json_files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

server_type server_type_of(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(server_type::load_balancer); ++i) {
    if (to_string(static_cast<server_type>(i)) == name) return static_cast<server_type>(i);
  }
  ADD_FAILURE() << "unknown server type " << name;
  return server_type::unknown;
}

topology_type topology_type_of(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(topology_type::load_balanced); ++i) {
    if (to_string(static_cast<topology_type>(i)) == name) return static_cast<topology_type>(i);
  }
  ADD_FAILURE() << "unknown topology type " << name;
  return topology_type::unknown;
}

std::int64_t number_long(element e) {
  std::int64_t n = 0;
  if (e.get(n) == simdjson::SUCCESS) return n;
  std::string_view text;
  EXPECT_EQ(e["$numberLong"].get(text), simdjson::SUCCESS);
  return std::stoll(std::string(text));
}

server_description server_of(element e) {
  server_description s;
  s.address = normalize_address(e["address"].get_string().value_unsafe());
  s.type = server_type_of(e["type"].get_string().value_unsafe());
  double rtt = 0;
  if (e["avg_rtt_ms"].get(rtt) == simdjson::SUCCESS) s.round_trip_time_ms = rtt;
  element field;
  if (e["tags"].get(field) == simdjson::SUCCESS) {
    for (auto [name, value] : object_of(field)) {
      s.tags.emplace(std::string(name), std::string(value.get_string().value_unsafe()));
    }
  }
  if (e["lastUpdateTime"].get(field) == simdjson::SUCCESS)
    s.last_update_time_ms = number_long(field);
  if (e["lastWrite"]["lastWriteDate"].get(field) == simdjson::SUCCESS) {
    s.last_write_date = number_long(field);
  }
  std::int64_t wire = 0;
  if (e["maxWireVersion"].get(wire) == simdjson::SUCCESS) {
    s.max_wire_version = static_cast<std::int32_t>(wire);
  }
  return s;
}

topology_description topology_of(element e) {
  topology_description t;
  t.type = topology_type_of(e["type"].get_string().value_unsafe());
  for (auto s : array_of(e["servers"])) {
    auto d = server_of(s);
    t.pool_generations.emplace(d.address, 0);
    t.servers.emplace(d.address, std::move(d));
  }
  return t;
}

read_preference read_preference_of(element e) {
  read_preference p;
  std::string_view mode;
  if (e["mode"].get(mode) == simdjson::SUCCESS) p.mode = read_mode_from_string(mode).value();
  element sets;
  if (e["tag_sets"].get(sets) == simdjson::SUCCESS) {
    for (auto set : array_of(sets)) {
      tag_set tags;
      for (auto [name, value] : object_of(set)) {
        tags.emplace_back(std::string(name), std::string(value.get_string().value_unsafe()));
      }
      p.tag_sets.push_back(std::move(tags));
    }
  }
  std::int64_t seconds = 0;
  if (e["maxStalenessSeconds"].get(seconds) == simdjson::SUCCESS && seconds != -1) {
    p.max_staleness = std::chrono::seconds(seconds);
  }
  return p;
}

std::vector<std::string> addresses(element list) {
  std::vector<std::string> out;
  for (auto s : array_of(list))
    out.push_back(normalize_address(s["address"].get_string().value_unsafe()));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> addresses(const std::vector<const server_description*>& list) {
  std::vector<std::string> out;
  for (const auto* s : list) out.push_back(s->address);
  std::sort(out.begin(), out.end());
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out = "[";
  for (const auto& s : v) out += (out.size() > 1 ? " " : "") + s;
  return out + "]";
}

// One selection file; returns the differences.
std::string run_selection_file(element doc) {
  const auto topology = topology_of(doc["topology_description"]);
  const auto preference = read_preference_of(doc["read_preference"]);
  std::string_view op;
  if (doc["operation"].get(op) != simdjson::SUCCESS) op = "read";
  selection_options options;
  std::int64_t heartbeat = 0;
  if (doc["heartbeatFrequencyMS"].get(heartbeat) == simdjson::SUCCESS) {
    options.heartbeat_frequency = std::chrono::milliseconds(heartbeat);
  }
  element deprioritized;
  if (doc["deprioritized_servers"].get(deprioritized) == simdjson::SUCCESS) {
    options.deprioritized = addresses(deprioritized);
  }
  const auto got = select_servers(
      topology, preference, op == "write" ? operation_kind::write : operation_kind::read, options);
  bool want_error = false;
  if (doc["error"].get(want_error) != simdjson::SUCCESS) want_error = false;
  std::ostringstream why;
  if (want_error) {
    if (got.has_value()) {
      why << "want an error, got " << join(addresses(got->suitable));
    } else if (got.error().code != oid::mongo::errc::invalid_read_preference) {
      why << "want invalid_read_preference, got " << got.error().message();
    }
    return why.str();
  }
  if (!got.has_value()) return "want servers, got error " + got.error().message();
  element list;
  if (doc["suitable_servers"].get(list) == simdjson::SUCCESS &&
      addresses(list) != addresses(got->suitable)) {
    why << "suitable: want " << join(addresses(list)) << ", got " << join(addresses(got->suitable))
        << "; ";
  }
  if (doc["in_latency_window"].get(list) == simdjson::SUCCESS &&
      addresses(list) != addresses(got->in_window)) {
    why << "in window: want " << join(addresses(list)) << ", got "
        << join(addresses(got->in_window)) << "; ";
  }
  return why.str();
}

std::string run_rtt_file(element doc) {
  std::optional<double> average;
  double a = 0;
  if (doc["avg_rtt_ms"].get(a) == simdjson::SUCCESS) average = a;  // else "NULL": no average yet
  const double sample = doc["new_rtt_ms"].get_double().value_unsafe();
  const double want = doc["new_avg_rtt"].get_double().value_unsafe();
  const double got = average_rtt(average, sample);
  if (std::fabs(got - want) > 1e-9 * std::max(1.0, std::fabs(want))) {
    return "want " + std::to_string(want) + ", got " + std::to_string(got);
  }
  return {};
}

std::string run_in_window_file(element doc) {
  const auto topology = topology_of(doc["topology_description"]);
  std::map<std::string, std::uint64_t> counts;
  for (auto s : array_of(doc["mocked_topology_state"])) {
    counts[normalize_address(s["address"].get_string().value_unsafe())] =
        s["operation_count"].get_uint64().value_unsafe();
  }
  read_preference nearest;
  nearest.mode = read_mode::nearest;
  const auto got = select_servers(topology, nearest, operation_kind::read);
  if (!got.has_value()) return "selection failed: " + got.error().message();
  std::vector<std::uint64_t> window_counts;
  for (const auto* s : got->in_window) window_counts.push_back(counts[s->address]);
  const std::int64_t iterations = doc["iterations"].get_int64().value_unsafe();
  std::mt19937_64 random(20240613);
  std::map<std::string, std::int64_t> chosen;
  for (std::int64_t i = 0; i < iterations; ++i) {
    const auto* s = choose_server(got->in_window, window_counts, random);
    if (s != nullptr) ++chosen[s->address];
  }
  const auto outcome = doc["outcome"];
  const double tolerance = outcome["tolerance"].get_double().value_unsafe();
  std::ostringstream why;
  for (auto [address, value] : object_of(outcome["expected_frequencies"])) {
    const double want = value.get_double().value_unsafe();
    const double seen =
        static_cast<double>(chosen[normalize_address(address)]) / static_cast<double>(iterations);
    const bool exact = want == 0 || want == 1;
    if (exact ? seen != want : std::fabs(seen - want) > tolerance) {
      why << address << ": want " << want << ", got " << seen << "; ";
    }
  }
  return why.str();
}

// Runs every file under `relative` with `run`; prints and returns {passed, total}.
template <class Run>
void run_suite(std::string_view relative, Run run) {
  const fs::path dir = oid::testing::spec_data_dir(relative);
  if (!fs::is_directory(dir)) {
    OID_SKIP_OR_FAIL_IN_CI("the specification tests are not here: " << dir);
  }
  simdjson::dom::parser parser;
  const auto files = json_files_under(dir);
  int passed = 0;
  for (const auto& file : files) {
    element doc;
    if (parser.load(file.string()).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << "cannot read " << file;
      continue;
    }
    const std::string why = run(doc);
    if (why.empty()) {
      ++passed;
    } else {
      ADD_FAILURE() << fs::relative(file, dir) << ": " << why;
    }
  }
  std::cout << relative << ": " << passed << " of " << files.size() << " files passed\n";
  EXPECT_GT(files.size(), 0u);
}

TEST(ServerSelectionSpecTest, ServerSelection) {
  run_suite("server-selection/server_selection", run_selection_file);
}
TEST(ServerSelectionSpecTest, MaxStaleness) { run_suite("max-staleness", run_selection_file); }
TEST(ServerSelectionSpecTest, Rtt) { run_suite("server-selection/rtt", run_rtt_file); }
TEST(ServerSelectionSpecTest, InWindow) {
  run_suite("server-selection/in_window", run_in_window_file);
}

// ---- oid's own cases ---------------------------------------------------------------------------

TEST(ReadPreferenceTest, ModeNamesRoundTripInAnyCase) {
  for (const auto m : {read_mode::primary, read_mode::primary_preferred, read_mode::secondary,
                       read_mode::secondary_preferred, read_mode::nearest}) {
    EXPECT_THAT(read_mode_from_string(to_string(m)), oid::testing::HasValue(m));
  }
  EXPECT_THAT(read_mode_from_string("SECONDARYpreferred"),
              oid::testing::HasValue(read_mode::secondary_preferred));
  EXPECT_THAT(read_mode_from_string("secondary_preferred"),
              oid::testing::HasError(oid::mongo::errc::invalid_read_preference));
  EXPECT_THAT(read_mode_from_string(""),
              oid::testing::HasError(oid::mongo::errc::invalid_read_preference));
}

TEST(ReadPreferenceTest, ValidateRejectsWhatTheSpecificationRejects) {
  using std::chrono::seconds;
  const std::chrono::milliseconds heartbeat{10000};
  struct test_case {
    std::string_view name;
    read_preference p;
    bool valid;
  };
  const test_case cases[] = {
      {"primary", {}, true},
      {"primary with an empty tag set", {read_mode::primary, {{}}, {}}, true},
      {"primary with tags", {read_mode::primary, {{{"dc", "ny"}}}, {}}, false},
      {"primary with max staleness", {read_mode::primary, {}, seconds(120)}, false},
      {"nearest, 90 s", {read_mode::nearest, {}, seconds(90)}, true},
      {"nearest, 89 s", {read_mode::nearest, {}, seconds(89)}, false},
      {"nearest, 0 s", {read_mode::nearest, {}, seconds(0)}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = c.p.validate(heartbeat);
    if (c.valid) {
      EXPECT_TRUE(r.has_value());
    } else {
      EXPECT_THAT(r, oid::testing::HasError(oid::mongo::errc::invalid_read_preference));
    }
  }
  // 100 s is enough with 10 s heartbeats but not with 95 s ones (95 + 10 > 100).
  const read_preference p{read_mode::secondary, {}, seconds(100)};
  EXPECT_TRUE(p.validate(heartbeat).has_value());
  EXPECT_THAT(p.validate(std::chrono::milliseconds(95000)),
              oid::testing::HasError(oid::mongo::errc::invalid_read_preference));
}

TEST(ReadPreferenceTest, CommandFieldFollowsTheServerType) {
  using std::chrono::seconds;
  const read_preference primary{};
  const read_preference tagged{
      read_mode::secondary, {{{"dc", "ny"}, {"rack", "1"}}, {}}, seconds(120)};
  const auto json = [](const std::optional<oid::bson::document>& d) {
    return d ? oid::bson::to_json(d->view(), oid::bson::json_mode::relaxed) : "none";
  };
  // Primary: nothing to a mongos or a replica set member, primaryPreferred to a direct server.
  EXPECT_EQ(json(primary.to_command_field(topology_type::sharded, server_type::mongos)), "none");
  EXPECT_EQ(json(primary.to_command_field(topology_type::replica_set_with_primary,
                                          server_type::rs_primary)),
            "none");
  EXPECT_EQ(json(primary.to_command_field(topology_type::single, server_type::rs_secondary)),
            R"({"mode":"primaryPreferred"})");
  EXPECT_EQ(json(primary.to_command_field(topology_type::single, server_type::mongos)), "none");
  // "Topology type: Single": a Standalone gets no read preference, whatever the mode.
  EXPECT_EQ(json(primary.to_command_field(topology_type::single, server_type::standalone)), "none");
  EXPECT_EQ(json(tagged.to_command_field(topology_type::single, server_type::standalone)), "none");
  EXPECT_EQ(json(tagged.to_command_field(topology_type::single, server_type::rs_secondary)),
            R"({"mode":"secondary","tags":[{"dc":"ny","rack":"1"},{}],"maxStalenessSeconds":120})");
  EXPECT_EQ(json(tagged.to_command_field(topology_type::sharded, server_type::mongos)),
            R"({"mode":"secondary","tags":[{"dc":"ny","rack":"1"},{}],"maxStalenessSeconds":120})");
  EXPECT_EQ(json(read_preference{read_mode::nearest, {}, {}}.to_command_field(
                topology_type::load_balanced, server_type::load_balancer)),
            R"({"mode":"nearest"})");
}

TEST(ServerSelectionTest, IncompatibleTopologyIsAnError) {
  topology_description t;
  t.type = topology_type::single;
  t.compatible = false;
  EXPECT_THAT(select_servers(t, {}, operation_kind::read),
              oid::testing::HasError(oid::mongo::errc::unsupported));
}

TEST(ServerSelectionTest, ChooseServerPrefersFewerOperations) {
  server_description a, b;
  a.address = "a:27017";
  b.address = "b:27017";
  const std::vector<const server_description*> window{&a, &b};
  const std::vector<std::uint64_t> counts{5, 1};
  std::mt19937_64 random(1);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(choose_server(window, counts, random), &b);
  EXPECT_EQ(choose_server({}, {}, random), nullptr);
}

}  // namespace
