// ibfab-passthrough: a scenario's host actions through rdma-core's public
// API, on whatever devices the loader's libibverbs and librdmacm show (the
// model under `ibfab exec`, a real device otherwise). Exit 0 when every step
// had the outcome the scenario expects, 1 when one did not, 2 for bad
// input, an action that cannot pass through or a device port that cannot
// be used (one line).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <iostream>
#include <optional>
#include <string>

#include "tools/passthrough/host_map.h"
#include "tools/passthrough/passthrough_run.h"
#include "tools/passthrough/rdma_host.h"
#include "tools/passthrough/step_plan.h"
#include "tools/scenario/scenario_loader.h"

namespace {

constexpr const char* kUsage =
    "usage: ibfab-passthrough SCENARIO --map H1=DEV[:PORT][@ADDRESS],H2=DEV[:PORT]... [--family ipv4|ipv6]\n"
    "                         [--out FILE] [--timeout-ms N]\n"
    "Runs the scenario's host actions (joins, leaves, multicast and unicast sends, attach, detach,\n"
    "qp-state, create-qp, received-count expectations; RC connections: connect, post, disconnect)\n"
    "through libibverbs and librdmacm on the mapped device ports, in time order, and writes each\n"
    "step's outcome as a JSON line\n"
    "(stdout, or FILE). --timeout-ms: how long a step waits for its events (default 10000).\n"
    "--family: the hosts bind to their device's address of this family, and join a group MGID as an\n"
    "IPv4 address 239.X.Y.Z (X.Y.Z its last three bytes; the default: RoCEv2 joins only IPv4 groups)\n"
    "or as the IPv6 address it spells. @ADDRESS: the address the host binds (default: the first\n"
    "of the machine's addresses of the family that rdma_cm puts on that device port).\n"
    "--hosts H1,H3 --link listen:PORT|ADDRESS:PORT: this process acts for those hosts only, and\n"
    "a peer process (the same scenario and map, the other hosts) on the other end of a TCP link\n"
    "for the rest: the two run the steps in lockstep and both write every step's record (two\n"
    "machines, one run). A connection between a host of each is refused.\n";

int bad(const std::string& line) {
  std::fprintf(stderr, "ibfab-passthrough: %s\n", line.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ibfab;
  std::string file, map_text, out_path, local_text, link_spec;
  long timeout_ms = 10'000;
  passthrough::Family family = passthrough::Family::Ipv4;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--map" && has_value) {
      map_text = argv[++i];
    } else if (arg == "--family" && has_value) {
      const std::optional<passthrough::Family> f = passthrough::parse_family(argv[++i]);
      if (!f) return bad(std::string("--family: ipv4 or ipv6, not '") + argv[i] + "'");
      family = *f;
    } else if (arg == "--hosts" && has_value) {
      local_text = argv[++i];
    } else if (arg == "--link" && has_value) {
      link_spec = argv[++i];
    } else if (arg == "--out" && has_value) {
      out_path = argv[++i];
    } else if (arg == "--timeout-ms" && has_value) {
      char* end = nullptr;
      timeout_ms = std::strtol(argv[++i], &end, 10);
      if (*end || timeout_ms < 1 || timeout_ms > 3'600'000) return bad("--timeout-ms: a number of milliseconds from 1 to 3600000");
    } else if (arg.starts_with("-") || !file.empty()) {
      return bad("unexpected argument '" + arg + "'\n" + kUsage);
    } else {
      file = arg;
    }
  }
  if (file.empty() || map_text.empty()) return bad(std::string("a SCENARIO and --map are required\n") + kUsage);
  if (local_text.empty() != link_spec.empty()) return bad("--hosts and --link go together");
  try {
    const passthrough::HostMap map = passthrough::parse_host_map(map_text);
    const scenario::Scenario s = scenario::load_scenario(file);
    std::vector<std::string> hosts;
    std::vector<passthrough::Step> steps = passthrough::plan_steps(s, map, family, hosts);
    if (!local_text.empty()) hosts = passthrough::split_hosts(s, steps, map, hosts, local_text);
    std::unique_ptr<passthrough::PeerLink> link;
    if (!link_spec.empty()) link = std::make_unique<passthrough::PeerLink>(link_spec, std::chrono::milliseconds(timeout_ms));
    for (const std::string& h : hosts) {
      try {
        passthrough::check_device_port(map.at(h));
      } catch (const passthrough::SetupError& e) {
        throw passthrough::SetupError(h + ": " + e.what());
      }
    }
    passthrough::PassthroughRun run(s, map, family, std::move(steps), hosts, std::chrono::milliseconds(timeout_ms),
                                    link.get());
    std::ofstream file_out;
    if (!out_path.empty()) {
      file_out.open(out_path);
      if (!file_out) return bad(out_path + ": cannot write: " + std::strerror(errno));
    }
    const int failed = run.run(out_path.empty() ? std::cout : file_out);
    if (!out_path.empty() && !file_out) return bad(out_path + ": cannot write");
    return failed ? 1 : 0;
  } catch (const std::invalid_argument& e) {
    return bad(e.what());
  } catch (const scenario::ScenarioError& e) {
    return bad(e.what());
  } catch (const passthrough::Refusal& e) {
    return bad(e.what());
  } catch (const passthrough::SetupError& e) {
    return bad(e.what());
  }
}
