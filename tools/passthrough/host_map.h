#pragma once
// The --map argument: which real device port stands for each scenario host,
// "H1=DEV[:PORT][@ADDRESS],H2=DEV[:PORT]" (device names as
// ibv_get_device_list gives them; port 1 unless written; the IP address
// the host binds, IPv4 or IPv6, unless the first of the machine's that
// rdma_cm puts on that port). Several hosts may share one device port:
// each gets its own rdma_cm id and UD QP there.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace ibfab::passthrough {

struct DevicePort {
  std::string device;
  uint8_t port = 1;
  std::string address;  // "" for the first the port has
};

using HostMap = std::map<std::string, DevicePort>;

// Throws std::invalid_argument with a one-line message.
HostMap parse_host_map(const std::string& text);

}  // namespace ibfab::passthrough
