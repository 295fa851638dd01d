#pragma once
// The ibfab subcommands: their options and what they do.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "fabric/topology/address_plan.h"

namespace ibfab::cli {

class Commands {
 public:
  // Declares `topo gen|show|dot`, `run`, `validate`, `serve`, `exec` and
  // `launch` on `app`.
  void add_to(CLI::App& app);
  // Runs the subcommand that was parsed; returns the exit status. Throws
  // for bad input (the caller prints it and exits 2).
  int run();

 private:
  int topo_gen();
  int topo_show();
  int topo_dot();
  int run_scenario();
  int run_passthrough();  // run_passthrough.cpp
  int validate();         // validate.cpp
  void add_serve_exec(CLI::App& app);  // serve_exec.cpp
  void add_launch(CLI::App& app);      // launch.cpp
  int launch();
  // launch --scenario: the fabric's spec, SM and faults from the file.
  void take_scenario_fabric();
  // --ip and --mcast-route on `cmd` (topo show, serve), needing the option
  // `needs` when given, and what they ask for.
  void add_address_options(CLI::App* cmd, CLI::Option* needs = nullptr);
  // --fault on `cmd` (serve, launch): faults_, one value per flag.
  void add_fault_option(CLI::App* cmd);
  topo::AddressOptions address_options() const;
  int serve();
  int exec();

  std::function<int()> chosen_;
  std::string spec_, output_;
  std::string scenario_, pcap_, trace_, linktype_ = "erf";
  std::vector<std::string> pcap_links_;
  std::string compare_;
  std::string passthrough_;  // run --passthrough H1=DEV[:PORT],...
  std::string model_, real_;  // validate --model FILE, --real FILE
  std::string dot_dir_;
  bool json_ = false, update_ = false;
  // topo show --addresses / serve: the ports' IP addresses
  bool addresses_ = false;
  std::vector<std::string> ip_overrides_;
  std::vector<std::string> ip_files_;
  std::string mcast_route_ = "1";
  uint64_t seed_ = 0;
  bool seed_given_ = false;
  // serve / exec
  std::string socket_, sm_ = "builtin", sm_node_, node_;
  int64_t rx_grace_us_ = 10000;
  bool sa_no_send_only_ = false;
  bool every_host_local_ = false;  // serve --every-host-local
  std::string partitions_;  // serve --partitions
  std::string routing_ = "minhop";  // serve --routing
  std::size_t max_clients_ = 4096;
  bool no_device_view_ = false;  // exec
  std::vector<std::string> command_;  // exec: the program; launch: the programs
  double timeout_s_ = 600;            // launch --timeout
  bool fabric_log_ = false;           // launch --fabric-log
  // serve --fault / launch --fault: "AT ACTION LINK [PROBABILITY]"
  std::vector<std::string> faults_;
};

}  // namespace ibfab::cli
