// The checks made on update and replacement documents before they are sent (CRUD specification,
// "Update vs. Replace Validation"), shared by the updates, find-and-modify and bulk writes, and
// the statements those send.
#pragma once

#include <algorithm>
#include <iterator>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/bulk_write.hpp>
#include <oid/mongo/failure.hpp>
#include <oid/mongo/operation_options.hpp>
#include <optional>
#include <span>
#include <string>

namespace oid::mongo::detail {

inline bool is_operator(const bson::element& e) {
  return !e.key().empty() && e.key().front() == '$';
}
/// True when `d` holds at least one field and every field is an update operator ($set, ...).
inline bool is_update(bson::document_view d) {
  return !d.empty() && std::all_of(d.begin(), d.end(), is_operator);
}
/// True when `d` holds no update operator.
inline bool is_replacement(bson::document_view d) {
  return std::none_of(d.begin(), d.end(), is_operator);
}
/// The failure of an update document that is not one; `where` says which, e.g. " (model 3)".
inline failure not_an_update(const std::string& where = "") {
  return failure(oid::errc::invalid_value,
                 "an update document holds only update operators ($set, ...)" + where);
}
/// The failure of a replacement document holding an update operator.
inline failure not_a_replacement(const std::string& where = "") {
  return failure(oid::errc::invalid_value,
                 "a replacement document holds no update operators" + where);
}

/// The failure of array filters given with a replacement, which has no operators to apply them to.
inline failure array_filters_in_a_replacement(const std::string& where = "") {
  return failure(oid::errc::invalid_value,
                 "array filters apply to updates, not to a replacement" + where);
}

/// True when `stage` is a document of one field named after a stage (`{$set: ...}`).
inline bool is_stage(bson::document_view stage) {
  const auto first = stage.begin();
  return first != stage.end() && std::next(first) == stage.end() && first->key().size() >= 2 &&
         first->key().front() == '$';
}

/// Nothing when `u` may be sent as an update: operators as `is_update` says, or a pipeline of at
/// least one stage, each a document of one `$` field, without array filters (the server refuses
/// them with a pipeline). Otherwise the failure (invalid_value), `where` appended to its message.
inline std::optional<failure> check_update(const update_spec& u, bool has_array_filters,
                                           const std::string& where = "") {
  if (!u.is_pipeline()) {
    if (!is_update(u.operators())) return not_an_update(where);
    return std::nullopt;
  }
  if (u.pipeline().empty()) {
    return failure(oid::errc::invalid_value, "an update pipeline needs at least one stage" + where);
  }
  for (std::size_t i = 0; i < u.pipeline().size(); ++i) {
    if (!is_stage(u.pipeline()[i])) {
      return failure(oid::errc::invalid_value,
                     "update pipeline stage " + std::to_string(i) +
                         " is not a document of one field named after a stage ({$set: ...})" +
                         where);
    }
  }
  if (has_array_filters) {
    return failure(oid::errc::invalid_value,
                   "array filters apply to update operators, not to a "
                   "pipeline" +
                       where);
  }
  return std::nullopt;
}

/// Appends `comment` when it is set: the text, or the value as it is.
inline void append_comment(bson::builder& b, const mongo::comment& c) {
  if (c.empty()) return;
  if (!c.text().empty()) {
    b.append_string("comment", c.text());
  } else {
    b.append_element("comment", c.value());
  }
}

/// Appends `hint` when it is set: the key pattern as a document, or the index name.
inline void append_hint(bson::builder& b, const index_hint& hint) {
  if (!hint.keys.empty()) {
    b.append_document("hint", hint.keys);
  } else if (!hint.name.empty()) {
    b.append_string("hint", hint.name);
  }
}

/// Appends `u` as `key`: the operators as a document, the pipeline as an array of stages.
inline void append_update(bson::builder& b, std::string_view key, const update_spec& u) {
  if (!u.is_pipeline()) {
    b.append_document(key, u.operators());
    return;
  }
  b.open_array(key);
  for (std::size_t i = 0; i < u.pipeline().size(); ++i) {
    b.append_document(std::to_string(i), u.pipeline()[i]);
  }
  b.close();
}

/// Appends `filters` as `arrayFilters` when there are any.
inline void append_array_filters(bson::builder& b, std::span<const bson::document_view> filters) {
  if (filters.empty()) return;
  b.open_array("arrayFilters");
  for (std::size_t i = 0; i < filters.size(); ++i) {
    b.append_document(std::to_string(i), filters[i]);
  }
  b.close();
}

/// The parts of one statement of the update command.
struct update_fields {
  bson::document_view filter;
  const update_spec& update;
  bool upsert = false, multi = false;
  std::span<const bson::document_view> array_filters{};
  bson::document_view collation{};
  const index_hint& hint;
};

/// One statement of the update command: `{q, u, upsert, multi}`, then arrayFilters, collation
/// and hint when set.
inline bson::document update_statement(const update_fields& f) {
  bson::builder b;
  b.append_document("q", f.filter);
  append_update(b, "u", f.update);
  b.append_bool("upsert", f.upsert).append_bool("multi", f.multi);
  append_array_filters(b, f.array_filters);
  if (!f.collation.empty()) b.append_document("collation", f.collation);
  append_hint(b, f.hint);
  return std::move(b).extract();
}

/// One statement of the delete command: `{q, limit}`, then collation and hint when set.
inline bson::document delete_statement(bson::document_view filter, bool multi,
                                       bson::document_view collation, const index_hint& hint) {
  bson::builder b;
  b.append_document("q", filter).append_int32("limit", multi ? 0 : 1);
  if (!collation.empty()) b.append_document("collation", collation);
  append_hint(b, hint);
  return std::move(b).extract();
}

}  // namespace oid::mongo::detail
