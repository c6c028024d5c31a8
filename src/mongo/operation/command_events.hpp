// Publishing the command monitoring events of one command: started on construction, then
// succeeded or failed; nothing at all when the client has no command listener.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <oid/bson/view.hpp>
#include <oid/mongo/command_event.hpp>
#include <oid/mongo/op_msg.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "mongo/wire/connection.hpp"

namespace oid::mongo::detail {

// A new operation id for command events: 1, 2, ... for the process (thread-safe).
std::int64_t next_operation_id() noexcept;

class command_monitor {
 public:
  // Publishes the started event of `cmd` and its document `sequences`, about to go to `address`
  // on `conn`. The event's command holds each sequence as an array field named by its
  // identifier, as the command monitoring specification asks (the wire splits them off).
  // `connection_id`: the pool's id of `conn`; `operation_id`: the operation's (see
  // `next_operation_id`); the server's ids come from `conn`'s handshake.
  command_monitor(const std::function<void(const command_event&)>& listener, const connection& conn,
                  std::string_view address, std::string_view db, bson::document_view cmd,
                  std::span<const document_sequence> sequences = {},
                  std::uint64_t connection_id = 0, std::int64_t operation_id = 0);
  void succeeded(bson::document_view reply);
  void failed(std::string_view why);

 private:
  std::chrono::microseconds elapsed() const;

  const std::function<void(const command_event&)>& listener_;
  std::string name_, db_, address_;
  std::int32_t request_id_ = 0;
  std::int64_t operation_id_ = 0;
  std::uint64_t connection_id_ = 0;
  std::optional<std::int64_t> server_connection_id_;
  std::optional<object_id> service_id_;
  bool sensitive_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace oid::mongo::detail
