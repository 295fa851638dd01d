#pragma once
// The ibfab subcommands: their options and what they do.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ibfab::cli {

class Commands {
 public:
  // Declares `topo gen|show|dot`, `run`, `serve` and `exec` on `app`.
  void add_to(CLI::App& app);
  // Runs the subcommand that was parsed; returns the exit status. Throws
  // for bad input (the caller prints it and exits 2).
  int run();

 private:
  int topo_gen();
  int topo_show();
  int topo_dot();
  int run_scenario();
  void add_serve_exec(CLI::App& app);  // serve_exec.cpp
  int serve();
  int exec();

  std::function<int()> chosen_;
  std::string spec_, output_;
  std::string scenario_, pcap_, trace_, linktype_ = "erf";
  std::vector<std::string> pcap_links_;
  std::string compare_;
  std::string dot_dir_;
  bool json_ = false, update_ = false;
  uint64_t seed_ = 0;
  bool seed_given_ = false;
  // serve / exec
  std::string socket_, sm_ = "builtin", sm_node_, node_;
  int64_t rx_grace_us_ = 10000;
  std::vector<std::string> command_;
};

}  // namespace ibfab::cli
