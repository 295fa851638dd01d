#include "tools/cli/commands.h"

#include <charconv>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "fabric/topology/address_override.h"
#include "fabric/topology/dot_writer.h"
#include "fabric/topology/netfile_writer.h"
#include "fabric/topology/text_file.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/topology/topology_stats.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_runner.h"

namespace ibfab::cli {
namespace {

constexpr const char* kSpecHelp =
    "A topology: a net file (ibnetdiscover or ibsim format), or a generator:\n"
    "fat-tree:2:K, fat-tree:3:K (K even), ring:N[:H], line:N[:H], torus:XxY[:H]\n"
    "(H hosts per switch, default 1)";

// Writes through `write` to the file `path`, or to stdout when empty.
template <class F>
void to_output(const std::string& path, F&& write) {
  if (path.empty()) {
    write(std::cout);
    return;
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write");
  write(out);
  if (!out) throw std::runtime_error(path + ": write failed");
}

// A seed as written: decimal digits that fit in 64 bits (CLI11 alone would
// take -1 as 2^64-1).
const CLI::Validator kSeed(
    [](const std::string& s) {
      uint64_t v = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return !s.empty() && ec == std::errc() && end == s.data() + s.size()
                 ? std::string()
                 : "'" + s + "' is no seed (a decimal number from 0 to 18446744073709551615)";
    },
    "SEED");

// An --ip-file's size limit: a million overrides of ~40 bytes.
constexpr std::size_t kMaxAddressFileBytes = std::size_t{64} << 20;

// The text of the input file `path` that `option` names (text_file.h).
std::string read_input(const char* option, const std::string& path, std::size_t limit, const char* what) {
  try {
    return topo::read_text_file(path, limit, what);
  } catch (const topo::TextFileError& e) {
    throw std::invalid_argument(std::string(option) + ": " + e.what());
  }
}

}  // namespace

void Commands::add_to(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Build a topology and look at it");
  topo->require_subcommand(1);

  CLI::App* gen = topo->add_subcommand("gen", "Write a topology as an ibnetdiscover/ibsim net file");
  gen->add_option("SPEC", spec_, kSpecHelp)->required();
  gen->add_option("-o,--output", output_, "Write to this file instead of stdout");
  gen->callback([this] { chosen_ = [this] { return topo_gen(); }; });

  CLI::App* show = topo->add_subcommand("show", "Print a topology's nodes, switches, links and diameter");
  show->add_option("SPEC", spec_, kSpecHelp)->required();
  CLI::Option* addresses =
      show->add_flag("--addresses", addresses_,
                     "Also list every HCA port's IPv4 and IPv6 address, as `ibfab serve` gives them\n"
                     "(with --ip and --mcast-route as serve would take them)");
  add_address_options(show, addresses);
  show->callback([this] { chosen_ = [this] { return topo_show(); }; });

  CLI::App* dot = topo->add_subcommand("dot", "Write a topology as a Graphviz DOT picture");
  dot->add_option("SPEC", spec_, kSpecHelp)->required();
  dot->add_option("-o,--output", output_, "Write to this file instead of stdout");
  dot->callback([this] { chosen_ = [this] { return topo_dot(); }; });

  CLI::App* run = app.add_subcommand("run", "Run a scenario file and print its report");
  run->add_option("SCENARIO", scenario_, "A scenario (YAML): see scenarios/ and docs/SCENARIOS.md")->required();
  run->add_flag("--json", json_, "Print the report as JSON");
  run->add_option("--pcap", pcap_, "Capture every packet crossing the links to this file");
  run->add_option("--pcap-link", pcap_links_,
                  "Capture only this link, named by one end NODE[PORT] (repeatable; default: all)")
      ->needs("--pcap");
  run->add_option("--pcap-linktype", linktype_,
                  "erf (default: ERF records of type InfiniBand, which Wireshark 4.0 reads) or\n"
                  "infiniband (LINKTYPE_INFINIBAND 247, for newer Wireshark)")
      ->check(CLI::IsMember({"erf", "infiniband"}));
  run->add_option("--trace", trace_, "Write the full event trace to this file");
  run->add_option("--dot", dot_dir_, "Write one Graphviz picture per multicast tree (as the MFTs hold it) into DIR")
      ->check(CLI::ExistingDirectory);
  run->add_option("--seed", seed_, "Override the scenario's seed (0 to 2^64-1)")
      ->check(kSeed)
      ->each([this](const std::string&) { seed_given_ = true; });
  run->add_flag("--update", update_, "Write this run's fingerprint into the scenario file");
  run->add_option("--compare", compare_,
                  "A,B: run the scenario under two policies and print their figures side by side.\n"
                  "A policy is a routing engine (minhop, updn), a multicast root (min-max-hop,\n"
                  "least-loaded), an MLID allocator (lowest-free, round-robin) or an admission\n"
                  "(unlimited, max-groups-per-port:N); it replaces that setting of every SM")
      ->excludes("--update");
  run->add_option("--passthrough", passthrough_,
                  "H1=DEV[:PORT][@ADDRESS],...: run the scenario's host actions (joins, leaves, sends,\n"
                  "attach, detach, qp-state, create-qp, received counts, connect, post, disconnect)\n"
                  "through the system's libibverbs and librdmacm on these devices instead of the model,\n"
                  "and print each step's outcome as a JSON line (ibfab-passthrough)")
      ->excludes("--json", "--pcap", "--trace", "--dot", "--seed", "--update", "--compare");
  run->callback([this] { chosen_ = [this] { return passthrough_.empty() ? run_scenario() : run_passthrough(); }; });

  CLI::App* validate_cmd = app.add_subcommand(
      "validate",
      "Run a scenario's host actions on the model and on a real device and compare them step by step.\n"
      "Both runs are ibfab-passthrough's: the model's under `ibfab exec` on an `ibfab serve\n"
      "--every-host-local` of the scenario's topology (each host on its own HCA, bound to its\n"
      "address), the real one on this machine's devices\n"
      "(--passthrough) or recorded elsewhere, e.g. inside scripts/rxe-vm (--real). Fields that differ\n"
      "by the link layer agree by a named rule (docs/COMPATIBILITY.md). Exit 0: all agree; 1: a step\n"
      "disagrees; 2: bad input or a run that could not be made");
  validate_cmd->add_option("SCENARIO", scenario_, "A scenario (YAML) whose actions can pass through")->required();
  CLI::Option* map = validate_cmd->add_option("--passthrough", passthrough_,
                                          "H1=DEV[:PORT][@ADDRESS],...: make the real run here, on these devices");
  CLI::Option* real = validate_cmd->add_option("--real", real_, "The real run's records (ibfab-passthrough --out)")
                          ->check(CLI::ExistingFile);
  map->excludes(real);
  validate_cmd->add_option("--model", model_, "The model's records, made before, instead of a new run")
      ->check(CLI::ExistingFile);
  validate_cmd->callback([this, map, real] {
    if (map->count() == 0 && real->count() == 0)
      throw CLI::ValidationError("validate", "needs the real run: --passthrough MAP or --real FILE");
    chosen_ = [this] { return validate(); };
  });
  add_serve_exec(app);
  add_launch(app);
}

int Commands::run() { return chosen_ ? chosen_() : 2; }

void Commands::add_address_options(CLI::App* cmd, CLI::Option* needs) {
  CLI::Option* ip = cmd->add_option("--ip", ip_overrides_,
                  "Give port PORT (default 1) of host NODE this IPv4 or IPv6 address in place of\n"
                  "its default of that family (port P of the h-th host: 10.P.(h/256).(h%256)/16 and\n"
                  "fd00:0:0:P::h/64); LEN defaults to 16 (IPv4) or 64 (IPv6). Repeatable")
      ->type_name("NODE[:PORT]=ADDR[/LEN]");
  CLI::Option* ip_file = cmd->add_option("--ip-file", ip_files_,
                  "Read --ip overrides from this file, one NODE[:PORT]=ADDR[/LEN] per line ('#' starts\n"
                  "a comment). Repeatable; with --ip too, every address must still be unique")
      ->type_name("FILE");
  CLI::Option* route = cmd->add_option("--mcast-route", mcast_route_,
                  "The port multicast destinations (224.0.0.0/4, ff00::/8) leave by, or none:\n"
                  "no multicast route (rdma_cm then needs a source address to join a group)")
      ->type_name("PORT|none")
      ->capture_default_str()
      ->check(CLI::IsMember({"1", "2", "none"}));
  if (needs) {
    ip->needs(needs);
    ip_file->needs(needs);
    route->needs(needs);
  }
}

topo::AddressOptions Commands::address_options() const {
  topo::AddressOptions o;
  for (const std::string& path : ip_files_) {
    std::istringstream in(read_input("--ip-file", path, kMaxAddressFileBytes, "address files"));
    const std::vector<std::string> lines = topo::read_address_overrides(in, path);
    o.overrides.insert(o.overrides.end(), lines.begin(), lines.end());
  }
  o.overrides.insert(o.overrides.end(), ip_overrides_.begin(), ip_overrides_.end());
  if (mcast_route_ == "none") o.mcast_route_port.reset();
  else o.mcast_route_port = static_cast<uint8_t>(std::stoi(mcast_route_));
  return o;
}

int Commands::topo_gen() {
  const topo::Topology t = topo::load_topology(spec_);
  to_output(output_, [&](std::ostream& out) { topo::write_netfile(out, t); });
  return 0;
}

int Commands::topo_dot() {
  const topo::Topology t = topo::load_topology(spec_);
  to_output(output_, [&](std::ostream& out) { topo::write_dot(out, t); });
  return 0;
}

int Commands::topo_show() {
  const topo::Topology t = topo::load_topology(spec_);
  // Built first, so that a bad --ip prints nothing but its error.
  const topo::AddressPlan plan = addresses_ ? topo::AddressPlan(t, address_options()) : topo::AddressPlan();
  const topo::TopologyStats s = topo::compute_stats(t);
  std::map<std::string, std::size_t> rates;
  for (const topo::LinkDesc& l : t.links()) ++rates[l.rate.str()];
  std::map<unsigned, std::size_t> radix;
  for (const topo::NodeDesc& n : t.nodes())
    if (n.kind == topo::NodeKind::Switch) ++radix[n.num_ports];
  std::cout << "topology  " << spec_ << "\n"
            << "nodes     " << t.nodes().size() << "\n"
            << "hosts     " << s.hcas << "\n"
            << "switches  " << s.switches << "\n";
  for (auto [ports, n] : radix) std::cout << "          " << n << " x " << ports << "-port\n";
  std::cout << "links     " << s.links << " (" << s.host_links << " host, " << s.switch_links << " switch-to-switch)\n";
  for (const auto& [rate, n] : rates) std::cout << "          " << n << " x " << rate << "\n";
  if (s.connected) std::cout << "diameter  " << s.diameter << " hops (host to host)\n";
  else std::cout << "diameter  - (not connected)\n";
  if (addresses_) {
    std::cout << "addresses " << plan.ports().size() << " ports (NODE PORT IPV4 IPV6); multicast route: "
              << (mcast_route_ == "none" ? "none" : "port " + mcast_route_) << "\n";
    for (const std::string& line : plan.lines(t)) std::cout << "          " << line << "\n";
  }
  return 0;
}

int Commands::run_scenario() {
  const scenario::Scenario s = scenario::load_scenario(scenario_);
  if (!compare_.empty()) {
    const auto comma = compare_.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == compare_.size())
      throw std::runtime_error("--compare takes two policies: A,B (e.g. min-max-hop,least-loaded)");
    scenario::Report runs[2];
    for (int i = 0; i < 2; ++i) {
      scenario::RunOptions o;
      o.policy = i == 0 ? compare_.substr(0, comma) : compare_.substr(comma + 1);
      if (seed_given_) o.seed = seed_;
      runs[i] = scenario::run_scenario(s, o);
      runs[i].expected.reset();  // a golden fingerprint belongs to the file's own policies
    }
    scenario::print_comparison(runs[0], runs[1], std::cout);
    return runs[0].passed() && runs[1].passed() ? 0 : 1;
  }
  scenario::RunOptions o;
  o.pcap = pcap_;
  o.pcap_links = pcap_links_;
  o.dot_dir = dot_dir_;
  o.progress = stderr;
  o.pcap_linktype_247 = linktype_ == "infiniband";
  o.trace = trace_;
  if (seed_given_) o.seed = seed_;
  scenario::Report r = scenario::run_scenario(s, o);
  if (update_) {
    if (seed_given_) throw std::runtime_error("--update records the scenario's own seed; drop --seed");
    scenario::write_fingerprint(scenario_, r.fingerprint);
    r.expected = r.fingerprint;
  } else if (seed_given_) {
    r.expected.reset();  // a golden fingerprint belongs to the scenario's seed
  }
  if (json_) scenario::print_json(r, std::cout);
  else scenario::print_text(r, std::cout);
  return r.passed() ? 0 : 1;
}

}  // namespace ibfab::cli
