// oid/bson/validate.hpp: the one door from untrusted bytes to a `document_view`.
//
// `validate()` walks the whole document once and checks every rule of the BSON specification
// that a reader relies on: each declared length against the bytes around it, at every level;
// every terminating NUL; string lengths; type bytes; booleans; the old binary subtype's inner
// length; code-with-scope lengths; nesting depth; total size; and (by default) UTF-8 in strings,
// keys, regexes, symbols, code and DBPointer names. It reports the first problem as an
// `oid::error` whose offset is the absolute position, in `bytes`, of the field found wrong:
//
//   truncated           the input ends before the top-level document's declared end (offset 0),
//                       or has fewer than 4 bytes (offset 0)
//   bad_length_prefix   a length prefix that is impossible: below its type's minimum, negative, or
//                       running past the end of the enclosing document; a document whose elements
//                       end (type byte 0) before its declared length; a code-with-scope total that
//                       differs from its parts (offset of the length prefix)
//   truncated           a fixed-size value (double, int32, ObjectId, ...) that runs past the end
//                       of its document (offset of the value)
//   missing_terminator  a document whose last byte is not 0 (offset of that byte); a string
//                       whose last byte is not 0 (offset of that byte); a key, regex pattern or
//                       regex options with no NUL before the end of the document (offset of its
//                       first byte)
//   unknown_type        a type byte BSON does not define (offset of the type byte)
//   invalid_bool        a boolean byte other than 0 and 1 (its offset)
//   invalid_binary      subtype 0x02 whose inner length is not the outer length - 4 (offset of
//                       the inner length)
//   invalid_utf8        ill-formed UTF-8: bad lead or continuation bytes, overlong forms,
//                       surrogates, code points above U+10FFFF (offset of the sequence's first
//                       byte)
//   too_deep            an embedded document deeper than `max_depth` (offset of its length)
//   too_large           a top-level length above `max_size` (offset 0)
//   trailing_bytes      bytes after the document when `allow_trailing` is false (offset of the
//                       first extra byte)
//
// A document's length and terminator are checked before its elements; elements are checked in
// order, each fully (nested documents included) before the next. Complexity: O(size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/view.hpp>
#include <oid/result.hpp>
#include <span>
#include <string_view>

namespace oid::bson {

/// What `validate()` accepts beyond the BSON specification's fixed rules.
struct validate_options {
  /// Check that strings, keys, regexes, symbols, code and DBPointer names are well-formed UTF-8.
  bool check_utf8 = true;
  /// Deepest allowed nesting: the top-level document is depth 0, each embedded document, array
  /// or code-with-scope scope adds 1. Deeper input fails with too_deep.
  std::size_t max_depth = 100;
  /// Largest allowed top-level document, in bytes (MongoDB's limit is 16 MiB).
  std::size_t max_size = 16 * 1024 * 1024;
  /// Accept (and ignore) bytes after the document instead of failing with trailing_bytes.
  bool allow_trailing = false;
};

/// Checks that `bytes` is one valid BSON document and returns a view of it. With
/// `allow_trailing`, the document is the prefix its length declares and `view.size()` says where
/// the next one starts. Errors: see the top of this header. Allocates (and so may throw
/// `std::bad_alloc`) only when the input nests deeper than 64 levels.
///
///     auto doc = oid::bson::validate(bytes);
///     if (!doc) std::cerr << doc.error().message() << " at byte " << doc.error().offset;
result<document_view> validate(std::span<const std::uint8_t> bytes,
                               const validate_options& options = {});

/// `validate()` of the document at the front of `bytes`, ignoring what follows it (whatever
/// `options.allow_trailing` says): the reader of a stream of concatenated documents takes
/// `view.size()` bytes and continues after them.
result<document_view> validate_prefix(std::span<const std::uint8_t> bytes,
                                      const validate_options& options = {});

/// Checks that `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above
/// U+10FFFF; NUL is allowed). Errors: invalid_utf8 at the offset of the first bad sequence.
result<void> check_utf8(std::string_view text) noexcept;

}  // namespace oid::bson
