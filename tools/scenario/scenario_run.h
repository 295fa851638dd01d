#pragma once
// One run of a scenario (internal to the runner): the simulator and fabric,
// the SMs, the hosts acting for applications, the probes, and the report
// being filled. scenario_runner.cpp sets it up, runs it and collects the
// results; scenario_actions.cpp turns each action into the closure that
// applies it at its time, qp_actions.cpp those of the actions on a host's
// UD QP (send, attach, detach, qp-state, create-qp), connection_actions.cpp
// those on RC connections between hosts (connect, post, disconnect).
//
// Members are declared in dependency order, so they are destroyed users
// first: probes, connections, hosts and SMs before the fabric, the fabric
// (which clears the simulator's pending events) before the simulator.
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology.h"
#include "fabric/wire/pcap_writer.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sm/discovery.h"
#include "sm/smp_sender.h"
#include "sm/subnet_manager.h"
#include "tools/scenario/progress_line.h"
#include "tools/scenario/report.h"
#include "tools/scenario/scenario.h"
#include "tools/scenario/scenario_connection.h"
#include "tools/scenario/scenario_host.h"
#include "tools/scenario/scenario_runner.h"

namespace ibfab::scenario {

class ScenarioRun {
 public:
  ScenarioRun(const Scenario& s, const RunOptions& options);
  Report run();

 private:
  // scenario_runner.cpp
  void attach_outputs();
  void start_sms();
  void advance();  // runs to the scenario's end
  void repeat(std::size_t i);  // applies repeats_[i] and schedules its next time
  void collect();
  void collect_groups();

  // scenario_actions.cpp: the closure applying `a`; resolves every name now
  // and fails (with the action's line) on anything the fabric lacks.
  std::function<void()> bind(const Action& a);
  std::function<void()> bind_link(const Action& a);
  std::function<void()> bind_node(const Action& a);
  std::function<void()> bind_membership(const Action& a);  // join, leave
  struct Tally {  // the answers to one round of a many-host join or leave
    std::size_t answers = 0, ok = 0;
    sim::LatencySummary latency;
  };
  void apply_membership(const Action& a);
  void membership_answered(const Action& a, const ScenarioHost& hs, const JoinResult& res, Tally* tally,
                           std::size_t hosts, sim::Time at);
  static std::string membership_text(const Action& a, const std::string& node);
  static std::string expect_text(const Expectation& e);
  // qp_actions.cpp
  static std::string send_text(const Action& a);
  std::function<void()> bind_send(const Action& a);
  void apply_send(const Action& a);
  std::function<void()> bind_attachment(const Action& a);  // attach, detach
  std::function<void()> bind_qp_state(const Action& a);
  std::function<void()> bind_create_qp(const Action& a);
  // connection_actions.cpp: connect, post, disconnect
  std::function<void()> bind_connection(const Action& a);
  std::function<void()> bind_connect(const Action& a);
  void size_connections();  // fills connection_sizes_
  void post_done(const Action& a, const PostOutcome& out);
  static std::string post_text(const Action& a);
  void end_connections();  // at the end of the run: posts still waiting fail it
  std::function<void()> bind_subscribe(const Action& a);
  std::function<void()> bind_expect(const Action& a);
  std::function<void()> bind_sm_kill(const Action& a);
  std::function<void()> bind_probe(const Action& a);
  fabric::Hca& hca(const Action& a, const std::string& node);  // a host of the fabric, else fail()
  ScenarioHost& host(const Action& a, const std::string& node);
  sm::SubnetManager& current_sm();  // whose SA answers: the master, else the first
  [[noreturn]] void fail(const Action& a, const std::string& problem) const;

  struct Probe {
    sm::SmpSender sender;
    sm::Discovery discovery;
    explicit Probe(fabric::Hca& h) : sender(h, 1, sm::SmpSender::Options{}), discovery(sender) {}
  };

  const Scenario& s_;
  const RunOptions& options_;
  Report r_;
  sim::Progress progress_;  // what the progress line reads, from the model build on
  std::unique_ptr<ProgressLine> progress_line_;
  topo::Topology topology_;
  sim::RunDigest digest_;  // the fingerprint
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace_file_{nullptr, &std::fclose};
  std::unique_ptr<sim::FileTraceSink> file_sink_;  // --trace
  wire::PcapWriter pcap_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::vector<std::unique_ptr<sm::SubnetManager>> sms_;
  std::map<std::string, std::unique_ptr<ScenarioHost>> hosts_;
  // Every connection made (closed ones too: a post after the disconnect
  // flushes on it), and each pair's latest (by the two names in order;
  // null when its connect failed).
  std::vector<std::unique_ptr<ScenarioConnection>> connections_;
  std::map<std::pair<std::string, std::string>, ScenarioConnection*> connection_of_;
  // The buffers each pair's connections are made with (the first name's
  // end first), from all the pair's posts.
  std::map<std::pair<std::string, std::string>, std::array<EndSizes, 2>> connection_sizes_;
  std::vector<std::unique_ptr<Probe>> probes_;
  // Actions with `every`: bound once, applied at each of their times.
  struct Repeat {
    std::function<void()> apply;
    sim::Time every, until;
  };
  std::vector<Repeat> repeats_;
};

// Short forms used in report lines.
std::string hex16(unsigned v);
std::string qpn_text(uint32_t qpn);  // "0x000048"
std::string join_state_name(uint8_t join_state);

}  // namespace ibfab::scenario
