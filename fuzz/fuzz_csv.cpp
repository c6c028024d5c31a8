// `oid mongo import --type csv|tsv` and `export --type csv` (cli/mongo/csv.hpp) over a file
// someone else wrote. The input is the file, read as import reads it: the first record is the
// header (names, typed with --columnsHaveTypes), each other record becomes a document. The
// properties: reading never crashes or hangs; an error says where ("line L, column C: ...", L
// within the input); the fields of a record never hold more bytes than the input; a header is
// refused with the index of a name it has; a document built is valid BSON (or the error is the
// index of a field the record has) and, in a `string()` column, holds the field as it was. And
// the writer: the records read, written back as CSV with append_csv_text, read back the same.
//
// Input: byte 0: bit 0: TSV (tab-separated, no quotes) rather than CSV; bit 1: typed headers
// (--columnsHaveTypes); bit 2: --ignoreBlanks; bits 3-4: --parseGrace (stop, skipField,
// autoCast). The rest is the file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <oid/bson/validate.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mongo/csv.hpp"

namespace {

using oid::cli::csv_columns;
using oid::cli::csv_reader;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_csv: %s: %s\n", what, detail.c_str());
  std::abort();
}

// "line L, column C: ..." with 1 <= L <= lines.
void check_where(const std::string& message, std::size_t lines) {
  unsigned long line = 0, column = 0;
  int used = 0;
  if (std::sscanf(message.c_str(), "line %lu, column %lu: %n", &line, &column, &used) != 2 ||
      used == 0 || line == 0 || line > lines || column == 0 ||
      static_cast<std::size_t>(used) == message.size()) {
    fail("an error that does not say where", message);
  }
}

// All records of `text`, with the reader's checks.
std::vector<std::vector<std::string>> read_all(std::string_view text, char separator, bool quotes,
                                               std::vector<bool>* ok = nullptr) {
  std::istringstream in{std::string(text)};
  csv_reader reader(in, separator, quotes);
  std::size_t lines = 1;
  for (const char c : text) lines += c == '\n' || c == '\r';
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields;
  for (std::size_t step = 0;; ++step) {
    if (step > text.size() + 1) fail("the reader does not end", std::to_string(step));
    const auto got = reader.next(fields);
    if (reader.bytes_read() > text.size()) fail("read past the input", std::to_string(step));
    std::size_t bytes = 0;
    for (const auto& f : fields) bytes += f.size();
    if (bytes > text.size()) fail("fields longer than the input", std::to_string(bytes));
    if (got && !*got) break;
    if (!got) check_where(got.error(), lines);
    if (fields.empty()) fail("a record without a field", std::to_string(step));
    records.push_back(fields);
    if (ok != nullptr) ok->push_back(got.has_value());
  }
  if (reader.bytes_read() != text.size()) fail("the input not read to its end", "");
  return records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool tsv = flags & 1, typed = flags & 2, ignore_blanks = flags & 4;
  const int grace_bits = (flags >> 3) & 3;
  const auto grace = grace_bits == 1   ? csv_columns::grace::skip_field
                     : grace_bits == 2 ? csv_columns::grace::auto_cast
                                       : csv_columns::grace::fail;
  std::vector<bool> ok;
  const auto records = read_all(text, tsv ? '\t' : ',', !tsv, &ok);

  // As import reads them: the first well-formed record that is not an empty line is the header.
  csv_columns columns;
  bool header = true;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const auto& record = records[r];
    if (!ok[r] || (record.size() == 1 && record[0].empty())) continue;
    if (header) {
      const auto parsed = columns.parse(record, typed);
      if (!parsed) {
        if (parsed.error().index >= record.size() || parsed.error().message.empty()) {
          fail("a header error names no column", parsed.error().message);
        }
        break;
      }
      if (columns.size() != record.size()) fail("columns lost", std::to_string(columns.size()));
      header = false;
      continue;
    }
    if (record.size() > columns.size()) continue;  // refused by import before build()
    oid::bson::builder b;
    const auto built = columns.build(record, b, ignore_blanks, grace);
    if (!built) {
      if (grace != csv_columns::grace::fail || built.error() >= record.size()) {
        fail("build() failed on no field of the record", std::to_string(built.error()));
      }
      continue;
    }
    const auto doc = oid::bson::validate(b.view().bytes(), {.check_utf8 = false});
    if (!doc) fail("build() made invalid BSON", doc.error().message());
    for (std::size_t i = 0; i < record.size(); ++i) {
      if (columns[i].type != oid::cli::column_type::string ||
          (ignore_blanks && record[i].empty())) {
        continue;
      }
      std::string path;
      for (const auto& p : columns[i].path) path += (path.empty() ? "" : ".") + p;
      const auto e = oid::cli::at_path(*doc, path);
      bool kept = false;
      if (e) {
        const auto s = e->get_string();
        kept = s && *s == record[i];
      }
      if (!kept) {
        fail("a string() field not kept as it is", path);
      }
    }
  }

  // The writer: CSV records written back read back the same.
  if (!tsv) {
    std::string written;
    for (const auto& record : records) {
      for (std::size_t i = 0; i < record.size(); ++i) {
        if (i > 0) written += ',';
        oid::cli::append_csv_text(record[i], written);
      }
      written += '\n';
    }
    std::vector<bool> ok_again;
    if (read_all(written, ',', true, &ok_again) != records) {
      fail("records written as CSV read back otherwise", written);
    }
    for (const bool b : ok_again) {
      if (!b) fail("records written as CSV read back with an error", written);
    }
  }
  return 0;
}
