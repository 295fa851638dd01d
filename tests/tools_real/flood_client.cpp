// A client that misbehaves towards `ibfab serve`, for the fairness tests
// and benchmark (fairness.py, bench/served_fairness.py): it speaks the
// engine's protocol itself, on the socket given, as host NODE.
//
// usage: flood_client SOCKET NODE MODE [COUNT]
//   requests           sends ListHosts requests (32 KiB answers) on a control
//                      connection, never reading the answers; connects again
//                      whenever the engine closes it. Runs until killed.
//   mads               sends SA GetTables on a MAD port, never reading the
//                      answers; connects again whenever the engine closes it.
//                      Runs until killed.
//   events             through librdmacm (the engine found by IBFAB_SOCKET
//                      and IBFAB_NODE, as under `ibfab exec`): one event
//                      channel, and ids made and given an address to
//                      resolve, each an ADDR_RESOLVED event, in a loop,
//                      never reading the channel; starts again in a new
//                      process whenever the engine drops this one. Runs
//                      until killed.
//   partial COUNT      opens COUNT MAD ports and sends on each a 16 MiB
//                      SendMad in 96 KiB fragments, all but the last; prints
//                      "partial: N of COUNT sent all but their last fragment"
//                      (the others were cut off), then waits until killed.
//   connections COUNT  opens COUNT control connections; prints
//                      "connections: H held, R refused (WHY)"; then, for each
//                      line on stdin, asks every held one for its node and
//                      prints "answered A of H"; exits at the end of stdin.
// The flooding modes print "flooding" once their first connection is up.
// Every connection gives up a wait after 5 s (SO_RCVTIMEO, SO_SNDTIMEO).
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "api/client/program_clock.h"
#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "api/client/session.h"
#include "api/client/socket_path.h"

using namespace ibfab;

namespace {

std::string g_socket, g_node;

// A greeted connection of `kind` (port 1 for a MAD port), or -errno.
int open_connection(api::ConnectionKind kind, uint32_t& handle) {
  const int fd = api::connect_to(g_socket);
  if (fd < 0) return fd;
  const timeval five{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &five, sizeof five);
  if (const int e = client::greet(fd, g_node, kind, kind == api::ConnectionKind::MadPort ? 1 : 0, handle)) {
    ::close(fd);
    return e;
  }
  return fd;
}

void say(const char* line) {
  std::printf("%s\n", line);
  std::fflush(stdout);
}

// Sends `type` with `body` on a fresh connection, again and again; a new
// connection when the engine closes this one.
[[noreturn]] void flood(api::ConnectionKind kind, api::MsgType type, const void* body, std::size_t size,
                        std::span<const uint8_t> tail, bool mad) {
  bool first = true;
  for (;;) {
    uint32_t handle = 0;
    const int fd = open_connection(kind, handle);
    int control = -1;
    if (fd >= 0 && mad) {  // an SA agent for the MAD port, registered on a control connection
      uint32_t none = 0;
      control = open_connection(api::ConnectionKind::Control, none);
      api::RegisterAgent r;
      r.handle = handle;
      r.mgmt_class = 0x03;
      r.class_version = 2;
      r.rmpp_version = 1;
      std::array<uint8_t, 64> reply;
      if (control < 0 || api::send_message(control, api::MsgType::RegisterAgent, &r, sizeof r) != 0 ||
          api::recv_message(control, reply) <= 0) {
        std::fprintf(stderr, "flood_client: cannot register an SA agent\n");
        std::exit(1);
      }
    }
    if (fd < 0) {
      std::fprintf(stderr, "flood_client: %s\n", std::strerror(-fd));
      std::exit(1);
    }
    if (first) say("flooding");
    first = false;
    api::MadEnvelope env;
    if (mad) std::memcpy(&env, body, sizeof env);
    for (;;) {
      if (mad) env.stamp = api::program_clock_ns();
      const int e = api::send_message(fd, type, mad ? &env : body, size, tail);
      if (e != 0 && e != -EAGAIN) break;  // EAGAIN: 5 s without room; the engine is not reading us
    }
    ::close(fd);
    if (control >= 0) ::close(control);
  }
}

// One process's rdma_cm events, made and never read, until a call fails
// (the engine dropped the process): its status.
int make_events(bool& first) {
  rdma_event_channel* ch = rdma_create_event_channel();
  if (!ch) return errno;
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  ::inet_pton(AF_INET, "10.1.0.2", &dst.sin_addr);
  for (;;) {
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(ch, &id, nullptr, RDMA_PS_UDP) != 0 ||
        rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&dst), 2000) != 0)
      return errno;
    if (first) say("flooding");
    first = false;
  }
}

// make_events in a child process, again and again: librdmacm's connection
// to the engine is one per process.
[[noreturn]] void flood_events() {
  bool first = true;
  for (;;) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // killed with its parent, as the tests stop it
      if (::getppid() == 1) std::_Exit(1);
      const int e = make_events(first);
      std::fprintf(stderr, "flood_client: the engine dropped us (%s)\n", std::strerror(e));
      std::_Exit(first ? 1 : 0);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(1);
    first = false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: flood_client SOCKET NODE requests|mads|events|partial COUNT|connections COUNT\n");
    return 2;
  }
  g_socket = argv[1];
  g_node = argv[2];
  const std::string mode = argv[3];
  const int count = argc > 4 ? std::atoi(argv[4]) : 0;
  if (mode == "requests") {
    const api::ListHosts req{0};
    flood(api::ConnectionKind::Control, api::MsgType::ListHosts, &req, sizeof req, {}, false);
  }
  if (mode == "mads") {
    // An SA GetTable of MCMemberRecords (saquery -g), TID in the low bits.
    std::array<uint8_t, 256> m{};
    m[0] = 1;
    m[1] = 0x03;
    m[2] = 2;
    m[3] = 0x12;
    m[11] = 1;
    m[16] = 0x00;
    m[17] = 0x38;
    api::MadEnvelope env;
    env.timeout_ms = 1000;
    env.length = env.total = static_cast<uint32_t>(m.size());
    env.addr.lid = htobe16(1);  // the built-in SM's LID
    env.addr.qpn = htobe32(1);
    env.addr.qkey = htobe32(0x80010000);
    flood(api::ConnectionKind::MadPort, api::MsgType::SendMad, &env, sizeof env, m, true);
  }
  if (mode == "events") flood_events();
  if (mode == "partial" && count > 0) {
    std::vector<uint8_t> fragment(api::kFragment);
    api::MadEnvelope env;
    env.length = static_cast<uint32_t>(fragment.size());
    env.total = 16u << 20;
    int whole = 0;
    std::vector<int> fds;
    for (int i = 0; i < count; ++i) {
      uint32_t handle = 0;
      const int fd = open_connection(api::ConnectionKind::MadPort, handle);
      if (fd < 0) break;
      fds.push_back(fd);
      std::size_t at = 0;
      for (; at + fragment.size() < env.total; at += fragment.size()) {
        env.stamp = api::program_clock_ns();
        if (api::send_message(fd, api::MsgType::SendMad, &env, sizeof env, fragment) != 0) break;
      }
      if (at + fragment.size() >= env.total) ++whole;
    }
    std::printf("partial: %d of %d sent all but their last fragment\n", whole, count);
    std::fflush(stdout);
    for (;;) ::pause();
  }
  if (mode == "connections" && count > 0) {
    std::vector<int> held;
    int refused = 0;
    std::string why;
    for (int i = 0; i < count; ++i) {
      uint32_t handle = 0;
      const int fd = open_connection(api::ConnectionKind::Control, handle);
      if (fd >= 0) {
        held.push_back(fd);
      } else {
        ++refused;
        why = std::strerror(-fd);
      }
    }
    std::printf("connections: %zu held, %d refused (%s)\n", held.size(), refused, why.c_str());
    std::fflush(stdout);
    for (std::string line; std::getline(std::cin, line);) {
      std::size_t answered = 0;
      for (const int fd : held) {
        std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(api::NodeReply)> buf;
        if (api::send_message(fd, api::MsgType::QueryNode, nullptr, 0) == 0 && api::recv_message(fd, buf) > 0 &&
            api::type_of(std::span<const uint8_t>(buf.data(), buf.size())) == api::MsgType::NodeReply)
          ++answered;
      }
      std::printf("answered %zu of %zu\n", answered, held.size());
      std::fflush(stdout);
    }
    return 0;
  }
  std::fprintf(stderr, "flood_client: unknown mode '%s' (or no COUNT)\n", mode.c_str());
  return 2;
}
