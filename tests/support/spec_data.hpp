// Where the test data from outside the repository is: MongoDB's specification suites (the BSON
// corpus, the connection string tests, SDAM, ...), which scripts/spec-data.sh fetches from a
// package registry at a pinned version, checks by hash and unpacks into build/spec-data. The build
// passes that directory as OID_SPEC_DATA_DIR (CMakeLists.txt); the environment variable of the
// same name, when set, overrides it at run time. Tests read the files in place: none is in the
// repository. A test that finds a suite missing ends with OID_SKIP_OR_FAIL_IN_CI (support/ci.hpp).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

namespace oid::testing {

/// The directory scripts/spec-data.sh unpacked into: $OID_SPEC_DATA_DIR, else the build's.
inline std::filesystem::path spec_data_root() {
  const char* env = std::getenv("OID_SPEC_DATA_DIR");
  return std::filesystem::path(env != nullptr && *env != '\0' ? env : OID_SPEC_DATA_DIR);
}

/// The directory of one specification suite: "bson-corpus", "connection-string", "uri-options".
inline std::filesystem::path spec_data_dir(std::string_view suite) {
  return spec_data_root() / suite;
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
