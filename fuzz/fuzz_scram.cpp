// Property: the parsers of the server's SCRAM messages (server-first, server-final) never crash;
// malformed input is an error whose code is one of theirs and whose offset lies inside the input
// (or at its end); an accepted message re-serialises to exactly the input, and holds what the
// checks promise (a nonce extending the client's, a salt, at least 4096 iterations; a verifier or
// an error). Accepted server-first messages with 4096 iterations also run through a whole
// SCRAM-SHA-1 conversation, with the input as the server-final message too.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "mongo/auth/scram.hpp"

namespace {

using namespace oid::mongo::detail;
using oid::errc;

constexpr std::string_view client_nonce = "fyko+d2lbbFgONRv9qkxdawL";

void check_error(const oid::error& e, std::size_t size, bool first) {
  const bool known = e.code == oid::mongo::errc::invalid_scram_message ||
                     e.code == errc::invalid_base64 ||
                     (first && e.code == oid::mongo::errc::authentication_failed);
  if (!known || e.offset > size) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const auto any = parse_scram_server_first(input, "");
  if (any) {
    if (any->to_string() != input || any->nonce.empty() || any->salt.empty() ||
        any->iterations < scram_min_iterations) {
      std::abort();
    }
  } else {
    check_error(any.error(), size, true);
  }
  const auto ours = parse_scram_server_first(input, client_nonce);
  if (ours) {
    // Accepted for a client nonce, accepted for none, with the same meaning.
    if (!any || !(*any == *ours) || !ours->nonce.starts_with(client_nonce) ||
        ours->nonce.size() == client_nonce.size()) {
      std::abort();
    }
  } else {
    check_error(ours.error(), size, true);
  }

  const auto final = parse_scram_server_final(input);
  if (final) {
    if (final->to_string() != input || final->verifier.empty() == final->error.empty()) {
      std::abort();
    }
  } else {
    check_error(final.error(), size, false);
  }

  if (ours && ours->iterations == scram_min_iterations) {
    auto c = scram_conversation::start(scram_mechanism::sha1, "user", oid::mongo::secret("pencil"),
                                       nullptr, std::string(client_nonce));
    if (!c) std::abort();
    if (!c->client_final(input)) std::abort();
    // The input is a server-first message, so it is never the server's signature.
    if (c->verify_server_final(input)) std::abort();
  }
  return 0;
}
