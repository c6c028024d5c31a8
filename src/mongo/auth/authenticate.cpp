#include "mongo/auth/authenticate.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>

#include "mongo/wire/reply.hpp"

namespace oid::mongo::detail {
namespace {

constexpr std::string_view sha256_name = "SCRAM-SHA-256";
constexpr std::string_view sha1_name = "SCRAM-SHA-1";
// A server that keeps saying `done: false` after the signature is checked is broken; stop.
constexpr int max_empty_rounds = 2;

std::span<const std::uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

bool is_scram(std::string_view m) { return m.empty() || m == sha256_name || m == sha1_name; }

// The saslStart command of a SCRAM conversation (also the speculativeAuthenticate document).
// Sent alone (not speculatively), it carries the client's Stable API version `api`.
bson::document sasl_start(const scram_conversation& conv, std::string_view db, bool with_db,
                          const server_api* api = nullptr) {
  bson::builder b;
  b.append_int32("saslStart", 1)
      .append_string("mechanism", scram_mechanism_name(conv.mechanism()))
      .append_binary("payload", bson::binary_subtype::generic, as_bytes(conv.client_first()))
      .append_bool("autoAuthorize", true);
  b.open_document("options").append_bool("skipEmptyExchange", true).close();
  if (with_db) b.append_string("db", db);
  if (api != nullptr) append_server_api(b, *api);
  return std::move(b).extract();
}

// The payload of a saslStart or saslContinue reply, as text.
std::optional<std::string_view> payload_of(bson::document_view reply) {
  const auto e = reply.find("payload");
  if (!e) return std::nullopt;
  if (auto bin = e->get_binary()) {
    return std::string_view(reinterpret_cast<const char*>(bin->bytes.data()), bin->bytes.size());
  }
  if (auto text = e->get_string()) return *text;
  return std::nullopt;
}

// The iteration count at `offset` of a server-first message, when it is a short run of digits
// (the server's own number, safe to show); otherwise nothing.
std::string count_at(std::string_view message, std::size_t offset) {
  const std::size_t end = std::min(message.find(',', offset), message.size());
  const std::string_view v = message.substr(offset, end - offset);
  if (v.empty() || v.size() > 20 ||
      !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "";
  }
  return " " + std::string(v);
}

// What the attribute at `offset` of a server SCRAM message is, for error messages: the byte
// before a value is '=', the one before that the attribute's letter.
std::string attribute_at(std::string_view message, std::size_t offset) {
  if (offset < 2 || offset > message.size() || message[offset - 1] != '=') return "";
  switch (message[offset - 2]) {
  case 'r': return ": the nonce does not extend the client's";
  case 's': return ": the salt";
  case 'i':
    return ": the iteration count" + count_at(message, offset) + " (must be " +
           std::to_string(scram_min_iterations) + " to " + std::to_string(scram_max_iterations) +
           ")";
  case 'v': return ": the server signature";
  case 'e': return ": the server's error";
  default: return "";
  }
}

}  // namespace

outcome<handshake_auth> handshake_auth::prepare(const credential& c, scram_cache* cache,
                                                const server_api* api) {
  handshake_auth a;
  a.credential_ = &c;
  a.cache_ = cache;
  a.api_ = api;
  a.mechanism_ = c.mechanism;
  if (is_scram(c.mechanism)) {
    // Speculatively SCRAM-SHA-256 when negotiating: what the specification says to try first.
    const auto m = c.mechanism == sha1_name ? scram_mechanism::sha1 : scram_mechanism::sha256;
    auto conv = scram_conversation::start(m, c.user, c.password, cache);
    if (!conv) {
      if (conv.error().code == oid::errc::entropy_unavailable ||
          conv.error().code == errc::crypto_failed) {
        return failure(conv.error());
      }
      return failure(errc::authentication_failed,
                     "the password of user '" + c.user + "' cannot be used for " +
                         std::string(scram_mechanism_name(m)) + ": " + conv.error().message());
    }
    a.speculative_ = std::move(*conv);
  }
  return a;
}

void handshake_auth::add_to_hello(bson::builder& hello) const {
  const credential& c = *credential_;
  if (c.mechanism.empty()) hello.append_string("saslSupportedMechs", c.source + "." + c.user);
  if (speculative_) {
    const auto step = sasl_start(*speculative_, c.source, true);
    hello.append_document("speculativeAuthenticate", step.view());
  } else if (c.mechanism == "MONGODB-X509") {
    bson::builder b;
    b.append_int32("authenticate", 1).append_string("mechanism", "MONGODB-X509");
    if (!c.user.empty()) b.append_string("user", c.user);
    b.append_string("db", "$external");
    hello.append_document("speculativeAuthenticate", b.view());
  }
}

std::string handshake_auth::who() const {
  const credential& c = *credential_;
  return "authentication of user '" + c.user + "' (database " + c.source + ", " + mechanism_ + ")";
}

failure handshake_auth::refused(bson::document_view reply, std::string_view where) const {
  auto e = server_error_of(reply);
  failure f(
      errc::authentication_failed,
      who() + " refused by " + std::string(where) + ": " + e.message +
          (e.code_name.empty() ? ""
                               : " (" + e.code_name + ", code " + std::to_string(e.code) + ")"));
  f.server = std::move(e);
  return f;
}

failure handshake_auth::broken(const oid::error& e, std::string_view what,
                               std::string_view where) const {
  return failure(e.code, who() + " with " + std::string(where) + " failed in " + std::string(what) +
                             ": " + e.message());
}

failure handshake_auth::dishonest(const oid::error& e, std::string_view what,
                                  std::string_view where, std::string_view message) const {
  return failure(errc::authentication_failed,
                 who() + " with " + std::string(where) + " failed: " + std::string(what) +
                     attribute_at(message, e.offset) + " (" + e.message() + " at byte " +
                     std::to_string(e.offset) + ")");
}

outcome<void> handshake_auth::finish(connection& conn, bson::document_view reply,
                                     std::string_view where) {
  const credential& c = *credential_;
  std::optional<bson::document> speculative_reply;
  if (const auto e = reply.find("speculativeAuthenticate")) {
    if (auto d = e->get_document()) speculative_reply.emplace(*d);
  }
  if (c.mechanism == "MONGODB-X509") {
    mechanism_ = c.mechanism;
    return speculative_reply ? outcome<void>{} : x509(conn, where);
  }
  if (c.mechanism == "PLAIN") return plain(conn, where);
  if (c.mechanism.empty()) {
    // Negotiated: SCRAM-SHA-256 when the server lists it for the user, else SCRAM-SHA-1.
    bool has_sha256 = false;
    if (const auto e = reply.find("saslSupportedMechs")) {
      if (auto list = e->get_array()) {
        for (const auto& m : *list) has_sha256 |= m.get_string().value_or("") == sha256_name;
      }
    }
    mechanism_ = speculative_reply || has_sha256 ? sha256_name : sha1_name;
    if (mechanism_ == sha1_name) speculative_reply.reset();
  }
  return scram(conn, std::move(speculative_reply), where);
}

outcome<void> handshake_auth::scram(connection& conn, std::optional<bson::document> first_reply,
                                    std::string_view where) {
  const credential& c = *credential_;
  const auto m = mechanism_ == sha1_name ? scram_mechanism::sha1 : scram_mechanism::sha256;
  if (!first_reply) {
    // The server did not take the speculative step: start again, with a fresh nonce.
    auto conv = scram_conversation::start(m, c.user, c.password, cache_);
    if (!conv) return dishonest(conv.error(), "the password cannot be prepared", where);
    speculative_ = std::move(*conv);
    const auto start = sasl_start(*speculative_, c.source, false, api_);
    auto r = conn.run(c.source, start.view());
    if (!r) return broken(r.error(), "saslStart", where);
    if (!is_ok(r->view())) return refused(r->view(), where);
    first_reply = std::move(*r);
  }
  scram_conversation& conv = *speculative_;
  const auto conversation_id = int_field(first_reply->view(), "conversationId", 1);
  const auto server_first = payload_of(first_reply->view());
  if (!server_first) {
    return failure(errc::authentication_failed,
                   who() + ": " + std::string(where) + " sent no SCRAM payload in its first reply");
  }
  auto client_final = conv.client_final(*server_first);
  if (!client_final && client_final.error().code == errc::crypto_failed) {
    return broken(client_final.error(), "computing the SCRAM proof (OpenSSL)", where);
  }
  if (!client_final) {
    return dishonest(client_final.error(), "the server-first message is refused", where,
                     *server_first);
  }

  const auto next = [&](std::string_view payload) {
    bson::builder b;
    b.append_int32("saslContinue", 1)
        .append_int32("conversationId", conversation_id)
        .append_binary("payload", bson::binary_subtype::generic, as_bytes(payload));
    if (api_ != nullptr) append_server_api(b, *api_);
    return conn.run(c.source, b.view());
  };
  auto r = next(*client_final);
  if (!r) return broken(r.error(), "saslContinue", where);
  if (!is_ok(r->view())) return refused(r->view(), where);
  const auto server_final = payload_of(r->view());
  if (!server_final) {
    return failure(errc::authentication_failed,
                   who() + ": " + std::string(where) + " sent no server signature");
  }
  // A server that cannot prove it knows the password is refused, whatever it says next.
  if (auto v = conv.verify_server_final(*server_final); !v) {
    return dishonest(v.error(), "the server's signature is wrong or malformed", where,
                     *server_final);
  }
  for (int round = 0; !bool_field(r->view(), "done", false); ++round) {
    if (round == max_empty_rounds) {
      return failure(errc::authentication_failed,
                     who() + ": " + std::string(where) + " did not end the conversation");
    }
    r = next("");
    if (!r) return broken(r.error(), "saslContinue", where);
    if (!is_ok(r->view())) return refused(r->view(), where);
  }
  return {};
}

outcome<void> handshake_auth::plain(connection& conn, std::string_view where) {
  const credential& c = *credential_;
  mechanism_ = "PLAIN";
  // \0user\0password, in buffers that are cleared before they are freed.
  secret payload = secret::of_size(2 + c.user.size() + c.password.size());
  auto out = payload.bytes();
  out[0] = 0;
  std::copy(c.user.begin(), c.user.end(), out.begin() + 1);
  out[1 + c.user.size()] = 0;
  const auto pw = c.password.bytes();
  std::copy(pw.begin(), pw.end(), out.begin() + 2 + static_cast<std::ptrdiff_t>(c.user.size()));
  // Room for the whole command up front, so that no growth leaves a copy of the payload behind
  // in freed memory; the one buffer is cleared below.
  bson::builder b(payload.size() + 128);
  b.append_int32("saslStart", 1)
      .append_string("mechanism", "PLAIN")
      .append_binary("payload", bson::binary_subtype::generic, payload.bytes())
      .append_bool("autoAuthorize", true);
  if (api_ != nullptr) append_server_api(b, *api_);
  auto r = conn.run(c.source, b.view());
  const auto sent = b.view();
  OPENSSL_cleanse(const_cast<std::uint8_t*>(sent.data()), sent.size());
  if (!r) return broken(r.error(), "saslStart", where);
  if (!is_ok(r->view())) return refused(r->view(), where);
  return {};
}

outcome<void> handshake_auth::x509(connection& conn, std::string_view where) {
  const credential& c = *credential_;
  bson::builder b;
  b.append_int32("authenticate", 1).append_string("mechanism", "MONGODB-X509");
  if (!c.user.empty()) b.append_string("user", c.user);
  if (api_ != nullptr) append_server_api(b, *api_);
  auto r = conn.run("$external", b.view());
  if (!r) return broken(r.error(), "authenticate", where);
  if (!is_ok(r->view())) return refused(r->view(), where);
  return {};
}

}  // namespace oid::mongo::detail
