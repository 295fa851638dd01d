#pragma once
// Sending and receiving protocol messages (protocol.h) on a SOCK_SEQPACKET
// socket: one message per packet, optionally with file descriptors
// (SCM_RIGHTS) riding along.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "api/client/protocol.h"

namespace ibfab::api {

inline constexpr std::size_t kMaxFds = 4;  // per message

// File descriptors that came with a message; closed on destruction unless
// taken.
struct ReceivedFds {
  int fd[kMaxFds] = {-1, -1, -1, -1};
  std::size_t count = 0;
  ReceivedFds() = default;
  ReceivedFds(const ReceivedFds&) = delete;
  ReceivedFds& operator=(const ReceivedFds&) = delete;
  ~ReceivedFds() { close_all(); }
  // The i-th fd, now the caller's; -1 if there is none.
  int take(std::size_t i);
  void close_all();
};

// Sends header + body + tail as one packet, with `fds`. Returns 0 or
// -errno (-EPIPE: the peer is gone). Never raises SIGPIPE.
int send_message(int fd, MsgType type, const void* body, std::size_t body_size,
                 std::span<const uint8_t> tail = {}, std::span<const int> fds = {});

// Receives one packet into `buf`. Returns its size, 0 at end of stream, or
// -errno (-EAGAIN on a non-blocking socket with nothing queued; -EMSGSIZE
// when the packet was larger than `buf`, the rest being discarded). File
// descriptors that came with it go to `fds` if given, else are closed.
ssize_t recv_message(int fd, std::span<uint8_t> buf, ReceivedFds* fds = nullptr);

// Why the engine refused a connection, for an error (-errno) a Hello got
// back: -EUSERS (it serves as many connections as it takes) or -EMFILE (it
// has no file descriptor left); "" for any other error.
std::string refusal(int error);

}  // namespace ibfab::api
