// The read and write concern specification's own tests (read-write-concern/connection-string and
// document, as scripts/spec-data.sh unpacks them): read and write concerns from a connection
// string, and the documents a client sends for them. The suite's operation and
// write-concern-errors files run through the unified runner (tests/unified).
#include <gtest/gtest.h>

#include <fstream>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "support/ci.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;

document read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  oid::bson::json_read_options o;
  o.max_depth = 50;
  auto d = oid::bson::from_json(ss.str(), o);
  if (!d) ADD_FAILURE() << p << ": " << d.error().message();
  return d ? std::move(*d) : document();
}

std::string json(document_view d) { return oid::bson::to_json(d); }

std::optional<bool> flag(document_view d, std::string_view key) {
  const auto e = d.find(key);
  if (!e) return std::nullopt;
  const auto b = e->get_bool();
  return b ? std::optional<bool>(*b) : std::nullopt;
}

std::optional<std::int64_t> integer(const oid::bson::element& e) {
  if (const auto i = e.get_int32()) return *i;
  if (const auto l = e.get_int64()) return *l;
  if (const auto d = e.get_double()) return static_cast<std::int64_t>(*d);
  return std::nullopt;
}

// The writeConcern document a client sends for `w` (what write_concern::append_to writes).
std::string sent(const mongo::write_concern& w) {
  builder b;
  w.append_to(b);
  const document d = std::move(b).extract();
  const auto wc = d.view().find("writeConcern");
  return wc ? json(wc->get_document().value()) : "{}";
}

// The readConcern document for `r`: {level} unless it is the server's default.
std::string sent(const mongo::read_concern& r) {
  if (r.is_default()) return "{}";
  builder b;
  b.append_string("level", r.level);
  const document d = std::move(b).extract();
  return json(d.view());
}

// {w, wtimeout, j} as the test files write the document the client sends: the same fields, the
// numbers as int32, in the order append_to writes them.
std::string expected_document(document_view want) {
  builder b;
  if (const auto w = want.find("w")) {
    if (const auto n = integer(*w)) {
      b.append_int32("w", static_cast<std::int32_t>(*n));
    } else {
      b.append_element("w", *w);
    }
  }
  if (const auto j = flag(want, "j")) b.append_bool("j", *j);
  if (const auto t = want.find("wtimeout")) b.append_int64("wtimeout", integer(*t).value_or(-1));
  const document d = std::move(b).extract();
  return json(d.view());
}

TEST(MongoConcernSpecTest, ConnectionStrings) {
  const auto dir = oid::testing::spec_data_dir("read-write-concern") / "connection-string";
  const auto files = oid::testing::json_files(dir);
  if (files.empty()) OID_SKIP_OR_FAIL_IN_CI("no read-write-concern suite in " << dir);
  int cases = 0;
  for (const auto& file : files) {
    const document suite = read_file(file);
    const auto tests = suite.view().find("tests")->get_array().value();
    for (const auto& t : tests) {
      const auto test = t.get_document().value();
      const std::string description(test.find("description")->get_string().value());
      SCOPED_TRACE(file.filename().string() + ": " + description);
      const std::string text(test.find("uri")->get_string().value());
      ++cases;
      const auto strict = mongo::uri::parse(text, mongo::uri_mode::strict);
      if (!flag(test, "valid").value_or(true)) {
        EXPECT_FALSE(strict) << text;
        continue;
      }
      const auto lenient = mongo::uri::parse(text, mongo::uri_mode::lenient);
      ASSERT_TRUE(lenient) << lenient.error().message;
      EXPECT_EQ(!lenient->warnings().empty(), flag(test, "warning").value_or(false)) << text;
      if (const auto rc = test.find("readConcern")) {
        const auto want = rc->get_document().value();
        const mongo::read_concern got{lenient->read_concern_level().value_or("")};
        EXPECT_EQ(sent(got), json(want));
      }
      if (const auto wc = test.find("writeConcern")) {
        const auto want = wc->get_document().value();
        mongo::write_concern got;
        got.w = lenient->w_number();
        got.w_tag = lenient->w_tag();
        got.journal = lenient->journal();
        got.timeout = lenient->w_timeout();
        // The file names the options as the connection string does (wtimeoutMS, journal).
        builder as_sent;
        for (const auto& e : want) {
          const auto k = e.key();
          as_sent.append_element(k == "wtimeoutMS" ? "wtimeout" : k == "journal" ? "j" : k, e);
        }
        const document w = std::move(as_sent).extract();
        EXPECT_EQ(sent(got), expected_document(w.view()));
      }
    }
  }
  EXPECT_GE(cases, 18);
}

TEST(MongoConcernSpecTest, Documents) {
  const auto dir = oid::testing::spec_data_dir("read-write-concern") / "document";
  const auto files = oid::testing::json_files(dir);
  if (files.empty()) OID_SKIP_OR_FAIL_IN_CI("no read-write-concern suite in " << dir);
  int cases = 0;
  for (const auto& file : files) {
    const document suite = read_file(file);
    const auto tests = suite.view().find("tests")->get_array().value();
    for (const auto& t : tests) {
      const auto test = t.get_document().value();
      const std::string description(test.find("description")->get_string().value());
      SCOPED_TRACE(file.filename().string() + ": " + description);
      ++cases;
      const bool valid = flag(test, "valid").value_or(true);
      if (const auto rc = test.find("readConcern")) {
        const auto given = rc->get_document().value();
        mongo::read_concern r;
        if (const auto l = given.find("level")) r.level = std::string(l->get_string().value());
        ASSERT_TRUE(valid);
        EXPECT_EQ(sent(r), json(test.find("readConcernDocument")->get_document().value()));
        EXPECT_EQ(r.is_default(), flag(test, "isServerDefault").value());
        continue;
      }
      // A write concern goes through the checks a connection string's options get
      // (uri::from), which refuse what the specification calls invalid.
      const auto given = test.find("writeConcern")->get_document().value();
      mongo::client_settings s;
      s.hosts = {{mongo::host::kind::hostname, "localhost", std::nullopt}};
      for (const auto& e : given) {
        const auto k = e.key();
        if (k == "w") {
          if (const auto n = integer(e)) {
            s.w_number = static_cast<std::int32_t>(*n);
          } else {
            s.w_tag = std::string(e.get_string().value());
          }
        } else if (k == "journal") {
          s.journal = e.get_bool().value();
        } else if (k == "wtimeoutMS") {
          s.w_timeout = std::chrono::milliseconds(integer(e).value());
        } else {
          ADD_FAILURE() << "unknown write concern field " << k;
        }
      }
      const auto u = mongo::uri::from(s);
      EXPECT_EQ(u.has_value(), valid) << (u ? "accepted" : u.error().message);
      if (!u || !valid) continue;
      mongo::write_concern w;
      w.w = u->w_number();
      w.w_tag = u->w_tag();
      w.journal = u->journal();
      w.timeout = u->w_timeout();
      EXPECT_EQ(sent(w),
                expected_document(test.find("writeConcernDocument")->get_document().value()));
      EXPECT_EQ(w.is_default(), flag(test, "isServerDefault").value());
      EXPECT_EQ(w.is_acknowledged(), flag(test, "isAcknowledged").value());
    }
  }
  EXPECT_GE(cases, 20);
}

}  // namespace
