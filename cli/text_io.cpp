#include "text_io.hpp"

#include <cstring>
#include <iostream>
#include <istream>
#include <ostream>
#include <string>

#include "cli.hpp"

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
  // On to the file or terminal now: std::cout keeps its own buffer (main turns off stdio's
  // sync), and `find --tail` and `topology --watch` show each document or event as it comes.
  out_.flush();
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

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// The length of the valid UTF-8 sequence at the start of `s` (2 to 4 bytes; `s` starts with a
// byte of 0x80 or more) and its code point; 0 when the bytes there are not valid UTF-8 (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, char32_t& code_point) noexcept {
  const auto b = [&s](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong below U+0800
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong below U+10000
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length || b(1) < low || b(1) > high) return 0;
  char32_t cp = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (b(i) & 0x3F);
  }
  code_point = cp;
  return length;
}

// The characters that reorder or hide the text around them (Unicode's bidirectional formatting
// characters).
bool is_bidi_control(char32_t c) noexcept {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

void append_byte_escape(std::string& out, unsigned char c) {
  out += "\\x";
  out += hex_digits[c >> 4];
  out += hex_digits[c & 15];
}

}  // namespace

void append_printable(std::string& out, std::string_view text, bool keep_newlines) {
  std::size_t i = 0;
  while (i < text.size()) {
    // Runs of printable ASCII, by far the common case, are copied at once.
    std::size_t plain = i;
    while (plain < text.size() && static_cast<unsigned char>(text[plain]) >= 0x20 &&
           static_cast<unsigned char>(text[plain]) < 0x7F) {
      ++plain;
    }
    out.append(text.data() + i, plain - i);
    i = plain;
    if (i == text.size()) break;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {  // a C0 control or DEL
      if (c == '\n' && keep_newlines) {
        out += '\n';
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else {
        append_byte_escape(out, c);
      }
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t length = utf8_sequence(text.substr(i), cp);
    if (length == 0) {
      append_byte_escape(out, c);
      ++i;
      continue;
    }
    if ((cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(cp >> shift) & 15];
    } else {
      out.append(text.data() + i, length);
    }
    i += length;
  }
}

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  append_printable(out, text, keep_newlines);
  return out;
}

std::string terminal_safe_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  std::size_t i = 0;
  while (i < json.size()) {
    std::size_t plain = i;
    while (plain < json.size() && static_cast<unsigned char>(json[plain]) < 0x7F) ++plain;
    out.append(json.data() + i, plain - i);
    i = plain;
    if (i == json.size()) break;
    char32_t cp = 0x7F;
    std::size_t length = 1;
    if (static_cast<unsigned char>(json[i]) != 0x7F) length = utf8_sequence(json.substr(i), cp);
    if (length == 0) {  // not UTF-8 (the writer does not make it): left as it is
      out += json[i++];
      continue;
    }
    if (cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(cp >> shift) & 15];
    } else {
      out.append(json.data() + i, length);
    }
    i += length;
  }
  return out;
}

document_output::document_output(const context& ctx) : document_output(ctx, ctx.out) {}

document_output::document_output(const context& ctx, std::ostream& out)
    : buffer_(out), escape_(&out == &ctx.out && ctx.out_is_terminal) {}

void document_output::json_line(bson::document_view doc, const bson::json_options& options) {
  scratch_.clear();
  bson::to_json(doc, options, scratch_);
  scratch_ += '\n';
  json(scratch_);
}

void document_output::json(std::string_view text) {
  if (escape_) {
    buffer_.write(terminal_safe_json(text));
  } else {
    buffer_.write(text);
  }
}

void document_output::record(std::string_view text) {
  if (escape_) {
    std::string line = printable(text);
    line += '\n';
    buffer_.write(line);
  } else {
    std::string_view nl("\n", 1);
    buffer_.write(text);
    buffer_.write(nl);
  }
}

void document_output::lines(std::string_view text) {
  if (escape_) {
    buffer_.write(printable(text, true));
  } else {
    buffer_.write(text);
  }
}

std::string explain_id_error(std::string_view input, const error& e) {
  switch (errc_of(e.code)) {
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
