// id64.cpp: the submodule oid._oid.id64, re-exported as oid.id64: 64-bit ids (one BIGINT) in
// the compact64, Snowflake and Sonyflake layouts (include/oid/objectid/id64.hpp), made by
// oid::id64_generator (id64_generator.hpp) from a machine id the caller assigns.
//
// Ids are Python ints: what a BIGINT column, JSON and most databases' drivers take. A Layout
// wraps oid::id64_layout by value; a Generator wraps one oid::id64_generator, whose next() is a
// compare-and-swap and a clock read, so it is called with the GIL held (releasing it would cost
// more than the id).
#include <Python.h>
#include <datetime.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <oid/error.hpp>
#include <oid/objectid/id64.hpp>
#include <oid/objectid/id64_generator.hpp>
#include <oid/objectid/time.hpp>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "codec.hpp"
#include "errors.hpp"

namespace oid::python {

namespace {

using namespace nb::literals;

// collections.namedtuple("Fields", "units time machine counter"), made at import, kept for the
// life of the process.
PyObject* fields_type = nullptr;

// Runs `f`, turning the oid::exception oid's throwing API raises into oid.Error.
template <class F>
auto checked(F&& f) {
  try {
    return f();
  } catch (const oid::exception& e) {
    raise_error(oid::error{e.code(), e.offset()}, "");
  }
}

std::string python_type_name(nb::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// The layout an argument names: a Layout, or "compact64", "snowflake" or "sonyflake" with its
// default epoch.
id64_layout layout_of(nb::handle h) {
  if (nb::isinstance<id64_layout>(h)) return nb::cast<id64_layout>(h);
  if (PyUnicode_Check(h.ptr())) {
    const auto name = nb::cast<std::string_view>(h);
    auto layout = id64_layout::from_name(name);
    if (!layout) {
      raise_error(layout.error(), " (layout \"" + std::string(name) +
                                      "\"; the layouts are compact64, snowflake, sonyflake)");
    }
    return *layout;
  }
  raise(PyExc_TypeError, "a layout is an oid.id64.Layout or its name, not " + python_type_name(h));
}

// A 64-bit id given as a Python int.
id64 id_of(nb::handle h) {
  if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())) {
    raise(PyExc_TypeError, "a 64-bit id is an int, not " + python_type_name(h));
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(h.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    raise(PyExc_OverflowError, "a 64-bit id is 0 to 2**64-1");
  }
  return id64(v);
}

nb::object to_int(id64 id) { return nb::steal(PyLong_FromUnsignedLongLong(id.value())); }

// Unix milliseconds of a time: a datetime (naive means UTC), a date (midnight UTC), int or
// float Unix seconds, or an ISO-8601 str (whole seconds) as oid::parse_time reads it.
std::int64_t milliseconds_of(nb::handle t) {
  PyObject* p = t.ptr();
  if (PyBool_Check(p)) raise(PyExc_TypeError, "a time cannot be a bool");
  if (PyLong_Check(p)) {
    int overflow = 0;
    const long long s = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (s == -1 && PyErr_Occurred()) throw nb::python_error();
    if (overflow != 0 || s < -(1LL << 53) || s > (1LL << 53)) {
      raise_error(errc::time_out_of_range, "");
    }
    return s * 1000;
  }
  if (PyFloat_Check(p)) {
    const double ms = std::floor(PyFloat_AS_DOUBLE(p) * 1000);
    if (!(ms > -0x1p62 && ms < 0x1p62)) raise_error(errc::time_out_of_range, "");  // NaN too
    return static_cast<std::int64_t>(ms);
  }
  if (PyUnicode_Check(p)) {
    const auto text = nb::cast<std::string_view>(t);
    auto parsed = oid::parse_time(text);
    if (!parsed) raise_error(parsed.error(), " at byte " + std::to_string(parsed.error().offset));
    return parsed->time_since_epoch().count() * 1000;
  }
  if (PyDateTime_Check(p)) return datetime_ms(p);
  if (PyDate_Check(p)) {
    using namespace std::chrono;
    const sys_days day =
        year{PyDateTime_GET_YEAR(p)} / PyDateTime_GET_MONTH(p) / PyDateTime_GET_DAY(p);
    return static_cast<std::int64_t>(day.time_since_epoch().count()) * 86400000;
  }
  raise(PyExc_TypeError,
        "a time is a datetime, a date, int or float Unix seconds, or an ISO-8601 str, not " +
            python_type_name(t));
}

sys_milliseconds time_of(nb::handle t) {
  return sys_milliseconds{std::chrono::milliseconds{milliseconds_of(t)}};
}

nb::object datetime_of(sys_milliseconds t) {
  nb::object dt = utc_datetime(t.time_since_epoch().count());
  if (!dt.is_valid()) raise_error(errc::time_out_of_range, "");
  return dt;
}

nb::object decode(nb::handle id, nb::handle layout) {
  const id64_layout l = layout_of(layout);
  auto f = l.decode(id_of(id));
  if (!f) {
    raise_error(f.error(),
                " (the id has bits outside the " + std::string(l.name) + " layout's fields)");
  }
  nb::object time = datetime_of(f->time);
  nb::object out = nb::steal(PyObject_CallFunction(
      fields_type, "KOkk", static_cast<unsigned long long>(f->units), time.ptr(),
      static_cast<unsigned long>(f->machine), static_cast<unsigned long>(f->counter)));
  if (!out.is_valid()) throw nb::python_error();
  return out;
}

nb::object min_for(nb::handle time, nb::handle layout) {
  auto id = layout_of(layout).min_for_time(time_of(time));
  if (!id) raise_error(id.error(), "");
  return to_int(*id);
}

nb::object max_for(nb::handle time, nb::handle layout) {
  auto id = layout_of(layout).max_for_time(time_of(time));
  if (!id) raise_error(id.error(), "");
  return to_int(*id);
}

nb::object parse(nb::handle text) {
  const auto s = nb::cast<std::string_view>(text);
  auto id = id64::parse(s);
  if (!id) raise_error(id.error(), " at position " + std::to_string(id.error().offset));
  return to_int(*id);
}

// oid::id64_generator is neither copyable nor movable: the Python object holds it through a
// pointer.
class generator {
 public:
  generator(const id64_layout& layout, std::uint32_t machine)
      : gen_(checked([&] { return std::make_unique<id64_generator>(layout, machine); })) {}

  nb::object next() {
    return to_int(checked([&] { return gen_->next(); }));
  }

  nb::object batch(Py_ssize_t n) {
    if (n < 0) raise(PyExc_ValueError, "batch: n must be >= 0, not " + std::to_string(n));
    std::vector<id64> ids(static_cast<std::size_t>(n));
    checked([&] {
      gen_->fill(ids);
      return 0;
    });
    nb::object list = nb::steal(PyList_New(n));
    if (!list.is_valid()) throw nb::python_error();
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyList_SET_ITEM(list.ptr(), i, to_int(ids[static_cast<std::size_t>(i)]).release().ptr());
    }
    return list;
  }

  const id64_layout& layout() const { return gen_->layout(); }
  std::uint32_t machine_id() const { return gen_->machine_id(); }

 private:
  std::unique_ptr<id64_generator> gen_;
};

}  // namespace

void bind_id64(nb::module_& m) {
  PyDateTime_IMPORT;
  if (PyDateTimeAPI == nullptr) throw nb::python_error();
  fields_type =
      nb::module_::import_("collections")
          .attr("namedtuple")("Fields", "units time machine counter", "module"_a = "oid.id64")
          .release()
          .ptr();

  nb::module_ mod = m.def_submodule("id64", "64-bit ids: compact64, Snowflake, Sonyflake.");
  mod.attr("Fields") = nb::handle(fields_type);

  nb::class_<id64_layout>(mod, "Layout", R"(What the bits of a 64-bit id mean.

    layout     bits (high to low)                          unit   epoch (time 0)
    compact64  32 time | 8 machine | 24 counter            1 s    1970-01-01T00:00:00Z
    snowflake  1 zero | 41 time | 10 worker | 12 sequence  1 ms   2010-11-04T01:42:54.657Z
    sonyflake  1 zero | 39 time | 8 sequence | 16 machine  10 ms  2014-09-01T00:00:00Z

The time is always the highest field, so ids order by creation time. Make one with
Layout.compact64(), Layout.snowflake(epoch_ms=...), Layout.sonyflake(epoch_ms=...) or
Layout.from_name(name); every function that takes a layout also takes its name.)")
      .def_static(
          "compact64", [] { return id64_layout::compact64(); },
          "32-bit Unix seconds | 8-bit machine | 24-bit counter.")
      .def_static(
          "snowflake", [](std::int64_t epoch_ms) { return id64_layout::snowflake(epoch_ms); },
          "epoch_ms"_a = id64_layout::twitter_epoch_ms,
          "Twitter's Snowflake: 41-bit milliseconds since `epoch_ms` (Unix milliseconds; "
          "Twitter's by default) | 10-bit worker | 12-bit sequence.")
      .def_static(
          "sonyflake", [](std::int64_t epoch_ms) { return id64_layout::sonyflake(epoch_ms); },
          "epoch_ms"_a = id64_layout::sonyflake_epoch_ms,
          "Sonyflake: 39-bit 10 ms units since `epoch_ms` (2014-09-01 by default) | "
          "8-bit sequence | 16-bit machine.")
      .def_static("from_name", &layout_of, "name"_a,
                  "The named layout with its default epoch; oid.Error (invalid_value) for "
                  "another name.")
      .def_prop_ro(
          "name", [](const id64_layout& l) { return std::string(l.name); },
          "\"compact64\", \"snowflake\" or \"sonyflake\".")
      .def_prop_ro(
          "time_bits",
          [](const id64_layout& l) { return nb::make_tuple(l.time.shift, l.time.width); },
          "(shift, width) of the time field.")
      .def_prop_ro(
          "machine_bits",
          [](const id64_layout& l) { return nb::make_tuple(l.machine.shift, l.machine.width); },
          "(shift, width) of the machine (worker) field.")
      .def_prop_ro(
          "counter_bits",
          [](const id64_layout& l) { return nb::make_tuple(l.counter.shift, l.counter.width); },
          "(shift, width) of the counter (sequence) field.")
      .def_ro("unit_ms", &id64_layout::unit_ms, "Length of a time unit in milliseconds.")
      .def_ro("epoch_ms", &id64_layout::epoch_ms, "Unix milliseconds of time 0.")
      .def_prop_ro(
          "ids_per_unit", [](const id64_layout& l) { return l.ids_per_unit(); },
          "Ids one machine can make in one time unit.")
      .def_prop_ro(
          "max_machine", [](const id64_layout& l) { return l.max_machine(); },
          "The largest machine id.")
      .def_prop_ro(
          "first_time", [](const id64_layout& l) { return datetime_of(l.first_time()); },
          "The first time an id can carry (the epoch), an aware datetime in UTC.")
      .def_prop_ro(
          "last_time", [](const id64_layout& l) { return datetime_of(l.last_time()); },
          "The start of the last time unit an id can carry.")
      .def(
          "make",
          [](const id64_layout& l, std::uint64_t units, std::uint32_t machine,
             std::uint32_t counter) {
            auto id = l.make(units, machine, counter);
            if (!id) raise_error(id.error(), "");
            return to_int(*id);
          },
          "units"_a, "machine"_a, "counter"_a,
          "The id with these fields. oid.Error: time_out_of_range, machine_id_out_of_range, "
          "invalid_value (counter too large).")
      .def(
          "decode", [](nb::handle self, nb::handle id) { return decode(id, self); }, "id"_a,
          "oid.id64.decode(id, self).")
      .def(
          "__eq__", [](const id64_layout& a, const id64_layout& b) { return a == b; },
          nb::is_operator())
      .def("__repr__", [](const id64_layout& l) {
        return "Layout." + std::string(l.name) + "(" +
               (l.epoch_ms == 0 ? std::string() : "epoch_ms=" + std::to_string(l.epoch_ms)) + ")";
      });

  nb::class_<generator>(mod, "Generator", R"(Makes 64-bit ids in one layout for one assigned
machine id: thread-safe, no duplicate from one generator at any rate (when a time unit's
counter runs out the ids run ahead of the clock; when the clock steps back they continue from
the last one). The machine id must be unique among the processes making ids: these layouts
have too few machine bits for a random one (docs/uniqueness.md). In a child made by os.fork()
the parent's generator raises oid.Error forked_machine_id instead of repeating the parent's
ids: make a new Generator with the child's own machine id there.)")
      .def(
          "__init__",
          [](generator* self, nb::handle layout, std::uint32_t machine_id) {
            new (self) generator(layout_of(layout), machine_id);
          },
          "layout"_a, "machine_id"_a,
          "oid.Error machine_id_out_of_range when machine_id > layout.max_machine.")
      .def("next", &generator::next,
           "A new id (an int). oid.Error time_out_of_range outside the layout's times, "
           "forked_machine_id in a forked child.")
      .def("__call__", &generator::next, "next().")
      .def("batch", &generator::batch, "n"_a,
           "n new ids with consecutive counters (carrying into the next time unit), reading the "
           "clock once.")
      .def_prop_ro("layout", &generator::layout)
      .def_prop_ro("machine_id", &generator::machine_id);

  mod.def("decode", &decode, "id"_a, "layout"_a,
          "The Fields (units, time, machine, counter) of `id` in `layout` (a Layout or its "
          "name); `time` is the start of its unit, an aware datetime in UTC. oid.Error "
          "invalid_value when the id has a bit set outside the layout's fields.");
  mod.def("min_for_time", &min_for, "time"_a, "layout"_a,
          "The smallest id of the time unit `time` falls in: a >= bound. `time`: a datetime "
          "(naive means UTC), a date, Unix seconds (int or float) or an ISO-8601 str. oid.Error "
          "time_out_of_range outside the layout's times.");
  mod.def("max_for_time", &max_for, "time"_a, "layout"_a,
          "The largest id of that time unit: an inclusive upper bound.");
  mod.def(
      "range",
      [](nb::handle start, nb::handle end, nb::handle layout) {
        return nb::make_tuple(min_for(start, layout), min_for(end, layout));
      },
      "start"_a, "end"_a, "layout"_a, "(lo, hi) for ids made in [start, end): lo <= id < hi.");
  mod.def("parse", &parse, "text"_a,
          "An id from its text: 16 characters are hex, any other length decimal. oid.Error "
          "invalid_length, invalid_decimal or invalid_hex with the position.");
  mod.def(
      "to_hex", [](nb::handle id) { return id_of(id).to_hex(); }, "id"_a,
      "16 lowercase hex digits.");
}

}  // namespace oid::python
