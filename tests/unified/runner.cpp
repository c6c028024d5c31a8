// The unified test format runner (being written; see CMakeLists.txt in this directory).
#include <cstdio>

int main() {
  std::fputs("oid_unified_runner: not written yet\n", stderr);
  return 1;
}
