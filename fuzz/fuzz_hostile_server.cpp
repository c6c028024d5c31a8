// Property: the real client survives any server, and a server that does not know the password
// never gets past SCRAM's mutual authentication.
//
// A loopback TCP server inside this process answers every request the client sends with the next
// reply taken from the input, while the client (oid::mongo::client, no hooks) runs what
// `oid mongo dump` and the other commands run: the handshake (hello, with speculative
// authentication), SCRAM-SHA-1, SCRAM-SHA-256 or PLAIN, find with getMores, listDatabases,
// listCollections, listIndexes, count, and endSessions/killCursors when it closes. Checked: no
// crash or undefined behaviour (ASan/UBSan), no hang (every wait is under the URI's short
// timeouts: libFuzzer's -timeout catches the rest), bounded memory (-rss_limit_mb,
// -malloc_limit_mb), no password in any error message, and, when the connection string asks for
// SCRAM, no command but hello/isMaster/saslStart/saslContinue ever reaches the server: the
// server never knows the client's password (a random one per process), so a client that sends
// anything else has accepted a forged server signature. The server may cheat in every way it can
// compute without the password (the `v=` signature made with an all-zero salted password, with
// the empty password, with the other hash), so that the fuzzer can find real attacks.
//
// The input: four header bytes, then records, one per reply.
//   byte 0   bits 0-2: authentication (% 5): none, SCRAM-SHA-1, SCRAM-SHA-256, negotiated SCRAM
//            (no authMechanism), PLAIN; bit 3: retryReads=false; bit 4: replicaSet=rs0 (a
//            monitor thread per member, members discovered from the hosts the hellos name)
//            instead of directConnection=true
//   byte 1-2 up to four operations, the low three bits of a nibble each (low nibble of byte 1
//            first; 0 ends the list):
//            1 server(), 2 find and every getMore, 3 listDatabases, 4 listCollections,
//            5 dump (listDatabases, then for each database listCollections, and for each
//            collection listIndexes, count and find), 6 ping, 7 count and listIndexes
//   byte 3   find's batchSize (% 5 of 0, 1, 2, 10, 101)
//   record   kind (1 byte), length (2 bytes, little-endian), that many bytes (fewer at the end):
//     kind & 3 == 0  a reply generated for the request, its fields (counts, salts, nonces,
//                    iteration counts, cursor ids, batch sizes, limits, wire versions) drawn
//                    from the record's bytes
//     kind & 3 == 1  the record's bytes are the reply document, sent as they are, except that
//                    when they are valid BSON a SCRAM `payload` is fixed up: with kind & 0x20 a
//                    server-first nonce is made to extend the client's (the recorded server part
//                    kept); with a signature strategy (below) other than 0 a `v=` is replaced
//     kind & 3 == 2  the record's bytes are the whole message; kind & 0x20 patches responseTo
//     kind & 3 == 3  the server closes the connection
//   (kind >> 2) & 7: how a generated or fixed-up server-final message signs (see `sign`).
//   When the records run out, the server closes each connection at its next request.
//
// Run it with short limits, and keep going past the known findings with fork mode:
//   build/fuzz/fuzz/fuzz_hostile_server CORPUS -timeout=10 -rss_limit_mb=1024
//     -malloc_limit_mb=256 [-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1]
//
// Recording seeds: with OID_HOSTILE_RECORD=HOST:PORT (a real server) and
// OID_HOSTILE_RECORD_OUT=FILE, the replay binary runs the header of its input against the real
// server through a proxy and writes the header and the server's replies as records to FILE
// (user and password from OID_HOSTILE_RECORD_USER and OID_HOSTILE_RECORD_PASSWORD when
// authenticating). OID_HOSTILE_TRACE=1 prints each request's name and each reply.
// fuzz/record_hostile_server.sh records the committed seeds from FerretDB.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace mongo = oid::mongo;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;

constexpr std::string_view user_name = "fuzzuser";
// Iteration counts the client would spend seconds to hours on (it follows the server's count, as
// SCRAM says) are not sent: an execution must stay short. 2^31 and more are sent.
constexpr std::uint64_t max_cheap_iterations = 100'000;

// ---- Reading the input ----------------------------------------------------------------------

class reader {
 public:
  explicit reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  bool empty() const { return bytes_.empty(); }
  std::uint8_t byte() {
    if (bytes_.empty()) return 0;
    const std::uint8_t b = bytes_[0];
    bytes_ = bytes_.subspan(1);
    return b;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t{byte()} << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    const std::uint64_t low = u32();
    return low | std::uint64_t{u32()} << 32;
  }
  // Two bytes, the first the low one (the order spelt out: the operands of | are unsequenced).
  std::uint16_t u16() {
    const std::uint16_t low = byte();
    return static_cast<std::uint16_t>(low | byte() << 8);
  }
  std::span<const std::uint8_t> take(std::size_t n) {
    n = std::min(n, bytes_.size());
    auto out = bytes_.first(n);
    bytes_ = bytes_.subspan(n);
    return out;
  }
  std::string text(std::size_t n) {
    const auto b = take(n);
    return std::string(b.begin(), b.end());
  }
  template <class T, std::size_t N>
  const T& pick(const T (&choices)[N]) {
    return choices[byte() % N];
  }
  std::span<const std::uint8_t> rest() const { return bytes_; }

 private:
  std::span<const std::uint8_t> bytes_;
};

enum class auth_mode { none, sha1, sha256, negotiated, plain };

bool is_scram(auth_mode m) {
  return m == auth_mode::sha1 || m == auth_mode::sha256 || m == auth_mode::negotiated;
}

struct record {
  std::uint8_t kind = 3;
  std::vector<std::uint8_t> bytes;
};

struct script {
  auth_mode auth = auth_mode::none;
  bool retry_reads = true;
  bool monitored = false;  // replicaSet=rs0: monitor threads, discovered members
  std::vector<int> operations;
  std::int32_t batch_size = 0;
  std::vector<record> records;
};

script parse_script(std::span<const std::uint8_t> input) {
  reader r(input);
  script s;
  const std::uint8_t scenario = r.byte();
  s.auth = static_cast<auth_mode>((scenario & 7) % 5);
  s.retry_reads = (scenario & 8) == 0;
  s.monitored = (scenario & 16) != 0;
  const std::uint16_t ops = r.u16();
  for (int i = 0; i < 4; ++i) {
    const int op = (ops >> (4 * i)) & 7;
    if (op == 0) break;
    s.operations.push_back(op);
  }
  static constexpr std::int32_t batch_sizes[] = {0, 1, 2, 10, 101};
  s.batch_size = r.pick(batch_sizes);
  while (!r.empty()) {
    record rec;
    rec.kind = r.byte();
    const std::size_t n = r.u16();
    const auto b = r.take(n);
    rec.bytes.assign(b.begin(), b.end());
    s.records.push_back(std::move(rec));
  }
  return s;
}

// ---- SCRAM, as a server that does not know the password computes it --------------------------
// Written against OpenSSL here rather than with the client's code, so that a bug in the client's
// SCRAM is not shared by the server that tests it.

std::string base64(std::span<const std::uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

std::vector<std::uint8_t> unbase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return {};
  std::vector<std::uint8_t> out(text.size() / 4 * 3);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return {};
  std::size_t size = static_cast<std::size_t>(n);
  if (text.back() == '=') --size;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --size;
  out.resize(size);
  return out;
}

// The value of attribute `name` in a SCRAM message ("r=...,s=...,i=..."), or nullopt.
std::optional<std::string_view> attribute(std::string_view message, char name) {
  std::size_t pos = 0;
  while (pos < message.size()) {
    const std::size_t comma = std::min(message.find(',', pos), message.size());
    const std::string_view a = message.substr(pos, comma - pos);
    if (a.size() >= 2 && a[0] == name && a[1] == '=') return a.substr(2);
    pos = comma + 1;
  }
  return std::nullopt;
}

// What one connection's SCRAM conversation has shown the server so far.
struct conversation {
  std::string mechanism;          // from saslStart or speculativeAuthenticate
  std::string client_first_bare;  // "n=user,r=nonce"
  std::string client_nonce;
  std::string server_first;       // the last server-first message sent
  std::string client_final_bare;  // the client-final message without ",p=proof"
  std::string strategy;           // how the last server-final message was signed (for reports)
  std::string server_final;       // the last one sent
};

std::vector<std::uint8_t> digest_of(const EVP_MD* md, std::span<const std::uint8_t> key,
                                    std::string_view data) {
  std::vector<std::uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned n = 0;
  if (HMAC(md, key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
           &n) == nullptr) {
    std::fprintf(stderr, "fuzz_hostile_server: HMAC failed\n");
    std::abort();
  }
  out.resize(n);
  return out;
}

// The server-final message for strategy `strategy` (0-7):
//   0 random bytes of the digest's size (`random`), a wrong signature
//   1 the signature with an all-zero salted password
//   2 the signature with the empty password (salted with the server's salt and count; an
//     all-zero salted password when the count is not one a server can afford)
//   3 e=, the server's error
//   4 a signature one byte short
//   5 the signature with an all-zero salted password and the other hash
//   6 an empty message
//   7 the all-zero signature, with an extension after it
std::string sign(conversation& c, int strategy, std::span<const std::uint8_t> random) {
  static constexpr const char* names[] = {
      "random", "zero-key",          "empty-password", "error", "short", "zero-key-other-hash",
      "empty",  "zero-key-extension"};
  c.strategy = names[strategy & 7];
  const bool sha1 = c.mechanism == "SCRAM-SHA-1";
  const EVP_MD* md = (sha1 != (strategy == 5)) ? EVP_sha1() : EVP_sha256();
  const std::size_t size = static_cast<std::size_t>(EVP_MD_get_size(md));
  std::vector<std::uint8_t> salted(size, 0);
  if (strategy == 2) {
    const auto salt = unbase64(attribute(c.server_first, 's').value_or(""));
    const std::uint64_t count = std::strtoull(
        std::string(attribute(c.server_first, 'i').value_or("0")).c_str(), nullptr, 10);
    // SCRAM-SHA-1 in MongoDB salts hex(md5(user ":mongo:" password)); SCRAM-SHA-256 the
    // SASLprep'd password, which for the empty password is empty.
    std::string password;
    if (sha1) {
      const std::string text = std::string(user_name) + ":mongo:";
      unsigned char md5[EVP_MAX_MD_SIZE];
      unsigned n = 0;
      if (EVP_Digest(text.data(), text.size(), md5, &n, EVP_md5(), nullptr) != 1) std::abort();
      static constexpr char hex[] = "0123456789abcdef";
      for (unsigned i = 0; i < n; ++i) {
        password += hex[md5[i] >> 4];
        password += hex[md5[i] & 15];
      }
    }
    if (count >= 1 && count <= max_cheap_iterations &&
        PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(),
                          static_cast<int>(salt.size()), static_cast<int>(count), md,
                          static_cast<int>(size), salted.data()) != 1) {
      std::fill(salted.begin(), salted.end(), 0);
    }
  }
  const std::string auth_message =
      c.client_first_bare + "," + c.server_first + "," + c.client_final_bare;
  const auto server_key = digest_of(md, salted, "Server Key");
  auto signature = digest_of(md, server_key, auth_message);
  switch (strategy & 7) {
  case 0: {
    std::vector<std::uint8_t> bytes(size, 0);
    std::copy_n(random.begin(), std::min(random.size(), size), bytes.begin());
    return "v=" + base64(bytes);
  }
  case 3: return "e=other-error";
  case 4: signature.pop_back(); return "v=" + base64(signature);
  case 6: return "";
  case 7: return "v=" + base64(signature) + ",x=1";
  default: return "v=" + base64(signature);
  }
}

// ---- Replies ----------------------------------------------------------------------------------

std::string command_name(document_view body) {
  const auto first = body.begin();
  return first == body.end() ? "" : std::string(first->key());
}

std::optional<std::string_view> payload_text(document_view doc) {
  const auto e = doc.find("payload");
  if (!e) return std::nullopt;
  if (auto b = e->get_binary()) {
    return std::string_view(reinterpret_cast<const char*>(b->bytes.data()), b->bytes.size());
  }
  if (auto s = e->get_string()) return *s;
  return std::nullopt;
}

void append_payload(builder& b, std::string_view text, bool as_string = false) {
  if (as_string) {
    b.append_string("payload", text);
  } else {
    b.append_binary("payload", oid::bson::binary_subtype::generic,
                    std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  }
}

// What the client's request says about its SCRAM conversation.
void observe_request(conversation& c, std::string_view name, document_view body) {
  auto client_first = [&](document_view d) {
    if (const auto m = d.find("mechanism")) c.mechanism = std::string(m->get_string().value_or(""));
    const auto text = payload_text(d);
    if (!text || !text->starts_with("n,,")) return;
    c.client_first_bare = std::string(text->substr(3));
    c.client_nonce = std::string(attribute(c.client_first_bare, 'r').value_or(""));
  };
  if (name == "hello" || name == "isMaster") {
    if (const auto s = body.find("speculativeAuthenticate")) {
      if (auto d = s->get_document()) client_first(*d);
    }
  } else if (name == "saslStart") {
    client_first(body);
  } else if (name == "saslContinue") {
    const auto text = payload_text(body).value_or("");
    c.client_final_bare = std::string(text.substr(0, std::min(text.find(",p="), text.size())));
  }
}

// What the server's reply says: the server-first message it sent, if any.
void observe_reply(conversation& c, std::span<const std::uint8_t> message) {
  const auto m = mongo::decode_op_msg(message);
  if (!m) return;
  auto look = [&](document_view d) {
    const auto text = payload_text(d);
    if (text && text->starts_with("r=")) c.server_first = std::string(*text);
    if (text && (text->starts_with("v=") || text->starts_with("e="))) {
      c.server_final = std::string(*text);
    }
  };
  look(m->body);
  if (const auto s = m->body.find("speculativeAuthenticate")) {
    if (auto d = s->get_document()) look(*d);
  }
}

std::int32_t pick_int32(reader& r) {
  static constexpr std::int32_t values[] = {0,
                                            1,
                                            -1,
                                            2,
                                            16,
                                            100,
                                            1000,
                                            100'000,
                                            16 * 1024 * 1024,
                                            16 * 1024 * 1024 + 16 * 1024,
                                            48'000'000,
                                            64 * 1024 * 1024,
                                            std::numeric_limits<std::int32_t>::max(),
                                            std::numeric_limits<std::int32_t>::min()};
  const std::uint8_t b = r.byte();
  if (b >= 0xF0) return static_cast<std::int32_t>(r.u32());
  return values[b % std::size(values)];
}

std::int64_t pick_int64(reader& r) {
  static constexpr std::int64_t values[] = {0,
                                            1,
                                            -1,
                                            42,
                                            std::numeric_limits<std::int64_t>::max(),
                                            std::numeric_limits<std::int64_t>::min(),
                                            std::int64_t{1} << 32};
  const std::uint8_t b = r.byte();
  if (b >= 0xF0) return static_cast<std::int64_t>(r.u64());
  return values[b % std::size(values)];
}

// A number as int32, int64 or double (the reply helpers take any of them), or a string.
void append_number(builder& b, std::string_view key, std::int64_t v, reader& r) {
  switch (r.byte() % 8) {
  case 0: b.append_int64(key, v); break;
  case 1: b.append_double(key, static_cast<double>(v)); break;
  case 2: b.append_string(key, std::to_string(v)); break;
  default: b.append_int32(key, static_cast<std::int32_t>(v)); break;
  }
}

std::string pick_name(reader& r) {
  static constexpr std::string_view names[] = {
      "fuzzdb", "fuzzcoll", "local", "config", "", "a/b", "..", "system.views", "a\0b", "x.y"};
  const std::uint8_t b = r.byte();
  if (b >= 0xE0) return r.text(r.byte() % 40);
  const auto n = names[b % std::size(names)];
  return std::string(n.data(), n.size());
}

// The fuzz input names hosts (a hello's member lists, raw replies), and a monitored topology
// connects to them: whatever it says, no packet may leave the machine. These two definitions take
// the place of the C library's in this program: connect() reaches loopback addresses (and Unix
// sockets) only, and getaddrinfo() resolves numeric addresses and "localhost" only, so that no
// name from the input becomes a DNS query.
extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  using real_connect = int (*)(int, const sockaddr*, socklen_t);
  static const auto real = reinterpret_cast<real_connect>(::dlsym(RTLD_NEXT, "connect"));
  bool local = false;
  if (addr != nullptr && addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in a{};
    std::memcpy(&a, addr, sizeof a);
    local = (ntohl(a.sin_addr.s_addr) >> 24) == 127;
  } else if (addr != nullptr && addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 a{};
    std::memcpy(&a, addr, sizeof a);
    local = IN6_IS_ADDR_LOOPBACK(&a.sin6_addr) ||
            (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr) && a.sin6_addr.s6_addr[12] == 127);
  } else if (addr != nullptr && addr->sa_family == AF_UNIX) {
    local = true;
  }
  if (!local || real == nullptr) {
    errno = ENETUNREACH;
    return -1;
  }
  return real(fd, addr, len);
}

extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints,
                           addrinfo** res) {
  using real_getaddrinfo = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
  static const auto real = reinterpret_cast<real_getaddrinfo>(::dlsym(RTLD_NEXT, "getaddrinfo"));
  if (real == nullptr) return EAI_FAIL;
  if (node == nullptr || std::strcmp(node, "localhost") == 0)
    return real(node, service, hints, res);
  addrinfo numeric = hints != nullptr ? *hints : addrinfo{};
  numeric.ai_flags |= AI_NUMERICHOST;
  return real(node, service, &numeric, res);
}

// The loopback port the server listens on, for the hosts a hello names.
std::uint16_t listen_port = 0;

std::string pick_host(reader& r) {
  const std::string port = std::to_string(listen_port);
  switch (r.byte() % 8) {
  case 0: return "localhost:" + port;
  case 1: return "127.0.0.1:1";  // nothing listens there
  case 2: return "[::1]:" + port;
  case 3: return "127.0.0.1";
  case 4: {  // another loopback address, another port: odd but never off the machine
    const unsigned b = r.byte(), c = r.byte(), d = r.byte();
    const unsigned p = r.byte() | static_cast<unsigned>(r.byte()) << 8;
    return "127." + std::to_string(b) + "." + std::to_string(c) + "." + std::to_string(d) + ":" +
           std::to_string(p);
  }
  default: return "127.0.0.1:" + port;
  }
}

void append_ok(builder& b, reader& r) {
  switch (r.byte() % 16) {
  case 0: b.append_int32("ok", 1); break;
  case 1: b.append_bool("ok", true); break;
  case 2: b.append_double("ok", 0.0); break;
  case 3: b.append_string("ok", "1"); break;
  case 4: break;
  default: b.append_double("ok", 1.0); break;
  }
}

// Fields servers add to every reply, sometimes.
void append_extras(builder& b, reader& r) {
  const std::uint8_t which = r.byte();
  if (which & 1) {
    b.open_document("$clusterTime")
        .append_timestamp("clusterTime", {r.u32(), r.u32()})
        .open_document("signature")
        .append_binary("hash", oid::bson::binary_subtype::generic, r.take(20))
        .append_int64("keyId", pick_int64(r))
        .close()
        .close();
  }
  if (which & 2) b.append_timestamp("operationTime", {r.u32(), r.u32()});
  if (which & 4) {
    b.open_document("writeConcernError")
        .append_int32("code", pick_int32(r))
        .append_string("errmsg", r.text(8))
        .close();
  }
  if (which & 8) {
    b.open_array("errorLabels").append_string("0", "RetryableWriteError").close();
  }
  if (which & 16) {
    b.open_document("topologyVersion")
        .append_object_id("processId", oid::object_id())
        .append_int64("counter", pick_int64(r))
        .close();
  }
}

void append_error(builder& b, reader& r) {
  static constexpr std::int32_t codes[] = {18,   11600, 10107, 13435, 91,   189, 262,
                                           43,   59,    11000, 13,    6,    7,   89,
                                           9001, 13436, 11602, 20,    8000, 0,   -1};
  b.append_double("ok", 0.0);
  const std::uint8_t b2 = r.byte();
  if (b2 & 1) b.append_int32("code", codes[r.byte() % std::size(codes)]);
  if (b2 & 2) b.append_string("codeName", r.text(r.byte() % 24));
  if (b2 & 4) b.append_string("errmsg", r.text(r.byte() % 64));
  if (b2 & 8) b.open_array("errorLabels").append_string("0", r.text(r.byte() % 24)).close();
}

std::string server_first(const conversation& c, reader& r) {
  std::string nonce;
  const std::uint8_t how = r.byte();
  switch (how % 16) {
  case 0: nonce = c.client_nonce; break;  // does not extend it
  case 1: nonce = r.text(r.byte() % 48); break;
  case 2: nonce = c.client_nonce.substr(0, c.client_nonce.size() / 2) + "x"; break;
  default: {
    nonce = c.client_nonce;
    const std::size_t n = 1 + r.byte() % 32;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t b = r.byte();
      nonce += (how & 0x80) != 0 ? static_cast<char>(b) : static_cast<char>(0x21 + b % 94);
    }
  }
  }
  std::string salt;
  const std::uint8_t s = r.byte();
  if (s >= 0xF8) {
    static constexpr const char* bad[] = {
        "", "a", "abc", "====", "QUJD=", "QUJDRA=A", "!!!!", "QUJDRA=="};
    salt = r.pick(bad);
  } else {
    salt = base64(r.take(s % 40));
  }
  static constexpr const char* counts[] = {
      "4096", "4096",   "10000",      "15000",      "4095",       "0",
      "1",    "100000", "2147483648", "4294967295", "4294967296", "3000000000",
      "-1",   "04096",  "",           "4096x",      "99999999999"};
  std::string count;
  const std::uint8_t i = r.byte();
  if (i >= 0xF0) {
    const std::uint32_t v = r.u32();
    count = std::to_string(v > max_cheap_iterations && v < 0x80000000u ? v % 20'000 : v);
  } else {
    count = counts[i % std::size(counts)];
  }
  std::string out = "r=" + nonce + ",s=" + salt + ",i=" + count;
  const std::uint8_t shape = r.byte();
  if (shape % 32 == 1) out = "s=" + salt + ",r=" + nonce + ",i=" + count;
  if (shape % 32 == 2) out += ",e=1";
  if (shape % 32 == 3) out += ",m=1";
  if (shape % 32 == 4) out += ",";
  if (shape % 32 == 5) out = "r=" + nonce + ",s=" + salt;
  return out;
}

void append_batch(builder& b, std::string_view key, std::string_view command, reader& r) {
  b.open_array(key);
  const std::uint8_t n = r.byte();
  const std::size_t count = n >= 0xF8 ? 500 + r.byte() : n % 8;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string k = std::to_string(i);
    const std::uint8_t shape = r.byte();
    if (shape >= 0xF8) {
      b.append_int32(k, 7);  // not a document
    } else if (shape >= 0xF0) {
      const auto rest = r.rest();
      const auto doc = oid::bson::validate_prefix(rest);
      if (doc) {
        b.append_document(k, *doc);
        (void)r.take(doc->size());
      } else {
        b.open_document(k).close();
      }
    } else if (command == "listCollections") {
      b.open_document(k)
          .append_string("name", pick_name(r))
          .append_string("type", (shape & 1) != 0 ? "view" : "collection")
          .open_document("options")
          .close()
          .open_document("info")
          .append_binary("uuid", oid::bson::binary_subtype::uuid, r.take(shape & 16))
          .close()
          .close();
    } else if (command == "listIndexes") {
      b.open_document(k)
          .append_int32("v", 2)
          .open_document("key")
          .append_int32("_id", 1)
          .close()
          .append_string("name", pick_name(r))
          .close();
    } else {
      b.open_document(k).append_int32("_id", static_cast<std::int32_t>(i));
      if (shape & 1) b.append_string("s", r.text(r.byte()));
      b.close();
    }
  }
  b.close();
}

document generated_reply(conversation& c, std::string_view name, document_view request,
                         int strategy, bool monitored, reader& r) {
  builder b;
  if (r.byte() % 16 == 15) {
    append_error(b, r);
    append_extras(b, r);
    return std::move(b).extract();
  }
  if (name == "hello" || name == "isMaster") {
    static constexpr std::int32_t wire[] = {6, 7, 8, 13, 17, 21, 25, 0, 5, -1, 1'000'000};
    b.append_bool("isWritablePrimary", (r.byte() & 1) == 0);
    append_number(b, "maxWireVersion", r.pick(wire), r);
    b.append_int32("minWireVersion", 0);
    const std::uint8_t fields = r.byte();
    if (fields & 1) b.append_int32("maxBsonObjectSize", pick_int32(r));
    if (fields & 2) b.append_int32("maxMessageSizeBytes", pick_int32(r));
    if (fields & 4) b.append_int32("maxWriteBatchSize", pick_int32(r));
    if (fields & 8) append_number(b, "logicalSessionTimeoutMinutes", pick_int64(r), r);
    if ((fields & 16) != 0 && !monitored) {
      b.append_string("setName", "rs0").open_array("hosts").append_string("0", pick_name(r));
      b.close();
    } else if (fields & 16) {
      // A replica set member: which set, which members (the client connects to those it
      // discovers: this server under other names, a closed port, names to resolve), which role.
      const std::uint8_t set = r.byte();
      b.append_string("setName", (set & 1) != 0 ? "rs0" : "other");
      if (set & 2) b.append_bool("secondary", true);
      if (set & 4) b.append_string("me", pick_host(r));
      if (set & 8) b.append_string("primary", pick_host(r));
      if (set & 16) b.append_int32("setVersion", pick_int32(r));
      if (set & 32) b.append_object_id("electionId", oid::object_id());
      b.open_array("hosts");
      const std::size_t n = 1 + r.byte() % 4;
      for (std::size_t i = 0; i < n; ++i) b.append_string(std::to_string(i), pick_host(r));
      b.close();
      if (set & 64) b.open_array("passives").append_string("0", pick_host(r)).close();
    }
    if (fields & 32) b.append_string("msg", "isdbgrid");
    if (fields & 64) b.append_int32("connectionId", pick_int32(r));
    if (request.contains("saslSupportedMechs")) {
      const std::uint8_t mechs = r.byte();
      b.open_array("saslSupportedMechs");
      int i = 0;
      for (const char* m : {"SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN", "junk"}) {
        if ((mechs >> i) & 1) b.append_string(std::to_string(i), m);
        ++i;
      }
      b.close();
    }
    if (request.contains("speculativeAuthenticate") && (fields & 128) != 0) {
      const std::string first = server_first(c, r);
      b.open_document("speculativeAuthenticate")
          .append_int32("conversationId", pick_int32(r))
          .append_bool("done", false);
      append_payload(b, first, (r.byte() & 0x0F) == 0);
      b.close();
    }
  } else if (name == "saslStart") {
    append_number(b, "conversationId", pick_int32(r), r);
    const std::uint8_t done = r.byte();
    const auto mechanism = request.find("mechanism");
    if (mechanism && mechanism->get_string().value_or("") == "PLAIN") {
      b.append_bool("done", (done & 1) == 0);
      append_payload(b, "");
    } else {
      b.append_bool("done", (done & 3) == 3);
      append_payload(b, server_first(c, r), (done & 0x10) != 0);
    }
  } else if (name == "saslContinue") {
    append_number(b, "conversationId", pick_int32(r), r);
    const std::uint8_t done = r.byte();
    b.append_bool("done", (done & 1) == 0);
    const auto random = r.take(32);
    if ((done & 0x20) == 0) append_payload(b, sign(c, strategy, random), (done & 0x10) != 0);
  } else if (name == "find" || name == "aggregate" || name == "listCollections" ||
             name == "listIndexes" || name == "getMore") {
    b.open_document("cursor");
    append_number(b, "id", pick_int64(r), r);
    b.append_string("ns", (r.byte() & 1) != 0 ? "fuzzdb.fuzzcoll" : pick_name(r));
    append_batch(b, name == "getMore" ? "nextBatch" : "firstBatch", name, r);
    b.close();
  } else if (name == "listDatabases") {
    b.open_array("databases");
    const std::size_t n = r.byte() % 6;
    for (std::size_t i = 0; i < n; ++i) {
      b.open_document(std::to_string(i))
          .append_string("name", pick_name(r))
          .append_int64("sizeOnDisk", pick_int64(r))
          .append_bool("empty", false)
          .close();
    }
    b.close();
    b.append_int64("totalSize", pick_int64(r));
  } else if (name == "count") {
    append_number(b, "n", pick_int64(r), r);
  }
  append_ok(b, r);
  append_extras(b, r);
  return std::move(b).extract();
}

// A fixed-up copy of a SCRAM payload, or nullopt to keep it.
std::optional<std::string> fixed_payload(conversation& c, std::string_view text, int kind,
                                         reader& random) {
  if ((kind & 0x20) != 0 && text.starts_with("r=")) {
    const std::size_t comma = std::min(text.find(','), text.size());
    const std::string_view recorded = text.substr(2, comma - 2);
    // The recorded nonce began with the recording client's nonce (32 base64 characters for
    // oid's 24 random bytes); the server's part follows.
    const std::string_view server_part = recorded.size() > 32 ? recorded.substr(32) : recorded;
    return "r=" + c.client_nonce + std::string(server_part) + std::string(text.substr(comma));
  }
  const int strategy = (kind >> 2) & 7;
  if (strategy != 0 && text.starts_with("v=")) return sign(c, strategy, random.take(32));
  return std::nullopt;
}

document fixed_document(conversation& c, document_view doc, int kind, reader& random, int depth) {
  builder b;
  for (const auto& e : doc) {
    if (e.key() == "payload") {
      const auto text = payload_text(doc);
      if (text) {
        if (auto fixed = fixed_payload(c, *text, kind, random)) {
          append_payload(b, *fixed, e.type() == oid::bson::type::string);
          continue;
        }
      }
    } else if (e.key() == "speculativeAuthenticate" && depth == 0) {
      if (auto d = e.get_document()) {
        const document inner = fixed_document(c, *d, kind, random, 1);
        b.append_document(e.key(), inner.view());
        continue;
      }
    }
    b.append_element(e);
  }
  return std::move(b).extract();
}

std::vector<std::uint8_t> message_of(std::int32_t request_id, std::int32_t response_to,
                                     document_view body) {
  mongo::op_msg m;
  m.request_id = request_id;
  m.response_to = response_to;
  m.body = body;
  auto bytes = mongo::encode_op_msg(m);
  return bytes ? std::move(*bytes) : std::vector<std::uint8_t>{};
}

std::vector<std::uint8_t> wrap_body(std::int32_t request_id, std::int32_t response_to,
                                    std::span<const std::uint8_t> body) {
  std::vector<std::uint8_t> out(21);
  const std::uint32_t length = static_cast<std::uint32_t>(out.size() + body.size());
  auto put = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  put(0, length);
  put(4, static_cast<std::uint32_t>(request_id));
  put(8, static_cast<std::uint32_t>(response_to));
  put(12, mongo::op_msg_opcode);
  put(16, 0);
  out[20] = 0;  // kind-0 section
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// Whether `bytes` is a run of whole messages (by their length prefixes): if not, the client
// would wait for the rest until its socket timeout, so the server closes instead.
bool whole_messages(std::span<const std::uint8_t> bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 4) return false;
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n |= std::uint32_t{bytes[pos + i]} << (8 * i);
    if (n < 16 || n > bytes.size() - pos) return false;
    pos += n;
  }
  return pos > 0;
}

// Whether `bytes` names an iteration count ("i=" and digits, as the client reads them) that
// would cost the client more than an execution may take.
bool costly_count(std::span<const std::uint8_t> bytes) {
  for (std::size_t p = 0; p + 2 < bytes.size(); ++p) {
    if (bytes[p] != 'i' || bytes[p + 1] != '=' || bytes[p + 2] < '1' || bytes[p + 2] > '9') {
      continue;
    }
    std::uint64_t v = 0;
    for (std::size_t q = p + 2;
         q < bytes.size() && q < p + 14 && bytes[q] >= '0' && bytes[q] <= '9'; ++q) {
      v = v * 10 + (bytes[q] - '0');
    }
    if (v > max_cheap_iterations && v < 0x80000000u) return true;
  }
  return false;
}

// ---- The server -------------------------------------------------------------------------------

bool send_all(int fd, std::span<const std::uint8_t> bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

class server {
 public:
  server() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listen_fd_ < 0 ||
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 64) != 0) {
      std::perror("fuzz_hostile_server: listen");
      std::abort();
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    // stop() writes a byte here, which wakes every poll at once.
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
      std::perror("fuzz_hostile_server: pipe");
      std::abort();
    }
  }
  std::uint16_t port() const { return port_; }
  // Whether every record has been used: the operations after that would only time out.
  bool exhausted() {
    const std::lock_guard lock(mutex_);
    return next_ >= script_->records.size() && upstream_.empty();
  }

  // Serves `s` until `stop()`.
  void start(const script& s, bool scram_checked, std::string upstream, std::string record_out) {
    script_ = &s;
    scram_checked_ = scram_checked;
    upstream_ = std::move(upstream);
    record_out_ = std::move(record_out);
    next_ = 0;
    std::uint8_t sink[16];
    while (::read(wake_[0], sink, sizeof sink) > 0) {
    }
    stop_ = false;
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  void stop() {
    stop_ = true;
    const std::uint8_t one = 1;
    (void)!::write(wake_[1], &one, 1);
    acceptor_.join();
    for (auto& t : handlers_) t.join();
    handlers_.clear();
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(p, 2, 100) <= 0 || (p[0].revents & POLLIN) == 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      handlers_.emplace_back([this, fd] {
        serve(fd);
        ::close(fd);
      });
    }
  }

  // Reads exactly `n` bytes; false when the peer closed, the test is over or 5 s passed.
  bool read_exact(int fd, std::uint8_t* out, std::size_t n) {
    std::size_t got = 0;
    int waited = 0;
    while (got < n) {
      pollfd p[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      const int ready = ::poll(p, 2, 100);
      if (ready < 0 || stop_ || (ready == 0 && (waited += 100) > 5000)) return false;
      if (ready == 0 || p[0].revents == 0) continue;
      const ssize_t r = ::recv(fd, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }

  std::optional<std::vector<std::uint8_t>> read_message(int fd) {
    std::vector<std::uint8_t> bytes(16);
    if (!read_exact(fd, bytes.data(), 16)) return std::nullopt;
    const auto h = mongo::decode_header(bytes, {.max_message_size = 64 * 1024 * 1024});
    if (!h) return std::nullopt;
    bytes.resize(static_cast<std::size_t>(h->message_length));
    if (!read_exact(fd, bytes.data() + 16, bytes.size() - 16)) return std::nullopt;
    return bytes;
  }

  std::optional<record> next_record() {
    const std::lock_guard lock(mutex_);
    if (next_ >= script_->records.size()) return std::nullopt;
    return script_->records[next_++];
  }

  void serve(int fd) {
    conversation c;
    int upstream = -1;
    if (!upstream_.empty()) upstream = connect_upstream();
    std::int32_t reply_id = 1'000'000;
    while (auto bytes = read_message(fd)) {
      const auto request = mongo::decode_op_msg(*bytes, {.max_message_size = 64 * 1024 * 1024});
      if (!request) break;
      const std::string name = command_name(request->body);
      observe_request(c, name, request->body);
      if (trace_) std::fprintf(stderr, "hostile: fd %d <- %s\n", fd, name.c_str());
      if (scram_checked_ && name != "hello" && name != "isMaster" && name != "saslStart" &&
          name != "saslContinue") {
        // The client must authenticate every connection with SCRAM before anything else, and
        // this server cannot pass SCRAM honestly: the client accepted what it must refuse.
        std::fprintf(stderr,
                     "fuzz_hostile_server: the client sent '%s' to a server that does not know "
                     "the password; this connection's SCRAM conversation (%s):\n"
                     "  server-first: %s\n  server-final: %s (strategy %s)\n",
                     name.c_str(), c.mechanism.empty() ? "none" : c.mechanism.c_str(),
                     c.server_first.c_str(), c.server_final.c_str(), c.strategy.c_str());
        __builtin_trap();
      }
      if ((request->flags & mongo::op_msg_flags::more_to_come) != 0) {
        if (upstream >= 0 && !send_all(upstream, *bytes)) break;
        continue;
      }
      std::vector<std::uint8_t> out;
      if (upstream >= 0) {
        if (!send_all(upstream, *bytes)) break;
        auto answer = read_message(upstream);
        if (!answer) break;
        out = std::move(*answer);
        record_reply(out);
      } else {
        auto rec = next_record();
        if (!rec || (rec->kind & 3) == 3) break;
        out = reply(c, *request, name, *rec, ++reply_id);
        if (costly_count(out)) break;
      }
      observe_reply(c, out);
      if (trace_) trace_reply(fd, out);
      if (!send_all(fd, out) || !whole_messages(out)) break;
    }
    if (upstream >= 0) ::close(upstream);
  }

  std::vector<std::uint8_t> reply(conversation& c, const mongo::op_msg& request,
                                  std::string_view name, const record& rec, std::int32_t reply_id) {
    reader r(rec.bytes);
    const int strategy = (rec.kind >> 2) & 7;
    switch (rec.kind & 3) {
    case 0: {
      const document body = generated_reply(c, name, request.body, strategy, script_->monitored, r);
      return message_of(reply_id, request.request_id, body.view());
    }
    case 1: {
      if (const auto doc = oid::bson::validate(rec.bytes)) {
        reader random(std::span<const std::uint8_t>{});
        const document body = fixed_document(c, *doc, rec.kind, random, 0);
        return message_of(reply_id, request.request_id, body.view());
      }
      return wrap_body(reply_id, request.request_id, rec.bytes);
    }
    default: {
      std::vector<std::uint8_t> out = rec.bytes;
      if ((rec.kind & 0x20) != 0 && out.size() >= 12) {
        for (int i = 0; i < 4; ++i) {
          out[8 + i] =
              static_cast<std::uint8_t>(static_cast<std::uint32_t>(request.request_id) >> (8 * i));
        }
      }
      return out;
    }
    }
  }

  static void trace_reply(int fd, std::span<const std::uint8_t> out) {
    const auto m = mongo::decode_op_msg(out);
    std::string text = m ? oid::bson::to_json(m->body, oid::bson::json_mode::relaxed)
                         : "(" + std::to_string(out.size()) + " bytes, not a message)";
    if (text.size() > 300) text = text.substr(0, 300) + "...";
    std::fprintf(stderr, "hostile: fd %d -> %s\n", fd, text.c_str());
  }

  int connect_upstream() {
    const std::size_t colon = upstream_.rfind(':');
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(upstream_.substr(colon + 1))));
    ::inet_pton(AF_INET, upstream_.substr(0, colon).c_str(), &addr.sin_addr);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      std::perror("fuzz_hostile_server: cannot connect to OID_HOSTILE_RECORD");
      std::exit(1);
    }
    return fd;
  }

  // Appends the body of `message` to the recording, as a record the replay fixes up.
  void record_reply(std::span<const std::uint8_t> message) {
    const auto m = mongo::decode_op_msg(message);
    if (!m) return;
    const std::lock_guard lock(mutex_);
    std::ofstream out(record_out_, std::ios::binary | std::ios::app);
    const std::size_t n = m->body.size();
    const char head[3] = {static_cast<char>(0x21), static_cast<char>(n & 0xFF),
                          static_cast<char>((n >> 8) & 0xFF)};
    if (n > 0xFFFF) return;
    out.write(head, 3);
    out.write(reinterpret_cast<const char*>(m->body.data()), static_cast<std::streamsize>(n));
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  const script* script_ = nullptr;
  bool scram_checked_ = false;
  std::string upstream_, record_out_;
  std::mutex mutex_;
  std::size_t next_ = 0;
  std::atomic<bool> stop_{false};
  const bool trace_ = std::getenv("OID_HOSTILE_TRACE") != nullptr;
  std::thread acceptor_;
  std::vector<std::thread> handlers_;
};

// ---- The client -------------------------------------------------------------------------------

std::string random_password() {
  std::random_device rd;
  std::string out;
  static constexpr char alphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int i = 0; i < 20; ++i) out += alphabet[rd() % (sizeof alphabet - 1)];
  return out;
}

mongo::find_options find_of(const script& s) {
  mongo::find_options o;
  o.batch_size = s.batch_size;
  return o;
}

struct runner {
  std::string password;
  std::string user;
  // Set by a timeout (no server to select, or one that stopped answering): what comes after
  // would wait as long again, so the execution ends there.
  mutable bool timed_out = false;

  // No error message may hold the password.
  void check(const mongo::failure& f) const {
    if (f.code == oid::mongo::errc::timeout) timed_out = true;
    if (!password.empty() && f.message.find(password) != std::string::npos) {
      std::fprintf(stderr, "fuzz_hostile_server: an error message holds the password: %s\n",
                   f.message.c_str());
      __builtin_trap();
    }
  }
  template <class T>
  bool ok(const mongo::outcome<T>& o) const {
    if (!o) check(o.error());
    return o.has_value();
  }

  void drain(mongo::outcome<mongo::cursor>&& cur) const {
    if (!ok(cur)) return;
    for (int i = 0; i < 5000; ++i) {
      auto more = cur->next();
      if (!ok(more) || !*more) return;
    }
  }

  void run(mongo::client& client, const script& s, server& srv) const {
    for (const int op : s.operations) {
      if (srv.exhausted() || timed_out) return;
      switch (op) {
      case 1: (void)ok(client.server()); break;
      case 2: drain(client.collection("fuzzdb", "fuzzcoll").find({}, find_of(s))); break;
      case 3: (void)ok(client.list_databases()); break;
      case 4: (void)ok(client.list_collections("fuzzdb")); break;
      case 5: dump(client, s); break;
      case 6: {
        builder ping;
        ping.append_int32("ping", 1);
        (void)ok(client.run_command("admin", ping.view()));
        break;
      }
      default: {
        auto coll = client.collection("fuzzdb", "fuzzcoll");
        (void)ok(coll.estimated_document_count());
        (void)ok(coll.list_indexes());
      }
      }
    }
  }

  // What `oid mongo dump` asks, a few databases and collections deep.
  void dump(mongo::client& client, const script& s) const {
    auto dbs = client.list_databases();
    if (!ok(dbs)) return;
    int db_count = 0;
    for (const auto& d : *dbs) {
      if (++db_count > 3 || timed_out) break;
      const auto n = d.view().find("name");
      const std::string db(n ? n->get_string().value_or("") : "");
      if (db.empty()) continue;
      auto colls = client.list_collections(db);
      if (!ok(colls)) return;
      int coll_count = 0;
      for (const auto& entry : *colls) {
        if (++coll_count > 3 || timed_out) break;
        const auto name = entry.view().find("name");
        const std::string coll(name ? name->get_string().value_or("") : "");
        if (coll.empty()) continue;
        auto c = client.collection(db, coll);
        (void)ok(c.list_indexes());
        (void)ok(c.estimated_document_count());
        drain(c.find({}, find_of(s)));
      }
    }
  }
};

std::string uri_of(const script& s, std::uint16_t port, const std::string& user,
                   const std::string& password) {
  std::string uri = "mongodb://";
  if (s.auth != auth_mode::none) uri += user + ":" + password + "@";
  uri += "127.0.0.1:" + std::to_string(port) +
         "/?connectTimeoutMS=300&socketTimeoutMS=300&serverSelectionTimeoutMS=";
  // Monitors need a moment for their first hello; a direct connection connects on demand.
  uri += s.monitored ? "100&replicaSet=rs0&heartbeatFrequencyMS=500" : "50&directConnection=true";
  switch (s.auth) {
  case auth_mode::sha1: uri += "&authMechanism=SCRAM-SHA-1"; break;
  case auth_mode::sha256: uri += "&authMechanism=SCRAM-SHA-256"; break;
  case auth_mode::plain: uri += "&authMechanism=PLAIN"; break;
  default: break;
  }
  if (!s.retry_reads) uri += "&retryReads=false";
  return uri;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static server srv;
  listen_port = srv.port();
  static const std::string password = random_password();
  const char* upstream = std::getenv("OID_HOSTILE_RECORD");
  const char* record_out = std::getenv("OID_HOSTILE_RECORD_OUT");
  const bool recording = upstream != nullptr && record_out != nullptr;

  const script s = parse_script(std::span(data, size));
  runner run;
  run.user = std::string(user_name);
  run.password = password;
  if (recording) {
    const char* u = std::getenv("OID_HOSTILE_RECORD_USER");
    const char* p = std::getenv("OID_HOSTILE_RECORD_PASSWORD");
    run.user = u != nullptr ? u : "";
    run.password = p != nullptr ? p : "";
    std::ofstream out(record_out, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(std::min<std::size_t>(size, 4)));
  }
  srv.start(s, !recording && is_scram(s.auth), recording ? upstream : "",
            recording ? record_out : "");
  {
    auto client = mongo::client::create(uri_of(s, srv.port(), run.user, run.password));
    if (!client) {
      std::fprintf(stderr, "fuzz_hostile_server: %s\n", client.error().message.c_str());
      std::abort();
    }
    run.run(*client, s, srv);
  }
  srv.stop();
  return 0;
}
