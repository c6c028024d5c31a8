// The batched loader behind `oid mongo insert`, `import` and `restore`: documents in, one
// insert_many per batch (at most `max_documents` documents or `max_bytes` bytes; insert_many
// splits further by the server's limits), and for each batch what happened to each document, for
// the command to report in its own words (a line number, a file and offset, ...).
//
// Ordered loading stops at the first refused document (the documents after it in its batch are
// not written, and no later batch is sent); unordered loading goes on past refusals. A batch that
// fails as a whole (a transport error: nothing is known of what went in) stops loading either way,
// unless told to go on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <oid/bson/document.hpp>
#include <oid/mongo/collection.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace oid::cli {

/// A document the server refused.
struct refused_document {
  std::size_t index = 0;   ///< its index in the batch
  bool duplicate = false;  ///< a duplicate key (code 11000)
  std::string message;     ///< the server's message (not yet made printable)
};

/// What one batch did.
struct loaded_batch {
  std::span<const bson::document> documents;
  std::uint64_t bytes = 0;     ///< of the documents' BSON
  std::uint64_t inserted = 0;  ///< as the server reports (w: 0: the documents sent)
  std::vector<refused_document> refused;
  /// Ordered: the index of the first refused document; it and the documents after it are not
  /// written.
  std::optional<std::size_t> stopped_at;
  /// The batch failed as a whole (no write errors: a transport error, say): what happened to
  /// its documents is unknown. Loading stops (unless settings::stop_on_failure is false).
  const mongo::failure* failed = nullptr;

  /// Whether document `i` went in: not refused, before `stopped_at`, and the batch not failed.
  bool went_in(std::size_t i) const;
};

/// Loads documents into one collection in batches.
class batch_loader {
 public:
  struct settings {
    std::size_t max_documents = 1000;
    std::uint64_t max_bytes = 8 * 1024 * 1024;
    mongo::insert_options insert{};
    /// Whether a batch that fails as a whole stops loading (else the next batch is tried).
    bool stop_on_failure = true;
  };
  /// Called after each batch is sent, with the batch's documents in the order added.
  using report_fn = std::function<void(const loaded_batch&)>;

  batch_loader(mongo::collection coll, settings s, report_fn report)
      : coll_(std::move(coll)), settings_(std::move(s)), report_(std::move(report)) {}

  /// Adds a document; sends the batch when it is full. False once loading has stopped (the
  /// document is then dropped).
  bool add(bson::document doc);
  /// Sends the documents not sent yet. False when loading has stopped.
  bool flush();

  bool stopped() const noexcept { return stopped_; }
  /// The documents added and not yet sent: the next batch's indexes start at 0 with the first.
  std::size_t pending() const noexcept { return batch_.size(); }
  /// Totals over the batches sent.
  std::uint64_t inserted() const noexcept { return inserted_; }
  std::uint64_t refused() const noexcept { return refused_; }
  std::uint64_t sent() const noexcept { return sent_; }

 private:
  mongo::collection coll_;
  settings settings_;
  report_fn report_;
  std::vector<bson::document> batch_;
  std::uint64_t batch_bytes_ = 0;
  std::uint64_t inserted_ = 0, refused_ = 0, sent_ = 0;
  bool stopped_ = false;
};

}  // namespace oid::cli
