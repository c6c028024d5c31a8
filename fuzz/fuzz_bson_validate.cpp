// Property: validate() never crashes or reads out of bounds, and any error offset lies inside the
// input. When it accepts, iterating every element recursively and rebuilding the document with the
// builder's typed appends from the typed getters' values gives back exactly the same bytes (with
// UTF-8 checks on and off), building code-with-scope both from a finished scope and in place.
// Unchecked iteration over the raw input must stay in bounds too. Validation checks keys and text
// eight and sixteen bytes at a time while they are ASCII: what it accepts with UTF-8 checks must
// be exactly what it accepts without them and whose every key and text passes check_utf8, the
// byte-at-a-time decoder, and it must reject the rest with invalid_utf8. validate_many (a cursor
// batch's interleaved walks) must find the input, among valid documents, exactly when
// validate_prefix rejects it, with room after it in the buffer and without.
#include <cstdint>
#include <cstdlib>
#include <oid/bson/builder.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <span>
#include <string_view>
#include <vector>

#include "bson/detail/validate.hpp"

namespace {

using namespace oid::bson;

enum class scopes { copied, in_place };

void rebuild(document_view doc, builder& b, scopes how);

void rebuild_value(const element& e, builder& b, scopes how) {
  const std::string_view k = e.key();
  switch (e.type()) {
  case type::double_: b.append_double(k, *e.get_double()); break;
  case type::string: b.append_string(k, *e.get_string()); break;
  case type::document:
    b.open_document(k);
    rebuild(*e.get_document(), b, how);
    b.close();
    break;
  case type::array:
    b.open_array(k);
    rebuild(*e.get_array(), b, how);
    b.close();
    break;
  case type::binary: {
    const binary_view v = *e.get_binary();
    b.append_binary(k, v.subtype, v.bytes);
    break;
  }
  case type::undefined: b.append_undefined(k); break;
  case type::object_id: b.append_object_id(k, *e.get_object_id()); break;
  case type::boolean: b.append_bool(k, *e.get_bool()); break;
  case type::date_time: b.append_date_time(k, *e.get_date_time()); break;
  case type::null: b.append_null(k); break;
  case type::regex: {
    const regex_view v = *e.get_regex();
    b.append_regex(k, v.pattern, v.options);
    break;
  }
  case type::db_pointer: {
    const db_pointer_view v = *e.get_db_pointer();
    b.append_db_pointer(k, v.ref, v.id);
    break;
  }
  case type::javascript: b.append_javascript(k, *e.get_javascript()); break;
  case type::symbol: b.append_symbol(k, *e.get_symbol()); break;
  case type::javascript_with_scope: {
    const code_with_scope_view v = *e.get_javascript_with_scope();
    if (how == scopes::in_place) {
      b.open_javascript_with_scope(k, v.code);
      rebuild(v.scope, b, how);
      b.close();
    } else {
      builder scope;
      rebuild(v.scope, scope, how);
      b.append_javascript_with_scope(k, v.code, scope.view());
    }
    break;
  }
  case type::int32: b.append_int32(k, *e.get_int32()); break;
  case type::timestamp: b.append_timestamp(k, *e.get_timestamp()); break;
  case type::int64: b.append_int64(k, *e.get_int64()); break;
  case type::decimal128: b.append_decimal128(k, *e.get_decimal128()); break;
  case type::min_key: b.append_min_key(k); break;
  case type::max_key: b.append_max_key(k); break;
  default: std::abort();  // validation let an unknown type through
  }
}

void rebuild(document_view doc, builder& b, scopes how) {
  for (const element& e : doc) rebuild_value(e, b, how);
}

bool utf8(std::string_view s) { return check_utf8(s).has_value(); }

bool all_utf8(document_view doc) {
  for (const element& e : doc) {
    if (!utf8(e.key())) return false;
    bool ok = true;
    switch (e.type()) {
    case type::string: ok = utf8(*e.get_string()); break;
    case type::javascript: ok = utf8(*e.get_javascript()); break;
    case type::symbol: ok = utf8(*e.get_symbol()); break;
    case type::document: ok = all_utf8(*e.get_document()); break;
    case type::array: ok = all_utf8(*e.get_array()); break;
    case type::regex: ok = utf8(e.get_regex()->pattern) && utf8(e.get_regex()->options); break;
    case type::db_pointer: ok = utf8(e.get_db_pointer()->ref); break;
    case type::javascript_with_scope: {
      const code_with_scope_view v = *e.get_javascript_with_scope();
      ok = utf8(v.code) && all_utf8(v.scope);
      break;
    }
    default: break;
    }
    if (!ok) return false;
  }
  return true;
}

void check(std::span<const std::uint8_t> bytes, const validate_options& options) {
  const auto v = validate(bytes, options);
  if (!v) {
    if (bytes.size() != 0 && v.error().offset >= bytes.size()) std::abort();
    return;
  }
  if (v->data() != bytes.data() || v->size() != bytes.size()) std::abort();
  for (const scopes how : {scopes::copied, scopes::in_place}) {
    builder b(8);  // small: the rebuild grows the buffer many times
    rebuild(*v, b, how);
    if (!(b.view() == *v)) std::abort();
  }
}

// The input as the third of five documents, the others valid, then `padding` bytes.
void check_many(std::span<const std::uint8_t> bytes, const validate_options& options) {
  builder b;
  b.append_int32("a", 1).append_string("text", "a string that is valid");
  const auto good = b.view().bytes();
  const auto alone = validate_prefix(bytes, options);
  const bool valid = alone && alone->size() == bytes.size();
  for (const std::size_t padding : {0, 96}) {
    std::vector<std::uint8_t> buffer;
    std::vector<detail::doc_span> docs;
    for (int i = 0; i < 5; ++i) {
      const auto d = i == 2 ? bytes : good;
      docs.push_back(
          {static_cast<std::uint32_t>(buffer.size()), static_cast<std::uint32_t>(d.size())});
      buffer.insert(buffer.end(), d.begin(), d.end());
    }
    buffer.resize(buffer.size() + padding, 0x80);
    if (detail::validate_many(buffer, docs, options) != (valid ? 5u : 2u)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  validate_options options;
  check(bytes, options);
  check_many(bytes, options);
  options.check_utf8 = false;
  options.max_depth = 5;
  check(bytes, options);
  check_many(bytes, options);
  validate_options lax;
  lax.check_utf8 = false;
  if (const auto loose = validate(bytes, lax); loose) {
    const auto strict = validate(bytes);
    if (strict.has_value() != all_utf8(*loose)) std::abort();
    if (!strict && strict.error().code != oid::errc::invalid_utf8) std::abort();
  }
  // A streaming reader's view: the document at the front, whatever follows.
  if (const auto front = validate_prefix(bytes); front) {
    if (front->size() > size || !validate(bytes.first(front->size()))) std::abort();
  } else if (const auto whole = validate(bytes); whole) {
    std::abort();  // a document that validates on its own is a valid prefix
  }
  // Iterating bytes that were never validated must still stay inside them.
  std::size_t n = 0;
  for (const element& e : document_view::unchecked(bytes)) {
    const auto raw = e.raw();
    if (raw.data() < data || raw.data() + raw.size() > data + size) std::abort();
    n += e.key().size();
  }
  return n == static_cast<std::size_t>(-1) ? 1 : 0;
}
