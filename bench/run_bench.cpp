// `ibfab run` as a user runs it, a whole process: a scenario that only
// brings a fat tree up (`sms: [{node: H1, routing: minhop}]`, long enough
// for the subnet to come up), from exec to exit. Counters: `wall_s` (paired
// in the anchor table with the in-process `bringup/*` of the same fabric,
// measured in the same run: the ratio is what building the model, the
// route check, the fingerprint and the report add) and `hosts`. No memory
// counter: a child's peak as wait4 reports it starts from this process's
// size (the spawn shares its memory until the exec); measure it with
// `/usr/bin/time -f %M ibfab run FILE`.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

extern char** environ;

namespace ibfab::bench {
namespace {

void whole_run(benchmark::State& state, const char* spec, unsigned hosts, const char* duration) {
  char path[] = "/tmp/ibfab-run-bench-XXXXXX.yaml";
  const int fd = ::mkstemps(path, 5);
  if (fd < 0) return state.SkipWithError("cannot make a scenario file");
  const std::string text = std::string("name: bringup\ntopology: ") + spec +
                           "\nsms: [{node: H1, routing: minhop}]\nduration: " + duration + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  double seconds = 0;
  for (auto _ : state) {
    if (!written) {
      state.SkipWithError("cannot write the scenario file");
      break;
    }
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
    char* argv[] = {const_cast<char*>(IBFAB_BINARY), const_cast<char*>("run"), path, nullptr};
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int err = posix_spawn(&pid, IBFAB_BINARY, &io, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&io);
    int status = 0;
    if (err != 0 || ::waitpid(pid, &status, 0) != pid) {
      state.SkipWithError("cannot run ibfab");
      break;
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(took);
    seconds += took;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("ibfab run failed: the subnet did not come up, or its routes did not check");
      break;
    }
  }
  ::unlink(path);
  state.counters["hosts"] = hosts;
  if (state.iterations()) state.counters["wall_s"] = seconds / static_cast<double>(state.iterations());
}

BENCHMARK_CAPTURE(whole_run, ft3_36, "fat-tree:3:36", 11664, "100ms")
    ->Name("run/fat-tree:3:36")->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(whole_run, ft3_48, "fat-tree:3:48", 27648, "150ms")
    ->Name("run/fat-tree:3:48")->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);
// The largest three-level fat tree whose ports 16-bit LIDs can address
// (43,904 hosts and 3,920 switches: 47,824 of the 49,151 unicast LIDs).
BENCHMARK_CAPTURE(whole_run, ft3_56, "fat-tree:3:56", 43904, "300ms")
    ->Name("run/fat-tree:3:56")->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

}  // namespace
}  // namespace ibfab::bench
