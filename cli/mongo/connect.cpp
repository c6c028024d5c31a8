// The client of an `oid mongo` command: its connection string and password from the URI argument,
// --config FILE, --passwordStdin or a prompt on the terminal (connect.hpp).
#include "mongo/connect.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <oid/bson/json_reader.hpp>
#include <vector>

#include "mongo/tools.hpp"
#include "text_io.hpp"

namespace oid::cli {

// ---- --config FILE ----------------------------------------------------------------------------
//
// Written here rather than with a YAML library (libyaml, yaml-cpp): the file holds a password, and
// those libraries copy every scalar into buffers of their own that they free without clearing.
// Here the password goes from the file's bytes, which are cleared, straight into a `secret`. The
// format mongo-tools' --config documents is three top-level `key: value` lines; the subset below
// is that, with YAML's quoting, and refuses the rest with the line it is on, so that nothing is
// silently read otherwise than YAML would read it.

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// True when the rest of a line after a value, `rest`, is only blanks and maybe a comment.
bool only_comment(std::string_view rest) {
  std::size_t i = 0;
  while (i < rest.size() && is_blank(rest[i])) ++i;
  return i == rest.size() || (rest[i] == '#' && i > 0);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | c >> 6);
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | c >> 12);
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | c >> 18);
    out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// A string that clears its bytes when destroyed; reserved up front so that it never reallocates
// (a decoded value is never longer than its text).
struct cleared_string {
  explicit cleared_string(std::size_t capacity) { s.reserve(capacity); }
  ~cleared_string() { OPENSSL_cleanse(s.data(), s.capacity()); }
  cleared_string(const cleared_string&) = delete;
  cleared_string& operator=(const cleared_string&) = delete;
  std::string s;
};

// Decodes the value at the start of `text` (after "key:" and blanks) into `out`; an empty string
// on success, else what is wrong (column numbers are 1-based in the line, `column` being the
// value's first).
std::string decode_value(std::string_view text, std::size_t column, std::string& out) {
  const auto at = [column](std::size_t i) {
    return " (column " + std::to_string(column + i) + ")";
  };
  if (text.empty() || text[0] == '#') {
    return "no value (an empty one is written '')";
  }
  const char first = text[0];
  if (first == '\'') {
    std::size_t i = 1;
    for (;;) {
      if (i == text.size()) return "no closing ' on this line (a value fits on one line)";
      if (text[i] == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          out += '\'';
          i += 2;
          continue;
        }
        break;
      }
      out += text[i++];
    }
    if (!only_comment(text.substr(i + 1))) return "text after the closing quote" + at(i + 1);
    return {};
  }
  if (first == '"') {
    std::size_t i = 1;
    for (;;) {
      if (i == text.size()) return "no closing \" on this line (a value fits on one line)";
      const char c = text[i];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 == text.size()) return "no closing \" on this line (a value fits on one line)";
      const char e = text[i + 1];
      std::size_t digits = 0;
      switch (e) {
      case '0': out += '\0'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 't':
      case '\t': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'v': out += '\v'; break;
      case 'f': out += '\f'; break;
      case 'r': out += '\r'; break;
      case 'e': out += '\x1b'; break;
      case ' ': out += ' '; break;
      case '"': out += '"'; break;
      case '/': out += '/'; break;
      case '\\': out += '\\'; break;
      case 'N': append_utf8(out, 0x85); break;
      case '_': append_utf8(out, 0xA0); break;
      case 'L': append_utf8(out, 0x2028); break;
      case 'P': append_utf8(out, 0x2029); break;
      case 'x': digits = 2; break;
      case 'u': digits = 4; break;
      case 'U': digits = 8; break;
      default: return "an escape YAML does not define" + at(i);
      }
      if (digits == 0) {
        i += 2;
        continue;
      }
      char32_t code = 0;
      for (std::size_t d = 0; d < digits; ++d) {
        const int v = i + 2 + d < text.size() ? hex_value(text[i + 2 + d]) : -1;
        if (v < 0) return "an escape needs " + std::to_string(digits) + " hex digits" + at(i);
        code = code << 4 | static_cast<char32_t>(v);
      }
      if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
        return "an escape names no Unicode character" + at(i);
      }
      append_utf8(out, code);
      i += 2 + digits;
    }
    if (!only_comment(text.substr(i + 1))) return "text after the closing quote" + at(i + 1);
    return {};
  }
  if (first == '|' || first == '>') {
    return "block scalars (| and >) are not read here: quote the value on one line";
  }
  if (first == '[' || first == '{') return "lists and mappings are not read here: quote the value";
  if (first == '&' || first == '*' || first == '!') {
    return "anchors, aliases and tags are not read here: quote the value";
  }
  if (first == '@' || first == '`' || first == '%') {
    return "a value cannot start with @, ` or % unless quoted";
  }
  if ((first == '-' || first == '?' || first == ':') && (text.size() == 1 || is_blank(text[1]))) {
    return "lists and mappings are not read here: quote the value";
  }
  // A plain value ends at a comment (blank, then #); ": " inside it would start a mapping.
  std::size_t end = text.size();
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '#' && is_blank(text[i - 1])) {
      end = i;
      break;
    }
  }
  const std::string_view value = trim_right(text.substr(0, end));
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == ':' && (i + 1 == value.size() || is_blank(value[i + 1]))) {
      return "\": \" inside an unquoted value" + at(i) + ": quote the value";
    }
  }
  if (value == "~" || value == "null" || value == "Null" || value == "NULL") {
    return "no value (null; an empty one is written '')";
  }
  out.append(value);
  return {};
}

}  // namespace

std::variant<connection_config, config_error> parse_connection_config(std::string_view text) {
  connection_config config;
  std::size_t uri_line = 0, password_line = 0;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte order mark
  bool started = false, ended = false;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto fail = [number](std::string message) {
      return config_error{number, std::move(message)};
    };
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;  // blank or a comment
    if (ended) return fail("text after the end of the document (...)");
    if (line.starts_with("---") && (line.size() == 3 || only_comment(line.substr(3)))) {
      if (started) return fail("a second document (---): the file holds one");
      started = true;
      continue;
    }
    if (line.starts_with("...") && (line.size() == 3 || only_comment(line.substr(3)))) {
      ended = true;
      continue;
    }
    started = true;
    if (first > 0) {
      return fail(
          "an indented line: only top-level `key: value` lines are read (no nesting, no "
          "value over several lines)");
    }
    if (line[0] == '%') return fail("directives (%YAML, %TAG) are not read here");
    if (line[0] == '"' || line[0] == '\'' || line[0] == '?' || line[0] == '[' || line[0] == '{' ||
        line[0] == '-' || line[0] == '&' || line[0] == '*' || line[0] == '!') {
      return fail("expected `key: value` with a plain key (uri or password)");
    }
    // The key ends at the first ':' followed by a blank or the end of the line.
    std::size_t colon = std::string_view::npos;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == ':' && (i + 1 == line.size() || is_blank(line[i + 1]))) {
        colon = i;
        break;
      }
    }
    // No value is quoted: a line without "key:" may be a password on a line of its own.
    if (colon == std::string_view::npos) return fail("expected `key: value`");
    const std::string_view key = trim_right(line.substr(0, colon));
    std::size_t* seen = nullptr;
    std::optional<mongo::secret>* slot = nullptr;
    if (key == "uri") {
      seen = &uri_line;
      slot = &config.uri;
    } else if (key == "password") {
      seen = &password_line;
      slot = &config.password;
    } else if (key == "sslPEMKeyPassword") {
      return fail(
          "sslPEMKeyPassword is not read by oid: put tlsCertificateKeyFilePassword=... in this "
          "file's uri: instead");
    } else {
      return fail("unknown key " + quote(key) + " (oid reads uri and password)");
    }
    if (*seen != 0) {
      return fail(std::string(key) + " given twice (first on line " + std::to_string(*seen) + ")");
    }
    std::size_t v = colon + 1;
    while (v < line.size() && is_blank(line[v])) ++v;
    cleared_string value(line.size());
    const std::string problem = decode_value(line.substr(v), v + 1, value.s);
    if (!problem.empty()) return fail(std::string(key) + ": " + problem);
    slot->emplace(value.s);
    *seen = number;
  }
  return config;
}

namespace {

// Closes a file descriptor when it goes out of scope.
struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::variant<connection_config, config_error> read_connection_config(const std::string& path) {
  const auto fail = [](std::string message) { return config_error{0, std::move(message)}; };
  const fd_closer file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) return fail("cannot open: " + errno_text(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return fail("cannot read: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  // As ssh does with a private key: a file others may read (or change: the uri could then send
  // the password elsewhere) is refused, and so is one that another user owns.
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fail("permissions " + octal_mode(st.st_mode) +
                " are too open: it holds a password, and group or others may read or change "
                "it; run chmod 600 " +
                path);
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return fail("belongs to user " + std::to_string(st.st_uid) + ", not to the user running oid (" +
                std::to_string(::geteuid()) + ")");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_config_size) {
    return fail("larger than " + std::to_string(max_config_size) + " bytes");
  }
  // Read up to one byte past the limit, in case the file grew since fstat.
  std::vector<char> bytes(max_config_size + 1);
  std::size_t size = 0;
  std::string read_error;
  while (size < bytes.size()) {
    const ssize_t n = ::read(file.fd, bytes.data() + size, bytes.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_error = "cannot read: " + errno_text(errno);
      break;
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  std::variant<connection_config, config_error> result =
      !read_error.empty()      ? fail(read_error)
      : size > max_config_size ? fail("larger than " + std::to_string(max_config_size) + " bytes")
                               : parse_connection_config(std::string_view(bytes.data(), size));
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return result;
}

// ---- passwords from standard input and the terminal --------------------------------------------

namespace {

constexpr std::size_t max_password = 1024;

// The terminal's settings from before the prompt turned echo off, for the signal handler.
termios prompt_saved_terminal{};
volatile std::sig_atomic_t prompt_echo_off = 0;

// SIGINT, SIGTERM, SIGHUP or SIGQUIT while the prompt waits with echo off: puts the terminal back
// as it was, then dies of the signal as it would have without the prompt (its default action,
// delivered once this handler returns). Only async-signal-safe calls.
extern "C" void restore_terminal_and_die(int signal) {
  if (prompt_echo_off != 0) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &prompt_saved_terminal);
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, "\n", 1);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(signal, &dfl, nullptr);
  ::raise(signal);
}

constexpr std::array<int, 4> prompt_signals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Installs restore_terminal_and_die for the prompt's signals (those not ignored: a command started
// with SIGINT ignored, as `nohup` or a shell's background job, keeps ignoring it) and lets them
// through (`topology --watch` blocks them for sigwait); puts everything back when destroyed.
class prompt_signal_guard {
 public:
  prompt_signal_guard() {
    sigset_t set;
    sigemptyset(&set);
    for (std::size_t i = 0; i < prompt_signals.size(); ++i) {
      struct sigaction handler {};
      handler.sa_handler = restore_terminal_and_die;
      sigemptyset(&handler.sa_mask);
      installed_[i] = ::sigaction(prompt_signals[i], nullptr, &saved_[i]) == 0 &&
                      saved_[i].sa_handler != SIG_IGN &&
                      ::sigaction(prompt_signals[i], &handler, nullptr) == 0;
      sigaddset(&set, prompt_signals[i]);
    }
    ::pthread_sigmask(SIG_UNBLOCK, &set, &saved_mask_);
  }
  ~prompt_signal_guard() {
    ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
    for (std::size_t i = 0; i < prompt_signals.size(); ++i) {
      if (installed_[i]) ::sigaction(prompt_signals[i], &saved_[i], nullptr);
    }
  }
  prompt_signal_guard(const prompt_signal_guard&) = delete;
  prompt_signal_guard& operator=(const prompt_signal_guard&) = delete;

 private:
  std::array<struct sigaction, prompt_signals.size()> saved_{};
  std::array<bool, prompt_signals.size()> installed_{};
  sigset_t saved_mask_{};
};

// Reads one line from the terminal on standard input without echoing it; nullopt when standard
// input is not a terminal (`asked` false) or no line could be read (`asked` true). The bytes go
// straight into a `secret`; the buffer they pass through is cleared. A signal that ends the
// command while it waits leaves the terminal as it found it.
std::optional<mongo::secret> read_password_from_terminal(std::ostream& prompt_to,
                                                         const std::string& user, bool& asked) {
  termios saved{};
  asked = false;
  if (::isatty(STDIN_FILENO) != 1 || ::tcgetattr(STDIN_FILENO, &saved) != 0) return std::nullopt;
  asked = true;
  prompt_to << "Password for " << printable(user) << ": " << std::flush;
  termios quiet = saved;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
  quiet.c_lflag |= ECHONL;
  prompt_saved_terminal = saved;
  prompt_signal_guard guard;
  prompt_echo_off = 1;
  if (::tcsetattr(STDIN_FILENO, TCSANOW, &quiet) != 0) {
    prompt_echo_off = 0;
    return std::nullopt;
  }
  std::array<char, max_password> buffer{};
  std::size_t size = 0;
  bool ended = false;
  while (size < buffer.size()) {
    char c = 0;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') {
      ended = n == 1;
      break;
    }
    buffer[size++] = c;
  }
  ::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
  prompt_echo_off = 0;
  std::optional<mongo::secret> password;
  if (ended) password.emplace(std::string_view(buffer.data(), size));
  OPENSSL_cleanse(buffer.data(), buffer.size());
  return password;
}

// --passwordStdin: the first line of standard input, without its newline (and a '\r' before
// it), which may also be the input's end. Nothing past the newline is read, so a command that
// reads documents from standard input finds them after it. nullopt, with `why`, when standard
// input is a terminal, empty, unreadable, or the line is empty or longer than max_password (the
// error says which).
result<mongo::secret, std::string> read_password_line(context& ctx) {
  const bool real_stdin = &ctx.in == &std::cin;
  if (real_stdin && ::isatty(STDIN_FILENO) == 1) {
    return std::string(
        "standard input is a terminal: leave out --passwordStdin, and oid asks for the "
        "password without showing it");
  }
  // One byte at a time: from the descriptor itself for the real standard input (std::cin would
  // read ahead into a buffer of its own that nobody clears), else from the stream (tests).
  const auto next = [&ctx, real_stdin](char& c) -> int {
    if (!real_stdin) {
      const auto got = ctx.in.rdbuf()->sbumpc();
      if (std::char_traits<char>::eq_int_type(got, std::char_traits<char>::eof())) return 0;
      c = std::char_traits<char>::to_char_type(got);
      return 1;
    }
    for (;;) {
      const ssize_t n = ::read(STDIN_FILENO, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      return n < 0 ? -1 : static_cast<int>(n);
    }
  };
  std::array<char, max_password + 1> buffer{};
  std::size_t size = 0;
  int got = 0;
  char c = 0;
  while ((got = next(c)) == 1 && c != '\n' && size < buffer.size()) buffer[size++] = c;
  // The buffer is wiped on every way out, the password read or not.
  struct wipe {
    std::array<char, max_password + 1>& b;
    ~wipe() { OPENSSL_cleanse(b.data(), b.size()); }
  } wiped{buffer};
  if (got < 0) return "cannot read standard input: " + errno_text(errno);
  if (size > max_password) {
    return "the first line of standard input is longer than " + std::to_string(max_password) +
           " bytes";
  }
  if (size > 0 && buffer[size - 1] == '\r') --size;
  if (size == 0) {
    return std::string(got == 0 && c != '\n' ? "standard input is empty"
                                             : "the first line of standard input is empty");
  }
  return mongo::secret(std::string_view(buffer.data(), size));
}

// A usage error about the connection: printed, and the exit status set.
std::nullopt_t usage_error(context& ctx, const std::string& message) {
  ctx.err << "oid: " << message << '\n';
  ctx.status = exit_usage;
  return std::nullopt;
}

}  // namespace

result<std::chrono::milliseconds, std::string> parse_duration(std::string_view text) {
  const std::string formats =
      " (seconds, or a number with ms, s, m or h: 500ms, 30s, 5m; 0: no limit)";
  // A number: digits with at most one '.', then the unit.
  std::size_t i = 0;
  std::uint64_t whole = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole > 100'000'000) return "too large" + formats;
    whole = whole * 10 + static_cast<std::uint64_t>(text[i++] - '0');
  }
  const std::size_t whole_digits = i;
  std::uint64_t fraction = 0, scale = 1;  // fraction / scale: the part after the point
  std::size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++fraction_digits) {
      if (fraction_digits < 6) {
        fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
        scale *= 10;
      }
    }
  }
  if (whole_digits == 0 && fraction_digits == 0) {
    return (text.empty() ? std::string("empty") : "not a duration: " + quote(text)) + formats;
  }
  const std::string_view unit = text.substr(i);
  std::uint64_t ms_per_unit = 0;
  if (unit.empty() || unit == "s") {
    ms_per_unit = 1000;
  } else if (unit == "ms") {
    ms_per_unit = 1;
  } else if (unit == "m") {
    ms_per_unit = 60'000;
  } else if (unit == "h") {
    ms_per_unit = 3'600'000;
  } else {
    return "unknown unit " + quote(unit) + formats;
  }
  const std::uint64_t ms = whole * ms_per_unit + fraction * ms_per_unit / scale;
  if (ms > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
    return "too large: at most 24 days" + formats;
  }
  if (ms == 0 && (whole != 0 || fraction != 0)) return "less than a millisecond" + formats;
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

std::string duration_text(std::chrono::milliseconds d) {
  if (d.count() <= 0) return "no limit";
  auto ms = d.count();
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  auto s = ms / 1000;
  std::string out;
  if (s >= 3600) out += std::to_string(s / 3600) + "h", s %= 3600;
  if (s >= 60) out += std::to_string(s / 60) + "m", s %= 60;
  if (s > 0 || out.empty()) out += std::to_string(s) + "s";
  return out;
}

void add_uri_options(CLI::App& cmd, context& ctx, std::string& uri, command_time time) {
  // The kind is the running command's: each subcommand sets it when it is the one parsed.
  cmd.preparse_callback([&ctx, time](std::size_t) { ctx.time.kind = time; });
  // Only an argument with "://" is taken for the URI (CLI11 tries the next positional with the
  // others), so that with the URI in --config FILE the other arguments keep their places.
  cmd.validate_positionals();
  cmd.add_option("URI", uri,
                 "Connection string, e.g. mongodb://127.0.0.1:27017/ (or uri: in --config FILE)")
      ->check(CLI::Validator(
          [](const std::string& s) {
            return s.find("://") == std::string::npos ? std::string("not a connection string")
                                                      : std::string();
          },
          ""));
  cmd.add_option("--config", ctx.config_file,
                 "A YAML file as mongo-tools read it, with uri: and/or password: (chmod 600)")
      ->type_name("FILE");
  cmd.add_flag("--passwordStdin,--password-stdin", ctx.password_stdin,
               "Read the password from the first line of standard input (not a terminal)");
  if (time == command_time::quick || time == command_time::long_run) {
    cmd.add_option("--timeout", ctx.time.timeout,
                   std::string("End the command when the server has not answered within this "
                               "time: 500ms, 30s, 5m, ... (default ") +
                       duration_text(time == command_time::quick ? default_quick_timeout
                                                                 : default_long_timeout) +
                       "; 0: no limit; timeoutMS in the URI says the same)")
        ->type_name("DURATION");
  } else {
    cmd.add_option("--stallTimeout,--stall-timeout", ctx.time.stall,
                   "End the command when the transfer made no progress for this time: no "
                   "answer to a request, no new document (default " +
                       duration_text(default_stall_timeout) +
                       "; 0: no limit; timeoutMS in the URI says the same)")
        ->type_name("DURATION");
  }
  cmd.add_flag("-v,--verbose", ctx.verbose,
               "Also log the connection string used (never its password) on standard error");
  // mongo-tools' connection flags, merged into the connection string (make_client).
  auto& f = ctx.connection;
  const std::string group = "Connection (as mongo-tools take it)";
  cmd.add_option("--uri", f.uri, "The connection string, as the URI argument")
      ->type_name("URI")
      ->group(group);
  cmd.add_option("--host", f.host,
                 "HOST[:PORT][,HOST...] or SETNAME/HOST[,HOST...] (default localhost)")
      ->group(group);
  cmd.add_option("--port", f.port, "The port of --host (default 27017)")->group(group);
  cmd.add_option("-u,--username", f.username, "The user to authenticate as")->group(group);
  cmd.add_option("-p,--password", f.password,
                 "The password (asked for on the terminal when given without one; on the "
                 "command line, ps shows it)")
      ->expected(0, 1)
      ->default_str("")
      ->group(group);
  cmd.add_option("--authenticationDatabase", f.auth_database, "The user's database (authSource)")
      ->group(group);
  cmd.add_option("--authenticationMechanism", f.auth_mechanism,
                 "SCRAM-SHA-256, SCRAM-SHA-1, PLAIN or MONGODB-X509")
      ->group(group);
  cmd.add_flag("--tls,--ssl", f.tls, "Connect over TLS")->group(group);
  cmd.add_option("--readPreference,--read-preference", f.read_preference,
                 "Where reads go: primary (default), primaryPreferred, secondary, "
                 "secondaryPreferred, nearest, or {\"mode\": ..., \"tagSets\": [...]}")
      ->group(group);
  cmd.add_option("--tlsCAFile,--sslCAFile", f.tls_ca_file, "CA certificates (PEM)")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option("--tlsCertificateKeyFile,--sslPEMKeyFile", f.tls_certificate_key_file,
                 "The client's certificate and key (PEM)")
      ->type_name("FILE")
      ->group(group);
  cmd.add_flag("--tlsInsecure", f.tls_insecure, "Check neither the certificate nor the host name")
      ->group(group);
  cmd.add_flag("--tlsAllowInvalidCertificates,--sslAllowInvalidCertificates",
               f.tls_allow_invalid_certificates, "Accept any server certificate")
      ->group(group);
  cmd.add_flag("--tlsAllowInvalidHostnames,--sslAllowInvalidHostnames",
               f.tls_allow_invalid_hostnames, "Accept a certificate for another host name")
      ->group(group);
  const std::string api = "Stable API (as mongosh takes it)";
  cmd.add_option("--apiVersion", f.api_version,
                 "Declare this Stable API version (\"1\"): every command carries it")
      ->type_name("VERSION")
      ->group(api);
  cmd.add_flag("--apiStrict", f.api_strict,
               "With --apiVersion: the server refuses what the version does not include")
      ->group(api);
  cmd.add_flag("--apiDeprecationErrors", f.api_deprecation_errors,
               "With --apiVersion: the server refuses what the version deprecates")
      ->group(api);
}

namespace {

// Sets `field` to `value` from flag `flag`: a conflict with what the connection string says
// (`given`: it was given, not the default) is an error naming both.
template <typename T>
std::optional<std::string> take(std::optional<T>& field, T value, std::string_view flag,
                                std::string_view what, bool given) {
  if (given && field && !(*field == value)) {
    return std::string(flag) + " conflicts with the connection string's " + std::string(what) +
           ": give one of them";
  }
  field = std::move(value);
  return std::nullopt;
}

// The hosts of --host (HOST[:PORT],... or SETNAME/HOST,...) with --port, as a connection
// string's; the replica set name in `set`.
result<std::vector<mongo::host>, std::string> hosts_of(const context::connection_flags& f,
                                                       std::string& set) {
  std::string list = f.host.empty() ? "localhost" : f.host;
  if (const auto slash = list.find('/'); slash != std::string::npos) {
    set = list.substr(0, slash);
    list.erase(0, slash + 1);
    if (set.empty()) return std::string("--host: a replica set name before '/' is empty");
  }
  // A value with '@' may hold a password (USER:PASSWORD@HOST): never echoed.
  if (list.find('@') != std::string::npos) {
    return std::string(
        "--host is not HOST[:PORT][,HOST[:PORT]...]: it holds '@' (give the user with "
        "--username, the password with -p)");
  }
  auto parsed = mongo::uri::parse("mongodb://" + list + "/", mongo::uri_mode::strict);
  if (!parsed || list.find('?') != std::string::npos) {
    return "--host '" + printable(list) + "' is not HOST[:PORT][,HOST[:PORT]...]";
  }
  auto hosts = parsed->settings().hosts;
  if (!f.port.empty()) {
    unsigned long port = 0;
    const bool digits = f.port.find_first_not_of("0123456789") == std::string::npos;
    if (digits && f.port.size() <= 5) port = std::stoul(f.port);
    if (port == 0 || port > 65535) return "--port '" + printable(f.port) + "' is not a port";
    for (auto& h : hosts) {
      if (h.port && *h.port != port) return std::string("--port conflicts with a port in --host");
      h.port = static_cast<std::uint16_t>(port);
    }
  }
  return hosts;
}

}  // namespace

result<mongo::read_preference, std::string> parse_read_preference(std::string_view text) {
  const std::string modes =
      " (primary, primaryPreferred, secondary, secondaryPreferred, nearest, or {\"mode\": ..., "
      "\"tagSets\": [...], \"maxStalenessSeconds\": N})";
  mongo::read_preference rp;
  if (text.empty() || text.front() != '{') {
    auto mode = mongo::read_mode_from_string(text);
    if (!mode) return "--readPreference: unknown mode " + quote(text) + modes;
    rp.mode = *mode;
    return rp;
  }
  auto doc = bson::from_json(text);
  if (!doc) return "--readPreference: " + std::string(doc.error().message()) + modes;
  bool has_mode = false;
  for (const auto& e : doc->view()) {
    if (e.key() == "mode") {
      const auto name = e.get_string();
      auto mode = name ? mongo::read_mode_from_string(*name) : mongo::read_mode_from_string("");
      if (!mode) return "--readPreference: \"mode\" is not a mode" + modes;
      rp.mode = *mode;
      has_mode = true;
    } else if (e.key() == "tagSets") {
      const auto sets = e.get_array();
      if (!sets) return std::string("--readPreference: \"tagSets\" is not an array of documents");
      for (const auto& set : *sets) {
        const auto tags = set.get_document();
        if (!tags) return std::string("--readPreference: \"tagSets\" holds a non-document");
        mongo::tag_set ts;
        for (const auto& tag : *tags) {
          const auto value = tag.get_string();
          if (!value) return "--readPreference: tag " + quote(tag.key()) + " is not a string";
          ts.emplace_back(std::string(tag.key()), std::string(*value));
        }
        rp.tag_sets.push_back(std::move(ts));
      }
    } else if (e.key() == "maxStalenessSeconds") {
      const auto n = e.get_int32();
      if (!n || *n <= 0) {
        return std::string("--readPreference: \"maxStalenessSeconds\" is not a positive int");
      }
      rp.max_staleness = std::chrono::seconds(*n);
    } else {
      return "--readPreference: unknown field " + quote(e.key()) + modes;
    }
  }
  if (!has_mode) return "--readPreference: no \"mode\"" + modes;
  return rp;
}

result<mongo::uri, std::string> with_connection_flags(const context::connection_flags& f,
                                                      mongo::uri u, bool given) {
  const bool any = !f.host.empty() || !f.port.empty() || !f.username.empty() || f.password ||
                   !f.auth_database.empty() || !f.auth_mechanism.empty() || f.tls ||
                   !f.tls_ca_file.empty() || !f.tls_certificate_key_file.empty() ||
                   f.tls_insecure || f.tls_allow_invalid_certificates ||
                   f.tls_allow_invalid_hostnames || !f.read_preference.empty();
  if (!any) return u;
  auto s = u.settings();
  std::optional<std::string> conflict;
  const auto set = [&](auto& field, auto value, std::string_view flag, std::string_view what) {
    if (!conflict) conflict = take(field, std::move(value), flag, what, given);
  };
  if (!f.host.empty() || !f.port.empty()) {
    std::string set_name;
    auto hosts = hosts_of(f, set_name);
    if (!hosts) return std::move(hosts).error();
    if (given && s.srv_name) return std::string("--host conflicts with the mongodb+srv:// name");
    if (given && !(s.hosts == *hosts)) {
      return std::string(f.host.empty() ? "--port" : "--host") +
             " conflicts with the connection string's hosts: give one of them";
    }
    s.hosts = std::move(*hosts);
    if (!set_name.empty()) set(s.replica_set, set_name, "--host SETNAME/...", "replicaSet");
  }
  if (!f.username.empty()) set(s.username, f.username, "--username", "user");
  if (f.password && !f.password->empty()) {
    set(s.password, mongo::secret(*f.password), "--password", "password");
  }
  if (!f.auth_database.empty())
    set(s.auth_source, f.auth_database, "--authenticationDatabase", "authSource");
  if (!f.auth_mechanism.empty()) {
    set(s.auth_mechanism, f.auth_mechanism, "--authenticationMechanism", "authMechanism");
  }
  if (f.tls) set(s.tls, true, "--tls", "tls");
  if (!f.tls_ca_file.empty()) set(s.tls_ca_file, f.tls_ca_file, "--tlsCAFile", "tlsCAFile");
  if (!f.tls_certificate_key_file.empty()) {
    set(s.tls_certificate_key_file, f.tls_certificate_key_file, "--tlsCertificateKeyFile",
        "tlsCertificateKeyFile");
  }
  if (f.tls_insecure) set(s.tls_insecure, true, "--tlsInsecure", "tlsInsecure");
  if (f.tls_allow_invalid_certificates) {
    set(s.tls_allow_invalid_certificates, true, "--tlsAllowInvalidCertificates",
        "tlsAllowInvalidCertificates");
  }
  if (f.tls_allow_invalid_hostnames) {
    set(s.tls_allow_invalid_hostnames, true, "--tlsAllowInvalidHostnames",
        "tlsAllowInvalidHostnames");
  }
  if (!f.read_preference.empty()) {
    auto rp = parse_read_preference(f.read_preference);
    if (!rp) return std::move(rp).error();
    set(s.read_preference_mode, rp->mode, "--readPreference", "readPreference");
    if (!rp->tag_sets.empty()) {
      set(s.read_preference_tags, rp->tag_sets, "--readPreference tagSets", "readPreferenceTags");
    }
    if (rp->max_staleness) {
      set(s.max_staleness, *rp->max_staleness, "--readPreference maxStalenessSeconds",
          "maxStalenessSeconds");
    }
  }
  if (conflict) return std::move(*conflict);
  if (f.password && !s.username) {
    return std::string("--password, but no user: give --username (or USER@ in the URI)");
  }
  auto merged = mongo::uri::from(std::move(s));
  if (!merged) return "the connection flags: " + merged.error().message;
  return std::move(*merged);
}

namespace {

bool is_stall(command_time kind) {
  return kind == command_time::batches || kind == command_time::stream;
}

std::chrono::milliseconds default_time(command_time kind) {
  switch (kind) {
  case command_time::quick: return default_quick_timeout;
  case command_time::long_run: return default_long_timeout;
  case command_time::batches:
  case command_time::stream: break;
  }
  return default_stall_timeout;
}

// `u` with the command's time limit: --timeout or --stallTimeout, else the URI's timeoutMS (the
// same setting: both, differing, is an error), else the default of the command's kind. As the
// client's timeoutMS (each operation under it; the commands that read cursors have each next()
// that fetches more under it afresh), except for `stream`, where GridFS would bound a whole file
// by timeoutMS and a tailable cursor would wait that long for a document: there it becomes
// socketTimeoutMS, the time each request's answer may take (a URI's own socketTimeoutMS, with
// neither flag nor timeoutMS, is kept).
result<mongo::uri, std::string> with_time_limit(const context& ctx, mongo::uri u) {
  const auto kind = ctx.time.kind;
  const std::string flag = is_stall(kind) ? "--stallTimeout" : "--timeout";
  const std::string& text = is_stall(kind) ? ctx.time.stall : ctx.time.timeout;
  auto s = u.settings();
  std::optional<std::chrono::milliseconds> limit;
  if (!text.empty()) {
    auto d = parse_duration(text);
    if (!d) return flag + ": " + d.error();
    if (s.timeout && *s.timeout != *d) {
      return flag + " conflicts with the connection string's timeoutMS: give one of them";
    }
    limit = *d;
  } else if (s.timeout) {
    limit = *s.timeout;
  } else if (kind == command_time::stream && s.socket_timeout) {
    return u;
  } else {
    limit = default_time(kind);
  }
  if (kind == command_time::stream) {
    s.timeout.reset();
    s.socket_timeout = *limit;
  } else {
    s.timeout = *limit;
  }
  auto with = mongo::uri::from(std::move(s));
  if (!with) return flag + ": " + with.error().message;
  return std::move(*with);
}

}  // namespace

std::string time_limit_hint(const context& ctx) {
  const auto kind = ctx.time.kind;
  const auto& text = is_stall(kind) ? ctx.time.stall : ctx.time.timeout;
  std::string value = duration_text(default_time(kind)) + " (the default)";
  if (auto d = parse_duration(text); !text.empty() && d) value = duration_text(*d);
  if (is_stall(kind)) {
    return "the transfer stalled: no progress for " + value +
           " (no answer to a request, or no new document); --stallTimeout DURATION changes "
           "the limit (0: none)";
  }
  return "the server did not answer within " + value +
         "; --timeout DURATION changes the limit (0: none)";
}

bool ran_out_of_time_limit(const context& ctx, std::error_code code, std::string_view message) {
  if (code != mongo::errc::timeout) return false;
  // timeoutMS's failures say so (time_limit::expired_in); under socketTimeoutMS (stream), a
  // timeout that is not the selection's, the connection's or its TLS handshake's is a request's.
  if (ctx.time.kind != command_time::stream) {
    return message.find("operation timed out (timeoutMS ") != std::string_view::npos;
  }
  for (const std::string_view other :
       {"no suitable server", "cannot connect to", "TLS handshake"}) {
    if (message.find(other) != std::string_view::npos) return false;
  }
  return true;
}

std::string with_time_hint(const context& ctx, const mongo::failure& f) {
  if (!ran_out_of_time_limit(ctx, f.code, f.message)) return f.message;
  return f.message + " (" + time_limit_hint(ctx) + ")";
}

// Makes the client, printing the connection string's warnings; nullopt (reported) when refused.
// The password: in the URI, in --config FILE, on standard input (--passwordStdin), or, for a
// user name without any, asked for on a terminal; else a usage error saying how to give one.
std::optional<mongo::client> make_client(context& ctx, const std::string& uri_text,
                                         mongo::client_options options) {
  std::optional<connection_config> config;
  const std::string config_name = "--config " + ctx.config_file;
  if (!ctx.config_file.empty()) {
    auto read = read_connection_config(ctx.config_file);
    if (const auto* e = std::get_if<config_error>(&read)) {
      return usage_error(
          ctx, config_name + (e->line != 0 ? ", line " + std::to_string(e->line) : std::string()) +
                   ": " + e->message);
    }
    config = std::move(std::get<connection_config>(read));
  }
  // --uri is the URI argument under mongo-tools' name: both, differing, is an error.
  const auto& flags = ctx.connection;
  if (!flags.uri.empty() && !uri_text.empty() && flags.uri != uri_text) {
    return usage_error(ctx, "--uri and the URI argument differ: give one of them");
  }
  const std::string& argument = flags.uri.empty() ? uri_text : flags.uri;
  // The URI argument comes first, as mongo-tools' command-line options override the file; with
  // neither, mongo-tools' default: the server on this machine's standard port.
  const bool from_config = argument.empty() && config && config->uri;
  const bool uri_given = from_config || !argument.empty();
  const std::string_view text = from_config ? config->uri->reveal()
                                : uri_given ? std::string_view(argument)
                                            : std::string_view("mongodb://localhost:27017/");
  auto u = mongo::uri::parse(text, mongo::uri_mode::strict);
  if (!u) {
    ctx.err << "oid: " << printable(u.error().message) << " (at character " << u.error().offset + 1
            << " of the URI" << (from_config ? " in " + config_name : "") << ")\n";
    ctx.bad_input();
    return std::nullopt;
  }
  for (const auto& w : u->warnings()) ctx.err << "oid: warning: " << printable(w) << '\n';
  // A password in an argument is in /proc/PID/cmdline, which every user of the machine may read
  // (ps), and in the shell's history: taken, as mongo-tools take it, with a word (once) on how
  // to avoid it. Never the password itself. --config FILE and standard input are not arguments.
  const bool password_in_uri = !from_config && uri_given && u->password();
  const bool password_flag = flags.password && !flags.password->empty();
  if ((password_in_uri || password_flag) && !ctx.password_warned) {
    ctx.password_warned = true;
    ctx.err << "oid: warning: "
            << (password_flag ? "the password of --password" : "the password in the URI")
            << " is on the command line, where other users see it (ps) and the shell's history "
               "keeps it: put it in --config FILE (password: ..., chmod 600), give it on "
               "standard input with --passwordStdin, or give -p without a value to be asked "
               "for it on the terminal\n";
  }
  if (auto merged = with_connection_flags(flags, std::move(*u), uri_given); merged) {
    u = std::move(*merged);
  } else {
    return usage_error(ctx, merged.error());
  }
  if (auto limited = with_time_limit(ctx, std::move(*u)); limited) {
    u = std::move(*limited);
  } else {
    return usage_error(ctx, limited.error());
  }

  const bool x509 = u->auth_mechanism() == "MONGODB-X509";
  std::optional<mongo::secret> given;  // from --config FILE or standard input
  std::string given_by;
  if (config && config->password) {
    // mongo-tools refuse a password: that contradicts the URI's.
    if (u->password() && !(*u->password() == *config->password)) {
      return usage_error(ctx, "the password in " + config_name +
                                  " differs from the one in the URI: give one of them");
    }
    given = std::move(config->password);
    given_by = config_name;
  }
  if (ctx.password_stdin) {
    if (u->password() || given) {
      return usage_error(ctx, std::string("--passwordStdin, but the password is already in ") +
                                  (given ? config_name : "the URI"));
    }
    given_by = "--passwordStdin";
  }
  if ((given || ctx.password_stdin) && !u->username()) {
    return usage_error(ctx, "a password from " + given_by +
                                ", but the URI names no user: write mongodb://USER@HOST/");
  }
  if ((given || ctx.password_stdin) && x509) {
    return usage_error(ctx, "a password from " + given_by +
                                ", but MONGODB-X509 authenticates with the client certificate");
  }
  if (ctx.password_stdin) {
    auto line = read_password_line(ctx);
    if (!line) return usage_error(ctx, "--passwordStdin: " + line.error());
    given = std::move(*line);
  }
  if (given && !u->password()) u->set_password(std::move(*given));

  if (u->username() && !u->password() && !x509) {
    // Only the real process's standard input can be a terminal to ask on.
    bool asked = false;
    auto password = &ctx.in == &std::cin
                        ? read_password_from_terminal(ctx.err, *u->username(), asked)
                        : std::nullopt;
    if (!password && asked) return usage_error(ctx, "no password was read from the terminal");
    if (!password) {
      return usage_error(
          ctx, "the URI names user '" + printable(*u->username()) +
                   "' but no password, and standard input is not a terminal to ask for it on: "
                   "give it in a file (--config FILE, with password: ... and chmod 600) or on "
                   "standard input (--passwordStdin), or run oid from a terminal; or put it in "
                   "the URI (mongodb://USER:PASSWORD@HOST/, with '@', ':', '/' and '%' "
                   "percent-encoded), where ps and the shell's history show it");
    }
    u->set_password(std::move(*password));
  }
  if (ctx.verbose > 0) {
    // The connection string as the client will use it: the URI, the --config file and the
    // connection flags merged. to_string() never holds the password (nor the key's).
    ctx.err << "oid: connecting to " << printable(u->to_string()) << '\n';
    // The time limit as the client got it (with_time_limit), with the flag that sets it.
    const auto limit = ctx.time.kind == command_time::stream ? u->socket_timeout() : u->timeout();
    const std::string flag = is_stall(ctx.time.kind) ? "--stallTimeout" : "--timeout";
    ctx.err << "oid: time limit: ";
    if (!limit) {
      ctx.err << "socketTimeoutMS's default\n";
    } else if (limit->count() == 0) {
      ctx.err << "none (" << flag << " 0)\n";
    } else {
      ctx.err << (is_stall(ctx.time.kind) ? "no progress for " : "no answer within ")
              << duration_text(*limit) << " (" << flag << ")\n";
    }
  }
  if (!flags.api_version.empty()) {
    auto version = mongo::server_api::parse_version(flags.api_version);
    if (!version) return usage_error(ctx, "--apiVersion: " + printable(version.error().message));
    mongo::server_api api;
    api.version = *version;
    if (flags.api_strict) api.strict = true;
    if (flags.api_deprecation_errors) api.deprecation_errors = true;
    options.server_api = api;
  } else if (flags.api_strict || flags.api_deprecation_errors) {
    return usage_error(ctx,
                       std::string(flags.api_strict ? "--apiStrict" : "--apiDeprecationErrors") +
                           " needs --apiVersion 1");
  }
  auto c = mongo::client::create(*u, std::move(options));
  if (!c) {
    report(ctx, c.error());
    return std::nullopt;
  }
  return std::move(*c);
}

}  // namespace oid::cli
