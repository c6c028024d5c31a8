// The checks made on update and replacement documents before they are sent (CRUD specification,
// "Update vs. Replace Validation"), shared by the updates, find-and-modify and bulk writes.
#pragma once

#include <algorithm>
#include <oid/bson/view.hpp>
#include <oid/mongo/failure.hpp>
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
  return failure(errc::invalid_value,
                 "an update document holds only update operators ($set, ...)" + where);
}
/// The failure of a replacement document holding an update operator.
inline failure not_a_replacement(const std::string& where = "") {
  return failure(errc::invalid_value, "a replacement document holds no update operators" + where);
}

}  // namespace oid::mongo::detail
