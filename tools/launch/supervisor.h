#pragma once
// Runs a set of processes as one test (`ibfab launch`): in order, each
// started once the one before it is ready; their output forwarded line by
// line with a "[LABEL] " prefix; a timeout over the whole; and nothing
// left behind.
//
// - Each child runs in a session of its own, stdin /dev/null, stdout on a
//   pseudo-terminal (so that stdio line-buffers it, as in a terminal) and
//   stderr on a pipe, and no other descriptor; what it writes goes to the supervisor's stdout and
//   stderr with its prefix. It gets `parent_death_signal` if the
//   supervisor dies.
// - Ready: a child with a ready line is ready once a line of its output
//   (stdout or stderr) contains the text; with a ready port, once a TCP
//   socket listens on that port in its network namespace
//   (/proc/PID/net/tcp, tcp6), or its port probe says so; with neither,
//   once started.
// - Passing: a foreground child passes when it exits with its expected
//   status after being ready. Background children are stopped (SIGTERM)
//   once every foreground child has passed, and pass if they ran until
//   then (or exited with their expected status on their own).
// - The first child to fail ends the run: exiting with another status, by
//   a signal, or before it was ready. So do the timeout, and SIGINT,
//   SIGTERM or SIGHUP to the supervisor.
// - Stopping: SIGTERM to each live child's process group, latest started
//   first, then SIGKILL to what is left after a grace period; descendants
//   that left their group are reparented to the supervisor (it is a child
//   subreaper) and killed too. run() returns only when every descendant
//   is gone.
//
// The supervisor blocks SIGCHLD, SIGINT, SIGTERM and SIGHUP in the
// calling thread for the duration of run(); it must be the process's only
// thread that forks.
#include <signal.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ibfab::launch {

struct Child {
  std::string label;              // the output prefix "[label] " and the name in verdicts
  std::vector<std::string> argv;  // argv[0] is the path execv(2) runs
  std::string ready_line;         // ready once a line contains this ...
  bool ready_whole_line = false;  // ... or, if set, is exactly this
  uint16_t ready_port = 0;
  // Another place a listener on ready_port may be (an engine's rdma_cm);
  // asked as often as the child's TCP sockets are looked at.
  std::function<bool(uint16_t port)> port_probe;
  int expect_exit = 0;
  bool background = false;
  // Quiet: its output is read (for the ready line) and its last lines are
  // kept, but they are forwarded only when the run fails, at its end.
  bool quiet = false;
  int parent_death_signal = SIGKILL;
};

struct Verdict {
  bool passed = false;
  // The child that failed first (children.size() for a timeout or an
  // interruption that no one child caused), whether it had been ready,
  // and why, e.g. "exited with status 3 (expected 0)".
  std::size_t failed = 0;
  bool was_ready = false;
  std::string why;
  // Children that were still running when the run ended and were stopped
  // (labels, in start order).
  std::vector<std::string> stopped;
};

class Supervisor {
 public:
  // Output goes to the file descriptors `out` and `err`.
  Supervisor(int out, int err) : out_(out), err_(err) {}
  Verdict run(const std::vector<Child>& children, std::chrono::milliseconds timeout,
              std::chrono::milliseconds grace = std::chrono::seconds(3));

 private:
  int out_, err_;
};

}  // namespace ibfab::launch
