// `ibfab serve` (an engine serving one fabric to client processes) and
// `ibfab exec` (an unmodified program attached to one of its hosts).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/client/session.h"
#include "api/server/engine.h"
#include "api/client/socket_path.h"
#include "fabric/topology/topology_spec.h"
#include "tools/cli/commands.h"

namespace ibfab::cli {

namespace {

// Up to this many hosts, `serve` lists every port's addresses.
constexpr std::size_t kListedHosts = 64;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

// The directory holding the drop-in libraries of this build.
std::string library_dir() { return IBFAB_LIBRARY_DIR; }

}  // namespace

void Commands::add_serve_exec(CLI::App& app) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Own a fabric and serve it to client processes (see `ibfab exec`) over a Unix socket");
  serve->add_option("--topology", spec_, "A net file or a generator spec, as for `ibfab topo gen`")->required();
  serve->add_option("--sm", sm_, "builtin: the built-in SM brings the subnet up; none: wait for one (e.g. opensm)")
      ->check(CLI::IsMember({"builtin", "none"}));
  serve->add_option("--sm-node", sm_node_, "The host the built-in SM runs on (default: the first host)");
  serve->add_option("--socket", socket_, "Listen here (default: $XDG_RUNTIME_DIR/ibfab.sock or /tmp/ibfab-UID.sock)");
  serve->add_option("--pcap", pcap_, "Capture every packet on every link to this file (ERF records, as ibdump writes)");
  serve->add_option("--rx-grace-us", rx_grace_us_,
                    "How long a UD message that finds no receive posted waits for one before it is dropped "
                    "(wall time; 0: at once, as hardware)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1'000'000));
  add_address_options(serve);
  serve->add_flag("--sa-no-send-only", sa_no_send_only_,
                  "The built-in SA refuses JoinState 0x8 (SendOnlyFullMember) with status 0x0200 and\n"
                  "leaves it out of its ClassPortInfo, as OpenSM before 3.3.21 did");
  serve->callback([this] { chosen_ = [this] { return this->serve(); }; });

  CLI::App* exec = app.add_subcommand("exec", "Run an unmodified program attached to a host of a served fabric");
  exec->add_option("--node", node_, "The host the program runs on")->required();
  exec->add_option("--socket", socket_, "The engine's socket (default: as `ibfab serve`)");
  exec->add_option("command", command_, "The program and its arguments (after --)")->required();
  exec->callback([this] { chosen_ = [this] { return this->exec(); }; });
}

int Commands::serve() {
  api::EngineOptions o;
  o.topology = spec_;
  o.builtin_sm = sm_ == "builtin";
  o.sm_node = sm_node_;
  o.pcap = pcap_;
  o.rx_grace_us = rx_grace_us_;
  o.addresses = address_options();
  o.sa_send_only_full = !sa_no_send_only_;
  if (sa_no_send_only_ && !o.builtin_sm)
    throw std::runtime_error("--sa-no-send-only shapes the built-in SM's SA: it has no effect with --sm none");
  o.log = [](const std::string& line) { std::cerr << "ibfab: " << line << std::endl; };
  api::Engine engine(o);  // a bad --ip throws here, before the socket exists
  const std::string path = socket_.empty() ? api::default_socket_path() : socket_;
  std::string error;
  const int fd = api::listen_at(path, error);
  if (fd < 0) throw std::runtime_error(error);
  struct sigaction sa{};
  sa.sa_handler = on_signal;  // no SA_RESTART: poll returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::cout << "socket " << path << std::endl;
  if (const std::string e = engine.bring_up(); !e.empty()) {
    ::close(fd);
    ::unlink(path.c_str());
    throw std::runtime_error(e);
  }
  const topo::AddressPlan& plan = engine.addresses();
  if (engine.topology().hca_count() <= kListedHosts) {
    for (const std::string& line : plan.lines(engine.topology())) std::cout << "address " << line << "\n";
  } else {
    std::cout << "addresses: " << plan.ports().size() << " ports (ibfab topo show --addresses lists them)\n";
  }
  std::cout << "ready" << std::endl;
  engine.serve(fd, g_stop);
  ::close(fd);
  ::unlink(path.c_str());
  for (const std::string& line : engine.ud_drops()) std::cerr << "ibfab: " << line << std::endl;
  std::cerr << "ibfab: stopped" << std::endl;
  return 0;
}

int Commands::exec() {
  const std::string path = socket_.empty() ? api::client_socket_path() : socket_;
  // The engine must be there and have the host: say so now, not as an
  // empty device list inside the program.
  const int probe = api::connect_to(path);
  if (probe < 0) throw std::runtime_error("no ibfab engine at " + path + " (start one with `ibfab serve`)");
  uint32_t handle = 0;
  const int greeted = client::greet(probe, node_, api::ConnectionKind::Control, 0, handle);
  ::close(probe);
  if (greeted == -ENODEV) throw std::runtime_error("the served fabric has no host named '" + node_ + "'");
  if (greeted < 0) throw std::runtime_error(path + ": " + std::strerror(-greeted));
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string libs = library_dir() + (old && *old ? ":" + std::string(old) : "");
  ::setenv("LD_LIBRARY_PATH", libs.c_str(), 1);
  ::setenv("IBFAB_SOCKET", path.c_str(), 1);
  ::setenv("IBFAB_NODE", node_.c_str(), 1);
  std::vector<char*> argv;
  for (std::string& a : command_) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  throw std::runtime_error(command_[0] + ": " + std::strerror(errno));
}

}  // namespace ibfab::cli
