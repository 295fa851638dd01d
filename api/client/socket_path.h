#pragma once
// Where `ibfab serve` listens and clients connect, and who may be on the
// other end. An engine serves its own user only: its socket is created
// under umask 077 (no group or other permission), and a client talks only
// to an engine run by its own effective uid or by root (SO_PEERCRED).
#include <string>

namespace ibfab::api {

// $XDG_RUNTIME_DIR/ibfab.sock, else ibfab.sock in the private directory
// ${TMPDIR:-/tmp}/ibfab-UID (socket_dir_problem makes and checks it).
std::string default_socket_path();
// IBFAB_SOCKET if set and non-empty, else default_socket_path().
std::string client_socket_path();

// Makes sure the directory holding `socket` is one only this user can
// write to: a directory (not a symlink) owned by the effective uid with no
// group or other write permission; creates it with mode 0700 when it is
// missing and is the default's private directory. Returns "" or why not,
// in one line naming the directory.
std::string socket_dir_problem(const std::string& socket);

// Creates a listening SOCK_SEQPACKET socket at `path` that only this user
// may connect to. A socket file already there is replaced only if it is
// this user's and nothing answers on it; anything else at `path` (a regular
// file, another user's socket, a live engine) is left alone. Returns the
// fd, or -errno with `error` set (-EADDRINUSE: an engine already serves
// there; -EEXIST: `path` is something else).
int listen_at(const std::string& path, std::string& error);
// Removes the socket file at `path` if it is this user's and nothing
// answers on it (call it after closing the listening fd): never a file of
// another kind or another user's, nor a socket another engine took over.
void unlink_socket(const std::string& path);

// Connects to the engine at `path`; returns the fd (close-on-exec) or
// -errno: -EPERM when the listener belongs to another user (not root).
// `why`, when given, gets a one-line message for a failure: "no ibfab
// engine at PATH: ...", "PATH: permission denied (...)", or the owner of
// a refused listener by uid and name.
int connect_to(const std::string& path, std::string* why = nullptr);

}  // namespace ibfab::api
