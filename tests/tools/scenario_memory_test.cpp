// What a scenario costs per action (issue 13: about 5 KB each, 244 MB for
// 40,000): the peak resident size of reading and running N actions, N =
// 4,000 and 24,000, each in a child process of its own, so that one run's
// heap does not serve the other. It counts the YAML reader's trees, the
// actions, their bound closures and events, the hosts' requests and the
// report.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

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

TEST(ScenarioMemory, AnActionCostsAFewHundredBytes) {
  const long small = run_in_child(4'000);
  const long large = run_in_child(24'000);
  ASSERT_GT(small, 0) << "the 4,000-action run failed";
  ASSERT_GT(large, 0) << "the 24,000-action run failed";
  const double per_action = static_cast<double>(large - small) * 1024.0 / 20'000.0;
  RecordProperty("bytes_per_action", static_cast<int>(per_action));
  std::printf("peak %ld kB with 4,000 actions, %ld kB with 24,000: %.0f bytes per action\n", small, large, per_action);
  EXPECT_LT(per_action, 600.0);
}

}  // namespace
}  // namespace ibfab::scenario
