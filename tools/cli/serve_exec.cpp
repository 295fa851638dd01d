// `ibfab serve` (an engine serving one fabric to client processes) and
// `ibfab exec` (an unmodified program attached to one of its hosts).
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/client/session.h"
#include "api/server/engine.h"
#include "api/client/socket_path.h"
#include "fabric/topology/topology_spec.h"
#include "tools/cli/commands.h"
#include "tools/cli/fabric_network.h"
#include "tools/cli/faults.h"
#include "tools/cli/host_snapshot.h"
#include "tools/cli/host_view.h"
#include "tools/cli/install_layout.h"
#include "tools/scenario/progress_line.h"

namespace ibfab::cli {

namespace {

// Up to this many hosts, `serve` lists every port's addresses.
constexpr std::size_t kListedHosts = 64;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

// --socket "" names no socket (the default is the option left out).
const CLI::Validator kNonEmpty([](const std::string& s) { return s.empty() ? std::string("an empty path") : ""; },
                               "PATH");

}  // namespace

void Commands::add_serve_exec(CLI::App& app) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Own a fabric and serve it to client processes (see `ibfab exec`) over a Unix socket");
  serve->add_option("--topology", spec_, "A net file or a generator spec, as for `ibfab topo gen`")->required();
  serve->add_option("--sm", sm_, "builtin: the built-in SM brings the subnet up; none: wait for one (e.g. opensm)")
      ->check(CLI::IsMember({"builtin", "none"}));
  serve->add_option("--sm-node", sm_node_, "The host the built-in SM runs on (default: the first host)");
  serve->add_option("--socket", socket_,
                    "Listen here (default: $XDG_RUNTIME_DIR/ibfab.sock, else ibfab.sock in the private\n"
                    "directory ${TMPDIR:-/tmp}/ibfab-UID, made with mode 0700). Only this user may connect;\n"
                    "an existing file there is replaced only if it is this user's stale socket")
      ->check(kNonEmpty);
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
  serve->add_option("--partitions", partitions_,
                    "The built-in SM's partitions, in OpenSM's partitions.conf syntax (the file `opensm -P`\n"
                    "reads): it programs every port's P_Key table by SMP and its SA and the HCAs enforce\n"
                    "them (default: OpenSM's without a file, every port a full member of 0x7fff)");
  serve->add_option("--routing", routing_,
                    "The built-in SM's routing engine, as `opensm -R` names it (minhop, updn, ftree)")
      ->capture_default_str()
      ->check(CLI::IsMember({"minhop", "updn", "ftree"}));
  serve->add_flag("--every-host-local", every_host_local_,
                  "Every host is local to every client: a program sees every host's HCA as a device (its\n"
                  "own host's first, `ibfab0`, then the others in the topology's order) and may bind any\n"
                  "host's address with rdma_cm, as one machine with all the HCAs would; for a program that\n"
                  "acts as several hosts at once (`ibfab validate` runs its model side so)");
  serve->add_option("--max-clients", max_clients_,
                    "Connections served at once (a program holds one to four per device it opens);\n"
                    "more are refused with an error the program reports")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  add_fault_option(serve);
  serve->callback([this] { chosen_ = [this] { return this->serve(); }; });

  CLI::App* exec = app.add_subcommand(
      "exec",
      "Run an unmodified program attached to a host of a served fabric.\n"
      "The program sees the host as its kernel would show it, in a private mount namespace and the\n"
      "host's network namespace: /sys/class/infiniband/ibfab0 (GUIDs, node_type, ports/P/{state,\n"
      "phys_state,lid,sm_lid,rate,link_layer,gids/N,pkeys/N}, device/net/ibN), /sys/class/\n"
      "infiniband_verbs/uverbs0, /sys/class/infiniband_mad/umadN, /dev/infiniband/{uverbs0,umadN,\n"
      "issmN,rdma_cm}, and one interface ibN per port carrying the port's IPoIB addresses from the\n"
      "engine's address plan. The files are a snapshot of what the engine says when the program\n"
      "starts. Programs on one host share its network (and localhost); when `ibfab serve` runs as\n"
      "root, hosts reach each other's addresses (TCP, UDP) over a private bridge, else each program\n"
      "has a network of its own. The machine's own /dev, /sys and network are not changed.\n"
      "Needs root, or unprivileged user namespaces (the program then runs as uid 0 inside one,\n"
      "with empty files for the /dev/infiniband nodes)");
  exec->add_option("--node", node_, "The host the program runs on")->required();
  exec->add_option("--socket", socket_,
                   "The engine's socket (default: as `ibfab serve`). The engine must be run by this user\n"
                   "or by root; another user's is refused")
      ->check(kNonEmpty);
  exec->add_flag("--no-device-view", no_device_view_,
                 "Run the program in the machine's own namespaces: no /dev/infiniband, no\n"
                 "/sys/class/infiniband, no IPoIB interface (libibverbs, librdmacm and libibumad still work)");
  exec->add_option("command", command_, "The program and its arguments (after --)")->required();
  exec->callback([this] { chosen_ = [this] { return this->exec(); }; });
}

void Commands::add_fault_option(CLI::App* cmd) {
  cmd->add_option("--fault", faults_,
                  "A timed fault on a link, \"AT ACTION LINK [PROBABILITY]\". AT: when, counted from\n"
                  "`ready` on the engine's clock (at most 50 ms ahead of the wall clock), as scenarios write\n"
                  "times (0, 250ns, 1.5ms, 2s). ACTION: link-down, link-up, or link-loss with the PROBABILITY\n"
                  "of losing each packet, in [0, 1]. LINK: NODE[PORT] or NODE[PORT]-NODE[PORT]. E.g.\n"
                  "\"2s link-down L1[1]\", \"3500ms link-up L1[1]\", \"1s link-loss S1[3] 0.25\". It applies as\n"
                  "a scenario's action does (the switches send traps, the built-in SM sweeps and re-routes)\n"
                  "and the fabric logs it on stderr. Repeatable; checked before anything starts")
      ->type_name("\"AT ACTION LINK [P]\"")
      ->allow_extra_args(false);  // one value per --fault: `--` or a positional may follow
}

int Commands::serve() {
  api::EngineOptions o;
  o.faults = parse_faults(faults_);  // their links are checked by the engine, before the socket exists
  o.topology = spec_;
  o.builtin_sm = sm_ == "builtin";
  o.sm_node = sm_node_;
  o.pcap = pcap_;
  o.rx_grace_us = rx_grace_us_;
  o.addresses = address_options();
  o.sa_send_only_full = !sa_no_send_only_;
  o.partitions = partitions_;
  o.routing = routing_;
  o.every_host_local = every_host_local_;
  if (routing_ != "minhop" && !o.builtin_sm)
    throw std::runtime_error("--routing configures the built-in SM: with --sm none give the engine to opensm -R");
  if (!partitions_.empty() && !o.builtin_sm)
    throw std::runtime_error("--partitions configures the built-in SM: with --sm none give the file to opensm -P");
  o.max_clients = max_clients_;
  // Descriptors for --max-clients connections and what they bring (a verbs
  // client's event sockets): the soft limit is raised as far as the hard
  // one allows, never lowered.
  if (rlimit r; ::getrlimit(RLIMIT_NOFILE, &r) == 0) {
    const rlim_t want = std::min<rlim_t>(r.rlim_max, 4 * static_cast<rlim_t>(max_clients_) + 64);
    if (r.rlim_cur < want) {
      r.rlim_cur = want;
      ::setrlimit(RLIMIT_NOFILE, &r);
    }
  }
  if (sa_no_send_only_ && !o.builtin_sm)
    throw std::runtime_error("--sa-no-send-only shapes the built-in SM's SA: it has no effect with --sm none");
  o.log = [](const std::string& line) { std::cerr << "ibfab: " << line << std::endl; };
  const std::string path = socket_.empty() ? api::default_socket_path() : socket_;
  if (socket_.empty())
    if (const std::string e = api::socket_dir_problem(path); !e.empty()) throw std::runtime_error(e);
  // As root, the hosts' IPoIB networks for `ibfab exec` (fabric_network.h),
  // kept by a process forked now, while this one has no threads.
  std::unique_ptr<FabricNetwork> network;
  if (::geteuid() == 0) {
    try {
      network = std::make_unique<FabricNetwork>(path);
    } catch (const std::exception& e) {
      std::cerr << "ibfab: no network between the hosts: " << e.what() << std::endl;
    }
  }
  // From the model build to ready: a progress line on stderr past 3 s.
  sim::Progress progress;
  progress.begin("model build", "");
  o.progress = &progress;
  auto progress_line = std::make_unique<scenario::ProgressLine>(stderr, "serve", progress);
  api::Engine engine(o);  // a bad --ip throws here, before the socket exists
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
    api::unlink_socket(path);
    throw std::runtime_error(e);
  }
  const topo::AddressPlan& plan = engine.addresses();
  if (engine.topology().hca_count() <= kListedHosts) {
    for (const std::string& line : plan.lines(engine.topology())) std::cout << "address " << line << "\n";
  } else {
    std::cout << "addresses: " << plan.ports().size() << " ports (ibfab topo show --addresses lists them)\n";
  }
  progress_line.reset();
  std::cout << "ready" << std::endl;
  engine.serve(fd, g_stop);
  ::close(fd);
  api::unlink_socket(path);
  for (const std::string& line : engine.ud_drops()) std::cerr << "ibfab: " << line << std::endl;
  std::cerr << "ibfab: stopped" << std::endl;
  return 0;
}

int Commands::exec() {
  const std::string path = socket_.empty() ? api::client_socket_path() : socket_;
  // The engine must be there and have the host: say so now, not as an
  // empty device list inside the program.
  const HostSnapshot host = take_snapshot(path, node_);
  const std::string drop_ins = library_dir();
  if (!no_device_view_) enter_host_view(host, path);
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string libs = drop_ins + (old && *old ? ":" + std::string(old) : "");
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
