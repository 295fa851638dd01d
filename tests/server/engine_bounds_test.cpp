// The engine's bounds (docs/ARCHITECTURE.md, fairness and bounds): the
// connections past its limit are refused with EUSERS and the engine goes on
// serving the others; unfinished SendMads past the budget for what clients
// hold cost the client holding the most its connection, and the log says so.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <mutex>
#include <string>
#include <vector>

#include "api/client/program_clock.h"
#include "api/client/seqpacket.h"
#include "api/client/session.h"
#include "api/client/socket_path.h"
#include "tests/server/engine_thread.h"

namespace ibfab::api {
namespace {

// An engine whose log lines the test can read.
class Bounded : public ::testing::Test {
 protected:
  void start(std::size_t max_clients) {
    EngineOptions o;
    o.max_clients = max_clients;
    o.log = [this](const std::string& line) {
      std::lock_guard lock(mu_);
      log_.push_back(line);
    };
    ASSERT_EQ(engine_.start(o, "bounds"), "");
  }
  // Log lines containing `text`.
  std::vector<std::string> logged(const std::string& text) {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const std::string& l : log_)
      if (l.find(text) != std::string::npos) out.push_back(l);
    return out;
  }
  // A connection to the engine, greeted as `kind` on H2 (0 or -errno in `status`).
  int open(ConnectionKind kind, int& status) {
    const int fd = connect_to(engine_.path());
    const timeval safety{20, 0};  // a broken engine fails the test instead of hanging it
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &safety, sizeof safety);
    uint32_t handle = 0;
    status = client::greet(fd, "H2", kind, kind == ConnectionKind::MadPort ? 1 : 0, handle);
    return fd;
  }
  bool answers(int fd) {
    std::array<uint8_t, sizeof(MsgHeader) + sizeof(NodeReply)> buf;
    return send_message(fd, MsgType::QueryNode, nullptr, 0) == 0 && recv_message(fd, buf) > 0 &&
           type_of(std::span<const uint8_t>(buf.data(), buf.size())) == MsgType::NodeReply;
  }

  // The engine's thread logs until it is stopped: it goes first (members
  // go in reverse order), before the log it writes to.
  std::mutex mu_;
  std::vector<std::string> log_;
  testing::EngineThread engine_;
};

TEST_F(Bounded, ConnectionsPastTheLimitAreRefusedAndTheOthersServed) {
  start(3);
  int status = 0;
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(open(ConnectionKind::Control, status));
    ASSERT_EQ(status, 0) << "connection " << i;
  }
  const int fourth = open(ConnectionKind::Control, status);
  EXPECT_EQ(status, -EUSERS);
  ::close(fourth);
  EXPECT_EQ(logged("refused a connection: the engine serves 3 connections, its limit").size(), 1u);
  for (const int fd : held) EXPECT_TRUE(answers(fd));
  // One goes; once the engine has seen it go (it answered a later request
  // on another connection, and accepts only in a later round), there is room.
  ::close(held[0]);
  EXPECT_TRUE(answers(held[1]));
  const int again = open(ConnectionKind::Control, status);
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(answers(again));
  for (const int fd : {again, held[1], held[2]}) ::close(fd);
}

TEST_F(Bounded, UnfinishedSendMadsPastTheBudgetCostTheClientHoldingTheMost) {
  start(64);
  // Each port starts a 16 MiB SendMad and never finishes it: four fit the
  // engine's 64 MiB budget, the fifth does not, and it holds as much as any.
  std::vector<uint8_t> fragment(kFragment);
  MadEnvelope env;
  env.length = static_cast<uint32_t>(fragment.size());
  env.total = 16u << 20;
  std::vector<int> ports;
  for (int i = 0; i < 5; ++i) {
    int status = 0;
    ports.push_back(open(ConnectionKind::MadPort, status));
    ASSERT_EQ(status, 0);
    env.stamp = program_clock_ns();
    ASSERT_EQ(send_message(ports.back(), MsgType::SendMad, &env, sizeof env, fragment), 0);
  }
  std::array<uint8_t, 512> buf;
  EXPECT_EQ(recv_message(ports[4], buf), 0) << "the engine closed the fifth port";
  const std::vector<std::string> dropped =
      logged("dropped: it held 16384 KiB of unread output and unfinished messages");
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_NE(dropped[0].find("more than the engine's 64 MiB"), std::string::npos) << dropped[0];
  int status = 0;
  const int control = open(ConnectionKind::Control, status);
  EXPECT_TRUE(answers(control)) << "the engine goes on";
  EXPECT_EQ(logged("dropped").size(), 1u) << "the other four keep their connections";
  for (const int fd : ports) ::close(fd);
  ::close(control);
}

}  // namespace
}  // namespace ibfab::api
