// bindings.hpp: the parts of the extension module oid._oid, each defined in its own file.
#pragma once

#include <nanobind/nanobind.h>

namespace oid::python {

namespace nb = nanobind;

/// oid.ObjectId, generate, generate_batch, from_hex, from_base64, range (ids.cpp).
void bind_ids(nb::module_& m);
/// The submodule oid._oid.bson: validate, to_json, from_json (bson.cpp).
void bind_bson(nb::module_& m);

}  // namespace oid::python
