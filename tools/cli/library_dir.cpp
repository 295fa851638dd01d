#include "tools/cli/library_dir.h"

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ibfab::cli {

std::string library_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's directory (/proc/self/exe): " + ec.message());
  const fs::path bin = self.parent_path();
  const fs::path dir = bin == fs::path(IBFAB_BUILD_TOOLS_DIR)
                           ? fs::path(IBFAB_BUILD_LIBRARY_DIR)
                           : (bin / IBFAB_INSTALLED_LIBRARY_DIR).lexically_normal();
  if (!fs::exists(dir / "libibverbs.so.1", ec))
    throw std::runtime_error("the drop-in libraries are not where this ibfab (" + self.string() +
                             ") expects them: no libibverbs.so.1 in " + dir.string());
  return dir.string();
}

}  // namespace ibfab::cli
