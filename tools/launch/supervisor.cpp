#include "tools/launch/supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ibfab::launch {
namespace {

using Clock = std::chrono::steady_clock;

// A line longer than this is forwarded in pieces.
constexpr std::size_t kLongestLine = 4096;
// The lines of a quiet child's output kept for a failed run.
constexpr std::size_t kQuietTail = 50;
// How often a ready port is looked for.
constexpr auto kPortPoll = std::chrono::milliseconds(20);

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Whether a TCP socket of the network namespace of `pid` listens on `port`.
bool listening(pid_t pid, uint16_t port) {
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/net/" + table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string slot, local, remote, state;
      words >> slot >> local >> remote >> state;
      const std::size_t colon = local.rfind(':');
      if (state != "0A" || colon == std::string::npos) continue;  // 0A: TCP_LISTEN
      unsigned long number = 0;
      const std::string hex = local.substr(colon + 1);
      const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), number, 16);
      if (ec == std::errc() && end == hex.data() + hex.size() && number == port) return true;
    }
  }
  return false;
}

std::string describe(int status, int expected) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status)) + " (expected " + std::to_string(expected) + ")";
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

// One output stream of a child: its lines, forwarded with the prefix.
struct Stream {
  int fd = -1;
  int to = -1;  // where its lines go
  std::string partial;
};

struct Running {
  const Child* spec = nullptr;
  pid_t pid = -1;
  bool started = false, ready = false, ended = false, stopping = false;
  int status = 0;
  uint64_t end_order = 0;  // when it was reaped: 1 for the first child to end, ...
  Stream streams[2];  // stdout (the pty), stderr
  std::deque<std::string> tail;  // a quiet child's last lines, prefixed
};

class Run {
 public:
  Run(const std::vector<Child>& children, int out, int err) : out_(out), err_(err) {
    for (const Child& c : children) {
      running_.emplace_back();
      running_.back().spec = &c;
    }
  }
  ~Run() {
    for (Running& r : running_)
      for (Stream& s : r.streams)
        if (s.fd >= 0) ::close(s.fd);
    if (signals_ >= 0) ::close(signals_);
    if (blocked_) ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }

  Verdict go(std::chrono::milliseconds timeout, std::chrono::milliseconds grace);

 private:
  void block_signals();
  void start(Running& r);
  void read_stream(Running& r, Stream& s, bool drain);
  void forward(Running& r, Stream& s, const std::string& line);
  void reap();
  void stop_all(std::chrono::milliseconds grace, Verdict& v);
  void kill_orphans();
  bool failed(Verdict& v);

  std::vector<Running> running_;
  int out_, err_;
  int signals_ = -1;
  bool blocked_ = false;
  sigset_t old_mask_{};
  int interrupted_ = 0;  // the signal that asked the run to end
  uint64_t ended_ = 0;   // children reaped so far
};

void Run::block_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
  if (::sigprocmask(SIG_BLOCK, &set, &old_mask_) != 0) throw std::runtime_error("sigprocmask failed");
  blocked_ = true;
  signals_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signals_ < 0) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
}

void Run::start(Running& r) {
  int master = -1, slave = -1;
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
    throw std::runtime_error(std::string("cannot open a pseudo-terminal: ") + std::strerror(errno));
  // The child gets them as 0, 1 and 2.
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave, F_SETFD, FD_CLOEXEC);
  termios raw{};
  ::tcgetattr(slave, &raw);
  ::cfmakeraw(&raw);  // no "\r\n", no echo: the bytes the program wrote
  ::tcsetattr(slave, TCSANOW, &raw);
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(master);
    ::close(slave);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(e));
  }
  // What the child needs, made before fork(): it only calls what is
  // async-signal-safe.
  std::vector<char*> argv;
  for (const std::string& a : r.spec->argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {master, slave, err_pipe[0], err_pipe[1]}) ::close(fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    ::setsid();
    ::prctl(PR_SET_PDEATHSIG, r.spec->parent_death_signal);
    if (::getppid() != parent) ::_exit(127);  // the supervisor is already gone
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::dup2(null, 0);
    ::dup2(slave, 1);
    ::dup2(err_pipe[1], 2);
    ::close_range(3, ~0U, 0);  // nothing else of the supervisor's, nor of whoever started it
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    ::execv(argv[0], argv.data());
    const char* what = ::strerror(errno);
    (void)!::write(2, "cannot run ", 11);
    (void)!::write(2, argv[0], std::strlen(argv[0]));
    (void)!::write(2, ": ", 2);
    (void)!::write(2, what, std::strlen(what));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  ::close(slave);
  ::close(err_pipe[1]);
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  r.pid = pid;
  r.started = true;
  r.streams[0] = Stream{master, out_, {}};
  r.streams[1] = Stream{err_pipe[0], err_, {}};
  r.ready = r.spec->ready_line.empty() && r.spec->ready_port == 0;
}

void Run::forward(Running& r, Stream& s, const std::string& line) {
  const std::string& want = r.spec->ready_line;
  if (!r.ready && !want.empty() && (r.spec->ready_whole_line ? line == want : line.find(want) != std::string::npos))
    r.ready = true;
  std::string text = "[" + r.spec->label + "] " + line + "\n";
  if (!r.spec->quiet) {
    write_all(s.to, text);
    return;
  }
  r.tail.push_back(std::move(text));
  if (r.tail.size() > kQuietTail) r.tail.pop_front();
}

// Reads what `s` holds now; at its end (or with `drain`, when the child
// has been reaped) forwards the unfinished line and closes it.
void Run::read_stream(Running& r, Stream& s, bool drain) {
  char buf[8192];
  while (s.fd >= 0) {
    const ssize_t n = ::read(s.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      s.partial.append(buf, static_cast<std::size_t>(n));
      std::size_t at = 0, nl;
      while ((nl = s.partial.find('\n', at)) != std::string::npos) {
        forward(r, s, s.partial.substr(at, nl - at));
        at = nl + 1;
      }
      s.partial.erase(0, at);
      while (s.partial.size() > kLongestLine) {
        forward(r, s, s.partial.substr(0, kLongestLine));
        s.partial.erase(0, kLongestLine);
      }
      continue;
    }
    if (n < 0 && errno == EAGAIN && !drain) return;
    // The end (0; EIO once the pty's last writer is gone), or a drain.
    if (!s.partial.empty()) forward(r, s, s.partial);
    s.partial.clear();
    ::close(s.fd);
    s.fd = -1;
  }
}

void Run::reap() {
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (Running& r : running_) {
      if (r.pid != pid || r.ended) continue;
      r.ended = true;
      r.status = status;
      r.end_order = ++ended_;
      for (Stream& s : r.streams) read_stream(r, s, true);
    }
  }
}

// Whether `r` ended as it should: with its expected status, once ready.
bool passed(const Running& r) {
  return r.ready && WIFEXITED(r.status) && WEXITSTATUS(r.status) == r.spec->expect_exit;
}

// Whether a child failed; fills `v` for the first that did (the first
// reaped, when several ended since the last look).
bool Run::failed(Verdict& v) {
  const Running* first = nullptr;
  for (const Running& r : running_)
    if (r.ended && !r.stopping && !passed(r) && (!first || r.end_order < first->end_order)) first = &r;
  if (!first) return false;
  const Running& r = *first;
  v.failed = static_cast<std::size_t>(first - running_.data());
  v.was_ready = r.ready;
  const bool as_expected = WIFEXITED(r.status) && WEXITSTATUS(r.status) == r.spec->expect_exit;
  v.why = !as_expected ? describe(r.status, r.spec->expect_exit)
                       : "exited before it was ready (" +
                             (r.spec->ready_line.empty() ? "never listened on port " + std::to_string(r.spec->ready_port)
                                                         : "never printed '" + r.spec->ready_line + "'") +
                             ")";
  return true;
}

void Run::stop_all(std::chrono::milliseconds grace, Verdict& v) {
  for (auto r = running_.rbegin(); r != running_.rend(); ++r) {
    if (!r->started || r->ended) continue;
    r->stopping = true;
    ::kill(-r->pid, SIGTERM);
  }
  for (const Running& r : running_)
    if (r.stopping) v.stopped.push_back(r.spec->label);
  const auto until = Clock::now() + grace;
  const auto live = [&] {
    for (const Running& r : running_)
      if (r.started && !r.ended) return true;
    return false;
  };
  while (live() && Clock::now() < until) {
    pollfd p{signals_, POLLIN, 0};
    ::poll(&p, 1, 20);
    signalfd_siginfo info;
    while (::read(signals_, &info, sizeof info) > 0) {
    }
    reap();
  }
  for (Running& r : running_)
    if (r.started && !r.ended) {
      ::kill(-r.pid, SIGKILL);
      ::waitpid(r.pid, &r.status, 0);
      r.ended = true;
      for (Stream& s : r.streams) read_stream(r, s, true);
    }
  // Whatever else is left of the process groups.
  for (const Running& r : running_)
    if (r.started) ::kill(-r.pid, SIGKILL);
  kill_orphans();
}

// Kills and reaps the descendants reparented to this process (a child
// subreaper): those that left their child's process group.
void Run::kill_orphans() {
  for (int round = 0; round < 100; ++round) {
    bool any = false;
    if (DIR* proc = ::opendir("/proc")) {
      const std::string self = std::to_string(::getpid());
      while (const dirent* e = ::readdir(proc)) {
        std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const std::size_t close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state, ppid;
        rest >> state >> ppid;
        if (ppid != self) continue;
        pid_t pid = 0;
        const std::string_view name = e->d_name;
        if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc()) continue;
        any = true;
        ::kill(pid, SIGKILL);
      }
      ::closedir(proc);
    }
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (!any) return;
    ::usleep(10'000);
  }
}

Verdict Run::go(std::chrono::milliseconds timeout, std::chrono::milliseconds grace) {
  block_signals();
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  Verdict v;
  const auto deadline = Clock::now() + timeout;
  std::size_t next = 0;  // the next child to start
  while (true) {
    // Start children while the ones before are ready; one that cannot be
    // started (no pseudo-terminal, no process left) fails the run.
    try {
      while (next < running_.size() && (next == 0 || running_[next - 1].ready)) start(running_[next++]);
    } catch (const std::runtime_error& e) {
      v.failed = next - 1;
      v.why = std::string("could not be started: ") + e.what();
      break;
    }
    if (failed(v)) break;
    bool foreground_done = true;
    for (const Running& r : running_)
      if (!r.spec->background && (!r.started || !r.ended)) foreground_done = false;
    if (foreground_done) {
      v.passed = true;
      break;
    }
    if (interrupted_ != 0) {
      v.failed = running_.size();
      v.why = std::string("interrupted by ") + ::sigabbrev_np(interrupted_);
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      v.failed = running_.size();
      v.why = "timed out after " + (timeout.count() % 1000 == 0 ? std::to_string(timeout.count() / 1000) + " s"
                                                                : std::to_string(timeout.count()) + " ms");
      for (const Running& r : running_)
        if (r.started && !r.ended && !r.ready) {
          v.why += "; " + r.spec->label + " was not ready (" +
                   (r.spec->ready_line.empty() ? "no listener on TCP port " + std::to_string(r.spec->ready_port)
                                               : "no line with '" + r.spec->ready_line + "'") +
                   ")";
        }
      break;
    }
    std::vector<pollfd> fds{{signals_, POLLIN, 0}};
    std::vector<std::pair<Running*, Stream*>> owners{{nullptr, nullptr}};
    bool watching_port = false;
    for (Running& r : running_) {
      if (r.started && !r.ready && r.spec->ready_port != 0 && !r.ended) watching_port = true;
      for (Stream& s : r.streams)
        if (s.fd >= 0) {
          fds.push_back({s.fd, POLLIN, 0});
          owners.emplace_back(&r, &s);
        }
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) + std::chrono::milliseconds(1);
    if (watching_port) wait = std::min<std::chrono::milliseconds>(wait, kPortPoll);
    ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) read_stream(*owners[i].first, *owners[i].second, false);
    if (fds[0].revents != 0) {
      signalfd_siginfo info;
      while (::read(signals_, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
        if (info.ssi_signo != SIGCHLD) interrupted_ = static_cast<int>(info.ssi_signo);
    }
    reap();
    for (Running& r : running_)
      if (r.started && !r.ended && !r.ready && r.spec->ready_port != 0)
        r.ready = listening(r.pid, r.spec->ready_port) || (r.spec->port_probe && r.spec->port_probe(r.spec->ready_port));
  }
  stop_all(grace, v);
  if (!v.passed)
    for (const Running& r : running_)
      for (const std::string& line : r.tail) write_all(err_, line);
  return v;
}

}  // namespace

Verdict Supervisor::run(const std::vector<Child>& children, std::chrono::milliseconds timeout,
                        std::chrono::milliseconds grace) {
  if (children.empty()) throw std::invalid_argument("nothing to run");
  Run run(children, out_, err_);
  return run.go(timeout, grace);
}

}  // namespace ibfab::launch
