// The unified test format's entity operations (client, database, collection, cursor and GridFS
// bucket operations) mapped onto oid's public client API, as entities.hpp declares.
//
// The rule this file keeps: the test layer adds no behaviour oid lacks. An operation, an argument
// or an entity option without a counterpart in oid/mongo/*.hpp makes the operation `unsupported`,
// with one line naming the operation and what is missing, in one of these shapes (they are
// grouped into docs/conformance.md's list of oid's gaps):
//
//     <op>: no such operation on a <client|database|collection|cursor>
//     <op>: no `<argument>` option            (an argument the specifications define)
//     <op>: no `<model>.<argument>` option    (of bulkWrite's models)
//     <op>: no <what> `<argument>`            (a value oid cannot send, e.g. a negative limit)
//     <op>: no <collection|database>-level `<option>`
//
// What is the test file's own error is `malformed` instead (the runner fails the test): a
// required argument missing, a value of the wrong type, an argument no specification defines for
// the operation (`spec_defines`), a returnDocument other than Before and After.
//
// An argument that only restates oid's default (`upsert: false`, `ordered: true`, a
// readPreference equal to the client's) is accepted.
//
// Entity options (collectionOptions, databaseOptions): the runner makes each database and
// collection entity's handle when it makes the entity (runner.cpp, `apply_entity_options`), and
// oid's handles carry them as a driver's do: readConcern, writeConcern, readPreference and
// timeoutMS become the handle's (`with_read_concern`, `with_write_concern`,
// `with_read_preference`, `with_timeout`), a collection's handle is its database's with its own
// options over them, and no operation is given them one by one. An option of a shape oid cannot
// express makes the reads (readConcern, readPreference) or every operation (writeConcern, any
// other option) unsupported. A `session` argument binds the handles to that session entity
// (`with_session`).

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <oid/mongo/bulk_write.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/cursor.hpp>
#include <oid/mongo/gridfs.hpp>
#include <oid/mongo/operation_options.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unified/entities.hpp"

namespace oid::unified {

namespace {

using bson::document_view;
using bson::element;

std::string str(std::string_view s) { return std::string(s); }

op_outcome unsupported(std::string line) {
  op_outcome o;
  o.unsupported = std::move(line);
  return o;
}

// True when `f` does not come from a server's reply: oid refused the operation before sending it
// (invalid_value, too_large, ...) or the transport failed. The format counts both as client
// errors ("parameter validation errors before a command is sent to the server; network errors").
bool is_client_side(const mongo::failure& f) {
  if (f.server || !f.write_errors.empty() || f.write_concern_error) return false;
  return f.code != oid::mongo::errc::server_error && f.code != oid::mongo::errc::duplicate_key &&
         f.code != oid::mongo::errc::write_concern_failed;
}

op_outcome failed(mongo::failure f) {
  op_outcome o;
  o.client_error = is_client_side(f);
  o.error = std::move(f);
  return o;
}

// A failure the test file or the runner caused (an entity that is not there, a closed cursor).
op_outcome runner_failure(errc code, std::string message) {
  op_outcome o;
  o.error = mongo::failure(code, std::move(message));
  o.client_error = true;
  return o;
}

op_outcome with_result(bson::document d) {
  op_outcome o;
  o.result = std::move(d);
  return o;
}

// ---- results ---------------------------------------------------------------------------------

bson::document result_int64(std::int64_t n) {
  bson::builder b;
  b.append_int64("v", n);
  return std::move(b).extract();
}

bson::document result_null() {
  bson::builder b;
  b.append_null("v");
  return std::move(b).extract();
}

bson::document result_document(document_view d) {
  bson::builder b;
  b.append_document("v", d);
  return std::move(b).extract();
}

bson::document result_documents(const std::vector<bson::document>& docs) {
  bson::builder b;
  b.open_array("v");
  for (std::size_t i = 0; i < docs.size(); ++i)
    b.append_document(std::to_string(i), docs[i].view());
  b.close();
  return std::move(b).extract();
}

bson::document result_strings(const std::vector<std::string>& names) {
  bson::builder b;
  b.open_array("v");
  for (std::size_t i = 0; i < names.size(); ++i) b.append_string(std::to_string(i), names[i]);
  b.close();
  return std::move(b).extract();
}

// The value of a one-field `{_id: value}` document, appended under `key`.
void append_id(bson::builder& b, std::string_view key, const bson::document& id_doc) {
  const auto v = id_doc.view();
  if (v.empty()) {
    b.append_null(key);
  } else {
    b.append_element(key, *v.begin());
  }
}

// The outcome of an unacknowledged (w: 0) write: oid reads nothing back, so there are no counts.
op_outcome unacknowledged() {
  bson::builder b;
  b.open_document("v").append_bool("acknowledged", false).close();
  auto r = with_result(std::move(b).extract());
  r.unacknowledged = true;
  return r;
}

bson::document result_update(const mongo::update_result& r) {
  bson::builder b;
  b.open_document("v");
  b.append_int64("matchedCount", r.matched).append_int64("modifiedCount", r.modified);
  b.append_int64("upsertedCount", r.upserted_id ? 1 : 0);
  if (r.upserted_id) append_id(b, "upsertedId", *r.upserted_id);
  b.close();
  return std::move(b).extract();
}

bson::document result_deleted(std::int64_t n) {
  bson::builder b;
  b.open_document("v").append_int64("deletedCount", n).close();
  return std::move(b).extract();
}

// BulkWriteResult: the counts, and the inserted and upserted ids by the index of their model.
bson::document result_bulk(const mongo::bulk_write_result& r) {
  bson::builder b;
  b.open_document("v");
  b.append_int64("deletedCount", r.deleted).append_int64("insertedCount", r.inserted);
  b.open_document("insertedIds");
  for (const auto& i : r.inserted_ids) append_id(b, std::to_string(i.index), i.id);
  b.close();
  b.append_int64("matchedCount", r.matched).append_int64("modifiedCount", r.modified);
  b.append_int64("upsertedCount", r.upserted);
  b.open_document("upsertedIds");
  for (const auto& i : r.upserted_ids) append_id(b, std::to_string(i.index), i.id);
  b.close();
  b.close();
  return std::move(b).extract();
}

op_outcome bulk_failed(mongo::bulk_write_error e) {
  auto partial = result_bulk(e.partial_result);
  auto o = failed(static_cast<mongo::failure&&>(e));
  o.partial_result = std::move(partial);
  return o;
}

// Every document of `c`, or its failure.
mongo::outcome<std::vector<bson::document>> read_all(mongo::cursor& c) {
  std::vector<bson::document> out;
  while (true) {
    auto more = c.next();
    if (!more) return std::move(more).error();
    if (!*more) return out;
    out.emplace_back(c.current());
  }
}

op_outcome all_documents(mongo::outcome<mongo::cursor> c) {
  if (!c) return failed(std::move(c).error());
  auto docs = read_all(*c);
  if (!docs) return failed(std::move(docs).error());
  return with_result(result_documents(*docs));
}

op_outcome names_of(mongo::outcome<std::vector<bson::document>> docs) {
  if (!docs) return failed(std::move(docs).error());
  std::vector<std::string> names;
  for (const auto& d : *docs) {
    const auto n = d.view().find("name");
    const auto s = n ? n->get_string() : result<std::string_view>(n.error());
    if (!s)
      return failed(mongo::failure(oid::mongo::errc::unexpected_reply, "an entry without a name"));
    names.emplace_back(*s);
  }
  return with_result(result_strings(names));
}

// ---- arguments -------------------------------------------------------------------------------

// The arguments the specifications define for `op` (the CRUD, index management, enumeration and
// unified format texts), besides `session` and `timeoutMS`, which every operation takes. Of
// bulkWrite's models, `op` is "bulkWrite.<model>". An argument outside this list is the test
// file's error; one inside it that oid has no counterpart for is oid's gap.
bool spec_defines(std::string_view op, std::string_view key) {
  struct entry {
    std::string_view op;
    std::initializer_list<std::string_view> keys;
  };
  static const entry table[] = {
      {"find",
       {"filter",
        "allowDiskUse",
        "allowPartialResults",
        "batchSize",
        "collation",
        "comment",
        "cursorType",
        "hint",
        "limit",
        "max",
        "maxAwaitTimeMS",
        "maxScan",
        "maxTimeMS",
        "min",
        "noCursorTimeout",
        "oplogReplay",
        "projection",
        "returnKey",
        "showRecordId",
        "skip",
        "snapshot",
        "sort",
        "let",
        "rawData",
        "timeoutMode"}},
      {"aggregate",
       {"pipeline", "allowDiskUse", "batchSize", "bypassDocumentValidation", "collation",
        "maxTimeMS", "maxAwaitTimeMS", "comment", "hint", "let", "rawData", "timeoutMode"}},
      {"countDocuments",
       {"filter", "collation", "hint", "limit", "maxTimeMS", "skip", "comment", "rawData"}},
      {"estimatedDocumentCount", {"maxTimeMS", "comment", "rawData"}},
      {"count", {"filter", "collation", "hint", "limit", "maxTimeMS", "skip", "comment"}},
      {"distinct", {"fieldName", "filter", "collation", "maxTimeMS", "comment", "hint", "rawData"}},
      {"bulkWrite",
       {"requests", "ordered", "bypassDocumentValidation", "comment", "let", "rawData"}},
      {"insertOne", {"document", "bypassDocumentValidation", "comment", "rawData"}},
      {"insertMany", {"documents", "bypassDocumentValidation", "ordered", "comment", "rawData"}},
      {"updateOne",
       {"filter", "update", "arrayFilters", "bypassDocumentValidation", "collation", "hint",
        "upsert", "let", "comment", "sort", "rawData"}},
      {"updateMany",
       {"filter", "update", "arrayFilters", "bypassDocumentValidation", "collation", "hint",
        "upsert", "let", "comment", "rawData"}},
      {"replaceOne",
       {"filter", "replacement", "bypassDocumentValidation", "collation", "hint", "upsert", "let",
        "comment", "sort", "rawData"}},
      {"deleteOne", {"filter", "collation", "hint", "let", "comment", "rawData"}},
      {"deleteMany", {"filter", "collation", "hint", "let", "comment", "rawData"}},
      {"findOneAndDelete",
       {"filter", "collation", "hint", "maxTimeMS", "projection", "sort", "let", "comment",
        "rawData"}},
      {"findOneAndReplace",
       {"filter", "replacement", "bypassDocumentValidation", "collation", "hint", "maxTimeMS",
        "projection", "returnDocument", "sort", "upsert", "let", "comment", "rawData"}},
      {"findOneAndUpdate",
       {"filter", "update", "arrayFilters", "bypassDocumentValidation", "collation", "hint",
        "maxTimeMS", "projection", "returnDocument", "sort", "upsert", "let", "comment",
        "rawData"}},
      {"bulkWrite.insertOne", {"document"}},
      {"bulkWrite.updateOne",
       {"filter", "update", "arrayFilters", "collation", "hint", "sort", "upsert"}},
      {"bulkWrite.updateMany", {"filter", "update", "arrayFilters", "collation", "hint", "upsert"}},
      {"bulkWrite.replaceOne", {"filter", "replacement", "collation", "hint", "sort", "upsert"}},
      {"bulkWrite.deleteOne", {"filter", "collation", "hint"}},
      {"bulkWrite.deleteMany", {"filter", "collation", "hint"}},
      {"createIndex",
       {"keys",
        "background",
        "expireAfterSeconds",
        "name",
        "sparse",
        "storageEngine",
        "unique",
        "version",
        "defaultLanguage",
        "languageOverride",
        "textIndexVersion",
        "weights",
        "2dsphereIndexVersion",
        "bits",
        "max",
        "min",
        "bucketSize",
        "partialFilterExpression",
        "collation",
        "wildcardProjection",
        "hidden",
        "commitQuorum",
        "maxTimeMS",
        "comment"}},
      {"createIndexes", {"models", "commitQuorum", "maxTimeMS", "comment"}},
      {"createIndexes.models", {"keys", "options"}},
      {"createIndexes.options",
       {"background",
        "expireAfterSeconds",
        "name",
        "sparse",
        "storageEngine",
        "unique",
        "version",
        "defaultLanguage",
        "languageOverride",
        "textIndexVersion",
        "weights",
        "2dsphereIndexVersion",
        "bits",
        "max",
        "min",
        "bucketSize",
        "partialFilterExpression",
        "collation",
        "wildcardProjection",
        "hidden"}},
      {"dropIndex", {"name", "maxTimeMS", "comment"}},
      {"dropIndexes", {"maxTimeMS", "comment"}},
      {"listIndexes", {"batchSize", "comment", "timeoutMode"}},
      {"listIndexNames", {"batchSize", "comment"}},
      {"drop", {"comment", "encryptedFields"}},
      {"rename", {"to", "dropTarget", "comment"}},
      {"listDatabases", {"filter", "nameOnly", "authorizedDatabases", "comment"}},
      {"dropDatabase", {"database"}},
      {"appendMetadata", {"driverInfoOptions"}},
      {"listDatabaseObjects", {"filter", "nameOnly", "authorizedDatabases", "comment"}},
      {"listDatabaseNames", {"filter", "authorizedDatabases", "comment"}},
      {"listCollections",
       {"filter", "batchSize", "nameOnly", "authorizedCollections", "comment", "timeoutMode"}},
      {"listCollectionObjects",
       {"filter", "batchSize", "nameOnly", "authorizedCollections", "comment", "timeoutMode"}},
      {"listCollectionNames", {"filter", "authorizedCollections", "comment"}},
      {"runCursorCommand",
       {"command", "commandName", "batchSize", "maxTimeMS", "comment", "cursorType", "timeoutMode",
        "readPreference"}},
      {"dropCollection", {"collection", "encryptedFields", "comment"}},
      {"runCommand", {"command", "commandName", "readPreference"}},
      // GridFS (the GridFS specification's bucket API).
      {"upload",
       {"filename", "source", "chunkSizeBytes", "metadata", "disableMD5", "contentType",
        "aliases"}},
      {"uploadWithId",
       {"id", "filename", "source", "chunkSizeBytes", "metadata", "disableMD5", "contentType",
        "aliases"}},
      {"download", {"id"}},
      {"downloadByName", {"filename", "revision"}},
      {"delete", {"id"}},
      {"deleteByName", {"filename"}},
      {"rename", {"id", "newFilename"}},
      {"renameByName", {"filename", "newFilename"}},
      {"drop", {}},
  };
  if (key == "session" || key == "timeoutMS") return true;
  if (op == "createFindCursor" || op == "findOne") op = "find";
  if (op == "createCommandCursor") op = "runCursorCommand";
  for (const auto& e : table) {
    if (e.op == op) return std::find(e.keys.begin(), e.keys.end(), key) != e.keys.end();
  }
  return false;
}

// Reads an operation's arguments and remembers which it read, so that `refusal()` can name the
// first one nobody read. What it refuses is one of two things: the test file's error (a required
// argument missing, a value of the wrong type, an argument the specifications do not define:
// `malformed`), or something oid lacks (`unsupported`).
class args {
 public:
  // `op`: the operation, or for one of bulkWrite's models "bulkWrite" and `model` its kind.
  args(std::string_view op, document_view d, std::string_view model = {})
      : op_(op), doc_(d), model_(model) {}

  // The element `key`, marked read; nothing when absent.
  std::optional<element> get(std::string_view key) {
    read_.push_back(key);
    auto e = doc_.find(key);
    if (!e) return std::nullopt;
    return *e;
  }
  // A document argument (the empty document when absent; `required`: malformed when absent).
  document_view document(std::string_view key, bool required = false) {
    auto e = get(key);
    if (!e) {
      if (required) missing(key);
      return {};
    }
    auto d = e->get_document();
    if (!d) {
      bad_type(key, "a document");
      return {};
    }
    return *d;
  }
  // An array of documents (nothing when absent).
  std::optional<std::vector<document_view>> documents(std::string_view key, bool required = false) {
    auto e = get(key);
    if (!e) {
      if (required) missing(key);
      return std::nullopt;
    }
    auto arr = e->get_array();
    if (!arr) {
      bad_type(key, "an array of documents");
      return std::nullopt;
    }
    std::vector<document_view> out;
    for (const auto& item : *arr) {
      auto d = item.get_document();
      if (!d) {
        bad_type(key, "an array of documents");
        return std::nullopt;
      }
      out.push_back(*d);
    }
    return out;
  }
  // An integer: int32, int64, or a double that holds one.
  std::optional<std::int64_t> integer(std::string_view key) {
    auto e = get(key);
    if (!e) return std::nullopt;
    if (auto i = e->get_int32()) return std::int64_t{*i};
    if (auto l = e->get_int64()) return *l;
    if (auto d = e->get_double()) {
      if (std::isfinite(*d) && std::trunc(*d) == *d && std::fabs(*d) < 9.0e15) {
        return static_cast<std::int64_t>(*d);
      }
    }
    bad_type(key, "an integer");
    return std::nullopt;
  }
  std::optional<bool> boolean(std::string_view key) {
    auto e = get(key);
    if (!e) return std::nullopt;
    if (auto b = e->get_bool()) return *b;
    bad_type(key, "a boolean");
    return std::nullopt;
  }
  std::optional<std::string_view> string(std::string_view key, bool required = false) {
    auto e = get(key);
    if (!e) {
      if (required) missing(key);
      return std::nullopt;
    }
    if (auto s = e->get_string()) return *s;
    bad_type(key, "a string");
    return std::nullopt;
  }
  // A hint: an index name or a key pattern.
  mongo::index_hint hint(std::string_view key = "hint") {
    auto e = get(key);
    if (!e) return {};
    if (auto s = e->get_string()) return mongo::index_hint(*s);
    if (auto d = e->get_document()) return mongo::index_hint(*d);
    bad_type(key, "a string or a document");
    return {};
  }
  // maxTimeMS, sent as it is (a negative one too: the server refuses it).
  std::optional<std::chrono::milliseconds> max_time() {
    auto n = integer("maxTimeMS");
    if (!n) return std::nullopt;
    return std::chrono::milliseconds(*n);
  }
  // timeoutMS (the client-side operations timeout): at least 0.
  std::optional<std::chrono::milliseconds> timeout() {
    auto n = integer("timeoutMS");
    if (!n) return std::nullopt;
    if (*n < 0) malformed("`timeoutMS` is negative");
    return std::chrono::milliseconds(*n);
  }
  // cursorType: nonTailable (the default), tailable or tailableAwait.
  mongo::cursor_type cursor_type() {
    const auto type = string("cursorType");
    if (!type || *type == "nonTailable") return mongo::cursor_type::non_tailable;
    if (*type == "tailable") return mongo::cursor_type::tailable;
    if (*type == "tailableAwait") return mongo::cursor_type::tailable_await;
    malformed("`cursorType` is not tailable, tailableAwait or nonTailable");
    return mongo::cursor_type::non_tailable;
  }
  // A count of documents (skip, limit): oid lacks a negative one.
  std::int64_t non_negative(std::string_view key) {
    const auto n = integer(key);
    if (!n) return 0;
    if (*n < 0) lacks("negative", key);
    return *n;
  }
  // timeoutMode: "cursorLifetime" or "iteration".
  std::optional<mongo::timeout_mode> timeout_mode() {
    auto s = string("timeoutMode");
    if (!s) return std::nullopt;
    if (*s == "cursorLifetime") return mongo::timeout_mode::cursor_lifetime;
    if (*s == "iteration") return mongo::timeout_mode::iteration;
    malformed("`timeoutMode` is neither cursorLifetime nor iteration");
    return std::nullopt;
  }

  // oid cannot send the value of an argument it has: "<op>: no <what> `<key>`" (the first
  // refusal counts).
  void lacks(std::string_view what, std::string_view key) {
    lacks(str(op_) + ": no " + str(what) + " `" + name(key) + "`");
  }
  // oid lacks what the operation needs, `line` saying what (e.g. an entity option).
  void lacks(std::string line) {
    if (unsupported_.empty()) unsupported_ = std::move(line);
  }
  // The test file is wrong: `why` says how (the runner puts the operation's name before it).
  void malformed(std::string why) {
    if (malformed_.empty()) malformed_ = std::move(why);
  }
  void bad_type(std::string_view key, std::string_view want) {
    malformed("`" + name(key) + "` is not " + str(want));
  }
  void missing(std::string_view key) { malformed("`" + name(key) + "` is missing"); }
  // Takes the refusal of a bulkWrite model's arguments.
  void take(const args& model) {
    auto [unsupported, malformed] = model.refusals();
    if (!malformed.empty()) this->malformed(malformed);
    if (unsupported_.empty()) unsupported_ = unsupported;
  }

  // True when an argument was refused, or one was left unread.
  bool refused() const {
    auto [u, m] = refusals();
    return !u.empty() || !m.empty();
  }
  // The outcome of a refused operation: malformed when the test file is wrong anywhere, else
  // unsupported.
  op_outcome refusal() const {
    auto [u, m] = refusals();
    op_outcome o;
    if (!m.empty()) {
      o.malformed = std::move(m);
    } else {
      o.unsupported = std::move(u);
    }
    return o;
  }

 private:
  // The first unsupported and malformed lines, counting the arguments nobody read.
  std::pair<std::string, std::string> refusals() const {
    std::string u = unsupported_, m = malformed_;
    const std::string spec_op = model_.empty() ? str(op_) : str(op_) + "." + str(model_);
    for (const auto& e : doc_) {
      if (std::find(read_.begin(), read_.end(), e.key()) != read_.end()) continue;
      if (!spec_defines(spec_op, e.key())) {
        if (m.empty()) m = "`" + name(e.key()) + "` is not an argument of " + spec_op;
      } else if (u.empty()) {
        u = str(op_) + ": no `" + name(e.key()) + "` option";
      }
    }
    return {u, m};
  }
  // The argument's name in messages: `upsert`, or `updateOne.upsert` in a bulkWrite model.
  std::string name(std::string_view key) const {
    return model_.empty() ? str(key) : str(model_) + "." + str(key);
  }

  std::string_view op_;
  document_view doc_;
  std::string_view model_;
  std::vector<std::string_view> read_;
  std::string unsupported_, malformed_;
};

// An update argument: update operators (a document) or a pipeline (an array of stages). `stages`
// keeps the pipeline's views for the update_spec that points at them.
std::optional<mongo::update_spec> read_update(args& a, std::string_view key,
                                              std::vector<document_view>& stages) {
  auto e = a.get(key);
  if (!e) {
    a.missing(key);
    return std::nullopt;
  }
  if (auto d = e->get_document()) return mongo::update_spec(*d);
  if (e->type() == bson::type::array) {
    // Not through args::documents: `key` is read already.
    const document_view arr = *e->get_array();
    for (const auto& item : arr) {
      auto d = item.get_document();
      if (!d) {
        a.bad_type(key, "a document or an array of documents");
        return std::nullopt;
      }
      stages.push_back(*d);
    }
    return mongo::update_spec(std::span<const document_view>(stages));
  }
  a.bad_type(key, "a document or an array of documents");
  return std::nullopt;
}

// ---- entity options --------------------------------------------------------------------------

// A writeConcern document as oid's write_concern; nothing when oid cannot express it, with the
// field it cannot express in `bad`.
std::optional<mongo::write_concern> parse_write_concern(document_view d, std::string& bad) {
  mongo::write_concern wc;
  for (const auto& e : d) {
    const auto k = e.key();
    bool ok = true;
    if (k == "w") {
      if (auto i = e.get_int32()) {
        wc.w = *i;
      } else if (auto s = e.get_string()) {
        wc.w_tag = str(*s);
      } else {
        ok = false;
      }
    } else if (k == "j" || k == "journal") {
      auto b = e.get_bool();
      ok = b.has_value();
      if (ok) wc.journal = *b;
    } else if (k == "wtimeoutMS" || k == "wtimeout") {
      std::optional<std::int64_t> n;
      if (auto i = e.get_int32()) n = *i;
      if (auto l = e.get_int64()) n = *l;
      ok = n && *n >= 0;
      if (ok) wc.timeout = std::chrono::milliseconds(*n);
    } else {
      ok = false;
    }
    if (!ok) {
      bad = str(k);
      return std::nullopt;
    }
  }
  return wc;
}

// A readPreference document as oid's read_preference; nothing when oid cannot express it.
std::optional<mongo::read_preference> parse_read_preference(document_view d) {
  mongo::read_preference rp;
  bool has_mode = false;
  for (const auto& e : d) {
    const auto k = e.key();
    if (k == "mode") {
      auto s = e.get_string();
      if (!s) return std::nullopt;
      auto m = mongo::read_mode_from_string(*s);
      if (!m) return std::nullopt;
      rp.mode = *m;
      has_mode = true;
    } else if (k == "tagSets" || k == "tag_sets") {
      auto arr = e.get_array();
      if (!arr) return std::nullopt;
      for (const auto& set : *arr) {
        auto doc = set.get_document();
        if (!doc) return std::nullopt;
        mongo::tag_set tags;
        for (const auto& t : *doc) {
          auto v = t.get_string();
          if (!v) return std::nullopt;
          tags.emplace_back(str(t.key()), str(*v));
        }
        rp.tag_sets.push_back(std::move(tags));
      }
    } else if (k == "maxStalenessSeconds") {
      std::optional<std::int64_t> n;
      if (auto i = e.get_int32()) n = *i;
      if (auto l = e.get_int64()) n = *l;
      if (!n) return std::nullopt;
      if (*n >= 0) rp.max_staleness = std::chrono::seconds(*n);  // -1: no maximum
    } else {
      return std::nullopt;
    }
  }
  if (!has_mode) return std::nullopt;
  return rp;
}

// A readConcern document (`{level: "majority"}`, or `{}`) as oid's read_concern; nothing when it
// holds anything else.
std::optional<mongo::read_concern> parse_read_concern(document_view d) {
  mongo::read_concern rc;
  for (const auto& e : d) {
    auto s = e.get_string();
    if (e.key() != "level" || !s) return std::nullopt;
    rc.level = str(*s);
  }
  return rc;
}

// A number of milliseconds (int32, int64 or a whole double).
std::optional<std::chrono::milliseconds> milliseconds_of(const element& e) {
  if (auto i = e.get_int32()) return std::chrono::milliseconds(*i);
  if (auto l = e.get_int64()) return std::chrono::milliseconds(*l);
  if (auto d = e.get_double(); d && *d == static_cast<double>(static_cast<std::int64_t>(*d))) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(*d));
  }
  return std::nullopt;
}

}  // namespace

std::optional<mongo::transaction_options> read_transaction_options(document_view d,
                                                                   std::string& gap,
                                                                   std::string& malformed) {
  mongo::transaction_options o;
  for (const auto& e : d) {
    const auto k = e.key();
    const auto doc = e.get_document();
    if (k == "readConcern") {
      if (!doc) malformed = "readConcern is not a document";
      auto rc = doc ? parse_read_concern(*doc) : std::nullopt;
      if (!rc) gap = "no transaction `readConcern` of that shape";
      o.read_concern = rc;
    } else if (k == "writeConcern") {
      std::string bad;
      if (!doc) malformed = "writeConcern is not a document";
      auto wc = doc ? parse_write_concern(*doc, bad) : std::nullopt;
      if (!wc) gap = "no transaction `writeConcern." + bad + "`";
      o.write_concern = wc;
    } else if (k == "readPreference") {
      if (!doc) malformed = "readPreference is not a document";
      auto rp = doc ? parse_read_preference(*doc) : std::nullopt;
      if (!rp) gap = "no transaction `readPreference` of that shape";
      o.read_preference = rp;
    } else if (k == "maxCommitTimeMS") {
      o.max_commit_time = milliseconds_of(e);
      if (!o.max_commit_time) malformed = "maxCommitTimeMS is not a number";
    } else {
      gap = "no transaction option `" + str(k) + "`";
    }
  }
  if (!gap.empty() || !malformed.empty()) return std::nullopt;
  return o;
}

namespace {

// Gives `handle` (a database or a collection) what `options` ask; see apply_entity_options.
template <class Handle>
entity_gaps apply_options(document_view options, std::string_view level, Handle& handle,
                          const entity_gaps& inherited) {
  entity_gaps out;
  const std::string lv = str(level) + "-level `";
  const auto read_gap = [&](std::string_view key) {
    if (!out.read.empty()) return;
    out.read = "no " + lv + str(key) + "`";
    out.read_key = str(key);
  };
  for (const auto& e : options) {
    const auto k = e.key();
    const auto d = e.get_document();
    if (k == "readConcern") {
      auto rc = d ? parse_read_concern(*d) : std::nullopt;
      if (rc) {
        handle = handle.with_read_concern(std::move(*rc));
      } else {
        read_gap(k);
      }
    } else if (k == "readPreference") {
      auto rp = d ? parse_read_preference(*d) : std::nullopt;
      if (rp) {
        handle = handle.with_read_preference(std::move(*rp));
      } else {
        read_gap(k);
      }
    } else if (k == "writeConcern") {
      std::string bad;
      auto wc = d ? parse_write_concern(*d, bad) : std::nullopt;
      if (wc) {
        handle = handle.with_write_concern(std::move(*wc));
      } else if (out.all.empty()) {
        out.all = "no " + lv + "writeConcern" + (bad.empty() ? "" : ".") + bad + "`";
        out.all_key = "writeConcern";
      }
    } else if (k == "timeoutMS" && (e.get_int32() || e.get_int64())) {
      handle = handle.with_timeout(
          std::chrono::milliseconds(e.get_int32() ? *e.get_int32() : *e.get_int64()));
    } else if (out.all.empty()) {
      out.all = "no " + lv + str(k) + "`";
      out.all_key = str(k);
    }
  }
  // The parent's gaps stay unless this entity sets the option again.
  if (out.read.empty() && !inherited.read.empty() && !options.contains(inherited.read_key)) {
    out.read = inherited.read;
    out.read_key = inherited.read_key;
  }
  if (out.all.empty() && !inherited.all.empty() && !options.contains(inherited.all_key)) {
    out.all = inherited.all;
    out.all_key = inherited.all_key;
  }
  return out;
}

// How an operation uses its entity's options.
enum class op_kind {
  read,   // readConcern and readPreference apply
  write,  // writeConcern applies
};

// The unsupported line the entity's options give operation `op`, or empty.
std::string option_gap(const entity_gaps& g, std::string_view op, op_kind kind) {
  if (!g.all.empty()) return str(op) + ": " + g.all;
  if (kind == op_kind::read && !g.read.empty()) return str(op) + ": " + g.read;
  return {};
}

// ---- collection operations -------------------------------------------------------------------

struct collection_context {
  mongo::collection coll;  // the entity's handle, bound to the operation's session
  entity_gaps gaps;
  // The handle's writes are unacknowledged (w: 0) and not in a transaction: no result to shape.
  bool unacknowledged = false;
};

op_outcome insert_one(collection_context& c, args& a) {
  const auto doc = a.document("document", true);
  mongo::insert_options o;
  o.bypass_document_validation = a.boolean("bypassDocumentValidation");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto r = c.coll.insert_one(doc, o);
  if (!r) return failed(std::move(r).error());
  if (c.unacknowledged) return unacknowledged();
  bson::builder b;
  b.open_document("v");
  append_id(b, "insertedId", r->id);
  b.close();
  return with_result(std::move(b).extract());
}

op_outcome insert_many(collection_context& c, args& a) {
  const auto docs = a.documents("documents", true);
  mongo::insert_options o;
  o.ordered = a.boolean("ordered").value_or(true);
  o.bypass_document_validation = a.boolean("bypassDocumentValidation");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto r = c.coll.insert_many(*docs, o);
  if (!r) return bulk_failed(std::move(r).error());
  if (c.unacknowledged) return unacknowledged();
  bson::builder b;
  b.open_document("v").open_document("insertedIds");
  for (std::size_t i = 0; i < r->ids.size(); ++i) append_id(b, std::to_string(i), r->ids[i]);
  b.close().close();
  return with_result(std::move(b).extract());
}

// The write_options of updateOne, updateMany and replaceOne (`update`: arrayFilters apply).
mongo::write_options update_options(args& a, bool update,
                                    std::optional<std::vector<document_view>>& filters) {
  mongo::write_options o;
  o.upsert = a.boolean("upsert").value_or(false);
  if (update) {
    filters = a.documents("arrayFilters");
    if (filters) o.array_filters = *filters;
  }
  o.bypass_document_validation = a.boolean("bypassDocumentValidation");
  o.collation = a.document("collation");
  o.hint = a.hint();
  o.let = a.document("let");
  if (auto e = a.get("comment")) o.comment = *e;
  return o;
}

op_outcome update_op(collection_context& c, args& a, std::string_view op) {
  const bool replace = op == "replaceOne";
  const auto filter = a.document("filter", true);
  std::vector<document_view> stages;
  std::optional<mongo::update_spec> u;
  document_view replacement;
  if (replace) {
    replacement = a.document("replacement", true);
  } else {
    u = read_update(a, "update", stages);
  }
  std::optional<std::vector<document_view>> filters;
  const auto options = update_options(a, !replace, filters);
  if (a.refused()) return a.refusal();
  auto r = replace             ? c.coll.replace_one(filter, replacement, options)
           : op == "updateOne" ? c.coll.update_one(filter, *u, options)
                               : c.coll.update_many(filter, *u, options);
  if (!r) return failed(std::move(r).error());
  if (c.unacknowledged) return unacknowledged();
  return with_result(result_update(*r));
}

op_outcome delete_op(collection_context& c, args& a, std::string_view op) {
  const auto filter = a.document("filter", true);
  mongo::write_options o;
  o.collation = a.document("collation");
  o.hint = a.hint();
  o.let = a.document("let");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto r = op == "deleteOne" ? c.coll.delete_one(filter, o) : c.coll.delete_many(filter, o);
  if (!r) return failed(std::move(r).error());
  if (c.unacknowledged) return unacknowledged();
  return with_result(result_deleted(*r));
}

// The storage a bulk write's models point into: their pipelines and array filters.
struct model_storage {
  std::deque<std::vector<document_view>> lists;
};

// One `{insertOne: {...}}`, `{updateOne: {...}}`, ... of bulkWrite's `requests`.
// Its refusals go to `a`, bulkWrite's arguments.
std::optional<mongo::write_model> read_model(args& a, element request, model_storage& keep) {
  auto outer = request.get_document();
  if (!outer || outer->empty() || std::next(outer->begin()) != outer->end()) {
    a.bad_type("requests", "an array of one-field documents");
    return std::nullopt;
  }
  const element kind = *outer->begin();
  const auto name = kind.key();
  auto body = kind.get_document();
  if (!body) {
    a.bad_type("requests", "an array of one-field documents");
    return std::nullopt;
  }
  args m("bulkWrite", *body, name);
  std::optional<mongo::write_model> out;
  if (name == "insertOne") {
    out = mongo::insert_one_model{m.document("document", true)};
  } else if (name == "updateOne" || name == "updateMany") {
    const auto filter = m.document("filter", true);
    auto& stages = keep.lists.emplace_back();
    auto u = read_update(m, "update", stages);
    const bool upsert = m.boolean("upsert").value_or(false);
    std::span<const document_view> filters;
    if (auto f = m.documents("arrayFilters")) filters = keep.lists.emplace_back(std::move(*f));
    const auto collation = m.document("collation");
    const auto hint = m.hint();
    if (u) {
      if (name == "updateOne") {
        out = mongo::update_one_model{filter, *u, upsert, filters, collation, hint};
      } else {
        out = mongo::update_many_model{filter, *u, upsert, filters, collation, hint};
      }
    }
  } else if (name == "replaceOne") {
    const auto filter = m.document("filter", true);
    const auto replacement = m.document("replacement", true);
    const bool upsert = m.boolean("upsert").value_or(false);
    const auto collation = m.document("collation");
    const auto hint = m.hint();
    out = mongo::replace_one_model{filter, replacement, upsert, collation, hint};
  } else if (name == "deleteOne" || name == "deleteMany") {
    const auto filter = m.document("filter", true);
    const auto collation = m.document("collation");
    const auto hint = m.hint();
    if (name == "deleteOne") {
      out = mongo::delete_one_model{filter, collation, hint};
    } else {
      out = mongo::delete_many_model{filter, collation, hint};
    }
  } else {
    a.malformed("`" + str(name) + "` is not a bulkWrite model");
    return std::nullopt;
  }
  a.take(m);
  if (m.refused()) return std::nullopt;
  return out;
}

op_outcome bulk_write_op(collection_context& c, args& a) {
  std::vector<mongo::write_model> models;
  model_storage keep;
  auto requests = a.get("requests");
  if (!requests) {
    a.missing("requests");
  } else if (auto arr = requests->get_array(); !arr) {
    a.bad_type("requests", "an array of one-field documents");
  } else {
    for (const auto& r : *arr) {
      auto m = read_model(a, r, keep);
      if (!m) break;
      models.push_back(*m);
    }
  }
  mongo::bulk_write_options o;
  o.ordered = a.boolean("ordered").value_or(true);
  o.bypass_document_validation = a.boolean("bypassDocumentValidation");
  o.let = a.document("let");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto r = c.coll.bulk_write(models, o);
  if (!r) return bulk_failed(std::move(r).error());
  if (c.unacknowledged) return unacknowledged();
  return with_result(result_bulk(*r));
}

// A batchSize: oid's is an int32, 0 for the server's default.
std::int32_t read_batch_size(args& a) {
  const auto n = a.integer("batchSize");
  if (!n) return 0;
  if (*n < 0) {
    a.lacks("negative", "batchSize");
    return 0;
  }
  if (*n > std::numeric_limits<std::int32_t>::max()) {
    a.lacks("64-bit", "batchSize");
    return 0;
  }
  return static_cast<std::int32_t>(*n);
}

// A cursor operation's result: every document read (a find, an aggregate, runCursorCommand), or
// the cursor itself as an entity (createFindCursor, createCommandCursor).
op_outcome cursor_result(mongo::outcome<mongo::cursor> cur, bool keep) {
  if (!keep) return all_documents(std::move(cur));
  if (!cur) return failed(std::move(cur).error());
  op_outcome out;
  out.cursor = std::make_unique<mongo::cursor>(std::move(*cur));
  return out;
}

// The options of find that findOne takes too.
void read_query_options(args& a, mongo::find_options& o) {
  o.sort = a.document("sort");
  o.projection = a.document("projection");
  o.skip = a.non_negative("skip");
  o.max_time = a.max_time();
  o.hint = a.hint();
  o.collation = a.document("collation");
  o.let = a.document("let");
  o.min = a.document("min");
  o.max = a.document("max");
  o.return_key = a.boolean("returnKey").value_or(false);
  o.show_record_id = a.boolean("showRecordId").value_or(false);
  o.allow_disk_use = a.boolean("allowDiskUse");
  o.allow_partial_results = a.boolean("allowPartialResults").value_or(false);
  if (auto e = a.get("comment")) o.comment = *e;
}

// find, and createFindCursor (the same with the cursor kept, not read).
op_outcome find_op(collection_context& c, args& a, std::string_view op) {
  // The CRUD specification's find(filter, options): the filter is required (as for the others).
  const auto filter = a.document("filter", true);
  mongo::find_options o;
  read_query_options(a, o);
  o.no_cursor_timeout = a.boolean("noCursorTimeout").value_or(false);
  o.limit = a.non_negative("limit");
  o.batch_size = read_batch_size(a);
  o.timeout_mode = a.timeout_mode();
  o.cursor_kind = a.cursor_type();
  if (auto n = a.integer("maxAwaitTimeMS")) o.max_await_time = std::chrono::milliseconds(*n);
  if (a.refused()) return a.refusal();
  return cursor_result(c.coll.find(filter, o), op == "createFindCursor");
}

// aggregate's options (a collection's or a database's).
mongo::aggregate_options read_aggregate_options(args& a) {
  mongo::aggregate_options o;
  o.allow_disk_use = a.boolean("allowDiskUse");
  o.batch_size = read_batch_size(a);
  o.max_time = a.max_time();
  o.bypass_document_validation = a.boolean("bypassDocumentValidation");
  o.collation = a.document("collation");
  o.hint = a.hint();
  o.let = a.document("let");
  if (auto n = a.integer("maxAwaitTimeMS")) o.max_await_time = std::chrono::milliseconds(*n);
  o.timeout_mode = a.timeout_mode();
  if (auto e = a.get("comment")) o.comment = *e;
  return o;
}

op_outcome aggregate_op(collection_context& c, args& a) {
  const auto pipeline = a.documents("pipeline", true);
  const auto o = read_aggregate_options(a);
  if (a.refused()) return a.refusal();
  return all_documents(c.coll.aggregate(*pipeline, o));
}

// countDocuments, and the deprecated count (`deprecated`), whose filter may be left out.
op_outcome count_documents(collection_context& c, args& a, bool deprecated) {
  const auto filter = a.document("filter", !deprecated);
  mongo::count_options o;
  o.skip = a.non_negative("skip");
  o.limit = a.non_negative("limit");
  o.max_time = a.max_time();
  o.hint = a.hint();
  o.collation = a.document("collation");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto n = deprecated ? c.coll.count(filter, o) : c.coll.count_documents(filter, o);
  if (!n) return failed(std::move(n).error());
  return with_result(result_int64(*n));
}

op_outcome estimated_document_count(collection_context& c, args& a) {
  mongo::read_options o;
  o.max_time = a.max_time();
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto n = c.coll.estimated_document_count(o);
  if (!n) return failed(std::move(n).error());
  return with_result(result_int64(*n));
}

op_outcome distinct_op(collection_context& c, args& a) {
  const auto field = a.string("fieldName", true);
  const auto filter = a.document("filter", true);
  mongo::read_options o;
  o.max_time = a.max_time();
  o.collation = a.document("collation");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  auto values = c.coll.distinct(*field, filter, o);
  if (!values) return failed(std::move(values).error());
  bson::builder b;
  b.append_array("v", values->view());
  return with_result(std::move(b).extract());
}

// returnDocument: "Before" or "After", in any case (the format makes anything else an error).
mongo::return_document read_return_document(args& a) {
  auto s = a.string("returnDocument");
  if (!s) return mongo::return_document::before;
  std::string lower(*s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower == "after") return mongo::return_document::after;
  if (lower != "before") a.malformed("`returnDocument` is neither Before nor After");
  return mongo::return_document::before;
}

op_outcome found(mongo::outcome<std::optional<bson::document>> r) {
  if (!r) return failed(std::move(r).error());
  return with_result(*r ? result_document((*r)->view()) : result_null());
}

op_outcome find_one_and_modify(collection_context& c, args& a, std::string_view op) {
  const auto filter = a.document("filter", true);
  std::vector<document_view> stages;
  std::optional<mongo::update_spec> u;
  document_view replacement;
  const bool replace = op == "findOneAndReplace";
  if (replace) {
    replacement = a.document("replacement", true);
  } else {
    u = read_update(a, "update", stages);
  }
  mongo::find_one_and_modify_options o;
  o.projection = a.document("projection");
  o.sort = a.document("sort");
  o.upsert = a.boolean("upsert").value_or(false);
  o.return_document = read_return_document(a);
  o.max_time = a.max_time();
  o.bypass_document_validation = a.boolean("bypassDocumentValidation");
  o.collation = a.document("collation");
  o.hint = a.hint();
  std::optional<std::vector<document_view>> filters;
  if (!replace) {
    filters = a.documents("arrayFilters");
    if (filters) o.array_filters = *filters;
  }
  o.let = a.document("let");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  return found(replace ? c.coll.find_one_and_replace(filter, replacement, o)
                       : c.coll.find_one_and_update(filter, *u, o));
}

// findOne: find of limit 1 in a single batch (collection::find_one).
op_outcome find_one_op(collection_context& c, args& a) {
  const auto filter = a.document("filter", true);
  mongo::find_options o;
  read_query_options(a, o);
  if (a.refused()) return a.refusal();
  return found(c.coll.find_one(filter, o));
}

op_outcome find_one_and_delete(collection_context& c, args& a) {
  const auto filter = a.document("filter", true);
  mongo::find_one_and_delete_options o;
  o.projection = a.document("projection");
  o.sort = a.document("sort");
  o.max_time = a.max_time();
  o.collation = a.document("collation");
  o.hint = a.hint();
  o.let = a.document("let");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  return found(c.coll.find_one_and_delete(filter, o));
}

// An index's options, read from `a`; `extra` keeps what `o.extra` views.
mongo::index_options read_index_options(args& a, bson::document& extra) {
  mongo::index_options o;
  o.unique = a.boolean("unique").value_or(false);
  o.sparse = a.boolean("sparse").value_or(false);
  if (auto n = a.string("name")) o.name = str(*n);
  if (auto n = a.integer("expireAfterSeconds")) o.expire_after_seconds = *n;
  o.partial_filter_expression = a.document("partialFilterExpression");
  o.collation = a.document("collation");
  // The index options whose createIndexes field has the argument's name go through `extra`.
  bson::builder b;
  for (const std::string_view k :
       {"background", "hidden", "weights", "textIndexVersion", "2dsphereIndexVersion", "bits",
        "min", "max", "wildcardProjection", "storageEngine"}) {
    if (auto e = a.get(k)) b.append_element(*e);
  }
  extra = std::move(b).extract();
  o.extra = extra.view();
  return o;
}

// maxTimeMS and comment of the index commands.
mongo::index_command_options read_index_command_options(args& a) {
  mongo::index_command_options o;
  o.max_time = a.max_time();
  if (auto e = a.get("comment")) o.comment = *e;
  return o;
}

op_outcome create_index(collection_context& c, args& a) {
  const auto keys = a.document("keys", true);
  bson::document extra;
  const auto o = read_index_options(a, extra);
  const auto command = read_index_command_options(a);
  if (a.refused()) return a.refusal();
  auto name = c.coll.create_index(keys, o, command);
  if (!name) return failed(std::move(name).error());
  bson::builder b;
  b.append_string("v", *name);
  return with_result(std::move(b).extract());
}

// createIndexes: `models`, each `{keys, options}` (the index management specification's
// IndexModel).
op_outcome create_indexes(collection_context& c, args& a) {
  const auto models = a.documents("models", true);
  std::vector<mongo::index_model> indexes;
  std::deque<bson::document> extras;  // what each model's options.extra views
  for (const auto& m : models.value_or(std::vector<document_view>{})) {
    args ma("createIndexes", m, "models");
    const auto keys = ma.document("keys", true);
    args oa("createIndexes", ma.document("options"), "options");
    indexes.push_back({keys, read_index_options(oa, extras.emplace_back())});
    a.take(ma);
    a.take(oa);
  }
  const auto command = read_index_command_options(a);
  if (a.refused()) return a.refusal();
  auto names = c.coll.create_indexes(indexes, command);
  if (!names) return failed(std::move(names).error());
  return with_result(result_strings(*names));
}

op_outcome nothing_or_failure(mongo::outcome<mongo::done> r) {
  if (!r) return failed(std::move(r).error());
  return {};
}

op_outcome run_collection_operation(collection_context& c, std::string_view op,
                                    document_view arguments) {
  // Each operation's use of the entity's options, then its arguments.
  struct entry {
    std::string_view name;
    op_kind kind;
  };
  static constexpr entry table[] = {
      {"insertOne", op_kind::write},
      {"insertMany", op_kind::write},
      {"bulkWrite", op_kind::write},
      {"updateOne", op_kind::write},
      {"updateMany", op_kind::write},
      {"replaceOne", op_kind::write},
      {"deleteOne", op_kind::write},
      {"deleteMany", op_kind::write},
      {"findOneAndUpdate", op_kind::write},
      {"findOneAndReplace", op_kind::write},
      {"findOneAndDelete", op_kind::write},
      {"find", op_kind::read},
      {"findOne", op_kind::read},
      {"createFindCursor", op_kind::read},
      {"aggregate", op_kind::read},
      {"countDocuments", op_kind::read},
      {"count", op_kind::read},
      {"estimatedDocumentCount", op_kind::read},
      {"distinct", op_kind::read},
      {"listIndexes", op_kind::read},
      {"listIndexNames", op_kind::read},
      {"createIndex", op_kind::write},
      {"createIndexes", op_kind::write},
      {"dropIndex", op_kind::write},
      {"dropIndexes", op_kind::write},
      {"drop", op_kind::write},
      {"rename", op_kind::write},
  };
  const auto it = std::find_if(std::begin(table), std::end(table),
                               [&](const entry& e) { return e.name == op; });
  if (it == std::end(table)) return unsupported(str(op) + ": no such operation on a collection");
  args a(op, arguments);
  // timeoutMS of the operation: the collection's handle with it is the same as the option.
  if (auto t = a.timeout()) c.coll = c.coll.with_timeout(*t);
  // Refused with the arguments' refusals: a test file's error in them counts first.
  if (auto gap = option_gap(c.gaps, op, it->kind); !gap.empty()) a.lacks(gap);
  if (op == "insertOne") return insert_one(c, a);
  if (op == "insertMany") return insert_many(c, a);
  if (op == "bulkWrite") return bulk_write_op(c, a);
  if (op == "updateOne" || op == "updateMany" || op == "replaceOne") return update_op(c, a, op);
  if (op == "deleteOne" || op == "deleteMany") return delete_op(c, a, op);
  if (op == "findOneAndUpdate" || op == "findOneAndReplace") {
    return find_one_and_modify(c, a, op);
  }
  if (op == "findOneAndDelete") return find_one_and_delete(c, a);
  if (op == "find" || op == "createFindCursor") return find_op(c, a, op);
  if (op == "findOne") return find_one_op(c, a);
  if (op == "aggregate") return aggregate_op(c, a);
  if (op == "countDocuments" || op == "count") return count_documents(c, a, op == "count");
  if (op == "estimatedDocumentCount") return estimated_document_count(c, a);
  if (op == "distinct") return distinct_op(c, a);
  if (op == "createIndex") return create_index(c, a);
  if (op == "createIndexes") return create_indexes(c, a);
  if (op == "listIndexes" || op == "listIndexNames") {
    if (a.refused()) return a.refusal();
    auto specs = c.coll.list_indexes();
    if (op == "listIndexNames") return names_of(std::move(specs));
    if (!specs) return failed(std::move(specs).error());
    return with_result(result_documents(*specs));
  }
  if (op == "dropIndex") {
    const auto name = a.string("name", true);
    const auto command = read_index_command_options(a);
    if (a.refused()) return a.refusal();
    return nothing_or_failure(c.coll.drop_index(*name, command));
  }
  if (op == "dropIndexes") {
    const auto command = read_index_command_options(a);
    if (a.refused()) return a.refusal();
    return nothing_or_failure(c.coll.drop_indexes(command));
  }
  if (op == "drop") {
    if (a.refused()) return a.refusal();
    return nothing_or_failure(c.coll.drop());
  }
  // rename
  const auto to = a.string("to", true);
  const auto drop_target = a.boolean("dropTarget").value_or(false);
  if (a.refused()) return a.refusal();
  auto r = c.coll.rename(*to, drop_target);
  if (!r) return failed(std::move(r).error());
  return {};
}

// ---- database and client operations ----------------------------------------------------------

op_outcome list_databases(mongo::client& client, std::string_view op, document_view arguments) {
  args a(op, arguments);
  const auto filter = a.document("filter");
  mongo::list_databases_options o;
  if (op != "listDatabaseNames") o.name_only = a.boolean("nameOnly");
  o.authorized_databases = a.boolean("authorizedDatabases");
  if (auto e = a.get("comment")) o.comment = *e;
  o.timeout = a.timeout();
  if (a.refused()) return a.refusal();
  if (op == "listDatabaseNames") {
    auto names = client.list_database_names(filter, o);
    if (!names) return failed(std::move(names).error());
    return with_result(result_strings(*names));
  }
  auto dbs = client.list_databases(filter, o);
  if (!dbs) return failed(std::move(dbs).error());
  return with_result(result_documents(*dbs));
}

op_outcome run_client_operation(mongo::client& client, std::string_view op,
                                document_view arguments) {
  if (op == "listDatabases" || op == "listDatabaseNames" || op == "listDatabaseObjects") {
    return list_databases(client, op, arguments);
  }
  if (op == "dropDatabase") {
    args a(op, arguments);
    const auto name = a.string("database", true);
    if (a.refused()) return a.refusal();
    return nothing_or_failure(client.database(*name).drop());
  }
  if (op == "appendMetadata") {
    args a(op, arguments);
    const auto options = a.document("driverInfoOptions", true);
    if (a.refused()) return a.refusal();
    mongo::driver_info info;
    for (const auto& e : options) {
      std::string* field = e.key() == "name"       ? &info.name
                           : e.key() == "version"  ? &info.version
                           : e.key() == "platform" ? &info.platform
                                                   : nullptr;
      if (field == nullptr || !e.get_string()) {
        return runner_failure(errc::invalid_value, "appendMetadata: driverInfoOptions field `" +
                                                       str(e.key()) +
                                                       "` is not known or not a string");
      }
      *field = std::string(*e.get_string());
    }
    return nothing_or_failure(client.append_metadata(info));
  }
  return unsupported(str(op) + ": no such operation on a client");
}

op_outcome run_database_operation(const database_entity& db, std::string_view op,
                                  document_view arguments, const mongo::session* session) {
  args a(op, arguments);
  const auto& options = db.gaps;
  auto handle = *db.handle;  // with the entity's options
  if (session != nullptr) handle = handle.with_session(*session);
  if (auto t = a.timeout()) handle = handle.with_timeout(*t);
  if (op == "runCommand") {
    // runCommand inherits none of the database's options (the format's runCommand section).
    const auto command = a.document("command", true);
    (void)a.string("commandName", true);  // for languages that lose the order of keys
    std::optional<mongo::read_preference> where;
    if (auto rp = a.get("readPreference")) {
      auto d = rp->get_document();
      where = d ? parse_read_preference(*d) : std::nullopt;
      if (!d) {
        a.bad_type("readPreference", "a document");
      } else if (!where) {
        a.lacks("that shape of", "readPreference");
      }
    }
    if (a.refused()) return a.refusal();
    auto reply = where ? handle.run_command(command, *where) : handle.run_command(command);
    if (!reply) return failed(std::move(reply).error());
    return with_result(result_document(reply->view()));
  }
  if (op == "runCursorCommand" || op == "createCommandCursor") {
    const auto command = a.document("command", true);
    (void)a.string("commandName");  // for languages that lose the order of keys
    mongo::cursor_command_options o;
    o.batch_size = read_batch_size(a);
    if (auto n = a.integer("maxTimeMS")) o.max_time = std::chrono::milliseconds(*n);
    if (auto e = a.get("comment")) o.comment = *e;
    o.cursor_kind = a.cursor_type();
    o.timeout_mode = a.timeout_mode();
    if (auto rp = a.get("readPreference")) {
      auto d = rp->get_document();
      o.read_preference = d ? parse_read_preference(*d) : std::nullopt;
      if (!d) {
        a.bad_type("readPreference", "a document");
      } else if (!o.read_preference) {
        a.lacks("that shape of", "readPreference");
      }
    }
    if (a.refused()) return a.refusal();
    return cursor_result(handle.run_cursor_command(command, o), op == "createCommandCursor");
  }
  if (op == "aggregate") {
    if (auto gap = option_gap(options, op, op_kind::read); !gap.empty()) a.lacks(gap);
    const auto pipeline = a.documents("pipeline", true);
    const auto o = read_aggregate_options(a);
    if (a.refused()) return a.refusal();
    return all_documents(handle.aggregate(*pipeline, o));
  }
  if (op == "createCollection") {
    // The collection's name, and the create command's other fields as they are.
    const auto name = a.string("collection", true);
    bson::builder options;
    for (const auto& e : arguments) {
      if (e.key() == "collection") continue;
      if (auto v = a.get(e.key())) options.append_element(e.key(), *v);
    }
    if (a.refused()) return a.refusal();
    auto out = nothing_or_failure(handle.create_collection(*name, options.view()));
    // The collection entity a saveResultAsEntity makes: the database's collection, with its
    // options.
    if (!out.error) {
      out.collection = collection_entity{
          db.client, db.name, str(*name), {}, db.handle->collection(*name), db.gaps};
    }
    return out;
  }
  const bool known = op == "listCollections" || op == "listCollectionNames" ||
                     op == "listCollectionObjects" || op == "dropCollection";
  if (!known) return unsupported(str(op) + ": no such operation on a database");
  const auto kind = op == "dropCollection" ? op_kind::write : op_kind::read;
  // Refused with the arguments' refusals: a test file's error in them counts first.
  if (auto gap = option_gap(options, op, kind); !gap.empty()) a.lacks(gap);
  if (op == "dropCollection") {
    const auto name = a.string("collection", true);
    if (a.refused()) return a.refusal();
    return nothing_or_failure(handle.collection(*name).drop());
  }
  const auto filter = a.document("filter");
  mongo::list_collections_options o;
  if (op != "listCollectionNames") {
    o.name_only = a.boolean("nameOnly");
    o.batch_size = read_batch_size(a);
  }
  o.authorized_collections = a.boolean("authorizedCollections");
  if (auto e = a.get("comment")) o.comment = *e;
  if (a.refused()) return a.refusal();
  if (op == "listCollectionNames") {
    auto names = handle.list_collection_names(filter, o);
    if (!names) return failed(std::move(names).error());
    return with_result(result_strings(*names));
  }
  auto colls = handle.list_collections(filter, o);
  if (!colls) return failed(std::move(colls).error());
  return with_result(result_documents(*colls));
}

// ---- cursor operations -----------------------------------------------------------------------

op_outcome run_cursor_operation(cursor_entity& c, std::string_view op, document_view arguments) {
  const bool known = op == "iterateUntilDocumentOrError" || op == "iterateOnce" || op == "close";
  if (!known) return unsupported(str(op) + ": no such operation on a cursor");
  args a(op, arguments);
  const auto timeout = op == "close" ? a.timeout() : std::nullopt;
  if (a.refused()) return a.refusal();
  if (op == "close") {
    if (!c.cursor) return {};
    auto closed = c.cursor->close(timeout);  // killCursors when the server still holds it
    c.cursor.reset();
    return nothing_or_failure(std::move(closed));
  }
  if (!c.cursor) return runner_failure(errc::invalid_value, str(op) + ": the cursor is closed");
  // Both iterations are one next(): it steps through the batch and, when that is used up and the
  // server holds more, sends one getMore (oid has no tailable cursors, whose getMore may return
  // nothing). At the end there is no document and no error: no result.
  auto more = c.cursor->next();
  if (!more) return failed(std::move(more).error());
  if (!*more) return {};
  return with_result(result_document(c.cursor->current()));
}

// ---- GridFS bucket operations -----------------------------------------------------------------

// The bytes of a `{$$hexBytes: "..."}` argument; nullopt (and the args told) when it is not one.
std::optional<std::vector<std::uint8_t>> hex_bytes_argument(args& a, std::string_view key) {
  const auto d = a.document(key, true);
  const auto hex = d.find("$$hexBytes");
  std::optional<std::string_view> text;
  if (hex && hex->get_string()) text = *hex->get_string();
  const auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  if (!text || text->size() % 2 != 0 || !std::all_of(text->begin(), text->end(), is_hex)) {
    a.malformed(str(key) + " is not {$$hexBytes: <even count of hex digits>}");
    return std::nullopt;
  }
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < text->size(); i += 2) {
    out.push_back(
        static_cast<std::uint8_t>(std::stoi(std::string(text->substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A download's bytes as the result: `{v: BinData(0, bytes)}`, which $$matchesHexBytes reads.
op_outcome downloaded(mongo::outcome<std::uint64_t> r, const std::string& bytes) {
  if (!r) return failed(std::move(r).error());
  bson::builder b;
  b.append_binary("v", bson::binary_subtype::generic,
                  {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  return with_result(std::move(b).extract());
}

op_outcome run_bucket_operation(mongo::client& client, const bucket_entity& entity,
                                std::string_view op, document_view arguments) {
  args a(op, arguments);
  mongo::gridfs_bucket_options options;
  for (const auto& e : entity.options.view()) {
    if (e.key() == "bucketName" && e.get_string()) {
      options.bucket_name = std::string(*e.get_string());
    } else if (e.key() == "chunkSizeBytes" && e.get_int32()) {
      options.chunk_size_bytes = *e.get_int32();
    } else if (e.key() == "writeConcern" && e.get_document()) {
      std::string bad;
      auto wc = parse_write_concern(*e.get_document(), bad);
      if (!wc) return unsupported(str(op) + ": no bucket-level `writeConcern" + bad + "`");
      options.write_concern = *wc;
    } else if (e.key() == "readPreference" && e.get_document()) {
      options.read_preference = parse_read_preference(*e.get_document());
      if (!options.read_preference)
        return unsupported(str(op) + ": no bucket-level `readPreference`");
    } else {
      return unsupported(str(op) + ": no bucket-level `" + str(e.key()) + "`");
    }
  }
  // timeoutMS of the operation: a bucket of the database with it (a bucket inherits its
  // database's), which is the same.
  auto db = client.database(entity.database);
  if (auto t = a.timeout()) db = db.with_timeout(*t);
  auto bucket = db.gridfs_bucket(options);
  const auto upload_options = [&](mongo::gridfs_upload_options& o) {
    if (auto n = a.integer("chunkSizeBytes")) o.chunk_size_bytes = static_cast<std::int32_t>(*n);
    o.metadata = a.document("metadata");
    // disableMD5: oid computes no MD5 unless asked, which `true` restates and `false` asks.
    if (auto md5 = a.boolean("disableMD5")) o.md5 = !*md5;
    if (a.get("contentType")) a.lacks("upload", "contentType");
    if (a.get("aliases")) a.lacks("upload", "aliases");
  };
  if (op == "upload") {
    const auto filename = a.string("filename", true);
    auto bytes = hex_bytes_argument(a, "source");
    mongo::gridfs_upload_options o;
    upload_options(o);
    if (a.refused() || !bytes) return a.refusal();
    auto id = bucket.upload_from_bytes(*filename, *bytes, o);
    if (!id) return failed(std::move(id).error());
    bson::builder b;
    b.append_object_id("v", *id);
    return with_result(std::move(b).extract());
  }
  if (op == "uploadWithId") {
    const auto id = a.get("id");
    const auto filename = a.string("filename", true);
    auto bytes = hex_bytes_argument(a, "source");
    mongo::gridfs_upload_options o;
    upload_options(o);
    if (!id) a.malformed("uploadWithId without id");
    if (a.refused() || !bytes) return a.refusal();
    const std::string data(bytes->begin(), bytes->end());
    std::istringstream in(data);
    return nothing_or_failure(bucket.upload_from_stream_with_id(*id, *filename, in, o));
  }
  if (op == "download") {
    const auto id = a.get("id");
    if (!id) a.malformed("download without id");
    if (a.refused()) return a.refusal();
    std::ostringstream out;
    auto r = bucket.download_to_stream(*id, out);
    return downloaded(std::move(r), out.str());
  }
  if (op == "downloadByName") {
    const auto filename = a.string("filename", true);
    const auto revision = a.integer("revision");
    if (a.refused()) return a.refusal();
    std::ostringstream out;
    auto r = bucket.download_to_stream_by_name(*filename, out,
                                               static_cast<std::int32_t>(revision.value_or(-1)));
    return downloaded(std::move(r), out.str());
  }
  if (op == "delete") {
    const auto id = a.get("id");
    if (!id) a.malformed("delete without id");
    if (a.refused()) return a.refusal();
    return nothing_or_failure(bucket.delete_file(*id));
  }
  if (op == "deleteByName") {
    const auto filename = a.string("filename", true);
    if (a.refused()) return a.refusal();
    return nothing_or_failure(bucket.delete_by_name(*filename));
  }
  if (op == "rename") {
    const auto id = a.get("id");
    const auto name = a.string("newFilename", true);
    if (!id) a.malformed("rename without id");
    if (a.refused()) return a.refusal();
    return nothing_or_failure(bucket.rename(*id, *name));
  }
  if (op == "renameByName") {
    const auto filename = a.string("filename", true);
    const auto name = a.string("newFilename", true);
    if (a.refused()) return a.refusal();
    return nothing_or_failure(bucket.rename_by_name(*filename, *name));
  }
  if (op == "drop") {
    if (a.refused()) return a.refusal();
    return nothing_or_failure(bucket.drop());
  }
  if (op == "find") {
    // The files collection's documents (the GridFS specification's GridFSFindOptions).
    const auto filter = a.document("filter", true);
    mongo::find_options o;
    o.sort = a.document("sort");
    if (auto n = a.integer("skip")) o.skip = *n;
    if (auto n = a.integer("limit")) o.limit = *n;
    o.batch_size = read_batch_size(a);
    o.max_time = a.max_time();
    o.no_cursor_timeout = a.boolean("noCursorTimeout").value_or(false);
    if (a.refused()) return a.refusal();
    return all_documents(bucket.find(filter, o));
  }
  return unsupported(str(op) + ": no such operation on a bucket");
}

mongo::client* client_of(entity_map& entities, const std::string& id) {
  auto* c = entities.find<client_entity>(id);
  return c && c->client ? &*c->client : nullptr;
}

}  // namespace

entity_gaps apply_entity_options(bson::document_view options, std::string_view level,
                                 mongo::database& handle, const entity_gaps& inherited) {
  return apply_options(options, level, handle, inherited);
}

entity_gaps apply_entity_options(bson::document_view options, std::string_view level,
                                 mongo::collection& handle, const entity_gaps& inherited) {
  return apply_options(options, level, handle, inherited);
}

op_outcome run_entity_operation(entity_map& entities, std::string_view object,
                                std::string_view name, bson::document_view given) {
  // `session`: the session entity the operation runs in. The handles are bound to it, and the
  // other arguments go on without it.
  const mongo::session* session = nullptr;
  bson::document rest;
  bson::document_view arguments = given;
  if (const auto s = given.find("session")) {
    const auto id = s->get_string();
    if (!id) return runner_failure(errc::invalid_value, "`session` is not an entity id");
    auto* entity = entities.find<session_entity>(*id);
    if (!entity) {
      return runner_failure(errc::key_not_found, "no session entity `" + str(*id) + "`");
    }
    session = entity->session.get();
    bson::builder b;
    for (const auto& e : given) {
      if (e.key() != "session") b.append_element(e);
    }
    rest = std::move(b).extract();
    arguments = rest.view();
  }
  if (auto* coll = entities.find<collection_entity>(object)) {
    if (!coll->handle || !client_of(entities, coll->client)) {
      return runner_failure(errc::key_not_found, "collection `" + str(object) +
                                                     "`: no client entity `" + coll->client + "`");
    }
    // The entity's handle carries its options (and its database's); the operation adds its
    // session.
    collection_context c{*coll->handle, coll->gaps};
    if (session != nullptr) c.coll = c.coll.with_session(*session);
    // Inside a transaction an operation's write concern is the transaction's (oid sends none
    // with it): the write is acknowledged whatever the collection's says.
    c.unacknowledged = !c.coll.write_concern().is_acknowledged() &&
                       !(session != nullptr && session->in_transaction());
    return run_collection_operation(c, name, arguments);
  }
  if (auto* db = entities.find<database_entity>(object)) {
    if (!db->handle || !client_of(entities, db->client)) {
      return runner_failure(errc::key_not_found, "database `" + str(object) +
                                                     "`: no client entity `" + db->client + "`");
    }
    return run_database_operation(*db, name, arguments, session);
  }
  if (auto* c = entities.find<client_entity>(object)) {
    if (!c->client) {
      return runner_failure(errc::key_not_found, "client `" + str(object) + "` is not made");
    }
    if (session != nullptr) {
      auto bound = c->client->with_session(*session);
      return run_client_operation(bound, name, arguments);
    }
    return run_client_operation(*c->client, name, arguments);
  }
  if (auto* cur = entities.find<cursor_entity>(object)) {
    return run_cursor_operation(*cur, name, arguments);
  }
  if (auto* bucket = entities.find<bucket_entity>(object)) {
    auto* client = client_of(entities, bucket->client);
    if (!client) {
      return runner_failure(
          errc::key_not_found,
          "bucket `" + str(object) + "`: no client entity `" + bucket->client + "`");
    }
    return run_bucket_operation(*client, *bucket, name, arguments);
  }
  if (entities.contains(object)) {
    return unsupported(str(name) + ": no such operation on this kind of entity");
  }
  return runner_failure(errc::key_not_found, "no entity named `" + str(object) + "`");
}

}  // namespace oid::unified
