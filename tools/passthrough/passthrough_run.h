#pragma once
// Runs the planned steps on real devices (whichever libibverbs and
// librdmacm the loader found) and writes the API-visible outcome of each
// step as one JSON line (docs/ARCHITECTURE.md, "tools/passthrough/").
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tools/passthrough/host_map.h"
#include "tools/passthrough/json_line.h"
#include "tools/passthrough/peer_link.h"
#include "tools/passthrough/rc_connection.h"
#include "tools/passthrough/rdma_host.h"
#include "tools/passthrough/step_plan.h"
#include "tools/scenario/scenario.h"

namespace ibfab::passthrough {

class PassthroughRun {
 public:
  // Sets every host of `hosts` up (throws SetupError, having released what
  // it made). With a `link`, the scenario's other hosts are the peer's:
  // the two processes run the steps in lockstep (peer_link.h).
  PassthroughRun(const scenario::Scenario& s, const HostMap& map, Family family, std::vector<Step> steps,
                 const std::vector<std::string>& hosts, std::chrono::milliseconds timeout,
                 PeerLink* link = nullptr);
  ~PassthroughRun();

  // Runs every step in order, writing a line for each, then a summary
  // line. Returns how many steps did not have the outcome the scenario
  // expects.
  int run(std::ostream& out);

 private:
  struct Group;
  struct HostState;

  JsonObject join(HostState& h, const scenario::Action& a, bool& ok);
  JsonObject leave(HostState& h, const scenario::Action& a, bool& ok);
  JsonObject send(HostState& h, const scenario::Action& a, std::size_t step, bool& ok);
  JsonObject attach(HostState& h, const scenario::Action& a, bool& ok);  // and detach
  JsonObject qp_state(HostState& h, const scenario::Action& a, bool& ok);
  JsonObject create_qp(HostState& h, const scenario::Action& a, bool& ok);
  JsonObject expect_received(HostState& h, const scenario::Action& a, bool& ok);
  // connect, post, disconnect: on the pair's RcConnection (a connect makes
  // a new one).
  JsonObject connection(const scenario::Action& a, std::size_t step, bool& ok);
  std::pair<ibv_gid, uint16_t> attachment(HostState& h, const scenario::Action& a) const;
  // Takes completions and events on every host until done() or `limit`
  // (the step timeout when zero) has passed; false at the limit.
  template <class Done>
  bool wait_until(Done done, std::chrono::milliseconds limit = {});
  HostState& host(const std::string& name);
  bool local(const std::string& name) const;
  // A host's address and QP number, asked of the peer when it is not local.
  RdmaHost::Address address_of(const std::string& name);
  uint32_t qpn_of(const std::string& name);
  // Takes the lines the peer sent: answers its asks, keeps step records
  // and answers to ours.
  void service_link();
  std::string ask(const std::string& what);  // the peer's answer
  // The peer's record of step `i`, waiting for it while the local hosts'
  // receives stay posted.
  std::string peer_record(std::size_t i);

  const scenario::Scenario& scenario_;
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<HostState>> hosts_;
  // By the pair's names, the lower first; and each pair's largest post.
  using Pair = std::pair<std::string, std::string>;
  std::map<Pair, std::unique_ptr<RcConnection>> connections_;
  std::map<Pair, uint32_t> largest_post_;
  Family family_;
  std::chrono::milliseconds timeout_;
  PeerLink* link_;
  std::map<std::size_t, std::string> peer_records_;  // step -> the record the peer sent
  std::optional<std::string> answer_;                // to our last ask
  // How long an expect step keeps listening once its count is reached, so
  // that a message too many (or a late flush) is seen by this step.
  static constexpr std::chrono::milliseconds kQuiet{50};
};

}  // namespace ibfab::passthrough
