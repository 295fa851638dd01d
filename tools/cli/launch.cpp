// `ibfab launch`: a fabric served for the length of one test, programs run
// on its hosts in order (each once the one before is ready), and one exit
// status for the whole (tools/launch/supervisor.h).
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/client/cm_protocol.h"
#include "fabric/topology/topology_spec.h"
#include "tools/cli/commands.h"
#include "tools/cli/engine_connection.h"
#include "tools/cli/faults.h"
#include "tools/cli/install_layout.h"
#include "tools/launch/launch_plan.h"
#include "tools/launch/supervisor.h"
#include "tools/scenario/scenario_loader.h"

namespace ibfab::cli {
namespace {

// A directory of this launch's own, for the engine's socket; removed with
// what is in it when the launch ends.
class PrivateDir {
 public:
  PrivateDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ibfab-launch-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot make a directory like " + pattern);
    path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string joined(const std::vector<std::string>& labels) {
  std::string out;
  for (const std::string& l : labels) out += (out.empty() ? "" : ", ") + l;
  return out;
}

// Whether an rdma_cm id of `host` listens on a port, asked of the engine
// at `socket` over one connection made at the first question (false
// while the engine cannot be asked).
std::function<bool(uint16_t)> rdma_cm_listener_probe(const std::string& socket, const std::string& host) {
  auto connection = std::make_shared<std::unique_ptr<EngineConnection>>();
  return [=](uint16_t port) {
    try {
      if (!*connection) *connection = std::make_unique<EngineConnection>(socket, host, api::ConnectionKind::Cm);
      api::CmIdRequest q;
      q.arg = port;
      return (*connection)->ask<api::CmReply>(api::MsgType::CmQueryListener, &q, sizeof q, api::MsgType::CmReply)
                 .value == 1;
    } catch (const std::runtime_error&) {
      connection->reset();
      return false;
    }
  };
}

}  // namespace

void Commands::take_scenario_fabric() {
  const scenario::Scenario s = scenario::load_scenario(scenario_);
  spec_ = s.topology;
  if (!s.sms.empty()) {
    const scenario::SmSpec& sm = s.sms.front();
    if (sm.partitions)
      throw launch::LaunchError(scenario_ + ": its SM's partitions are not taken by launch (give --partitions FILE)");
    sm_node_ = sm.node;
    routing_ = sm.routing;
  }
  for (const api::Fault& f : faults_from_scenario(s)) faults_.push_back(api::fault_text(f));
}

void Commands::add_launch(CLI::App& app) {
  CLI::App* launch = app.add_subcommand(
      "launch",
      "Run a multi-host test: programs on hosts of a fabric, and one exit status.\n"
      "Serves the fabric for the length of the test, runs each program on its host with\n"
      "`ibfab exec`, and exits 0 only if every program passed. After the options and `--` come\n"
      "the programs, separated by a lone `:`:\n"
      "  HOST [--ready-line TEXT | --ready-port PORT] [--exit STATUS] [--background]\n"
      "       PROGRAM [ARG...]\n"
      "They start in the order given; a program with --ready-line (a line of its output holds\n"
      "TEXT) or --ready-port (it listens on that port, with a TCP socket or an rdma_cm id) must\n"
      "be ready before the next starts.\n"
      "A program passes when it exits with STATUS (default 0); a --background one (a server\n"
      "that never exits by itself) is stopped with SIGTERM once the others have passed. In an\n"
      "argument, {HOST} and {HOST:PORT} become the IPv4 address of that host's port 1 (PORT).\n"
      "Output is forwarded line by line as `[HOST] line` (stdout on a terminal, so programs\n"
      "line-buffer it). On the first failure, the timeout or SIGINT/SIGTERM, every program and\n"
      "the fabric are stopped (SIGTERM, then SIGKILL) and nothing is left running.\n"
      "Exit status: 0 all passed; 1 a program failed, a readiness condition never held or the\n"
      "timeout ran out; 2 bad input (a host that does not exist, a program that is not found,\n"
      "a fabric that cannot start). Hosts reach each other's addresses over TCP only when run\n"
      "as root (see `ibfab exec --help`).\n"
      "Example, perftest's RC send bandwidth between two hosts:\n"
      "  ibfab launch --topology fat-tree:2:4 -- H1 --ready-port 18515 ib_send_bw : \\\n"
      "      H2 ib_send_bw {H1}");
  CLI::Option* topology =
      launch->add_option("--topology", spec_, "The fabric: a net file or a generator spec, as for `ibfab topo gen`");
  CLI::Option* scenario = launch->add_option(
      "--scenario", scenario_,
      "Take the fabric from a scenario file instead: its topology, its first SM's host and\n"
      "routing, and its link-down, link-up and link-loss actions as --fault (their times\n"
      "counted from when the fabric is ready); its other actions are not run");
  topology->excludes(scenario);
  add_fault_option(launch);
  launch->add_option("--sm-node", sm_node_, "The host the built-in SM runs on (default: the first host)");
  launch->add_option("--routing", routing_, "The built-in SM's routing engine (minhop, updn, ftree)")
      ->capture_default_str()
      ->check(CLI::IsMember({"minhop", "updn", "ftree"}));
  launch->add_option("--partitions", partitions_, "The built-in SM's partitions.conf (as for `ibfab serve`)");
  launch->add_option("--timeout", timeout_s_, "Seconds the whole test may take, the fabric's bring-up included")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  launch->add_flag("--no-device-view", no_device_view_,
                   "Run the programs as `ibfab exec --no-device-view` does: in the machine's own\n"
                   "namespaces, for a container that allows no new ones (libibverbs, librdmacm and libibumad\n"
                   "still work; /dev/infiniband, /sys/class/infiniband and the hosts' IP addresses do not)");
  launch->add_flag("--fabric-log", fabric_log_,
                   "Forward the fabric's log (`ibfab serve`'s, as `[fabric] ` lines) as it comes; without\n"
                   "it, its last lines are shown only when the test fails");
  launch->add_option("programs", command_, "The programs (after --): HOST [OPTIONS] PROGRAM [ARG...] [: ...]")
      ->required();
  launch->callback([this] { chosen_ = [this] { return this->launch(); }; });
}

int Commands::launch() {
  // Bad input is found here, before anything starts.
  if (spec_.empty() == scenario_.empty()) throw launch::LaunchError("give the fabric: --topology or --scenario");
  parse_faults(faults_);
  if (!scenario_.empty()) take_scenario_fabric();
  std::vector<launch::LaunchProgram> programs = launch::parse_programs(command_);
  const topo::Topology topology = topo::load_topology(spec_);
  const topo::AddressPlan plan(topology, topo::AddressOptions{});
  launch::resolve_hosts(programs, topology, plan);
  const char* path_env = std::getenv("PATH");
  for (launch::LaunchProgram& p : programs) {
    const std::string found = launch::find_program(p.argv[0], path_env ? path_env : "");
    if (found.empty()) throw launch::LaunchError(p.host + ": program '" + p.argv[0] + "' not found (PATH)");
    p.argv[0] = found;
  }
  if (!sm_node_.empty()) {
    const auto sm = topology.find(sm_node_);
    if (!sm || topology.nodes()[*sm].kind != topo::NodeKind::Hca)
      throw launch::LaunchError("--sm-node " + sm_node_ + ": no such host in the fabric");
  }

  const std::string self = this_executable().string();
  PrivateDir dir;
  const std::string socket = dir.path() + "/engine.sock";
  std::vector<launch::Child> children;
  launch::Child fabric;
  fabric.label = "fabric";
  fabric.argv = {self, "serve", "--topology", spec_, "--socket", socket, "--routing", routing_};
  if (!sm_node_.empty()) fabric.argv.insert(fabric.argv.end(), {"--sm-node", sm_node_});
  if (!partitions_.empty()) fabric.argv.insert(fabric.argv.end(), {"--partitions", partitions_});
  for (const std::string& f : faults_) fabric.argv.insert(fabric.argv.end(), {"--fault", f});
  fabric.ready_line = "ready";
  fabric.ready_whole_line = true;
  fabric.background = true;
  fabric.quiet = !fabric_log_;
  fabric.parent_death_signal = SIGTERM;  // it removes its socket
  children.push_back(fabric);
  std::map<std::string, int> on_host;
  for (const launch::LaunchProgram& p : programs) {
    launch::Child c;
    const int n = ++on_host[p.host];
    c.label = n == 1 ? p.host : p.host + "#" + std::to_string(n);
    c.argv = {self, "exec", "--socket", socket, "--node", p.host};
    if (no_device_view_) c.argv.push_back("--no-device-view");
    c.argv.push_back("--");
    c.argv.insert(c.argv.end(), p.argv.begin(), p.argv.end());
    c.ready_line = p.ready_line;
    c.ready_port = p.ready_port;
    if (p.ready_port != 0) c.port_probe = rdma_cm_listener_probe(socket, p.host);
    c.expect_exit = p.expect_exit;
    c.background = p.background;
    children.push_back(std::move(c));
  }

  std::cout.flush();
  launch::Supervisor supervisor(STDOUT_FILENO, STDERR_FILENO);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(std::llround(timeout_s_ * 1000)));
  const launch::Verdict v = supervisor.run(children, timeout);
  // What it had to stop, on a line of its own after the verdict.
  const std::string stopped = v.stopped.empty() ? "" : "\nibfab launch: stopped " + joined(v.stopped);
  if (v.passed) {
    std::cerr << "ibfab launch: passed: " << programs.size() << (programs.size() == 1 ? " program" : " programs")
              << std::endl;
    return 0;
  }
  if (v.failed == 0 && !v.was_ready) {
    std::cerr << "ibfab launch: the fabric did not start: " << v.why << stopped << std::endl;
    return 2;
  }
  const std::string who = v.failed < children.size() ? children[v.failed].label + " failed: " : "";
  std::cerr << "ibfab launch: " << who << v.why << stopped << std::endl;
  return 1;
}

}  // namespace ibfab::cli
