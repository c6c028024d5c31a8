// Binary vectors (binary subtype 9): the checks of MongoDB's BSON binary vector specification on
// the way in (vector_view::from_bytes) and on the way out (builder::append_vector).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/bson/vector.hpp>
#include <optional>
#include <span>
#include <vector>

namespace oid::bson {

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559,
              "float32 vectors need float to be IEEE 754 binary32");

namespace {

constexpr std::uint8_t header_size = 2;

bool known(std::uint8_t dtype) noexcept {
  switch (static_cast<vector_dtype>(dtype)) {
  case vector_dtype::int8:
  case vector_dtype::float32:
  case vector_dtype::packed_bit: return true;
  }
  return false;
}

// What is wrong with a vector of this dtype, padding and elements' bytes, if anything; the
// offset counts from the dtype byte (a header followed by `data`).
std::optional<oid::error> problem(std::uint8_t dtype, std::uint8_t padding,
                                  std::span<const std::uint8_t> data) noexcept {
  const auto bad = [](std::size_t offset) { return oid::error{errc::invalid_binary, offset}; };
  if (!known(dtype)) return bad(0);
  if (static_cast<vector_dtype>(dtype) != vector_dtype::packed_bit) {
    // The specification: the second byte is nonzero only for the padding of packed bits.
    if (padding != 0) return bad(1);
    if (static_cast<vector_dtype>(dtype) == vector_dtype::float32 && data.size() % 4 != 0) {
      return bad(header_size + data.size() / 4 * 4);  // where the incomplete element starts
    }
    return std::nullopt;
  }
  if (padding > 7 || (padding != 0 && data.empty())) return bad(1);
  // The unused bits carry no element; a writer must leave them zero, and a reader that let them
  // through would make two different byte strings of one vector.
  if (padding != 0 && (data.back() & ((1u << padding) - 1)) != 0) {
    return bad(header_size + data.size() - 1);
  }
  return std::nullopt;
}

// `s`, or a copy of it in `copy` when it points into `buf`: an append may move the builder's
// storage, and a span read from the builder's own view would then dangle.
template <class T>
std::span<const T> stable(std::span<const T> s, const std::vector<std::uint8_t>& buf,
                          std::vector<T>& copy) {
  const auto at = reinterpret_cast<std::uintptr_t>(s.data());
  const auto begin = reinterpret_cast<std::uintptr_t>(buf.data());
  if (s.empty() || at < begin || at >= begin + buf.size()) return s;
  copy.assign(s.begin(), s.end());
  return copy;
}

// `d` rounded to the nearest float, as IEEE 754 rounds (the specification asks for the nearest
// representable value). A double beyond the float range is not a value static_cast may convert
// (C++ leaves it undefined), so those are rounded here: the largest float up to half an ulp
// (2^103) above it, infinity from there on (the tie goes to the even neighbour, infinity).
float nearest_float(double d) noexcept {
  constexpr double max = std::numeric_limits<float>::max();
  if (std::isnan(d) || std::fabs(d) <= max) return static_cast<float>(d);
  constexpr double halfway = max + 0x1p103;
  const float magnitude =
      std::fabs(d) >= halfway ? std::numeric_limits<float>::infinity() : static_cast<float>(max);
  return std::signbit(d) ? -magnitude : magnitude;
}

// An array element's integer value (int32 or int64), or nullopt for any other type.
std::optional<std::int64_t> integer_of(const element& e) noexcept {
  if (auto i = e.get_int32()) return *i;
  if (auto i = e.get_int64()) return *i;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(vector_dtype d) noexcept {
  switch (d) {
  case vector_dtype::int8: return "int8";
  case vector_dtype::float32: return "float32";
  case vector_dtype::packed_bit: return "packed_bit";
  }
  return "unknown";
}

// ---- Reading ---------------------------------------------------------------------------------

std::size_t float32_view::copy_to(std::span<float> out) const noexcept {
  const std::size_t n = std::min(size(), out.size());
  if constexpr (std::endian::native == std::endian::little) {
    if (n != 0) std::memcpy(out.data(), bytes_.data(), 4 * n);  // the stored order is the host's
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = decode(bytes_.data() + 4 * i);
  }
  return n;
}

std::vector<float> float32_view::to_vector() const {
  std::vector<float> out(size());
  (void)copy_to(out);
  return out;
}

result<vector_view> vector_view::from_bytes(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() < header_size) return oid::error{errc::invalid_binary, bytes.size()};
  if (auto p = problem(bytes[0], bytes[1], bytes.subspan(header_size))) return *p;
  return vector_view(bytes);
}

result<vector_view> vector_view::from_binary(const binary_view& b) noexcept {
  if (b.subtype != binary_subtype::vector) return oid::error{errc::type_mismatch, 0};
  return from_bytes(b.bytes);
}

result<vector_view> vector_view::from_element(const element& e) noexcept {
  auto b = e.get_binary();
  if (!b) return b.error();
  return from_binary(*b);
}

std::size_t vector_view::size() const noexcept {
  const std::size_t n = bytes_.size() - header_size;
  switch (dtype()) {
  case vector_dtype::int8: return n;
  case vector_dtype::float32: return n / 4;
  case vector_dtype::packed_bit: return n == 0 ? 0 : 8 * n - padding();
  }
  return 0;  // not reached: from_bytes checked the dtype
}

result<std::span<const std::int8_t>> vector_view::as_int8() const noexcept {
  if (dtype() != vector_dtype::int8) return oid::error{errc::type_mismatch, 0};
  const auto d = data();
  // signed char may read the bytes of unsigned char objects (the "corresponding signed type"
  // rule of [basic.lval]): no copy needed.
  return std::span<const std::int8_t>(reinterpret_cast<const std::int8_t*>(d.data()), d.size());
}

result<float32_view> vector_view::as_float32() const noexcept {
  if (dtype() != vector_dtype::float32) return oid::error{errc::type_mismatch, 0};
  return float32_view(data());
}

result<packed_bits_view> vector_view::as_packed_bits() const noexcept {
  if (dtype() != vector_dtype::packed_bit) return oid::error{errc::type_mismatch, 0};
  return packed_bits_view{data(), padding()};
}

// ---- Writing ---------------------------------------------------------------------------------
// Each append checks first and then writes header and elements straight into the space
// try_append_binary_space reserves, so that a refused vector leaves the builder unchanged.

result<void> builder::try_append_vector(std::string_view key, std::span<const std::int8_t> v) {
  std::vector<std::int8_t> copy;
  v = stable(v, buf_, copy);
  if (v.size() > SIZE_MAX - header_size) return oid::error{errc::too_large, 0};
  auto out = try_append_binary_space(key, binary_subtype::vector, header_size + v.size());
  if (!out) return out.error();
  (*out)[0] = static_cast<std::uint8_t>(vector_dtype::int8);
  (*out)[1] = 0;
  if (!v.empty()) std::memcpy(out->data() + header_size, v.data(), v.size());
  return {};
}

result<void> builder::try_append_vector(std::string_view key, std::span<const float> v) {
  // A span of floats points into the builder's storage only through a cast; guarded all the
  // same, as every other append is.
  std::vector<float> copy;
  v = stable(v, buf_, copy);
  if (v.size() > (SIZE_MAX - header_size) / 4) return oid::error{errc::too_large, 0};
  auto out = try_append_binary_space(key, binary_subtype::vector, header_size + 4 * v.size());
  if (!out) return out.error();
  std::uint8_t* p = out->data();
  p[0] = static_cast<std::uint8_t>(vector_dtype::float32);
  p[1] = 0;
  p += header_size;
  if constexpr (std::endian::native == std::endian::little) {
    if (!v.empty()) std::memcpy(p, v.data(), 4 * v.size());
  } else {
    for (const float f : v) {
      oid::detail::store_le_u32(p, std::bit_cast<std::uint32_t>(f));
      p += 4;
    }
  }
  return {};
}

result<void> builder::try_append_vector(std::string_view key, packed_bits_view v) {
  if (auto p = problem(static_cast<std::uint8_t>(vector_dtype::packed_bit), v.padding, v.bytes)) {
    // Offsets of the caller's bytes, not of the stored value: the padding is a parameter (0).
    return oid::error{errc::invalid_binary, p->offset <= 1 ? 0 : p->offset - header_size};
  }
  std::vector<std::uint8_t> copy;
  const auto bytes = stable(v.bytes, buf_, copy);
  if (bytes.size() > SIZE_MAX - header_size) return oid::error{errc::too_large, 0};
  auto out = try_append_binary_space(key, binary_subtype::vector, header_size + bytes.size());
  if (!out) return out.error();
  (*out)[0] = static_cast<std::uint8_t>(vector_dtype::packed_bit);
  (*out)[1] = v.padding;
  if (!bytes.empty()) std::memcpy(out->data() + header_size, bytes.data(), bytes.size());
  return {};
}

result<void> builder::try_append_vector(std::string_view key, const vector_view& v) {
  return try_append_binary(key, binary_subtype::vector, v.bytes());  // it guards against aliasing
}

result<void> builder::try_append_vector(std::string_view key, vector_dtype dtype,
                                        document_view array, std::uint8_t padding) {
  const auto d = static_cast<std::uint8_t>(dtype);
  if (!known(d) || (dtype != vector_dtype::packed_bit && padding != 0)) {
    return oid::error{errc::invalid_binary, 0};
  }
  // The payload is made apart and appended whole: the array may be part of this builder's
  // document, and a refused element must leave the builder unchanged.
  std::vector<std::uint8_t> payload{d, padding};
  std::size_t last = 0;  // offset of the last element in the array
  for (const element& e : array) {
    const auto at = static_cast<std::size_t>(e.raw().data() - array.data());
    last = at;
    if (dtype == vector_dtype::float32) {
      auto x = e.get_double();
      if (!x) return oid::error{errc::type_mismatch, at};
      std::uint8_t le[4];
      oid::detail::store_le_u32(le, std::bit_cast<std::uint32_t>(nearest_float(*x)));
      payload.insert(payload.end(), le, le + 4);
      continue;
    }
    const auto i = integer_of(e);
    if (!i) return oid::error{errc::type_mismatch, at};
    const bool int8 = dtype == vector_dtype::int8;
    if (*i < (int8 ? -128 : 0) || *i > (int8 ? 127 : 255))
      return oid::error{errc::invalid_value, at};
    payload.push_back(static_cast<std::uint8_t>(*i));
  }
  if (auto p = problem(d, padding, std::span(payload).subspan(header_size))) {
    return oid::error{errc::invalid_binary, p->offset <= 1 ? 0 : last};
  }
  return try_append_binary(key, binary_subtype::vector, payload);
}

result<void> builder::try_append_vector_as_array(std::string_view key, const vector_view& v) {
  // The array is built apart and appended whole, so that an error leaves this builder unchanged
  // (and `v` may point into this builder's storage, which the append may move).
  const std::size_t n = v.dtype() == vector_dtype::float32 ? v.data().size() / 4 : v.data().size();
  builder array(16 + 16 * n);  // an element: type, key of up to 7 digits, NUL, 4 or 8 bytes
  char name[24];
  const auto index = [&name](std::size_t i) {
    const auto r = std::to_chars(name, name + sizeof name, i);
    return std::string_view(name, static_cast<std::size_t>(r.ptr - name));
  };
  result<void> r;
  switch (v.dtype()) {
  case vector_dtype::int8: {
    const auto v8 = *v.as_int8();
    for (std::size_t i = 0; i < v8.size() && r; ++i) r = array.try_append_int32(index(i), v8[i]);
    break;
  }
  case vector_dtype::float32: {
    const auto f = *v.as_float32();
    for (std::size_t i = 0; i < f.size() && r; ++i) r = array.try_append_double(index(i), f[i]);
    break;
  }
  case vector_dtype::packed_bit: {
    const auto b = v.data();
    for (std::size_t i = 0; i < b.size() && r; ++i) r = array.try_append_int32(index(i), b[i]);
    break;
  }
  }
  if (!r) return r;
  return try_append_array(key, array.view());
}

}  // namespace oid::bson
