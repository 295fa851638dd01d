// Runs use_huge_pages (tools/cli/huge_pages.h) as ibfab's main does, then
// builds 64 MiB of small heap objects and prints what a user's program
// would see: GLIBC_TUNABLES, whether the marker is gone, and how much of
// the heap is on huge pages (AnonHugePages, /proc/self/smaps_rollup).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tools/cli/huge_pages.h"

int main(int, char** argv) {
  ibfab::cli::use_huge_pages(argv);
  std::vector<std::unique_ptr<char[]>> objects;
  for (int i = 0; i < 64 * 1024; ++i) {
    objects.emplace_back(new char[1000]);
    std::memset(objects.back().get(), i, 1000);
  }
  const char* t = std::getenv("GLIBC_TUNABLES");
  std::printf("tunables=%s\n", t ? t : "(unset)");
  std::printf("marker=%s\n", std::getenv("IBFAB_SAVED_GLIBC_TUNABLES") ? "left" : "gone");
  std::ifstream smaps("/proc/self/smaps_rollup");
  for (std::string line; std::getline(smaps, line);)
    if (line.rfind("AnonHugePages:", 0) == 0) std::printf("huge_kb=%ld\n", std::strtol(line.c_str() + 14, nullptr, 10));
  return 0;
}
