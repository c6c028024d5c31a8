#include "text_io.hpp"

#include <cstring>
#include <istream>
#include <ostream>
#include <string>

namespace oid::cli {

line_reader::line_reader(std::istream& in, std::size_t max_line)
    : in_(in), buf_(max_line + 1 + 65536) {}

bool line_reader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {  // keep the unread part at the front
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) return true;  // full: the caller decides
  const auto n =
      in_.rdbuf()->sgetn(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<std::size_t>(n);
  return true;
}

bool line_reader::next(line& out) {
  const std::size_t max_line = buf_.size() - 1 - 65536;
  bool too_long = false;
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl != nullptr) {
      const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      std::string_view text(start, len);
      begin_ += len + 1;
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      out.number = ++number_;
      out.too_long = too_long || text.size() > max_line;
      out.text = out.too_long ? std::string_view() : text;
      return true;
    }
    if (end_ - begin_ > max_line) {  // no newline in sight: drop what we have, remember why
      too_long = true;
      begin_ = end_;
    }
    if (!fill()) {
      if (begin_ == end_ && !too_long) return false;
      std::string_view text(buf_.data() + begin_, end_ - begin_);  // last line, no newline
      begin_ = end_;
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      out.number = ++number_;
      out.too_long = too_long;
      out.text = too_long ? std::string_view() : text;
      return true;
    }
  }
}

char* output_buffer::reserve(std::size_t n) {
  if (buf_.size() - size_ < n) {
    flush();
    if (buf_.size() < n) buf_.resize(std::max(n, capacity));
  }
  if (buf_.size() < capacity) buf_.resize(capacity);
  return buf_.data() + size_;
}

void output_buffer::write(std::string_view s) {
  if (s.size() >= capacity) {
    flush();
    out_.write(s.data(), static_cast<std::streamsize>(s.size()));
    return;
  }
  std::memcpy(reserve(s.size()), s.data(), s.size());
  commit(s.size());
}

void output_buffer::flush() {
  if (size_ > 0) out_.write(buf_.data(), static_cast<std::streamsize>(size_));
  size_ = 0;
}

std::string quote(std::string_view input) {
  constexpr std::size_t limit = 40;
  std::string q = "\"";
  std::size_t shown = 0;
  for (const char ch : input) {
    if (shown == limit) {
      q += "\"... (" + std::to_string(input.size()) + " bytes)";
      return q;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      q += '\\';
      q += ch;
    } else if (c >= 0x20 && c < 0x7F) {
      q += ch;
    } else {
      static constexpr char digits[] = "0123456789abcdef";
      q += "\\x";
      q += digits[c >> 4];
      q += digits[c & 15];
    }
    ++shown;
  }
  q += '"';
  return q;
}

std::string explain_id_error(std::string_view input, const error& e) {
  switch (e.code) {
  case errc::invalid_length:
    return "invalid length: expected 24 hex or 16 base64 characters, got " +
           std::to_string(input.size());
  case errc::invalid_hex:
  case errc::invalid_base64:
    return std::string(e.code == errc::invalid_hex ? "invalid hex character "
                                                   : "invalid base64 character ") +
           quote(input.substr(e.offset, 1)) + " at column " + std::to_string(e.offset + 1);
  default: return e.message();
  }
}

}  // namespace oid::cli
