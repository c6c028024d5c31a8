#include <oid/bson/builder.hpp>
#include <oid/bson/ensure_id.hpp>

namespace oid::bson {

namespace {

template <class MakeId>
document ensure_id_impl(document_view doc, MakeId&& make_id) {
  const auto first = doc.begin();
  if (first != doc.end() && first->key() == "_id") return document(doc);
  // One allocation: the copy is the original plus at most a new ObjectId element.
  builder b(doc.size() + 1 + 4 + 12);
  const auto id = doc.find("_id");
  if (!id) {
    // The usual case (a document the application made): the new _id, then the elements as
    // they are, in one copy.
    b.append_object_id("_id", make_id());
    b.append_elements(doc);
    return std::move(b).extract();
  }
  b.append_element(*id);
  bool moved = false;
  for (const element& e : doc) {
    // Skip the _id moved to the front (only that one: a later duplicate stays where it was).
    if (!moved && e.raw().data() == id->raw().data()) {
      moved = true;
      continue;
    }
    b.append_element(e);
  }
  return std::move(b).extract();
}

}  // namespace

document ensure_id(document_view doc) {
  return ensure_id_impl(doc, [] { return generate(); });
}

document ensure_id(document_view doc, object_id_generator& gen) {
  return ensure_id_impl(doc, [&gen] { return gen.next(); });
}

document ensure_id(document_view doc, const object_id& id) {
  return ensure_id_impl(doc, [&id] { return id; });
}

}  // namespace oid::bson
