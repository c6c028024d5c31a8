// bindings.hpp: the parts of the extension module oid._oid, each defined in its own file.
#pragma once

#include <nanobind/nanobind.h>

namespace oid::python {

namespace nb = nanobind;

/// oid.ObjectId, generate, generate_batch, from_hex, from_base64, range (ids.cpp).
void bind_ids(nb::module_& m);
/// The submodule oid._oid.bson: validate, to_json, from_json (bson.cpp); returns it.
nb::module_ bind_bson(nb::module_& m);
/// dumps and loads in oid._oid.bson (codec.cpp). After bind_ids: it reads oid.ObjectId's type.
void bind_codec(nb::module_& bson);
/// The stream readers behind iter_file and iter_json_lines in oid._oid.bson (readers.cpp).
void bind_readers(nb::module_& bson);
/// The submodule oid._oid.id64: 64-bit ids (id64.cpp).
void bind_id64(nb::module_& m);

}  // namespace oid::python
