// oid/bson/vector.hpp: BSON binary vectors (binary subtype 9): int8, float32 and packed bits.
//
// A binary vector is a binary value of subtype 9 whose bytes start with a 2-byte header, the
// element type (`vector_dtype`) and a padding byte, followed by the elements packed with no
// gaps: one signed byte per int8, four bytes per float32 (IEEE 754 binary32, least significant
// byte first), one bit per packed bit (most significant bit first; `padding` low bits of the last
// byte are not elements and are zero). MongoDB's BSON binary vector specification defines it.
//
// Reading: `vector_view::from_element` (or `from_binary`, `from_bytes`) is the door from bytes to
// a checked vector, as `bson::validate` is for documents. It refuses every header and length the
// specification does not allow with `errc::invalid_binary`, so past it the typed views cannot
// read outside the value or misread its elements. The views point into the document and copy
// nothing: int8 is a `std::span<const std::int8_t>`, packed bits a `packed_bits_view` over the
// bytes, and float32 a `float32_view` that decodes each element where it lies. A float32 vector
// cannot be a `std::span<const float>`: its elements start 7 or more bytes after the binary's
// key, at any address (a float needs 4-byte alignment), and on a big-endian host their bytes are
// in the other order; `float32_view::copy_to` copies them into floats (one `memcpy` on a
// little-endian host).
//
// Writing: `builder::append_vector` (oid/bson/builder.hpp) takes the same views, or a
// `std::span` of `std::int8_t` or `float`, and checks what the specification asks a writer to
// check (padding 0 to 7 and only on non-empty packed bits, unused bits zero).
//
//     oid::bson::builder b;
//     const float embedding[] = {0.25f, -1.5f, 3.0f};
//     b.append_vector("embedding", std::span<const float>(embedding));
//     auto v = oid::bson::vector_view::from_element(*b.view().find("embedding"));
//     if (!v) return report(v.error());                  // invalid_binary: not a vector
//     if (auto floats = v->as_float32()) {
//       for (float f : *floats) std::cout << f << '\n';   // 0.25 -1.5 3
//     }
#pragma once

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <oid/bson/type.hpp>
#include <oid/bson/view.hpp>
#include <oid/detail/endian.hpp>
#include <oid/result.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace oid::bson {

/// The element type of a binary vector: the first byte of its bytes. Other values are not
/// vectors (`errc::invalid_binary`); the specification reserves them for later types.
enum class vector_dtype : std::uint8_t {
  int8 = 0x03,        ///< signed 8-bit integers, two's complement
  float32 = 0x27,     ///< IEEE 754 binary32, least significant byte first
  packed_bit = 0x10,  ///< single bits, most significant bit of each byte first
};

/// The dtype's name: "int8", "float32", "packed_bit"; "unknown" for any other value.
std::string_view to_string(vector_dtype d) noexcept;

/// Bits packed eight to a byte, most significant bit first, with `padding` (0 to 7) unused low
/// bits at the end of the last byte: `{{0xEE, 0xE0}, 4}` holds the 12 bits 1110 1110 1110. A
/// plain pair of bytes and padding: nothing is checked when one is made. `vector_view` gives
/// only checked ones; `builder::append_vector` checks the one it is given.
struct packed_bits_view {
  std::span<const std::uint8_t> bytes;  ///< the packed bytes
  std::uint8_t padding = 0;             ///< unused low bits of the last byte (0 to 7)

  /// The number of bits: 8 per byte less the padding (0 for no bytes; for a padding above the
  /// bits there are, as in `{{}, 3}`, which no check accepts, also 0).
  constexpr std::size_t size() const noexcept {
    const std::size_t bits = bytes.size() * 8;
    return bits > padding ? bits - padding : 0;
  }
  /// True when there are no bits.
  constexpr bool empty() const noexcept { return size() == 0; }
  /// Bit `i`, counting from the most significant bit of the first byte. Precondition:
  /// `i < size()`.
  constexpr bool operator[](std::size_t i) const noexcept {
    return ((bytes[i / 8] >> (7 - i % 8)) & 1) != 0;
  }
};

/// The elements of a float32 vector, read in place: each access decodes the four
/// little-endian bytes of one element (any alignment, either host byte order). A random-access
/// range of `float` values (not references: the bytes are not floats in memory). Valid as long
/// as the bytes it points at.
class float32_view {
 public:
  /// A random-access iterator whose `*it` is a `float` value.
  class iterator {
   public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // reference is not float&
    using value_type = float;
    using difference_type = std::ptrdiff_t;
    using reference = float;

    constexpr iterator() noexcept = default;
    /// The element here. Precondition: not the end.
    float operator*() const noexcept { return decode(p_); }
    /// The element `n` positions on.
    float operator[](difference_type n) const noexcept { return *(*this + n); }
    iterator& operator++() noexcept {
      p_ += 4;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator old = *this;
      p_ += 4;
      return old;
    }
    iterator& operator--() noexcept {
      p_ -= 4;
      return *this;
    }
    iterator operator--(int) noexcept {
      iterator old = *this;
      p_ -= 4;
      return old;
    }
    iterator& operator+=(difference_type n) noexcept {
      p_ += 4 * n;
      return *this;
    }
    iterator& operator-=(difference_type n) noexcept {
      p_ -= 4 * n;
      return *this;
    }
    friend iterator operator+(iterator it, difference_type n) noexcept { return it += n; }
    friend iterator operator+(difference_type n, iterator it) noexcept { return it += n; }
    friend iterator operator-(iterator it, difference_type n) noexcept { return it -= n; }
    friend difference_type operator-(const iterator& a, const iterator& b) noexcept {
      return (a.p_ - b.p_) / 4;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.p_ == b.p_; }
    friend std::strong_ordering operator<=>(const iterator& a, const iterator& b) noexcept {
      return a.p_ <=> b.p_;
    }

   private:
    friend class float32_view;
    explicit iterator(const std::uint8_t* p) noexcept : p_(p) {}
    const std::uint8_t* p_ = nullptr;
  };

  /// No elements.
  constexpr float32_view() noexcept = default;
  /// The elements stored in `bytes`, four bytes each, little-endian. Precondition:
  /// `bytes.size()` is a multiple of 4 (`vector_view::as_float32` checked it).
  constexpr explicit float32_view(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  /// The number of elements.
  constexpr std::size_t size() const noexcept { return bytes_.size() / 4; }
  /// True when there are no elements.
  constexpr bool empty() const noexcept { return bytes_.empty(); }
  /// Element `i`, bit for bit (a NaN keeps its payload). Precondition: `i < size()`.
  float operator[](std::size_t i) const noexcept { return decode(bytes_.data() + 4 * i); }
  /// The first element.
  iterator begin() const noexcept { return iterator(bytes_.data()); }
  /// Past the last element.
  iterator end() const noexcept { return iterator(bytes_.data() + bytes_.size()); }
  /// The stored bytes (4 per element, little-endian).
  constexpr std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

  /// Copies the first `min(size(), out.size())` elements into `out`, bit for bit, and returns
  /// how many. One `memcpy` on a little-endian host. O(n).
  std::size_t copy_to(std::span<float> out) const noexcept;
  /// The elements as a `std::vector<float>`, bit for bit. O(n); allocates.
  std::vector<float> to_vector() const;

 private:
  static float decode(const std::uint8_t* p) noexcept {
    return std::bit_cast<float>(oid::detail::load_le_u32(p));
  }
  std::span<const std::uint8_t> bytes_;
};

/// A checked binary vector: a view of the bytes of a binary value of subtype 9 (header and
/// elements) that the specification accepts. Trivially copyable; valid as long as the bytes it
/// points at. Made only by the `from_*` functions, which check:
///   - at least the 2 header bytes (else offset: the size);
///   - a known dtype (offset 0);
///   - padding 0 for int8 and float32, 0 to 7 for packed bits, and 0 for packed bits with no
///     bytes (offset 1);
///   - float32: the elements' bytes a multiple of 4 (offset: where the incomplete element
///     starts);
///   - packed bits: the `padding` unused bits of the last byte zero (offset: the last byte). The
///     specification says readers SHOULD refuse them and writers MUST NOT write them; to read
///     such bytes anyway, take them from `element::get_binary()`.
/// Every refusal is `errc::invalid_binary` with the offset above, counted from the first header
/// byte (the start of `binary_view::bytes`).
class vector_view {
 public:
  /// An empty int8 vector (the 2 bytes 0x03 0x00).
  constexpr vector_view() noexcept = default;

  /// The vector stored in a binary value's bytes (`binary_view::bytes` of a subtype 9 value:
  /// header and elements). Errors: invalid_binary (see the class comment).
  static result<vector_view> from_bytes(std::span<const std::uint8_t> bytes) noexcept;
  /// The vector of a binary value. Errors: type_mismatch (offset 0) when the subtype is not 9;
  /// invalid_binary as `from_bytes`.
  static result<vector_view> from_binary(const binary_view& b) noexcept;
  /// The vector of an element. Errors: type_mismatch (offset 0) when the element is not a binary
  /// value of subtype 9; invalid_binary as `from_bytes`.
  ///
  ///     auto v = vector_view::from_element(*doc.find("embedding"));
  static result<vector_view> from_element(const element& e) noexcept;

  /// The element type.
  constexpr vector_dtype dtype() const noexcept { return static_cast<vector_dtype>(bytes_[0]); }
  /// The unused low bits of the last byte of a packed-bit vector (0 to 7); 0 for the others.
  constexpr std::uint8_t padding() const noexcept { return bytes_[1]; }
  /// The number of elements (bits for a packed-bit vector).
  std::size_t size() const noexcept;
  /// True when there are no elements.
  constexpr bool empty() const noexcept { return bytes_.size() == 2; }
  /// The binary value's bytes: the header and the elements.
  constexpr std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }
  /// The elements' bytes, after the header.
  constexpr std::span<const std::uint8_t> data() const noexcept { return bytes_.subspan(2); }
  /// The binary value (subtype 9) holding this vector, for `builder::append_binary`.
  constexpr binary_view to_binary() const noexcept { return {binary_subtype::vector, bytes_}; }

  /// The int8 elements, in place. Errors: type_mismatch (offset 0) for another dtype.
  result<std::span<const std::int8_t>> as_int8() const noexcept;
  /// The float32 elements, in place. Errors: type_mismatch (offset 0) for another dtype.
  result<float32_view> as_float32() const noexcept;
  /// The packed bits and their padding, in place. Errors: type_mismatch (offset 0) for another
  /// dtype.
  result<packed_bits_view> as_packed_bits() const noexcept;

  /// Same bytes (so same dtype, padding and elements, bit for bit).
  friend bool operator==(const vector_view& a, const vector_view& b) noexcept {
    return a.bytes_.size() == b.bytes_.size() &&
           std::memcmp(a.bytes_.data(), b.bytes_.data(), a.bytes_.size()) == 0;
  }

 private:
  static constexpr std::uint8_t empty_int8_[2] = {0x03, 0x00};
  constexpr explicit vector_view(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}
  std::span<const std::uint8_t> bytes_{empty_int8_};
};

}  // namespace oid::bson
