// oid/bson/document.hpp: `oid::bson::document`, an owning BSON document.
//
// A `document` owns the bytes of one valid BSON document in a `std::vector<std::uint8_t>`. It is
// made by `builder::extract()`, by `document::from_bytes()` (which validates), or by copying a
// view. `view()` gives the `document_view` to read it; a view of a temporary does not compile,
// since it would dangle as soon as the statement ends.
#pragma once

#include <cstdint>
#include <iterator>
#include <oid/bson/validate.hpp>
#include <oid/bson/view.hpp>
#include <oid/result.hpp>
#include <span>
#include <utility>
#include <vector>

namespace oid::bson {

class builder;

/// An owning BSON document: a regular value type, compared byte for byte.
///
///     auto doc = oid::bson::document::from_bytes(bytes);   // result<document>
///     if (doc) for (const auto& e : doc->view()) use(e);
class document {
 public:
  /// The empty document.
  document()
      : bytes_(std::begin(detail::empty_document_bytes), std::end(detail::empty_document_bytes)) {}
  /// A copy of the document `v` views.
  explicit document(document_view v) : bytes_(v.data(), v.data() + v.size()) {}

  /// Validates `bytes` (see `validate()`; errors as there) and copies the document. With
  /// `options.allow_trailing`, copies only the document at the front.
  static result<document> from_bytes(std::span<const std::uint8_t> bytes,
                                     const validate_options& options = {});
  /// As above, taking ownership of `bytes` instead of copying them (with `allow_trailing`, the
  /// bytes after the document are dropped). On error `bytes` is left unchanged.
  static result<document> from_bytes(std::vector<std::uint8_t>&& bytes,
                                     const validate_options& options = {});

  /// A view of the bytes, valid while this document lives unchanged.
  document_view view() const& noexcept { return document_view::unchecked(bytes_); }
  /// Deleted: the view would dangle once the temporary is gone.
  document_view view() const&& = delete;
  /// The bytes.
  std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }
  /// The size in bytes (at least 5).
  std::size_t size() const noexcept { return bytes_.size(); }
  /// True when the document has no elements.
  bool empty() const noexcept { return bytes_.size() <= 5; }
  /// Gives up the bytes; the document is left empty.
  std::vector<std::uint8_t> release() && {
    std::vector<std::uint8_t> out = std::move(bytes_);
    *this = document();
    return out;
  }

  /// Byte-for-byte equality.
  friend bool operator==(const document&, const document&) = default;

 private:
  friend class builder;
  struct trusted {};
  document(trusted, std::vector<std::uint8_t>&& bytes) noexcept : bytes_(std::move(bytes)) {}

  std::vector<std::uint8_t> bytes_;
};

/// The empty document, as a view.
inline constexpr document_view empty_document{};

}  // namespace oid::bson
