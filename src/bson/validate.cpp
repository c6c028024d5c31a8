#include <array>
#include <bit>
#include <cstring>
#include <oid/bson/validate.hpp>
#include <vector>

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

#include "bson/detail/bytes.hpp"
#include "bson/detail/validate.hpp"

namespace oid::bson {

namespace {

// The offset of the first ill-formed sequence in [p, p + n), or n when all is well-formed
// (Unicode 15, table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
std::size_t utf8_error(const std::uint8_t* p, std::size_t n) noexcept {
  std::size_t i = 0;
  while (i < n) {
    // ASCII runs dominate real data: skip them eight bytes at a time.
    while (n - i >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if ((w & 0x8080808080808080ULL) != 0) break;
      i += 8;
    }
    if (i >= n) break;
    const std::uint8_t c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    std::uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return n;
}

struct frame {
  std::size_t start;  // offset of the document's length prefix
  std::size_t term;   // offset of its terminating NUL
};

// The depth stack: inline for ordinary nesting, on the heap beyond it.
class frame_stack {
 public:
  void push(frame f) {
    if (size_ < inline_capacity) {
      inline_[size_] = f;
    } else {
      heap_.push_back(f);
    }
    ++size_;
  }
  void pop() noexcept {
    --size_;
    if (size_ >= inline_capacity) heap_.pop_back();
  }
  frame& top() noexcept { return size_ <= inline_capacity ? inline_[size_ - 1] : heap_.back(); }
  std::size_t size() const noexcept { return size_; }

 private:
  static constexpr std::size_t inline_capacity = 64;
  frame inline_[inline_capacity];
  std::vector<frame> heap_;
  std::size_t size_ = 0;
};

// Each check returns the offset where reading continues, or `bad` after recording the error:
// plain integers keep the per-element path free of result<> construction.
constexpr std::size_t bad = static_cast<std::size_t>(-1);

// How the loop of `validator::run` treats each type byte: most values have a fixed size (checked
// with one comparison), strings and embedded documents have their own paths, and the rare types go
// through `validator::value`. One table lookup replaces a switch per element.
enum class shape : std::uint8_t { invalid, fixed, string, document, other };
struct type_shape {
  shape kind = shape::invalid;
  std::uint8_t size = 0;  // the value's bytes, for shape::fixed
};
constexpr std::array<type_shape, 256> make_shapes() {
  std::array<type_shape, 256> s{};
  const auto fixed = [&](type t, std::uint8_t n) {
    s[static_cast<std::uint8_t>(t)] = {shape::fixed, n};
  };
  for (type t : {type::undefined, type::null, type::min_key, type::max_key}) fixed(t, 0);
  fixed(type::boolean, 1);  // and its byte must be 0 or 1
  fixed(type::int32, 4);
  for (type t : {type::double_, type::date_time, type::timestamp, type::int64}) fixed(t, 8);
  fixed(type::object_id, 12);
  fixed(type::decimal128, 16);
  for (type t : {type::string, type::javascript, type::symbol}) {
    s[static_cast<std::uint8_t>(t)] = {shape::string, 0};
  }
  for (type t : {type::document, type::array}) {
    s[static_cast<std::uint8_t>(t)] = {shape::document, 0};
  }
  for (type t : {type::binary, type::regex, type::db_pointer, type::javascript_with_scope}) {
    s[static_cast<std::uint8_t>(t)] = {shape::other, 0};
  }
  return s;
}
constexpr auto shapes = make_shapes();

// One walk through a document and the documents it holds, depth first: where it is, the
// document it is in, how deep that is, and the documents that enclose it.
struct lane {
  std::size_t pos = 0;  // the next element, or cur.term when the document's elements are done
  frame cur{};
  std::size_t depth = 0;  // of cur: the top-level document is 0
  bool active = false;
  frame_stack stack;
};

// Embedded documents at least this long go to an idle lane (a shorter one costs less to walk
// than to hand over).
constexpr std::size_t handover_size = 64;
// When the rest of the document a lane is in is at least this long (a cursor's batch), the idle
// lane takes the first half of it instead, so that each lane reads its own part of memory from
// start to end: lanes that take turns over neighbouring documents ran at half the speed of one
// lane once the document was larger than the CPU's caches.
constexpr std::size_t split_size = 64 * 1024;

class validator {
 public:
  validator(const std::uint8_t* b, const validate_options& o) noexcept : b_(b), o_(o) {}

  // Validates the document of `len` bytes at offset 0 (its length and terminator already
  // checked by the caller).
  //
  // Each element's position depends on the one before (its key's end, its length), so one walk
  // is a chain of dependent loads, and as slow as that chain however few instructions it takes.
  // Two walks take turns instead, one element each, on independent parts of the document: when
  // one opens an embedded document while the other is idle, the idle one takes it and the first
  // skips it (its length and terminator checked). A cursor's batch of documents keeps both busy.
  // Every part is checked exactly as one walk checks it, so the document is valid for both or
  // for neither; but the first error in document order is what must be reported, so on any error
  // one walk goes again from the start and reports the first it meets.
  result<void> run(std::size_t len) {
    len_ = len;
    const bool skipping = skip_end_ > skip_begin_;
    if (skipping ? walk<2, true>(len) : walk<2, false>(len)) return {};
    if (skipping ? walk<1, true>(len) : walk<1, false>(len)) return {};  // (cannot happen)
    return oid::error{err_code_, err_at_};
  }

  // Elements that start in [begin, end) are taken as checked (see validate_prefix_skipping).
  void skip(std::size_t begin, std::size_t end) noexcept {
    skip_begin_ = begin;
    skip_end_ = end;
  }

 private:
  template <int lanes, bool skipping>
  bool walk(std::size_t len) {
    lane l[lanes];
    l[0].pos = 4;
    l[0].cur = {0, len - 1};
    l[0].active = true;
    for (;;) {
      if constexpr (lanes == 1) {
        if (!l[0].active) return true;
        if (!step<skipping>(l[0], nullptr)) return false;
      } else {
        if (l[0].active && !step<skipping>(l[0], &l[1])) return false;
        if (l[1].active && !step<skipping>(l[1], &l[0])) return false;
        if (!l[0].active && !l[1].active) return true;
      }
    }
  }

  // One element of `w`'s document, or the end of that document. False on an error (in err_code_ and
  // err_at_).
  template <bool skipping>
  bool step(lane& w, lane* idle) {
    std::size_t pos = w.pos;
    if constexpr (skipping) {
      // A walk reaches the checked elements only at one of their starts (the first, or one a
      // split lands on), never inside one: it goes on after the last.
      if (pos - skip_begin_ < skip_end_ - skip_begin_) {
        w.pos = skip_end_;
        return true;
      }
    }
    if (pos == w.cur.term) {
      if (w.stack.size() == 0) {
        w.active = false;
        return true;
      }
      w.cur = w.stack.top();
      w.stack.pop();
      --w.depth;
      w.pos = pos + 1;
      return true;
    }
    if (idle != nullptr && !idle->active && w.cur.term - pos >= split_size) {
      // The idle lane ends its part where this one goes on, as if the document ended there.
      const std::size_t middle = element_after(pos, pos + (w.cur.term - pos) / 2, w.cur.term);
      if (middle == bad) return false;
      idle->pos = pos;
      idle->cur = {w.cur.start, middle};
      idle->depth = w.depth;
      idle->active = true;
      w.pos = middle;
      return true;
    }
    const std::uint8_t t = b_[pos];
    const type_shape s = shapes[t];
    if (s.kind == shape::invalid) {
      // Type 0 here: the document's elements ended before its declared length.
      fail(t == 0 ? errc::bad_length_prefix : errc::unknown_type, t == 0 ? w.cur.start : pos);
      return false;
    }
    const std::size_t term = w.cur.term;
    const std::size_t k = pos + 1;
    std::size_t v = plain_key_end(k, term) + 1;
    if (v == 0) {  // bad + 1: not plain ASCII, or too near the end for a word
      const void* nul = std::memchr(b_ + k, 0, term - k);
      if (nul == nullptr) {
        fail(errc::missing_terminator, k);
        return false;
      }
      v = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - b_) + 1;
      if (!utf8(k, v - 1 - k)) return false;
    }
    switch (s.kind) {
    case shape::fixed:
      if (term - v < s.size) {
        fail(errc::truncated, v);
        return false;
      }
      if (t == static_cast<std::uint8_t>(type::boolean) && b_[v] > 1) {
        fail(errc::invalid_bool, v);
        return false;
      }
      pos = v + s.size;
      break;
    case shape::string: pos = string(v, term); break;
    case shape::document: pos = open(w, idle, v, term); break;
    default: pos = value(w, idle, t, v, term); break;
    }
    w.pos = pos;
    return pos != bad;
  }

 private:
  std::size_t fail(errc code, std::size_t at) noexcept {
    err_code_ = code;
    err_at_ = at;
    return bad;
  }

  static constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;

  // The offset of the NUL that ends the key at k, when it comes before `term` and, with UTF-8
  // checks, every byte before it is ASCII (real keys are): found eight bytes at a time, which
  // replaces a call to memchr and one to the UTF-8 decoder per element. `bad` otherwise, and
  // near the document's end (a word must fit): the caller then takes the full path, which finds
  // the exact error if there is one. (x - 0x01..01) & ~x & 0x80..80 sets the high bit of every
  // zero byte, and maybe of bytes after the first (a borrow), so its lowest set bit is exact.
  std::size_t plain_key_end(std::size_t k, std::size_t term) const noexcept {
    std::size_t i = k;
#if defined(__SSE2__)
    // Sixteen bytes at a time where they fit: one load and two byte masks, and most keys end
    // within the first sixteen bytes, so the loop rarely turns (a branch the CPU predicts well,
    // where eight bytes at a time would turn for every key of eight bytes or more).
    const unsigned non_ascii_mask = o_.check_utf8 ? 0xFFFFu : 0u;
    for (; i < term && len_ - i >= 16; i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b_ + i));
      const auto zeros =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())));
      const unsigned non_ascii = static_cast<unsigned>(_mm_movemask_epi8(x)) & non_ascii_mask;
      if (zeros == 0) {
        if (non_ascii != 0) return bad;
        continue;
      }
      if ((non_ascii & ((zeros & (0u - zeros)) - 1)) != 0) return bad;
      const std::size_t nul = i + static_cast<std::size_t>(std::countr_zero(zeros));
      return nul < term ? nul : bad;
    }
#endif
    const std::uint64_t non_ascii = o_.check_utf8 ? highs : 0;
    for (; i < term && len_ - i >= 8; i += 8) {
      const std::uint64_t x = detail::load_le_u64(b_ + i);  // byte j in bits 8j..8j+7
      const std::uint64_t zeros = (x - ones) & ~x & highs;
      if (zeros == 0) {
        if ((x & non_ascii) != 0) return bad;
        continue;
      }
      const std::uint64_t before_nul = (zeros & (0 - zeros)) - 1;
      if ((x & non_ascii & before_nul) != 0) return bad;
      const std::size_t nul = i + static_cast<std::size_t>(std::countr_zero(zeros)) / 8;
      return nul < term ? nul : bad;
    }
    return bad;
  }

  // True when the n bytes at `at` are all ASCII: sixteen bytes at a time, then up to two words,
  // the last of which may overlap bytes already checked or, for a string under eight bytes, read
  // on into the document (the bytes past n are masked off).
  bool ascii(std::size_t at, std::size_t n) const noexcept {
    const std::uint8_t* p = b_ + at;
    std::size_t i = 0;
    for (; n - i >= 16; i += 16) {
      if (((detail::load_le_u64(p + i) | detail::load_le_u64(p + i + 8)) & highs) != 0) {
        return false;
      }
    }
    if (n - i > 8) {
      if ((detail::load_le_u64(p + i) & highs) != 0) return false;
      i += 8;
    }
    if (n >= 8) return i == n || (detail::load_le_u64(p + n - 8) & highs) == 0;
    if (n == 0) return true;
    if (len_ - at >= 8) {
      const std::uint64_t first_n = (std::uint64_t{1} << (8 * n)) - 1;
      return (detail::load_le_u64(p) & highs & first_n) == 0;
    }
    for (; i < n; ++i) {
      if (p[i] >= 0x80) return false;
    }
    return true;
  }

  bool utf8(std::size_t at, std::size_t n) noexcept {
    if (!o_.check_utf8 || ascii(at, n)) return true;
    const std::size_t e = utf8_error(b_ + at, n);
    if (e == n) return true;
    fail(errc::invalid_utf8, at + e);
    return false;
  }

  // A length-prefixed string at v that must end by `limit`; returns its end.
  std::size_t string(std::size_t v, std::size_t limit) noexcept {
    if (limit - v < 4) return fail(errc::truncated, v);
    const std::int32_t n = detail::load_le_i32(b_ + v);
    if (n < 1 || static_cast<std::size_t>(n) > limit - v - 4) {
      return fail(errc::bad_length_prefix, v);
    }
    const std::size_t end = v + 4 + static_cast<std::size_t>(n);
    if (b_[end - 1] != 0) return fail(errc::missing_terminator, end - 1);
    if (!utf8(v + 4, static_cast<std::size_t>(n) - 1)) return bad;
    return end;
  }

  // A C string at v that must end before `limit`; returns the offset after its NUL.
  std::size_t cstring(std::size_t v, std::size_t limit) noexcept {
    const void* nul = std::memchr(b_ + v, 0, limit - v);
    if (nul == nullptr) return fail(errc::missing_terminator, v);
    const auto end = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - b_);
    if (!utf8(v, end - v)) return bad;
    return end + 1;
  }

  // Opens the embedded document at v, which must end by `limit`; returns where its elements
  // start.
  // `idle` (when not null and idle) takes it if it is long enough, and the offset after it is
  // returned.
  std::size_t open(lane& w, lane* idle, std::size_t v, std::size_t limit) {
    if (limit - v < 4) return fail(errc::truncated, v);
    const std::int32_t n = detail::load_le_i32(b_ + v);
    if (n < 5 || static_cast<std::size_t>(n) > limit - v) return fail(errc::bad_length_prefix, v);
    if (w.depth + 1 > o_.max_depth) return fail(errc::too_deep, v);
    const std::size_t term = v + static_cast<std::size_t>(n) - 1;
    if (b_[term] != 0) return fail(errc::missing_terminator, term);
    if (idle != nullptr && !idle->active && static_cast<std::size_t>(n) >= handover_size) {
      idle->pos = v + 4;
      idle->cur = {v, term};
      idle->depth = w.depth + 1;
      idle->active = true;
      return term + 1;
    }
    w.stack.push(w.cur);
    w.cur = {v, term};
    ++w.depth;
    return v + 4;
  }

  // The first element of the document ending at `term` that starts at or after `at`, stepping
  // from the element at `p` over whole elements (their keys and sizes only: their values are
  // checked by whoever walks them); `term` when there is none; `bad` when an element does not fit
  // (which a walk then reports exactly).
  std::size_t element_after(std::size_t p, std::size_t at, std::size_t term) noexcept {
    while (p < at && p < term) {
      const std::uint8_t t = b_[p];
      const void* nul = std::memchr(b_ + p + 1, 0, term - p - 1);
      if (t == 0 || nul == nullptr) return fail(errc::bad_length_prefix, p);
      const auto v = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - b_) + 1;
      const std::size_t n = detail::value_size(t, b_ + v, b_ + term);
      if (n == detail::bad_size) return fail(errc::bad_length_prefix, p);
      p = v + n;
    }
    return p;
  }

  std::size_t fixed(std::size_t v, std::size_t limit, std::size_t n) noexcept {
    if (limit - v < n) return fail(errc::truncated, v);
    return v + n;
  }

  // Checks the value of type t at v (which must end by `limit`, the enclosing terminator) and
  // returns the offset of the next element, or of the first element of a document it opened.
  std::size_t value(lane& w, lane* idle, std::uint8_t t, std::size_t v, std::size_t limit) {
    switch (static_cast<type>(t)) {
    case type::undefined:
    case type::null:
    case type::min_key:
    case type::max_key: return v;
    case type::boolean:
      if (limit - v < 1) return fail(errc::truncated, v);
      if (b_[v] > 1) return fail(errc::invalid_bool, v);
      return v + 1;
    case type::int32: return fixed(v, limit, 4);
    case type::double_:
    case type::date_time:
    case type::timestamp:
    case type::int64: return fixed(v, limit, 8);
    case type::object_id: return fixed(v, limit, 12);
    case type::decimal128: return fixed(v, limit, 16);
    case type::string:
    case type::javascript:
    case type::symbol: return string(v, limit);
    case type::document:
    case type::array: return open(w, idle, v, limit);
    case type::binary: {
      if (limit - v < 5) return fail(errc::truncated, v);
      const std::int32_t n = detail::load_le_i32(b_ + v);
      if (n < 0 || static_cast<std::size_t>(n) > limit - v - 5) {
        return fail(errc::bad_length_prefix, v);
      }
      if (b_[v + 4] == binary_subtype::old_binary &&
          (n < 4 || detail::load_le_i32(b_ + v + 5) != n - 4)) {
        return fail(errc::invalid_binary, v + 5);
      }
      return v + 5 + static_cast<std::size_t>(n);
    }
    case type::regex: {
      const std::size_t p = cstring(v, limit);
      return p == bad ? bad : cstring(p, limit);
    }
    case type::db_pointer: {
      const std::size_t s = string(v, limit);
      return s == bad ? bad : fixed(s, limit, 12);
    }
    case type::javascript_with_scope: {
      if (limit - v < 4) return fail(errc::truncated, v);
      const std::int32_t total = detail::load_le_i32(b_ + v);
      // The smallest: total length, an empty string (length 1 and its NUL), an empty scope.
      if (total < 4 + 5 + 5 || static_cast<std::size_t>(total) > limit - v) {
        return fail(errc::bad_length_prefix, v);
      }
      const std::size_t end = v + static_cast<std::size_t>(total);
      const std::size_t s = string(v + 4, end);
      if (s == bad) return bad;
      if (end - s < 5) return fail(errc::bad_length_prefix, v);
      const std::int32_t n = detail::load_le_i32(b_ + s);
      if (n < 5) return fail(errc::bad_length_prefix, s);
      // The scope must end exactly where the total length says the value ends.
      if (static_cast<std::size_t>(n) != end - s) return fail(errc::bad_length_prefix, v);
      return open(w, idle, s, end);
    }
    }
    return fail(errc::unknown_type, v);  // unreachable: the caller checked the type byte
  }

  const std::uint8_t* b_;
  std::size_t len_ = 0;  // bytes of the whole document at b_: no read goes past them
  const validate_options& o_;
  // The first error, kept as a code and an offset, not as an oid::error: `fail` is inlined at
  // every check of the walk, and an oid::error's std::error_code is one word more to store there
  // (it made the walk 128 bytes longer and the deep document's validation 8% slower).
  errc err_code_{};
  std::size_t err_at_ = 0;
  std::size_t skip_begin_ = 0, skip_end_ = 0;
};

result<document_view> validate_impl(std::span<const std::uint8_t> bytes,
                                    const validate_options& options, bool allow_trailing,
                                    std::size_t skip_begin = 0, std::size_t skip_end = 0) {
  if (bytes.size() < 4) return oid::error{errc::truncated, 0};
  const std::int32_t n = detail::load_le_i32(bytes.data());
  if (n < 5) return oid::error{errc::bad_length_prefix, 0};
  const auto len = static_cast<std::size_t>(n);
  if (len > options.max_size) return oid::error{errc::too_large, 0};
  if (len > bytes.size()) return oid::error{errc::truncated, 0};
  if (bytes[len - 1] != 0) return oid::error{errc::missing_terminator, len - 1};
  validator v(bytes.data(), options);
  if (skip_begin >= 4 && skip_end > skip_begin && skip_end < len) v.skip(skip_begin, skip_end);
  if (auto r = v.run(len); !r) return r.error();
  if (!allow_trailing && len != bytes.size()) return oid::error{errc::trailing_bytes, len};
  return document_view::unchecked(bytes.first(len));
}

}  // namespace

result<document_view> validate(std::span<const std::uint8_t> bytes,
                               const validate_options& options) {
  return validate_impl(bytes, options, options.allow_trailing);
}

result<document_view> validate_prefix(std::span<const std::uint8_t> bytes,
                                      const validate_options& options) {
  return validate_impl(bytes, options, true);
}

result<document_view> detail::validate_prefix_skipping(std::span<const std::uint8_t> bytes,
                                                       const validate_options& options,
                                                       std::size_t skip_begin,
                                                       std::size_t skip_end) {
  return validate_impl(bytes, options, true, skip_begin, skip_end);
}

result<void> check_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t e = utf8_error(p, text.size());
  if (e != text.size()) return oid::error{errc::invalid_utf8, e};
  return {};
}

}  // namespace oid::bson
