// What a scenario costs per action (issue 13: about 5 KB each, 244 MB for
// 40,000): the peak resident size of reading and running N actions, N =
// 4,000 and 24,000, each in a child process of its own, so that one run's
// heap does not serve the other. It counts the YAML reader's trees, the
// actions, their bound closures and events, the hosts' requests and the
// report. And texts that would take gigabytes (aliases of one action, a
// flow list of millions of scalars) stop at the reader's node budget.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>

#include "tests/sanitized_build.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_runner.h"

namespace ibfab::scenario {
namespace {

// The text of a scenario: join/leave by H2..H8 on 8 groups, 100 us apart,
// after the subnet is up.
std::string many_actions(int n) {
  std::string t = "name: many\ntopology: fat-tree:2:4\nduration: " + std::to_string(20 + n / 10) +
                  "ms\nsms:\n  - {node: H1}\nactions:\n";
  for (int i = 0; i < n; ++i) {
    char line[128];
    std::snprintf(line, sizeof line, "  - {at: %dus, %s: {node: H%d, mgid: \"ff12:4001::%x\"}}\n", 10'000 + 100 * i,
                  (i / 7) % 2 == 0 ? "join" : "leave", 2 + i % 7, 1 + (i / 14) % 8);
    t += line;
  }
  return t;
}

long peak_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Peak resident kB of a child that runs many_actions(n); -1 if it failed.
long run_in_child(int n) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    long kb = -1;
    {
      const Scenario s = parse_scenario(many_actions(n), "many.yaml");
      const Report r = run_scenario(s, {});
      if (r.passed() && r.checks == static_cast<std::size_t>(n)) kb = peak_kb();
    }
    const ssize_t w = write(fds[1], &kb, sizeof kb);
    _exit(w == sizeof kb ? 0 : 1);
  }
  close(fds[1]);
  long kb = -1;
  if (read(fds[0], &kb, sizeof kb) != sizeof kb) kb = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return kb;
}

// The peaks below are bounds of an unsanitized build: a sanitized one
// (IBFAB_SANITIZED) adds redzones and shadow memory and keeps freed memory.
#ifdef IBFAB_SANITIZED
constexpr bool kCheckPeaks = false;
#else
constexpr bool kCheckPeaks = true;
#endif

TEST(ScenarioMemory, AnActionCostsAFewHundredBytes) {
  if (!kCheckPeaks) GTEST_SKIP() << "a resident-size bound; sanitized builds hold more";
  const long small = run_in_child(4'000);
  const long large = run_in_child(24'000);
  ASSERT_GT(small, 0) << "the 4,000-action run failed";
  ASSERT_GT(large, 0) << "the 24,000-action run failed";
  const double per_action = static_cast<double>(large - small) * 1024.0 / 20'000.0;
  RecordProperty("bytes_per_action", static_cast<int>(per_action));
  std::printf("peak %ld kB with 4,000 actions, %ld kB with 24,000: %.0f bytes per action\n", small, large, per_action);
  EXPECT_LT(per_action, 600.0);
}

// Reads `text` in a child: (the growth of its peak resident kB while
// reading, the reader's message or "" when it read).
std::pair<long, std::string> read_in_child(const std::string& text) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, ""};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const long before = peak_kb();
    std::string message;
    try {
      (void)parse_scenario(text, "big.yaml");
    } catch (const ScenarioError& e) {
      message = e.what();
    }
    const long kb = peak_kb() - before;
    const bool ok = write(fds[1], &kb, sizeof kb) == sizeof kb && write(fds[1], message.data(), message.size()) >= 0;
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  long kb = -1;
  std::string message;
  if (read(fds[0], &kb, sizeof kb) != sizeof kb) kb = -1;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {kb, message};
}

TEST(ScenarioMemory, TextsThatWouldTakeGigabytesStopAtTheNodeBudget) {
  // 3.3 million aliases of one action, in 16 MiB: each a whole action (3 GB, unbounded).
  std::string aliases = "topology: fat-tree:2:4\nduration: 10ms\nactions:\n"
                        "- &a {at: 1ms, join: {node: H3, mgid: 'ff12:4001::3'}}\n";
  for (int i = 0; i < 3'300'000; ++i) aliases += "- *a\n";
  auto [kb, message] = read_in_child(aliases);
  ASSERT_GE(kb, 0);
  std::printf("aliases: %ld kB more at the peak: %s\n", kb, message.c_str());
  // The node past the budget, 1,000,001: the root map, two keys and their
  // values, the actions key and list, and the anchored action's 9 nodes
  // come first, so the first alias (line 5) is node 17.
  EXPECT_EQ(message, "big.yaml:" + std::to_string(5 + (1'000'001 - 17)) +
                         ": more than 1000000 YAML nodes to hold at once, the limit (write the actions without "
                         "anchors and aliases, which are read a few hundred at a time, or repeat one with "
                         "every/until)");
  if (kCheckPeaks) EXPECT_LT(kb, 200 * 1024);
  // A flow list of millions of scalars (4 GB of yaml-cpp's nodes).
  std::string flow = "topology: fat-tree:2:4\nduration: 10ms\nactions: [";
  for (int i = 0; i < 5'000'000; ++i) flow += "1,";
  flow += "1]\n";
  std::tie(kb, message) = read_in_child(flow);
  ASSERT_GE(kb, 0);
  std::printf("flow list: %ld kB more at the peak: %s\n", kb, message.c_str());
  EXPECT_EQ(message.rfind("big.yaml:3: more than 1000000 YAML nodes", 0), 0u) << message;
  if (kCheckPeaks) EXPECT_LT(kb, 200 * 1024);
}

}  // namespace
}  // namespace ibfab::scenario
