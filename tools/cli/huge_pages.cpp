#include "tools/cli/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace ibfab::cli {
namespace {

// Set in the re-executed process: GLIBC_TUNABLES as the user had it, after
// a '=' ("=" alone: it was not set).
constexpr const char* kSaved = "IBFAB_SAVED_GLIBC_TUNABLES";

bool kernel_offers_huge_pages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(f, modes) && modes.find("[never]") == std::string::npos;
}

void restore(const char* saved) {
  if (saved[0] == '=' && saved[1] == '\0') ::unsetenv("GLIBC_TUNABLES");
  else ::setenv("GLIBC_TUNABLES", saved + 1, 1);
  ::unsetenv(kSaved);
}

}  // namespace

void use_huge_pages(char** argv) {
  if (const char* saved = std::getenv(kSaved)) return restore(saved);
  if (const char* off = std::getenv("IBFAB_HUGE_PAGES"); off && std::string(off) == "0") return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string given = tunables ? tunables : "";
  if (given.find("glibc.malloc.hugetlb") != std::string::npos || !kernel_offers_huge_pages()) return;
  const std::string saved = (tunables ? "=" + given : std::string("="));
  ::setenv(kSaved, saved.c_str(), 1);
  ::setenv("GLIBC_TUNABLES", (given.empty() ? "" : given + ":").append("glibc.malloc.hugetlb=1").c_str(), 1);
  ::execv("/proc/self/exe", argv);
  restore(saved.c_str());  // exec failed: go on without
}

}  // namespace ibfab::cli
