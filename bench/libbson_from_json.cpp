// libbson's side of the `oid bson from-json` comparison (scripts/bench-bson-from-json.sh): reads
// Extended JSON documents, one a line, and writes each as BSON to stdout, as `oid bson from-json`
// does. It is the small program a libbson user would write: getline, bson_init_from_json,
// fwrite of bson_get_data, bson_destroy.
//
//   libbson_from_json FILE > out.bson
#include <bson/bson.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: libbson_from_json FILE\n");
    return 2;
  }
  std::FILE* in = std::fopen(argv[1], "rb");
  if (in == nullptr) {
    std::fprintf(stderr, "libbson_from_json: cannot open %s\n", argv[1]);
    return 1;
  }
  // Large stdio buffers, so that I/O costs libbson no more system calls than it costs oid.
  static char in_buf[1 << 16];
  static char out_buf[1 << 16];
  std::setvbuf(in, in_buf, _IOFBF, sizeof in_buf);
  std::setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
  char* line = nullptr;
  std::size_t cap = 0;
  ssize_t len = 0;
  unsigned long long number = 0;
  int status = 0;
  while ((len = getline(&line, &cap, in)) > 0) {
    ++number;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) --len;
    if (len == 0) continue;
    bson_t doc;
    bson_error_t err;
    if (!bson_init_from_json(&doc, line, len, &err)) {
      std::fprintf(stderr, "libbson_from_json: %s: line %llu: %s\n", argv[1], number, err.message);
      status = 1;
      break;
    }
    std::fwrite(bson_get_data(&doc), 1, doc.len, stdout);
    bson_destroy(&doc);
  }
  std::free(line);
  std::fclose(in);
  return std::fflush(stdout) == 0 ? status : 1;
}
