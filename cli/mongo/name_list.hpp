// A list of names for one message: the first few kept, the rest only counted, so that a message
// about a million collections is one short line, and the memory it takes does not grow with them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "text_io.hpp"

namespace oid::cli {

/// Names (each made printable() as it is added: no newline, no control character) for a message
/// that lists them: "a, b, c, d, e and 999,995 more".
class name_list {
 public:
  /// How many names a message shows.
  static constexpr std::size_t shown = 5;

  void add(std::string_view name) {
    if (names_.size() < shown) names_.push_back(printable(name));
    ++count_;
  }
  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  /// The names kept, ", " between them, then " and N more" for those only counted.
  std::string text() const {
    std::string out;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (i > 0) out += ", ";
      out += names_[i];
    }
    if (count_ > names_.size()) out += " and " + grouped(count_ - names_.size()) + " more";
    return out;
  }
  /// `n` with a comma between each group of three digits: 999,995.
  static std::string grouped(std::size_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  }

 private:
  std::vector<std::string> names_;
  std::size_t count_ = 0;
};

}  // namespace oid::cli
