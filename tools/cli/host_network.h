#pragma once
// The IPoIB side of one host, as ipoib would set it up, in the network
// namespace of the calling thread: lo up and, per HCA port P, an
// interface ib(P-1) (one end of a veth pair) carrying the port's IPv4 and
// IPv6 addresses from the engine's address plan and an IPv6 link-local
// address made from the port GUID; the IPv4 multicast route 224.0.0.0/4
// leaves by the port the plan names. Runs iproute2's `ip`.
#include <string>
#include <vector>

#include "tools/cli/host_snapshot.h"

namespace ibfab::cli {

// The other end of each veth: named `peer_prefix` + (P-1), made in the
// network namespace at `peer_namespace` (a path `ip` opens, such as
// /proc/PID/fd/N), or in this one when it is "". Throws std::runtime_error
// naming the command that failed.
void configure_host_network(const HostSnapshot& host, const std::string& peer_namespace,
                            const std::string& peer_prefix);

// Runs `args` (args[0] found on PATH) in this thread's namespaces and waits
// for it; throws std::runtime_error unless it exits 0.
void run_command(const std::vector<std::string>& args);

// Writes `text` to /proc/sys/net/PATH of this thread's network namespace;
// false if it could not.
bool write_net_sysctl(const std::string& path, const std::string& text);

}  // namespace ibfab::cli
