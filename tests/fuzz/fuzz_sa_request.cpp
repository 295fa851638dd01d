// The SA request path on arbitrary bytes. Neither may crash, read out of
// bounds, or leave the group table inconsistent (every group's
// full-member count matches its members, MLIDs unique, no non-well-known
// group without a full member):
// - McastGroups operations decoded from the input, on a fresh table: each
//   op is 62 bytes: op/requester byte, flags byte (trusted, pick a known
//   PortGID, pick a known MGID), ComponentMask (8), MCMemberRecord (52);
// - the first 256 bytes as an SA MAD (class and version forced) handed to
//   SaAgent::handle from a known port's LID, on a fabric kept across
//   inputs (rebuilt every 1000) so that groups and RMPP transfers
//   accumulate.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/byte_cursor.h"
#include "sm/sa/mcast_groups.h"
#include "sm/sa/sa_agent.h"
#include "tests/fabric/model/hand_config.h"
#include "tests/sm/sa_fake_routing.h"
#include "tests/sm/sa_test_subnet.h"

using namespace ibfab;

namespace {

void check(const sm::McastGroups& g) {
  const std::string problem = g.check_invariants();
  if (!problem.empty()) {
    std::fprintf(stderr, "inconsistent group table: %s\n", problem.c_str());
    std::abort();
  }
}

struct World {
  sim::Simulator sim;
  topo::Topology topo = topo::load_topology("line:2:2");
  fabric::Fabric fabric{sim, topo};
  sm::Subnet subnet;
  std::unique_ptr<sm::testing::FakeRouting> routing;
  std::unique_ptr<sm::McastGroups> groups;
  std::unique_ptr<sm::SaAgent> agent;
  World() {
    fabric::testing::configure_by_hand(fabric);
    fabric::Hca& h1 = *fabric.find_hca("H1");
    subnet = sm::testing::subnet_from_fabric(fabric, h1);
    // A second partition on some ports, so P_Key rules have work to do.
    subnet.ports[1].pkeys.push_back(0x8001);
    subnet.ports[2].pkeys = {0x8001};
    routing = std::make_unique<sm::testing::FakeRouting>(64);
    groups = std::make_unique<sm::McastGroups>(subnet, *routing);
    agent = std::make_unique<sm::SaAgent>(h1, 1, subnet, *groups);
    agent->set_serving(true);
  }
};

void run_ops(World& w, const uint8_t* data, size_t size) {
  constexpr size_t kOp = 62;
  sm::testing::FakeRouting routing(8);
  sm::McastGroups groups(w.subnet, routing);
  const auto nports = static_cast<uint32_t>(w.subnet.ports.size());
  for (size_t off = 0; off + kOp <= size; off += kOp) {
    const uint8_t* op = data + off;
    const uint32_t requester = (op[0] >> 2) % nports;
    const uint8_t flags = op[1];
    const uint64_t mask = wire::load_be64(op + 2);
    mad::McMemberRecord rec = mad::McMemberRecord::unpack(std::span<const uint8_t>(op + 10, 52));
    if (flags & 0x2)
      rec.port_gid = wire::Gid::from(w.subnet.prefix, w.subnet.ports[op[10] % nports].guid);
    if ((flags & 0x4) && !groups.groups().empty()) {
      auto it = groups.groups().begin();
      std::advance(it, op[11] % groups.groups().size());
      rec.mgid = it->first;
    }
    switch (op[0] & 3) {
      case 0: groups.join(requester, rec, mask); break;
      case 1: groups.leave(requester, rec, mask); break;
      case 2: groups.get(requester, rec, mask, flags & 1); break;
      default: groups.drop_port(w.subnet.ports[op[12] % nports].guid); break;
    }
    check(groups);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Rebuilt every 1000 inputs so that subscriptions and groups stay bounded.
  static std::unique_ptr<World> world;
  static uint32_t inputs = 0;
  if (!world || ++inputs % 1000 == 0) {
    world.reset();
    world = std::make_unique<World>();
  }
  World& w = *world;
  if (size < 2) return 0;
  run_ops(w, data + 1, size - 1);

  uint8_t mad[256] = {};
  std::memcpy(mad, data + 1, std::min<size_t>(size - 1, sizeof mad));
  mad[0] = 1;
  mad[1] = mad::kSaClass;
  mad[2] = mad::kSaClassVersion;
  fabric::MadAddress from;
  from.lid = w.subnet.ports[data[0] % w.subnet.ports.size()].lid;
  from.qpn = 1;
  w.agent->handle(from, std::span<const uint8_t>(mad, sizeof mad));
  w.sim.run();
  check(*w.groups);
  return 0;
}
