// The run digest (the scenario fingerprint) at the fabric: every packet
// arrival is folded with the packet's bytes, so two runs that differ in one
// byte of what crosses the fabric have different digests, where their text
// traces (time, node, port, length, LIDs, VL per hop) are the same.
#include <gtest/gtest.h>

#include <string>

#include "fabric/topology/topology_spec.h"
#include "sim/trace.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::fabric {
namespace {

struct Sink : UdEndpoint {
  std::string got;
  bool on_receive(const UdMessage& m) override {
    got.assign(m.payload.begin(), m.payload.end());
    return true;
  }
};

struct Outcome {
  uint64_t digest = 0;
  uint64_t events = 0;
  std::string text;  // the text trace
  std::string received;
};

// H1 sends one UD message to H8 across the spine of fat-tree:2:4.
Outcome run(const std::string& payload, uint32_t qkey = 0x1111) {
  sim::Simulator sim(5);
  topo::Topology topo = topo::load_topology("fat-tree:2:4");
  Fabric fabric(sim, topo);
  testing::configure_by_hand(fabric);
  sim::RunDigest digest;
  sim::StringTraceSink text;
  sim.trace().attach_digest(&digest);
  sim.trace().attach(&text);
  Sink a, b;
  Hca& h1 = *fabric.find_hca("H1");
  Hca& h8 = *fabric.find_hca("H8");
  const uint32_t qa = h1.create_ud_qp(1, qkey, 0, &a);
  const uint32_t qb = h8.create_ud_qp(1, qkey, 0, &b);
  UdSend s;
  s.dlid = h8.port(1).lid;
  s.dest_qp = qb;
  s.qkey = qkey;
  s.payload = {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()};
  EXPECT_TRUE(h1.send_ud(qa, s));
  sim.run();
  return {digest.value(), digest.events(), text.text(), b.got};
}

TEST(RunDigest, TheSameRunTwiceGivesTheSameDigest) {
  const Outcome a = run("the same bytes"), b = run("the same bytes");
  EXPECT_EQ(a.received, "the same bytes");
  EXPECT_EQ(a.events, 4u) << "one arrival per hop: leaf, spine, leaf, host";
  EXPECT_EQ(a.digest, b.digest);
}

TEST(RunDigest, OneFlippedPayloadByteChangesTheDigestButNotTheTextTrace) {
  const std::string payload(200, 'p');
  for (std::size_t at : {std::size_t{0}, std::size_t{99}, payload.size() - 1}) {
    std::string flipped = payload;
    flipped[at] ^= 0x01;
    const Outcome a = run(payload), b = run(flipped);
    ASSERT_EQ(b.received, flipped);
    EXPECT_EQ(a.text, b.text) << "the text trace does not show payloads";
    EXPECT_NE(a.digest, b.digest) << "byte " << at;
  }
}

TEST(RunDigest, AnotherQKeyChangesTheDigestButNotTheTextTrace) {
  const Outcome a = run("q", 0x1111), b = run("q", 0x1112);
  EXPECT_EQ(b.received, "q");
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(a.digest, b.digest);
}

}  // namespace
}  // namespace ibfab::fabric
