// The index of a cursor batch: where each of its documents is, recorded by the connection while it
// validates them (batch_check, connection::read_reply), kept with the received bytes
// (receive_buffer) and used by the cursor to step through the batch without reading each element
// again. Against a scripted server: the index lists exactly the batch's documents, goes with the
// bytes it describes and with no others, is used only for the batch it describes, and replies it
// cannot describe are read as before (or fail as before).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mongo/operation/cursor_state.hpp"
#include "mongo/wire/connection.hpp"
#include "mongo/wire/stream.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;
using bytes = std::vector<std::uint8_t>;

// Documents numbered from `first`: an int, a string with a non-ASCII letter, a boolean, a nested
// document and `pad` bytes of padding.
std::vector<document> numbered_docs(int first, int count, std::size_t pad = 0) {
  std::vector<document> out;
  for (int i = first; i < first + count; ++i) {
    builder b;
    b.append_int32("_id", i).append_string("name", "Zoë " + std::to_string(i));
    b.append_bool("even", i % 2 == 0).open_document("sub").append_double("x", i * 0.25).close();
    if (pad > 0) b.append_string("pad", std::string(pad, 'p'));
    out.push_back(std::move(b).extract());
  }
  return out;
}

// {cursor: {<key>: docs, id, ns}, ok: 1}, as servers send it; `id_first`: the id before the batch,
// which is then not the cursor's first element (a shape batch_check leaves to decoding).
document cursor_body(const std::vector<document>& docs, std::string_view key, std::int64_t id = 0,
                     bool id_first = false) {
  builder b;
  b.open_document("cursor");
  if (id_first) b.append_int64("id", id);
  b.open_array(key);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    b.append_document(std::to_string(i), docs[i].view());
  }
  b.close();
  if (!id_first) b.append_int64("id", id);
  b.append_string("ns", "db.c").close().append_double("ok", 1.0);
  return std::move(b).extract();
}

bytes encoded_reply(std::int32_t response_to, const document& body) {
  mongo::op_msg r;
  r.request_id = 7000 + response_to;
  r.response_to = response_to;
  r.body = body.view();
  return mongo::encode_op_msg(r).value();
}

// Answers `m` with `body` (a document the caller may have made for the call).
void answer(peer& p, const mongo::op_msg& m, const document& body) { p.reply(m, body.view()); }

// A reply to `response_to` whose batch of six documents has one, the fourth, that is not valid:
// a string that is not UTF-8.
bytes invalid_batch_reply(std::int32_t response_to, std::string_view key = "firstBatch",
                          std::int64_t id = 0) {
  bytes m = encoded_reply(response_to, cursor_body(numbered_docs(0, 6), key, id));
  const std::string_view zoe = "Zoë 3";
  const bytes needle(zoe.begin(), zoe.end());
  const auto at = std::search(m.begin(), m.end(), needle.begin(), needle.end());
  EXPECT_NE(at, m.end());
  at[2] = 0xFF;
  return m;
}

// Sends `m` in pieces of 100 KB, 2 ms apart: the client reads it in several pieces.
void send_slowly(peer& p, const bytes& m) {
  for (std::size_t at = 0; at < m.size();) {
    const std::size_t n = std::min<std::size_t>(100 * 1024, m.size() - at);
    p.send(bytes(m.begin() + static_cast<std::ptrdiff_t>(at),
                 m.begin() + static_cast<std::ptrdiff_t>(at + n)));
    at += n;
    std::this_thread::sleep_for(2ms);
  }
}

// Runs the command {<name>: 1} on `c`: the reply's body, a view into the connection's buffer.
oid::result<document_view> run(mongo::connection& c, std::string_view name) {
  builder b;
  b.append_int32(name, 1);
  return c.run_view("db", b.view());
}

mongo::host loopback(const script_server& server) {
  const auto address = server.address();
  const auto port = static_cast<std::uint16_t>(std::stoi(address.substr(address.find(':') + 1)));
  return mongo::host{mongo::host::kind::ipv4, "127.0.0.1", port};
}

// A connection to `server`, without a handshake (the script answers commands only).
mongo::connection connect(const script_server& server) {
  const auto h = loopback(server);
  auto s = mongo::detail::stream::connect(h, nullptr, 5s);
  EXPECT_TRUE(s.has_value()) << s.error().message;
  return mongo::connection(std::move(*s), h, 5s);
}

// `buf` holds the reply whose body is `body` (a view into `buf`): its index is complete and lists
// the documents of the batch `key`, where they are, and they are `want`.
void expect_indexed(const mongo::detail::receive_buffer& buf, document_view body,
                    std::string_view key, const std::vector<document>& want) {
  const auto batch = body.find("cursor")->get_document()->find(key)->get_array().value();
  EXPECT_EQ(buf.batch_offset(), static_cast<std::size_t>(batch.data() - buf.data()));
  const auto index = buf.batch();
  ASSERT_EQ(index.size(), want.size());
  std::size_t i = 0;
  for (const auto& e : batch) {
    const auto d = e.get_document().value();
    EXPECT_EQ(index[i].offset, static_cast<std::size_t>(d.data() - buf.data())) << i;
    EXPECT_EQ(index[i].size, d.size()) << i;
    EXPECT_EQ(d, want[i].view()) << i;
    ++i;
  }
}

void expect_no_index(const mongo::detail::receive_buffer& buf) {
  EXPECT_EQ(buf.batch_offset(), 0u);
  EXPECT_TRUE(buf.batch().empty());
}

TEST(MongoBatchIndexTest, AConnectionKeepsTheIndexOfABatchItCheckedWhole) {
  // Batches of more than 16 documents are indexed; a smaller one is read with the iterator.
  const auto tiny = numbered_docs(0, 16), small = numbered_docs(0, 17);
  const auto large = numbered_docs(100, 3000, 1000);  // about 3 MB: it arrives in many pieces
  const auto first_of_pair = numbered_docs(10, 18), second_of_pair = numbered_docs(40, 17);
  script_server server([&](peer& p, int) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name == "small") {
        answer(p, *m, cursor_body(small, "firstBatch"));
      } else if (name == "tiny") {
        answer(p, *m, cursor_body(tiny, "firstBatch"));
      } else if (name == "large") {
        send_slowly(p, encoded_reply(m->request_id, cursor_body(large, "nextBatch", 42)));
      } else if (name == "idFirst") {
        answer(p, *m, cursor_body(small, "firstBatch", 0, true));
      } else if (name == "pair") {
        // Two replies in one write: to this request and to the next one, which the client then
        // reads from what it received with the first.
        bytes both = encoded_reply(m->request_id, cursor_body(first_of_pair, "firstBatch"));
        const bytes second =
            encoded_reply(m->request_id + 1, cursor_body(second_of_pair, "nextBatch"));
        both.insert(both.end(), second.begin(), second.end());
        p.send(both);
      } else if (name == "second") {
        // Answered already.
      } else if (name == "invalid") {
        p.send(invalid_batch_reply(m->request_id));
      } else {
        answer(p, *m, ok_reply());
      }
    }
  });
  mongo::connection c = connect(server);
  mongo::detail::receive_buffer a, b, spare, d;

  auto r = run(c, "small");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(a);
  expect_indexed(a, *r, "firstBatch", small);

  r = run(c, "large");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(b);
  expect_indexed(b, *r, "nextBatch", large);

  // A buffer handed back to the connection comes without the index it had: `a`'s goes back (the
  // connection keeps it for the next reply) and comes out again before anything is read into it.
  c.take_reply(a);
  c.take_reply(spare);
  expect_no_index(spare);

  // A reply without a batch, one with 16 documents, and one whose batch batch_check does not
  // recognize: no index.
  r = run(c, "tiny");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(d);
  expect_no_index(d);
  r = run(c, "ping");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(d);
  expect_no_index(d);
  r = run(c, "idFirst");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(d);
  expect_no_index(d);

  // Two replies received in one read: each message's index, at offsets in its own buffer.
  r = run(c, "pair");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(a);
  expect_indexed(a, *r, "firstBatch", first_of_pair);
  r = run(c, "second");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(b);
  expect_indexed(b, *r, "nextBatch", second_of_pair);

  // An invalid document: the error (and where) decoding the whole reply reports.
  const auto want = mongo::decode_op_msg(invalid_batch_reply(0));
  ASSERT_FALSE(want.has_value());
  r = run(c, "invalid");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, want.error().code);
  EXPECT_EQ(r.error().offset, want.error().offset);
  EXPECT_TRUE(c.broken());
}

// Steps through the rest of `s`'s batch: the documents are `want`, at the addresses the reply
// `body` has them (the batch `key`).
void expect_batch(mongo::cursor_state& s, document_view body, std::string_view key,
                  const std::vector<document>& want) {
  const auto batch = body.find("cursor")->get_document()->find(key)->get_array().value();
  auto e = batch.begin();
  std::size_t i = 0;
  while (s.batch_left()) {
    ASSERT_TRUE(s.next_in_batch());
    const document_view d = s.current;
    ASSERT_LT(i, want.size());
    EXPECT_EQ(d, want[i].view()) << i;
    ASSERT_NE(e, batch.end());
    EXPECT_EQ(d.data(), e->get_document().value().data()) << i;
    ++e;
    ++i;
  }
  EXPECT_EQ(i, want.size());
}

TEST(MongoBatchIndexTest, ACursorUsesTheIndexOnlyForTheBatchItDescribes) {
  const auto docs = numbered_docs(0, 20), others = numbered_docs(100, 17);
  script_server server([&](peer& p, int) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name == "find") {
        answer(p, *m, cursor_body(docs, "firstBatch"));
      } else if (name == "idFirst") {
        answer(p, *m, cursor_body(docs, "firstBatch", 0, true));
      } else if (name == "twoBatches") {
        // The batch batch_check indexes (the cursor's first element) is not the one asked for.
        builder b;
        b.open_document("cursor").open_array("nextBatch");
        for (std::size_t i = 0; i < docs.size(); ++i) {
          b.append_document(std::to_string(i), docs[i].view());
        }
        b.close().open_array("firstBatch");
        for (std::size_t i = 0; i < others.size(); ++i) {
          b.append_document(std::to_string(i), others[i].view());
        }
        b.close().append_int64("id", 0).close().append_double("ok", 1.0);
        p.reply(*m, b.view());
      } else if (name == "empty") {
        answer(p, *m, cursor_body({}, "firstBatch"));
      }
    }
  });
  mongo::connection c = connect(server);
  mongo::cursor_state s;

  auto r = run(c, "find");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(s.received);
  ASSERT_TRUE(s.load(*r, "firstBatch").has_value());
  EXPECT_EQ(s.indexed.size(), docs.size());
  EXPECT_TRUE(s.it == s.end);
  expect_batch(s, *r, "firstBatch", docs);

  // The same reply copied out (load(document&&), as count_documents does): the iterator.
  ASSERT_TRUE(s.load(document(*r), "firstBatch").has_value());
  EXPECT_TRUE(s.indexed.empty());
  EXPECT_TRUE(s.batch_left());
  expect_batch(s, s.reply->view(), "firstBatch", docs);

  r = run(c, "idFirst");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(s.received);
  ASSERT_TRUE(s.load(*r, "firstBatch").has_value());
  EXPECT_TRUE(s.indexed.empty());
  expect_batch(s, *r, "firstBatch", docs);

  r = run(c, "twoBatches");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(s.received);
  EXPECT_NE(s.received.batch_offset(), 0u);  // for nextBatch
  ASSERT_TRUE(s.load(*r, "firstBatch").has_value());
  EXPECT_TRUE(s.indexed.empty());
  expect_batch(s, *r, "firstBatch", others);

  r = run(c, "empty");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  c.take_reply(s.received);
  EXPECT_NE(s.received.batch_offset(), 0u);
  ASSERT_TRUE(s.load(*r, "firstBatch").has_value());
  EXPECT_FALSE(s.batch_left());
}

// A cursor over many batches of several shapes and sizes: every document, in order, byte for byte.
// Batches the index describes (small, large, empty) and one it does not (the id first) alike.
TEST(MongoBatchIndexTest, ACursorReadsEveryDocumentOfEveryBatch) {
  struct batch {
    std::vector<document> docs;
    bool id_first = false;
  };
  std::vector<batch> batches;
  batches.push_back({numbered_docs(0, 101)});
  batches.push_back({numbered_docs(1000, 2500, 800)});  // 2 MB, in pieces
  batches.push_back({numbered_docs(5000, 7), true});
  batches.push_back({});
  batches.push_back({numbered_docs(6000, 1)});
  batches.push_back({numbered_docs(7000, 40, 3000)});
  script_server server([&](peer& p, int) {
    if (!p.handshake()) return;
    std::size_t sent = 0;
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name != "find" && name != "getMore") {
        answer(p, *m, ok_reply());
        continue;
      }
      const batch& next = batches.at(sent++);
      const std::int64_t id = sent < batches.size() ? 42 : 0;
      const document body =
          cursor_body(next.docs, name == "find" ? "firstBatch" : "nextBatch", id, next.id_first);
      send_slowly(p, encoded_reply(m->request_id, body));
    }
  });
  auto client = mongo::client::create(server.uri()).value();
  auto cur = client.collection("db", "c").find({});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  std::size_t n = 0;
  for (const auto& b : batches) {
    for (const auto& want : b.docs) {
      ASSERT_TRUE(cur->alive());
      auto more = cur->next();
      ASSERT_TRUE(more.has_value()) << more.error().message;
      ASSERT_TRUE(*more) << "document " << n;
      EXPECT_EQ(cur->current(), want.view()) << "document " << n;
      ++n;
    }
  }
  auto more = cur->next();
  ASSERT_TRUE(more.has_value()) << more.error().message;
  EXPECT_FALSE(*more);
  EXPECT_FALSE(cur->alive());
  EXPECT_EQ(cur->id(), 0);
}

// A getMore reply with an invalid document fails the cursor with decoding's error, after every
// document of the batches before it.
TEST(MongoBatchIndexTest, ABatchWithAnInvalidDocumentFailsAsBefore) {
  const auto first = numbered_docs(0, 3);
  script_server server([&](peer& p, int) {
    if (!p.handshake()) return;
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name == "find") {
        answer(p, *m, cursor_body(first, "firstBatch", 42));
      } else if (name == "getMore") {
        p.send(invalid_batch_reply(m->request_id, "nextBatch", 42));
      } else {
        answer(p, *m, ok_reply());
      }
    }
  });
  const auto want = mongo::decode_op_msg(invalid_batch_reply(0, "nextBatch", 42));
  ASSERT_FALSE(want.has_value());
  auto client = mongo::client::create(server.uri()).value();
  auto cur = client.collection("db", "c").find({});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  for (const auto& d : first) {
    auto more = cur->next();
    ASSERT_TRUE(more.has_value() && *more);
    EXPECT_EQ(cur->current(), d.view());
  }
  auto more = cur->next();
  ASSERT_FALSE(more.has_value());
  EXPECT_EQ(more.error().code, want.error().code) << more.error().message;
  EXPECT_FALSE(cur->alive());
}

}  // namespace
