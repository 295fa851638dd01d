#pragma once
// The control link between two ibfab-passthrough processes that share a
// scenario's hosts (--hosts, --link): one TCP connection carrying lines of
// text. The two run the steps in lockstep: the process holding a step's
// host runs it and sends its record ("step N RECORD"); the other waits for
// it, keeping its own hosts' receives posted, and answers what the
// running one asks of its hosts ("ask address H2" -> "answer ...").
#include <chrono>
#include <optional>
#include <string>

namespace ibfab::passthrough {

class PeerLink {
 public:
  // "listen:PORT" waits for the peer to connect; "ADDRESS:PORT" (IPv4, or
  // [IPv6]) connects, trying again until the peer listens. Both give up
  // after `timeout`. Throws SetupError with one line.
  PeerLink(const std::string& spec, std::chrono::milliseconds timeout);
  ~PeerLink();
  PeerLink(const PeerLink&) = delete;
  PeerLink& operator=(const PeerLink&) = delete;

  int fd() const { return fd_; }
  // Sends `line` and a newline. Throws SetupError when the peer is gone.
  void send(const std::string& line);
  // Reads what has arrived (the fd is non-blocking) and returns the first
  // whole line, if any. Throws SetupError when the peer closed the link
  // with no line left.
  std::optional<std::string> take_line();

 private:
  int fd_ = -1;
  std::string in_;  // bytes received, not yet taken as lines
};

}  // namespace ibfab::passthrough
