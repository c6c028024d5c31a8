#include "mongo/operation/command_events.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <oid/bson/builder.hpp>
#include <string>

#include "detail/ascii.hpp"

namespace oid::mongo {

bool is_sensitive_command(std::string_view name, bool speculative_authenticate) noexcept {
  constexpr std::array<std::string_view, 9> names = {
      "authenticate", "saslstart",      "saslcontinue",    "getnonce", "createuser",
      "updateuser",   "copydbgetnonce", "copydbsaslstart", "copydb"};
  const std::string lower = oid::detail::lower_ascii(name);
  if (std::find(names.begin(), names.end(), lower) != names.end()) return true;
  return speculative_authenticate && (lower == "hello" || lower == "ismaster");
}

namespace detail {

std::int64_t next_operation_id() noexcept {
  static std::atomic<std::int64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

command_monitor::command_monitor(const std::function<void(const command_event&)>& listener,
                                 const connection& conn, std::string_view address,
                                 std::string_view db, bson::document_view cmd,
                                 std::span<const document_sequence> sequences,
                                 std::uint64_t connection_id, std::int64_t operation_id)
    : listener_(listener) {
  if (!listener_) return;
  operation_id_ = operation_id;
  connection_id_ = connection_id;
  server_connection_id_ = conn.server().connection_id;
  service_id_ = conn.server().service_id;
  const auto first = cmd.begin();
  name_ = first == cmd.end() ? "" : std::string(first->key());
  db_ = std::string(db);
  address_ = std::string(address);
  request_id_ = conn.next_request_id();
  sensitive_ = is_sensitive_command(name_, cmd.find("speculativeAuthenticate").has_value());
  started_ = std::chrono::steady_clock::now();
  bson::document command;
  if (!sensitive_) {
    // The command as the server receives it: with `$db`, which the OP_MSG writer appends as it
    // sends, and the document sequences as arrays.
    bson::builder b(cmd.size() + db.size() + 16);
    b.append_elements(cmd);
    if (!cmd.contains("$db")) b.append_string("$db", db);
    for (const auto& seq : sequences) {
      b.open_array(seq.identifier);
      std::size_t i = 0;
      for (const auto& doc : seq.documents) b.append_document(std::to_string(i++), doc);
      b.close();
    }
    command = std::move(b).extract();
  }
  listener_(command_started_event{name_, db_, request_id_, address_, std::move(command),
                                  operation_id_, connection_id_, server_connection_id_,
                                  service_id_});
}

std::chrono::microseconds command_monitor::elapsed() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               started_);
}

void command_monitor::succeeded(bson::document_view reply) {
  if (!listener_) return;
  listener_(command_succeeded_event{name_, db_, request_id_, address_, elapsed(),
                                    sensitive_ ? bson::document() : bson::document(reply),
                                    operation_id_, connection_id_, server_connection_id_,
                                    service_id_});
}

void command_monitor::failed(std::string_view why) {
  if (!listener_) return;
  listener_(command_failed_event{name_, db_, request_id_, address_, elapsed(),
                                 sensitive_ ? std::string() : std::string(why), operation_id_,
                                 connection_id_, server_connection_id_, service_id_});
}

}  // namespace detail
}  // namespace oid::mongo
