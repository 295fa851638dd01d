#pragma once
// The network between a served fabric's hosts. `ibfab serve`, as root,
// keeps a network namespace for the fabric, holding a bridge (fabric0),
// and one per host that a program has run on under `ibfab exec`, made for
// the first such program and kept until serve stops (or its last process
// leaves). A host's namespace has its IPoIB interfaces (host_network.h),
// whose other ends are on the bridge: hosts reach each other's addresses
// (TCP, UDP, multicast) as over IPoIB, programs of one host share its
// namespace (and its localhost), and nothing reaches the machine's own
// network.
//
// A process of its own (forked by serve, ended with it) keeps them and
// offers them on a socket beside the engine's (ENGINE_SOCKET.net, mode
// 0600): `ibfab exec` sends its host's snapshot and gets the host's
// namespace back as a file descriptor, to setns(2) into. The engine's
// process holds none of it.
#include <sys/types.h>

#include <map>
#include <string>

#include "tools/cli/host_snapshot.h"

namespace ibfab::cli {

// ENGINE_SOCKET.net
std::string fabric_network_path(const std::string& engine_socket);

class FabricNetwork {
 public:
  // Forks the keeper, which makes the fabric's namespace and serves at
  // fabric_network_path(`engine_socket`). Throws std::runtime_error saying
  // why it cannot (not root, no `ip`, no bridge support). Call it before
  // the process has threads.
  explicit FabricNetwork(const std::string& engine_socket);
  // Ends the keeper and removes the socket. The namespaces go when their
  // last process does.
  ~FabricNetwork();
  FabricNetwork(const FabricNetwork&) = delete;
  FabricNetwork& operator=(const FabricNetwork&) = delete;

 private:
  // The keeper's side.
  void set_up();
  [[noreturn]] void serve();
  // The namespace of the snapshot's host, made (and cabled to the bridge)
  // on first use; -1 with the reason in `why` when it cannot be made.
  int host_namespace(const HostSnapshot& host, std::string& why);

  std::string path_;
  pid_t keeper_ = -1;
  // In the keeper only:
  int fabric_ = -1;  // the fabric's namespace
  int listen_ = -1;
  std::map<std::string, int> hosts_;  // host name -> its namespace
  unsigned attempts_ = 0;             // host namespaces begun
};

// The namespace of `host` from the network served beside `engine_socket`:
// a file descriptor, or -1 when nothing serves there. Throws
// std::runtime_error when the server could not make it.
int join_fabric_network(const std::string& engine_socket, const HostSnapshot& host);

}  // namespace ibfab::cli
