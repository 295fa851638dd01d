// Library-wide state (umad_state.h) and the calls that only read or set it:
// umad_init, umad_done, umad_debug, umad_size.
#include "api/umad/umad_state.h"

#include <infiniband/umad.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "api/umad/export.h"

namespace ibfab::umad {
namespace {

std::atomic<bool> g_port_opened{false};
std::atomic<int> g_debug_level{0};

// Old-ABI header: ib_user_mad without addr.pkey_index and addr.reserved.
constexpr std::size_t kOldHeaderSize = sizeof(ib_user_mad) - 8;
static_assert(sizeof(ib_user_mad) == 64 && kOldHeaderSize == 56);

}  // namespace

void note_port_opened() noexcept { g_port_opened.store(true, std::memory_order_relaxed); }

bool port_opened() noexcept { return g_port_opened.load(std::memory_order_relaxed); }

std::size_t header_size() noexcept { return port_opened() ? sizeof(ib_user_mad) : kOldHeaderSize; }

int debug_level() noexcept { return g_debug_level.load(std::memory_order_relaxed); }

void warn(const char* func, const char* fmt, ...) noexcept {
  char line[1024];
  int n = std::snprintf(line, sizeof line, "ibwarn: [%d] %s: ", static_cast<int>(getpid()), func);
  if (n < 0) return;
  std::size_t used = static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n) : sizeof line - 1;
  va_list args;
  va_start(args, fmt);
  n = std::vsnprintf(line + used, sizeof line - used, fmt, args);
  va_end(args);
  if (n > 0) used += static_cast<std::size_t>(n);
  if (used > sizeof line - 2) used = sizeof line - 2;  // truncated: keep the newline
  line[used++] = '\n';
  std::fwrite(line, 1, used, stderr);
}

}  // namespace ibfab::umad

// Nothing to set up or tear down: the library keeps no per-process resources
// beyond open ports, which their own calls release. Returns 0.
IBFAB_UMAD_EXPORT int umad_init(void) {
  IBFAB_UMAD_TRACE("umad_init", "umad_init");
  return 0;
}

IBFAB_UMAD_EXPORT int umad_done(void) {
  IBFAB_UMAD_TRACE("umad_done", "umad_done");
  return 0;
}

// A level >= 0 becomes the debug level; a negative one only queries it.
// Returns the level in force after the call.
IBFAB_UMAD_EXPORT int umad_debug(int level) {
  if (level >= 0) ibfab::umad::g_debug_level.store(level, std::memory_order_relaxed);
  return ibfab::umad::debug_level();
}

IBFAB_UMAD_EXPORT size_t umad_size(void) { return ibfab::umad::header_size(); }
