// Private: authentication in the connection handshake, as MongoDB's authentication specification
// describes it. The connection calls it around its `hello`:
//
//     auto auth = handshake_auth::prepare(credential, cache);   // starts SCRAM, builds steps
//     auth->add_to_hello(hello);     // saslSupportedMechs, speculativeAuthenticate
//     ... send hello, read its reply ...
//     auth->finish(conn, reply, "host:port");  // the rest of the conversation
//
// SCRAM-SHA-256 / SCRAM-SHA-1 (src/mongo/auth/scram.hpp does the arithmetic): saslStart, the
// client-final message in saslContinue, the server's signature checked, and empty saslContinue
// messages while the server says `done: false` (it may ignore skipEmptyExchange, as FerretDB
// does). PLAIN: one saslStart whose payload `\0user\0password` is built in a cleared buffer.
// MONGODB-X509: one `authenticate` command (the identity is the TLS client certificate).
#pragma once

#include <oid/bson/builder.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/outcome.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "mongo/auth/scram.hpp"
#include "mongo/wire/connection.hpp"

namespace oid::mongo::detail {

class handshake_auth {
 public:
  /// Starts authenticating as `c`: for SCRAM, the conversation (SCRAM-SHA-256 unless SCRAM-SHA-1
  /// was asked for) whose first message goes into hello. `cache` may be null. Errors:
  /// authentication_failed (a password SASLprep refuses; no secret in the message),
  /// entropy_unavailable.
  /// `api`: the client's declared Stable API version, which the commands after hello carry (null:
  /// none).
  static outcome<handshake_auth> prepare(const credential& c, scram_cache* cache,
                                         const server_api* api = nullptr);

  /// Adds `saslSupportedMechs` (when the mechanism is negotiated) and `speculativeAuthenticate`
  /// (SCRAM and MONGODB-X509) to a hello or legacy isMaster command being built.
  void add_to_hello(bson::builder& hello) const;

  /// Completes the authentication on `conn` after the handshake's `reply`: from the server's
  /// speculativeAuthenticate answer when there is one, else from saslStart (or authenticate).
  /// `where` names the host for messages. Errors: authentication_failed (the server refused:
  /// its code, codeName and message in `server`; or its SCRAM messages were malformed or its
  /// signature wrong), and transport codes.
  outcome<void> finish(connection& conn, bson::document_view reply, std::string_view where);

 private:
  handshake_auth() = default;
  outcome<void> scram(connection& conn, std::optional<bson::document> first_reply,
                      std::string_view where);
  outcome<void> plain(connection& conn, std::string_view where);
  outcome<void> x509(connection& conn, std::string_view where);
  failure refused(bson::document_view reply, std::string_view where) const;
  // A transport failure during `what` (its code kept).
  failure broken(const oid::error& e, std::string_view what, std::string_view where) const;
  // A SCRAM message or signature the client refuses: authentication_failed.
  // `message` is the server's SCRAM message the error's offset points into, if any.
  failure dishonest(const oid::error& e, std::string_view what, std::string_view where,
                    std::string_view message = {}) const;
  std::string who() const;

  const credential* credential_ = nullptr;
  scram_cache* cache_ = nullptr;
  const server_api* api_ = nullptr;
  std::string mechanism_;  // the one in use: chosen before hello, settled after it
  std::optional<scram_conversation> speculative_;
};

}  // namespace oid::mongo::detail
