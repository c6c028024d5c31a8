#include "mongo/wire/reply.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <oid/mongo/server_codes.hpp>

namespace oid::mongo::detail {

std::optional<std::int64_t> as_integer(const bson::element& e) noexcept {
  switch (e.type()) {
  case bson::type::int32: return *e.get_int32();
  case bson::type::int64: return *e.get_int64();
  case bson::type::double_: {
    const double d = *e.get_double();
    // 2^63 as a double: anything at or above does not fit an int64.
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2233720368547758e18) {
      return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
  }
  default: return std::nullopt;
  }
}

std::int64_t int64_field(bson::document_view doc, std::string_view key, std::int64_t fallback) {
  const auto e = doc.find(key);
  if (!e) return fallback;
  return as_integer(*e).value_or(fallback);
}

std::optional<std::int64_t> session_timeout_minutes(bson::document_view hello) {
  const auto e = hello.find("logicalSessionTimeoutMinutes");
  if (!e) return std::nullopt;
  const auto v = as_integer(*e);
  if (!v || *v <= 0) return std::nullopt;
  return std::min(*v, max_session_timeout_minutes);
}

std::int32_t int_field(bson::document_view doc, std::string_view key, std::int32_t fallback) {
  const std::int64_t v = int64_field(doc, key, fallback);
  if (v < std::numeric_limits<std::int32_t>::min() ||
      v > std::numeric_limits<std::int32_t>::max()) {
    return fallback;
  }
  return static_cast<std::int32_t>(v);
}

bool bool_field(bson::document_view doc, std::string_view key, bool fallback) {
  const auto e = doc.find(key);
  if (!e) return fallback;
  if (auto b = e->get_bool()) return *b;
  if (auto n = as_integer(*e)) return *n != 0;
  return fallback;
}

std::string string_field(bson::document_view doc, std::string_view key) {
  const auto e = doc.find(key);
  if (!e) return {};
  if (auto s = e->get_string()) return std::string(*s);
  return {};
}

bool is_ok(bson::document_view reply) {
  const auto e = reply.find("ok");
  if (!e) return false;
  if (auto b = e->get_bool()) return *b;
  if (e->type() == bson::type::double_) return *e->get_double() == 1.0;
  if (auto n = as_integer(*e)) return *n == 1;
  return false;
}

server_error server_error_of(bson::document_view doc) {
  server_error s;
  s.code = int_field(doc, "code", 0);
  s.code_name = string_field(doc, "codeName");
  s.message = string_field(doc, "errmsg");
  if (const auto i = doc.find("index")) {
    if (auto n = as_integer(*i); n && *n >= 0) s.index = static_cast<std::size_t>(*n);
  }
  if (const auto k = doc.find("keyPattern")) {
    if (auto d = k->get_document()) s.key_pattern = bson::document(*d);
  }
  if (const auto k = doc.find("keyValue")) {
    if (auto d = k->get_document()) s.key_value = bson::document(*d);
  }
  // mongod and FerretDB word it "E11000 duplicate key error collection: db.c index: name_1 dup
  // key: { ... }"; the index name is the word after "index: ".
  if (const auto at = s.message.find(" index: "); at != std::string::npos) {
    const auto begin = at + 8;
    const auto end = s.message.find(' ', begin);
    s.index_name = s.message.substr(begin, end == std::string::npos ? end : end - begin);
  }
  return s;
}

std::vector<std::string> error_labels_of(bson::document_view reply) {
  std::vector<std::string> out;
  if (const auto labels = reply.find("errorLabels")) {
    if (auto arr = labels->get_array()) {
      for (const auto& l : *arr) {
        if (auto text = l.get_string()) out.emplace_back(*text);
      }
    }
  }
  return out;
}

failure failure_of(bson::document_view reply, std::string_view what) {
  failure f;
  f.server = server_error_of(reply);
  f.code = f.server->code == server_code::duplicate_key ? errc::duplicate_key : errc::server_error;
  f.message = std::string(what) + ": " + f.server->message;
  f.labels = error_labels_of(reply);
  if (!f.server->code_name.empty() || f.server->code != 0) {
    f.message += " (" + (f.server->code_name.empty() ? std::string("code") : f.server->code_name) +
                 " " + std::to_string(f.server->code) + ")";
  }
  return f;
}

}  // namespace oid::mongo::detail
