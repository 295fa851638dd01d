// `ibfab validate SCENARIO`: the scenario's host actions run twice through
// ibfab-passthrough, on the model (an `ibfab serve` of the scenario's
// topology, the runner under `ibfab exec`) and on a real device (the
// runner on this machine's devices, --passthrough, or a run recorded
// elsewhere, --real: inside the Soft-RoCE VM), and the two compared step by
// step (tools/validate/outcome_diff.h). Exit 0: every step agrees; 1: one
// does not; 2: bad input, or a run that could not be made.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fabric/topology/address_plan.h"
#include "fabric/topology/topology_spec.h"
#include "tools/cli/commands.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/validate/outcome_diff.h"

namespace ibfab::cli {
namespace {

namespace fs = std::filesystem;

fs::path self_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's directory: " + ec.message());
  return self.parent_path();
}

// Starts `argv` with stdout and stderr to `log`; its pid.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// Runs ibfab-passthrough with `args`; its records in `out`. A run that
// could not be made (exit 2, or killed) is an error naming `what`.
void passthrough(const std::vector<std::string>& prefix, const std::string& scenario, const std::string& map,
                 const fs::path& out, const fs::path& log, const char* what) {
  std::vector<std::string> argv = prefix;
  for (const std::string& a : {(self_dir() / "ibfab-passthrough").string(), scenario, std::string("--map"), map,
                               std::string("--out"), out.string()})
    argv.push_back(a);
  const int status = wait_for(spawn(argv, log));
  if (status != 0 && status != 1) throw std::runtime_error(std::string(what) + ": " + last_line(log));
}

// The model's map: each host of the run on its own HCA, port 1, bound to
// that port's IPv4 address. The engine serves every host to one client
// (--every-host-local): `node`'s HCA is ibfab0, the others follow in the
// topology's order (api/client/session.h).
std::string model_map(const std::string& topology, const std::set<std::string>& hosts, const std::string& node) {
  const topo::Topology t = topo::load_topology(topology);
  const topo::AddressPlan plan(t, topo::AddressOptions{});
  std::map<std::string, std::string> device;
  device[node] = "ibfab0";
  for (const topo::NodeDesc& n : t.nodes())
    if (n.kind == topo::NodeKind::Hca && n.name != node) device[n.name] = "ibfab" + std::to_string(device.size());
  std::string map;
  for (const std::string& h : hosts) {
    const auto i = t.find(h);
    const topo::PortAddress* a = i ? plan.of(*i, 1) : nullptr;
    if (!a || !device.count(h) || !a->ipv4)
      throw std::invalid_argument("host '" + h + "' of the real run has no HCA with an IPv4 address in the model");
    map += (map.empty() ? "" : ",") + h + "=" + device[h] + "@" + topo::AddressPlan::ipv4_text(a->ipv4);
  }
  return map;
}

// An `ibfab serve` of `topology` on a socket of its own, stopped when this goes.
class Engine {
 public:
  Engine(const std::string& topology, const fs::path& dir) : socket_(dir / "ibfab.sock"), log_(dir / "serve.log") {
    pid_ = spawn({(self_dir() / "ibfab").string(), "serve", "--topology", topology, "--socket", socket_.string(),
                  "--every-host-local"},
                 log_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!accepts()) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("the model's engine did not start: " + last_line(log_));
      }
      if (std::chrono::steady_clock::now() > deadline) {
        stop();
        throw std::runtime_error("the model's engine did not start in 120 s: " + last_line(log_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Engine() { stop(); }
  const fs::path& socket() const { return socket_; }

 private:
  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      wait_for(pid_);
      pid_ = -1;
    }
  }
  // The engine's socket is a SOCK_SEQPACKET one (api/client/socket_path.h).
  bool accepts() const {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, socket_.c_str(), sizeof a.sun_path - 1);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
  }
  fs::path socket_, log_;
  pid_t pid_ = -1;
};

validate::Run read(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::invalid_argument(file.string() + ": cannot read");
  return validate::read_run(in, file.string());
}

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "ibfab-validate.XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

int Commands::validate() {
  const scenario::Scenario s = scenario::load_scenario(scenario_);
  TempDir tmp;
  fs::path real_file = real_;
  if (real_file.empty()) {
    real_file = tmp.path() / "real.jsonl";
    passthrough({}, scenario_, passthrough_, real_file, tmp.path() / "real.log", "the real run");
  }
  const validate::Run real = read(real_file);
  fs::path model_file = model_;
  if (model_file.empty()) {
    // Every host of the real run on its own HCA of the model, the process
    // attached to the first host's.
    std::set<std::string> hosts;
    std::string node;
    for (const validate::Fields& f : real.steps) {
      const std::string h = validate::field_of(f, "host");
      if (node.empty()) node = h;
      hosts.insert(h);
      if (f.count("to")) hosts.insert(validate::field_of(f, "to"));  // a send's receiver, a connection's far end
    }
    const std::string map = model_map(s.topology, hosts, node);
    model_file = tmp.path() / "model.jsonl";
    Engine engine(s.topology, tmp.path());
    passthrough({(self_dir() / "ibfab").string(), "exec", "--socket", engine.socket().string(), "--node", node, "--"},
                scenario_, map, model_file, tmp.path() / "model.log", "the model's run");
  }
  const validate::Comparison c = validate::compare(read(model_file), real);
  validate::print(c, s.name, std::cout);
  return c.all_agree() ? 0 : 1;
}

}  // namespace ibfab::cli
