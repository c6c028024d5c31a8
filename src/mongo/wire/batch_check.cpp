#include "mongo/wire/batch_check.hpp"

#include <algorithm>
#include <cstring>
#include <oid/detail/endian.hpp>
#include <string_view>
#include <utility>

namespace oid::mongo::detail {

namespace {

using oid::detail::load_le_i32;

// Where the body starts when it is the message's first section: header, flags, kind byte.
constexpr std::size_t body_at = message_header_size + 4 + 1;
// A batch document is three levels below the body: cursor, batch, document.
constexpr std::size_t batch_depth = 3;

// The length of the embedded document (or array) whose length prefix is at `v` in a document
// ending at `term`, when it fits there as validation requires; 0 when not.
std::size_t embedded_length(std::span<const std::uint8_t> b, std::size_t v, std::size_t term) {
  if (v > term || term - v < 4) return 0;
  const std::int32_t n = load_le_i32(b.data() + v);
  if (n < 5 || static_cast<std::size_t>(n) > term - v) return 0;
  return static_cast<std::size_t>(n);
}

constexpr std::size_t not_arrived = 0;
constexpr std::size_t ill_formed = static_cast<std::size_t>(-1);

// The offset after the NUL of the key at `k` among the first `limit` bytes of `b`, the key
// well-formed as validation requires; not_arrived when its NUL is not among them; ill_formed when
// it is not well-formed UTF-8.
std::size_t after_key(std::span<const std::uint8_t> b, std::size_t k, std::size_t limit,
                      bool check_utf8) {
  if (k >= limit) return not_arrived;
  // A batch's keys are its indexes, "0", "1" and on: a few ASCII bytes, read one by one here (a
  // call to memchr and one to the UTF-8 check cost more than such a key: 3% of find many's user
  // time on the canned server). A longer key, or one with a byte that is not ASCII, takes the
  // general way.
  const std::uint8_t* key = b.data() + k;
  const std::size_t shortest = std::min<std::size_t>(limit - k, 8);
  for (std::size_t i = 0; i < shortest && key[i] < 0x80; ++i) {
    if (key[i] == 0) return k + i + 1;
  }
  const void* nul = std::memchr(b.data() + k, 0, limit - k);
  if (nul == nullptr) return not_arrived;
  const auto end = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - b.data());
  if (check_utf8 &&
      !bson::check_utf8({reinterpret_cast<const char*>(b.data() + k), end - k}).has_value()) {
    return ill_formed;
  }
  return end + 1;
}

}  // namespace

void doc_index::grow() {
  // From 16 documents (128 bytes: the index of a small batch costs little), doubling.
  const std::uint32_t n = capacity_ == 0 ? 16 : 2 * capacity_;
  auto grown = std::make_unique_for_overwrite<bson::detail::doc_span[]>(n);
  std::copy(docs_.get(), docs_.get() + size_, grown.get());
  docs_ = std::move(grown);
  capacity_ = n;
}

batch_check::batch_check(const op_msg_limits& limits, doc_index storage)
    : options_(section_options(limits)), index_(std::move(storage)) {
  index_.clear();
  usable_ = options_.max_depth >= batch_depth;
  if (usable_) options_.max_depth -= batch_depth;
}

// The body's first element must be the cursor document and the cursor's first element the batch
// array, each checked as the validator would check it, so that the validator, reaching the batch,
// walks the same elements this one does.
bool batch_check::find_batch(std::span<const std::uint8_t> arrived) {
  static constexpr std::string_view cursor_key{"cursor\0", 7};
  const std::size_t length = static_cast<std::size_t>(load_le_i32(arrived.data()));
  if (arrived[body_at - 1] != 0) return false;  // the first section is not the body
  const std::size_t body = embedded_length(arrived, body_at, length);
  // A body larger than a section may be is refused by decode_op_msg: indexing its batch would only
  // let a hostile server make the client hold an index of up to 8 bytes per 7 of a 48 MB message.
  if (body == 0 || body > options_.max_size) return false;
  const std::size_t body_term = body_at + body - 1;
  std::size_t at = body_at + 4;
  if (arrived[at] != static_cast<std::uint8_t>(bson::type::document) ||
      std::memcmp(arrived.data() + at + 1, cursor_key.data(), cursor_key.size()) != 0) {
    return false;
  }
  const std::size_t cursor_at = at + 1 + cursor_key.size();
  const std::size_t cursor = embedded_length(arrived, cursor_at, body_term);
  if (cursor == 0) return false;
  const std::size_t cursor_term = cursor_at + cursor - 1;
  at = cursor_at + 4;
  if (arrived[at] != static_cast<std::uint8_t>(bson::type::array)) return false;
  // The prefix holds "firstBatch" and its length: a key not ended by then is not a batch's.
  const std::size_t batch_at = after_key(arrived, at + 1, arrived.size(), options_.check_utf8);
  if (batch_at == not_arrived || batch_at == ill_formed || batch_at > cursor_term ||
      arrived.size() - batch_at < 4) {
    return false;
  }
  const std::string_view key(reinterpret_cast<const char*>(arrived.data() + at + 1),
                             batch_at - at - 2);
  if (key != "firstBatch" && key != "nextBatch") return false;
  const std::size_t batch = embedded_length(arrived, batch_at, cursor_term);
  if (batch == 0) return false;
  first_ = next_ = batch_at + 4;
  batch_term_ = batch_at + batch - 1;
  return true;
}

void batch_check::advance(std::span<const std::uint8_t> arrived) {
  if (!usable_) return;
  if (!in_batch_) {
    // The header, flags, kind byte, body length, the cursor element (8 bytes before its length),
    // the cursor's length, the batch element's type and key ("firstBatch", 11 bytes) and length.
    constexpr std::size_t prefix = body_at + 4 + 8 + 4 + 1 + 11 + 4;
    if (arrived.size() < prefix) return;
    usable_ = find_batch(arrived);
    if (!usable_) return;
    in_batch_ = true;
  }
  // Whole documents only; the element that has not arrived whole waits for the next piece. The
  // walk checks each element's header as the validator would (type, key, length) and records the
  // document; the documents are validated after it, all at once.
  const std::size_t limit = std::min(arrived.size(), batch_term_);
  const std::size_t fresh_from = index().size();
  std::size_t at = next_;
  bool bad_header = false;  // the validator reports what is wrong with the element at `at`
  while (at < limit) {
    if (arrived[at] != static_cast<std::uint8_t>(bson::type::document)) {
      bad_header = true;
      break;
    }
    const std::size_t v = after_key(arrived, at + 1, limit, options_.check_utf8);
    if (v == ill_formed) {
      bad_header = true;
      break;
    }
    if (v == not_arrived || limit - v < 4) {
      bad_header = limit == batch_term_;  // it never will arrive whole
      break;
    }
    const std::size_t n = embedded_length(arrived, v, batch_term_);
    if (n == 0) {
      bad_header = true;
      break;
    }
    if (n > arrived.size() - v) break;
    // 32 bits suffice: the document lies in the message, whose length is an int32.
    record({static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(n)});
    at = v + n;
    // Each header's place comes from the one before, so each header that is not in the cache
    // stalls the walk. A batch's documents are often of a size: the header `ahead` documents on
    // is asked for where it would be if they all were this one's. (Find many of tweets on the
    // canned server: this walk 0.016-0.022 -> 0.005-0.009 us a document, perf-sampled;
    // docs/speed.md.)
    constexpr std::size_t ahead = 8;
    if (n <= (arrived.size() - at) / ahead) __builtin_prefetch(arrived.data() + at + ahead * n);
  }
  const auto fresh = index().subspan(fresh_from);
  const std::size_t valid =
      fresh.empty() ? 0 : bson::detail::validate_many(arrived, fresh, options_);
  if (valid < fresh.size()) {
    // The checked range stops at the element of the first invalid document, as it would have
    // one document at a time: decode_op_msg validates it again and reports the error.
    next_ = valid == 0 ? next_ : fresh[valid - 1].offset + fresh[valid - 1].size;
    if (first_count_ > 0) {
      first_count_ = static_cast<std::uint32_t>(fresh_from + valid);
    } else {
      index_.truncate(fresh_from + valid);
    }
    usable_ = false;
    return;
  }
  next_ = at;
  if (bad_header) usable_ = false;
}

void batch_check::record(bson::detail::doc_span d) {
  if (index_.empty() && first_count_ < first_docs_.size()) {
    first_docs_[first_count_++] = d;
    return;
  }
  for (std::uint32_t i = 0; i < first_count_; ++i) index_.push_back(first_docs_[i]);
  first_count_ = 0;
  index_.push_back(d);
}

checked_batch batch_check::checked() const noexcept {
  return in_batch_ ? checked_batch{first_, next_} : checked_batch{};
}

}  // namespace oid::mongo::detail
