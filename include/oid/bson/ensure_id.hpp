// oid/bson/ensure_id.hpp: give a document an `_id` first, as a driver does before an insert.
//
// MongoDB stores `_id` as the first field of every document and makes one up when a client sends
// none; drivers make it themselves so that the client knows the id it inserted. `ensure_id()`
// returns a copy of a document whose first field is `_id`: the document's own `_id` moved to the
// front (the other fields keep their order), or a new ObjectId when there is none.
#pragma once

#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/object_id.hpp>

namespace oid::bson {

/// `doc` with `_id` first: its existing `_id` (the first, if several) moved to the front, or a
/// new id from `oid::generate()`. A document whose first field is already `_id` is copied as is.
/// O(size). Throws what `oid::generate()` throws (entropy_unavailable), and std::bad_alloc.
///
///     auto ready = oid::bson::ensure_id(doc.view());   // {_id: ObjectId(...), ...doc}
document ensure_id(document_view doc);

/// As above, taking a new id from `gen` when `doc` has no `_id`.
document ensure_id(document_view doc, object_id_generator& gen);

/// As above, using `id` when `doc` has no `_id`.
document ensure_id(document_view doc, const object_id& id);

}  // namespace oid::bson
