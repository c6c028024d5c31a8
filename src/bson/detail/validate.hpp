// Validation with part of the document already checked: for the client, which checks a cursor
// reply's documents while the rest of the reply is still arriving.
#pragma once

#include <cstddef>
#include <cstdint>
#include <oid/bson/validate.hpp>
#include <span>

namespace oid::bson::detail {

/// validate_prefix(bytes, options), except that the elements starting in [skip_begin, skip_end)
/// (offsets in `bytes`) are taken as checked: a walk that reaches one of them goes on at
/// skip_end. The caller vouches that the range is a run of whole elements of one embedded
/// document, each checked exactly as this walk would check it at its depth (type byte, key,
/// value), so that the result is the one validate_prefix gives. An empty range, or one that
/// cannot lie inside the document, checks everything.
result<document_view> validate_prefix_skipping(std::span<const std::uint8_t> bytes,
                                               const validate_options& options,
                                               std::size_t skip_begin, std::size_t skip_end);

/// A document inside a larger buffer: its offset and size in bytes.
struct doc_span {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};

/// The index of the first of `docs` that validate_prefix(bytes.subspan(offset, size), options)
/// rejects, or whose declared length is not `size` (or that does not lie inside `bytes`);
/// docs.size() when there is none. The result is the one of validating each in turn, found
/// faster: the documents are walked several at a time, interleaved (validate_many.cpp). The
/// bytes after a document may be read (never past `bytes`).
std::size_t validate_many(std::span<const std::uint8_t> bytes, std::span<const doc_span> docs,
                          const validate_options& options);

}  // namespace oid::bson::detail
