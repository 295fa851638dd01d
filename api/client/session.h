#pragma once
// The client core: a process's connection to the engine that owns its
// fabric, shared by the drop-in libraries. The environment names the
// fabric:
//   IBFAB_NODE      the host this process runs on (required, except in
//                   embedded mode, where it only orders the devices);
//   IBFAB_SOCKET    the engine's socket (default: api/client/socket_path.h);
//                   `ibfab exec` sets both;
//   IBFAB_TOPOLOGY  instead of a served fabric, this topology in-process:
//                   an engine (with the built-in SM) on a thread of this
//                   process, no daemon (for tests); see EmbeddedStarter.
//
// Control requests (node queries, agent registration) go over one control
// connection, one at a time (a mutex), and wait for their reply. MADs go
// over a connection of their own per opened port, so that their fd is
// pollable and a MAD never waits behind a reply.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/client/protocol.h"

namespace ibfab::client {

// An HCA as the drop-in libraries name it.
struct DeviceEntry {
  std::string name;  // "ibfab0", "ibfab1", ...
  std::string node;  // the host it belongs to
};

class Session {
 public:
  // The process's session, connected on first use. nullptr when the
  // environment names no node or the engine cannot be reached; `error`
  // (if given) then says why.
  static Session* get(std::string* error = nullptr);

  // The host this process runs on; "" in embedded mode without IBFAB_NODE.
  const std::string& node() const { return node_; }
  const std::string& socket() const { return socket_; }
  // The HCAs this process sees. Served: its host's, "ibfab0". Embedded
  // (IBFAB_TOPOLOGY), or served with every host local (`ibfab serve
  // --every-host-local`): every host's, IBFAB_NODE's first (if set), then
  // the others in the topology's order, "ibfab0", "ibfab1", ...
  // Asked once: the hosts of a fabric do not change.
  std::vector<DeviceEntry> devices();
  // The host's HCA (or `node`'s) as the engine sees it now; nullopt if the
  // engine is gone or has no such host.
  std::optional<api::NodeReply> query_node(const std::string& node = "");
  // Opens a MAD connection for HCA port `port`: returns its fd (blocking,
  // close-on-exec) and sets `handle`, or returns -errno (-ENODEV: no such
  // port; -ECONNREFUSED: no engine).
  int open_mad_port(uint8_t port, uint32_t& handle, const std::string& node = "");
  // The host of device `name` ("ibfab0", ...); "" if there is none.
  std::string node_of(const std::string& name);
  // Agent id (>= 0, per MAD port) or -errno.
  int register_agent(const api::RegisterAgent& req);
  int unregister_agent(uint32_t handle, uint32_t agent);

 private:
  Session(int fd, std::string node, std::string socket, bool every_host)
      : fd_(fd), node_(std::move(node)), socket_(std::move(socket)), every_host_(every_host) {}
  // Sends a request and waits for the reply of type `reply_type`; returns
  // 0 or -errno.
  int request(api::MsgType type, const void* body, std::size_t size, api::MsgType reply_type, void* reply,
              std::size_t reply_size);

  std::mutex mu_;
  int fd_;
  std::string node_;
  std::string socket_;
  bool every_host_;  // every host is local: embedded, or an engine served with --every-host-local
  std::once_flag devices_once_;
  std::vector<DeviceEntry> devices_;
};

// The in-process transport (IBFAB_TOPOLOGY): starts an engine for
// `topology` on a thread of this process and returns the socket it serves,
// or "" with `why` set. The engine registers it (api/server/
// embedded_engine.cpp) when it is linked into the program or library.
using EmbeddedStarter = std::string (*)(const std::string& topology, std::string& why);
void register_embedded_starter(EmbeddedStarter starter);

// Progress by the calling thread in the in-process transport
// (api::Engine::drive), registered with the starter: -1 when there is no
// engine in this copy of the client core or its thread is in a round
// (nothing done), 0 when the round ran, 1 when it ran and the engine's
// thread must be woken (its doorbell). drive_embedded() is -1 with no
// driver registered.
using EmbeddedDriver = int (*)();
void register_embedded_driver(EmbeddedDriver driver);
int drive_embedded();

// Sends Hello on `fd` and reads the reply: 0 and `handle`, or -errno.
int greet(int fd, const std::string& node, api::ConnectionKind kind, uint8_t port, uint32_t& handle,
          uint32_t* flags = nullptr);

}  // namespace ibfab::client
