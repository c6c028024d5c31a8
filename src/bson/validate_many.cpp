// Validation of many documents at once: a cursor batch's (see bson/detail/validate.hpp).
//
// One walk through a document is a chain of dependent loads (an element's end is where the next
// starts), so it runs at the chain's latency however few instructions it takes. The documents
// of a batch are independent, so four walks take turns here, one element each, over four
// documents; with their state in registers and no memory between their steps, the CPU overlaps
// their chains (bson_driverbench's validate_batch: 1.74x one document at a time on DriverBench's
// flat document, 1.44x on the deep one; docs/speed.md, sixth round). The fast walk only
// says "valid" or "not sure": any element it does not handle on its fast path (an invalid one, a
// rare type, a document nested deeper than its own stack, bytes too near the end of the buffer
// for its wide loads) leaves the document to validate_prefix, which gives the exact answer. A
// document the fast walk accepts is one validate_prefix accepts: fuzz_bson_validate compares
// them on every input.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <oid/bson/type.hpp>
#include <oid/bson/validate.hpp>
#include <string_view>
#include <vector>

#if defined(__x86_64__)
#  include <immintrin.h>
#endif

#include "bson/detail/bytes.hpp"
#include "bson/detail/validate.hpp"

namespace oid::bson::detail {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#  define OID_VALIDATE_MANY_AVX2 1
// The walker is compiled for AVX2 and BMI2 (32-byte loads, blsmsk, bzhi: fewer instructions an
// element, which is what bounds four interleaved walks) and used when the CPU has them; other
// CPUs validate each document with validate_prefix.
#  define OID_AVX2 __attribute__((target("avx2,bmi,bmi2")))
namespace {

// What the walker does with each type byte. `slow` types (documents, binary data, the end of a
// document, the rare types and invalid ones) take the slow step; the others are a fixed-size
// value, whose last byte must not exceed last_max (a boolean's 0 or 1), or a length-prefixed
// string. `guard` joins the key's check (see step): a slow type fails it whatever its key. Eight
// bytes: the fast step reads each field as an operand at the type byte times 8 (a 16-byte entry
// of 32-bit fields cost a shift and an add to address: 1,000 tweets 7% slower; the guard instead
// of a `slow` byte and its own test: 6%; measured in a scratch program, docs/speed.md's sixth
// round).
constexpr std::uint32_t fast_guard = 0x80000000u;
constexpr std::uint32_t slow_guard = 0xFFFFFFFFu;
struct value_kind {
  std::uint8_t size = 0;             // a fixed-size value's
  std::uint8_t last_max = 0xFF;      // the most a fixed-size value's last byte may be
  bool string = false;               // a length-prefixed string (size and last_max unused)
  std::uint32_t guard = slow_guard;  // bit 31 for a fast type; every bit for a slow one
};
static_assert(sizeof(value_kind) == 8);
constexpr std::array<value_kind, 256> make_value_kinds() {
  std::array<value_kind, 256> k{};
  const auto fixed = [&](type t, std::uint8_t n) {
    k[static_cast<std::uint8_t>(t)] = {n, 0xFF, false, fast_guard};
  };
  for (type t : {type::undefined, type::null, type::min_key, type::max_key}) fixed(t, 0);
  fixed(type::int32, 4);
  for (type t : {type::double_, type::date_time, type::timestamp, type::int64}) fixed(t, 8);
  fixed(type::object_id, 12);
  fixed(type::decimal128, 16);
  k[static_cast<std::uint8_t>(type::boolean)] = {1, 1, false, fast_guard};
  for (type t : {type::string, type::javascript, type::symbol}) {
    k[static_cast<std::uint8_t>(t)] = {0, 0xFF, true, fast_guard};
  }
  return k;
}
constexpr auto value_kinds = make_value_kinds();

// Every load of a fast step stays within this many bytes of the element's type byte: the key's
// 32-byte window, then a value's length and the 32 bytes after it. A document is walked only
// when its end is at least this far from the end of the buffer, so that no step checks it.
constexpr std::size_t reach = 80;
// How far ahead of each walk the lines are asked for: a few documents. On the canned server's
// find many, the walks took 0.25 us a tweet without it and 0.225 with it (perf-sampled; other
// distances were not told apart from the noise).
constexpr std::size_t prefetch_distance = 4096;
// Nesting the walker follows; deeper documents are left to validate_prefix.
constexpr std::uint32_t fast_depth = 16;

// Where a walk is: two pointers, passed and returned in registers (a lane the steps took by
// reference lived on the stack, and every element's step then waited for a store to reach the
// next load).
struct lane {
  const std::uint8_t* p = nullptr;     // the next element, or term; null: no document left
  const std::uint8_t* term = nullptr;  // the terminating NUL of the document p is in
};
// What else a walk keeps, changed only when a document starts, opens or ends.
struct lane_info {
  std::uint32_t depth = 0;                // of the document p is in: the batch document is 0
  std::uint32_t doc = 0;                  // the batch document's index in the span of documents
  const std::uint8_t* terms[fast_depth];  // the enclosing documents' terminators
};

// The documents the walks leave to validate_prefix: usually one or two (the last of a piece of a
// batch ends within `reach` of the buffer's end), kept without an allocation; more go to the heap.
class doc_list {
 public:
  void push_back(std::uint32_t i) {
    if (size_ < first_.size()) {
      first_[size_++] = i;
      return;
    }
    if (rest_.empty()) rest_.assign(first_.begin(), first_.end());
    rest_.push_back(i);
    ++size_;
  }
  std::span<std::uint32_t> items() noexcept {
    return size_ <= first_.size() ? std::span<std::uint32_t>(first_.data(), size_)
                                  : std::span<std::uint32_t>(rest_);
  }

 private:
  std::array<std::uint32_t, 16> first_{};
  std::size_t size_ = 0;
  std::vector<std::uint32_t> rest_;
};

template <bool utf8>
class many_walker {
 public:
  many_walker(std::span<const std::uint8_t> bytes, std::span<const doc_span> docs,
              const validate_options& o, doc_list& unsure)
      : base_(bytes.data()),
        end_(bytes.data() + bytes.size()),
        docs_(docs),
        o_(o),
        unsure_(unsure) {}

  // Four walks, one element each in turn; a walk whose document is done takes the next one.
  // While every walk has a document, no walk is tested for one: the loop asks only whether the
  // documents ran out (start sets out_of_docs_), and then the walks left finish.
  OID_AVX2 void run() {
    lane l0 = start(info_[0]), l1 = start(info_[1]), l2 = start(info_[2]), l3 = start(info_[3]);
    while (!out_of_docs_) {
      l0 = step(l0, info_[0]);
      l1 = step(l1, info_[1]);
      l2 = step(l2, info_[2]);
      l3 = step(l3, info_[3]);
    }
    while ((l0.p != nullptr) | (l1.p != nullptr) | (l2.p != nullptr) | (l3.p != nullptr)) {
      if (l0.p != nullptr) l0 = step(l0, info_[0]);
      if (l1.p != nullptr) l1 = step(l1, info_[1]);
      if (l2.p != nullptr) l2 = step(l2, info_[2]);
      if (l3.p != nullptr) l3 = step(l3, info_[3]);
    }
  }

 private:
  // Gives `l` the next document whose length and terminator are in place and whose end is
  // `reach` bytes from the buffer's (the others are left unsure), or no document.
  OID_AVX2 lane start(lane_info& w) {
    const auto avail = static_cast<std::size_t>(end_ - base_);
    while (next_ < docs_.size()) {
      const auto i = static_cast<std::uint32_t>(next_++);
      const doc_span d = docs_[i];
      const std::uint8_t* s = base_ + d.offset;
      if (d.size < 5 || d.offset > avail || avail - d.offset < std::size_t{d.size} + reach ||
          d.size > o_.max_size || load_le_u32(s) != d.size || s[d.size - 1] != 0) {
        unsure_.push_back(i);
        continue;
      }
      w.depth = 0;
      w.doc = i;
      return {s + 4, s + d.size - 1};
    }
    out_of_docs_ = true;
    return {};
  }

  // Out of line, as everything rare is (rare_step, text_ok): the walks' loop then has registers
  // for all four lanes (with the rare paths inline, the compiler kept some of them on the stack:
  // 1,000 tweets 9% slower, DriverBench's deep document 20%).
  [[gnu::noinline, gnu::cold]] OID_AVX2 lane unsure(lane_info& w) {
    unsure_.push_back(w.doc);
    return start(w);
  }

  // One element of `l`'s document: the key found in one 32-byte load, then a fixed-size value
  // or a string (its text checked in one more 32-byte load when it is short, else by text_ok).
  // The rest (a key of 31 bytes or more, or not ASCII; the end of a document; the other types)
  // goes to slow_step.
  [[gnu::always_inline]] OID_AVX2 lane step(lane l, lane_info& w) {
    const std::uint8_t* p = l.p;
    // The walks' loads chain, so a line that is not in the cache stalls them: asked for ahead.
    _mm_prefetch(reinterpret_cast<const char*>(p + prefetch_distance), _MM_HINT_T0);
    const value_kind& k = value_kinds[*p];
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
    const std::uint64_t zeros = static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_setzero_si256())));
    // blsmsk: the key's bytes and its NUL, or all 32 bits when the window has no NUL. None of
    // them may be set in `high`: bit 31 (every guard has it) for a key of 31 bytes or more, a
    // byte that is not ASCII, or any bit for a slow type.
    std::uint32_t high = k.guard;
    if constexpr (utf8) high |= static_cast<std::uint32_t>(_mm256_movemask_epi8(x));
    if ((high & _blsmsk_u32(static_cast<std::uint32_t>(zeros))) != 0) return slow_step(l, w);
    const std::uint8_t* v = p + 2 + _tzcnt_u64(zeros);
    // Pointers compared as integers: v may lie past the terminator (a key whose NUL is at or past
    // it), and then so does the value's end.
    const auto past_term = [&](const std::uint8_t* at, std::uint64_t size) {
      return reinterpret_cast<std::uintptr_t>(at) + size > reinterpret_cast<std::uintptr_t>(l.term);
    };
    if (!k.string) {
      // A fixed size: where the next element starts does not wait for a load. (Strings and fixed
      // sizes in one computation, the size masked in from the length, made every element wait
      // for its length's load: 1,000 tweets 0.132 -> 0.115 us each without it, in a scratch
      // program, docs/speed.md.) The branch, on the type, is one a batch's documents, alike in
      // shape, make predictable.
      if (past_term(v, k.size)) return unsure(w);
      const std::uint8_t* e = v + k.size;
      if (e[-1] > k.last_max) return unsure(w);
      return {e, l.term};
    }
    // A string: n, then n - 1 bytes of text and a NUL. A bad n (below 1) wraps to a text too
    // long for the document.
    const std::uint32_t text = load_le_u32(v) - 1u;
    const std::uint64_t size = std::uint64_t{text} + 5;
    if (past_term(v, size)) return unsure(w);
    const std::uint8_t* e = v + size;
    if (e[-1] != 0) return unsure(w);
    // Its text: ASCII in one 32-byte load when it is short, else text_ok.
    if constexpr (utf8) {
      const auto text_high = static_cast<std::uint32_t>(
          _mm256_movemask_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 4))));
      if ((text > 31) | (_bzhi_u32(text_high, text) != 0)) {
        if (!text_ok(v + 4, text)) return unsure(w);
      }
    }
    return {e, l.term};
  }

  // Everything step leaves, with the checks validate_prefix makes: the common ones (the end of a
  // document, an embedded document) here, the others in rare_step. The key's window is read as
  // step reads it (the compiler shares the two), this time without the type's guard.
  [[gnu::always_inline]] OID_AVX2 lane slow_step(lane l, lane_info& w) {
    const std::uint8_t* p = l.p;
    const std::uint8_t* term = l.term;
    if (p == term) {
      if (w.depth == 0) return start(w);  // the document is valid
      return {p + 1, w.terms[--w.depth]};
    }
    const std::uint8_t t = *p;
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
    const auto zeros = static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_setzero_si256())));
    std::uint32_t high = fast_guard;
    if constexpr (utf8) high |= static_cast<std::uint32_t>(_mm256_movemask_epi8(x));
    const std::uint8_t* v = (high & _blsmsk_u32(zeros)) == 0 ? p + 2 + _tzcnt_u32(zeros) : nullptr;
    if ((t == static_cast<std::uint8_t>(type::document) ||
         t == static_cast<std::uint8_t>(type::array)) &&
        v != nullptr && v <= term && term - v >= 4) {
      const std::int32_t n = load_le_i32(v);
      if (n < 5 || n > term - v) return unsure(w);
      const std::uint8_t* inner = v + n - 1;
      if (*inner != 0 || w.depth + 1 > o_.max_depth || w.depth == fast_depth) return unsure(w);
      w.terms[w.depth++] = term;
      return {v + 4, inner};
    }
    return rare_step(l, w, v);
  }

  // The other elements of slow_step. `v`: the value, when the key's window held the key (its NUL
  // may still be at or past the terminator); null: search it.
  [[gnu::noinline, gnu::cold]] OID_AVX2 lane rare_step(lane l, lane_info& w,
                                                       const std::uint8_t* v) {
    const std::uint8_t* p = l.p;
    const std::uint8_t* term = l.term;
    const std::uint8_t t = *p;
    if (v == nullptr) {
      const void* nul = std::memchr(p + 1, 0, static_cast<std::size_t>(term - p - 1));
      if (nul == nullptr) return unsure(w);
      v = static_cast<const std::uint8_t*>(nul) + 1;
      if (utf8 && !text_ok(p + 1, static_cast<std::size_t>(v - p - 2))) return unsure(w);
    } else if (v > term) {
      return unsure(w);  // the key's NUL is the terminator or past it
    }
    const auto room = static_cast<std::size_t>(term - v);
    const value_kind& k = value_kinds[t];
    if (k.guard == fast_guard && !k.string) {  // a fixed size
      if (room < k.size || (k.size != 0 && v[k.size - 1] > k.last_max)) return unsure(w);
      return {v + k.size, term};
    }
    if (t == static_cast<std::uint8_t>(type::regex)) {  // two C strings
      const std::uint8_t* options = c_string_end(v, term);
      const std::uint8_t* end = options != nullptr ? c_string_end(options, term) : nullptr;
      if (end == nullptr) return unsure(w);
      return {end, term};
    }
    if (room < 4) return unsure(w);
    const std::int32_t n = load_le_i32(v);
    if (k.guard == fast_guard) {  // a string
      if (n < 1 || static_cast<std::size_t>(n) > room - 4 || v[3 + n] != 0) return unsure(w);
      if (utf8 && !text_ok(v + 4, static_cast<std::size_t>(n) - 1)) return unsure(w);
      return {v + 4 + n, term};
    }
    switch (static_cast<type>(t)) {
    case type::document:
    case type::array: {
      if (n < 5 || static_cast<std::size_t>(n) > room) return unsure(w);
      const std::uint8_t* inner = v + n - 1;
      if (*inner != 0 || w.depth + 1 > o_.max_depth || w.depth == fast_depth) return unsure(w);
      w.terms[w.depth++] = term;
      return {v + 4, inner};
    }
    case type::binary:
      // Subtype 2 (the old binary) has an inner length to check: validate_prefix does.
      if (room < 5 || n < 0 || static_cast<std::size_t>(n) > room - 5 ||
          v[4] == binary_subtype::old_binary) {
        return unsure(w);
      }
      return {v + 5 + n, term};
    case type::db_pointer: {
      if (n < 1 || static_cast<std::size_t>(n) > room - 4 || v[3 + n] != 0) return unsure(w);
      if (utf8 && !text_ok(v + 4, static_cast<std::size_t>(n) - 1)) return unsure(w);
      const std::uint8_t* id = v + 4 + n;
      if (term - id < 12) return unsure(w);
      return {id + 12, term};
    }
    default: return unsure(w);  // the rare types, and type bytes that are not types
    }
  }

  // The byte after the NUL of the C string at p, which must come before `term`, its bytes
  // well-formed UTF-8; null when not.
  OID_AVX2 static const std::uint8_t* c_string_end(const std::uint8_t* p,
                                                   const std::uint8_t* term) {
    const void* nul = std::memchr(p, 0, static_cast<std::size_t>(term - p));
    if (nul == nullptr) return nullptr;
    const auto* n = static_cast<const std::uint8_t*>(nul);
    if (utf8 && !text_ok(p, static_cast<std::size_t>(n - p))) return nullptr;
    return n + 1;
  }

  // True when the n bytes at p are well-formed UTF-8: all ASCII in 32-byte loads, else the
  // decoder. p lies before the terminator of a document that ends `reach` bytes before the
  // buffer, so 32 bytes from p are readable even when n is smaller.
  [[gnu::noinline]] OID_AVX2 static bool text_ok(const std::uint8_t* p, std::size_t n) {
    if (n <= 32) {
      const auto high = static_cast<std::uint32_t>(
          _mm256_movemask_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
      if (_bzhi_u32(high, static_cast<std::uint32_t>(n)) == 0) return true;
    } else {
      __m256i any = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + n - 32));
      for (std::size_t i = 0; i + 32 < n; i += 32) {
        any = _mm256_or_si256(any, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
      }
      if (_mm256_movemask_epi8(any) == 0) return true;
    }
    return check_utf8({reinterpret_cast<const char*>(p), n}).has_value();
  }

  const std::uint8_t* base_;
  const std::uint8_t* end_;
  std::span<const doc_span> docs_;
  const validate_options& o_;
  doc_list& unsure_;
  std::size_t next_ = 0;
  bool out_of_docs_ = false;
  lane_info info_[4];
};

}  // namespace
#endif

std::size_t validate_many(std::span<const std::uint8_t> bytes, std::span<const doc_span> docs,
                          const validate_options& options) {
  // validate_prefix's answer for document i.
  const auto valid = [&](std::uint32_t i) {
    const doc_span d = docs[i];
    if (d.offset > bytes.size() || d.size > bytes.size() - d.offset) return false;
    const auto doc = validate_prefix(bytes.subspan(d.offset, d.size), options);
    return doc && doc->size() == d.size;
  };
#if defined(OID_VALIDATE_MANY_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                           __builtin_cpu_supports("bmi2");
  if (avx2) {
    doc_list unsure;
    if (options.check_utf8) {
      many_walker<true>(bytes, docs, options, unsure).run();
    } else {
      many_walker<false>(bytes, docs, options, unsure).run();
    }
    const auto items = unsure.items();
    std::sort(items.begin(), items.end());
    for (const std::uint32_t i : items) {
      if (!valid(i)) return i;
    }
    return docs.size();
  }
#endif
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!valid(static_cast<std::uint32_t>(i))) return i;
  }
  return docs.size();
}

}  // namespace oid::bson::detail
