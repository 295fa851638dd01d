#pragma once
// The umad side of the small SA clients in tests/tools_real: port 1 of the
// first CA, its GID and SM LID, and an SA agent (class 0x03 version 2, RMPP
// version 1) registered on it. Only libibumad: ibfab's under `ibfab exec`.
#include <endian.h>
#include <infiniband/umad.h>

#include <cstdint>
#include <cstdio>

#include "fabric/wire/gid.h"

namespace ibfab::testing {

struct UmadSaPort {
  int fd = -1;
  int agent = -1;
  uint16_t sm_lid = 0;
  wire::Gid gid{};

  // False (with a line on stderr) if there is no port or no agent.
  bool open() {
    umad_port_t port;
    if (umad_init() < 0 || umad_get_port(nullptr, 0, &port) < 0) {
      std::fprintf(stderr, "no umad port\n");
      return false;
    }
    sm_lid = static_cast<uint16_t>(port.sm_lid);
    gid = wire::Gid::from(be64toh(port.gid_prefix), be64toh(port.port_guid));
    umad_release_port(&port);
    fd = umad_open_port(nullptr, 0);
    agent = fd < 0 ? -1 : umad_register(fd, 0x03, 2, 1, nullptr);
    if (agent < 0) {
      std::fprintf(stderr, "cannot open the port or register an SA agent\n");
      return false;
    }
    return true;
  }
  ~UmadSaPort() {
    if (fd >= 0) umad_close_port(fd);
  }
};

}  // namespace ibfab::testing
