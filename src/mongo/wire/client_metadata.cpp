#include "mongo/wire/client_metadata.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <oid/bson/builder.hpp>
#include <utility>

#ifndef OID_MONGO_VERSION
#  define OID_MONGO_VERSION "unknown"
#endif

namespace oid::mongo::detail {
namespace {

// A variable's value when it is set and not empty.
std::optional<std::string> populated(const env_lookup& get, const char* name) {
  auto v = get(name);
  if (!v || v->empty()) return std::nullopt;
  return v;
}

// `text` as an int32, when it is one and nothing else (the specification's "expected type").
std::optional<std::int32_t> int32_of(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::int32_t n = 0;
  const char* end = text->data() + text->size();
  const auto [p, ec] = std::from_chars(text->data(), end, n);
  if (ec != std::errc() || p != end) return std::nullopt;
  return n;
}

// `s` cut to at most `n` bytes, not inside a UTF-8 character.
std::string cut_utf8(std::string_view s, std::size_t n) {
  if (s.size() <= n) return std::string(s);
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

// How much of the document to keep (the specification's truncation steps, in order).
struct shape {
  bool env_fields = true;                     // step 1 leaves env.name alone
  bool os_fields = true;                      // step 2 leaves os.type alone
  bool env = true;                            // step 3 omits env
  std::optional<std::size_t> platform_bytes;  // step 4 cuts platform
};

// A field's values joined: the driver's, then each wrapper's (those that set it), after '|'.
std::string joined(std::string first, std::span<const driver_info> wrappers,
                   std::string driver_info::*field) {
  for (const auto& w : wrappers) {
    if (!(w.*field).empty()) first += "|" + w.*field;
  }
  return first;
}

bson::document build(std::string_view app_name, std::span<const driver_info> wrappers,
                     const platform_facts& f, const shape& s) {
  bson::builder b;
  if (!app_name.empty()) b.open_document("application").append_string("name", app_name).close();
  b.open_document("driver")
      .append_string("name", joined("oid", wrappers, &driver_info::name))
      .append_string("version", joined(OID_MONGO_VERSION, wrappers, &driver_info::version))
      .close();
  b.open_document("os").append_string("type", f.os_type);
  if (s.os_fields) {
    if (!f.os_name.empty()) b.append_string("name", f.os_name);
    if (!f.os_architecture.empty()) b.append_string("architecture", f.os_architecture);
    if (!f.os_version.empty()) b.append_string("version", f.os_version);
  }
  b.close();
  const std::string platform = joined(f.platform, wrappers, &driver_info::platform);
  if (!s.platform_bytes) {
    b.append_string("platform", platform);
  } else if (*s.platform_bytes > 0) {
    b.append_string("platform", cut_utf8(platform, *s.platform_bytes));
  }
  const auto& e = f.env;
  if (s.env && (!e.name.empty() || (s.env_fields && !e.empty()))) {
    b.open_document("env");
    if (!e.name.empty()) b.append_string("name", e.name);
    if (s.env_fields) {
      if (e.timeout_sec) b.append_int32("timeout_sec", *e.timeout_sec);
      if (e.memory_mb) b.append_int32("memory_mb", *e.memory_mb);
      if (!e.region.empty()) b.append_string("region", e.region);
      if (!e.container_runtime.empty() || !e.container_orchestrator.empty()) {
        b.open_document("container");
        if (!e.container_runtime.empty()) b.append_string("runtime", e.container_runtime);
        if (!e.container_orchestrator.empty()) {
          b.append_string("orchestrator", e.container_orchestrator);
        }
        b.close();
      }
    }
    b.close();
  }
  return std::move(b).extract();
}

}  // namespace

platform_facts::environment detect_environment(const env_lookup& get, bool docker) {
  platform_facts::environment e;
  const auto aws_env = populated(get, "AWS_EXECUTION_ENV");
  const bool aws = (aws_env && aws_env->starts_with("AWS_Lambda_")) ||
                   populated(get, "AWS_LAMBDA_RUNTIME_API").has_value();
  const bool azure = populated(get, "FUNCTIONS_WORKER_RUNTIME").has_value();
  const bool gcp =
      populated(get, "K_SERVICE").has_value() || populated(get, "FUNCTION_NAME").has_value();
  const bool vercel = populated(get, "VERCEL").has_value();
  const int found = int{aws} + int{azure} + int{gcp} + int{vercel};
  // Vercel runs on AWS Lambda: the two together are Vercel; any other two name none.
  if (vercel && (found == 1 || (found == 2 && aws))) {
    e.name = "vercel";
    e.region = populated(get, "VERCEL_REGION").value_or("");
  } else if (found == 1 && aws) {
    e.name = "aws.lambda";
    e.region = populated(get, "AWS_REGION").value_or("");
    e.memory_mb = int32_of(populated(get, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"));
  } else if (found == 1 && azure) {
    e.name = "azure.func";
  } else if (found == 1 && gcp) {
    e.name = "gcp.func";
    e.memory_mb = int32_of(populated(get, "FUNCTION_MEMORY_MB"));
    e.timeout_sec = int32_of(populated(get, "FUNCTION_TIMEOUT_SEC"));
    e.region = populated(get, "FUNCTION_REGION").value_or("");
  }
  if (docker) e.container_runtime = "docker";
  if (populated(get, "KUBERNETES_SERVICE_HOST")) e.container_orchestrator = "kubernetes";
  return e;
}

platform_facts current_platform(const char* dockerenv) {
  platform_facts f;
  utsname u{};
  if (::uname(&u) == 0) {
    f.os_type = u.sysname;
    f.os_name = u.sysname;
    f.os_architecture = u.machine;
    f.os_version = u.release;
  }
  f.platform = "C++" + std::to_string(__cplusplus / 100 % 100);
#if defined(__clang__)
  f.platform += ", clang " __clang_version__;
#elif defined(__GNUC__)
  f.platform += ", gcc " __VERSION__;
#endif
  const env_lookup get = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  f.env = detect_environment(get, ::access(dockerenv, F_OK) == 0);
  return f;
}

bson::document build_client_metadata(std::string_view app_name,
                                     std::span<const driver_info> wrappers,
                                     const platform_facts& facts) {
  shape s;
  auto d = build(app_name, wrappers, facts, s);
  if (fits(d.view())) return d;
  // The specification's order: env's fields but its name, os's but its type, env, platform.
  for (bool shape::*step : {&shape::env_fields, &shape::os_fields, &shape::env}) {
    s.*step = false;
    d = build(app_name, wrappers, facts, s);
    if (fits(d.view())) return d;
  }
  // platform last: as much of it as the room left holds (an empty string is dropped).
  s.platform_bytes = 0;
  const auto without = build(app_name, wrappers, facts, s);
  if (!fits(without.view())) return without;
  // "platform" costs a type byte, its key and NUL, a length and a NUL: 15 bytes besides its text.
  const std::size_t room = client_metadata_limit - without.view().size();
  s.platform_bytes = room > 15 ? room - 15 : 0;
  return build(app_name, wrappers, facts, s);
}

client_metadata::client_metadata(std::string app_name, platform_facts facts)
    : app_name_(std::move(app_name)),
      facts_(std::move(facts)),
      current_(build_client_metadata(app_name_, {}, facts_)) {}

outcome<done> client_metadata::append(const driver_info& info) {
  for (const auto* field : {&info.name, &info.version, &info.platform}) {
    if (field->find('|') != std::string::npos) {
      return failure(errc::invalid_argument,
                     "driver info: '|' separates the wrapping libraries' names, versions and "
                     "platforms in the handshake, so none may hold it");
    }
  }
  if (info.name.empty()) return failure(errc::invalid_argument, "driver info: the name is empty");
  std::lock_guard lock(mutex_);
  for (const auto& w : wrappers_) {
    if (w == info) return done{};  // a library that wraps the same client twice counts once
  }
  wrappers_.push_back(info);
  auto d = build_client_metadata(app_name_, wrappers_, facts_);
  if (!fits(d.view())) {
    wrappers_.pop_back();
    return failure(errc::invalid_argument,
                   "driver info: the handshake's client metadata would exceed 512 bytes even "
                   "without platform, os and env details (name and version too long)");
  }
  current_ = std::move(d);
  return done{};
}

bson::document client_metadata::document() const {
  std::lock_guard lock(mutex_);
  return current_;
}

}  // namespace oid::mongo::detail
