#pragma once
// Process-wide state of libibumad.so.3 that does not belong to one port:
// which user_mad header layout is in use, and the debug level.
//
// Header layout (rdma-core 44): until a port has been opened the library
// assumes the old kernel ABI, whose header lacks the last 8 bytes of
// ib_mad_addr (pkey_index and reserved): umad_size() is 56, umad_get_mad()
// points at &addr.pkey_index, and umad_set_pkey/umad_get_pkey do nothing and
// return 0. Once a port is open the new layout applies for the rest of the
// process: umad_size() is 64 and the MAD starts at ib_user_mad::data.
#include <cstddef>

namespace ibfab::umad {

// Called by the port-opening code after each successful umad_open_port();
// switches the process to the 64-byte header. Thread-safe, idempotent.
void note_port_opened() noexcept;

// True once note_port_opened() has been called in this process.
bool port_opened() noexcept;

// The header size umad_size() reports: 56 before a port is opened, 64 after.
std::size_t header_size() noexcept;

// The level umad_debug() sets; 0 (the default) is silent.
int debug_level() noexcept;

// Writes one diagnostic line to stderr, as rdma-core's IBWARN does:
// "ibwarn: [<pid>] <func>: <message>\n", in a single write so that lines of
// several threads do not interleave. `func` names the API function.
void warn(const char* func, const char* fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));

}  // namespace ibfab::umad

// warn(), but only when debug_level() is not 0 (rdma-core's TRACE/DEBUG).
#define IBFAB_UMAD_TRACE(func, ...)                   \
  do {                                                \
    if (::ibfab::umad::debug_level() != 0)            \
      ::ibfab::umad::warn(func, __VA_ARGS__);         \
  } while (0)
