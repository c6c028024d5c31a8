// The handshake's `client` document (MongoDB's handshake specification): who the client is
// (driver "oid", its version, and the libraries that wrap it), where it runs (the OS, the
// compiler, a function-as-a-service platform, a container) and the application's name. Part of
// the wire layer: handshake.cpp sends what `client_metadata::document()` holds.
//
// `env` comes from the environment variables the specification names: AWS Lambda
// (AWS_EXECUTION_ENV starting "AWS_Lambda_", or AWS_LAMBDA_RUNTIME_API; region, memory_mb),
// Azure Functions (FUNCTIONS_WORKER_RUNTIME), Google Cloud Functions (K_SERVICE or FUNCTION_NAME;
// memory_mb, timeout_sec, region), Vercel (VERCEL; region). Variables of two platforms name none,
// except Vercel's with AWS's (Vercel runs on Lambda): Vercel. A number that is not an int32 is
// left out, never an error. `env.container`: runtime "docker" when /.dockerenv exists,
// orchestrator "kubernetes" when KUBERNETES_SERVICE_HOST is set. Nothing found: no `env`.
//
// The whole document stays within 512 bytes, its BSON overhead included: when it is larger, the
// fields of `env` but its name go, then the fields of `os` but its type, then `env`, and then
// `platform` is shortened (at a UTF-8 character boundary), in that order, as the specification
// says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <oid/bson/document.hpp>
#include <oid/mongo/handshake.hpp>
#include <oid/mongo/outcome.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo::detail {

/// The most bytes the `client` document may take (BSON included).
inline constexpr std::size_t client_metadata_limit = 512;

/// Where the client runs, as the handshake reports it.
struct platform_facts {
  std::string os_type = "unknown";                   ///< `uname -s`
  std::string os_name, os_architecture, os_version;  ///< empty: not sent
  std::string platform;  ///< the language and compiler ("C++20, gcc 12.2.0")
  /// `env`: a FaaS name and its fields, and the container; none of them: no `env`.
  struct environment {
    std::string name;  ///< "aws.lambda", "azure.func", "gcp.func", "vercel"; empty: none
    std::optional<std::int32_t> timeout_sec, memory_mb;
    std::string region;
    std::string container_runtime, container_orchestrator;  ///< "docker", "kubernetes"
    bool empty() const noexcept {
      return name.empty() && !timeout_sec && !memory_mb && region.empty() &&
             container_runtime.empty() && container_orchestrator.empty();
    }
  } env;
};

/// An environment variable's value, none when unset.
using env_lookup = std::function<std::optional<std::string>(const char* name)>;

/// The `env` the variables `get` gives describe, with `docker` saying whether /.dockerenv exists.
/// A variable set to the empty string counts as unset.
platform_facts::environment detect_environment(const env_lookup& get, bool docker);

/// This process's facts: uname(2), the compiler, and `detect_environment` over getenv(3) and
/// /.dockerenv (`dockerenv`: the file to look for, for tests).
platform_facts current_platform(const char* dockerenv = "/.dockerenv");

/// The `client` document for `app_name`, driver "oid" with the `wrappers`' names, versions and
/// platforms appended after '|' each, and `facts`, cut down to `client_metadata_limit` bytes as
/// the specification says. When even the smallest form is larger (wrappers' names and versions
/// too long), that smallest form is returned; `fits` says whether it fits.
bson::document build_client_metadata(std::string_view app_name,
                                     std::span<const driver_info> wrappers,
                                     const platform_facts& facts);

/// True when `d` is at most `client_metadata_limit` bytes.
inline bool fits(bson::document_view d) noexcept { return d.size() <= client_metadata_limit; }

/// A client's metadata, shared by its connection options: the application name, the wrapping
/// libraries appended at creation and later (`append`), and the document the next handshake
/// sends. Thread-safe.
class client_metadata {
 public:
  client_metadata(std::string app_name, platform_facts facts);

  /// Appends `info` unless an equal one was appended before (then nothing changes). Failures:
  /// invalid_argument when a field holds '|' (the separator) or the name is empty, or when the
  /// document could no longer fit in 512 bytes; nothing is appended then.
  outcome<done> append(const driver_info& info);
  /// The `client` document a new connection's handshake sends.
  bson::document document() const;

 private:
  const std::string app_name_;
  const platform_facts facts_;
  mutable std::mutex mutex_;
  std::vector<driver_info> wrappers_;
  bson::document current_;
};

}  // namespace oid::mongo::detail
