// `oid mongo restore` over a dump directory someone else made: the input builds a small tree of
// database directories, .bson / .metadata.json files (plain or gzip), and symbolic links to a file
// outside the tree, plus the --nsInclude / --nsExclude / --restoreDbUsersAndRoles /
// --restoreLocalAndConfig filter and --nsFrom/--nsTo renames. The property: every collection the
// plan would write has, after renaming, a database and collection name MongoDB accepts, is a
// system.* collection only with users_and_roles, is in the local or config database (any case)
// only with local_and_config; its dump name is selected by the filter and renamed as the renamer
// says; its files are regular files inside the tree (never reached through a link); reading its
// documents ends in a document or an error, never a crash.
//
// Input: byte 0: flags (bit 0: users_and_roles; bit 1: an include pattern; bit 2: an exclude
// pattern; bit 3: local_and_config; bit 4: renames); then the patterns, each a length byte (mod
// 32) and its bytes; with bit 4, a byte whose value mod 3 + 1 is the number of --nsFrom/--nsTo
// pairs, then each pair's two patterns (a --nsTo whose '*' do not match its --nsFrom's is
// refused, and the input is then read without renames); then entries, each: a kind byte (0: a
// database directory, made the current one; 1: a file in it; 2: a gzip file in it; 3: a link in it
// to the outside file; 4: a database directory that is a link to the outside directory), a length
// byte and that many name bytes, and for files a 2-byte length and the content.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <istream>
#include <oid/bson/stream_reader.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/restore.hpp"
#include "mongo/tools.hpp"

namespace {

namespace fs = std::filesystem;

struct input {
  const std::uint8_t* p;
  std::size_t n;
  bool empty() const { return n == 0; }
  std::uint8_t byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  std::string bytes(std::size_t k) {
    k = std::min(k, n);
    std::string s(reinterpret_cast<const char*>(p), k);
    p += k;
    n -= k;
    return s;
  }
};

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_restore_plan: %s: %s\n", what, detail.c_str());
  std::abort();
}

// A fresh directory for one run: ROOT/dump (the tree) and ROOT/outside (what links point at).
struct scratch {
  fs::path root;
  scratch() {
    char name[] = "/tmp/oid_fuzz_restore_XXXXXX";
    if (::mkdtemp(name) == nullptr) std::abort();
    root = name;
    fs::create_directory(root / "dump");
    fs::create_directory(root / "outside");
    std::ofstream(root / "outside" / "x.bson", std::ios::binary)
        << std::string("\x0c\x00\x00\x00\x10n\x00\x01\x00\x00\x00\x00", 12);
  }
  ~scratch() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
};

// A name a file system can hold (no '/', no NUL, not "." or ".."), or empty.
std::string file_name(std::string name) {
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
    return {};
  }
  return name;
}

void write_gzip(const fs::path& path, const std::string& content) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr) return;
  if (!content.empty()) gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
  gzclose(f);
}

bool inside(const fs::path& file, const fs::path& tree) {
  std::error_code e;
  if (!fs::is_regular_file(fs::symlink_status(file, e))) return false;
  const auto dir = fs::canonical(file.parent_path().parent_path(), e);
  return !e && dir == fs::canonical(tree, e) && !e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;  // small trees: the property is in the names, not the sizes
  input in{data, size};
  oid::cli::restore_filter filter;
  const auto flags = in.byte();
  filter.users_and_roles = (flags & 1) != 0;
  if (flags & 2) filter.include.push_back(in.bytes(in.byte() % 32));
  if (flags & 4) filter.exclude.push_back(in.bytes(in.byte() % 32));
  filter.local_and_config = (flags & 8) != 0;
  oid::cli::restore_target target;
  if (flags & 16) {
    std::vector<std::string> from, to;
    for (int pairs = in.byte() % 3 + 1; pairs > 0; --pairs) {
      from.push_back(in.bytes(in.byte() % 32));
      to.push_back(in.bytes(in.byte() % 32));
    }
    if (auto r = oid::cli::ns_renamer::make(from, to)) target.renames = std::move(*r);
  }

  scratch s;
  const fs::path tree = s.root / "dump";
  fs::path current;
  int entries = 0;
  while (!in.empty() && entries++ < 32) {
    const auto kind = in.byte() % 5;
    const std::string name = file_name(in.bytes(in.byte()));
    std::string content;
    if (kind == 1 || kind == 2) {
      const std::size_t length = in.byte() | static_cast<std::size_t>(in.byte()) << 8;
      content = in.bytes(length);
    }
    if (name.empty()) continue;
    std::error_code e;
    if (kind == 0) {
      current = tree / name;
      fs::create_directory(current, e);
    } else if (kind == 4) {
      fs::create_directory_symlink(s.root / "outside", tree / name, e);
    } else if (!current.empty()) {
      if (kind == 1) std::ofstream(current / name, std::ios::binary) << content;
      if (kind == 2) write_gzip(current / name, content);
      if (kind == 3) fs::create_symlink(s.root / "outside" / "x.bson", current / name, e);
    }
  }

  const auto plan = oid::cli::plan_restore(tree, filter, target);
  const auto lower = [](std::string s) {
    for (auto& c : s) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  };
  for (const auto& j : plan.jobs) {
    if (j->failed) continue;  // reported, never written
    const std::string ns = j->db + '.' + j->name;
    const std::string dumped = j->from.empty() ? ns : j->from;
    if (!oid::cli::database_name_problem(j->db).empty())
      fail("a database name no server holds", ns);
    if (!oid::cli::collection_name_problem(j->db, j->name).empty()) {
      fail("a collection name no server holds", ns);
    }
    if (!filter.selects(dumped)) fail("a namespace the filter leaves out", dumped);
    if (target.renames.rename(dumped) != ns) fail("not where the renamer sends it", dumped);
    if (!filter.users_and_roles && j->name.starts_with("system.")) fail("a system collection", ns);
    if (!filter.local_and_config && (lower(j->db) == "local" || lower(j->db) == "config")) {
      fail("the local or config database", ns);
    }
    for (const auto& f : {j->data, j->metadata}) {
      if (!f.empty() && !inside(f, tree)) fail("a file outside the tree or behind a link", f);
    }
    if (j->data.empty()) continue;
    oid::cli::source_buf buf;
    if (!buf.open(j->data)) continue;
    std::istream stream(&buf);
    oid::bson::stream_reader reader(stream);
    for (int i = 0; i < 1000; ++i) {
      const auto more = reader.next();
      if (!more || !*more) break;
    }
  }
  return 0;
}
