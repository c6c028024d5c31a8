// Where the test data from outside the repository is: MongoDB's specification suites (the BSON
// corpus, the connection string tests) under ../shared/data, which the build passes as
// OID_SHARED_DIR (tests/CMakeLists.txt). Their text is CC BY-NC-SA: tests read it in place.
// A test that finds a suite missing ends with OID_SKIP_OR_FAIL_IN_CI (support/ci.hpp).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

namespace oid::testing {

/// The directory of one specification suite: "bson-corpus", "connection-string", "uri-options".
inline std::filesystem::path spec_data_dir(std::string_view suite) {
  return std::filesystem::path(OID_SHARED_DIR) / "data" / suite;
}

/// MongoDB's BSON corpus.
inline std::filesystem::path bson_corpus_dir() { return spec_data_dir("bson-corpus"); }

/// The .json files of `dir`, sorted by name, so that tests run in the same order everywhere;
/// none when the directory is missing.
inline std::vector<std::filesystem::path> json_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace oid::testing
