// The BSON part of MongoDB's driver benchmark ("DriverBench"), oid and libbson side by side in
// one binary, on the specification's three documents (flat_bson, deep_bson, full_bson).
//
// Each task does 10,000 operations on one document per iteration; after a warm-up, at least 10
// iterations are timed, and the score is the task size (the specification's document size times
// 10,000, in MB of 1,000,000 bytes) divided by the median iteration time. The 10th and 90th
// percentiles are printed too.
//
// Why a hand-written loop and not Google Benchmark (which bench/objectid_bench.cpp uses): the
// specification fixes the unit of work (an iteration of exactly 10,000 operations), the number
// of iterations and the statistic (median, p10, p90 of iteration times); Google Benchmark picks
// its own iteration counts and reports means of repetitions. Ten timed iterations of a fixed size
// are simplest to get right with std::chrono::steady_clock around a plain loop. oid's and
// libbson's iterations alternate, so a burst of load from other processes hits both alike.
//
// Before anything is timed, every task checks that both libraries do the same work and agree:
// the same BSON bytes from the JSON text, JSON texts that parse to the same document, the same
// bytes built from the in-memory values, the same count and checksum of the values read, and
// both validators accepting the document. A disagreement ends the program with status 1.
//
//   bson_driverbench [--data DIR] [--iterations N] [--warmup N] [--ops N] [--clock wall|cpu]
//                    [--filter TEXT] [--json FILE]
//
// DIR holds flat_bson.json, deep_bson.json and full_bson.json (default: $OID_DRIVERBENCH_DIR, else
// driverbench/extended_bson where scripts/spec-data.sh unpacked the DriverBench data).
// scripts/bench-bson.sh builds and runs this with several runs and prints the medians.
#include <bson/bson.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bson/detail/validate.hpp"  // validate_many, the client's batch validation

namespace {

namespace ob = oid::bson;

// ---- Keeping the optimiser honest -----------------------------------------------------------

// Makes the compiler believe `v` is read, so the work producing it cannot be dropped.
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "g"(&v) : "memory");
}

// ---- The in-memory values the "building" task appends ----------------------------------------

/// One element decoded into ordinary C++ values: a small recursive tagged structure, the kind of
/// thing an application holds before it makes a document. Both libraries build from the same tree.
struct node {
  ob::type t = ob::type::null;
  std::string key;
  std::string text;   // string, code, symbol, regex pattern, binary bytes, DBPointer namespace
  std::string text2;  // regex options
  std::uint8_t subtype = 0;
  std::int64_t i = 0;  // int32, int64, date, bool, timestamp (t << 32 | i)
  double d = 0;
  std::array<std::uint8_t, 12> id{};
  std::uint64_t lo = 0, hi = 0;  // decimal128
  std::vector<node> children;    // document, array, code-with-scope scope
};

std::vector<node> decode_tree(ob::document_view doc) {
  std::vector<node> out;
  for (const ob::element& e : doc) {
    node n;
    n.t = e.type();
    n.key = std::string(e.key());
    switch (e.type()) {
    case ob::type::double_: n.d = *e.get_double(); break;
    case ob::type::string: n.text = std::string(*e.get_string()); break;
    case ob::type::document: n.children = decode_tree(*e.get_document()); break;
    case ob::type::array: n.children = decode_tree(*e.get_array()); break;
    case ob::type::binary: {
      const ob::binary_view b = *e.get_binary();
      n.subtype = b.subtype;
      n.text.assign(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size());
      break;
    }
    case ob::type::object_id: n.id = e.get_object_id()->bytes(); break;
    case ob::type::boolean: n.i = *e.get_bool() ? 1 : 0; break;
    case ob::type::date_time: n.i = *e.get_date_time(); break;
    case ob::type::regex: {
      const ob::regex_view r = *e.get_regex();
      n.text = std::string(r.pattern);
      n.text2 = std::string(r.options);
      break;
    }
    case ob::type::db_pointer: {
      const ob::db_pointer_view p = *e.get_db_pointer();
      n.text = std::string(p.ref);
      n.id = p.id.bytes();
      break;
    }
    case ob::type::javascript: n.text = std::string(*e.get_javascript()); break;
    case ob::type::symbol: n.text = std::string(*e.get_symbol()); break;
    case ob::type::javascript_with_scope: {
      const ob::code_with_scope_view c = *e.get_javascript_with_scope();
      n.text = std::string(c.code);
      n.children = decode_tree(c.scope);
      break;
    }
    case ob::type::int32: n.i = *e.get_int32(); break;
    case ob::type::timestamp: {
      const ob::timestamp_value ts = *e.get_timestamp();
      n.i = static_cast<std::int64_t>(std::uint64_t{ts.t} << 32 | ts.i);
      break;
    }
    case ob::type::int64: n.i = *e.get_int64(); break;
    case ob::type::decimal128: {
      const ob::decimal128 v = *e.get_decimal128();
      n.lo = v.low;
      n.hi = v.high;
      break;
    }
    case ob::type::undefined:
    case ob::type::null:
    case ob::type::min_key:
    case ob::type::max_key: break;
    }
    out.push_back(std::move(n));
  }
  return out;
}

// oid: typed appends, nested scopes back-patched in place, code-with-scope too (its scope is
// opened in place like a document). libbson has no such call: its append takes a finished bson_t,
// so its walk builds each scope in a bson_t of its own first.
void oid_build(ob::builder& b, const std::vector<node>& nodes) {
  for (const node& n : nodes) {
    switch (n.t) {
    case ob::type::double_: b.append_double(n.key, n.d); break;
    case ob::type::string: b.append_string(n.key, n.text); break;
    case ob::type::document:
      b.open_document(n.key);
      oid_build(b, n.children);
      b.close();
      break;
    case ob::type::array:
      b.open_array(n.key);
      oid_build(b, n.children);
      b.close();
      break;
    case ob::type::binary:
      b.append_binary(n.key, n.subtype,
                      {reinterpret_cast<const std::uint8_t*>(n.text.data()), n.text.size()});
      break;
    case ob::type::undefined: b.append_undefined(n.key); break;
    case ob::type::object_id: b.append_object_id(n.key, oid::object_id(n.id)); break;
    case ob::type::boolean: b.append_bool(n.key, n.i != 0); break;
    case ob::type::date_time: b.append_date_time(n.key, n.i); break;
    case ob::type::null: b.append_null(n.key); break;
    case ob::type::regex: b.append_regex(n.key, n.text, n.text2); break;
    case ob::type::db_pointer: b.append_db_pointer(n.key, n.text, oid::object_id(n.id)); break;
    case ob::type::javascript: b.append_javascript(n.key, n.text); break;
    case ob::type::symbol: b.append_symbol(n.key, n.text); break;
    case ob::type::javascript_with_scope:
      b.open_javascript_with_scope(n.key, n.text);
      oid_build(b, n.children);
      b.close();
      break;
    case ob::type::int32: b.append_int32(n.key, static_cast<std::int32_t>(n.i)); break;
    case ob::type::timestamp: {
      const auto u = static_cast<std::uint64_t>(n.i);
      b.append_timestamp(n.key, {static_cast<std::uint32_t>(u >> 32),
                                 static_cast<std::uint32_t>(u & 0xFFFFFFFFu)});
      break;
    }
    case ob::type::int64: b.append_int64(n.key, n.i); break;
    case ob::type::decimal128: b.append_decimal128(n.key, {n.lo, n.hi}); break;
    case ob::type::min_key: b.append_min_key(n.key); break;
    case ob::type::max_key: b.append_max_key(n.key); break;
    }
  }
}

int key_len(const node& n) { return static_cast<int>(n.key.size()); }

// libbson: the bson_append_* call for each type, with key lengths passed (no strlen).
bool bson_build(bson_t* b, const std::vector<node>& nodes) {
  bool ok = true;
  for (const node& n : nodes) {
    const char* k = n.key.c_str();
    const int kl = key_len(n);
    switch (n.t) {
    case ob::type::double_: ok &= bson_append_double(b, k, kl, n.d); break;
    case ob::type::string:
      ok &= bson_append_utf8(b, k, kl, n.text.data(), static_cast<int>(n.text.size()));
      break;
    case ob::type::document: {
      bson_t child;
      ok &= bson_append_document_begin(b, k, kl, &child);
      ok &= bson_build(&child, n.children);
      ok &= bson_append_document_end(b, &child);
      break;
    }
    case ob::type::array: {
      bson_t child;
      ok &= bson_append_array_begin(b, k, kl, &child);
      ok &= bson_build(&child, n.children);
      ok &= bson_append_array_end(b, &child);
      break;
    }
    case ob::type::binary:
      ok &= bson_append_binary(b, k, kl, static_cast<bson_subtype_t>(n.subtype),
                               reinterpret_cast<const std::uint8_t*>(n.text.data()),
                               static_cast<std::uint32_t>(n.text.size()));
      break;
    case ob::type::undefined: ok &= bson_append_undefined(b, k, kl); break;
    case ob::type::object_id: {
      bson_oid_t id;
      std::memcpy(id.bytes, n.id.data(), 12);
      ok &= bson_append_oid(b, k, kl, &id);
      break;
    }
    case ob::type::boolean: ok &= bson_append_bool(b, k, kl, n.i != 0); break;
    case ob::type::date_time: ok &= bson_append_date_time(b, k, kl, n.i); break;
    case ob::type::null: ok &= bson_append_null(b, k, kl); break;
    case ob::type::regex:
      ok &= bson_append_regex_w_len(b, k, kl, n.text.data(), static_cast<int>(n.text.size()),
                                    n.text2.c_str());
      break;
    case ob::type::db_pointer: {
      bson_oid_t id;
      std::memcpy(id.bytes, n.id.data(), 12);
      ok &= bson_append_dbpointer(b, k, kl, n.text.c_str(), &id);
      break;
    }
    case ob::type::javascript: ok &= bson_append_code(b, k, kl, n.text.c_str()); break;
    case ob::type::symbol:
      ok &= bson_append_symbol(b, k, kl, n.text.data(), static_cast<int>(n.text.size()));
      break;
    case ob::type::javascript_with_scope: {
      bson_t scope;
      bson_init(&scope);
      ok &= bson_build(&scope, n.children);
      ok &= bson_append_code_with_scope(b, k, kl, n.text.c_str(), &scope);
      bson_destroy(&scope);
      break;
    }
    case ob::type::int32: ok &= bson_append_int32(b, k, kl, static_cast<std::int32_t>(n.i)); break;
    case ob::type::timestamp: {
      const auto u = static_cast<std::uint64_t>(n.i);
      ok &= bson_append_timestamp(b, k, kl, static_cast<std::uint32_t>(u >> 32),
                                  static_cast<std::uint32_t>(u & 0xFFFFFFFFu));
      break;
    }
    case ob::type::int64: ok &= bson_append_int64(b, k, kl, n.i); break;
    case ob::type::decimal128: {
      const bson_decimal128_t v{n.lo, n.hi};
      ok &= bson_append_decimal128(b, k, kl, &v);
      break;
    }
    case ob::type::min_key: ok &= bson_append_minkey(b, k, kl); break;
    case ob::type::max_key: ok &= bson_append_maxkey(b, k, kl); break;
    }
  }
  return ok;
}

// ---- Reading every value ---------------------------------------------------------------------

/// What a read walk saw: how many values, and a checksum over them that both walks compute the
/// same way (so they must have read the same values, and the reads cannot be optimised away).
struct tally {
  std::uint64_t values = 0;
  std::uint64_t sum = 0;
  friend bool operator==(const tally&, const tally&) = default;
};

std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

void oid_read(ob::document_view doc, tally& t) {
  for (const ob::element& e : doc) {
    ++t.values;
    t.sum += e.key().size();
    switch (e.type()) {
    case ob::type::double_: t.sum += bits(*e.get_double()); break;
    case ob::type::string: t.sum += e.get_string()->size(); break;
    case ob::type::document: oid_read(*e.get_document(), t); break;
    case ob::type::array: oid_read(*e.get_array(), t); break;
    case ob::type::binary: {
      const ob::binary_view b = *e.get_binary();
      t.sum += b.bytes.size() + b.subtype;
      break;
    }
    case ob::type::object_id: t.sum += e.get_object_id()->bytes()[11]; break;
    case ob::type::boolean: t.sum += *e.get_bool() ? 1 : 0; break;
    case ob::type::date_time: t.sum += static_cast<std::uint64_t>(*e.get_date_time()); break;
    case ob::type::regex: {
      const ob::regex_view r = *e.get_regex();
      t.sum += r.pattern.size() + r.options.size();
      break;
    }
    case ob::type::db_pointer: {
      const ob::db_pointer_view p = *e.get_db_pointer();
      t.sum += p.ref.size() + p.id.bytes()[11];
      break;
    }
    case ob::type::javascript: t.sum += e.get_javascript()->size(); break;
    case ob::type::symbol: t.sum += e.get_symbol()->size(); break;
    case ob::type::javascript_with_scope: {
      const ob::code_with_scope_view c = *e.get_javascript_with_scope();
      t.sum += c.code.size();
      oid_read(c.scope, t);
      break;
    }
    case ob::type::int32: t.sum += static_cast<std::uint64_t>(*e.get_int32()); break;
    case ob::type::timestamp: {
      const ob::timestamp_value ts = *e.get_timestamp();
      t.sum += std::uint64_t{ts.t} + ts.i;
      break;
    }
    case ob::type::int64: t.sum += static_cast<std::uint64_t>(*e.get_int64()); break;
    case ob::type::decimal128: {
      const ob::decimal128 v = *e.get_decimal128();
      t.sum += v.low ^ v.high;
      break;
    }
    case ob::type::undefined:
    case ob::type::null:
    case ob::type::min_key:
    case ob::type::max_key: break;
    }
  }
}

void bson_read(bson_iter_t* it, tally& t) {
  while (bson_iter_next(it)) {
    ++t.values;
    t.sum += bson_iter_key_len(it);
    switch (bson_iter_type(it)) {
    case BSON_TYPE_DOUBLE: t.sum += bits(bson_iter_double(it)); break;
    case BSON_TYPE_UTF8: {
      std::uint32_t len = 0;
      bson_iter_utf8(it, &len);
      t.sum += len;
      break;
    }
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
      bson_iter_t child;
      if (bson_iter_recurse(it, &child)) bson_read(&child, t);
      break;
    }
    case BSON_TYPE_BINARY: {
      bson_subtype_t st;
      std::uint32_t len = 0;
      const std::uint8_t* data = nullptr;
      bson_iter_binary(it, &st, &len, &data);
      t.sum += len + static_cast<std::uint64_t>(st);
      break;
    }
    case BSON_TYPE_OID: t.sum += bson_iter_oid(it)->bytes[11]; break;
    case BSON_TYPE_BOOL: t.sum += bson_iter_bool(it) ? 1 : 0; break;
    case BSON_TYPE_DATE_TIME: t.sum += static_cast<std::uint64_t>(bson_iter_date_time(it)); break;
    case BSON_TYPE_REGEX: {
      const char* options = nullptr;
      const char* pattern = bson_iter_regex(it, &options);
      t.sum += std::strlen(pattern) + std::strlen(options);
      break;
    }
    case BSON_TYPE_DBPOINTER: {
      std::uint32_t len = 0;
      const char* coll = nullptr;
      const bson_oid_t* id = nullptr;
      bson_iter_dbpointer(it, &len, &coll, &id);
      t.sum += len + id->bytes[11];
      break;
    }
    case BSON_TYPE_CODE: {
      std::uint32_t len = 0;
      bson_iter_code(it, &len);
      t.sum += len;
      break;
    }
    case BSON_TYPE_SYMBOL: {
      std::uint32_t len = 0;
      bson_iter_symbol(it, &len);
      t.sum += len;
      break;
    }
    case BSON_TYPE_CODEWSCOPE: {
      std::uint32_t len = 0, scope_len = 0;
      const std::uint8_t* scope = nullptr;
      bson_iter_codewscope(it, &len, &scope_len, &scope);
      t.sum += len;
      bson_iter_t child;
      if (bson_iter_init_from_data(&child, scope, scope_len)) bson_read(&child, t);
      break;
    }
    case BSON_TYPE_INT32: t.sum += static_cast<std::uint64_t>(bson_iter_int32(it)); break;
    case BSON_TYPE_TIMESTAMP: {
      std::uint32_t ts = 0, inc = 0;
      bson_iter_timestamp(it, &ts, &inc);
      t.sum += std::uint64_t{ts} + inc;
      break;
    }
    case BSON_TYPE_INT64: t.sum += static_cast<std::uint64_t>(bson_iter_int64(it)); break;
    case BSON_TYPE_DECIMAL128: {
      bson_decimal128_t v;
      bson_iter_decimal128(it, &v);
      t.sum += v.low ^ v.high;
      break;
    }
    default: break;  // undefined, null, min key, max key: no value bytes
    }
  }
}

// ---- Timing ----------------------------------------------------------------------------------

enum class clock_kind { wall, cpu };

double now_seconds(clock_kind c) {
  if (c == clock_kind::cpu) {
    // The thread's own CPU time: on a machine shared with other work it leaves out the time
    // the scheduler gave to others, which wall time cannot.
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct settings {
  std::string data_dir;
  int iterations = 10;
  int warmup = 1;
  int ops = 10000;
  clock_kind clock = clock_kind::wall;
  std::string filter;
  std::string json_file;
};

/// Iteration times in seconds, and the statistics the specification asks for.
struct samples {
  std::vector<double> seconds;

  double percentile(double p) const {
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    const double pos = p * static_cast<double>(s.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, s.size() - 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
  }
};

/// Runs `op` `ops` times per iteration for oid and libbson alternately: `warmup` untimed
/// iterations each, then `iterations` timed ones each.
template <class OidOp, class BsonOp>
std::pair<samples, samples> time_pair(const settings& s, OidOp&& oid_op, BsonOp&& bson_op) {
  std::pair<samples, samples> out;
  auto one = [&](auto& op) {
    const double start = now_seconds(s.clock);
    for (int i = 0; i < s.ops; ++i) op();
    return now_seconds(s.clock) - start;
  };
  for (int w = 0; w < s.warmup; ++w) {
    one(oid_op);
    one(bson_op);
  }
  for (int i = 0; i < s.iterations; ++i) {
    // Alternate which library goes first, so neither always runs right after the other.
    if (i % 2 == 0) {
      out.first.seconds.push_back(one(oid_op));
      out.second.seconds.push_back(one(bson_op));
    } else {
      out.second.seconds.push_back(one(bson_op));
      out.first.seconds.push_back(one(oid_op));
    }
  }
  return out;
}

// ---- The documents and the rows ----------------------------------------------------------------

struct dataset {
  std::string name;        // "flat", "deep", "full"
  std::size_t spec_size;   // the specification's document size in bytes
  std::string json;        // the Extended JSON text as read from the file
  ob::document doc;        // oid's BSON of it
  bson_t* bdoc = nullptr;  // libbson's BSON of it (same bytes, checked)
  std::vector<node> tree;
};

struct target {
  double ratio;  // 0: none
  const char* text;
};

struct row {
  std::string doc, task;
  double task_mb = 0;
  samples oid_s, bson_s;
  target want{};
  std::string note;
};

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "bson_driverbench: " << what << '\n';
  std::exit(1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail("cannot read " + path +
         " (the DriverBench documents: pass --data DIR or set OID_DRIVERBENCH_DIR)");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::span<const std::uint8_t> bytes_of(const bson_t* b) { return {bson_get_data(b), b->len}; }

// Parses Extended JSON with oid's reader, for comparing two JSON texts by their meaning.
std::vector<std::uint8_t> reparse(const std::string& json, const char* who) {
  auto r = ob::from_json(json);
  if (!r) fail(std::string(who) + "'s Extended JSON does not read back: " + json.substr(0, 200));
  return std::vector<std::uint8_t>(r->bytes().begin(), r->bytes().end());
}

std::vector<std::uint8_t> reparse_libbson(const std::string& json, const char* who) {
  bson_error_t err;
  bson_t* b = bson_new_from_json(reinterpret_cast<const std::uint8_t*>(json.data()),
                                 static_cast<ssize_t>(json.size()), &err);
  if (b == nullptr)
    fail(std::string(who) + "'s Extended JSON: libbson cannot read it: " + err.message);
  auto sp = bytes_of(b);
  std::vector<std::uint8_t> out(sp.begin(), sp.end());
  bson_destroy(b);
  return out;
}

bool selected(const settings& s, const std::string& doc, const std::string& task) {
  return s.filter.empty() || (doc + "/" + task).find(s.filter) != std::string::npos;
}

void run_dataset(const settings& s, dataset& d, std::vector<row>& rows) {
  const double task_mb = static_cast<double>(d.spec_size) * s.ops / 1e6;
  const ob::document_view view = d.doc.view();
  const auto add = [&](const char* task, std::pair<samples, samples> t, target want,
                       std::string note = {}) {
    rows.push_back(
        {d.name, task, task_mb, std::move(t.first), std::move(t.second), want, std::move(note)});
    std::cerr << "  " << d.name << '/' << task << " done\n";
  };

  // (1) Extended JSON text to BSON.
  if (selected(s, d.name, "json_to_bson")) {
    const std::string& text = d.json;
    const auto* data = reinterpret_cast<const std::uint8_t*>(text.data());
    add("json_to_bson",
        time_pair(
            s,
            [&] {
              auto r = ob::from_json(text);
              keep(r);
            },
            [&] {
              bson_t b;
              bson_error_t err;
              const bool ok = bson_init_from_json(&b, reinterpret_cast<const char*>(data),
                                                  static_cast<ssize_t>(text.size()), &err);
              keep(ok);
              bson_destroy(&b);
            }),
        {4, ">= 4x"});
  }

  // (2) BSON to canonical and relaxed Extended JSON; each call allocates its string, as
  // libbson's does (and frees it).
  for (const bool canonical : {true, false}) {
    const char* task = canonical ? "bson_to_canonical" : "bson_to_relaxed";
    if (!selected(s, d.name, task)) continue;
    const ob::json_mode mode = canonical ? ob::json_mode::canonical : ob::json_mode::relaxed;
    add(task,
        time_pair(
            s,
            [&] {
              std::string j = ob::to_json(view, mode);
              keep(j);
            },
            [&] {
              std::size_t len = 0;
              char* j = canonical ? bson_as_canonical_extended_json(d.bdoc, &len)
                                  : bson_as_relaxed_extended_json(d.bdoc, &len);
              keep(j);
              bson_free(j);
            }),
        {5, ">= 5x"});
  }

  // (3) Building the document from values in memory.
  if (selected(s, d.name, "build")) {
    add("build",
        time_pair(
            s,
            [&] {
              ob::builder b;
              oid_build(b, d.tree);
              ob::document out = std::move(b).extract();
              keep(out);
            },
            [&] {
              bson_t b;
              bson_init(&b);
              const bool ok = bson_build(&b, d.tree);
              keep(ok);
              bson_destroy(&b);
            }),
        {1.5, ">= 1.5x"});
  }

  // (4) Reading every value, recursively.
  if (selected(s, d.name, "read")) {
    add("read",
        time_pair(
            s,
            [&] {
              tally t;
              oid_read(view, t);
              keep(t);
            },
            [&] {
              tally t;
              bson_iter_t it;
              if (bson_iter_init(&it, d.bdoc)) bson_read(&it, t);
              keep(t);
            }),
        {1.2, ">= 1.2x"});
  }

  // (5) Validation with UTF-8 checks.
  if (selected(s, d.name, "validate")) {
    const bool scope_hides = d.name == "full";
    add("validate",
        time_pair(
            s,
            [&] {
              auto r = ob::validate(view.bytes());
              keep(r);
            },
            [&] {
              std::size_t offset = 0;
              const bool ok = bson_validate(d.bdoc, BSON_VALIDATE_UTF8, &offset);
              keep(ok);
            }),
        scope_hides ? target{0, "- (see note)"} : target{3, ">= 3x"},
        scope_hides ? "libbson 1.23 stops checking at the first code-with-scope element, so its "
                      "figure is not a validation speed"
                    : "");
  }

  // (6) Validation of a cursor batch: 100 copies of the document side by side in one buffer, as
  // a getMore reply holds them. oid validates the 100 in one call (validate_many, as the client
  // does, four interleaved walks); libbson has no such call and validates them one by one. An
  // operation is still one document: every 100th oid operation validates the whole batch.
  if (selected(s, d.name, "validate_batch")) {
    const bool scope_hides = d.name == "full";
    constexpr std::size_t copies = 100;
    const auto one = view.bytes();
    std::vector<std::uint8_t> batch;
    std::vector<ob::detail::doc_span> spans;
    for (std::size_t i = 0; i < copies; ++i) {
      spans.push_back(
          {static_cast<std::uint32_t>(batch.size()), static_cast<std::uint32_t>(one.size())});
      batch.insert(batch.end(), one.begin(), one.end());
    }
    bson_t bdocs[copies];  // views into `batch` (a std::vector would drop bson_t's alignment)
    for (std::size_t i = 0; i < copies; ++i) {
      if (!bson_init_static(&bdocs[i], batch.data() + spans[i].offset, one.size())) {
        fail(d.name + ": libbson does not take a copy of the document");
      }
    }
    if (ob::detail::validate_many(batch, spans, {}) != copies) {
      fail(d.name + ": validate_many rejects the batch");
    }
    std::size_t oid_at = 0, lib_at = 0;
    add("validate_batch",
        time_pair(
            s,
            [&] {
              if (++oid_at == copies) {
                oid_at = 0;
                keep(ob::detail::validate_many(batch, spans, {}));
              }
            },
            [&] {
              std::size_t offset = 0;
              keep(bson_validate(&bdocs[lib_at], BSON_VALIDATE_UTF8, &offset));
              if (++lib_at == copies) lib_at = 0;
            }),
        scope_hides ? target{0, "- (see note)"} : target{3, ">= 3x"},
        scope_hides ? "libbson 1.23 stops checking at the first code-with-scope element (and oid "
                      "leaves such a document to its one-walk validator)"
                    : "");
  }
}

// Every task's outputs, compared between the libraries before anything is timed.
void check_agreement(const dataset& d) {
  const ob::document_view view = d.doc.view();
  const auto oid_bytes = view.bytes();
  const auto lib_bytes = bytes_of(d.bdoc);
  const std::string who = d.name + ": ";

  // (1) The same BSON from the same text.
  if (!std::equal(oid_bytes.begin(), oid_bytes.end(), lib_bytes.begin(), lib_bytes.end())) {
    fail(who + "oid and libbson read the JSON into different BSON");
  }
  // (2) JSON texts with the same meaning: each parses (with either library) to the same document
  // as the other's.
  for (const bool canonical : {true, false}) {
    const std::string o =
        ob::to_json(view, canonical ? ob::json_mode::canonical : ob::json_mode::relaxed);
    std::size_t len = 0;
    char* raw = canonical ? bson_as_canonical_extended_json(d.bdoc, &len)
                          : bson_as_relaxed_extended_json(d.bdoc, &len);
    const std::string l(raw, len);
    bson_free(raw);
    const auto oo = reparse(o, "oid"), ol = reparse(l, "libbson");
    const auto lo = reparse_libbson(o, "oid"), ll = reparse_libbson(l, "libbson");
    if (oo != ol || lo != ll || oo != lo) {
      fail(who + (canonical ? "canonical" : "relaxed") +
           " Extended JSON differs in meaning between oid and libbson");
    }
    if (canonical && !std::equal(oo.begin(), oo.end(), oid_bytes.begin(), oid_bytes.end())) {
      fail(who + "canonical Extended JSON does not read back to the document");
    }
  }
  // (3) Both builders make the document's bytes from the tree.
  {
    ob::builder b;
    oid_build(b, d.tree);
    if (!(b.view() == view)) fail(who + "oid's builder made different bytes");
    bson_t lb;
    bson_init(&lb);
    if (!bson_build(&lb, d.tree)) fail(who + "a libbson append failed");
    const auto sp = bytes_of(&lb);
    const bool same = std::equal(sp.begin(), sp.end(), oid_bytes.begin(), oid_bytes.end());
    bson_destroy(&lb);
    if (!same) fail(who + "libbson's appends made different bytes");
  }
  // (4) The same values read.
  {
    tally a, b;
    oid_read(view, a);
    bson_iter_t it;
    if (!bson_iter_init(&it, d.bdoc)) fail(who + "bson_iter_init failed");
    bson_read(&it, b);
    if (!(a == b) || a.values == 0) {
      fail(who + "the read walks disagree (oid " + std::to_string(a.values) + " values, libbson " +
           std::to_string(b.values) + ")");
    }
  }
  // (5) Both validators accept it.
  if (!ob::validate(oid_bytes)) fail(who + "oid::bson::validate rejects the document");
  std::size_t offset = 0;
  if (!bson_validate(d.bdoc, BSON_VALIDATE_UTF8, &offset)) {
    fail(who + "bson_validate rejects the document at " + std::to_string(offset));
  }
}

// ---- Output ----------------------------------------------------------------------------------

double mbps(double task_mb, double seconds) { return task_mb / seconds; }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

void print_table(const settings& s, const std::vector<row>& rows, const std::string& load_before) {
  std::cout << "| doc  | task              | oid MB/s (p90-p10)   | libbson MB/s (p90-p10) | "
               "oid/libbson | target  | met |\n"
               "|------|-------------------|----------------------|------------------------|"
               "-------------|---------|-----|\n";
  for (const row& r : rows) {
    const double o = mbps(r.task_mb, r.oid_s.percentile(0.5));
    const double l = mbps(r.task_mb, r.bson_s.percentile(0.5));
    const auto range = [&](const samples& x) {
      // p90 of the times is the slow end (p10 of the score), p10 the fast end.
      return fixed(mbps(r.task_mb, x.percentile(0.5)), 0) + " (" +
             fixed(mbps(r.task_mb, x.percentile(0.9)), 0) + "-" +
             fixed(mbps(r.task_mb, x.percentile(0.1)), 0) + ")";
    };
    const double ratio = o / l;
    const char* met = r.want.ratio == 0 ? "-" : (ratio >= r.want.ratio ? "yes" : "NO");
    char line[512];
    std::snprintf(line, sizeof line, "| %-4s | %-17s | %-20s | %-22s | %10.2fx | %-7s | %-3s |",
                  r.doc.c_str(), r.task.c_str(), range(r.oid_s).c_str(), range(r.bson_s).c_str(),
                  ratio, r.want.ratio == 0 ? "-" : r.want.text, met);
    std::cout << line << (r.note.empty() ? "" : " " + r.note) << '\n';
  }
  std::cout << "\n"
            << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " hardware threads; libbson " << bson_get_version() << "; load average "
            << load_before << " before, " << load_average() << " after; " << s.iterations
            << " iterations of " << s.ops << " operations after " << s.warmup
            << " warm-up; clock: " << (s.clock == clock_kind::cpu ? "thread CPU time" : "wall")
            << "; MB/s = specification size x operations / median iteration time.\n";
}

void write_json(const settings& s, const std::vector<row>& rows, const std::string& load_before) {
  std::ofstream out(s.json_file);
  if (!out) fail("cannot write " + s.json_file);
  out << "{\n  \"machine\": {\"cpu\": \"" << json_escape(cpu_model())
      << "\", \"hardware_threads\": " << std::thread::hardware_concurrency()
      << ", \"load_before\": \"" << load_before << "\", \"load_after\": \"" << load_average()
      << "\"},\n  \"libbson\": \"" << bson_get_version() << "\", \"iterations\": " << s.iterations
      << ", \"warmup\": " << s.warmup << ", \"operations\": " << s.ops << ", \"clock\": \""
      << (s.clock == clock_kind::cpu ? "cpu" : "wall") << "\",\n  \"rows\": [";
  bool first = true;
  for (const row& r : rows) {
    const auto lib = [&](const samples& x) {
      std::string j = "{\"mbps\": " + fixed(mbps(r.task_mb, x.percentile(0.5)), 3) +
                      ", \"mbps_p10\": " + fixed(mbps(r.task_mb, x.percentile(0.9)), 3) +
                      ", \"mbps_p90\": " + fixed(mbps(r.task_mb, x.percentile(0.1)), 3) +
                      ", \"seconds\": [";
      for (std::size_t i = 0; i < x.seconds.size(); ++i) {
        j += (i ? ", " : "") + fixed(x.seconds[i], 9);
      }
      return j + "]}";
    };
    const double ratio =
        r.oid_s.percentile(0.5) > 0 ? r.bson_s.percentile(0.5) / r.oid_s.percentile(0.5) : 0;
    out << (first ? "" : ",") << "\n    {\"doc\": \"" << r.doc << "\", \"task\": \"" << r.task
        << "\", \"task_mb\": " << fixed(r.task_mb, 3) << ", \"oid\": " << lib(r.oid_s)
        << ", \"libbson\": " << lib(r.bson_s) << ", \"ratio\": " << fixed(ratio, 4)
        << ", \"target_ratio\": " << (r.want.ratio == 0 ? "null" : fixed(r.want.ratio, 2))
        << ", \"met\": "
        << (r.want.ratio == 0 ? "null" : (ratio >= r.want.ratio ? "true" : "false"))
        << ", \"note\": \"" << json_escape(r.note) << "\"}";
    first = false;
  }
  out << "\n  ]\n}\n";
}

[[noreturn]] void usage(int status) {
  (status == 0 ? std::cout : std::cerr)
      << "usage: bson_driverbench [--data DIR] [--iterations N>=10] [--warmup N] [--ops N]\n"
         "                        [--clock wall|cpu] [--filter TEXT] [--json FILE]\n"
         "DIR holds flat_bson.json, deep_bson.json, full_bson.json (default $OID_DRIVERBENCH_DIR,\n"
         "else " OID_SPEC_DATA_DIR
         "/data/driverbench/extended_bson). --ops other than 10000 and\n"
         "--filter (substring of doc/task, e.g. flat/read) are for profiling, not for scores.\n";
  std::exit(status);
}

settings parse_args(int argc, char** argv) {
  settings s;
  if (const char* env = std::getenv("OID_DRIVERBENCH_DIR"); env != nullptr && *env != '\0') {
    s.data_dir = env;
  } else {
    s.data_dir = OID_SPEC_DATA_DIR "/driverbench/extended_bson";
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    const auto number = [&](int min) {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n < min || n > 100000000) usage(2);
      return static_cast<int>(n);
    };
    if (a == "--data") {
      s.data_dir = value();
    } else if (a == "--iterations") {
      s.iterations = number(10);
    } else if (a == "--warmup") {
      s.warmup = number(0);
    } else if (a == "--ops") {
      s.ops = number(1);
    } else if (a == "--clock") {
      const std::string c = value();
      if (c == "wall") {
        s.clock = clock_kind::wall;
      } else if (c == "cpu") {
        s.clock = clock_kind::cpu;
      } else {
        usage(2);
      }
    } else if (a == "--filter") {
      s.filter = value();
    } else if (a == "--json") {
      s.json_file = value();
    } else if (a == "-h" || a == "--help") {
      usage(0);
    } else {
      usage(2);
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const settings s = parse_args(argc, argv);
  // The specification's sizes: the BSON size of each document, the unit of its task size.
  std::vector<dataset> sets;
  for (const auto& [name, size] :
       {std::pair<const char*, std::size_t>{"flat", 7531}, {"deep", 2284}, {"full", 5734}}) {
    dataset d;
    d.name = name;
    d.spec_size = size;
    d.json = read_file(s.data_dir + "/" + name + "_bson.json");
    auto doc = ob::from_json(d.json);
    if (!doc) {
      fail(d.name + "_bson.json: oid cannot read it: " + doc.error().message() + " at byte " +
           std::to_string(doc.error().offset));
    }
    d.doc = std::move(*doc);
    bson_error_t err;
    d.bdoc = bson_new_from_json(reinterpret_cast<const std::uint8_t*>(d.json.data()),
                                static_cast<ssize_t>(d.json.size()), &err);
    if (d.bdoc == nullptr) fail(d.name + "_bson.json: libbson cannot read it: " + err.message);
    d.tree = decode_tree(d.doc.view());
    if (d.doc.size() != d.spec_size) {
      std::cerr << "bson_driverbench: note: " << d.name << "_bson is " << d.doc.size()
                << " bytes as BSON; scores use the specification's " << d.spec_size << '\n';
    }
    check_agreement(d);
    sets.push_back(std::move(d));
  }
  std::cerr << "bson_driverbench: oid and libbson agree on every task for every document\n";

  const std::string load_before = load_average();
  std::vector<row> rows;
  for (dataset& d : sets) run_dataset(s, d, rows);
  print_table(s, rows, load_before);
  if (!s.json_file.empty()) write_json(s, rows, load_before);
  for (dataset& d : sets) bson_destroy(d.bdoc);
  return 0;
}
