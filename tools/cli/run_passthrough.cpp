// `ibfab run SCENARIO --passthrough MAP`: the scenario's host actions on
// real devices, by ibfab-passthrough (tools/passthrough/), which this
// process becomes: its report, its exit status.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "tools/cli/commands.h"

namespace ibfab::cli {

int Commands::run_passthrough() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("--passthrough: cannot find this program's directory: " + ec.message());
  const std::string program = (self.parent_path() / "ibfab-passthrough").string();
  const char* argv[] = {program.c_str(), scenario_.c_str(), "--map", passthrough_.c_str(), nullptr};
  ::execv(program.c_str(), const_cast<char* const*>(argv));
  throw std::runtime_error("--passthrough: cannot run " + program + ": " + std::strerror(errno));
}

}  // namespace ibfab::cli
