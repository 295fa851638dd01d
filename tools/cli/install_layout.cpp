#include "tools/cli/install_layout.h"

#include <stdexcept>
#include <system_error>

namespace ibfab::cli {

std::filesystem::path this_executable() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program (/proc/self/exe): " + ec.message());
  return self;
}

std::string library_dir() {
  namespace fs = std::filesystem;
  const fs::path self = this_executable();
  const fs::path bin = self.parent_path();
  const fs::path dir = bin == fs::path(IBFAB_BUILD_TOOLS_DIR)
                           ? fs::path(IBFAB_BUILD_LIBRARY_DIR)
                           : (bin / IBFAB_INSTALLED_LIBRARY_DIR).lexically_normal();
  std::error_code ec;
  if (!fs::exists(dir / "libibverbs.so.1", ec))
    throw std::runtime_error("the drop-in libraries are not where this ibfab (" + self.string() +
                             ") expects them: no libibverbs.so.1 in " + dir.string());
  return dir.string();
}

}  // namespace ibfab::cli
