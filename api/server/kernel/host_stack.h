#pragma once
// Every host's kernel below rdma_cm, port by port: the port's ib_sa client
// (fabric::SaClient), its multicast module (PortMulticast) and ipoib's
// broadcast membership (Ipoib). Built for every HCA of the fabric, indexed
// by node; switches have none. ib_cm's agents are IbCm's own.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "api/server/kernel/ipoib.h"
#include "api/server/kernel/multicast.h"
#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/model/sa_client.h"

namespace ibfab::api {

struct PortStack {
  fabric::Hca* hca = nullptr;
  uint8_t number = 0;
  std::unique_ptr<fabric::SaClient> sa;
  std::unique_ptr<PortMulticast> mcast;
  std::unique_ptr<Ipoib> ipoib;
};

struct HostStack {
  fabric::Hca* hca = nullptr;
  std::vector<PortStack> ports;  // [port - 1]
};

class HostStacks {
 public:
  explicit HostStacks(std::size_t nodes) : stacks_(nodes) {}

  // Builds `hca`'s stack, port by port; `each_port(port)` runs after each
  // port's, for the caller's own per-port parts (ib_cm's agent). The HCA
  // numbers MAD agents in the order they register, and the numbers are in
  // the TIDs they send: port by port, SA client then CM agent.
  template <typename EachPort>
  HostStack& add(fabric::Hca& hca, EachPort&& each_port) {
    auto s = std::make_unique<HostStack>();
    s->hca = &hca;
    s->ports.resize(hca.num_ports());
    for (uint8_t p = 1; p <= hca.num_ports(); ++p) {
      PortStack& ps = s->ports[p - 1u];
      ps.hca = &hca;
      ps.number = p;
      ps.sa = std::make_unique<fabric::SaClient>(hca, p);
      ps.mcast = std::make_unique<PortMulticast>(hca, p, *ps.sa);
      ps.ipoib = std::make_unique<Ipoib>(hca, p, *ps.mcast);
      each_port(p);
    }
    stacks_.at(hca.index()) = std::move(s);
    return *stacks_[hca.index()];
  }

  PortStack& port(const fabric::Hca& hca, uint8_t port) { return stacks_.at(hca.index())->ports.at(port - 1u); }
  // The first host in topology order.
  fabric::Hca& first_host() const;
  // Every host, in topology order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& s : stacks_)
      if (s) fn(*s);
  }

  // Every Active port has joined its IPoIB broadcast group, or tried twice.
  // Cheap to ask after every event: it resumes at the host that held it up
  // last time, and says yes only after a whole pass.
  bool ipoib_settled();
  // How many hosts have every Active port settled so (a whole pass: for
  // progress lines, not for every event).
  std::size_t ipoib_hosts_settled() const;
  std::size_t hosts() const;

 private:
  std::vector<std::unique_ptr<HostStack>> stacks_;  // by node index (null for switches)
  std::size_t ipoib_cursor_ = 0;                    // ipoib_settled's place in stacks_
};

}  // namespace ibfab::api
