#include "mongo/sdam/address.hpp"

#include <oid/mongo/server_description.hpp>

#include "detail/ascii.hpp"

namespace oid::mongo::detail {

server_address server_address::of(const mongo::host& h) {
  server_address a{h, {}};
  if (h.type == mongo::host::kind::unix_socket) {
    a.name = h.name;
    return a;
  }
  a.name = oid::detail::lower_ascii(h.name);
  if (h.type == mongo::host::kind::ip_literal) a.name = "[" + a.name + "]";
  a.name += ":" + std::to_string(h.port_or_default());
  return a;
}

std::optional<server_address> server_address::parse(std::string_view text) {
  mongo::host h;
  if (text.find('/') != std::string_view::npos) {
    if (!text.ends_with(".sock")) return std::nullopt;
    h.type = mongo::host::kind::unix_socket;
    h.name = std::string(text);
    return of(h);
  }
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    const auto rest = text.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || (port = rest.substr(1)).empty())) {
      return std::nullopt;
    }
    h.type = mongo::host::kind::ip_literal;
    h.name = std::string(text.substr(1, close - 1));
  } else {
    const auto colon = text.find(':');
    if (colon != std::string_view::npos) {
      port = text.substr(colon + 1);
      if (port.empty() || port.find(':') != std::string_view::npos) return std::nullopt;
    }
    const auto name = text.substr(0, colon);
    if (name.empty()) return std::nullopt;
    h.type = oid::detail::is_ipv4(name) ? mongo::host::kind::ipv4 : mongo::host::kind::hostname;
    h.name = std::string(name);
  }
  if (!port.empty()) {
    h.port = oid::detail::port_number(port);
    if (!h.port) return std::nullopt;
  }
  return of(h);
}

}  // namespace oid::mongo::detail

namespace oid::mongo {

std::string normalize_address(std::string_view address) {
  if (auto a = detail::server_address::parse(address)) return std::move(a->name);
  // Not an address (a server may send anything): lower case, so that it still compares alike.
  return oid::detail::lower_ascii(address);
}

}  // namespace oid::mongo
