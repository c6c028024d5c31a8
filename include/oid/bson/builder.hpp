// oid/bson/builder.hpp: `oid::bson::builder`, which writes BSON into one contiguous buffer.
//
// The builder appends elements to one growing buffer. `open_document(key)`, `open_array(key)` and
// `open_javascript_with_scope(key, code)` write a placeholder length that `close()` fills in
// (back-patching), so nesting needs no second buffer, no copy and no allocation of its own. The
// top-level document is complete after every append: `view()` reads it whenever no document or
// array is open.
//
// What the builder writes is valid BSON: a key, regex pattern or regex options holding a NUL
// byte is refused with `errc::invalid_key` (`invalid_value` for regex parts), and a document that
// would exceed INT32_MAX bytes with `errc::too_large`. Every `append_*` comes in two forms:
// `append_x(...)` throws `oid::exception` with that error and returns the builder (for chaining),
// and `try_append_x(...)` returns `result<void>` and leaves the builder unchanged on error. Neither
// checks UTF-8 (as libbson's appenders do not): validate with `check_utf8` to check text that did
// not come from a trusted source, or `oid::bson::check_utf8()` a string before appending it.
// Documents, arrays and scopes passed in as `document_view`s are copied as they are.
//
//     oid::bson::builder b;
//     b.append_string("name", "Ada").append_int32("born", 1815);
//     b.open_array("langs").append_string("0", "en").append_string("1", "fr").close();
//     oid::bson::document doc = std::move(b).extract();
#pragma once

#include <cassert>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <oid/bson/decimal128.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/type.hpp>
#include <oid/bson/vector.hpp>
#include <oid/bson/view.hpp>
#include <oid/error.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/result.hpp>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace oid::bson {

/// Builds one BSON document. Copyable and movable; not thread-safe. Caller bugs (closing with
/// nothing open, `view()` or `extract()` with a scope open) are assertions, not errors.
class builder {
 public:
  /// An empty document.
  builder();
  /// An empty document, with room for `capacity` bytes before the buffer grows.
  explicit builder(std::size_t capacity);
  /// Copies what was built so far, open scopes included.
  builder(const builder&) = default;
  builder& operator=(const builder&) = default;
  /// Takes the other builder's buffer; the other is left empty, as after `extract()`.
  builder(builder&& other) noexcept;
  builder& operator=(builder&& other) noexcept;
  ~builder() = default;

  // --- Throwing appends: each throws oid::exception on the errors of its try_ form. ---

  /// Appends a double (0x01).
  builder& append_double(std::string_view key, double v) { return ok(try_append_double(key, v)); }
  /// Appends a UTF-8 string (0x02); it may hold NUL.
  builder& append_string(std::string_view key, std::string_view v) {
    return ok(try_append_string(key, v));
  }
  /// Appends an embedded document (0x03), copied from a valid view.
  builder& append_document(std::string_view key, document_view v) {
    return ok(try_append_document(key, v));
  }
  /// Appends an array (0x04) copied from a valid view whose keys are "0", "1", ... (not checked).
  builder& append_array(std::string_view key, document_view v) {
    return ok(try_append_array(key, v));
  }
  /// Appends a binary value (0x05). For subtype 0x02 the inner length is written before `bytes`.
  builder& append_binary(std::string_view key, std::uint8_t subtype,
                         std::span<const std::uint8_t> bytes) {
    return ok(try_append_binary(key, subtype, bytes));
  }
  /// Appends a binary value (0x05, not the old subtype 0x02) of `size` bytes and returns them
  /// for the caller to fill: data read straight into the document, with no copy in between
  /// (GridFS chunks). Every byte must be written before the document is used; the span is valid
  /// until the next append. Errors: invalid_key, too_large, invalid_value for subtype 0x02.
  result<std::span<std::uint8_t>> try_append_binary_space(std::string_view key,
                                                          std::uint8_t subtype, std::size_t size);
  /// Appends a binary vector (0x05, subtype 9; oid/bson/vector.hpp) of int8 elements.
  builder& append_vector(std::string_view key, std::span<const std::int8_t> v) {
    return ok(try_append_vector(key, v));
  }
  /// Appends a binary vector of float32 elements, each written bit for bit, least significant
  /// byte first whatever the host's byte order.
  builder& append_vector(std::string_view key, std::span<const float> v) {
    return ok(try_append_vector(key, v));
  }
  /// Appends a binary vector of packed bits: the bytes and their padding, checked first.
  builder& append_vector(std::string_view key, packed_bits_view v) {
    return ok(try_append_vector(key, v));
  }
  /// Appends a copy of a checked binary vector.
  builder& append_vector(std::string_view key, const vector_view& v) {
    return ok(try_append_vector(key, v));
  }
  /// Appends a binary vector of type `dtype` made from the numbers of a valid array (the
  /// specification's conversion from an array; nothing converts implicitly).
  builder& append_vector(std::string_view key, vector_dtype dtype, document_view array,
                         std::uint8_t padding = 0) {
    return ok(try_append_vector(key, dtype, array, padding));
  }
  /// Appends the elements of a binary vector as an array (0x04) of numbers: an int32 per int8
  /// element, a double per float32 element (a signaling NaN becomes quiet on most hosts), an
  /// int32 (0 to 255) per byte of packed bits (the padding is not in the array).
  builder& append_vector_as_array(std::string_view key, const vector_view& v) {
    return ok(try_append_vector_as_array(key, v));
  }
  /// Appends undefined (0x06, deprecated).
  builder& append_undefined(std::string_view key) { return ok(try_append_undefined(key)); }
  /// Appends an ObjectId (0x07).
  builder& append_object_id(std::string_view key, const object_id& v) {
    return ok(try_append_object_id(key, v));
  }
  /// Appends a boolean (0x08).
  builder& append_bool(std::string_view key, bool v) { return ok(try_append_bool(key, v)); }
  /// Appends a UTC datetime (0x09): milliseconds since the Unix epoch.
  builder& append_date_time(std::string_view key, std::int64_t ms) {
    return ok(try_append_date_time(key, ms));
  }
  /// Appends null (0x0A).
  builder& append_null(std::string_view key) { return ok(try_append_null(key)); }
  /// Appends a regular expression (0x0B). Pattern and options are written as given (the
  /// specification wants options in alphabetical order; that is the caller's to do).
  builder& append_regex(std::string_view key, std::string_view pattern, std::string_view options) {
    return ok(try_append_regex(key, pattern, options));
  }
  /// Appends a DBPointer (0x0C, deprecated).
  builder& append_db_pointer(std::string_view key, std::string_view ref, const object_id& id) {
    return ok(try_append_db_pointer(key, ref, id));
  }
  /// Appends JavaScript code (0x0D).
  builder& append_javascript(std::string_view key, std::string_view code) {
    return ok(try_append_javascript(key, code));
  }
  /// Appends a symbol (0x0E, deprecated).
  builder& append_symbol(std::string_view key, std::string_view v) {
    return ok(try_append_symbol(key, v));
  }
  /// Appends code with scope (0x0F, deprecated); the scope is copied from a valid view.
  builder& append_javascript_with_scope(std::string_view key, std::string_view code,
                                        document_view scope) {
    return ok(try_append_javascript_with_scope(key, code, scope));
  }
  /// Appends an int32 (0x10).
  builder& append_int32(std::string_view key, std::int32_t v) {
    return ok(try_append_int32(key, v));
  }
  /// Appends a timestamp (0x11).
  builder& append_timestamp(std::string_view key, timestamp_value v) {
    return ok(try_append_timestamp(key, v));
  }
  /// Appends an int64 (0x12).
  builder& append_int64(std::string_view key, std::int64_t v) {
    return ok(try_append_int64(key, v));
  }
  /// Appends a decimal128 (0x13).
  builder& append_decimal128(std::string_view key, decimal128 v) {
    return ok(try_append_decimal128(key, v));
  }
  /// Appends min key (0xFF).
  builder& append_min_key(std::string_view key) { return ok(try_append_min_key(key)); }
  /// Appends max key (0x7F).
  builder& append_max_key(std::string_view key) { return ok(try_append_max_key(key)); }
  /// Appends a copy of an element of a valid document, under its own key.
  builder& append_element(const element& e) { return ok(try_append_element(e.key(), e)); }
  /// Appends a copy of an element's value (same type and value bytes) under `key`.
  builder& append_element(std::string_view key, const element& e) {
    return ok(try_append_element(key, e));
  }
  /// Appends every element of the valid document `doc`, as they are (one copy of its bytes;
  /// libbson's `bson_concat`). Keys are not compared with those already appended.
  builder& append_elements(document_view doc) { return ok(try_append_elements(doc)); }
  /// Starts an embedded document under `key`; elements go into it until `close()`.
  builder& open_document(std::string_view key) { return ok(try_open_document(key)); }
  /// Starts an array under `key`; append its elements with keys "0", "1", ... until `close()`.
  builder& open_array(std::string_view key) { return ok(try_open_array(key)); }
  /// Ends the innermost open document or array. Precondition: one is open (asserted).
  builder& close() { return ok(try_close()); }
  /// Starts a JavaScript code-with-scope value under `key`, with `code`, and opens its scope: the
  /// scope's elements go in until `close()`, which finishes the scope and the value. Builds in
  /// place what `append_javascript_with_scope` copies from a finished scope document.
  builder& open_javascript_with_scope(std::string_view key, std::string_view code) {
    return ok(try_open_javascript_with_scope(key, code));
  }

  /// Appends `v` with the typed append its type selects: bool, double/float, integers (signed
  /// up to 32 bits and unsigned up to 16 as int32, wider ones up to int64 as int64), anything
  /// convertible to std::string_view, object_id, decimal128, document_view, binary_view,
  /// vector_view, packed_bits_view (binary vectors), regex_view, db_pointer_view,
  /// code_with_scope_view, timestamp_value, a
  /// std::chrono::sys_time (as a datetime, in milliseconds) and nullptr (null).
  template <class T>
  builder& append(std::string_view key, const T& v);

  // --- Non-throwing appends. On error, nothing was written. ---

  /// Errors: invalid_key (key holds NUL, offset of the NUL in the key), too_large.
  result<void> try_append_double(std::string_view key, double v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_string(std::string_view key, std::string_view v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_document(std::string_view key, document_view v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_array(std::string_view key, document_view v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_binary(std::string_view key, std::uint8_t subtype,
                                 std::span<const std::uint8_t> bytes);
  /// Errors: invalid_key, too_large.
  result<void> try_append_vector(std::string_view key, std::span<const std::int8_t> v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_vector(std::string_view key, std::span<const float> v);
  /// Errors: invalid_binary when the specification forbids the value: padding above 7 or on no
  /// bytes (offset 0), unused bits of the last byte not zero (offset: that byte's index in
  /// `v.bytes`); invalid_key, too_large.
  result<void> try_append_vector(std::string_view key, packed_bits_view v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_vector(std::string_view key, const vector_view& v);
  /// The array's elements, in order, must be: for int8, int32 or int64 values from -128 to 127;
  /// for packed_bit, int32 or int64 values from 0 to 255, one byte of bits each; for float32,
  /// doubles, each rounded to the nearest float (beyond the largest float: infinity from half an
  /// ulp above it, as IEEE 754 rounds). The specification forbids converting a double to an
  /// integer vector and an integer to a float32 one. Errors (offsets are of the offending
  /// element in `array`): type_mismatch for an element of another type, invalid_value for an
  /// integer out of range; invalid_binary for an unknown dtype or a padding the dtype forbids
  /// (offset 0), or packed bits whose unused bits are not zero (offset: the last element);
  /// invalid_key, too_large.
  result<void> try_append_vector(std::string_view key, vector_dtype dtype, document_view array,
                                 std::uint8_t padding = 0);
  /// Errors: invalid_key, too_large.
  result<void> try_append_vector_as_array(std::string_view key, const vector_view& v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_undefined(std::string_view key);
  /// Errors: invalid_key, too_large.
  result<void> try_append_object_id(std::string_view key, const object_id& v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_bool(std::string_view key, bool v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_date_time(std::string_view key, std::int64_t ms);
  /// Errors: invalid_key, too_large.
  result<void> try_append_null(std::string_view key);
  /// Errors: invalid_key, invalid_value (NUL in the pattern or options; offset of the NUL in
  /// that string), too_large.
  result<void> try_append_regex(std::string_view key, std::string_view pattern,
                                std::string_view options);
  /// Errors: invalid_key, too_large.
  result<void> try_append_db_pointer(std::string_view key, std::string_view ref,
                                     const object_id& id);
  /// Errors: invalid_key, too_large.
  result<void> try_append_javascript(std::string_view key, std::string_view code);
  /// Errors: invalid_key, too_large.
  result<void> try_append_symbol(std::string_view key, std::string_view v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_javascript_with_scope(std::string_view key, std::string_view code,
                                                document_view scope);
  /// Errors: invalid_key, too_large.
  result<void> try_append_int32(std::string_view key, std::int32_t v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_timestamp(std::string_view key, timestamp_value v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_int64(std::string_view key, std::int64_t v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_decimal128(std::string_view key, decimal128 v);
  /// Errors: invalid_key, too_large.
  result<void> try_append_min_key(std::string_view key);
  /// Errors: invalid_key, too_large.
  result<void> try_append_max_key(std::string_view key);
  /// Errors: invalid_key, too_large. `e` must come from a valid document.
  result<void> try_append_element(std::string_view key, const element& e);
  /// Errors: too_large. `doc` must be valid.
  result<void> try_append_elements(document_view doc);
  /// Errors: invalid_key, too_large.
  result<void> try_open_document(std::string_view key);
  /// Errors: invalid_key, too_large.
  result<void> try_open_array(std::string_view key);
  /// Errors: invalid_key, too_large.
  result<void> try_open_javascript_with_scope(std::string_view key, std::string_view code);
  /// `close()` in the style of the other try_ functions. It never fails: the size limit was
  /// checked, terminators included, when the elements were appended.
  result<void> try_close();

  // --- State. ---

  /// The top-level document built so far. Precondition: no document or array is open
  /// (asserted). Valid until the next change to the builder.
  document_view view() const noexcept {
    assert(depth_ == 0 && "builder::view() with a document or array still open");
    return size_ == 0 ? document_view{} : document_view::unchecked({buf_.data(), size_});
  }
  /// The finished document; the builder is left empty. Precondition: nothing open (asserted).
  document extract() &&;
  /// How many documents and arrays are open (0 at the top level).
  std::size_t depth() const noexcept { return depth_; }
  /// Bytes written so far.
  std::size_t size() const noexcept { return size_ == 0 ? 5 : size_; }
  /// Makes room for `bytes` bytes in all.
  void reserve(std::size_t bytes);
  /// Starts over with an empty document, keeping the buffer's capacity.
  void clear() noexcept;

 private:
  builder& ok(const result<void>& r) {
    if (!r) oid::throw_exception(r.error());
    return *this;
  }
  // Writes the element header (type, key, NUL) and reserves `value_size` value bytes, returning
  // where they go; nullptr on error, with the error in `err`.
  std::uint8_t* make_room(std::size_t n, oid::error& err);
  std::uint8_t* start_element(type t, std::string_view key, std::size_t value_size,
                              oid::error& err);
  // Makes room for `n` more bytes (and the empty document first, after extract()).
  void grow(std::size_t n);
  // Resets the storage to the empty document.
  void start_over() noexcept;
  // Records an open scope whose length prefix is at `slot` (see builder.cpp, "Scopes").
  void push_scope(std::uint8_t* slot, std::uint32_t link) noexcept;
  result<void> append_string_like(type t, std::string_view key, std::string_view v);
  result<void> append_fixed(type t, std::string_view key, const void* p, std::size_t n);
  // An element whose value is the unsigned integer `v` in little-endian order (int32, int64,
  // timestamp, date-time, double's bits). Defined and used in builder.cpp only.
  template <class U>
  result<void> append_le(type t, std::string_view key, U v);
  result<void> append_document_like(type t, std::string_view key, document_view v);
  result<void> open(type t, std::string_view key);

  std::vector<std::uint8_t> buf_;  // storage: bytes [0, size_) are written, the rest is room
  std::size_t size_ = 0;           // 0 only after extract(), until the next append
  std::uint32_t open_ = 0;         // offset of the innermost open scope's length prefix
  std::uint32_t depth_ = 0;        // open scopes
};

/// A `std::chrono::sys_time` of any duration (a BSON datetime, in milliseconds).
template <class T>
concept sys_time_point = std::is_same_v<T, std::chrono::sys_time<typename T::duration>>;

template <class T>
builder& builder::append(std::string_view key, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return append_bool(key, v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return append_double(key, static_cast<double>(v));
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr ((std::is_signed_v<T> && sizeof(T) <= 4) ||
                  (std::is_unsigned_v<T> && sizeof(T) <= 2)) {
      return append_int32(key, static_cast<std::int32_t>(v));
    } else if constexpr ((std::is_signed_v<T> && sizeof(T) <= 8) ||
                         (std::is_unsigned_v<T> && sizeof(T) <= 4)) {
      return append_int64(key, static_cast<std::int64_t>(v));
    } else {
      static_assert(!std::is_same_v<T, T>, "no BSON type holds every value of this integer");
    }
  } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
    return append_null(key);
  } else if constexpr (std::is_same_v<T, object_id>) {
    return append_object_id(key, v);
  } else if constexpr (std::is_same_v<T, decimal128>) {
    return append_decimal128(key, v);
  } else if constexpr (std::is_same_v<T, document_view>) {
    return append_document(key, v);
  } else if constexpr (std::is_same_v<T, document>) {
    return append_document(key, v.view());
  } else if constexpr (std::is_same_v<T, binary_view>) {
    return append_binary(key, v.subtype, v.bytes);
  } else if constexpr (std::is_same_v<T, vector_view> || std::is_same_v<T, packed_bits_view>) {
    return append_vector(key, v);
  } else if constexpr (std::is_same_v<T, regex_view>) {
    return append_regex(key, v.pattern, v.options);
  } else if constexpr (std::is_same_v<T, db_pointer_view>) {
    return append_db_pointer(key, v.ref, v.id);
  } else if constexpr (std::is_same_v<T, code_with_scope_view>) {
    return append_javascript_with_scope(key, v.code, v.scope);
  } else if constexpr (std::is_same_v<T, timestamp_value>) {
    return append_timestamp(key, v);
  } else if constexpr (sys_time_point<T>) {
    return append_date_time(
        key, std::chrono::floor<std::chrono::milliseconds>(v).time_since_epoch().count());
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return append_string(key, std::string_view(v));
  } else {
    static_assert(!std::is_same_v<T, T>, "no BSON append for this type");
  }
}

}  // namespace oid::bson
