// `ibfab run SCENARIO --passthrough MAP`: the scenario's host actions on
// real devices, by ibfab-passthrough (tools/passthrough/), which this
// process becomes: its report, its exit status.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tools/cli/commands.h"
#include "tools/cli/install_layout.h"

namespace ibfab::cli {

int Commands::run_passthrough() {
  const std::string program = (this_executable().parent_path() / "ibfab-passthrough").string();
  const char* argv[] = {program.c_str(), scenario_.c_str(), "--map", passthrough_.c_str(), nullptr};
  ::execv(program.c_str(), const_cast<char* const*>(argv));
  throw std::runtime_error("--passthrough: cannot run " + program + ": " + std::strerror(errno));
}

}  // namespace ibfab::cli
