// oid/mongo/command_event.hpp: the events of command monitoring, as values.
//
// A client with a command listener (`client_options::on_command`) publishes one started event
// before each command it sends and one succeeded or failed event after, as MongoDB's command
// logging and monitoring specification says. The commands and replies of authentication and user
// management (saslStart, saslContinue, authenticate, getnonce, createUser, updateUser, copydb*,
// and hello with speculativeAuthenticate) are replaced by empty documents: no secret leaves
// through a listener. The listener runs on the thread of the operation.
//
// Every event also says which operation and which connection it belongs to: `operation_id`, the
// same for every command of one operation (its retries, the batches of a bulk write, the getMores
// and killCursors of the cursor it opened); `connection_id`, the pool's id of the connection (as
// the pool events name it); `server_connection_id`, the server's id of it (its hello's
// `connectionId`, which the server's log shows); and `service_id` behind a load balancer.
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/bson/document.hpp>
#include <oid/objectid/object_id.hpp>
#include <optional>
#include <string>
#include <variant>

namespace oid::mongo {

/// A command is about to be sent.
struct command_started_event {
  std::string command_name;   ///< the command's first key ("find", "insert", ...)
  std::string database_name;  ///< the `$db` it runs on
  std::int32_t request_id = 0;
  std::string address;              ///< the server, "host:port"
  bson::document command;           ///< the command as sent (empty when redacted)
  std::int64_t operation_id = 0;    ///< shared by the commands of one operation (from 1)
  std::uint64_t connection_id = 0;  ///< the pool's id of the connection (pool events' id)
  /// The server's id of the connection (hello's connectionId), when the server gave one.
  std::optional<std::int64_t> server_connection_id{};
  /// Behind a load balancer (loadBalanced=true): the serviceId of the server behind it.
  std::optional<object_id> service_id{};
};

/// A command's reply said ok: 1.
struct command_succeeded_event {
  std::string command_name, database_name;
  std::int32_t request_id = 0;
  std::string address;
  std::chrono::microseconds duration{0};  ///< from sending to the whole reply
  bson::document reply;                   ///< the reply (empty when redacted)
  std::int64_t operation_id = 0;          ///< shared by the commands of one operation (from 1)
  std::uint64_t connection_id = 0;        ///< the pool's id of the connection (pool events' id)
  /// The server's id of the connection (hello's connectionId), when the server gave one.
  std::optional<std::int64_t> server_connection_id{};
  /// Behind a load balancer (loadBalanced=true): the serviceId of the server behind it.
  std::optional<object_id> service_id{};
};

/// A command failed: a transport error, or a reply with ok: 0.
struct command_failed_event {
  std::string command_name, database_name;
  std::int32_t request_id = 0;
  std::string address;
  std::chrono::microseconds duration{0};
  std::string failure;  ///< what went wrong (the server's message, or the transport error)
  std::int64_t operation_id = 0;    ///< shared by the commands of one operation (from 1)
  std::uint64_t connection_id = 0;  ///< the pool's id of the connection (pool events' id)
  /// The server's id of the connection (hello's connectionId), when the server gave one.
  std::optional<std::int64_t> server_connection_id{};
  /// Behind a load balancer (loadBalanced=true): the serviceId of the server behind it.
  std::optional<object_id> service_id{};
};

/// One command monitoring event.
using command_event =
    std::variant<command_started_event, command_succeeded_event, command_failed_event>;

/// True for the commands whose bodies and replies command events do not carry.
bool is_sensitive_command(std::string_view name, bool speculative_authenticate = false) noexcept;

}  // namespace oid::mongo
