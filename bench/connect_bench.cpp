// What opening a connection costs: the TCP connect, the TLS handshake when the connection string
// asks for TLS, the `hello` handshake and the SCRAM conversation when it names a user. Each
// connection is opened with connection::open, as a client's pool opens them, and closed again.
//
// A client's connections share one cache of salted SCRAM passwords (PBKDF2 is run once per
// password, salt and iteration count, then looked up), so this prints two rows for a URI with a
// user: "first connection" (a fresh cache each time: what the first connection of every client
// pays) and "later connections" (one warm cache: what the rest of the pool pays), with the ratio.
// Without a user, one row.
//
//   connect_bench --uri URI [--count N]     (default N = 50; medians and 90th percentiles in ms)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <oid/mongo/uri.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/auth/scram.hpp"
#include "mongo/wire/connection.hpp"
#include "mongo/wire/tls.hpp"

namespace {

namespace mongo = oid::mongo;
using clock_type = std::chrono::steady_clock;

struct percentiles {
  double median_ms, p90_ms;
};

percentiles summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]};
}

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "connect_bench: %s\n", why.c_str());
  std::exit(1);
}

// Opens `count` connections to the URI's first host; `fresh_cache` gives each its own SCRAM
// cache (cold), otherwise they share one that a first, untimed connection warmed.
percentiles open_many(const mongo::uri& u, mongo::connection_options options, int count,
                      bool fresh_cache) {
  const auto& h = u.hosts().front();
  if (!fresh_cache && options.auth) {
    options.scram_cache = std::make_shared<mongo::detail::scram_cache>();
    if (auto warm = mongo::connection::open(h, options); !warm) die(warm.error().message);
  }
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    if (fresh_cache && options.auth) {
      options.scram_cache = std::make_shared<mongo::detail::scram_cache>();
    }
    const auto started = clock_type::now();
    auto c = mongo::connection::open(h, options);
    const auto took = clock_type::now() - started;
    if (!c) die(c.error().message);
    ms.push_back(std::chrono::duration<double, std::milli>(took).count());
  }
  return summarize(std::move(ms));
}

}  // namespace

int main(int argc, char** argv) {
  std::string uri_text;
  int count = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--uri" && i + 1 < argc) {
      uri_text = argv[++i];
    } else if (arg == "--count" && i + 1 < argc) {
      count = std::max(1, std::atoi(argv[++i]));
    } else {
      die("usage: connect_bench --uri URI [--count N]");
    }
  }
  if (uri_text.empty()) die("usage: connect_bench --uri URI [--count N]");
  auto u = mongo::uri::parse(uri_text);
  if (!u) die(u.error().message);  // never holds the password: uri::parse redacts it

  mongo::connection_options options;
  options.connect_timeout = u->connect_timeout().value_or(options.connect_timeout);
  options.socket_timeout = u->socket_timeout().value_or(options.socket_timeout);
  options.auth = mongo::credential::from(*u);
  const bool tls = u->tls().value_or(false);
  if (tls) {
    auto context = mongo::detail::tls_context::create(*u);
    if (!context) die(context.error().message);
    options.tls = std::move(*context);
  }
  const std::string what =
      std::string(tls ? "TLS + " : "") + "handshake" + (options.auth ? " + SCRAM" : "");
  std::printf("opening %d connections to %s (%s), ms:\n", count, u->hosts().front().name.c_str(),
              what.c_str());
  std::printf("%-20s %10s %10s\n", "", "median", "p90");
  if (!options.auth) {
    const auto all = open_many(*u, options, count, false);
    std::printf("%-20s %10.2f %10.2f\n", "every connection", all.median_ms, all.p90_ms);
    return 0;
  }
  const auto first = open_many(*u, options, count, true);
  const auto later = open_many(*u, options, count, false);
  std::printf("%-20s %10.2f %10.2f\n", "first connection", first.median_ms, first.p90_ms);
  std::printf("%-20s %10.2f %10.2f\n", "later connections", later.median_ms, later.p90_ms);
  std::printf("the salted-password cache makes later connections %.1fx faster to open\n",
              first.median_ms / later.median_ms);
  return 0;
}
