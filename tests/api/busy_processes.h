#pragma once
// Processes that only spin, for as long as a BusyProcesses lives (and no
// longer than the process that made them: they get SIGKILL when it dies):
// cores made scarce for a test or a benchmark. Pinned, the i-th runs on
// the i-th CPU its parent may use; else on any of them.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace ibfab::testing {

class BusyProcesses {
 public:
  BusyProcesses(int n, bool pinned) : start_(std::chrono::steady_clock::now()) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    ::sched_getaffinity(0, sizeof allowed, &allowed);
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
    const pid_t parent = ::getpid();
    for (int i = 0; i < n && !cpus.empty(); ++i) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[static_cast<std::size_t>(i) % cpus.size()], &one);
      const pid_t pid = ::fork();
      if (pid == 0) {  // only system calls from here: the parent has threads
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(0);
        if (pinned) ::sched_setaffinity(0, sizeof one, &one);
        for (;;) asm volatile("" ::: "memory");
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (const pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (const pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }
  BusyProcesses(const BusyProcesses&) = delete;
  BusyProcesses& operator=(const BusyProcesses&) = delete;

  std::size_t count() const { return pids_.size(); }
  // The CPU the busy processes used since they started, in cores (1.0:
  // one core's worth of the wall time), from /proc/<pid>/schedstat.
  double cores() const {
    double cpu_ns = 0;
    for (const pid_t pid : pids_) {
      double ns = 0;
      std::ifstream("/proc/" + std::to_string(pid) + "/schedstat") >> ns;
      cpu_ns += ns;
    }
    return cpu_ns / std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count();
  }
  // The number of CPUs this process may use.
  static int cpus() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    return ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  std::vector<pid_t> pids_;
};

}  // namespace ibfab::testing
