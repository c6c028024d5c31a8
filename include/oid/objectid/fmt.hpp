// oid/objectid/fmt.hpp: a {fmt} formatter for `oid::object_id` (fmt 9 or later).
//
// Header only; include it where you format ids with fmt and link fmt yourself. `{}` writes the hex
// form; the spec `{:b}` writes base64.
//
//     fmt::print("{} {:b}\n", id, id);  // 4df2dcec2cdcd20936a8b817 TfLc7Czc0gk2qLgX
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <oid/objectid/object_id.hpp>

template <>
struct fmt::formatter<oid::object_id> {
  bool base64 = false;

  constexpr auto parse(fmt::format_parse_context& ctx) {
    auto it = ctx.begin();
    if (it != ctx.end() && *it == 'b') {
      base64 = true;
      ++it;
    }
    if (it != ctx.end() && *it != '}') throw fmt::format_error("oid::object_id: use {} or {:b}");
    return it;
  }

  template <class FormatContext>
  auto format(const oid::object_id& id, FormatContext& ctx) const {
    char buf[oid::object_id::hex_size];
    char* const end = base64 ? id.to_base64(buf) : id.to_hex(buf);
    return std::copy(buf, end, ctx.out());
  }
};
