// `ibfab serve --fault` as a user runs it: a bad fault is one line and exit
// status 2 before anything listens; a good one is logged when it applies.
// IBFAB_BINARY is the built binary.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

std::string sock(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".sock";
}

struct Exit {
  int status = -1;
  std::string out;  // stdout and stderr together
};

// Runs `ibfab ARGS` to its end, with `env` ("NAME=VALUE ...") added to its
// environment (under `timeout`: a serve that wrongly starts serving is
// stopped, and fails the test by its status).
Exit ibfab(const std::string& args, const std::string& env = "") {
  Exit r;
  FILE* p = ::popen(("env " + env + " timeout 60 " + std::string(IBFAB_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// On the default socket path, in a private $XDG_RUNTIME_DIR.
TEST(ServeFaults, ABadFaultIsOneLineExitTwoAndNothingListens) {
  std::string dir = ::testing::TempDir() + "/serve-faults-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const Exit r = ibfab("serve --topology fat-tree:2:4 --fault \"1s link-down BAD[9]\"", "XDG_RUNTIME_DIR=" + dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: --fault '1s link-down BAD[9]': no node 'BAD' in the topology\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/ibfab.sock"));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(ServeFaults, BadSyntaxIsRefusedTheSameWay) {
  const std::string path = sock("bad-syntax");
  const std::string serve = "serve --topology fat-tree:2:4 --socket " + path;
  Exit r = ibfab(serve + " --fault '2s link-down L1[1]' --fault '1s link-loss S1[3] 1.5'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: --fault '1s link-loss S1[3] 1.5': the probability must be a number in [0, 1], got '1.5'\n");
  r = ibfab(serve + " --fault 'soon link-down L1[1]'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "ibfab: --fault 'soon link-down L1[1]': bad time 'soon' (examples: 0, 250ns, 10us, 1.5ms, 2s)\n");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_NE(ibfab("serve --help").out.find("--fault"), std::string::npos);
}

// The fault's line comes after `ready`, when it applies; SIGTERM then
// stops serve, which exits 0.
TEST(ServeFaults, AGoodFaultIsLoggedWhenItApplies) {
  const std::string path = sock("good-fault");
  // The shell prints its pid, then becomes `ibfab serve`.
  FILE* p = ::popen(("echo $$; exec " + std::string(IBFAB_BINARY) + " serve --topology fat-tree:2:4 --socket " + path +
                     " --fault '200ms link-down L2[1]' 2>&1")
                        .c_str(),
                    "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  const std::string wanted = "ibfab: fault at 200ms: link-down L2[1]\n";
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Reads what serve prints until `done(out)`, its end, or the deadline.
  const auto read_until = [&](auto done) {
    while (!done(out) && std::chrono::steady_clock::now() < end) {
      pollfd pfd{::fileno(p), POLLIN, 0};
      if (::poll(&pfd, 1, 1000) <= 0) continue;
      std::array<char, 4096> buf;
      const ssize_t n = ::read(::fileno(p), buf.data(), buf.size());
      if (n <= 0) return;
      out.append(buf.data(), static_cast<std::size_t>(n));
    }
  };
  read_until([&](const std::string& o) { return o.find(wanted) != std::string::npos; });
  const pid_t pid = static_cast<pid_t>(std::atoi(out.c_str()));
  ASSERT_GT(pid, 0) << out;
  ::kill(pid, SIGTERM);
  read_until([](const std::string&) { return false; });  // to its end: serve writes as it stops
  const int st = ::pclose(p);
  const std::size_t ready = out.find("ready\n"), fault = out.find(wanted);
  ASSERT_NE(fault, std::string::npos) << out;
  EXPECT_LT(ready, fault) << out;
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  EXPECT_NE(out.find("ibfab: stopped\n"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
