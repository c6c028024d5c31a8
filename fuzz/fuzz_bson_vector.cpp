// Properties of binary vectors (oid/bson/vector.hpp) over any bytes, taken as the bytes of a
// binary value of subtype 9 (header and elements):
// 1. vector_view::from_bytes accepts exactly what the specification allows (an oracle written
//    here from the specification, apart from the library), and refuses the rest with
//    invalid_binary at an offset inside the bytes. The same bytes in a document give the same
//    answer through validate and from_element.
// 2. An accepted vector has the size its dtype says, and writing its elements back through the
//    typed API (a span of int8, the floats copied out, packed_bits_view) gives the same bytes.
// 3. Through an array and back (append_vector_as_array, then append_vector from the array) gives
//    the same bytes, but for NaNs of float32, which pass through a double (a signaling NaN
//    becomes quiet): those stay NaN.
// 4. For packed bits, the builder accepts the header's padding and the data exactly when the
//    reader accepts the bytes: writer and reader agree.
// 5. Canonical Extended JSON of the document reads back to the same bytes.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/vector.hpp>
#include <span>
#include <vector>

namespace {

using oid::bson::builder;
using oid::bson::vector_dtype;
using oid::bson::vector_view;

// The specification's validity criteria, from its text.
bool allowed(std::span<const std::uint8_t> b) {
  if (b.size() < 2) return false;
  const std::size_t n = b.size() - 2;
  switch (b[0]) {
  case 0x03: return b[1] == 0;
  case 0x27: return b[1] == 0 && n % 4 == 0;
  case 0x10:
    if (b[1] > 7) return false;
    if (n == 0) return b[1] == 0;
    return (b.back() & ((1u << b[1]) - 1)) == 0;
  default: return false;
  }
}

void check(bool ok) {
  if (!ok) std::abort();
}

// The binary's bytes of the one element of `doc`.
std::span<const std::uint8_t> stored(oid::bson::document_view doc) {
  const auto b = doc.begin()->get_binary();
  check(b.has_value() && b->subtype == 9);
  return b->bytes;
}

bool same(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const auto v = vector_view::from_bytes(bytes);
  check(v.has_value() == allowed(bytes));
  if (!v) {
    check(v.error().code == oid::errc::invalid_binary && v.error().offset <= size);
  }

  // Property 1 again, inside a document.
  builder doc;
  if (!doc.try_append_binary("v", 9, bytes)) return 0;
  const auto checked = oid::bson::validate(doc.view().bytes());
  check(checked.has_value());
  const auto from_doc = vector_view::from_element(*checked->begin());
  check(from_doc.has_value() == v.has_value());
  if (!v) check(from_doc.error() == v.error());

  // Property 4.
  if (size >= 2 && data[0] == 0x10) {
    builder b;
    const auto r = b.try_append_vector("v", oid::bson::packed_bits_view{bytes.subspan(2), data[1]});
    check(r.has_value() == v.has_value());
    if (r) check(same(stored(b.view()), bytes));
    if (!r) check(r.error().code == oid::errc::invalid_binary && b.view().size() == 5);
  }

  // Property 5.
  const auto json = oid::bson::to_json(doc.view(), oid::bson::json_mode::canonical);
  const auto back = oid::bson::from_json(json);
  check(back.has_value() && back->view() == doc.view());

  if (!v) return 0;

  // Property 2.
  builder typed;
  switch (v->dtype()) {
  case vector_dtype::int8: {
    const auto i8 = v->as_int8();
    check(i8.has_value() && i8->size() == v->size() && v->size() == size - 2);
    typed.append_vector("v", *i8);
    break;
  }
  case vector_dtype::float32: {
    const auto f = v->as_float32();
    check(f.has_value() && f->size() == v->size() && v->size() == (size - 2) / 4);
    const std::vector<float> floats = f->to_vector();
    for (std::size_t i = 0; i < floats.size(); ++i) {
      check(std::bit_cast<std::uint32_t>(floats[i]) == std::bit_cast<std::uint32_t>((*f)[i]));
    }
    typed.append_vector("v", std::span<const float>(floats));
    break;
  }
  case vector_dtype::packed_bit: {
    const auto bits = v->as_packed_bits();
    check(bits.has_value() && bits->size() == v->size());
    check(v->size() == (size == 2 ? 0 : 8 * (size - 2) - data[1]));
    typed.append_vector("v", *bits);
    break;
  }
  }
  check(same(stored(typed.view()), bytes));

  // Property 3.
  builder array;
  array.append_vector_as_array("a", *v);
  const auto a = array.view().begin()->get_array();
  check(a.has_value());
  builder again;
  const auto r = again.try_append_vector("v", v->dtype(), *a, v->padding());
  check(r.has_value());
  const auto round = stored(again.view());
  if (v->dtype() != vector_dtype::float32) {
    check(same(round, bytes));
  } else {
    check(round.size() == size);
    const auto got = *vector_view::from_bytes(round)->as_float32();
    const auto want = *v->as_float32();
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        check(std::isnan(got[i]));
      } else {
        check(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want[i]));
      }
    }
  }
  return 0;
}
