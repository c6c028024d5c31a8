// Concatenated BSON documents from a stream: each length prefix is checked before the document's
// bytes are read, so a prefix that is not sane (below 5, above the limit, or past the end of the
// input) is reported without reading on, and ends the reading: the document boundaries are lost.
#include <algorithm>
#include <cstring>
#include <istream>
#include <oid/bson/stream_reader.hpp>
#include <oid/detail/endian.hpp>
#include <span>
#include <vector>

namespace oid::bson {

struct stream_reader::impl {
  impl(std::istream& in, const validate_options& options) : in(in), options(options) {
    this->options.max_size = std::min<std::size_t>(options.max_size, 0x7FFFFFFF);
    this->options.allow_trailing = false;
    buf.resize(std::min<std::size_t>(this->options.max_size + 4, 1 << 20));
  }

  std::istream& in;
  validate_options options;
  std::vector<std::uint8_t> buf;
  std::size_t begin = 0, end = 0;  // unread bytes are buf[begin, end)
  std::uint64_t base = 0;          // stream offset of buf[0]
  bool eof = false;
  bool failed = false;  // the stream failed: the end of the input was not reached
  bool fatal = false;
  std::size_t count = 0;  // documents read or attempted
  std::uint64_t start = 0;
  std::optional<std::int32_t> prefix;
  document_view current;

  // Tries to have n bytes (n <= max(max_size, 4)) from begin in the buffer; returns how many
  // there are (fewer only at the end of the input, or when it fails).
  std::size_t want(std::size_t n) {
    while (end - begin < n && !eof) {
      if (begin > 0) {
        std::memmove(buf.data(), buf.data() + begin, end - begin);
        end -= begin;
        base += begin;
        begin = 0;
      }
      if (buf.size() < n) buf.resize(n);
      in.read(reinterpret_cast<char*>(buf.data() + end),
              static_cast<std::streamsize>(buf.size() - end));
      const auto got = static_cast<std::size_t>(in.gcount());
      end += got;
      failed = in.bad();
      if (got == 0 || failed) eof = true;
    }
    return std::min(n, end - begin);
  }

  error stop(errc code, std::uint64_t offset) {
    fatal = true;
    return error{code, static_cast<std::size_t>(offset)};
  }

  result<bool> next() {
    current = document_view{};
    if (fatal) return false;
    start = base + begin;
    prefix.reset();
    const std::size_t have = want(4);
    if (have == 0 && !failed) return false;
    ++count;
    if (have < 4) return stop(failed ? errc::io_error : errc::truncated, start + have);
    const std::int32_t len = oid::detail::load_le_i32(buf.data() + begin);
    prefix = len;
    if (len < 5) return stop(errc::bad_length_prefix, start);
    const auto n = static_cast<std::size_t>(len);
    if (n > options.max_size) return stop(errc::too_large, start);
    const std::size_t got = want(n);
    if (got < n) return stop(failed ? errc::io_error : errc::truncated, start + got);
    const auto v = validate(std::span<const std::uint8_t>(buf.data() + begin, n), options);
    begin += n;  // the bytes stay in the buffer until the next want()
    if (!v) return error{v.error().code, static_cast<std::size_t>(start + v.error().offset)};
    current = *v;
    return true;
  }
};

stream_reader::stream_reader(std::istream& in, const validate_options& options)
    : impl_(std::make_unique<impl>(in, options)) {}
stream_reader::~stream_reader() = default;
stream_reader::stream_reader(stream_reader&&) noexcept = default;
stream_reader& stream_reader::operator=(stream_reader&&) noexcept = default;

result<bool> stream_reader::next() { return impl_->next(); }
document_view stream_reader::current() const noexcept { return impl_->current; }
bool stream_reader::can_continue() const noexcept { return !impl_->fatal; }
std::size_t stream_reader::index() const noexcept {
  return impl_->count == 0 ? 0 : impl_->count - 1;
}
std::uint64_t stream_reader::document_offset() const noexcept { return impl_->start; }
std::optional<std::int32_t> stream_reader::length_prefix() const noexcept { return impl_->prefix; }
std::uint64_t stream_reader::bytes_read() const noexcept { return impl_->base + impl_->begin; }

}  // namespace oid::bson
