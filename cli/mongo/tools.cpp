// The pieces `oid mongo dump` and `oid mongo restore` share: threads, and files that may be
// gzip-compressed.
#include "mongo/tools.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <system_error>
#include <thread>

#include "text_io.hpp"

namespace oid::cli {

void add_mongo_tool_commands(CLI::App& mongo, context& ctx) {
  add_mongo_dump_command(mongo, ctx);
  add_mongo_restore_command(mongo, ctx);
  add_mongo_transfer_commands(mongo, ctx);
}

void run_parallel(std::size_t count, std::size_t threads,
                  const std::function<void(std::size_t)>& work) {
  std::atomic<std::size_t> next{0};
  const auto loop = [&] {
    for (std::size_t i = next++; i < count; i = next++) work(i);
  };
  std::vector<std::thread> pool;
  const std::size_t n = std::clamp<std::size_t>(std::min(threads, count), 1, 64);
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
}

std::string errno_text(int e) { return std::generic_category().message(e); }

std::string database_name_problem(std::string_view name) {
  if (name.empty()) return "a database name cannot be empty";
  if (name.size() > 64) return "a database name has at most 64 bytes";
  for (const char c : name) {
    if (c == '\0') return "a database name cannot contain NUL";
    if (std::string_view("/\\. \"$*<>:|?").find(c) != std::string_view::npos) {
      return std::string("a database name cannot contain '") + c + "'";
    }
  }
  return {};
}

std::string collection_name_problem(std::string_view db, std::string_view name) {
  if (name.empty()) return "a collection name cannot be empty";
  if (name.front() == '.') return "a collection name cannot start with '.'";
  if (name.find('\0') != std::string_view::npos) return "a collection name cannot contain NUL";
  if (name.find('$') != std::string_view::npos) return "a collection name cannot contain '$'";
  if (db.size() + 1 + name.size() > 255) return "a namespace (DB.COLL) has at most 255 bytes";
  return {};
}

namespace {

// Why the directory `st` describes is one someone else controls, or empty.
std::string shared_directory_problem(const std::filesystem::path& path, const struct stat& st) {
  if (st.st_uid != ::geteuid()) {
    return path.string() + " belongs to another user (uid " + std::to_string(st.st_uid) +
           "), who could change what is written there: give a directory of your own";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return path.string() + " may be written by its group or others (mode " + mode +
           "), who could change what is written there: give a directory only you can write to";
  }
  return {};
}

}  // namespace

std::string make_private_directory(const std::filesystem::path& path) {
  if (::mkdir(path.c_str(), 0700) == 0) return {};
  const int e = errno;
  struct stat st {};
  if (e == EEXIST && ::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return shared_directory_problem(path, st);
    return path.string() + " exists and is not a directory" +
           (S_ISLNK(st.st_mode) ? " (a symbolic link, not followed)" : "");
  }
  return "cannot create " + path.string() + ": " + errno_text(e);
}

std::string own_directory_problem(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return "cannot read " + path.string() + ": " + errno_text(errno);
  }
  if (!S_ISDIR(st.st_mode)) return path.string() + " is not a directory";
  return shared_directory_problem(path, st);
}

// ---- progress_line -------------------------------------------------------------------------

// std::cerr's buffer while a progress line shows: each write first erases the line (when it is
// on the screen), then goes on to the stream's own buffer, under the line's mutex. Nothing is
// buffered here, so messages keep their order with the line, which is written to stderr as
// well; and while a message has begun but not yet ended its line (`ctx.err << a << b << '\n'`
// is several writes), the line is not redrawn into it.
class progress_line::erasing_buf final : public std::streambuf {
 public:
  erasing_buf(progress_line& line, std::streambuf* to) : line_(line), to_(to) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;
    std::lock_guard lock(line_.mutex_);
    line_.erase();
    const std::streamsize written = to_->sputn(s, n);
    line_.message_open_ = s[n - 1] != '\n';
    return written;
  }
  int sync() override { return to_->pubsync(); }

 private:
  progress_line& line_;
  std::streambuf* to_;
};

progress_line::progress_line(context& ctx, bool quiet, std::uint64_t total_bytes,
                             std::uint64_t total_documents)
    : total_(total_bytes),
      total_documents_(total_documents),
      start_(std::chrono::steady_clock::now()) {
  if (!shows(ctx, quiet)) return;
  erasing_ = std::make_unique<erasing_buf>(*this, std::cerr.rdbuf());
  cerr_buf_ = std::cerr.rdbuf(erasing_.get());
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) draw();
  });
}

bool progress_line::shows(context& ctx, bool quiet) {
  return !quiet && &ctx.err == &std::cerr && ::isatty(STDERR_FILENO) == 1;
}

void progress_line::finish() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  std::cerr.rdbuf(cerr_buf_);
  std::lock_guard lock(mutex_);
  if (message_open_) std::fputs("\n", stderr);
  message_open_ = false;
  draw();  // the final count, also when the work took less than one redraw
  std::fputs("\n", stderr);
  shown_ = false;
}

void progress_line::erase() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", stderr);  // to the line's start, then clear to its end
  shown_ = false;
}

void progress_line::draw() {
  if (message_open_) return;  // the next redraw, once the message has ended its line
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const auto documents = documents_.load();
  const double mb = static_cast<double>(bytes_.load()) / 1e6;
  // The share done: of the documents when their total is known, else of the bytes.
  double done = -1;
  if (total_documents_ > 0) {
    done = static_cast<double>(documents) / static_cast<double>(total_documents_);
    std::fprintf(stderr, "\r%llu / %llu documents (%.0f%%), %.1f MB",
                 static_cast<unsigned long long>(documents),
                 static_cast<unsigned long long>(total_documents_), 100.0 * done, mb);
  } else if (total_ > 0) {
    const double total_mb = static_cast<double>(total_) / 1e6;
    done = mb / total_mb;
    std::fprintf(stderr, "\r%llu documents, %.1f / %.1f MB (%.0f%%)",
                 static_cast<unsigned long long>(documents), mb, total_mb, 100.0 * done);
  } else {
    std::fprintf(stderr, "\r%llu documents, %.1f MB", static_cast<unsigned long long>(documents),
                 mb);
  }
  std::fprintf(stderr, ", %.1f MB/s", seconds > 0 ? mb / seconds : 0.0);
  if (done > 0 && done < 1) std::fprintf(stderr, ", %.0f s left", seconds * (1 - done) / done);
  std::fputs("   ", stderr);
  shown_ = true;
}

// ---- print_columns ----------------------------------------------------------------------------

void print_columns(context& ctx, const std::vector<std::vector<std::string>>& given,
                   std::string_view align) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : given) {
    rows.emplace_back();
    for (const auto& cell : row) rows.back().push_back(printable(cell));
  }
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c > 0) line += "  ";
      if (c < align.size() && align[c] == 'r') {
        line += pad + row[c];
      } else {
        line += row[c];
        if (c + 1 < row.size()) line += pad;
      }
    }
    ctx.out << line << '\n';
  }
}

// ---- file_sink ------------------------------------------------------------------------------

file_sink::~file_sink() { discard(); }

void file_sink::discard() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
  if (file_ != nullptr) std::fclose(file_);
  gz_ = nullptr;
  file_ = nullptr;
  if (!partial_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);
    partial_.clear();
  }
}

bool file_sink::open(const std::filesystem::path& path, bool gzip, existing at_path) {
  discard();
  path_ = path;
  at_path_ = at_path;
  // Said before any byte is fetched; commit() makes sure of it at the rename.
  struct stat st {};
  if (at_path == existing::refuse && ::lstat(path.c_str(), &st) == 0) {
    error_ = path.string() + " already exists: dump never replaces a file it did not write";
    return false;
  }
  partial_ = path;
  partial_ += ".partial";
  // A new file of our own at that name: O_EXCL refuses whatever is there (a symbolic link too,
  // which it never follows), so a leftover is unlinked (the link itself, not its target) and the
  // creation tried once more; a name taken again in between is an error, not a file shared.
  const auto create = [&] {
    return ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  };
  int fd = create();
  if (fd < 0 && errno == EEXIST && ::unlink(partial_.c_str()) == 0) fd = create();
  if (fd < 0) {
    error_ = "cannot create " + partial_.string() + ": " + errno_text(errno);
    partial_.clear();
    return false;
  }
  if (gzip) {
    gz_ = gzdopen(fd, "wb");
    if (gz_ != nullptr) gzbuffer(static_cast<gzFile>(gz_), 1 << 17);
  } else {
    file_ = ::fdopen(fd, "wb");
    // glibc ignores the size when setvbuf is given no buffer (it would write 4 KiB at a time):
    // the sink brings its own.
    if (file_ != nullptr) {
      if (!buffer_) buffer_ = std::make_unique<char[]>(buffer_size);
      std::setvbuf(file_, buffer_.get(), _IOFBF, buffer_size);
    }
  }
  if (gz_ == nullptr && file_ == nullptr) {
    const int e = errno;
    ::close(fd);
    error_ = "cannot create " + partial_.string() + ": " + errno_text(e);
    discard();
    return false;
  }
  return true;
}

bool file_sink::write(std::string_view bytes) {
  bool ok = true;
  if (gz_ != nullptr) {
    // gzwrite takes an unsigned count: large pieces go in parts.
    while (ok && !bytes.empty()) {
      const auto n = static_cast<unsigned>(std::min<std::size_t>(bytes.size(), 1u << 30));
      ok = gzwrite(static_cast<gzFile>(gz_), bytes.data(), n) == static_cast<int>(n);
      bytes.remove_prefix(n);
    }
  } else if (file_ != nullptr) {
    ok = std::fwrite(bytes.data(), 1, bytes.size(), file_) == bytes.size();
  } else {
    ok = false;
  }
  if (!ok) error_ = "cannot write " + partial_.string() + ": " + errno_text(errno);
  return ok;
}

bool file_sink::commit() {
  bool ok = true;
  if (gz_ != nullptr) ok = gzclose(static_cast<gzFile>(gz_)) == Z_OK;
  if (file_ != nullptr) ok = std::fclose(file_) == 0;
  gz_ = nullptr;
  file_ = nullptr;
  if (!ok) {
    error_ = "cannot write " + partial_.string() + ": " + errno_text(errno);
    discard();
    return false;
  }
  if (at_path_ == existing::refuse) {
    // Never over what is there, whenever it came: the kernel checks, not a look beforehand.
    int r = ::renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
      // A file system without RENAME_NOREPLACE: link(2) never replaces either.
      r = ::link(partial_.c_str(), path_.c_str());
      if (r == 0 && ::unlink(partial_.c_str()) != 0) {
        error_ = "cannot remove " + partial_.string() + ": " + errno_text(errno);
        partial_.clear();
        return false;
      }
    }
    if (r != 0) {
      const int e = errno;
      error_ = e == EEXIST
                   ? path_.string() + " already exists: dump never replaces a file it did not write"
                   : "cannot rename " + partial_.string() + " to " + path_.string() + ": " +
                         errno_text(e);
      discard();
      return false;
    }
    partial_.clear();
    return true;
  }
  std::error_code e;
  std::filesystem::rename(partial_, path_, e);
  if (e) {
    error_ = "cannot rename " + partial_.string() + " to " + path_.string() + ": " + e.message();
    discard();
    return false;
  }
  partial_.clear();
  return true;
}

// ---- source_buf -----------------------------------------------------------------------------

source_buf::~source_buf() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

bool source_buf::open(const std::filesystem::path& path) {
  gz_ = gzopen(path.c_str(), "rb");
  if (gz_ == nullptr) {
    error_ = "cannot open " + path.string() + ": " + errno_text(errno);
    return false;
  }
  gzbuffer(static_cast<gzFile>(gz_), 1 << 17);
  buf_.resize(1 << 17);
  return true;
}

std::string source_buf::error() const {
  if (!error_.empty() || gz_ == nullptr) return error_;
  int code = Z_OK;
  const char* message = gzerror(static_cast<gzFile>(gz_), &code);
  if (code == Z_OK || code == Z_STREAM_END) return {};
  return std::string("compressed data: ") + message;
}

source_buf::int_type source_buf::underflow() {
  if (gz_ == nullptr) return traits_type::eof();
  const int n = gzread(static_cast<gzFile>(gz_), buf_.data(), static_cast<unsigned>(buf_.size()));
  compressed_ = gzdirect(static_cast<gzFile>(gz_)) == 0;
  if (n <= 0) return traits_type::eof();
  setg(buf_.data(), buf_.data(), buf_.data() + n);
  return traits_type::to_int_type(buf_[0]);
}

// ---- stream_sink ----------------------------------------------------------------------------

stream_sink::stream_sink(std::ostream& out, bool gzip) : out_(out) {
  if (!gzip) return;
  auto* z = new z_stream{};
  // windowBits 15 + 16: a gzip wrapper (header and CRC-32 trailer), as gzip and gzwrite write.
  if (deflateInit2(z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    delete z;
    error_ = "cannot start compressing: out of memory";
    return;
  }
  z_ = z;
  buf_.resize(1 << 17);
}

stream_sink::~stream_sink() {
  if (z_ != nullptr) {
    deflateEnd(static_cast<z_stream*>(z_));
    delete static_cast<z_stream*>(z_);
  }
}

bool stream_sink::deflate_to_out(int flush) {
  auto* z = static_cast<z_stream*>(z_);
  int rc = Z_OK;
  do {
    z->next_out = reinterpret_cast<Bytef*>(buf_.data());
    z->avail_out = static_cast<uInt>(buf_.size());
    rc = deflate(z, flush);
    if (rc == Z_STREAM_ERROR) {
      error_ = "compressing failed";
      return false;
    }
    const std::size_t n = buf_.size() - z->avail_out;
    if (n > 0 && !out_.write(buf_.data(), static_cast<std::streamsize>(n))) {
      error_ = "cannot write to standard output";
      return false;
    }
  } while (z->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  return true;
}

bool stream_sink::write(std::string_view bytes) {
  if (!error_.empty()) return false;
  if (z_ == nullptr) {
    if (!out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
      error_ = "cannot write to standard output";
    }
    return error_.empty();
  }
  auto* z = static_cast<z_stream*>(z_);
  // deflate takes an unsigned count: large pieces go in parts.
  while (!bytes.empty()) {
    const auto n = static_cast<uInt>(std::min<std::size_t>(bytes.size(), 1u << 30));
    z->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z->avail_in = n;
    if (!deflate_to_out(Z_NO_FLUSH)) return false;
    bytes.remove_prefix(n);
  }
  return true;
}

bool stream_sink::finish() {
  if (!error_.empty()) return false;
  if (z_ != nullptr) {
    auto* z = static_cast<z_stream*>(z_);
    z->next_in = nullptr;
    z->avail_in = 0;
    if (!deflate_to_out(Z_FINISH)) return false;
  }
  if (!out_.flush()) error_ = "cannot write to standard output";
  return error_.empty();
}

// ---- stream_source_buf ------------------------------------------------------------------------

stream_source_buf::stream_source_buf(std::istream& in) : in_(in) { in_buf_.resize(1 << 17); }

stream_source_buf::~stream_source_buf() {
  if (z_ != nullptr) {
    inflateEnd(static_cast<z_stream*>(z_));
    delete static_cast<z_stream*>(z_);
  }
}

std::size_t stream_source_buf::read_raw() {
  if (in_begin_ < in_end_) return in_end_ - in_begin_;
  in_begin_ = in_end_ = 0;
  if (!in_.good()) return 0;
  // readsome would not wait for a pipe; read waits for a full buffer or the end, as the archive
  // reader does.
  in_.read(in_buf_.data(), static_cast<std::streamsize>(in_buf_.size()));
  in_end_ = static_cast<std::size_t>(in_.gcount());
  if (in_end_ == 0 && in_.bad()) error_ = "reading standard input failed";
  return in_end_;
}

stream_source_buf::int_type stream_source_buf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (done_) return traits_type::eof();
  if (!started_) {
    started_ = true;
    // Two bytes decide: gzip's magic 1f 8b. The first read may give only one (a slow pipe).
    while (in_end_ < 2 && in_.good()) {
      in_.read(in_buf_.data() + in_end_, static_cast<std::streamsize>(2 - in_end_));
      in_end_ += static_cast<std::size_t>(in_.gcount());
    }
    compressed_ = in_end_ >= 2 && static_cast<unsigned char>(in_buf_[0]) == 0x1f &&
                  static_cast<unsigned char>(in_buf_[1]) == 0x8b;
    if (compressed_) {
      auto* z = new z_stream{};
      if (inflateInit2(z, 15 + 16) != Z_OK) {
        delete z;
        error_ = "cannot start decompressing: out of memory";
        done_ = true;
        return traits_type::eof();
      }
      z_ = z;
      out_buf_.resize(1 << 17);
    }
  }
  if (!compressed_) {
    if (read_raw() == 0) {
      done_ = true;
      return traits_type::eof();
    }
    char* p = in_buf_.data() + in_begin_;
    setg(p, p, p + (in_end_ - in_begin_));
    in_begin_ = in_end_;
    return traits_type::to_int_type(*p);
  }
  auto* z = static_cast<z_stream*>(z_);
  while (true) {
    if (read_raw() == 0) {
      // The input ended: fine between gzip members, an early end inside one.
      if (z->total_in != 0) error_ = "compressed data: unexpected end of file";
      done_ = true;
      return traits_type::eof();
    }
    z->next_in = reinterpret_cast<Bytef*>(in_buf_.data() + in_begin_);
    z->avail_in = static_cast<uInt>(in_end_ - in_begin_);
    z->next_out = reinterpret_cast<Bytef*>(out_buf_.data());
    z->avail_out = static_cast<uInt>(out_buf_.size());
    const int rc = inflate(z, Z_NO_FLUSH);
    in_begin_ = in_end_ - z->avail_in;
    const std::size_t n = out_buf_.size() - z->avail_out;
    if (rc == Z_STREAM_END) {
      // The member ended; another may follow (gzip -c a b > c), which must start with the magic.
      inflateReset(z);
      if (read_raw() > 0 && static_cast<unsigned char>(in_buf_[in_begin_]) != 0x1f) {
        error_ = "compressed data: bytes after the end of the gzip stream";
        done_ = true;
      }
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error_ = std::string("compressed data: ") + (z->msg != nullptr ? z->msg : "corrupt");
      done_ = true;
    }
    if (n > 0) {
      setg(out_buf_.data(), out_buf_.data(), out_buf_.data() + n);
      return traits_type::to_int_type(out_buf_[0]);
    }
    if (done_) return traits_type::eof();
  }
}

}  // namespace oid::cli
