// What a cursor holds: its batch, its server cursor id and the connection it reads from. Shared by
// the cursor and the operations that open one (find, aggregate, listCollections).
#pragma once

#include <cstdint>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/outcome.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "mongo/detail/pool.hpp"

namespace oid::mongo::detail {

struct cursor_state {
  std::shared_ptr<client_state> client;
  std::optional<lease> conn;
  std::string db, coll;
  std::int64_t id = 0;
  std::int32_t batch_size = 0;
  bson::document reply;
  bson::document_iterator it, end;
  bson::document_view current;

  // Takes the cursor document of a find/getMore/aggregate reply. Failure: unexpected_reply.
  outcome<done> load(bson::document&& r, std::string_view batch_key);

  // Runs `cmd`, which opens a server cursor on `coll` (find, listCollections), on a connection
  // borrowed from `client`'s pool, and returns the state holding the first batch and, while the
  // server has more, that connection.
  static outcome<std::unique_ptr<cursor_state>> open(std::shared_ptr<client_state> client,
                                                     std::string db, std::string coll,
                                                     bson::document_view cmd,
                                                     std::int32_t batch_size);
};

}  // namespace oid::mongo::detail
