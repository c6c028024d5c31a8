// mongodb+srv:// inside oid::mongo. The options of a connection string as written, read without
// the typed parser: what mongodb+srv:// needs to merge a TXT record's options with the connection
// string's (srv.cpp) and to check srvMaxHosts against replicaSet and loadBalanced (uri.cpp).
#pragma once

#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "detail/ascii.hpp"

namespace oid::mongo::detail {

/// One `key=value` of an option string (`a=1&b=2`). The value may be a password
/// (tlsCertificateKeyFilePassword): it is cleared when the option is destroyed.
struct written_option {
  std::string key;         ///< lower case and percent-decoded, for comparisons
  std::string_view text;   ///< the pair as written, into the string given to split_options
  bool has_value = false;  ///< false when the pair has no '='
  std::string value;       ///< percent-decoded (a malformed escape is kept as written)

  written_option() = default;
  written_option(const written_option&) = default;
  written_option(written_option&&) noexcept = default;
  written_option& operator=(const written_option&) = default;
  written_option& operator=(written_option&&) noexcept = default;
  ~written_option();
};

using oid::detail::lower_ascii;  // `s` with A-Z in lower case

/// The non-empty `&`-separated pairs of `options`, in order.
std::vector<written_option> split_options(std::string_view options);

/// What a positive srvMaxHosts conflicts with in `options` ("replicaSet", "loadBalanced=true"),
/// if anything; the last of a repeated option counts.
std::optional<std::string> srv_max_hosts_conflict(std::string_view options);

/// The SRV and TXT lookups of `resolve_srv` and their checks: the `mongodb://` connection string
/// (without the password) that mongodb+srv:// `u` stands for, whose options are the TXT
/// record's that `written_options` (the string's own, as written after '?') do not override,
/// then those, then `tls=true` unless tls or ssl is written; a `secret`, as the options may hold
/// tlsCertificateKeyFilePassword. The tests read it to check options
/// that `uri` has no accessor for.
outcome<secret> srv_connection_string(const uri& u, std::string_view written_options);

}  // namespace oid::mongo::detail
