// One scripted three-member replica set "rs0" over real sockets (script_server), for the tests
// of topology, server selection, retries and transactions. Members answer hello with their role and
// keep one replicated store of documents by _id: inserts, updates, deletes and findAndModify apply
// to it, find and getMore read it back, and, as a real server does, a retryable write's reply is
// kept under its (lsid, txnNumber) and a repeated one gets the first answer instead of being
// applied again. Every command is recorded (member, name, lsid, txnNumber, read preference). Faults
// make the next command of a name fail: refused, reset, applied then reset, or applied with a
// writeConcernError, each optionally handing the primary role to another member.
// Transactions (commands with `autocommit: false`) work on a copy of the store made by the
// command with `startTransaction: true`: their reads and writes see the copy, commitTransaction
// makes it the store (once: a commit repeated is answered ok without applying anything again),
// abortTransaction drops it; a command of a transaction the set does not know (never started,
// aborted, or superseded by a higher txnNumber) is refused with NoSuchTransaction (251) and the
// TransientTransactionError label, as a server does.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/hex.hpp"
#include "support/script_server.hpp"

namespace oid::testing {

// One command as the set saw it.
struct seen_command {
  int member = -1;
  std::string name;
  std::string lsid;  // the session id's bytes as hex ("" without lsid)
  std::optional<std::int64_t> txn_number;
  bool replayed = false;              // answered from the transaction table, not applied
  std::string read_preference = "-";  // $readPreference's mode ("-" without one)
  bson::document body;                // the command as sent
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
inline std::string id_key(bson::document_view d) {
  const auto id = d.find("_id");
  if (!id) return "";
  bson::builder b;
  b.append_element(*id);
  const bson::document k = std::move(b).extract();
  const auto v = k.view();
  return std::string(reinterpret_cast<const char*>(v.data()), v.size());
}

// `labels` as a reply's errorLabels (nothing when there are none).
inline void append_labels(bson::builder& b, const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  b.open_array("errorLabels");
  for (std::size_t l = 0; l < labels.size(); ++l) b.append_string(std::to_string(l), labels[l]);
  b.close();
}

// Options of a script_replica_set.
struct replica_set_options {
  // 8: a server before 4.4, which does not label its retryable errors.
  std::int32_t max_wire_version = 17;
  // hello reports logicalSessionTimeoutMinutes: the client sends lsid, txnNumber (retryable
  // writes) and endSessions. Without, it does none of that and does not retry writes.
  bool sessions = true;
  // A write that reaches a member which is not primary is refused with NotWritablePrimary, as a
  // real member does. Without, every member applies it (a test can see that the client did not
  // look for the primary again).
  bool writes_only_on_primary = true;
  // Every reply carries `operationTime` and `$clusterTime`: a logical clock that ticks once per
  // command (Timestamp(1000, n) for the n-th).
  bool cluster_time = false;
  // The replies to a transaction's commands carry recoveryToken {member: <i>, txn: <number>}, as
  // a mongos's do.
  bool recovery_tokens = false;
};

class script_replica_set {
 public:
  explicit script_replica_set(replica_set_options options = {})
      : wire_(options.max_wire_version), options_(options) {
    for (std::size_t i = 0; i < 3; ++i) {
      servers_[i] = std::make_unique<script_server>(
          [this, i](peer& p, int) { serve(p, static_cast<int>(i)); });
      addresses_[i] = servers_[i]->address();
    }
  }
  const std::string& address(int i) const { return addresses_[static_cast<std::size_t>(i)]; }
  // A connection string with member `seed` as its only host, and `options` ("&w=1", ...) added.
  std::string uri(std::string_view options = "", int seed = 0) const {
    return "mongodb://" + address(seed) +
           "/?replicaSet=rs0&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=5000" +
           std::string(options);
  }
  // Member `i` becomes the primary (-1: none, every member a secondary).
  void set_primary(int i) {
    std::lock_guard lock(mutex_);
    primary_ = i;
  }
  // Member `i` stops answering: it closes every connection at its next message, hello included.
  void silence(int i) {
    std::lock_guard lock(mutex_);
    silenced_[static_cast<std::size_t>(i)] = true;
  }
  // Member `i` answers its next `n` monitor checks (a hello on a connection that has already
  // answered one, so not a handshake) with ok: 0, code 91 (ShutdownInProgress); with
  // `handshakes`, the handshakes of new connections count among the `n` too once one check was
  // refused.
  void refuse_checks(int i, int n, bool handshakes = false) {
    std::lock_guard lock(mutex_);
    refused_checks_[static_cast<std::size_t>(i)] = n;
    refuse_handshakes_[static_cast<std::size_t>(i)] = handshakes;
    check_refused_[static_cast<std::size_t>(i)] = false;
  }
  // The primary's next insert is refused with `code` (0: the connection is reset instead); with
  // `as_write_concern_error`, it is applied and answered with a writeConcernError of `code`. The
  // primary role goes to `new_primary` either way.
  void step_down_on_next_write(int new_primary, std::int32_t code = 10107,
                               bool as_write_concern_error = false) {
    fault f;
    f.command = "insert";
    f.what = code == 0                ? fault::action::reset
             : as_write_concern_error ? fault::action::apply_with_write_concern_error
                                      : fault::action::refuse;
    f.code = code;
    f.step_down_to = new_primary;
    add_fault(std::move(f));
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
  // "member command mode" for each command seen, in order.
  std::vector<std::string> seen_lines() {
    std::vector<std::string> out;
    for (const auto& s : seen()) {
      out.push_back(std::to_string(s.member) + " " + s.name + " " + s.read_preference);
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
  // Transactions committed (each once, whatever the number of commitTransaction commands).
  int commits() {
    std::lock_guard lock(mutex_);
    return commits_;
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
  bson::document hello(int i) {
    std::lock_guard lock(mutex_);
    bson::builder b;
    b.append_bool("isWritablePrimary", primary_ == i).append_bool("secondary", primary_ != i);
    b.append_string("setName", "rs0").append_int32("setVersion", 1);
    b.open_array("hosts");
    for (std::size_t m = 0; m < 3; ++m) b.append_string(std::to_string(m), addresses_[m]);
    b.close();
    if (primary_ >= 0) b.append_string("primary", address(primary_));
    b.append_string("me", address(i));
    if (options_.sessions) b.append_int32("logicalSessionTimeoutMinutes", 30);
    b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", wire_);
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  static std::string lsid_of(bson::document_view body) {
    const auto l = body.find("lsid");
    if (!l) return "";
    auto d = l->get_document();
    if (!d) return "?";
    const auto id = d->find("id");
    if (!id) return "?";
    auto bin = id->get_binary();
    if (!bin || bin->subtype != bson::binary_subtype::uuid) return "?";
    return to_hex(bin->bytes);
  }

  static std::vector<bson::document_view> statements(const mongo::op_msg& m, std::string_view key) {
    std::vector<bson::document_view> out;
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

  // A transaction in progress or ended: its number, the store it works on, and how it ended.
  struct transaction {
    std::int64_t number = 0;
    std::map<std::string, int> store;
    enum class state { open, committed, aborted } where = state::open;
  };

  static bson::document no_such_transaction() {
    bson::builder b;
    b.append_double("ok", 0.0).append_string("errmsg", "no such transaction");
    b.append_int32("code", 251).append_string("codeName", "NoSuchTransaction");
    append_labels(b, {"TransientTransactionError"});
    return std::move(b).extract();
  }

  // A command of a transaction (autocommit: false), under mutex_: its answer, or nothing when
  // it is a write or read for the caller to run on `*store` (the transaction's copy).
  std::optional<bson::document> in_transaction(const std::string& name, const mongo::op_msg& m,
                                               const seen_command& s,
                                               std::map<std::string, int>*& store) {
    const std::int64_t number = s.txn_number.value_or(-1);
    const bool starts = m.body.find("startTransaction").has_value();
    auto t = transactions_.find(s.lsid);
    if (starts) {
      if (t != transactions_.end() && t->second.number >= number) return no_such_transaction();
      transactions_[s.lsid] = transaction{number, store_, transaction::state::open};
      t = transactions_.find(s.lsid);
    }
    if (t == transactions_.end() || t->second.number != number) return no_such_transaction();
    auto& txn = t->second;
    bson::builder ok;
    ok.append_double("ok", 1.0);
    if (name == "commitTransaction") {
      if (txn.where == transaction::state::aborted) return no_such_transaction();
      if (txn.where == transaction::state::open) {
        store_ = txn.store;
        txn.where = transaction::state::committed;
        ++commits_;
      }
      return std::move(ok).extract();
    }
    if (name == "abortTransaction") {
      if (txn.where == transaction::state::committed) return no_such_transaction();
      txn.where = transaction::state::aborted;
      return std::move(ok).extract();
    }
    if (txn.where != transaction::state::open) return no_such_transaction();
    store = &txn.store;
    return std::nullopt;
  }

  // Applies a write (under mutex_) and returns its reply.
  bson::document apply(const std::string& name, const mongo::op_msg& m) {
    return apply(name, m, store_);
  }
  bson::document apply(const std::string& name, const mongo::op_msg& m,
                       std::map<std::string, int>& store) {
    bson::builder b;
    std::int32_t n = 0;
    if (name == "insert") {
      std::int32_t index = 0;
      std::vector<std::int32_t> refused;
      for (const auto& d : statements(m, "documents")) {
        if (store.emplace(id_key(d), 0).second) {
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
      const auto list =
          name == "update" ? statements(m, "updates") : std::vector<bson::document_view>{};
      auto q = m.body.find("query");
      std::vector<bson::document_view> filters;
      for (const auto& u : list) {
        if (auto f = u.find("q")) filters.push_back(f->get_document().value());
      }
      if (q) filters.push_back(q->get_document().value());
      for (const auto& f : filters) {
        const auto d = store.find(id_key(f));
        if (d != store.end()) {
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
        if (auto f = d.find("q"); f && store.erase(id_key(f->get_document().value())) > 0) ++n;
      }
      b.append_int32("n", n);
    }
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  void serve(peer& p, int i) {
    bool greeted = false;  // this connection has answered a hello
    while (auto m = p.read()) {
      {
        std::lock_guard lock(mutex_);
        if (silenced_[static_cast<std::size_t>(i)]) {
          p.close();
          return;
        }
      }
      const std::string name = command_name(*m);
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        bool refuse = false;
        {
          std::lock_guard lock(mutex_);
          const auto m_i = static_cast<std::size_t>(i);
          auto& left = refused_checks_[m_i];
          if (left > 0 && (greeted || (refuse_handshakes_[m_i] && check_refused_[m_i]))) {
            --left;
            refuse = true;
            check_refused_[m_i] = true;
          }
        }
        greeted = true;
        if (refuse) {
          bson::builder b;
          b.append_double("ok", 0.0).append_string("errmsg", "scripted check refusal");
          b.append_int32("code", 91).append_string("codeName", "ShutdownInProgress");
          const bson::document r = std::move(b).extract();
          p.reply(*m, r.view());
          continue;
        }
        const bson::document h = hello(i);
        p.reply(*m, h.view());
        continue;
      }
      const bool write =
          name == "insert" || name == "update" || name == "delete" || name == "findAndModify";
      std::optional<bson::document> out;
      bool reset = false;
      {
        std::lock_guard lock(mutex_);
        seen_command s;
        s.member = i;
        s.name = name;
        s.lsid = lsid_of(m->body);
        s.body = bson::document(m->body);
        if (const auto t = m->body.find("txnNumber")) s.txn_number = t->get_int64().value_or(-1);
        if (const auto rp = m->body.find("$readPreference")) {
          s.read_preference = "?";
          if (const auto d = rp->get_document()) {
            if (const auto mode = d->find("mode")) {
              s.read_preference = std::string(mode->get_string().value_or("?"));
            }
          }
        }
        std::optional<fault> f;
        if (!faults_.empty() && faults_.front().command == name) {
          f = faults_.front();
          faults_.erase(faults_.begin());
        }
        if (f && f->step_down_to >= 0) primary_ = f->step_down_to;
        const auto txn_key = s.lsid + "/" + std::to_string(s.txn_number.value_or(-1));
        const bool in_txn = m->body.find("autocommit").has_value();
        std::map<std::string, int>* txn_store = nullptr;
        if (f && f->what == fault::action::reset) {
          reset = true;
        } else if (f && f->what == fault::action::refuse) {
          bson::builder b;
          b.append_double("ok", 0.0).append_string("errmsg", "scripted refusal");
          b.append_int32("code", f->code);
          append_labels(b, f->labels);
          out = std::move(b).extract();
        } else if (write && options_.writes_only_on_primary && primary_ != i &&
                   !(f && (f->what == fault::action::apply_then_reset ||
                           f->what == fault::action::apply_with_write_concern_error))) {
          bson::builder b;
          b.append_double("ok", 0.0).append_string("errmsg", "not primary");
          b.append_int32("code", 10107).append_string("codeName", "NotWritablePrimary");
          if (wire_ >= 9)
            b.open_array("errorLabels").append_string("0", "RetryableWriteError").close();
          out = std::move(b).extract();
        } else if (in_txn && (out = in_transaction(name, *m, s, txn_store))) {
          // answered by the transaction table (commit, abort, or a refusal)
          if (f && f->what == fault::action::apply_then_reset) reset = true;
        } else if (in_txn) {
          out = write ? apply(name, *m, *txn_store) : read(name, *m, *txn_store);
          if (options_.recovery_tokens) {
            bson::builder b;
            b.append_elements(out->view());
            b.open_document("recoveryToken").append_int32("member", i);
            b.append_int64("txn", s.txn_number.value_or(-1)).close();
            out = std::move(b).extract();
          }
        } else if (write && s.txn_number && answered_.count(txn_key) != 0) {
          s.replayed = true;  // a retry of a write already applied: the first answer again
          out = answered_.at(txn_key);
        } else if (write) {
          out = apply(name, *m);
          if (s.txn_number) answered_.emplace(txn_key, *out);
          reset = f && f->what == fault::action::apply_then_reset;
          if (f && f->what == fault::action::apply_with_write_concern_error) {
            bson::builder b;
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
      if (options_.cluster_time) {
        bson::builder b;
        b.append_elements(out->view());
        const bson::timestamp_value now{1000, ++clock_};
        b.append_timestamp("operationTime", now);
        b.open_document("$clusterTime").append_timestamp("clusterTime", now);
        b.open_document("signature");
        b.append_binary("hash", bson::binary_subtype::generic, std::vector<std::uint8_t>(20, 0));
        b.append_int64("keyId", 0).close().close();
        out = std::move(b).extract();
      }
      p.reply(*m, out->view());
    }
  }

  // Answers a read or another command (under mutex_).
  bson::document read(const std::string& name, const mongo::op_msg& m) {
    return read(name, m, store_);
  }
  bson::document read(const std::string& name, const mongo::op_msg& m,
                      const std::map<std::string, int>& store) {
    bson::builder b;
    if (name == "find" || name == "getMore" || name == "aggregate" || name == "listIndexes" ||
        name == "listCollections") {
      // find: every _id in the store, batchSize at a time; getMore: the rest.
      std::vector<std::string> ids;
      if (name == "find") {
        for (const auto& [k, updates] : store) ids.push_back(k);
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
        b.append_int32("n", static_cast<std::int32_t>(store.size())).close();
      }
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const auto id =
            bson::document::from_bytes(std::vector<std::uint8_t>(ids[k].begin(), ids[k].end()));
        b.append_document(std::to_string(k), id.value().view());
      }
      b.close().close();
    } else if (name == "count") {
      b.append_int32("n", static_cast<std::int32_t>(store.size()));
    } else if (name == "distinct") {
      b.open_array("values").close();
    } else if (name == "listDatabases") {
      b.open_array("databases").close();
    } else if (name == "endSessions") {
      if (const auto arr = m.body.find("endSessions")) {
        const auto ids = arr->get_array().value();
        for (const auto& e : ids) {
          bson::builder one;
          one.append_document("lsid", e.get_document().value());
          ended_.push_back(lsid_of(one.view()));
        }
      }
    }
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  const std::int32_t wire_;
  const replica_set_options options_;
  std::mutex mutex_;
  int primary_ = 1;
  std::vector<fault> faults_;
  std::vector<seen_command> seen_;
  std::map<std::string, int> store_;                // _id bytes -> updates received
  std::map<std::string, bson::document> answered_;  // "lsid/txnNumber" -> the reply
  std::vector<std::string> pending_;                // the open cursor's remaining _ids
  std::vector<std::string> ended_;
  std::map<std::string, transaction> transactions_;  // by lsid: the session's latest
  int duplicates_ = 0, inserted_ = 0, commits_ = 0;
  std::atomic<std::uint32_t> clock_{0};
  std::array<bool, 3> silenced_{};
  std::array<int, 3> refused_checks_{};
  std::array<bool, 3> refuse_handshakes_{}, check_refused_{};
  std::array<std::string, 3> addresses_;
  std::array<std::unique_ptr<script_server>, 3> servers_;
};

}  // namespace oid::testing
