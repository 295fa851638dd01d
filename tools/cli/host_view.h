#pragma once
// `ibfab exec`'s view of one host: what a program that looks for its
// device outside libibverbs finds, as the kernel of that host would show
// it, without changing the machine's own /dev, /sys or network.
//
// enter_host_view moves this process (before it execs the program) into a
// private mount namespace and the host's network namespace, in which
//   - the network has lo and, per HCA port P, an interface ib(P-1)
//     carrying the port's IPoIB addresses (host_network.h). The namespace
//     is the host's one from the fabric network `ibfab serve` keeps as
//     root (fabric_network.h: shared by the host's programs, cabled to the
//     other hosts); without one, a namespace of this program's own, whose
//     interfaces' peers (ibfab-wire(P-1)) stay in it and reach no host;
//   - /sys/devices is a sysfs of that network namespace, and /sys/class a
//     tmpfs holding the machine's classes (so /sys/class/net lists the
//     namespace's interfaces) and the host's infiniband, infiniband_verbs
//     and infiniband_mad trees (device_tree.h);
//   - /dev is a tmpfs holding the machine's /dev entries (bound, so they
//     work as before) and /dev/infiniband.
// Files in /tmp and the engine's Unix socket stay where they are. The view
// is a snapshot: the files say what the engine said at exec time.
//
// As root this needs nothing more. Otherwise it first enters a user
// namespace in which the user is root (the program then runs as uid 0
// there; /dev/infiniband holds empty files, as device nodes cannot be made
// there). Throws std::runtime_error saying what failed and what to do
// (run as root, allow unprivileged user namespaces, or pass
// --no-device-view).
#include <string>

#include "tools/cli/host_snapshot.h"

namespace ibfab::cli {

void enter_host_view(const HostSnapshot& host, const std::string& engine_socket);

}  // namespace ibfab::cli
