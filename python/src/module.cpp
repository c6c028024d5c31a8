// module.cpp: the extension module oid._oid. Python code imports `oid`, whose __init__.py
// re-exports what is defined here and hands back the exception class it defines.
#include "bindings.hpp"
#include "errors.hpp"

NB_MODULE(_oid, m) {
  m.doc() = "oid's C++ core; import `oid`, not this module.";
  m.def("_set_error_class", &oid::python::set_error_class, nanobind::arg("cls"),
        "Tells the extension which ValueError subclass to raise (oid.Error).");
  oid::python::bind_ids(m);
  nanobind::module_ bson = oid::python::bind_bson(m);
  oid::python::bind_codec(bson);
  oid::python::bind_readers(bson);
  oid::python::bind_id64(m);
}
