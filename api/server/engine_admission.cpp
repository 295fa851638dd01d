// Admission and the budget (engine.h, "Fairness and bounds"): which
// connections the engine accepts, how it turns the others away, and what
// each client is charged for what it makes the engine hold.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "api/client/seqpacket.h"
#include "api/server/engine.h"
#include "api/server/engine_connection.h"

namespace ibfab::api {

void Engine::charge(Connection& c, std::ptrdiff_t bytes) {
  c.charged += static_cast<std::size_t>(bytes);
  held_ += static_cast<std::size_t>(bytes);
  while (held_ > kHeldBudget) shed(c);
}

void Engine::charge_cm() {
  if (!cm_->take_held_changed()) return;
  for (auto& [fd, c] : connections_) {
    if (!c->cm || c->broken) continue;  // a broken connection is closed this round, and gives all back
    const std::size_t now = cm_->held(*c->cm);
    const auto change = static_cast<std::ptrdiff_t>(now) - static_cast<std::ptrdiff_t>(c->cm_charged);
    c->cm_charged = now;
    if (change != 0) charge(*c, change);
  }
}

void Engine::shed(Connection& first) {
  Connection* most = &first;
  for (auto& [fd, c] : connections_)
    if (c->charged > most->charged) most = c.get();
  const std::size_t had = most->charged;  // > 0: held_ is the sum of charged
  held_ -= had;
  most->charged = 0;
  most->out.clear();
  std::vector<uint8_t>().swap(most->partial);
  most->broken = true;
  log(most->who() + " dropped: it held " + std::to_string(had >> 10) + " KiB of unread output and unfinished " +
      "messages (or rdma_cm ids and events), the most of any client, when all clients' came to more than the " +
      "engine's " +
      std::to_string(kHeldBudget >> 20) + " MiB");
}

void Engine::accept_clients(int listen_fd) {
  for (int i = 0; i < kAcceptsPerRound; ++i) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    int error = fd < 0 ? errno : 0;
    if ((error == EMFILE || error == ENFILE) && reserve_fd_ >= 0) {
      // Out of descriptors: the reserve makes room to accept and refuse one.
      ::close(reserve_fd_);
      fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      error = fd < 0 ? errno : 0;
      if (fd >= 0) turn_away(fd, EMFILE, "the engine is out of file descriptors (ulimit -n of ibfab serve)");
      reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd >= 0) continue;
    }
    if (fd >= 0) {
      if (connections_.size() < options_.max_clients)
        adopt(fd);
      else
        turn_away(fd, EUSERS,
                  "the engine serves " + std::to_string(options_.max_clients) +
                      " connections, its limit (ibfab serve --max-clients)");
      continue;
    }
    if (error == EAGAIN || error == EWOULDBLOCK || error == EINTR || error == ECONNABORTED) return;
    // No resources to accept with (no reserve left, ENOBUFS, ENOMEM): the
    // connection stays waiting and the listening socket readable; look at
    // it again in a while, serving the others meanwhile.
    const int64_t now = wall_ns();
    if (now - refusals_logged_ns_ >= 1'000'000'000) {  // a line a second at most, as refusals
      log(std::string("cannot accept a connection: ") + std::strerror(error) + "; trying again every 100 ms");
      refusals_logged_ns_ = now;
    }
    listen_paused_until_ns_ = now + 100'000'000;
    return;
  }
}

void Engine::turn_away(int fd, int status, const std::string& why) {
  ++refusals_unlogged_;
  if (const int64_t now = wall_ns(); now - refusals_logged_ns_ >= 1'000'000'000) {
    log("refused " +
        (refusals_unlogged_ == 1 ? std::string("a connection") : std::to_string(refusals_unlogged_) + " connections") +
        ": " + why);
    refusals_logged_ns_ = now;
    refusals_unlogged_ = 0;
  }
  ErrorBody e;
  e.status = status;
  std::strncpy(e.text, why.c_str(), sizeof e.text - 1);
  send_message(fd, MsgType::Error, &e, sizeof e);
  // Nothing more comes in; what came (a Hello) is read, so that closing
  // does not reset the connection and take the Error with it.
  ::shutdown(fd, SHUT_RDWR);
  std::array<uint8_t, 512> drain;
  while (::recv(fd, drain.data(), drain.size(), MSG_DONTWAIT) > 0) {
  }
  ::close(fd);
}

}  // namespace ibfab::api
