#include "mongo/loader.hpp"

#include <algorithm>
#include <oid/mongo/server_codes.hpp>

namespace oid::cli {

bool loaded_batch::went_in(std::size_t i) const {
  if (failed != nullptr || (stopped_at && i >= *stopped_at)) return false;
  return std::none_of(refused.begin(), refused.end(),
                      [i](const refused_document& r) { return r.index == i; });
}

bool batch_loader::add(bson::document doc) {
  if (stopped_) return false;
  batch_bytes_ += doc.size();
  batch_.push_back(std::move(doc));
  if (batch_.size() >= settings_.max_documents || batch_bytes_ >= settings_.max_bytes) {
    return flush();
  }
  return true;
}

bool batch_loader::flush() {
  if (stopped_) return false;
  if (batch_.empty()) return true;
  std::vector<bson::document_view> views;
  views.reserve(batch_.size());
  for (const auto& d : batch_) views.push_back(d.view());
  const bool w0 = !settings_.insert.write_concern.is_acknowledged();
  auto r = coll_.insert_many(views, settings_.insert);
  loaded_batch done;
  done.documents = batch_;
  done.bytes = batch_bytes_;
  if (r) {
    done.inserted = w0 ? batch_.size() : static_cast<std::uint64_t>(r->inserted);
  } else {
    const mongo::failure& f = r.error();
    done.inserted = static_cast<std::uint64_t>(std::max<std::int64_t>(0, f.written));
    if (f.write_errors.empty()) {
      done.failed = &f;
      stopped_ = settings_.stop_on_failure;
    }
    for (const auto& e : f.write_errors) {
      // An index outside the batch (a hostile or confused server) is the batch's last document.
      const std::size_t i = std::min(e.index.value_or(0), batch_.size() - 1);
      done.refused.push_back({i, e.code == mongo::server_code::duplicate_key, e.message});
    }
    if (settings_.insert.ordered && !done.refused.empty()) {
      done.stopped_at = done.refused.front().index;
      stopped_ = true;
    }
  }
  sent_ += batch_.size();
  inserted_ += done.inserted;
  refused_ += done.refused.size();
  if (report_) report_(done);
  batch_.clear();
  batch_bytes_ = 0;
  return !stopped_;
}

}  // namespace oid::cli
