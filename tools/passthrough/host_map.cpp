#include "tools/passthrough/host_map.h"

#include <arpa/inet.h>

#include <charconv>
#include <sstream>

namespace ibfab::passthrough {

HostMap parse_host_map(const std::string& text) {
  HostMap map;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument("--map: expected HOST=DEVICE[:PORT][@ADDRESS], got '" + item + "'");
    const std::string host = item.substr(0, eq);
    std::string device = item.substr(eq + 1);
    DevicePort dp;
    if (const auto at = device.find('@'); at != std::string::npos) {
      dp.address = device.substr(at + 1);
      in6_addr bytes{};
      if (::inet_pton(AF_INET, dp.address.c_str(), &bytes) != 1 && ::inet_pton(AF_INET6, dp.address.c_str(), &bytes) != 1)
        throw std::invalid_argument("--map: '" + item + "': '" + dp.address + "' is no IPv4 or IPv6 address");
      device.resize(at);
    }
    if (const auto colon = device.rfind(':'); colon != std::string::npos) {
      const std::string digits = device.substr(colon + 1);
      unsigned port = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 255)
        throw std::invalid_argument("--map: '" + item + "': the port is a number from 1 to 255");
      dp.port = static_cast<uint8_t>(port);
      device.resize(colon);
    }
    if (device.empty()) throw std::invalid_argument("--map: '" + item + "' names no device");
    dp.device = device;
    if (!map.emplace(host, dp).second) throw std::invalid_argument("--map: host '" + host + "' is mapped twice");
  }
  if (map.empty()) throw std::invalid_argument("--map: expected HOST=DEVICE[:PORT][@ADDRESS],... (e.g. H1=rxe0,H2=rxe1:1)");
  return map;
}

}  // namespace ibfab::passthrough
