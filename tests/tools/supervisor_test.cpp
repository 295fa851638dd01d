// The processes of one launch (tools/launch/supervisor.h), with plain
// shell and Python programs: order and readiness, output, verdicts, the
// timeout, and nothing left running.
#include "tools/launch/supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace ibfab::launch {
namespace {

using namespace std::chrono_literals;

// A child running `script` with /bin/sh.
Child sh(const std::string& label, const std::string& script) {
  Child c;
  c.label = label;
  c.argv = {"/bin/sh", "-c", script};
  return c;
}

// Runs `children`; what they printed (both streams, in one file) and the verdict.
struct Outcome {
  Verdict verdict;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Outcome supervise(const std::vector<Child>& children, std::chrono::milliseconds timeout = 20s,
                  std::chrono::milliseconds grace = 3s) {
  char out_path[] = "/tmp/supervisor-out-XXXXXX";
  char err_path[] = "/tmp/supervisor-err-XXXXXX";
  const int out = ::mkstemp(out_path);
  const int err = ::mkstemp(err_path);
  Outcome o;
  o.verdict = Supervisor(out, err).run(children, timeout, grace);
  ::close(out);
  ::close(err);
  o.out = slurp(out_path);
  o.err = slurp(err_path);
  ::unlink(out_path);
  ::unlink(err_path);
  return o;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// A TCP port no socket of this machine's namespace uses now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

pid_t pid_in(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

TEST(Supervisor, EveryChildPassingPassesAndOutputIsPrefixedByStream) {
  const Outcome o = supervise({sh("a", "echo one; echo two >&2"), sh("b", "printf 'no newline'")});
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why;
  EXPECT_NE(o.out.find("[a] one\n"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("[a] two\n"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("[b] no newline\n"), std::string::npos) << o.out;
  EXPECT_TRUE(o.verdict.stopped.empty());
}

TEST(Supervisor, TheNextStartsOnlyOnceTheOneBeforeIsReady) {
  // b records whether a had written its mark (after the ready line) when b started.
  const std::string mark = "/tmp/supervisor-mark-" + std::to_string(::getpid());
  ::unlink(mark.c_str());
  Child a = sh("a", "sleep 0.3; echo now listening; touch " + mark + "; sleep 0.2");
  a.ready_line = "listening";
  const Outcome o = supervise({a, sh("b", "sleep 0.1; test -e " + mark)});
  ::unlink(mark.c_str());
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why << o.out << o.err;
}

TEST(Supervisor, StdoutIsATerminalSoAReadyLineIsNotStuckInABuffer) {
  // Python block-buffers stdout on a pipe: the line would come at exit.
  Child server;
  server.label = "py";
  server.argv = {"/usr/bin/python3", "-c", "import time\nprint('serving')\ntime.sleep(30)"};
  server.ready_line = "serving";
  server.background = true;
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = supervise({server, sh("client", "true")});
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(o.verdict.stopped, std::vector<std::string>{"py"});
}

TEST(Supervisor, AReadyPortIsAListeningSocket) {
  const int port = free_port();
  // The server listens only after a while; the client connects at once.
  Child server;
  server.label = "srv";
  server.argv = {"/usr/bin/python3", "-c",
                 "import socket, time\ntime.sleep(0.3)\ns = socket.socket()\n"
                 "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind(('127.0.0.1', " +
                     std::to_string(port) + "))\ns.listen()\nc, _ = s.accept()\nc.sendall(b'hello')\nc.close()"};
  server.ready_port = static_cast<uint16_t>(port);
  Child client;
  client.label = "cli";
  client.argv = {"/usr/bin/python3", "-c",
                 "import socket\ns = socket.create_connection(('127.0.0.1', " + std::to_string(port) +
                     "))\nassert s.recv(5) == b'hello'\nprint('got it')"};
  const Outcome o = supervise({server, client});
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why << o.err;
  EXPECT_NE(o.out.find("[cli] got it"), std::string::npos) << o.out;
}

TEST(Supervisor, TheFirstFailureStopsTheRestAndSaysWho) {
  const std::string pidfile = "/tmp/supervisor-pid-" + std::to_string(::getpid());
  Child server = sh("server", "echo $$ > " + pidfile + "; echo up; exec sleep 60");
  server.ready_line = "up";
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = supervise({server, sh("client", "exit 3")});
  EXPECT_FALSE(o.verdict.passed);
  EXPECT_EQ(o.verdict.failed, 1u);
  EXPECT_EQ(o.verdict.why, "exited with status 3 (expected 0)");
  EXPECT_EQ(o.verdict.stopped, std::vector<std::string>{"server"});
  EXPECT_FALSE(alive(pid_in(pidfile)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  ::unlink(pidfile.c_str());
}

TEST(Supervisor, AnExpectedStatusOtherThanZeroAndSignalsAreJudged) {
  Child expects_two = sh("two", "exit 2");
  expects_two.expect_exit = 2;
  EXPECT_TRUE(supervise({expects_two}).verdict.passed);
  const Outcome zero = supervise({[] {
    Child c = sh("z", "exit 0");
    c.expect_exit = 1;
    return c;
  }()});
  EXPECT_EQ(zero.verdict.why, "exited with status 0 (expected 1)");
  const Outcome killed = supervise({sh("k", "kill -SEGV $$")});
  EXPECT_FALSE(killed.verdict.passed);
  EXPECT_NE(killed.verdict.why.find("killed by signal 11"), std::string::npos) << killed.verdict.why;
}

TEST(Supervisor, ExitingBeforeReadyFailsEvenWithTheExpectedStatus) {
  Child c = sh("early", "echo something else");
  c.ready_line = "ready";
  const Outcome o = supervise({c, sh("never", "echo started")});
  EXPECT_FALSE(o.verdict.passed);
  EXPECT_FALSE(o.verdict.was_ready);
  EXPECT_EQ(o.verdict.why, "exited before it was ready (never printed 'ready')");
  EXPECT_EQ(o.out.find("[never]"), std::string::npos);  // never started
}

TEST(Supervisor, TheTimeoutEndsTheRunAndNamesWhatWasNotReady) {
  Child c = sh("slow", "exec sleep 60");
  c.ready_line = "ready";
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = supervise({c, sh("next", "true")}, 300ms);
  EXPECT_FALSE(o.verdict.passed);
  EXPECT_EQ(o.verdict.failed, 2u);
  EXPECT_EQ(o.verdict.why, "timed out after 300 ms; slow was not ready (no line with 'ready')");
  EXPECT_EQ(o.verdict.stopped, std::vector<std::string>{"slow"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Supervisor, AChildThatIgnoresSigtermIsKilledAfterTheGrace) {
  const std::string pidfile = "/tmp/supervisor-stubborn-" + std::to_string(::getpid());
  Child c = sh("stubborn", "trap '' TERM; echo $$ > " + pidfile + "; echo up; while :; do sleep 0.05; done");
  c.ready_line = "up";
  c.background = true;
  const Outcome o = supervise({c, sh("done", "true")}, 20s, 300ms);
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why;
  EXPECT_FALSE(alive(pid_in(pidfile)));
  ::unlink(pidfile.c_str());
}

TEST(Supervisor, DescendantsThatLeftTheirGroupAreKilledToo) {
  // The child starts a daemon in a session of its own, then exits.
  const std::string pidfile = "/tmp/supervisor-daemon-" + std::to_string(::getpid());
  const Outcome o = supervise({sh("parent", "setsid sh -c 'echo $$ > " + pidfile + "; exec sleep 60' & sleep 0.2")});
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why;
  const pid_t daemon = pid_in(pidfile);
  ASSERT_GT(daemon, 0);
  EXPECT_FALSE(alive(daemon));
  ::unlink(pidfile.c_str());
}

TEST(Supervisor, AQuietChildsLinesAreShownOnlyWhenTheRunFails) {
  Child quiet = sh("fabric", "echo quiet line; echo ready; exec sleep 60");
  quiet.quiet = true;
  quiet.ready_line = "ready";
  quiet.ready_whole_line = true;
  quiet.background = true;
  const Outcome passed = supervise({quiet, sh("ok", "true")});
  EXPECT_TRUE(passed.verdict.passed);
  EXPECT_EQ((passed.out + passed.err).find("quiet line"), std::string::npos);
  const Outcome failed = supervise({quiet, sh("bad", "false")});
  EXPECT_FALSE(failed.verdict.passed);
  EXPECT_NE(failed.err.find("[fabric] quiet line\n"), std::string::npos) << failed.err;
}

TEST(Supervisor, AWholeLineMustMatchExactly) {
  Child c = sh("f", "echo already; echo 'ready ' ; sleep 0.2");
  c.ready_line = "ready";
  c.ready_whole_line = true;
  const Outcome o = supervise({c, sh("next", "true")});
  EXPECT_FALSE(o.verdict.passed);
  EXPECT_FALSE(o.verdict.was_ready);
}

TEST(Supervisor, AChildHasStdinStdoutAndStderrAndNoOtherDescriptor) {
  // /proc/self/fd of the child: 0, 1, 2, and the one ls opens to read it;
  // this test's own descriptors (the output files) are not passed on.
  const Outcome o = supervise({sh("fds", "exec ls -1 /proc/self/fd")});
  EXPECT_TRUE(o.verdict.passed) << o.verdict.why;
  std::string listed;
  for (std::size_t at = 0; (at = o.out.find("[fds] ", at)) != std::string::npos; at += 6)
    listed += o.out.substr(at + 6, o.out.find('\n', at) - at - 6) + " ";
  EXPECT_EQ(listed, "0 1 2 3 ") << o.out;
}

TEST(Supervisor, AProgramThatCannotRunFailsWithTheReason) {
  Child c;
  c.label = "missing";
  c.argv = {"/nonexistent/program"};
  const Outcome o = supervise({c});
  EXPECT_EQ(o.verdict.why, "exited with status 127 (expected 0)");
  EXPECT_NE(o.err.find("[missing] cannot run /nonexistent/program: No such file or directory"), std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace ibfab::launch
