// Event channels: a SOCK_SEQPACKET socket pair per channel, the client's end
// the channel's fd (pollable; blocking unless the application sets
// O_NONBLOCK), the engine's end handed over with CmCreateChannel. The
// engine writes one api::CmEvent per message there.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {

Channel* create_channel() {
  if (init() != 0) return nullptr;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return nullptr;
  auto* c = new (std::nothrow) Channel;
  if (!c) {
    ::close(pair[0]);
    ::close(pair[1]);
    errno = ENOMEM;
    return nullptr;
  }
  c->ch.fd = pair[0];
  c->engine_end = pair[1];
  const api::CmCreateChannel req;
  const int give[] = {pair[1]};
  const api::CmReply r = request(api::MsgType::CmCreateChannel, &req, sizeof req, give);
  if (r.value < 0) {
    ::close(pair[0]);
    ::close(pair[1]);
    delete c;
    errno = static_cast<int>(-r.value);
    return nullptr;
  }
  c->handle = static_cast<uint32_t>(r.value);
  return c;
}

// Closing the client's end is what ends the channel for the engine as well;
// CmDestroyChannel tells it at once.
void destroy_channel(Channel* c) {
  const api::CmIdRequest req{c->handle, 0};
  request(api::MsgType::CmDestroyChannel, &req, sizeof req);
  ::close(c->ch.fd);
  ::close(c->engine_end);
  delete c;
}

std::vector<api::CmEvent> drain(Channel& c) {
  std::vector<api::CmEvent> out;
  for (;;) {
    api::CmEvent e;
    const ssize_t n = ::recv(c.ch.fd, &e, sizeof e, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof e)) break;
    out.push_back(e);
  }
  return out;
}

void requeue(Channel& c, const api::CmEvent& e) {
  (void)::send(c.engine_end, &e, sizeof e, MSG_DONTWAIT | MSG_NOSIGNAL);
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT rdma_event_channel* rdma_create_event_channel() {
  Channel* c = create_channel();
  return c ? &c->ch : nullptr;
}

IBFAB_RDMACM_EXPORT void rdma_destroy_event_channel(rdma_event_channel* channel) {
  if (channel) destroy_channel(Channel::from(channel));
}
