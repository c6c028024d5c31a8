#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>
#include <oid/mongo/uri.hpp>
#include <utility>

#include "detail/ascii.hpp"
#include "detail/hex.hpp"
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

// The mechanisms oid implements, and those MongoDB's authentication specification defines that
// oid does not (refused as unsupported); any other name is an invalid value.
constexpr std::string_view mechanisms[] = {"SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN", "MONGODB-X509"};
constexpr std::string_view unsupported_mechanisms[] = {"GSSAPI", "MONGODB-AWS", "MONGODB-OIDC"};

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
    u_.username_ = std::move(*user);
    if (colon != std::string_view::npos) {
      auto password = decode(user_end + 1, end, "password");
      if (!password) return false;
      u_.password_ = secret(*password);
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
    unsigned value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (!all_digits(digits) || ec != std::errc{} || ptr != digits.data() + digits.size() ||
        value < 1 || value > 65535) {
      // The text is not quoted: without an '@', "user:password" reads as a host and a port.
      return fail_bool(errc::invalid_uri, begin,
                       all_digits(digits)
                           ? "the port must be a number from 1 to 65535"
                           : "the port must be a number from 1 to 65535 (a user name and password "
                             "go before an '@': mongodb://user:password@host)");
    }
    h.port = static_cast<std::uint16_t>(value);
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
      u_.hosts_.push_back(std::move(h));
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
      u_.hosts_.push_back(std::move(h));
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
    u_.hosts_.push_back(std::move(h));
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
    u_.database_ = std::move(*db);
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

  template <std::optional<bool> uri::*field>
  bool bool_option(const option_text& o) {
    return parse_bool(u_.*field, o.written, o.value, o.offset);
  }

  template <std::optional<std::string> uri::*field>
  bool string_option(const option_text& o) {
    u_.*field = o.value;
    return true;
  }

  template <std::optional<std::chrono::milliseconds> uri::*field>
  bool ms_option(const option_text& o) {
    std::int64_t ms = 0;
    const auto [ptr, ec] = std::from_chars(o.value.data(), o.value.data() + o.value.size(), ms);
    if (ec != std::errc{} || ptr != o.value.data() + o.value.size() || ms < 0 ||
        ms > std::int64_t{INT32_MAX}) {
      return invalid_value(o.offset, o.written,
                           "expected milliseconds, a whole number from 0 to 2147483647");
    }
    u_.*field = std::chrono::milliseconds(ms);
    return true;
  }

  // maxPoolSize, minPoolSize, maxConnecting: a count from 0 (maxConnecting: from 1).
  template <std::optional<std::uint32_t> uri::*field>
  bool count_option(const option_text& o) {
    std::uint32_t n = 0;
    const auto [ptr, ec] = std::from_chars(o.value.data(), o.value.data() + o.value.size(), n);
    const bool connecting = field == &uri::max_connecting_;
    if (ec != std::errc{} || ptr != o.value.data() + o.value.size() || !all_digits(o.value) ||
        n > std::uint32_t{INT32_MAX} || (connecting && n == 0)) {
      return invalid_value(o.offset, o.written,
                           field == &uri::max_pool_size_
                               ? "expected a whole number (0 for no limit)"
                           : connecting ? "expected a whole number from 1"
                                        : "expected a whole number");
    }
    u_.*field = n;
    return true;
  }

  // tls and ssl are kept apart until check_combinations compares them.
  bool tls_option(const option_text& o) { return parse_bool(tls_, o.written, o.value, o.offset); }
  bool ssl_option(const option_text& o) { return parse_bool(ssl_, o.written, o.value, o.offset); }

  bool app_name_option(const option_text& o) {
    if (o.value.size() > 128) return invalid_value(o.offset, o.written, "at most 128 bytes");
    u_.app_name_ = o.value;
    return true;
  }

  bool w_option(const option_text& o) {
    const std::string& value = o.value;
    std::int32_t n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ptr == value.data() + value.size() && ec == std::errc{}) {
      if (n < 0) return invalid_value(o.offset, o.written, "w must be >= 0");
      u_.w_number_ = n;
      u_.w_tag_.reset();
    } else if (value[0] == '-' || all_digits(value)) {
      return invalid_value(o.offset, o.written, "w is out of range");
    } else {
      u_.w_tag_ = value;
      u_.w_number_.reset();
    }
    return true;
  }

  bool auth_mechanism_option(const option_text& o) {
    const std::string& value = o.value;
    if (std::find(std::begin(unsupported_mechanisms), std::end(unsupported_mechanisms), value) !=
        std::end(unsupported_mechanisms)) {
      return fail_bool(errc::unsupported, o.offset,
                       "authMechanism=" + value +
                           " is not supported by oid; it authenticates with SCRAM-SHA-256, "
                           "SCRAM-SHA-1, PLAIN or MONGODB-X509");
    }
    if (std::find(std::begin(mechanisms), std::end(mechanisms), value) == std::end(mechanisms)) {
      return invalid_value(o.offset, o.written,
                           "expected SCRAM-SHA-256, SCRAM-SHA-1, PLAIN or MONGODB-X509");
    }
    u_.auth_mechanism_ = value;
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
    u_.auth_mechanism_properties_ = std::move(properties);
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
    u_.compressors_ = std::move(list);
    return true;
  }

  // The password's bytes go into a secret, and the range of text_ that holds them is left out of
  // to_string().
  bool tls_password_option(const option_text& o) {
    u_.tls_certificate_key_file_password_ = secret(o.value);
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
    if (!u_.read_preference_tags_) u_.read_preference_tags_.emplace();
    u_.read_preference_tags_->push_back(std::move(set));
    return true;
  }

  bool read_preference_option(const option_text& o) {
    auto mode = read_mode_from_string(o.value);
    if (!mode) {
      return invalid_value(o.offset, o.written,
                           "expected primary, primaryPreferred, secondary, secondaryPreferred "
                           "or nearest");
    }
    u_.read_mode_ = *mode;
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
    if (n > 0) u_.max_staleness_ = std::chrono::seconds(n);
    if (n < 0) u_.max_staleness_.reset();
    return true;
  }

  bool heartbeat_frequency_option(const option_text& o) {
    std::int64_t n = 0;
    if (!whole_number(o.value, 500, n)) {
      return invalid_value(o.offset, o.written,
                           "expected milliseconds, a whole number from 500 (the least "
                           "minHeartbeatFrequencyMS allows) to 2147483647");
    }
    u_.heartbeat_frequency_ = std::chrono::milliseconds(n);
    return true;
  }

  // The URI options specification's forbidden pairs of TLS options (each pair, whatever the
  // values), then what tlsInsecure and the other options imply.
  bool check_tls() {
    struct named {
      std::string_view name;
      const std::optional<bool>& value;
    };
    const named insecure{"tlsInsecure", u_.tls_insecure_},
        certificates{"tlsAllowInvalidCertificates", u_.tls_allow_invalid_certificates_},
        hostnames{"tlsAllowInvalidHostnames", u_.tls_allow_invalid_hostnames_},
        revocation{"tlsDisableCertificateRevocationCheck",
                   u_.tls_disable_certificate_revocation_check_},
        ocsp{"tlsDisableOCSPEndpointCheck", u_.tls_disable_ocsp_endpoint_check_};
    const std::pair<const named*, const named*> forbidden[] = {
        {&insecure, &certificates}, {&insecure, &hostnames},      {&insecure, &revocation},
        {&insecure, &ocsp},         {&certificates, &revocation}, {&certificates, &ocsp},
        {&revocation, &ocsp},
    };
    for (const auto& [a, b] : forbidden) {
      if (a->value && b->value) {
        return fail_bool(errc::invalid_uri, scheme.size(),
                         "options " + std::string(a->name) + " and " + std::string(b->name) +
                             " may not be given together");
      }
    }
    // A CRL is a revocation check: asking for one and, with a value that turns it off, for no
    // certificate check or no revocation check contradicts itself (libmongoc's tlsCRLFile; the
    // OCSP specification refuses the same options beside one that enables revocation checks).
    if (u_.tls_crl_file_) {
      for (const named* off : {&insecure, &certificates, &revocation}) {
        if (off->value.value_or(false)) {
          return fail_bool(errc::invalid_uri, scheme.size(),
                           "options tlsCRLFile and " + std::string(off->name) +
                               "=true may not be given together");
        }
      }
    }
    if (u_.tls_insecure_.value_or(false)) {
      u_.tls_allow_invalid_certificates_ = true;
      u_.tls_allow_invalid_hostnames_ = true;
    }
    // Asking for a CA file, a client certificate or a relaxed check asks for TLS (libmongoc
    // does the same); an explicit tls=false still wins.
    const bool any_tls_option =
        u_.tls_ca_file_ || u_.tls_crl_file_ || u_.tls_certificate_key_file_ ||
        u_.tls_certificate_key_file_password_ || u_.tls_insecure_ ||
        u_.tls_allow_invalid_certificates_ || u_.tls_allow_invalid_hostnames_ ||
        u_.tls_disable_certificate_revocation_check_ || u_.tls_disable_ocsp_endpoint_check_;
    if (!u_.tls_ && any_tls_option) u_.tls_ = true;
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
    u_.srv_max_hosts_ = n;
    return true;
  }

  // RFC 6335's service names (letters, digits, inner single hyphens, at least one letter), longer
  // than its 15 characters as long as `_name` is one DNS label (63 bytes).
  bool srv_service_name_option(const option_text& o) {
    const std::string& value = o.value;
    const bool letter = std::any_of(value.begin(), value.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
    const bool chars = std::all_of(value.begin(), value.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    });
    if (!letter || !chars || value.size() > 62 || value.front() == '-' || value.back() == '-' ||
        value.find("--") != std::string::npos) {
      return invalid_value(o.offset, o.written,
                           "expected a service name: letters, digits and inner hyphens, at most "
                           "62 characters");
    }
    u_.srv_service_name_ = value;
    return true;
  }

  bool check_srv(bool srv) {
    const std::size_t at = srv ? srv_scheme.size() : scheme.size();
    if (!srv) {
      if (u_.srv_service_name_ || u_.srv_max_hosts_) {
        return fail_bool(errc::invalid_uri, at,
                         "options srvServiceName and srvMaxHosts need a mongodb+srv:// connection "
                         "string");
      }
      return true;
    }
    if (u_.hosts_.size() != 1) {
      return fail_bool(errc::invalid_uri, at,
                       "a mongodb+srv:// connection string names exactly one host, whose SRV "
                       "records list the others");
    }
    const host& h = u_.hosts_.front();
    if (h.type == host::kind::ip_literal || h.type == host::kind::unix_socket) {
      return fail_bool(errc::invalid_uri, at, "mongodb+srv:// needs a host name to look up");
    }
    if (h.port) {
      return fail_bool(errc::invalid_uri, at,
                       "a mongodb+srv:// host has no port: its SRV records give the ports");
    }
    if (u_.direct_connection_.value_or(false)) {
      return fail_bool(errc::invalid_uri, at,
                       "option directConnection=true cannot be used with mongodb+srv://");
    }
    if (const char* conflict = srv_max_hosts_conflict()) {
      return fail_bool(errc::invalid_uri, at,
                       "option srvMaxHosts=" + std::to_string(*u_.srv_max_hosts_) +
                           " cannot be used with " + conflict);
    }
    if (!u_.tls_) u_.tls_ = true;  // TLS is on for mongodb+srv:// unless tls=false is written
    u_.srv_name_ = lower_ascii(h.name);
    u_.srv_mode_ = mode_;
    return true;
  }

  // What a positive srvMaxHosts contradicts ("replicaSet", "loadBalanced=true"), or nullptr.
  const char* srv_max_hosts_conflict() const {
    if (u_.srv_max_hosts_.value_or(0) == 0) return nullptr;
    if (u_.replica_set_) return "replicaSet";
    if (u_.load_balanced_.value_or(false)) return "loadBalanced=true";
    return nullptr;
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
    const std::string& name = *u.srv_name_;
    if (!p.parse_txt_options(name)) {
      failure f = std::move(p.error_);
      f.message += " (in the TXT record of " + name + ")";
      f.offset = 0;
      return f;
    }
    if (const char* conflict = p.srv_max_hosts_conflict()) {
      return failure(errc::invalid_uri, "option srvMaxHosts=" + std::to_string(*u.srv_max_hosts_) +
                                            " cannot be used with " + conflict +
                                            " (from the TXT record of " + name + ")");
    }
    const std::size_t listed = hosts.size();
    p.u_.hosts_ = std::move(hosts);
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
        const bool set_by_string = lower == "authsource"   ? u_.auth_source_.has_value()
                                   : lower == "replicaset" ? u_.replica_set_.has_value()
                                                           : u_.load_balanced_.has_value();
        if (!set_by_string && !parse_option(pos, amp)) return false;
      }
      pos = amp + 1;
    }
    return true;
  }

  // The deployment options that contradict each other or the hosts.
  bool check_deployment() {
    if (u_.load_balanced_.value_or(false)) {
      const char* why = u_.hosts_.size() > 1                    ? "several hosts"
                        : u_.direct_connection_.value_or(false) ? "directConnection=true"
                        : u_.replica_set_                       ? "replicaSet"
                                                                : nullptr;
      if (why) {
        return fail_bool(errc::invalid_uri, scheme.size(),
                         std::string("option loadBalanced=true cannot go with ") + why);
      }
    }
    const auto rp = u_.read_preference();
    if (mode_ == uri_mode::strict &&
        !rp.validate(u_.heartbeat_frequency_.value_or(std::chrono::milliseconds(10'000)))) {
      return fail_bool(errc::invalid_uri, scheme.size(),
                       rp.mode == read_mode::primary
                           ? "readPreference=primary (the default) takes no readPreferenceTags "
                             "and no maxStalenessSeconds"
                           : "maxStalenessSeconds must be at least 90 and at least "
                             "heartbeatFrequencyMS + 10 s");
    }
    return true;
  }

  bool check_combinations() {
    if (tls_ && ssl_ && *tls_ != *ssl_) {
      return fail_bool(errc::invalid_uri, scheme.size(),
                       "options tls and ssl are given with different values");
    }
    u_.tls_ = tls_ ? tls_ : ssl_;
    if (!check_tls()) return false;
    if (u_.direct_connection_.value_or(false) && u_.hosts_.size() > 1) {
      return fail_bool(errc::invalid_uri, scheme.size(),
                       "option directConnection=true needs exactly one host");
    }
    if (!check_deployment()) return false;
    if (u_.min_pool_size_ && u_.max_pool_size_.value_or(100) != 0 &&
        *u_.min_pool_size_ > u_.max_pool_size_.value_or(100)) {
      return fail_bool(
          errc::invalid_uri, scheme.size(),
          "option minPoolSize=" + std::to_string(*u_.min_pool_size_) +
              " is more than maxPoolSize=" + std::to_string(u_.max_pool_size_.value_or(100)) +
              (u_.max_pool_size_ ? "" : " (the default)") +
              ": a pool cannot keep open more connections than it may have");
    }
    return check_credential();
  }

  // The authentication specification's rules for each mechanism.
  bool check_credential() {
    if (!u_.auth_mechanism_) return true;
    const std::string& m = *u_.auth_mechanism_;
    if (m == "MONGODB-X509") {
      if (u_.password_) {
        return fail_bool(errc::invalid_uri, password_begin_,
                         "authMechanism=MONGODB-X509 takes no password: the client certificate "
                         "is the identity");
      }
      if (u_.auth_source_ && *u_.auth_source_ != "$external") {
        return fail_bool(errc::invalid_uri, scheme.size(),
                         "authMechanism=MONGODB-X509 needs authSource=$external (or none)");
      }
      return true;
    }
    if (!u_.username_) {
      return fail_bool(errc::invalid_uri, scheme.size(),
                       "authMechanism=" + m + " needs a user name (mongodb://user:password@host)");
    }
    // PLAIN sends authzid NUL user NUL password (RFC 4616): a NUL inside either would shift the
    // fields the server reads.
    if (m == "PLAIN") {
      if (u_.username_->find('\0') != std::string::npos) {
        return fail_bool(errc::invalid_uri, scheme.size(),
                         "authMechanism=PLAIN: the user name contains a NUL character (%00)");
      }
      if (u_.password_ && u_.password_->reveal().find('\0') != std::string_view::npos) {
        return fail_bool(errc::invalid_uri, password_begin_,
                         "authMechanism=PLAIN: the password contains a NUL character (%00)");
      }
    }
    return true;
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
    {"connecttimeoutms", &uri_parser::ms_option<&uri::connect_timeout_>},
    {"sockettimeoutms", &uri_parser::ms_option<&uri::socket_timeout_>},
    {"serverselectiontimeoutms", &uri_parser::ms_option<&uri::server_selection_timeout_>},
    {"maxpoolsize", &uri_parser::count_option<&uri::max_pool_size_>},
    {"minpoolsize", &uri_parser::count_option<&uri::min_pool_size_>},
    {"maxconnecting", &uri_parser::count_option<&uri::max_connecting_>},
    {"maxidletimems", &uri_parser::ms_option<&uri::max_idle_time_>},
    {"waitqueuetimeoutms", &uri_parser::ms_option<&uri::wait_queue_timeout_>},
    {"w", &uri_parser::w_option},
    {"journal", &uri_parser::bool_option<&uri::journal_>},
    {"wtimeoutms", &uri_parser::ms_option<&uri::w_timeout_>},
    {"authsource", &uri_parser::string_option<&uri::auth_source_>},
    {"authmechanism", &uri_parser::auth_mechanism_option},
    {"authmechanismproperties", &uri_parser::auth_mechanism_properties_option},
    {"tls", &uri_parser::tls_option},
    {"ssl", &uri_parser::ssl_option},
    {"retrywrites", &uri_parser::bool_option<&uri::retry_writes_>},
    {"retryreads", &uri_parser::bool_option<&uri::retry_reads_>},
    {"directconnection", &uri_parser::bool_option<&uri::direct_connection_>},
    {"compressors", &uri_parser::compressors_option},
    // TLS.
    {"tlscafile", &uri_parser::string_option<&uri::tls_ca_file_>},
    {"tlscrlfile", &uri_parser::string_option<&uri::tls_crl_file_>},
    {"tlscertificatekeyfile", &uri_parser::string_option<&uri::tls_certificate_key_file_>},
    {"tlscertificatekeyfilepassword", &uri_parser::tls_password_option},
    {"tlsallowinvalidcertificates",
     &uri_parser::bool_option<&uri::tls_allow_invalid_certificates_>},
    {"tlsallowinvalidhostnames", &uri_parser::bool_option<&uri::tls_allow_invalid_hostnames_>},
    {"tlsinsecure", &uri_parser::bool_option<&uri::tls_insecure_>},
    {"tlsdisablecertificaterevocationcheck",
     &uri_parser::bool_option<&uri::tls_disable_certificate_revocation_check_>},
    {"tlsdisableocspendpointcheck",
     &uri_parser::bool_option<&uri::tls_disable_ocsp_endpoint_check_>},
    // Deployment options (replica sets, read preferences, monitoring).
    {"replicaset", &uri_parser::string_option<&uri::replica_set_>},
    {"readpreference", &uri_parser::read_preference_option},
    {"readpreferencetags", &uri_parser::tag_set_option, true},  // one tag set per value
    {"maxstalenessseconds", &uri_parser::max_staleness_option},
    {"localthresholdms", &uri_parser::ms_option<&uri::local_threshold_>},
    {"heartbeatfrequencyms", &uri_parser::heartbeat_frequency_option},
    {"loadbalanced", &uri_parser::bool_option<&uri::load_balanced_>},
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

std::string uri::auth_database() const {
  if (auth_source_) return *auth_source_;
  if (auth_mechanism_ == "MONGODB-X509") return "$external";
  if (database_) return *database_;
  return auth_mechanism_ == "PLAIN" ? "$external" : "admin";
}

read_preference uri::read_preference() const {
  mongo::read_preference rp;
  rp.mode = read_mode_.value_or(read_mode::primary);
  if (read_preference_tags_) rp.tag_sets = *read_preference_tags_;
  rp.max_staleness = max_staleness_;
  return rp;
}

const std::vector<std::string_view>& uri::supported_options() noexcept {
  static const std::vector<std::string_view> names = uri_parser::option_names();
  return names;
}

}  // namespace oid::mongo
