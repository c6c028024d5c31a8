// The oid command against hostile peers: passwords kept off the command line (--config FILE,
// --password-stdin, the terminal prompt and its signals), and text from a server or a file kept
// from steering the terminal (printable). The tests that need FerretDB with authentication use
// MONGODB_AUTH_URI (scripts/test.sh); without it they skip, and fail under CI=true.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "mongo/connect.hpp"
#include "support/ci.hpp"
#include "support/run_cli.hpp"
#include "support/run_shell.hpp"
#include "support/script_server.hpp"
#include "text_io.hpp"

namespace {

using namespace std::string_literals;
using oid::cli::printable;
using oid::testing::run_cli;
using oid::testing::run_shell;

// ---- printable ----------------------------------------------------------------------------------

// True when `s` holds nothing a terminal acts on: no C0 control but the newline, no DEL, no C1
// control (as UTF-8), and no byte of 0x80 or more at all when `ascii`.
bool terminal_safe(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7F) return false;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      return false;
    }
  }
  return true;
}

TEST(PrintableTest, EscapesWhatATerminalActsOn) {
  struct test_case {
    const char* name;
    std::string input, want;
  };
  const test_case cases[] = {
      {"plain", "db.coll name-1 é € 😀 \\x1b", "db.coll name-1 é € 😀 \\x1b"},
      {"window title", "\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"},
      {"clear screen", "a\x1b[2Jb", "a\\x1b[2Jb"},
      {"carriage return", "ok\rEVIL", "ok\\rEVIL"},
      {"newline, tab", "a\nb\tc", "a\\nb\\tc"},
      {"NUL and DEL", "a\0b\x7f"s, "a\\x00b\\x7f"},
      {"C1 CSI as UTF-8",
       "a\xc2\x9b"
       "2Jb",
       "a\\u009b2Jb"},
      {"C1 NEL and the first", "\xc2\x85\xc2\x80\xc2\x9f", "\\u0085\\u0080\\u009f"},
      {"U+00A0 is printable", "\xc2\xa0", "\xc2\xa0"},
      {"lone C1 byte",
       "\x9b"
       "2J",
       "\\x9b2J"},
      {"overlong slash", "\xc0\xaf", "\\xc0\\xaf"},
      {"overlong 3 bytes", "\xe0\x80\xaf", "\\xe0\\x80\\xaf"},
      {"surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"truncated", "ab\xe2\x82", "ab\\xe2\\x82"},
      {"continuation first", "\x80z", "\\x80z"},
      {"right-to-left override",
       "a\xe2\x80\xae"
       "b",
       "a\\u202eb"},
      {"isolates", "\xe2\x81\xa6\xe2\x81\xa9\xd8\x9c", "\\u2066\\u2069\\u061c"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(printable(c.input), c.want);
    EXPECT_TRUE(terminal_safe(printable(c.input)));
  }
  EXPECT_EQ(printable("line 1\nline\r2\n", true), "line 1\nline\\r2\n");
}

// Extended JSON with every character printable() escapes: JSON escapes the C0 controls itself,
// terminal_safe_json the rest, and the result reads back to the same document.
TEST(PrintableTest, TerminalSafeJsonIsTheSameJson) {
  const std::string hostile_text =
      "a\x7f b\xc2\x9b[2J c\xc2\x85 d\xe2\x80\xae e\xd8\x9c f\xc3\xa9 \x1b]0;t\x07";
  oid::bson::builder b;
  b.append_string(hostile_text, hostile_text);
  const auto json = oid::bson::to_json(b.view());
  EXPECT_FALSE(terminal_safe(json)) << json;
  const std::string safe = oid::cli::terminal_safe_json(json);
  EXPECT_TRUE(terminal_safe(safe)) << safe;
  EXPECT_NE(
      safe.find("a\\u007f b\\u009b[2J c\\u0085 d\\u202e e\\u061c f\xc3\xa9 \\u001b]0;t\\u0007"),
      std::string::npos)
      << safe;
  const auto back = oid::bson::from_json(safe);
  ASSERT_TRUE(back.has_value()) << safe;
  EXPECT_EQ(oid::bson::to_json(back->view()), json);
  EXPECT_EQ(oid::cli::terminal_safe_json(R"({"plain":"text","n":1})"), R"({"plain":"text","n":1})");
}

// Every byte alone, and every code point as UTF-8: the result is safe, and a code point that is
// neither a control nor a bidirectional format character comes out as it went in.
TEST(PrintableTest, SweepsEveryByteAndCodePoint) {
  for (int b = 0; b < 256; ++b) {
    const std::string in(1, static_cast<char>(b));
    const std::string out = printable(in);
    EXPECT_TRUE(terminal_safe(out)) << b;
    EXPECT_EQ(out == in, b >= 0x20 && b < 0x7F) << b;
  }
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string in;
    if (c < 0x80) {
      in += static_cast<char>(c);
    } else if (c < 0x800) {
      in += static_cast<char>(0xC0 | c >> 6);
      in += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      in += static_cast<char>(0xE0 | c >> 12);
      in += static_cast<char>(0x80 | (c >> 6 & 0x3F));
      in += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      in += static_cast<char>(0xF0 | c >> 18);
      in += static_cast<char>(0x80 | (c >> 12 & 0x3F));
      in += static_cast<char>(0x80 | (c >> 6 & 0x3F));
      in += static_cast<char>(0x80 | (c & 0x3F));
    }
    const std::string out = printable(in);
    const bool control = c < 0x20 || (c >= 0x7F && c <= 0x9F);
    const bool bidi = c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
                      (c >= 0x2066 && c <= 0x2069);
    if (!terminal_safe(out) || (out == in) == (control || bidi)) {
      ADD_FAILURE() << "U+" << std::hex << static_cast<std::uint32_t>(c) << " gave " << out;
      return;
    }
  }
}

// ---- --config FILE: the parser -----------------------------------------------------------------

struct parsed {
  std::string uri, password;
  bool has_uri = false, has_password = false;
};

// The values of a file that parses (test-only: a secret's bytes copied into strings).
parsed values_of(const oid::cli::connection_config& c) {
  parsed p;
  if (c.uri) p = {std::string(c.uri->reveal()), "", true, false};
  if (c.password) {
    p.password = std::string(c.password->reveal());
    p.has_password = true;
  }
  return p;
}

TEST(ConfigFileTest, ReadsTheKeysMongoToolsWrite) {
  struct test_case {
    const char* name;
    std::string text, uri, password;
  };
  const test_case cases[] = {
      {"both", "uri: mongodb://h/\npassword: pw\n", "mongodb://h/", "pw"},
      {"comments, blanks, markers, CRLF, BOM",
       "\xEF\xBB\xBF# oid\r\n---\r\n\r\n  # indented comment\r\npassword: pw # the "
       "password\r\n...\r\n",
       "", "pw"},
      {"no newline at the end", "password: pw", "", "pw"},
      {"single-quoted", "password: 'it''s # not a comment'", "", "it's # not a comment"},
      {"double-quoted escapes", R"(password: "a\"b\\c\x41\u00e9\t" # comment)", "",
       "a\"b\\cA\xc3\xa9\t"},
      {"plain with # and : inside", "password: p#w:x", "", "p#w:x"},
      {"plain with blanks inside", "password: two words\t ", "", "two words"},
      {"empty quoted", "password: ''", "", ""},
      {"blank before the colon", "password : pw", "", "pw"},
      {"looks like YAML's true", "password: yes", "", "yes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = oid::cli::parse_connection_config(c.text);
    ASSERT_TRUE(std::holds_alternative<oid::cli::connection_config>(r))
        << std::get<oid::cli::config_error>(r).message;
    const auto v = values_of(std::get<oid::cli::connection_config>(r));
    EXPECT_EQ(v.has_uri, !c.uri.empty());
    EXPECT_EQ(v.uri, c.uri);
    EXPECT_TRUE(v.has_password);
    EXPECT_EQ(v.password, c.password);
  }
}

TEST(ConfigFileTest, RefusesTheRestWithItsLineAndNeverItsValue) {
  struct test_case {
    std::string text;
    std::size_t line;
    std::string_view want;
  };
  // "Zs3cr3t" stands for a password: no message may show it.
  const test_case cases[] = {
      {"password: Zs3cr3t\n  more: Zs3cr3t\n", 2, "indented"},
      {"uri: mongodb://h/\n\nusername: Zs3cr3t\n", 3, "unknown key \"username\""},
      {"password: Zs3cr3t\npassword: Zs3cr3t\n", 2, "password given twice (first on line 1)"},
      {"password:\n", 1, "password: no value"},
      {"password: # Zs3cr3t\n", 1, "no value"},
      {"password: ~\n", 1, "no value"},
      {"password: 'Zs3cr3t\n", 1, "no closing '"},
      {"password: \"Zs3cr3t\n", 1, "no closing \""},
      {"password: \"Zs3\\qcr3t\"\n", 1, "an escape YAML does not define (column 15)"},
      {"password: \"Zs3\\x4\"\n", 1, "needs 2 hex digits"},
      {"password: 'Zs3cr3t' Zs3cr3t\n", 1, "text after the closing quote"},
      {"password: |\n  Zs3cr3t\n", 1, "block scalars"},
      {"password: - Zs3cr3t\n", 1, "lists and mappings"},
      {"password: [Zs3cr3t]\n", 1, "lists and mappings"},
      {"password: &a Zs3cr3t\n", 1, "anchors"},
      {"password: @Zs3cr3t\n", 1, "cannot start with @"},
      {"password: Zs3: cr3t\n", 1, "\": \" inside an unquoted value (column 14)"},
      {"Zs3cr3t\n", 1, "expected `key: value`"},
      {"- Zs3cr3t\n", 1, "expected `key: value`"},
      {"sslPEMKeyPassword: Zs3cr3t\n", 1, "tlsCertificateKeyFilePassword"},
      {"%YAML 1.1\n---\npassword: Zs3cr3t\n", 1, "directives"},
      {"password: Zs3cr3t\n---\nuri: x\n", 2, "a second document"},
      {"password: Zs3cr3t\n...\nuri: x\n", 3, "after the end of the document"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto r = oid::cli::parse_connection_config(c.text);
    ASSERT_TRUE(std::holds_alternative<oid::cli::config_error>(r));
    const auto& e = std::get<oid::cli::config_error>(r);
    EXPECT_EQ(e.line, c.line);
    EXPECT_NE(e.message.find(c.want), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find("s3cr"), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find("cr3t"), std::string::npos) << e.message;
  }
}

// ---- --config FILE: the file
// ---------------------------------------------------------------------

// Writes `text` to a new scratch file with permissions `mode`; returns its path.
std::string write_config(const std::string& text, mode_t mode) {
  const std::string path = oid::testing::scratch_path("config.yaml");
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  EXPECT_EQ(::chmod(path.c_str(), mode), 0);
  return path;
}

TEST(ConfigFileTest, RefusesAFileOthersMayReadAsSshDoes) {
  const std::string ok = write_config("password: pw\n", 0600);
  EXPECT_TRUE(
      std::holds_alternative<oid::cli::connection_config>(oid::cli::read_connection_config(ok)));
  for (const mode_t mode : {0644, 0640, 0604, 0602, 0620, 0601}) {
    SCOPED_TRACE(mode);
    const std::string path = write_config("password: Zs3cr3t\n", mode);
    const auto r = oid::cli::read_connection_config(path);
    ASSERT_TRUE(std::holds_alternative<oid::cli::config_error>(r));
    const auto& e = std::get<oid::cli::config_error>(r);
    EXPECT_EQ(e.line, 0u);
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    EXPECT_NE(e.message.find(std::string("permissions ") + octal + " are too open"),
              std::string::npos)
        << e.message;
    EXPECT_NE(e.message.find("chmod 600 " + path), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find("Zs3cr3t"), std::string::npos);
  }
  const auto missing = oid::cli::read_connection_config(ok + ".missing");
  ASSERT_TRUE(std::holds_alternative<oid::cli::config_error>(missing));
  EXPECT_NE(std::get<oid::cli::config_error>(missing).message.find("cannot open"),
            std::string::npos);
  const std::string dir = oid::testing::scratch_path("dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const auto directory = oid::cli::read_connection_config(dir);
  ASSERT_TRUE(std::holds_alternative<oid::cli::config_error>(directory));
  EXPECT_NE(std::get<oid::cli::config_error>(directory).message.find("not a regular file"),
            std::string::npos);
  ::rmdir(dir.c_str());
  const std::string big = write_config(std::string(oid::cli::max_config_size + 1, '#'), 0600);
  const auto large = oid::cli::read_connection_config(big);
  ASSERT_TRUE(std::holds_alternative<oid::cli::config_error>(large));
  EXPECT_NE(std::get<oid::cli::config_error>(large).message.find("larger than"), std::string::npos);
}

// ---- the command, without a server
// ---------------------------------------------------------------

TEST(CredentialsCliTest, RefusesPasswordsThatCannotBeUsed) {
  const std::string config = write_config("password: Zs3cr3t\n", 0600);
  const std::string other = write_config("password: 0ther\n", 0600);
  const std::string open = write_config("password: Zs3cr3t\n", 0644);
  const std::string bad = write_config("password: Zs3cr3t\n\tuser: x\n", 0600);
  struct test_case {
    std::vector<std::string> args;
    std::string input;
    std::string_view want;
  };
  const test_case cases[] = {
      {{"ping", "mongodb://127.0.0.1:1/", "--password-stdin"},
       "Zs3cr3t\n",
       "--passwordStdin, but the URI names no user"},
      {{"ping", "mongodb://ann:Zs3cr3t@127.0.0.1:1/", "--password-stdin"},
       "Zs3cr3t\n",
       "--passwordStdin, but the password is already in the URI"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "--password-stdin", "--config", config},
       "x\n",
       "--passwordStdin, but the password is already in --config"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "--password-stdin"}, "", "standard input is empty"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "--password-stdin"},
       "\nZs3cr3t\n",
       "the first line of standard input is empty"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "--password-stdin"},
       std::string(1025, 'Z'),
       "longer than 1024 bytes"},
      {{"ping", "mongodb://ann:0ther@127.0.0.1:1/", "--config", config},
       "",
       "differs from the one in the URI"},
      {{"ping", "mongodb://ann:Zs3cr3t@127.0.0.1:1/", "--config", other},
       "",
       "differs from the one in the URI"},
      {{"ping", "mongodb://127.0.0.1:1/", "--config", config}, "", "but the URI names no user"},
      {{"ping", "mongodb://CN=ann@127.0.0.1:1/?authMechanism=MONGODB-X509&tls=true", "--config",
        config},
       "",
       "MONGODB-X509"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "--config", open}, "", "chmod 600"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "--config", bad}, "", ", line 2: an indented line"},
      // mongo-tools' connection flags: contradicting the connection string, or malformed.
      {{"ping", "--uri", "mongodb://127.0.0.1:1/", "mongodb://127.0.0.1:2/"},
       "",
       "--uri and the URI argument differ"},
      {{"ping", "mongodb://127.0.0.1:1/", "--host", "127.0.0.2"},
       "",
       "--host conflicts with the connection string's hosts"},
      {{"ping", "mongodb://127.0.0.1:1/", "--port", "2"},
       "",
       "--port conflicts with the connection string's hosts"},
      {{"ping", "mongodb://ann@127.0.0.1:1/", "-u", "bob", "-p", "Zs3cr3t"},
       "",
       "--username conflicts with the connection string's user"},
      {{"ping", "mongodb://ann:0ther@127.0.0.1:1/", "-p", "Zs3cr3t"},
       "",
       "--password conflicts with the connection string's password"},
      {{"ping", "--port", "1", "-p", "Zs3cr3t"}, "", "--password, but no user"},
      {{"ping", "--port", "65536"}, "", "--port '65536' is not a port"},
      {{"ping", "--host", "ann:Zs3cr3t@127.0.0.1"}, "", "is not HOST[:PORT]"},
      {{"ping", "--host", "/127.0.0.1"}, "", "a replica set name before '/' is empty"},
      {{"ping", "mongodb://127.0.0.1:1/?authSource=a", "--authenticationDatabase", "b"},
       "",
       "--authenticationDatabase conflicts with the connection string's authSource"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    std::vector<std::string_view> args = {"mongo"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_cli(args, c.input);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Zs3cr3t"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("0ther"), std::string::npos) << r.err;
  }
}

// With the URI in --config FILE, the other arguments keep their places: DB.COLL and FILE of
// `insert` reach the server as the collection and the documents, and the password of the file
// reaches the handshake's user (seen here as the URI the client was made from: a direct,
// unauthenticated scripted server, so only the placement is checked).
TEST(CredentialsCliTest, UriFromConfigLeavesTheOtherArgumentsInPlace) {
  std::mutex m;
  std::vector<std::string> inserts;
  oid::testing::script_server server([&](oid::testing::peer& p, int) {
    if (!p.handshake()) return;
    while (auto msg = p.read()) {
      if (oid::testing::command_name(*msg) == "insert") {
        const auto coll = msg->body.find("insert");
        const auto db = msg->body.find("$db");
        std::size_t documents = 0;  // in a kind-1 section, or in the body
        for (const auto& seq : msg->sequences) documents += seq.documents.size();
        if (const auto array = msg->body.find("documents")) {
          if (const auto docs = array->get_array()) {
            for ([[maybe_unused]] const auto& d : *docs) ++documents;
          }
        }
        std::lock_guard lock(m);
        inserts.push_back(std::string(db->get_string().value_or("?")) + "." +
                          std::string(coll->get_string().value_or("?")) + " " +
                          std::to_string(documents));
        oid::testing::acknowledge_insert(p, *msg, 2);
      } else {
        const auto ok = oid::testing::ok_reply();
        p.reply(*msg, ok.view());
      }
    }
  });
  const std::string config = write_config("uri: '" + server.uri() + "'\n", 0600);
  const std::string docs = oid::testing::scratch_path("docs.json");
  std::ofstream(docs) << "{\"a\": 1}\n{\"a\": 2}\n";
  const auto r = run_cli({"mongo", "insert", "--config", config, "shop.orders", docs});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("inserted 2 documents"), std::string::npos) << r.out;
  std::lock_guard lock(m);
  ASSERT_EQ(inserts.size(), 1u);
  EXPECT_EQ(inserts[0], "shop.orders 2");
}

// ---- the terminal prompt, on a pseudo-terminal ------------------------------------------------

// The built oid on a new pseudo-terminal (its controlling terminal, standard input, output and
// error). The test keeps the terminal's slave side open, so that its settings can be read after
// the command has ended.
class pty_run {
 public:
  explicit pty_run(std::vector<std::string> args) {
    if (::openpty(&master_, &slave_, nullptr, nullptr, nullptr) != 0) {
      ADD_FAILURE() << "openpty: " << std::strerror(errno);
      return;
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(OID_BINARY));
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      ::setsid();
      ::ioctl(slave_, TIOCSCTTY, 0);
      ::dup2(slave_, 0);
      ::dup2(slave_, 1);
      ::dup2(slave_, 2);
      ::close(master_);
      ::execv(OID_BINARY, argv.data());
      ::_exit(127);
    }
  }
  ~pty_run() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
    if (slave_ >= 0) ::close(slave_);
  }
  // Reads what the command wrote until it contains `want` (true) or 10 s passed (false).
  bool read_until(std::string_view want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (output_.find(want) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(master_, buf, sizeof buf);
      if (n <= 0) return false;
      output_.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  // Reads what the command wrote until nothing more comes for 50 ms.
  void drain() {
    pollfd p{master_, POLLIN, 0};
    char buf[256];
    while (::poll(&p, 1, 50) > 0) {
      const ssize_t n = ::read(master_, buf, sizeof buf);
      if (n <= 0) return;
      output_.append(buf, static_cast<std::size_t>(n));
    }
  }
  void type(std::string_view keys) {
    ASSERT_EQ(::write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }
  bool echo_on() const {
    termios t{};
    EXPECT_EQ(::tcgetattr(slave_, &t), 0);
    return (t.c_lflag & ECHO) != 0;
  }
  // The command's wait status, once it ended (within 20 s; else it is killed and -1 returned).
  int wait() {
    for (int i = 0; i < 2000; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        waited_ = true;
        drain();
        return status;
      }
      drain();  // keeps the terminal's buffer from filling
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

 private:
  int master_ = -1, slave_ = -1;
  pid_t pid_ = -1;
  bool waited_ = false;
  std::string output_;
};

// The prompt turns echo off; Ctrl-C (SIGINT from the terminal) or SIGTERM while it waits puts
// the terminal back as it was, and the command dies of the signal.
TEST(PasswordPromptTest, SignalWhileWaitingRestoresEchoAndDies) {
  struct test_case {
    const char* name;
    int signal;
    bool from_keyboard;
  };
  for (const auto& c : {test_case{"Ctrl-C", SIGINT, true}, test_case{"SIGTERM", SIGTERM, false},
                        test_case{"SIGHUP", SIGHUP, false}}) {
    SCOPED_TRACE(c.name);
    pty_run run({"mongo", "ping", "mongodb://ann@127.0.0.1:1/"});
    ASSERT_TRUE(run.read_until("Password for ann: ")) << run.output();
    // The prompt is up; echo goes off right after it is written.
    for (int i = 0; i < 200 && run.echo_on(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(run.echo_on());
    if (c.from_keyboard) {
      run.type("\x03");
    } else {
      ::kill(run.pid(), c.signal);
    }
    const int status = run.wait();
    ASSERT_TRUE(WIFSIGNALED(status)) << status << " " << run.output();
    EXPECT_EQ(WTERMSIG(status), c.signal);
    EXPECT_TRUE(run.echo_on());
  }
}

// A password typed at the prompt is not echoed, and echo is back afterwards.
TEST(PasswordPromptTest, TypedPasswordIsNotEchoed) {
  pty_run run({"mongo", "ping", "mongodb://ann@127.0.0.1:1/?serverSelectionTimeoutMS=300"});
  ASSERT_TRUE(run.read_until("Password for ann: ")) << run.output();
  for (int i = 0; i < 200 && run.echo_on(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  run.type("Zs3cr3t\n");
  const int status = run.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 1);  // nothing listens on port 1
  EXPECT_EQ(run.output().find("Zs3cr3t"), std::string::npos) << run.output();
  EXPECT_TRUE(run.echo_on());
}

// ---- against FerretDB with authentication -------------------------------------------------------

// MONGODB_AUTH_URI taken apart: the URI without its password, and the password (decoded).
struct auth_uri {
  std::string without_password, password;
};

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

auth_uri split(const std::string& uri) {
  const auto colon = uri.find(':', std::string_view("mongodb://").size());
  const auto at = uri.find('@');
  EXPECT_NE(colon, std::string::npos);
  EXPECT_NE(at, std::string::npos);
  return {uri.substr(0, colon) + uri.substr(at),
          percent_decoded(uri.substr(colon + 1, at - colon - 1))};
}

TEST(CredentialsCliTest, PasswordOutsideTheCommandLineAgainstFerretDb) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_AUTH_URI", uri);
  const auto [bare, password] = split(uri);
  ASSERT_FALSE(password.empty());
  const std::string oid = OID_BINARY;
  std::vector<oid::testing::cli_outcome> runs;
  // The password in a file of mode 0600, the URI on the command line.
  const std::string config = write_config("password: '" + password + "'\n", 0600);
  runs.push_back(run_shell(oid + " mongo ping '" + bare + "' --config " + config));
  EXPECT_EQ(runs.back().status, 0) << runs.back().err;
  EXPECT_NE(runs.back().out.find("server version"), std::string::npos);
  // Both in the file (the URI without a password, and the password apart).
  const std::string both =
      write_config("# for oid\nuri: " + bare + "\npassword: \"" + password + "\"\n", 0600);
  runs.push_back(run_shell(oid + " mongo count --config " + both + " oid_secrets.c"));
  EXPECT_EQ(runs.back().status, 0) << runs.back().err;
  EXPECT_NE(runs.back().out.find(" documents"), std::string::npos);
  // The same file readable by others: refused before anything is sent.
  ASSERT_EQ(::chmod(both.c_str(), 0644), 0);
  runs.push_back(run_shell(oid + " mongo ping --config " + both));
  EXPECT_EQ(runs.back().status, 2);
  EXPECT_NE(runs.back().err.find("permissions 0644 are too open"), std::string::npos)
      << runs.back().err;
  EXPECT_NE(runs.back().err.find("chmod 600 " + both), std::string::npos) << runs.back().err;
  // On standard input (from a file: a pipe from echo would put it on a command line again).
  const std::string line = write_config(password + "\n", 0600);
  runs.push_back(run_shell(oid + " mongo ping '" + bare + "' --password-stdin <" + line));
  EXPECT_EQ(runs.back().status, 0) << runs.back().err;
  EXPECT_NE(runs.back().out.find("server version"), std::string::npos);
  // A wrong password fails cleanly: refused by the server, exit 1, one line.
  const std::string wrong = write_config("password: Wr0ng-" + password.substr(0, 4) + "\n", 0600);
  runs.push_back(run_shell(oid + " mongo ping '" + bare + "' --config " + wrong));
  EXPECT_EQ(runs.back().status, 1);
  EXPECT_NE(runs.back().err.find("AuthenticationFailed"), std::string::npos) << runs.back().err;
  EXPECT_EQ(oid::testing::lines(runs.back().err).size(), 1u) << runs.back().err;
  EXPECT_EQ(runs.back().err.find("Wr0ng-"), std::string::npos);
  for (const auto& r : runs) {
    EXPECT_EQ(r.out.find(password), std::string::npos);
    EXPECT_EQ(r.err.find(password), std::string::npos);
  }
}

// ---- text from a hostile server
// ------------------------------------------------------------------

// What a hostile server puts in its strings: a new window title, a cleared screen, a carriage
// return to write over the line, and C1 controls (CSI and NEL) as UTF-8.
const std::string hostile =
    "n\x1b]0;pwned\x07-\x1b[2J-\rX\xc2\x9b"
    "2J\xc2\x85"
    "y";

oid::bson::document hostile_hello(const std::string& address) {
  oid::bson::builder b;
  b.append_bool("isWritablePrimary", true).append_string("setName", hostile);
  b.open_array("hosts").append_string("0", address).close();
  b.append_string("me", address);
  b.append_int32("maxBsonObjectSize", 16 * 1024 * 1024).append_int32("maxWireVersion", 17);
  b.append_int32("maxMessageSizeBytes", 48000000).append_int32("maxWriteBatchSize", 100000);
  b.append_double("ok", 1.0);
  return std::move(b).extract();
}

// A server whose every string is hostile: its version, set name, error messages, and the names
// of its databases and collections.
class hostile_server {
 public:
  hostile_server() : server_([this](oid::testing::peer& p, int) { serve(p); }) {}
  std::string uri() const { return server_.uri(); }

 private:
  void serve(oid::testing::peer& p) {
    while (auto m = p.read()) {
      const std::string name = oid::testing::command_name(*m);
      oid::bson::builder b;
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        const auto hello = hostile_hello(server_.address());
        p.reply(*m, hello.view());
        continue;
      }
      if (name == "buildInfo" || name == "buildinfo") {
        b.append_string("version", hostile).append_string("ferretdbVersion", hostile);
        b.append_double("ok", 1.0);
      } else if (name == "listDatabases") {
        b.open_array("databases").open_document("0").append_string("name", hostile).close().close();
        b.append_double("ok", 1.0);
      } else if (name == "listCollections" || name == "find" || name == "listIndexes") {
        b.open_document("cursor").append_int64("id", 0).append_string("ns", "d.c");
        b.open_array("firstBatch");
        if (name == "listCollections") {
          b.open_document("0").append_string("name", hostile).append_string("type", "collection");
          b.open_document("options").close().close();
        } else if (name == "find") {
          b.open_document("0").append_int32("_id", 1).append_string("s", hostile).close();
        }
        b.close().close();
        b.append_double("ok", 1.0);
      } else if (name == "ping" || name == "endSessions") {
        b.append_double("ok", 1.0);
      } else {  // count (aggregate) and the rest: refused, with a hostile message
        b.append_double("ok", 0.0).append_string("errmsg", hostile).append_int32("code", 2);
        b.append_string("codeName", hostile);
      }
      p.reply(*m, b.view());
    }
  }
  oid::testing::script_server server_;
};

// What oid prints of a server's strings carries no control character to the terminal: the error
// message, the version, the set name, the names of databases and collections, a command's reply.
TEST(HostileServerCliTest, ServerTextCannotSteerTheTerminal) {
  hostile_server server;
  const std::string escaped = printable(hostile);
  ASSERT_EQ(escaped, "n\\x1b]0;pwned\\x07-\\x1b[2J-\\rX\\u009b2J\\u0085y");
  const auto count = run_cli({"mongo", "count", server.uri(), "d.c"});
  EXPECT_EQ(count.status, 1);
  EXPECT_NE(count.err.find(escaped), std::string::npos) << count.err;
  const auto ping = run_cli({"mongo", "ping", server.uri()});
  EXPECT_EQ(ping.status, 0) << ping.err;
  EXPECT_NE(ping.out.find("server version " + escaped + " (FerretDB " + escaped + ")"),
            std::string::npos)
      << ping.out;
  const auto topology = run_cli({"mongo", "topology", server.uri()});
  EXPECT_NE(topology.out.find("set " + escaped), std::string::npos) << topology.out;
  const std::string dir = oid::testing::scratch_path("dump");
  // Names like these may also be refused as file names; either way they print safely.
  const auto dump = run_cli({"mongo", "dump", server.uri(), "--out", dir});
  EXPECT_NE((dump.out + dump.err).find("pwned"), std::string::npos) << dump.out << dump.err;
  const auto databases = run_cli({"mongo", "databases", server.uri()});
  EXPECT_EQ(databases.status, 0) << databases.err;
  EXPECT_NE(databases.out.find(escaped), std::string::npos) << databases.out;
  // listCollections names a hostile collection; its collStats is refused: "-" for its numbers.
  const auto collections = run_cli({"mongo", "collections", server.uri(), "d"});
  EXPECT_EQ(collections.status, 0) << collections.err;
  EXPECT_NE(collections.out.find(escaped + "  collection"), std::string::npos) << collections.out;
  // Any command's reply is printed as Extended JSON, whose escapes keep C0 controls out; on a
  // terminal C1 controls are escaped too (to a pipe they are JSON's characters).
  const std::string uri = server.uri();
  const std::vector<std::string_view> run_args{"mongo", "run", uri, "admin", R"({"buildInfo": 1})"};
  std::istringstream no_input;
  std::ostringstream run_out, run_err;
  const oid::testing::cli_outcome run{oid::cli::run(run_args, no_input, run_out, run_err, true),
                                      run_out.str(), run_err.str()};
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find(R"("version":"n\u001b]0;pwned\u0007-\u001b[2J-\rX\u009b2J\u0085y")"),
            std::string::npos)
      << run.out;
  const auto piped = run_cli(run_args);
  EXPECT_NE(piped.out.find("-\\rX\xc2\x9b"
                           "2J"),
            std::string::npos)
      << piped.out;
  const auto refused = run_cli({"mongo", "run", server.uri(), "admin", R"({"dbStats": 1})"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find(escaped), std::string::npos) << refused.err;
  for (const auto* r :
       {&count, &ping, &topology, &dump, &databases, &collections, &run, &refused}) {
    EXPECT_TRUE(terminal_safe(r->out)) << r->out;
    EXPECT_TRUE(terminal_safe(r->err)) << r->err;
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// find and export print Extended JSON; on a terminal what JSON leaves raw (C1 controls) is
// escaped too, and CSV is made printable. script(1) gives the built binary a pseudo-terminal.
TEST(HostileServerCliTest, FoundDocumentsReachATerminalEscaped) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  hostile_server server;
  const std::string oid = std::string("'") + OID_BINARY + "' mongo ";
  const std::string at = " '" + server.uri() + "' d.c";
  const std::string json = R"("s":"n\u001b]0;pwned\u0007-\u001b[2J-\rX\u009b2J\u0085y")";
  const std::string csv = printable(hostile);
  for (const auto& [command, shown] :
       {std::pair{oid + "find" + at, json}, std::pair{oid + "export" + at, json},
        std::pair{oid + "export" + at + " --type csv --fields s", csv}}) {
    SCOPED_TRACE(command);
    const auto tty = run_shell("script -qec \"" + command + "\" /dev/null");
    EXPECT_EQ(tty.status, 0) << tty.out;
    EXPECT_NE(tty.out.find(shown), std::string::npos) << tty.out;
    EXPECT_EQ(tty.out.find("\x1b"), std::string::npos) << tty.out;
    EXPECT_EQ(tty.out.find("\xc2\x9b"), std::string::npos) << tty.out;
    // To a pipe: the writer's bytes, C1 controls as they are.
    const auto piped = run_shell(command);
    EXPECT_EQ(piped.status, 0) << piped.err;
    EXPECT_NE(piped.out.find("X\xc2\x9b"
                             "2J"),
              std::string::npos)
        << piped.out;
  }
}

}  // namespace
