#include "tools/cli/host_network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "tools/cli/device_tree.h"

namespace ibfab::cli {
namespace {

std::string ipv4_text(uint32_t host_order) {
  char text[INET_ADDRSTRLEN];
  const uint32_t n = htonl(host_order);
  ::inet_ntop(AF_INET, &n, text, sizeof text);
  return text;
}

std::string ipv6_text(const uint8_t* a) {
  char text[INET6_ADDRSTRLEN];
  ::inet_ntop(AF_INET6, a, text, sizeof text);
  return text;
}

// IPoIB's link-local address: fe80::/64 and the port GUID as a modified
// EUI-64 (the universal/local bit flipped).
std::string link_local(uint64_t port_guid) {
  uint8_t a[16] = {0xFE, 0x80};
  const uint64_t id = port_guid ^ 0x0200000000000000ull;
  for (int i = 0; i < 8; ++i) a[8 + i] = static_cast<uint8_t>(id >> (56 - 8 * i));
  return ipv6_text(a);
}

}  // namespace

void run_command(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string line;
  for (const std::string& a : args) line += (line.empty() ? "" : " ") + a;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw std::runtime_error("cannot run `" + line + "` (is iproute2's `ip` installed?)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("`" + line + "` failed");
}

bool write_net_sysctl(const std::string& path, const std::string& text) {
  const int fd = ::open(("/proc/sys/net/" + path).c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

void configure_host_network(const HostSnapshot& host, const std::string& peer_namespace,
                            const std::string& peer_prefix) {
  run_command({"ip", "link", "set", "lo", "up"});
  for (std::size_t i = 0; i < host.addresses.size(); ++i) {
    const api::CmPortAddress& a = host.addresses[i];
    const std::string ifname = ipoib_interface(static_cast<unsigned>(i + 1));
    const std::string peer = peer_prefix + std::to_string(i);
    std::vector<std::string> add = {"ip", "link", "add", ifname, "type", "veth", "peer", "name", peer};
    if (!peer_namespace.empty()) add.insert(add.end(), {"netns", peer_namespace});
    run_command(add);
    // No address made from the veth's MAC: ipoib's comes from the GUID.
    write_net_sysctl("ipv6/conf/" + ifname + "/addr_gen_mode", "1");
    if (peer_namespace.empty()) {
      write_net_sysctl("ipv6/conf/" + peer + "/addr_gen_mode", "1");
      run_command({"ip", "link", "set", peer, "up"});
    }
    run_command({"ip", "link", "set", ifname, "up"});
    if (a.ipv4) run_command({"ip", "-4", "addr", "add", ipv4_text(a.ipv4) + "/" + std::to_string(a.prefix4), "dev", ifname});
    static constexpr uint8_t kNone[16] = {};
    if (std::memcmp(a.ipv6, kNone, sizeof kNone) != 0)
      run_command({"ip", "-6", "addr", "add", ipv6_text(a.ipv6) + "/" + std::to_string(a.prefix6), "dev", ifname, "nodad"});
    run_command({"ip", "-6", "addr", "add", link_local(host.node.ports[i].port_guid) + "/64", "dev", ifname, "nodad"});
    if (a.multicast_route) run_command({"ip", "-4", "route", "add", "224.0.0.0/4", "dev", ifname});
  }
}

}  // namespace ibfab::cli
