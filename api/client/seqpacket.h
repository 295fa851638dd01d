#pragma once
// Sending and receiving protocol messages (protocol.h) on a SOCK_SEQPACKET
// socket: one message per packet.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "api/client/protocol.h"

namespace ibfab::api {

// Sends header + body + tail as one packet. Returns 0 or -errno (-EPIPE:
// the peer is gone). Never raises SIGPIPE.
int send_message(int fd, MsgType type, const void* body, std::size_t body_size,
                 std::span<const uint8_t> tail = {});

// Receives one packet into `buf`. Returns its size, 0 at end of stream, or
// -errno (-EAGAIN on a non-blocking socket with nothing queued; -EMSGSIZE
// when the packet was larger than `buf`, the rest being discarded).
ssize_t recv_message(int fd, std::span<uint8_t> buf);

}  // namespace ibfab::api
