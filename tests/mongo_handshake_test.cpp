// The handshake's client metadata (src/mongo/wire/client_metadata.hpp): the FaaS and container
// detection of the handshake specification's prose test 1, from this process's real environment
// variables (set for each case and restored after it), the 512-byte limit with its truncation
// order, and what wrapping libraries append. What a connection sends: mongo_wire_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <oid/bson/json_writer.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mongo/wire/client_metadata.hpp"

namespace {

namespace mongo = oid::mongo;
namespace detail = oid::mongo::detail;

// Every variable the detection reads.
constexpr const char* detected[] = {"AWS_EXECUTION_ENV",
                                    "AWS_LAMBDA_RUNTIME_API",
                                    "AWS_REGION",
                                    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
                                    "FUNCTIONS_WORKER_RUNTIME",
                                    "K_SERVICE",
                                    "FUNCTION_NAME",
                                    "FUNCTION_MEMORY_MB",
                                    "FUNCTION_TIMEOUT_SEC",
                                    "FUNCTION_REGION",
                                    "VERCEL",
                                    "VERCEL_REGION",
                                    "KUBERNETES_SERVICE_HOST"};

// Sets exactly `vars` among the detected variables for its lifetime, and puts back what the
// process had (set or not) when it ends, whatever the test did.
class scoped_environment {
 public:
  explicit scoped_environment(const std::map<std::string, std::string>& vars) {
    for (const char* name : detected) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(name);
    }
    for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~scoped_environment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  scoped_environment(const scoped_environment&) = delete;
  scoped_environment& operator=(const scoped_environment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

constexpr const char* no_dockerenv = "/nonexistent-oid-test/.dockerenv";

// The `env` document of this process's metadata as JSON, "(none)" without one.
std::string env_json(const char* dockerenv = no_dockerenv) {
  const auto d = detail::build_client_metadata("", {}, detail::current_platform(dockerenv));
  EXPECT_LE(d.view().size(), detail::client_metadata_limit);
  const auto e = d.view().find("env");
  if (!e) return "(none)";
  return oid::bson::to_json(*e->get_document());
}

TEST(MongoHandshakeMetadataTest, DetectsEachPlatformOfTheSpecificationsProseTest) {
  struct test_case {
    const char* name;
    std::map<std::string, std::string> vars;
    std::string want;
  };
  const test_case cases[] = {
      {"valid AWS",
       {{"AWS_EXECUTION_ENV", "AWS_Lambda_java8"},
        {"AWS_REGION", "us-east-2"},
        {"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024"}},
       R"({"name":"aws.lambda","memory_mb":1024,"region":"us-east-2"})"},
      {"valid Azure", {{"FUNCTIONS_WORKER_RUNTIME", "node"}}, R"({"name":"azure.func"})"},
      {"valid GCP",
       {{"K_SERVICE", "servicename"},
        {"FUNCTION_MEMORY_MB", "1024"},
        {"FUNCTION_TIMEOUT_SEC", "60"},
        {"FUNCTION_REGION", "us-central1"}},
       R"({"name":"gcp.func","timeout_sec":60,"memory_mb":1024,"region":"us-central1"})"},
      {"valid Vercel",
       {{"VERCEL", "1"}, {"VERCEL_REGION", "cdg1"}},
       R"({"name":"vercel","region":"cdg1"})"},
      {"invalid: multiple providers",
       {{"AWS_EXECUTION_ENV", "AWS_Lambda_java8"}, {"FUNCTIONS_WORKER_RUNTIME", "node"}},
       "(none)"},
      {"invalid: long string",
       {{"AWS_EXECUTION_ENV", "AWS_Lambda_java8"}, {"AWS_REGION", std::string(512, 'a')}},
       R"({"name":"aws.lambda"})"},
      {"invalid: wrong types",
       {{"AWS_EXECUTION_ENV", "AWS_Lambda_java8"}, {"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "big"}},
       R"({"name":"aws.lambda"})"},
      {"invalid: AWS_EXECUTION_ENV not AWS_Lambda_", {{"AWS_EXECUTION_ENV", "EC2"}}, "(none)"},
      {"valid container and FaaS provider",
       {{"AWS_EXECUTION_ENV", "AWS_Lambda_java8"},
        {"AWS_REGION", "us-east-2"},
        {"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024"},
        {"KUBERNETES_SERVICE_HOST", "1"}},
       R"({"name":"aws.lambda","memory_mb":1024,"region":"us-east-2",)"
       R"("container":{"orchestrator":"kubernetes"}})"},
      // Beyond the prose test: the other rules of the specification's FaaS section.
      {"nothing", {}, "(none)"},
      {"AWS by its runtime API alone",
       {{"AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001"}},
       R"({"name":"aws.lambda"})"},
      {"GCP by FUNCTION_NAME", {{"FUNCTION_NAME", "f"}}, R"({"name":"gcp.func"})"},
      {"Vercel over AWS",
       {{"VERCEL", "1"}, {"AWS_EXECUTION_ENV", "AWS_Lambda_nodejs18.x"}},
       R"({"name":"vercel"})"},
      {"Vercel with GCP: neither", {{"VERCEL", "1"}, {"K_SERVICE", "s"}}, "(none)"},
      {"Vercel, AWS and Azure: none",
       {{"VERCEL", "1"}, {"AWS_LAMBDA_RUNTIME_API", "x"}, {"FUNCTIONS_WORKER_RUNTIME", "node"}},
       "(none)"},
      {"an empty variable is unset",
       {{"VERCEL", ""}, {"FUNCTIONS_WORKER_RUNTIME", "node"}},
       R"({"name":"azure.func"})"},
      {"a number with more after it",
       {{"K_SERVICE", "s"}, {"FUNCTION_MEMORY_MB", "1024MB"}},
       R"({"name":"gcp.func"})"},
      {"a number beyond int32",
       {{"K_SERVICE", "s"}, {"FUNCTION_TIMEOUT_SEC", "2147483648"}},
       R"({"name":"gcp.func"})"},
      {"another platform's fields are not read",
       {{"FUNCTIONS_WORKER_RUNTIME", "node"}, {"AWS_REGION", "us-east-2"}},
       R"({"name":"azure.func"})"},
      {"Kubernetes alone",
       {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}},
       R"({"container":{"orchestrator":"kubernetes"}})"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    scoped_environment env(c.vars);
    EXPECT_EQ(env_json(), c.want);
  }
}

TEST(MongoHandshakeMetadataTest, TheEnvironmentIsRestoredAfterACase) {
  ::setenv("VERCEL", "before", 1);
  ::unsetenv("K_SERVICE");
  {
    scoped_environment env(std::map<std::string, std::string>{{"K_SERVICE", "s"}});
    EXPECT_EQ(std::getenv("VERCEL"), nullptr);
    EXPECT_STREQ(std::getenv("K_SERVICE"), "s");
  }
  EXPECT_STREQ(std::getenv("VERCEL"), "before");
  EXPECT_EQ(std::getenv("K_SERVICE"), nullptr);
  ::unsetenv("VERCEL");
}

TEST(MongoHandshakeMetadataTest, DockerIsTheFileDockerenvAndGoesWithTheOthers) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("oid-dockerenv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / ".dockerenv").string();
  std::ofstream(file).put('\n');
  {
    scoped_environment env({{"KUBERNETES_SERVICE_HOST", "1"}, {"VERCEL", "1"}});
    EXPECT_EQ(env_json(file.c_str()),
              R"({"name":"vercel","container":{"runtime":"docker","orchestrator":"kubernetes"}})");
  }
  {
    scoped_environment env(std::map<std::string, std::string>{});
    EXPECT_EQ(env_json(file.c_str()), R"({"container":{"runtime":"docker"}})");
  }
  std::filesystem::remove_all(dir);
}

// Facts whose sizes the truncation tests choose.
detail::platform_facts facts(std::size_t region, std::size_t os_version, std::string platform) {
  detail::platform_facts f;
  f.os_type = "Linux";
  f.os_name = "Linux";
  f.os_architecture = "x86_64";
  f.os_version = std::string(os_version, 'v');
  f.platform = std::move(platform);
  f.env.name = "aws.lambda";
  f.env.memory_mb = 1024;
  f.env.region = std::string(region, 'r');
  f.env.container_orchestrator = "kubernetes";
  return f;
}

std::string json(const oid::bson::document& d) { return oid::bson::to_json(d.view()); }

TEST(MongoHandshakeMetadataTest, WithinTheLimitNothingIsCut) {
  const auto d = detail::build_client_metadata("app", {}, facts(10, 10, "C++20"));
  EXPECT_LE(d.view().size(), 512u);
  const auto* version = OID_MONGO_VERSION_FOR_TEST;
  EXPECT_EQ(json(d), std::string(R"({"application":{"name":"app"},"driver":{"name":"oid",)") +
                         R"("version":")" + version +
                         R"("},"os":{"type":"Linux","name":"Linux","architecture":"x86_64",)"
                         R"("version":"vvvvvvvvvv"},"platform":"C++20","env":{"name":)"
                         R"("aws.lambda","memory_mb":1024,"region":"rrrrrrrrrr",)"
                         R"("container":{"orchestrator":"kubernetes"}}})");
}

TEST(MongoHandshakeMetadataTest, TruncatesInTheSpecificationsOrder) {
  // 1. env's fields but its name go (os stays whole).
  {
    const auto d = detail::build_client_metadata("", {}, facts(400, 10, "C++20"));
    EXPECT_LE(d.view().size(), 512u);
    EXPECT_EQ(oid::bson::to_json(*d.view().find("env")->get_document()),
              R"({"name":"aws.lambda"})");
    EXPECT_TRUE(d.view().find("os")->get_document()->contains("version"));
  }
  // 2. then os's fields but its type (env keeps its name).
  {
    const auto d = detail::build_client_metadata("", {}, facts(10, 450, "C++20"));
    EXPECT_LE(d.view().size(), 512u);
    EXPECT_EQ(oid::bson::to_json(*d.view().find("os")->get_document()), R"({"type":"Linux"})");
    EXPECT_EQ(oid::bson::to_json(*d.view().find("env")->get_document()),
              R"({"name":"aws.lambda"})");
    EXPECT_EQ(d.view().find("platform")->get_string().value_or(""), "C++20");
  }
  // 3 and 4. then env, and platform is shortened to what fits: exactly 512 bytes.
  {
    const std::string platform(600, 'p');
    const auto d = detail::build_client_metadata("", {}, facts(10, 10, platform));
    EXPECT_EQ(d.view().size(), 512u);
    EXPECT_FALSE(d.view().contains("env"));
    EXPECT_EQ(oid::bson::to_json(*d.view().find("os")->get_document()), R"({"type":"Linux"})");
    const auto kept = d.view().find("platform")->get_string().value_or("");
    EXPECT_EQ(kept, platform.substr(0, kept.size()));
    EXPECT_GT(kept.size(), 300u);
  }
}

TEST(MongoHandshakeMetadataTest, PlatformIsCutAtACharacterBoundary) {
  std::string platform;
  for (int i = 0; i < 300; ++i) platform += "\xC3\xA9";  // é, two bytes each
  for (const std::string app : {"", "a", "ab"}) {        // the cut falls on either byte
    SCOPED_TRACE(app);
    const auto d = detail::build_client_metadata(app, {}, facts(10, 10, platform));
    EXPECT_LE(d.view().size(), 512u);
    EXPECT_GE(d.view().size(), 511u);
    const auto kept = d.view().find("platform")->get_string().value_or("");
    EXPECT_EQ(kept.size() % 2, 0u);
    EXPECT_EQ(kept, platform.substr(0, kept.size()));
  }
}

TEST(MongoHandshakeMetadataTest, WrappingLibrariesAreAppendedOnceEach) {
  detail::client_metadata m("app", facts(10, 10, "C++20"));
  const auto driver = [&] {
    const auto d = m.document();
    return oid::bson::to_json(*d.view().find("driver")->get_document()) + " " +
           std::string(d.view().find("platform")->get_string().value_or(""));
  };
  const std::string version = OID_MONGO_VERSION_FOR_TEST;
  EXPECT_EQ(driver(), R"({"name":"oid","version":")" + version + R"("} C++20)");
  ASSERT_TRUE(m.append({"library", "1.2", "Library Platform"}).has_value());
  EXPECT_EQ(driver(),
            R"({"name":"oid|library","version":")" + version + R"(|1.2"} C++20|Library Platform)");
  // The same again changes nothing; a field left empty appends nothing to its field.
  ASSERT_TRUE(m.append({"library", "1.2", "Library Platform"}).has_value());
  ASSERT_TRUE(m.append({"framework", "", ""}).has_value());
  EXPECT_EQ(driver(), R"({"name":"oid|library|framework","version":")" + version +
                          R"(|1.2"} C++20|Library Platform)");
  ASSERT_TRUE(m.append({"framework", "2.0", ""}).has_value());  // differs from the one before
  EXPECT_EQ(driver(), R"({"name":"oid|library|framework|framework","version":")" + version +
                          R"(|1.2|2.0"} C++20|Library Platform)");

  const auto before = json(m.document());
  for (const mongo::driver_info& bad :
       {mongo::driver_info{"a|b", "", ""}, mongo::driver_info{"a", "1|2", ""},
        mongo::driver_info{"a", "", "x|y"}, mongo::driver_info{"", "1", "p"},
        mongo::driver_info{std::string(600, 'n'), "", ""}}) {
    SCOPED_TRACE(bad.name.substr(0, 8));
    const auto r = m.append(bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, mongo::errc::invalid_argument);
    EXPECT_EQ(json(m.document()), before);  // nothing appended
  }
}

}  // namespace
