// libbson's side of the `oid bson dump` comparison (scripts/bench-bson-dump.sh): reads
// concatenated BSON documents from a file with bson_reader and prints each as canonical Extended
// JSON on its own line, as `oid bson dump --mode canonical` does. It is the small program a
// libbson user would write: bson_reader_read, bson_as_canonical_extended_json, fwrite, bson_free.
//
//   libbson_dump FILE > out.json
#include <bson/bson.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: libbson_dump FILE\n");
    return 2;
  }
  bson_error_t err;
  bson_reader_t* reader = bson_reader_new_from_file(argv[1], &err);
  if (reader == nullptr) {
    std::fprintf(stderr, "libbson_dump: %s: %s\n", argv[1], err.message);
    return 1;
  }
  // A large stdio buffer, so that output costs libbson no more system calls than it costs oid.
  static char out_buf[1 << 16];
  std::setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
  const bson_t* doc = nullptr;
  bool eof = false;
  while ((doc = bson_reader_read(reader, &eof)) != nullptr) {
    std::size_t len = 0;
    char* json = bson_as_canonical_extended_json(doc, &len);
    if (json == nullptr) {
      std::fprintf(stderr, "libbson_dump: a document libbson cannot write as JSON\n");
      bson_reader_destroy(reader);
      return 1;
    }
    std::fwrite(json, 1, len, stdout);
    std::fputc('\n', stdout);
    bson_free(json);
  }
  bson_reader_destroy(reader);
  if (!eof) {
    std::fprintf(stderr, "libbson_dump: %s: damaged BSON\n", argv[1]);
    return 1;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
