#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>
#include <oid/mongo/uri.hpp>
#include <utility>

#include "detail/ascii.hpp"
#include "detail/hex.hpp"
#include "mongo/config/settings.hpp"
#include "mongo/config/srv_records.hpp"

namespace oid::mongo {
namespace {

constexpr std::string_view scheme = "mongodb://";
constexpr std::string_view srv_scheme = "mongodb+srv://";

using oid::detail::hex_value;
using oid::detail::is_ipv4;
using oid::detail::lower_ascii;

bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// Holds the parse state; a class (a friend of uri) so it can fill uri's private fields.
class uri_parser {
 public:
  uri_parser(std::string_view text, uri_mode mode) : text_(text), mode_(mode) {}

  // The names of the options table's rows, in its order.
  static std::vector<std::string_view> option_names();

  outcome<uri> run() {
    const bool srv = text_.starts_with(srv_scheme);
    if (!srv && !text_.starts_with(scheme)) {
      return failure(errc::invalid_uri,
                     "a connection string starts with mongodb:// or mongodb+srv://");
    }
    std::size_t pos = srv ? srv_scheme.size() : scheme.size();
    // The user information ends at the last '@' before the options. A '/' before that '@' is a
    // password (or user name) with an unescaped '/' (the specification's invalid-uris.json), not
    // the end of the hosts: reading it as hosts and database would put the password in a host's
    // port, a database name and their error messages.
    const std::size_t query = text_.find('?', pos);
    const std::size_t at = text_.substr(0, query).rfind('@');
    std::size_t hosts_begin = pos;
    if (at != std::string_view::npos && at >= pos) {
      if (const std::size_t slash = text_.find('/', pos); slash < at) {
        return failure(errc::invalid_uri,
                       "the user name and password must be percent-encoded ('/' is %2F), and "
                       "a database name cannot hold '@'",
                       slash);
      }
      if (!parse_userinfo(pos, at)) return std::move(error_);
      hosts_begin = at + 1;
    }
    // Messages quote the text they refuse unless an '@' follows the user information: then the
    // text may be part of a password the user did not percent-encode (a '?' in it).
    may_quote_ = text_.find('@', hosts_begin) == std::string_view::npos;
    // The host information ends at the first '/' (or '?': the slash before options is optional).
    const std::size_t host_end = std::min(text_.find('/', hosts_begin), query);
    const std::size_t hosts_stop = host_end == std::string_view::npos ? text_.size() : host_end;
    if (!parse_hosts(hosts_begin, hosts_stop)) return std::move(error_);
    pos = hosts_stop;
    if (pos < text_.size() && text_[pos] == '/') {
      ++pos;
      const std::size_t q = text_.find('?', pos);
      const std::size_t db_end = q == std::string_view::npos ? text_.size() : q;
      if (!parse_database(pos, db_end)) return std::move(error_);
      pos = db_end;
    }
    if (pos < text_.size()) {  // text_[pos] == '?'
      if (!parse_options(pos + 1)) return std::move(error_);
    }
    if (!check_combinations() || !check_srv(srv)) return std::move(error_);
    if (password_begin_ != 0) redact_.emplace_back(password_begin_, password_end_);
    // Built from the pieces between the secrets, never a copy of the whole text edited in place:
    // a replacement that grows the string would leave the secrets in the freed buffer.
    std::sort(redact_.begin(), redact_.end());
    std::size_t from = 0;
    for (const auto& r : redact_) {
      u_.redacted_.append(text_.substr(from, r.first - from)).append(secret::placeholder);
      from = r.second;
    }
    u_.redacted_.append(text_.substr(from));
    return std::move(u_);
  }

 private:
  // `'text'` for a message, or nothing when the text may hold a password (may_quote_).
  std::string quoted(std::string_view text) const {
    return may_quote_ ? "'" + std::string(text) + "'" : std::string("(not shown)");
  }

  // Records the failure for run() to return; false, so that a step can `return fail_bool(...)`.
  bool fail_bool(errc code, std::size_t offset, std::string message) {
    error_ = failure(code, std::move(message), offset);
    return false;
  }

  // Percent-decodes text_[begin, end). A '%' not followed by two hex digits is an error.
  std::optional<std::string> decode(std::size_t begin, std::size_t end, std::string_view what) {
    std::string out;
    out.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      if (text_[i] != '%') {
        out.push_back(text_[i]);
        continue;
      }
      const int byte = oid::detail::percent_escape(text_.substr(0, end), i);
      if (byte < 0) {
        fail_bool(errc::invalid_uri, i,
                  std::string(what) + ": '%' must start a percent-encoded byte such as %40");
        return std::nullopt;
      }
      out.push_back(static_cast<char>(byte));
      i += 2;
    }
    return out;
  }

  bool parse_userinfo(std::size_t begin, std::size_t end) {
    const std::string_view info = text_.substr(begin, end - begin);
    if (const auto extra_at = info.find('@'); extra_at != std::string_view::npos) {
      return fail_bool(errc::invalid_uri, begin + extra_at,
                       "the user name and password must be percent-encoded ('@' is %40)");
    }
    const std::size_t colon = info.find(':');
    if (colon != std::string_view::npos) {
      if (const auto second = info.find(':', colon + 1); second != std::string_view::npos) {
        return fail_bool(errc::invalid_uri, begin + second,
                         "the user name and password must be percent-encoded (':' is %3A)");
      }
    }
    const std::size_t user_end = colon == std::string_view::npos ? end : begin + colon;
    if (user_end == begin) return fail_bool(errc::invalid_uri, begin, "the user name is empty");
    auto user = decode(begin, user_end, "user name");
    if (!user) return false;
    u_.s_.username = std::move(*user);
    if (colon != std::string_view::npos) {
      auto password = decode(user_end + 1, end, "password");
      if (!password) return false;
      u_.s_.password = secret(*password);
      // decode() reserved the full size, so this is the only buffer that held the password.
      OPENSSL_cleanse(password->data(), password->size());
      password_begin_ = user_end + 1;
      password_end_ = end;
    }
    return true;
  }

  bool parse_hosts(std::size_t begin, std::size_t end) {
    if (begin == end) return fail_bool(errc::invalid_uri, begin, "no host given");
    std::size_t pos = begin;
    while (true) {
      const std::size_t comma = text_.find(',', pos);
      const std::size_t stop = comma == std::string_view::npos || comma > end ? end : comma;
      if (!parse_host(pos, stop)) return false;
      if (stop == end) return true;
      pos = stop + 1;
    }
  }

  bool parse_port(std::size_t begin, std::size_t end, host& h) {
    const std::string_view digits = text_.substr(begin, end - begin);
    const auto port = oid::detail::port_number(digits);
    if (!port) {
      // The text is not quoted: without an '@', "user:password" reads as a host and a port.
      return fail_bool(errc::invalid_uri, begin,
                       all_digits(digits)
                           ? "the port must be a number from 1 to 65535"
                           : "the port must be a number from 1 to 65535 (a user name and password "
                             "go before an '@': mongodb://user:password@host)");
    }
    h.port = port;
    return true;
  }

  bool parse_host(std::size_t begin, std::size_t end) {
    if (begin == end) return fail_bool(errc::invalid_uri, begin, "empty host");
    const std::string_view s = text_.substr(begin, end - begin);
    host h;
    if (s.front() == '[') {
      const std::size_t close = s.find(']');
      if (close == std::string_view::npos) {
        return fail_bool(errc::invalid_uri, begin, "an IP literal needs its closing ']'");
      }
      const std::string_view literal = s.substr(1, close - 1);
      const bool chars_ok =
          !literal.empty() && std::all_of(literal.begin(), literal.end(), [](char c) {
            return hex_value(c) >= 0 || c == ':' || c == '.';
          });
      if (!chars_ok) {
        return fail_bool(errc::invalid_uri, begin + 1,
                         "an IP literal holds an IPv6 address: hex digits, ':' and '.'");
      }
      h.type = host::kind::ip_literal;
      h.name = std::string(literal);
      if (close + 1 < s.size()) {
        if (s[close + 1] != ':') {
          return fail_bool(errc::invalid_uri, begin + close + 1,
                           "only ':port' may follow an IP literal");
        }
        if (!parse_port(begin + close + 2, end, h)) return false;
      }
      u_.s_.hosts.push_back(std::move(h));
      return true;
    }
    auto decoded = decode(begin, end, "host");
    if (!decoded) return false;
    if (decoded->find('/') != std::string::npos) {
      if (!decoded->ends_with(".sock")) {
        return fail_bool(errc::invalid_uri, begin,
                         "a Unix domain socket path must end in .sock (" + quoted(*decoded) + ")");
      }
      h.type = host::kind::unix_socket;
      h.name = std::move(*decoded);
      u_.s_.hosts.push_back(std::move(h));
      return true;
    }
    const std::size_t colon = s.find(':');
    if (colon != std::string_view::npos && s.find(':', colon + 1) != std::string_view::npos) {
      return fail_bool(errc::invalid_uri, begin + s.find(':', colon + 1),
                       "a host has at most one ':' before its port; write IPv6 addresses in "
                       "brackets ([::1]:27017)");
    }
    const std::size_t name_end = colon == std::string_view::npos ? end : begin + colon;
    if (name_end == begin) return fail_bool(errc::invalid_uri, begin, "empty host name");
    auto name = decode(begin, name_end, "host");
    if (!name) return false;
    h.type = is_ipv4(*name) ? host::kind::ipv4 : host::kind::hostname;
    h.name = std::move(*name);
    if (colon != std::string_view::npos && !parse_port(name_end + 1, end, h)) return false;
    u_.s_.hosts.push_back(std::move(h));
    return true;
  }

  bool parse_database(std::size_t begin, std::size_t end) {
    auto db = decode(begin, end, "database name");
    if (!db) return false;
    if (db->empty()) return true;
    if (const auto bad = db->find_first_of("/\\ \"$"); bad != std::string::npos) {
      return fail_bool(errc::invalid_uri, begin,
                       "a database name may not contain '" + std::string(1, (*db)[bad]) + "'");
    }
    u_.s_.database = std::move(*db);
    return true;
  }

  bool parse_options(std::size_t begin) {
    std::size_t pos = begin;
    while (pos <= text_.size()) {
      std::size_t amp = text_.find('&', pos);
      if (amp == std::string_view::npos) amp = text_.size();
      if (amp > pos && !parse_option(pos, amp)) return false;
      pos = amp + 1;
    }
    return true;
  }

  // An invalid value: an error in strict mode, a warning (the option is ignored) in lenient mode.
  // The value is not quoted: a mistyped password option would put a password in the message.
  bool invalid_value(std::size_t offset, std::string_view key, std::string_view expected) {
    std::string message =
        "invalid value for option " + std::string(key) + ": " + std::string(expected);
    if (mode_ == uri_mode::strict) return fail_bool(errc::invalid_uri, offset, std::move(message));
    u_.warnings_.push_back(std::move(message) + "; ignored");
    return true;
  }

  // One option as parse_option hands it to its row's handler.
  struct option_text {
    const std::string& written;  // the name as written (for messages)
    std::string& value;          // percent-decoded; a handler may wipe it
    std::size_t offset;          // of the value in text_
    std::size_t end;             // of the value in text_
  };
  using option_handler = bool (uri_parser::*)(const option_text&);
  // A row of the options table (after this class): the name in lower case, and the handler that
  // checks the value and stores it in u_. A `repeatable` option's handler sees every value, empty
  // ones included; the others draw a warning for an empty or repeated value before it runs.
  struct option {
    std::string_view name;
    option_handler parse;
    bool repeatable = false;
  };
  static const option options[];
  static const option* find_option(std::string_view key) noexcept;

  bool parse_option(std::size_t begin, std::size_t end) {
    const std::string_view pair = text_.substr(begin, end - begin);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      // Not quoted: "proxyPasswordSECRET" is a password with its '=' left out.
      return fail_bool(errc::invalid_uri, begin, "an option has no '=' and no value");
    }
    auto raw_key = decode(begin, begin + eq, "option name");
    if (!raw_key) return false;
    auto value = decode(begin + eq + 1, end, "option value");
    if (!value) return false;
    const std::string& key_written = *raw_key;
    const std::string key = lower_ascii(key_written);
    const std::size_t value_offset = begin + eq + 1;
    const option* row = find_option(key);
    if (!row) {
      u_.warnings_.push_back("unsupported option " + quoted(key_written) + " ignored");
      return true;
    }
    if (value->empty() && key == "authsource") {
      return fail_bool(errc::invalid_uri, value_offset, "option authSource is empty");
    }
    const option_text o{key_written, *value, value_offset, end};
    if (row->repeatable) return (this->*row->parse)(o);
    if (value->empty()) {
      u_.warnings_.push_back("option " + key_written + " has an empty value; ignored");
      return true;
    }
    if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) {
      u_.warnings_.push_back("option " + key_written + " is repeated; the last value is used");
    } else {
      seen_.push_back(key);
    }
    return (this->*row->parse)(o);
  }

  // The handlers of the options table, generic ones first.

  template <std::optional<bool> client_settings::*field>
  bool bool_option(const option_text& o) {
    return parse_bool(u_.s_.*field, o.written, o.value, o.offset);
  }

  template <std::optional<std::string> client_settings::*field>
  bool string_option(const option_text& o) {
    u_.s_.*field = o.value;
    return true;
  }

  template <std::optional<std::chrono::milliseconds> client_settings::*field>
  bool ms_option(const option_text& o) {
    std::int64_t ms = 0;
    const auto [ptr, ec] = std::from_chars(o.value.data(), o.value.data() + o.value.size(), ms);
    if (ec != std::errc{} || ptr != o.value.data() + o.value.size() || ms < 0 ||
        ms > std::int64_t{INT32_MAX}) {
      return invalid_value(o.offset, o.written,
                           "expected milliseconds, a whole number from 0 to 2147483647");
    }
    u_.s_.*field = std::chrono::milliseconds(ms);
    return true;
  }

  // maxPoolSize, minPoolSize, maxConnecting: a count from 0 (maxConnecting: from 1).
  template <std::optional<std::uint32_t> client_settings::*field>
  bool count_option(const option_text& o) {
    std::uint32_t n = 0;
    const auto [ptr, ec] = std::from_chars(o.value.data(), o.value.data() + o.value.size(), n);
    const bool connecting = field == &client_settings::max_connecting;
    if (ec != std::errc{} || ptr != o.value.data() + o.value.size() || !all_digits(o.value) ||
        n > std::uint32_t{INT32_MAX} || (connecting && n == 0)) {
      return invalid_value(o.offset, o.written,
                           field == &client_settings::max_pool_size
                               ? "expected a whole number (0 for no limit)"
                           : connecting ? "expected a whole number from 1"
                                        : "expected a whole number");
    }
    u_.s_.*field = n;
    return true;
  }

  // tls and ssl are kept apart until check_combinations compares them.
  bool tls_option(const option_text& o) { return parse_bool(tls_, o.written, o.value, o.offset); }
  bool ssl_option(const option_text& o) { return parse_bool(ssl_, o.written, o.value, o.offset); }

  bool app_name_option(const option_text& o) {
    if (o.value.size() > 128) return invalid_value(o.offset, o.written, "at most 128 bytes");
    u_.s_.app_name = o.value;
    return true;
  }

  bool w_option(const option_text& o) {
    const std::string& value = o.value;
    std::int32_t n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ptr == value.data() + value.size() && ec == std::errc{}) {
      if (n < 0) return invalid_value(o.offset, o.written, "w must be >= 0");
      u_.s_.w_number = n;
      u_.s_.w_tag.reset();
    } else if (value[0] == '-' || all_digits(value)) {
      return invalid_value(o.offset, o.written, "w is out of range");
    } else {
      u_.s_.w_tag = value;
      u_.s_.w_number.reset();
    }
    return true;
  }

  bool auth_mechanism_option(const option_text& o) {
    if (auto p = settings::check_mechanism(o.value)) {
      if (p->code != errc::invalid_uri) return fail_bool(p->code, o.offset, p->message);
      return invalid_value(o.offset, o.written, p->message);
    }
    u_.s_.auth_mechanism = o.value;
    return true;
  }

  bool auth_mechanism_properties_option(const option_text& o) {
    std::vector<std::pair<std::string, std::string>> properties;
    std::string_view rest = o.value;
    while (true) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      const auto colon = item.find(':');
      if (colon == std::string_view::npos || colon == 0) {
        return invalid_value(o.offset, o.written,
                             "expected a comma-separated list of KEY:value pairs");
      }
      properties.emplace_back(item.substr(0, colon), item.substr(colon + 1));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    u_.s_.auth_mechanism_properties = std::move(properties);
    return true;
  }

  bool compressors_option(const option_text& o) {
    std::vector<std::string> list;
    std::string_view rest = o.value;
    while (true) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      if (item.empty()) {
        return invalid_value(o.offset, o.written,
                             "expected a comma-separated list of compressor names");
      }
      list.emplace_back(item);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    u_.s_.compressors = std::move(list);
    return true;
  }

  // The password's bytes go into a secret, and the range of text_ that holds them is left out of
  // to_string().
  bool tls_password_option(const option_text& o) {
    u_.s_.tls_certificate_key_file_password = secret(o.value);
    OPENSSL_cleanse(o.value.data(), o.value.size());
    redact_.emplace_back(o.offset, o.end);
    return true;
  }

  // A true/false option value into `out`; an invalid value as invalid_value says.
  bool parse_bool(std::optional<bool>& out, std::string_view key_written, std::string_view value,
                  std::size_t offset) {
    if (value == "true" || value == "false") {
      out = value == "true";
      return true;
    }
    return invalid_value(offset, key_written, "expected true or false");
  }

  bool tag_set_option(const option_text& o) { return parse_tag_set(o.offset, o.written, o.value); }

  // readPreferenceTags (repeatable): one tag set, `name:value` pairs separated by commas.
  bool parse_tag_set(std::size_t offset, const std::string& key_written, std::string_view value) {
    tag_set set;
    std::string_view rest = value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      const auto colon = item.find(':');
      if (colon == std::string_view::npos || colon == 0) {
        return invalid_value(offset, key_written,
                             "expected a comma-separated list of name:value tags");
      }
      set.emplace_back(item.substr(0, colon), item.substr(colon + 1));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (!u_.s_.read_preference_tags) u_.s_.read_preference_tags.emplace();
    u_.s_.read_preference_tags->push_back(std::move(set));
    return true;
  }

  bool read_preference_option(const option_text& o) {
    auto mode = read_mode_from_string(o.value);
    if (!mode) {
      return invalid_value(o.offset, o.written,
                           "expected primary, primaryPreferred, secondary, secondaryPreferred "
                           "or nearest");
    }
    u_.s_.read_preference_mode = *mode;
    return true;
  }

  // A whole number from `min` to INT32_MAX.
  static bool whole_number(const std::string& value, std::int64_t min, std::int64_t& out) {
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    return ec == std::errc{} && ptr == value.data() + value.size() && out >= min &&
           out <= std::int64_t{INT32_MAX};
  }

  bool max_staleness_option(const option_text& o) {
    std::int64_t n = 0;
    if (!whole_number(o.value, -1, n) || n == 0) {
      return invalid_value(o.offset, o.written,
                           "expected -1 (no limit) or a positive number of seconds");
    }
    if (n > 0) u_.s_.max_staleness = std::chrono::seconds(n);
    if (n < 0) u_.s_.max_staleness.reset();
    return true;
  }

  bool heartbeat_frequency_option(const option_text& o) {
    std::int64_t n = 0;
    if (!whole_number(o.value, 500, n)) {
      return invalid_value(o.offset, o.written,
                           "expected milliseconds, a whole number from 500 (the least "
                           "minHeartbeatFrequencyMS allows) to 2147483647");
    }
    u_.s_.heartbeat_frequency = std::chrono::milliseconds(n);
    return true;
  }

  // mongodb+srv:// (MongoDB's initial DNS seedlist discovery): the options and the checks made
  // before any DNS lookup; resolve_srv (srv.cpp) does the lookups.
  bool srv_max_hosts_option(const option_text& o) {
    const std::string& value = o.value;
    std::uint32_t n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc{} || ptr != value.data() + value.size() || !all_digits(value) ||
        n > std::uint32_t{INT32_MAX}) {
      return invalid_value(o.offset, o.written, "expected a whole number of hosts (0 for all)");
    }
    u_.s_.srv_max_hosts = n;
    return true;
  }

  // RFC 6335's service names (letters, digits, inner single hyphens, at least one letter), longer
  // than its 15 characters as long as `_name` is one DNS label (63 bytes).
  bool srv_service_name_option(const option_text& o) {
    const std::string& value = o.value;
    if (value.empty() || !settings::is_service_name(value)) {
      return invalid_value(o.offset, o.written,
                           "expected a service name: letters, digits and inner hyphens, at most "
                           "62 characters");
    }
    u_.s_.srv_service_name = value;
    return true;
  }

  bool check_srv(bool srv) {
    const std::size_t at = srv ? srv_scheme.size() : scheme.size();
    if (srv) {
      // The connection string's form; settings::check_srv does the options' rules.
      if (u_.s_.hosts.size() != 1) {
        return fail_bool(errc::invalid_uri, at,
                         "a mongodb+srv:// connection string names exactly one host, whose SRV "
                         "records list the others");
      }
      const host& h = u_.s_.hosts.front();
      if (h.type == host::kind::ip_literal || h.type == host::kind::unix_socket) {
        return fail_bool(errc::invalid_uri, at, "mongodb+srv:// needs a host name to look up");
      }
      if (h.port) {
        return fail_bool(errc::invalid_uri, at,
                         "a mongodb+srv:// host has no port: its SRV records give the ports");
      }
      u_.s_.srv_name = h.name;
      u_.srv_mode_ = mode_;
    }
    if (auto p = settings::check_srv(u_.s_)) return fail_bool(p->code, at, p->message);
    return true;
  }

 public:
  // mongodb+srv:// `u` once its DNS records are read (srv.cpp): the TXT record's options (`txt`,
  // "" when there is none) where the connection string did not set them, `hosts` from the SRV
  // records, and the checks of a connection string that lists them all. The TXT record is parsed
  // by the same table as the connection string; it may set only authSource, replicaSet and
  // loadBalanced.
  static outcome<uri> with_srv_records(const uri& u, std::string_view txt,
                                       std::vector<host> hosts) {
    uri_parser p(txt, u.srv_mode_);
    p.u_ = u;
    const std::string& name = *u.s_.srv_name;
    if (!p.parse_txt_options(name)) {
      failure f = std::move(p.error_);
      f.message += " (in the TXT record of " + name + ")";
      f.offset = 0;
      return f;
    }
    if (const char* conflict = settings::srv_max_hosts_conflict(p.u_.s_)) {
      return failure(errc::invalid_uri,
                     "option srvMaxHosts=" + std::to_string(*u.s_.srv_max_hosts) +
                         " cannot be used with " + conflict + " (from the TXT record of " + name +
                         ")");
    }
    const std::size_t listed = hosts.size();
    p.u_.s_.hosts = std::move(hosts);
    if (!p.check_deployment()) {
      failure f = std::move(p.error_);
      f.message += " (the SRV records of " + name + " list " + std::to_string(listed) +
                   (listed == 1 ? " host)" : " hosts)");
      f.offset = 0;
      return f;
    }
    p.u_.srv_resolved_ = true;
    return std::move(p.u_);
  }

 private:
  // The TXT record's `key=value` pairs (text_) into u_, which holds the connection string's
  // options: those win. Anything but authSource, replicaSet and loadBalanced is refused.
  bool parse_txt_options(const std::string& name) {
    std::size_t pos = 0;
    while (pos < text_.size()) {
      std::size_t amp = text_.find('&', pos);
      if (amp == std::string_view::npos) amp = text_.size();
      if (amp > pos) {
        const std::string_view pair = text_.substr(pos, amp - pos);
        const std::size_t eq = pair.find('=');
        auto key = decode(pos, eq == std::string_view::npos ? amp : pos + eq, "option name");
        if (!key) return false;
        const std::string lower = lower_ascii(*key);
        if (eq == std::string_view::npos) {
          return fail_bool(
              errc::invalid_uri, pos,
              "option " + *key + " has no '=' and no value in the TXT record of " + name);
        }
        if (lower != "authsource" && lower != "replicaset" && lower != "loadbalanced") {
          return fail_bool(errc::invalid_uri, pos,
                           "the TXT record of " + name + " sets option '" + *key +
                               "'; only authSource, replicaSet and loadBalanced may be set there");
        }
        const bool set_by_string = lower == "authsource"   ? u_.s_.auth_source.has_value()
                                   : lower == "replicaset" ? u_.s_.replica_set.has_value()
                                                           : u_.s_.load_balanced.has_value();
        if (!set_by_string && !parse_option(pos, amp)) return false;
      }
      pos = amp + 1;
    }
    return true;
  }

  // The checks of settings::check on the parsed options, a failure pointing at the password when
  // it is about the password, else after the scheme.
  bool check(const std::optional<settings::problem>& p) {
    if (!p) return true;
    return fail_bool(p->code, p->about_password ? password_begin_ : scheme.size(), p->message);
  }
  bool check_deployment() { return check(settings::check_deployment(u_.s_, mode_)); }

  bool check_combinations() {
    if (tls_ && ssl_ && *tls_ != *ssl_) {
      return fail_bool(errc::invalid_uri, scheme.size(),
                       "options tls and ssl are given with different values");
    }
    u_.s_.tls = tls_ ? tls_ : ssl_;
    return check(settings::check_combinations(u_.s_, mode_));
  }

  std::string_view text_;
  uri_mode mode_;
  uri u_;
  failure error_;
  std::optional<bool> tls_, ssl_;
  std::vector<std::string> seen_;
  std::size_t password_begin_ = 0, password_end_ = 0;  // in text_; 0 when there is none
  bool may_quote_ = true;
  std::vector<std::pair<std::size_t, std::size_t>> redact_;  // [begin, end) in text_: secrets
};

// The connection string options: one row each (name in lower case, handler). The order is that of
// uri::supported_options(). A member of uri_parser so it may name uri's private fields.
const uri_parser::option uri_parser::options[] = {
    {"srvservicename", &uri_parser::srv_service_name_option},  // mongodb+srv:// only
    {"srvmaxhosts", &uri_parser::srv_max_hosts_option},        // mongodb+srv:// only
    {"appname", &uri_parser::app_name_option},
    {"timeoutms", &uri_parser::ms_option<&client_settings::timeout>},
    {"connecttimeoutms", &uri_parser::ms_option<&client_settings::connect_timeout>},
    {"sockettimeoutms", &uri_parser::ms_option<&client_settings::socket_timeout>},
    {"serverselectiontimeoutms",
     &uri_parser::ms_option<&client_settings::server_selection_timeout>},
    {"maxpoolsize", &uri_parser::count_option<&client_settings::max_pool_size>},
    {"minpoolsize", &uri_parser::count_option<&client_settings::min_pool_size>},
    {"maxconnecting", &uri_parser::count_option<&client_settings::max_connecting>},
    {"maxidletimems", &uri_parser::ms_option<&client_settings::max_idle_time>},
    {"waitqueuetimeoutms", &uri_parser::ms_option<&client_settings::wait_queue_timeout>},
    {"w", &uri_parser::w_option},
    {"journal", &uri_parser::bool_option<&client_settings::journal>},
    {"wtimeoutms", &uri_parser::ms_option<&client_settings::w_timeout>},
    {"readconcernlevel", &uri_parser::string_option<&client_settings::read_concern_level>},
    {"authsource", &uri_parser::string_option<&client_settings::auth_source>},
    {"authmechanism", &uri_parser::auth_mechanism_option},
    {"authmechanismproperties", &uri_parser::auth_mechanism_properties_option},
    {"tls", &uri_parser::tls_option},
    {"ssl", &uri_parser::ssl_option},
    {"retrywrites", &uri_parser::bool_option<&client_settings::retry_writes>},
    {"retryreads", &uri_parser::bool_option<&client_settings::retry_reads>},
    {"directconnection", &uri_parser::bool_option<&client_settings::direct_connection>},
    {"compressors", &uri_parser::compressors_option},
    // TLS.
    {"tlscafile", &uri_parser::string_option<&client_settings::tls_ca_file>},
    {"tlscrlfile", &uri_parser::string_option<&client_settings::tls_crl_file>},
    {"tlscertificatekeyfile",
     &uri_parser::string_option<&client_settings::tls_certificate_key_file>},
    {"tlscertificatekeyfilepassword", &uri_parser::tls_password_option},
    {"tlsallowinvalidcertificates",
     &uri_parser::bool_option<&client_settings::tls_allow_invalid_certificates>},
    {"tlsallowinvalidhostnames",
     &uri_parser::bool_option<&client_settings::tls_allow_invalid_hostnames>},
    {"tlsinsecure", &uri_parser::bool_option<&client_settings::tls_insecure>},
    {"tlsdisablecertificaterevocationcheck",
     &uri_parser::bool_option<&client_settings::tls_disable_certificate_revocation_check>},
    {"tlsdisableocspendpointcheck",
     &uri_parser::bool_option<&client_settings::tls_disable_ocsp_endpoint_check>},
    // Deployment options (replica sets, read preferences, monitoring).
    {"replicaset", &uri_parser::string_option<&client_settings::replica_set>},
    {"readpreference", &uri_parser::read_preference_option},
    {"readpreferencetags", &uri_parser::tag_set_option, true},  // one tag set per value
    {"maxstalenessseconds", &uri_parser::max_staleness_option},
    {"localthresholdms", &uri_parser::ms_option<&client_settings::local_threshold>},
    {"heartbeatfrequencyms", &uri_parser::heartbeat_frequency_option},
    {"loadbalanced", &uri_parser::bool_option<&client_settings::load_balanced>},
};

std::vector<std::string_view> uri_parser::option_names() {
  std::vector<std::string_view> out;
  for (const option& row : options) out.push_back(row.name);
  return out;
}

const uri_parser::option* uri_parser::find_option(std::string_view key) noexcept {
  for (const option& row : options) {
    if (row.name == key) return &row;
  }
  return nullptr;
}

namespace detail {

outcome<uri> with_srv_records(const uri& u, std::string_view txt, std::vector<host> hosts) {
  return uri_parser::with_srv_records(u, txt, std::move(hosts));
}

}  // namespace detail

outcome<uri> uri::parse(std::string_view text, uri_mode mode) {
  return uri_parser(text, mode).run();
}

outcome<uri> uri::from(client_settings given) {
  std::optional<settings::problem> p = settings::check_values(given);
  if (!p) p = settings::check_combinations(given, uri_mode::strict);
  if (p) return failure(p->code, p->message);
  uri u;
  if (given.srv_name && given.hosts.empty()) {
    given.hosts.push_back(host{host::kind::hostname, *given.srv_name, std::nullopt});
  }
  // to_string(): the hosts, the user (the password as a placeholder) and the database, each
  // percent-encoded where a connection string would need it.
  std::string& text = u.redacted_;
  text = given.srv_name ? "mongodb+srv://" : "mongodb://";
  if (given.username) {
    text += oid::detail::percent_encode(*given.username, ":/?#[]@%");
    if (given.password) text.append(":").append(secret::placeholder);
    text += '@';
  }
  for (std::size_t i = 0; i < given.hosts.size(); ++i) {
    const host& h = given.hosts[i];
    if (i > 0) text += ',';
    if (h.type == host::kind::unix_socket) {
      text += oid::detail::percent_encode(h.name, "/:?#[]@%,");
      continue;
    }
    text += h.type == host::kind::ip_literal ? "[" + h.name + "]" : h.name;
    if (h.port) text += ":" + std::to_string(*h.port);
  }
  text += '/';
  if (given.database) text += oid::detail::percent_encode(*given.database, "/?#%");
  u.srv_mode_ = uri_mode::strict;
  u.s_ = std::move(given);
  return u;
}

std::string uri::auth_database() const {
  if (s_.auth_source) return *s_.auth_source;
  if (s_.auth_mechanism == "MONGODB-X509") return "$external";
  if (s_.database) return *s_.database;
  return s_.auth_mechanism == "PLAIN" ? "$external" : "admin";
}

read_preference uri::read_preference() const { return settings::read_preference_of(s_); }

const std::vector<std::string_view>& uri::supported_options() noexcept {
  static const std::vector<std::string_view> names = uri_parser::option_names();
  return names;
}

}  // namespace oid::mongo
