// canned_server: a loopback MongoDB server that answers DriverBench's commands from prepared
// replies, so that the client, not the server, is what a benchmark measures. It stores nothing.
//
//   canned_server [--port P] [--docs N] [--data DIR]
//
// It listens on 127.0.0.1:P (0, the default: a free port), prints mongodb://127.0.0.1:PORT/ on
// stdout once it accepts connections, and serves each connection on a thread of its own until
// the peer closes it. What it answers:
//
//   hello, isMaster, ismaster  a standalone server (wire versions 0-17, the usual size limits,
//                              logical sessions) over OP_MSG, or OP_REPLY for a legacy OP_QUERY
//                              handshake (libmongoc, the Go driver and PyMongo start that way)
//   insert                     {n: <documents received>, ok: 1}, from a kind-1 section or the
//                              command's `documents` array
//   find                       with a non-empty filter: one tweet and cursor id 0 (find one by
//                              _id); with an empty one: a cursor over N tweets (--docs, default
//                              10,000), a first batch of 101 as mongod sends it
//   getMore                    the next batch of that cursor, as many tweets as fit in 16 MiB
//   killCursors                forgets the connection's cursor
//   listCollections            no collections (PyMongo asks before `create`)
//   cannedStats                {inserted: <documents received since the last drop, create or
//                              dropDatabase>, ok: 1}: the check of scripts/bench-client.sh
//   anything else              {ok: 1}
//
// Every reply body is built once (batches on first use, then kept) and sent with writev behind a
// fresh 21-byte header, so a reply costs the server a syscall and no copy. Requests are decoded
// with oid's decode_op_msg. A request it cannot read ends that connection (and says so on stderr).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/validate.hpp>
#include <oid/mongo/op_msg.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

namespace {

namespace ob = oid::bson;
namespace om = oid::mongo;

using bytes = std::vector<std::uint8_t>;

constexpr std::int32_t op_reply = 1;
constexpr std::int32_t op_query = 2004;
constexpr std::int64_t live_cursor = 1;  // each connection has at most one cursor: its id is 1
constexpr std::int32_t first_batch_size = 101;
constexpr std::size_t batch_bytes = 16 * 1024 * 1024 - 16 * 1024;

[[noreturn]] void die(const std::string& what) {
  std::cerr << "canned_server: " << what << '\n';
  std::exit(1);
}

void put_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint32_t get_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

// The replies that do not depend on the request, and the batches, built on first use.
class replies {
 public:
  replies(ob::document tweet, std::int64_t docs) : docs_(docs) {
    ob::builder h;
    h.append_bool("helloOk", true)
        .append_bool("ismaster", true)
        .append_bool("isWritablePrimary", true)
        .append_int32("maxBsonObjectSize", 16 * 1024 * 1024)
        .append_int32("maxMessageSizeBytes", 48'000'000)
        .append_int32("maxWriteBatchSize", 100'000)
        .append_date_time("localTime", 1'700'000'000'000)
        .append_int32("logicalSessionTimeoutMinutes", 30)
        .append_int32("connectionId", 1)
        .append_int32("minWireVersion", 0)
        .append_int32("maxWireVersion", 17)
        .append_bool("readOnly", false)
        .append_double("ok", 1);
    hello = std::move(h).extract();
    ob::builder ok_reply;
    ok_reply.append_double("ok", 1);
    ok = std::move(ok_reply).extract();
    // The tweet with an _id first, as a stored document has it.
    ob::builder t;
    t.append_int32("_id", 1);
    for (const ob::element& e : tweet.view()) {
      if (e.key() != "_id") t.append_element(e);
    }
    tweet_ = std::move(t).extract();
    per_batch_ = static_cast<std::int64_t>(batch_bytes / (tweet_.view().size() + 8));
    one_tweet = cursor_reply("firstBatch", 1, 0);
    ob::builder none;
    none.open_document("cursor").open_array("firstBatch").close();
    none.append_int64("id", 0).append_string("ns", "perftest.$cmd.listCollections").close();
    none.append_double("ok", 1);
    no_collections = std::move(none).extract();
  }

  // {cursor: {<field>: [n tweets], id, ns}, ok: 1}, kept for the next time.
  std::shared_ptr<const ob::document> batch(std::string_view field, std::int64_t n, bool more) {
    const std::lock_guard lock(mutex_);
    auto& slot = batches_[{std::string(field), n, more}];
    if (!slot)
      slot = std::make_shared<ob::document>(cursor_reply(field, n, more ? live_cursor : 0));
    return slot;
  }

  std::int64_t docs() const noexcept { return docs_; }
  std::int64_t per_batch() const noexcept { return per_batch_; }

  ob::document hello, ok, one_tweet, no_collections;
  std::atomic<std::int64_t> inserted{0};

 private:
  ob::document cursor_reply(std::string_view field, std::int64_t n, std::int64_t id) const {
    ob::builder b;
    b.open_document("cursor").open_array(field);
    for (std::int64_t i = 0; i < n; ++i) b.append_document(std::to_string(i), tweet_.view());
    b.close().append_int64("id", id).append_string("ns", "perftest.corpus").close();
    b.append_double("ok", 1);
    return std::move(b).extract();
  }

  std::int64_t docs_;
  std::int64_t per_batch_ = 1;
  ob::document tweet_;
  std::mutex mutex_;
  std::map<std::tuple<std::string, std::int64_t, bool>, std::shared_ptr<const ob::document>>
      batches_;
};

bool read_full(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, iovec* iov, int count) {
  while (count > 0) {
    ssize_t sent = ::writev(fd, iov, count);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    while (count > 0 && static_cast<std::size_t>(sent) >= iov->iov_len) {
      sent -= static_cast<ssize_t>(iov->iov_len);
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<std::uint8_t*>(iov->iov_base) + sent;
      iov->iov_len -= static_cast<std::size_t>(sent);
    }
  }
  return true;
}

// Sends `body` as an OP_MSG reply (or OP_REPLY to a legacy query) to request `to`.
bool send_reply(int fd, std::int32_t to, bool legacy, ob::document_view body) {
  static std::atomic<std::int32_t> next_id{1};
  std::uint8_t head[36] = {};
  const std::size_t head_size = legacy ? 36 : 21;
  put_le32(head, static_cast<std::uint32_t>(head_size + body.size()));
  put_le32(head + 4, static_cast<std::uint32_t>(next_id.fetch_add(1)));
  put_le32(head + 8, static_cast<std::uint32_t>(to));
  put_le32(head + 12, static_cast<std::uint32_t>(legacy ? op_reply : om::op_msg_opcode));
  if (legacy) put_le32(head + 32, 1);  // numberReturned; flags, cursorID and startingFrom are 0
  iovec iov[2] = {{head, head_size},
                  {const_cast<std::uint8_t*>(body.data()), body.size()}};  // writev does not write
  return write_all(fd, iov, 2);
}

std::int64_t count_elements(ob::document_view d) {
  std::int64_t n = 0;
  for ([[maybe_unused]] const ob::element& e : d) ++n;
  return n;
}

// Serves one connection until the peer closes it or sends what cannot be read.
void serve(int fd, replies* r) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  bytes msg;
  std::int64_t remaining = 0;  // documents the connection's cursor has still to send
  std::uint8_t head[16];
  while (read_full(fd, head, sizeof head)) {
    const std::uint32_t length = get_le32(head);
    const auto request_id = static_cast<std::int32_t>(get_le32(head + 4));
    const auto op_code = static_cast<std::int32_t>(get_le32(head + 12));
    if (length < 16 || length > 48'000'000) break;
    msg.resize(length);
    std::memcpy(msg.data(), head, sizeof head);
    if (!read_full(fd, msg.data() + 16, length - 16)) break;

    if (op_code == op_query) {
      // flags, fullCollectionName (a C string), numberToSkip, numberToReturn, then the query.
      const auto name_end = std::find(msg.begin() + 20, msg.end(), std::uint8_t{0});
      const std::size_t at = static_cast<std::size_t>(name_end - msg.begin()) + 1 + 8;
      if (at >= msg.size()) break;
      // Only the handshake comes this way: any valid query gets the hello reply.
      if (!ob::validate_prefix(std::span(msg).subspan(at))) break;
      if (!send_reply(fd, request_id, true, r->hello.view())) break;
      continue;
    }
    if (op_code != om::op_msg_opcode) {
      std::cerr << "canned_server: opCode " << op_code << " is not served\n";
      break;
    }
    auto m = om::decode_op_msg(msg);
    if (!m) {
      std::cerr << "canned_server: unreadable OP_MSG (" << m.error().message() << " at "
                << m.error().offset << ")\n";
      break;
    }
    const ob::document_view body = m->body;
    const std::string_view command = body.empty() ? "" : (*body.begin()).key();
    const bool no_reply = (m->flags & om::op_msg_flags::more_to_come) != 0;

    ob::document built;  // a reply made for this request
    std::shared_ptr<const ob::document> kept;
    ob::document_view reply = r->ok.view();
    if (command == "hello" || command == "isMaster" || command == "ismaster") {
      reply = r->hello.view();
    } else if (command == "insert") {
      std::int64_t n = 0;
      for (const auto& s : m->sequences) {
        if (s.identifier == "documents") n += static_cast<std::int64_t>(s.documents.size());
      }
      if (auto docs = body.find("documents")) {
        if (auto a = docs->get_array()) n += count_elements(*a);
      }
      r->inserted += n;
      ob::builder b;
      b.append_int32("n", static_cast<std::int32_t>(n)).append_double("ok", 1);
      built = std::move(b).extract();
      reply = built.view();
    } else if (command == "find") {
      const auto filter = body.find("filter");
      const bool by_id = filter && filter->get_document() && !filter->get_document()->empty();
      if (by_id) {
        reply = r->one_tweet.view();
      } else {
        const std::int64_t n = std::min<std::int64_t>(first_batch_size, r->docs());
        remaining = r->docs() - n;
        kept = r->batch("firstBatch", n, remaining > 0);
        reply = kept->view();
      }
    } else if (command == "getMore") {
      const std::int64_t n = std::min(remaining, r->per_batch());
      remaining -= n;
      kept = r->batch("nextBatch", n, remaining > 0);
      reply = kept->view();
    } else if (command == "killCursors") {
      remaining = 0;
    } else if (command == "listCollections") {
      reply = r->no_collections.view();
    } else if (command == "cannedStats") {
      ob::builder b;
      b.append_int64("inserted", r->inserted.load()).append_double("ok", 1);
      built = std::move(b).extract();
      reply = built.view();
    } else if (command == "drop" || command == "create" || command == "dropDatabase") {
      r->inserted = 0;
    }
    if (!no_reply && !send_reply(fd, request_id, false, reply)) break;
  }
  ::close(fd);
}

ob::document read_tweet(const std::string& dir) {
  const std::string path = dir + "/tweet.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto doc = ob::from_json(text);
  if (!doc) die(path + ": not Extended JSON (offset " + std::to_string(doc.error().offset) + ")");
  return std::move(*doc);
}

long number(const char* flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 100'000'000) {
    std::cerr << "canned_server: " << flag << " wants a number, not \"" << text << "\"\n";
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  long port = 0, docs = 10'000;
  std::string data = OID_SPEC_DATA_DIR "/driverbench/single_and_multi_document";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "canned_server: unknown argument or missing value: " << a << '\n';
      return 2;
    }
    if (a == "--port")
      port = number("--port", argv[++i]);
    else if (a == "--docs")
      docs = number("--docs", argv[++i]);
    else if (a == "--data")
      data = argv[++i];
    else {
      std::cerr << "canned_server: unknown argument " << a << '\n';
      return 2;
    }
  }
  auto* r = new replies(read_tweet(data), docs);  // lives as long as the process

  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) die(std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 64) != 0) {
    die("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
  }
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::cout << "mongodb://127.0.0.1:" << ntohs(addr.sin_port) << "/" << std::endl;
  while (true) {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      die(std::string("accept: ") + std::strerror(errno));
    }
    std::thread(serve, fd, r).detach();
  }
}
