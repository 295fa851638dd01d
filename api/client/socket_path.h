#pragma once
// Where `ibfab serve` listens and clients connect when IBFAB_SOCKET does
// not say: $XDG_RUNTIME_DIR/ibfab.sock, else /tmp/ibfab-<uid>.sock.
#include <string>

namespace ibfab::api {

std::string default_socket_path();
// IBFAB_SOCKET if set and non-empty, else default_socket_path().
std::string client_socket_path();

// Creates a listening SOCK_SEQPACKET socket at `path` that only this user
// may connect to (created under umask 077: no group or other permission;
// an existing socket file there is replaced if nothing answers on it). Returns the fd, or -errno with
// `error` set (-EADDRINUSE: an engine already serves there).
int listen_at(const std::string& path, std::string& error);
// Connects to the engine at `path`; returns the fd (close-on-exec) or -errno.
int connect_to(const std::string& path);

}  // namespace ibfab::api
