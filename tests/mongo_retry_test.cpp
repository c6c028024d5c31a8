// Implicit sessions, retryable writes and retryable reads over real sockets: a scripted
// three-member replica set (tests/support/script_server.hpp) that keeps one replicated store of
// documents and, as a real server does, records each retryable write's (lsid, txnNumber) and
// answers a repeated one with the first answer instead of applying it again. Faults make the
// primary step down in the middle of a workload: refused before the write, or after it was applied
// with the connection reset before the answer. Then the same against FerretDB (MONGODB_URI),
// which has sessions but is a standalone: lsid, no txnNumber, endSessions refused quietly.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "support/ci.hpp"
#include "support/hex.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::test;
using namespace std::chrono_literals;

// One command as the set saw it.
struct seen_command {
  int member = -1;
  std::string name;
  std::string lsid;  // the session id's bytes as hex ("" without lsid)
  std::optional<std::int64_t> txn_number;
  bool replayed = false;  // answered from the transaction table, not applied
};

// What the next command named `command` meets (on whichever member gets it).
struct fault {
  // apply_with_write_concern_error: applied, and answered ok with a writeConcernError of `code`
  // and `labels`.
  enum class action { refuse, reset, apply_then_reset, apply_with_write_concern_error };
  std::string command;
  action what = action::refuse;
  std::int32_t code = 10107;  // for refuse and the write concern error: NotWritablePrimary
  std::vector<std::string> labels;
  int step_down_to = -1;  // the primary steps down to this member (-1: it stays primary)
};

// The raw bytes of a document's `_id` value, as the store's key.
std::string id_key(document_view d) {
  const auto id = d.find("_id");
  if (!id) return "";
  builder b;
  b.append_element(*id);
  const document k = std::move(b).extract();
  const auto v = k.view();
  return std::string(reinterpret_cast<const char*>(v.data()), v.size());
}

// `labels` as a reply's errorLabels (nothing when there are none).
void append_labels(builder& b, const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  b.open_array("errorLabels");
  for (std::size_t l = 0; l < labels.size(); ++l) b.append_string(std::to_string(l), labels[l]);
  b.close();
}

class retry_set {
 public:
  // `max_wire_version` 8: a server before 4.4, which does not label its retryable errors.
  explicit retry_set(std::int32_t max_wire_version = 17) : wire_(max_wire_version) {
    for (std::size_t i = 0; i < 3; ++i) {
      servers_[i] = std::make_unique<script_server>(
          [this, i](peer& p, int) { serve(p, static_cast<int>(i)); });
      addresses_[i] = servers_[i]->address();
    }
  }
  std::string uri(std::string_view options = "") const {
    return "mongodb://" + addresses_[0] +
           "/?replicaSet=rs0&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=5000" +
           std::string(options);
  }
  void add_fault(fault f) {
    std::lock_guard lock(mutex_);
    faults_.push_back(std::move(f));
  }
  std::vector<seen_command> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  // Commands named `name`, in order.
  std::vector<seen_command> seen(std::string_view name) {
    std::vector<seen_command> out;
    for (auto& s : seen()) {
      if (s.name == name) out.push_back(s);
    }
    return out;
  }
  void forget() {
    std::lock_guard lock(mutex_);
    seen_.clear();
  }
  int primary() {
    std::lock_guard lock(mutex_);
    return primary_;
  }
  // The store: documents by _id, with the number of updates each received.
  std::size_t documents() {
    std::lock_guard lock(mutex_);
    return store_.size();
  }
  int updates_of(const std::string& key) {
    std::lock_guard lock(mutex_);
    const auto d = store_.find(key);
    return d == store_.end() ? -1 : d->second;
  }
  // Inserts refused because the _id was there already: what a retry without txnNumber makes.
  int duplicates() {
    std::lock_guard lock(mutex_);
    return duplicates_;
  }
  int inserted() {
    std::lock_guard lock(mutex_);
    return inserted_;
  }
  // Session ids named by endSessions.
  std::vector<std::string> ended() {
    std::lock_guard lock(mutex_);
    return ended_;
  }
  void add_document(const std::string& key) {
    std::lock_guard lock(mutex_);
    store_.emplace(key, 0);
  }

 private:
  document hello(int i) {
    std::lock_guard lock(mutex_);
    builder b;
    b.append_bool("isWritablePrimary", primary_ == i).append_bool("secondary", primary_ != i);
    b.append_string("setName", "rs0").append_int32("setVersion", 1);
    b.open_array("hosts");
    for (std::size_t m = 0; m < 3; ++m) b.append_string(std::to_string(m), addresses_[m]);
    b.close();
    b.append_string("primary", addresses_[static_cast<std::size_t>(primary_)]);
    b.append_string("me", addresses_[static_cast<std::size_t>(i)]);
    b.append_int32("logicalSessionTimeoutMinutes", 30);
    b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", wire_);
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  static std::string lsid_of(document_view body) {
    const auto l = body.find("lsid");
    if (!l) return "";
    auto d = l->get_document();
    if (!d) return "?";
    const auto id = d->find("id");
    if (!id) return "?";
    auto bin = id->get_binary();
    if (!bin || bin->subtype != oid::bson::binary_subtype::uuid) return "?";
    return oid::testing::to_hex(bin->bytes);
  }

  static std::vector<document_view> statements(const oid::mongo::op_msg& m, std::string_view key) {
    std::vector<document_view> out;
    for (const auto& s : m.sequences) {
      if (s.identifier == key) out.insert(out.end(), s.documents.begin(), s.documents.end());
    }
    if (const auto arr = m.body.find(key)) {
      if (auto a = arr->get_array()) {
        for (const auto& e : *a) {
          if (auto d = e.get_document()) out.push_back(*d);
        }
      }
    }
    return out;
  }

  // Applies a write (under mutex_) and returns its reply.
  document apply(const std::string& name, const oid::mongo::op_msg& m) {
    builder b;
    std::int32_t n = 0;
    if (name == "insert") {
      std::int32_t index = 0;
      std::vector<std::int32_t> refused;
      for (const auto& d : statements(m, "documents")) {
        if (store_.emplace(id_key(d), 0).second) {
          ++n;
          ++inserted_;
        } else {
          ++duplicates_;
          refused.push_back(index);
        }
        ++index;
      }
      b.append_int32("n", n);
      if (!refused.empty()) {
        b.open_array("writeErrors");
        for (std::size_t i = 0; i < refused.size(); ++i) {
          b.open_document(std::to_string(i)).append_int32("index", refused[i]);
          b.append_int32("code", 11000).append_string("errmsg", "E11000 duplicate key").close();
        }
        b.close();
      }
    } else if (name == "update" || name == "findAndModify") {
      const auto list = name == "update" ? statements(m, "updates") : std::vector<document_view>{};
      auto q = m.body.find("query");
      std::vector<document_view> filters;
      for (const auto& u : list) {
        if (auto f = u.find("q")) filters.push_back(f->get_document().value());
      }
      if (q) filters.push_back(q->get_document().value());
      for (const auto& f : filters) {
        const auto d = store_.find(id_key(f));
        if (d != store_.end()) {
          ++d->second;
          ++n;
        }
      }
      if (name == "update") {
        b.append_int32("n", n).append_int32("nModified", n);
      } else {
        b.open_document("value").append_int32("updates", n).close();
      }
    } else if (name == "delete") {
      for (const auto& d : statements(m, "deletes")) {
        if (auto f = d.find("q"); f && store_.erase(id_key(f->get_document().value())) > 0) ++n;
      }
      b.append_int32("n", n);
    }
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  void serve(peer& p, int i) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        const document h = hello(i);
        p.reply(*m, h.view());
        continue;
      }
      const bool write =
          name == "insert" || name == "update" || name == "delete" || name == "findAndModify";
      std::optional<document> out;
      bool reset = false;
      {
        std::lock_guard lock(mutex_);
        seen_command s{i, name, lsid_of(m->body), std::nullopt};
        if (const auto t = m->body.find("txnNumber")) s.txn_number = t->get_int64().value_or(-1);
        std::optional<fault> f;
        if (!faults_.empty() && faults_.front().command == name) {
          f = faults_.front();
          faults_.erase(faults_.begin());
        }
        if (f && f->step_down_to >= 0) primary_ = f->step_down_to;
        const auto txn_key = s.lsid + "/" + std::to_string(s.txn_number.value_or(-1));
        if (f && f->what == fault::action::reset) {
          reset = true;
        } else if (f && f->what == fault::action::refuse) {
          builder b;
          b.append_double("ok", 0.0).append_string("errmsg", "scripted refusal");
          b.append_int32("code", f->code);
          append_labels(b, f->labels);
          out = std::move(b).extract();
        } else if (write && primary_ != i &&
                   !(f && (f->what == fault::action::apply_then_reset ||
                           f->what == fault::action::apply_with_write_concern_error))) {
          builder b;
          b.append_double("ok", 0.0).append_string("errmsg", "not primary");
          b.append_int32("code", 10107).append_string("codeName", "NotWritablePrimary");
          if (wire_ >= 9)
            b.open_array("errorLabels").append_string("0", "RetryableWriteError").close();
          out = std::move(b).extract();
        } else if (write && s.txn_number && answered_.count(txn_key) != 0) {
          s.replayed = true;  // a retry of a write already applied: the first answer again
          out = answered_.at(txn_key);
        } else if (write) {
          out = apply(name, *m);
          if (s.txn_number) answered_.emplace(txn_key, *out);
          reset = f && f->what == fault::action::apply_then_reset;
          if (f && f->what == fault::action::apply_with_write_concern_error) {
            builder b;
            b.append_elements(out->view());
            b.open_document("writeConcernError").append_int32("code", f->code);
            b.append_string("errmsg", "scripted write concern error").close();
            append_labels(b, f->labels);
            out = std::move(b).extract();
          }
        } else {
          out = read(name, *m);
        }
        seen_.push_back(std::move(s));
      }
      if (reset) {
        p.close();
        return;
      }
      p.reply(*m, out->view());
    }
  }

  // Answers a read or another command (under mutex_).
  document read(const std::string& name, const oid::mongo::op_msg& m) {
    builder b;
    if (name == "find" || name == "getMore" || name == "aggregate" || name == "listIndexes" ||
        name == "listCollections") {
      // find: every _id in the store, batchSize at a time; getMore: the rest.
      std::vector<std::string> ids;
      if (name == "find") {
        for (const auto& [k, updates] : store_) ids.push_back(k);
        std::int64_t batch = 1'000'000;
        if (const auto bs = m.body.find("batchSize")) batch = bs->get_int32().value_or(1'000'000);
        if (static_cast<std::int64_t>(ids.size()) > batch) {
          pending_.assign(ids.begin() + batch, ids.end());
          ids.resize(static_cast<std::size_t>(batch));
        }
      } else if (name == "getMore") {
        ids = std::move(pending_);
        pending_.clear();
      }
      const bool more = name == "find" && !pending_.empty();
      b.open_document("cursor").append_int64("id", more ? 42 : 0).append_string("ns", "db.c");
      b.open_array(name == "getMore" ? "nextBatch" : "firstBatch");
      if (name == "aggregate") {
        b.open_document("0").append_int32("_id", 1);
        b.append_int32("n", static_cast<std::int32_t>(store_.size())).close();
      }
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const auto id =
            document::from_bytes(std::vector<std::uint8_t>(ids[k].begin(), ids[k].end()));
        b.append_document(std::to_string(k), id.value().view());
      }
      b.close().close();
    } else if (name == "count") {
      b.append_int32("n", static_cast<std::int32_t>(store_.size()));
    } else if (name == "distinct") {
      b.open_array("values").close();
    } else if (name == "listDatabases") {
      b.open_array("databases").close();
    } else if (name == "endSessions") {
      if (const auto arr = m.body.find("endSessions")) {
        const auto ids = arr->get_array().value();
        for (const auto& e : ids) {
          builder one;
          one.append_document("lsid", e.get_document().value());
          ended_.push_back(lsid_of(one.view()));
        }
      }
    }
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  const std::int32_t wire_;
  std::mutex mutex_;
  int primary_ = 1;
  std::vector<fault> faults_;
  std::vector<seen_command> seen_;
  std::map<std::string, int> store_;          // _id bytes -> updates received
  std::map<std::string, document> answered_;  // "lsid/txnNumber" -> the reply
  std::vector<std::string> pending_;          // the open cursor's remaining _ids
  std::vector<std::string> ended_;
  int duplicates_ = 0, inserted_ = 0;
  std::array<std::string, 3> addresses_;
  std::array<std::unique_ptr<script_server>, 3> servers_;
};

document with_id(std::int32_t id) {
  builder b;
  b.append_int32("_id", id).append_int32("x", 1);
  return std::move(b).extract();
}

document id_filter(std::int32_t id) {
  builder b;
  b.append_int32("_id", id);
  return std::move(b).extract();
}

document set_x() {
  builder b;
  b.open_document("$set").append_int32("x", 2).close();
  return std::move(b).extract();
}

std::string key_of(std::int32_t id) {
  const document f = id_filter(id);
  return id_key(f.view());
}

// Waits until the client sees a primary (the set's discovery from its one seed).
void wait_for_primary(const mongo::client& c) {
  for (int i = 0; i < 500 && !c.topology().has_primary(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(c.topology().has_primary());
}

TEST(MongoRetryTest, OperationsCarryOneSessionAndRetryableWritesATxnNumber) {
  retry_set rs;
  {
    auto c = mongo::client::create(rs.uri()).value();
    auto coll = c.collection("db", "c");
    const document d1 = with_id(1), d2 = with_id(2), f1 = id_filter(1), f2 = id_filter(2),
                   u = set_x();
    ASSERT_TRUE(coll.insert_one(d1.view()).has_value());
    ASSERT_TRUE(coll.insert_one(d2.view()).has_value());
    ASSERT_TRUE(coll.update_one(f1.view(), u.view()).has_value());
    ASSERT_TRUE(coll.update_many(f1.view(), u.view()).has_value());
    ASSERT_TRUE(coll.replace_one(f1.view(), d1.view()).has_value());
    ASSERT_TRUE(coll.find_one_and_update(f1.view(), u.view()).has_value());
    ASSERT_TRUE(coll.delete_many(f2.view()).has_value());
    ASSERT_TRUE(coll.delete_one(f1.view()).has_value());
    ASSERT_TRUE(coll.count_documents({}).has_value());
    const document d3 = with_id(3);
    mongo::insert_options unacknowledged;
    unacknowledged.write_concern = mongo::write_concern::unacknowledged();
    ASSERT_TRUE(coll.insert_one(d3.view(), unacknowledged).has_value());
    // The w:0 insert has no answer to wait for: wait for the set to see it.
    for (int i = 0; i < 500 && rs.seen("insert").size() < 3; ++i) std::this_thread::sleep_for(2ms);
    const auto seen = rs.seen();
    std::vector<std::string> got;
    for (const auto& s : seen) {
      got.push_back(s.name + (s.lsid.empty() ? "" : " lsid") +
                    (s.txn_number ? " txn " + std::to_string(*s.txn_number) : ""));
    }
    // One session (the pool hands the most recently used one back), its txnNumber counting the
    // retryable writes; multi-document writes have none, the w:0 insert not even a session.
    EXPECT_EQ(got, (std::vector<std::string>{
                       "insert lsid txn 1", "insert lsid txn 2", "update lsid txn 3", "update lsid",
                       "update lsid txn 4", "findAndModify lsid txn 5", "delete lsid",
                       "delete lsid txn 6", "aggregate lsid", "insert"}));
    std::set<std::string> ids;
    for (const auto& s : seen) {
      if (!s.lsid.empty()) ids.insert(s.lsid);
    }
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids.begin()->size(), 32u);
    EXPECT_TRUE(rs.ended().empty());
  }
  // The last copy of the client ends the pooled session.
  ASSERT_EQ(rs.seen("endSessions").size(), 1u);
  const auto ended = rs.ended();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended.front(), rs.seen("insert").front().lsid);
  EXPECT_TRUE(rs.seen("endSessions").front().lsid.empty());
}

TEST(MongoRetryTest, AWriteRefusedByASteppingDownPrimaryIsRetriedOnceOnTheNewOne) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, 2});
  const document d = with_id(7);
  auto r = coll.insert_one(d.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(inserts[0].member, 1);
  EXPECT_EQ(inserts[1].member, 2);
  EXPECT_EQ(inserts[0].lsid, inserts[1].lsid);
  EXPECT_EQ(inserts[0].txn_number, std::optional<std::int64_t>(1));
  EXPECT_EQ(inserts[1].txn_number, std::optional<std::int64_t>(1));
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(rs.inserted(), 1);
}

TEST(MongoRetryTest, AWriteAppliedBeforeTheConnectionDroppedIsAppliedExactlyOnce) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  const document d = with_id(7), f = id_filter(7), u = set_x();
  // An insert and an update, each applied by the old primary whose answer never arrives.
  rs.add_fault({"insert", fault::action::apply_then_reset, 0, {}, 2});
  ASSERT_TRUE(coll.insert_one(d.view()).has_value());
  rs.add_fault({"update", fault::action::apply_then_reset, 0, {}, 0});
  auto updated = coll.update_one(f.view(), u.view());
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  EXPECT_EQ(updated->matched, 1);  // the first answer, replayed by the new primary
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(rs.duplicates(), 0);
  EXPECT_EQ(rs.updates_of(key_of(7)), 1);
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_FALSE(inserts[0].replayed);
  EXPECT_TRUE(inserts[1].replayed);
  EXPECT_EQ(inserts[0].txn_number, inserts[1].txn_number);
  EXPECT_EQ(inserts[0].lsid, inserts[1].lsid);
  // The network error made the session dirty: the update runs in a new one.
  const auto updates = rs.seen("update");
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_NE(updates[0].lsid, inserts[0].lsid);
  EXPECT_EQ(updates[0].member, 2);
  EXPECT_EQ(updates[1].member, 0);
  EXPECT_TRUE(updates[1].replayed);
}

TEST(MongoRetryTest, EachBulkWriteBatchWithoutMultiStatementsIsRetriedOnItsOwn) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  const document d1 = with_id(1), d2 = with_id(2), f1 = id_filter(1), f2 = id_filter(2),
                 u = set_x();
  const std::vector<mongo::write_model> models = {
      mongo::insert_one_model{d1.view()}, mongo::insert_one_model{d2.view()},
      mongo::update_many_model{f1.view(), u.view()}, mongo::delete_one_model{f2.view()}};
  // The delete batch is applied by a primary that steps down and drops the connection.
  rs.add_fault({"delete", fault::action::apply_then_reset, 0, {}, 2});
  auto r = coll.bulk_write(models);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 2);
  EXPECT_EQ(r->matched, 1);
  EXPECT_EQ(r->deleted, 1);
  std::vector<std::string> got;
  for (const auto& s : rs.seen()) {
    if (s.name == "endSessions") continue;
    got.push_back(std::to_string(s.member) + " " + s.name +
                  (s.txn_number ? " txn " + std::to_string(*s.txn_number) : "") +
                  (s.replayed ? " replayed" : ""));
  }
  // One session for the bulk write: a txnNumber per batch, none for the multi update.
  EXPECT_EQ(got, (std::vector<std::string>{"1 insert txn 1", "1 update", "1 delete txn 2",
                                           "2 delete txn 2 replayed"}));
  std::set<std::string> ids;
  for (const auto& s : rs.seen()) ids.insert(s.lsid);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(rs.updates_of(key_of(1)), 1);
}

TEST(MongoRetryTest, ABulkWriteBatchWithARetryableWriteConcernErrorIsRetriedOnce) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  const document d1 = with_id(1), d2 = with_id(2);
  const std::vector<mongo::write_model> models = {mongo::insert_one_model{d1.view()},
                                                  mongo::insert_one_model{d2.view()}};
  // The primary applies the batch, answers with a ShutdownInProgress write concern error and
  // steps down: the retry, on the new primary, is answered from its transaction table.
  rs.add_fault(
      {"insert", fault::action::apply_with_write_concern_error, 91, {"RetryableWriteError"}, 2});
  auto r = coll.bulk_write(models);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 2);
  std::vector<std::string> got;
  for (const auto& s : rs.seen("insert")) {
    got.push_back(std::to_string(s.member) + " txn " + std::to_string(s.txn_number.value_or(-1)) +
                  (s.replayed ? " replayed" : ""));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"1 txn 1", "2 txn 1 replayed"}));
  EXPECT_EQ(rs.documents(), 2u);

  // A write concern error that is not retryable (64, WriteConcernFailed) is the bulk write's
  // failure, with what was written.
  rs.add_fault({"insert", fault::action::apply_with_write_concern_error, 64, {}, -1});
  const document d3 = with_id(3);
  const std::vector<mongo::write_model> one = {mongo::insert_one_model{d3.view()}};
  auto refused = coll.bulk_write(one);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, oid::mongo::errc::write_concern_failed);
  ASSERT_TRUE(refused.error().write_concern_error.has_value());
  EXPECT_EQ(refused.error().write_concern_error->code, 64);
  EXPECT_EQ(refused.error().partial_result.inserted, 1);
  EXPECT_EQ(rs.seen("insert").size(), 3u);
}

TEST(MongoRetryTest, ANonRetryableErrorIsNotRetried) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  rs.add_fault({"insert", fault::action::refuse, 2, {}, -1});  // BadValue
  const document d = with_id(1);
  auto r = coll.insert_one(d.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 2);
  EXPECT_EQ(rs.seen("insert").size(), 1u);
  // A duplicate key is a write error, about the document: not retried either.
  ASSERT_TRUE(coll.insert_one(d.view()).has_value());
  auto dup = coll.insert_one(d.view());
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(rs.seen("insert").size(), 3u);
  EXPECT_EQ(rs.documents(), 1u);
}

TEST(MongoRetryTest, ARetryThatFailsTooReturnsItsErrorOrTheOriginalForNoWritesPerformed) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  const document d = with_id(1);
  // InterruptedDueToReplStateChange, then NotWritablePrimary: the retry's error.
  rs.add_fault({"insert", fault::action::refuse, 11602, {"RetryableWriteError"}, -1});
  rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, -1});
  auto r = coll.insert_one(d.view());
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 10107);
  EXPECT_EQ(rs.seen("insert").size(), 2u);  // once retried, never twice
  // The same with NoWritesPerformed on the retry's error: the original error.
  rs.forget();
  rs.add_fault({"insert", fault::action::refuse, 11602, {"RetryableWriteError"}, -1});
  rs.add_fault(
      {"insert", fault::action::refuse, 10107, {"RetryableWriteError", "NoWritesPerformed"}, -1});
  auto original = coll.insert_one(d.view());
  ASSERT_FALSE(original.has_value());
  ASSERT_TRUE(original.error().server.has_value());
  EXPECT_EQ(original.error().server->code, 11602);
  EXPECT_EQ(rs.seen("insert").size(), 2u);
  EXPECT_EQ(rs.documents(), 0u);
}

TEST(MongoRetryTest, AServerBefore44HasItsRetryableCodesLabelledByTheClient) {
  retry_set rs(8);
  auto c = mongo::client::create(rs.uri()).value();
  wait_for_primary(c);
  rs.add_fault({"insert", fault::action::refuse, 189, {}, 0});  // PrimarySteppedDown, no label
  const document d = with_id(1);
  auto r = c.collection("db", "c").insert_one(d.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(inserts[1].member, 0);
  EXPECT_EQ(rs.documents(), 1u);
}

TEST(MongoRetryTest, RetryWritesFalseAndRetryReadsFalseRetryNothing) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri("&retryWrites=false&retryReads=false")).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, 2});
  const document d = with_id(1);
  auto w = coll.insert_one(d.view());
  ASSERT_FALSE(w.has_value());
  ASSERT_TRUE(w.error().server.has_value());
  EXPECT_EQ(w.error().server->code, 10107);
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 1u);
  EXPECT_FALSE(inserts[0].txn_number.has_value());
  EXPECT_FALSE(inserts[0].lsid.empty());  // sessions still
  rs.add_fault({"find", fault::action::reset, 0, {}, -1});
  auto r = coll.find();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::connection_closed);
  EXPECT_EQ(rs.seen("find").size(), 1u);
}

TEST(MongoRetryTest, ReadsAreRetriedOnceAndGetMoreIsNot) {
  retry_set rs;
  for (std::int32_t i = 0; i < 5; ++i) rs.add_document(key_of(i));
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  rs.add_fault({"find", fault::action::reset, 0, {}, -1});
  mongo::find_options two_at_a_time;
  two_at_a_time.batch_size = 2;
  auto cur = coll.find({}, two_at_a_time);
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_EQ(rs.seen("find").size(), 2u);
  int n = 0;
  while (cur->next().value()) ++n;
  EXPECT_EQ(n, 5);
  // The retry runs in the operation's session, and getMore follows the find in it.
  const auto finds = rs.seen("find");
  const auto more = rs.seen("getMore");
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(finds[0].lsid, finds[1].lsid);
  EXPECT_EQ(more[0].lsid, finds[1].lsid);

  // A getMore that fails is not retried: the cursor is lost with its connection.
  rs.add_fault({"getMore", fault::action::reset, 0, {}, -1});
  auto lost = coll.find({}, two_at_a_time);
  ASSERT_TRUE(lost.has_value()) << lost.error().message;
  ASSERT_TRUE(lost->next().value());
  ASSERT_TRUE(lost->next().value());
  auto failed = lost->next();
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, oid::mongo::errc::connection_closed);
  EXPECT_EQ(rs.seen("getMore").size(), 2u);

  // Each retryable read, refused once by a member that is no longer primary.
  struct read_case {
    const char* command;
    std::function<bool()> run;
  };
  const read_case reads[] = {
      {"aggregate", [&] { return coll.count_documents({}).has_value(); }},
      {"distinct", [&] { return coll.distinct("x").has_value(); }},
      {"count", [&] { return coll.estimated_document_count().has_value(); }},
      {"listDatabases", [&] { return c.list_databases().has_value(); }},
      {"listCollections", [&] { return c.list_collections("db").has_value(); }},
      {"listIndexes", [&] { return coll.list_indexes().has_value(); }},
  };
  for (const auto& rc : reads) {
    SCOPED_TRACE(rc.command);
    rs.add_fault({rc.command, fault::action::refuse, 10107, {}, -1});
    EXPECT_TRUE(rc.run());
    EXPECT_EQ(rs.seen(rc.command).size(), 2u);
  }
}

TEST(MongoRetryTest, TenThousandWritesAcrossTwoStepdownsLoseNoneAndDuplicateNone) {
  retry_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  constexpr std::int32_t total = 10'000;
  int failures = 0;
  for (std::int32_t i = 0; i < total; ++i) {
    // At 3,000 the primary refuses and steps down to member 2; at 7,000 member 2 applies the
    // write, steps down to member 0 and drops the connection before answering.
    if (i == 3'000) {
      rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, 2});
    }
    if (i == 7'000) rs.add_fault({"insert", fault::action::apply_then_reset, 0, {}, 0});
    const document d = with_id(i);
    if (auto r = coll.insert_one(d.view()); !r) {
      ADD_FAILURE() << "write " << i << ": " << r.error().message;
      if (++failures > 5) break;
    }
  }
  EXPECT_EQ(rs.documents(), static_cast<std::size_t>(total));  // distinct _ids in the store
  EXPECT_EQ(rs.inserted(), total);                             // each applied once
  EXPECT_EQ(rs.duplicates(), 0);
  EXPECT_EQ(rs.primary(), 0);
  const auto inserts = rs.seen("insert");
  EXPECT_EQ(inserts.size(), static_cast<std::size_t>(total + 2));  // two retries
  std::size_t replayed = 0;
  for (const auto& s : inserts) {
    replayed += s.replayed ? 1 : 0;
    EXPECT_TRUE(s.txn_number.has_value());
  }
  EXPECT_EQ(replayed, 1u);
  auto n = coll.count_documents({});
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, total);
}

// FerretDB reports logicalSessionTimeoutMinutes and accepts lsid, but is a standalone (no
// retryable writes: no txnNumber) and has no endSessions (CommandNotFound, ignored).
TEST(MongoRetryServerTest, AStandaloneGetsSessionsButNoTxnNumberAndRefusesEndSessionsQuietly) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri);
  std::mutex m;
  std::vector<document> started;
  std::vector<std::string> events;
  mongo::client_options options;
  options.on_command = [&](const mongo::command_event& e) {
    std::lock_guard lock(m);
    if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
      started.push_back(s->command);
      events.push_back("started " + s->command_name);
    } else if (const auto* ok = std::get_if<mongo::command_succeeded_event>(&e)) {
      events.push_back("succeeded " + ok->command_name);
    } else {
      events.push_back("failed " + std::get<mongo::command_failed_event>(e).command_name);
    }
  };
  const std::string db = "oid_retry_" + oid::generate().to_hex().substr(16);
  {
    auto c = mongo::client::create(uri, options).value();
    auto coll = c.collection(db, "c");
    const document d = with_id(1), f = id_filter(1), u = set_x();
    ASSERT_TRUE(coll.insert_one(d.view()).has_value());
    ASSERT_TRUE(coll.update_one(f.view(), u.view()).has_value());
    auto cur = coll.find();
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
    ASSERT_TRUE(cur->next().value());
    auto n = coll.count_documents({});
    ASSERT_TRUE(n.has_value()) << n.error().message;
    EXPECT_EQ(*n, 1);
    builder drop;
    drop.append_int32("dropDatabase", 1);
    ASSERT_TRUE(c.run_command(db, drop.view()).has_value());
    std::lock_guard lock(m);
    ASSERT_GE(started.size(), 5u);
    for (const auto& cmd : started) {
      SCOPED_TRACE(oid::bson::to_json(cmd.view()));
      EXPECT_TRUE(cmd.view().contains("lsid"));
      EXPECT_FALSE(cmd.view().contains("txnNumber"));
    }
  }
  // Closing sends endSessions; FerretDB refuses it, and that is all that happens.
  std::lock_guard lock(m);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2], "started endSessions");
  const std::string& last = events.back();
  EXPECT_TRUE(last == "failed endSessions" || last == "succeeded endSessions") << last;
}

}  // namespace
