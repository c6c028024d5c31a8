// oid/mongo/command_event.hpp: the events of command monitoring, as values.
//
// A client with a command listener (`client_options::on_command`) publishes one started event
// before each command it sends and one succeeded or failed event after, as MongoDB's command
// logging and monitoring specification says. The commands and replies of authentication and user
// management (saslStart, saslContinue, authenticate, getnonce, createUser, updateUser, copydb*,
// and hello with speculativeAuthenticate) are replaced by empty documents: no secret leaves
// through a listener. The listener runs on the thread of the operation.
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/bson/document.hpp>
#include <string>
#include <variant>

namespace oid::mongo {

/// A command is about to be sent.
struct command_started_event {
  std::string command_name;   ///< the command's first key ("find", "insert", ...)
  std::string database_name;  ///< the `$db` it runs on
  std::int32_t request_id = 0;
  std::string address;     ///< the server, "host:port"
  bson::document command;  ///< the command as sent (empty when redacted)
};

/// A command's reply said ok: 1.
struct command_succeeded_event {
  std::string command_name, database_name;
  std::int32_t request_id = 0;
  std::string address;
  std::chrono::microseconds duration{0};  ///< from sending to the whole reply
  bson::document reply;                   ///< the reply (empty when redacted)
};

/// A command failed: a transport error, or a reply with ok: 0.
struct command_failed_event {
  std::string command_name, database_name;
  std::int32_t request_id = 0;
  std::string address;
  std::chrono::microseconds duration{0};
  std::string failure;  ///< what went wrong (the server's message, or the transport error)
};

/// One command monitoring event.
using command_event =
    std::variant<command_started_event, command_succeeded_event, command_failed_event>;

/// True for the commands whose bodies and replies command events do not carry.
bool is_sensitive_command(std::string_view name, bool speculative_authenticate = false) noexcept;

}  // namespace oid::mongo
