// The engine's request decoder (api/server) on arbitrary bytes. The input is
// cut into messages (a 2-byte length, host order, before each) and written
// on a fresh connection to an engine serving fat-tree:2:4 with its SM up;
// the engine must answer or refuse every one without crashing, and keep
// serving: every 32 inputs a well-formed client (Hello for H1, QueryNode)
// must get its answer.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/server/engine.h"
#include "tests/fuzz/fuzz_engine.h"
#include "api/client/seqpacket.h"

using namespace ibfab;
using fuzz::engine;
using fuzz::pump;

namespace {

void check_still_serving() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
  engine().adopt(sv[0]);
  api::Hello h;
  std::strcpy(h.node, "H1");
  api::send_message(sv[1], api::MsgType::Hello, &h, sizeof h);
  const char none = 0;
  api::send_message(sv[1], api::MsgType::QueryNode, &none, 0);
  pump();
  std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(api::NodeReply)> buf{};
  const ssize_t hello = api::recv_message(sv[1], buf);
  const ssize_t node = api::recv_message(sv[1], buf);
  const auto reply = api::body_as<api::NodeReply>(std::span<const uint8_t>(buf.data(), node > 0 ? node : 0),
                                                  api::MsgType::NodeReply);
  if (hello <= 0 || !reply || reply->num_ports != 1) {
    std::fprintf(stderr, "the engine stopped serving a well-formed client\n");
    std::abort();
  }
  ::close(sv[1]);
  pump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static unsigned inputs = 0;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  engine().adopt(sv[0]);
  for (std::size_t at = 0; at + 2 <= size;) {
    uint16_t n = 0;
    std::memcpy(&n, data + at, 2);
    at += 2;
    n = static_cast<uint16_t>(std::min<std::size_t>(n, size - at));
    (void)::send(sv[1], data + at, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    at += n;
  }
  pump();
  ::close(sv[1]);
  pump();
  if (++inputs % 32 == 0) check_still_serving();
  return 0;
}
