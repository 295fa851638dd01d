// Directed-route SMPs walked hop by hop along an imaginary chain:
//
//   SM (CA, 1 port) --1:3-- S1 (8 ports) --5:2-- S2 (8 ports) --7:1-- T (CA)
//
// Every step applies smi_outgoing / smi_incoming to the buffer and compares
// all 256 bytes with the expected state.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/smi.h"

namespace ibfab::mad {
namespace {

using Buffer = std::array<uint8_t, 256>;

constexpr uint8_t kSwitchPorts = 8;
constexpr uint16_t kSmLid = 0x0010;
constexpr uint16_t kTargetLid = 0x0020;

SmiResult port_hop(uint8_t port) { return SmiResult{SmiAction::Forward, port, false, 0}; }
SmiResult lid_hop(uint16_t lid) { return SmiResult{SmiAction::Forward, 0, true, lid}; }
const SmiResult kLocal{SmiAction::Local, 0, false, 0};
const SmiResult kDiscard{};

Buffer request(std::vector<uint8_t> hops, uint16_t dr_slid = dr_smp::kPermissiveLid,
               uint16_t dr_dlid = dr_smp::kPermissiveLid) {
  Buffer b{};
  dr_smp::DrRequest r;
  r.method = dr_smp::kMethodGet;
  r.transaction_id = 0x1234;
  r.attribute_id = PortInfo::kAttributeId;
  r.dr_slid = dr_slid;
  r.dr_dlid = dr_dlid;
  dr_smp::init_request(b, r, hops);
  return b;
}

// One step: run `step` on `smp`, expect `want`, and expect the buffer to
// equal `expected` afterwards.
#define STEP(call, want, expected)              \
  do {                                          \
    EXPECT_EQ(call, want);                      \
    EXPECT_EQ(smp, expected) << "after " #call; \
  } while (0)

TEST(Smi, FullyDirectedRoundTrip) {
  Buffer smp = request({1, 5, 7});
  Buffer want = smp;
  EXPECT_EQ(want[7], 3);      // HopCount
  EXPECT_EQ(want[129], 1);    // InitialPath[1..3]
  EXPECT_EQ(want[130], 5);
  EXPECT_EQ(want[131], 7);
  EXPECT_EQ(want[32], 0xFF);  // DrSLID, DrDLID permissive
  EXPECT_EQ(want[35], 0xFF);

  // SM sends out its port 1: hp 0 -> 1.
  want[6] = 1;
  STEP(smi_outgoing(smp, false, 1, 1), port_hop(1), want);
  // S1 enters on 3: ReturnPath[1] = 3, hp -> 2, out InitialPath[2] = 5.
  want[193] = 3;
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 3), port_hop(5), want);
  // S2 enters on 2: ReturnPath[2] = 2, hp -> 3, out 7.
  want[194] = 2;
  want[6] = 3;
  STEP(smi_incoming(smp, true, kSwitchPorts, 2), port_hop(7), want);
  // T enters on 1: ReturnPath[3] = 1, hp -> 4 = HopCount + 1, delivered.
  want[195] = 1;
  want[6] = 4;
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);

  // T's SMA answers.
  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;  // D bit
  EXPECT_EQ(smp, want);
  // T sends back out ReturnPath[3] = 1: hp -> 3.
  want[6] = 3;
  STEP(smi_outgoing(smp, false, 1, 1), port_hop(1), want);
  // S2 enters on 7: hp -> 2, out ReturnPath[2] = 2.
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 7), port_hop(2), want);
  // S1 enters on 5: hp -> 1, out ReturnPath[1] = 3.
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 5), port_hop(3), want);
  // SM enters on 1: hp -> 0, DrSLID permissive: the SM gets it.
  want[6] = 0;
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);
}

TEST(Smi, LidRoutedFirstPart) {
  // SM --LID--> S1, then directed S1 -5-> S2 -7-> T.
  Buffer smp = request({5, 7}, kSmLid);
  Buffer want = smp;
  EXPECT_EQ(want[32], 0x00);
  EXPECT_EQ(want[33], 0x10);

  // The SM sends it LID-routed to S1's LID (its own address choice); the
  // SMP is untouched.
  STEP(smi_outgoing(smp, false, 1, 1), lid_hop(kLidFromAddress), want);
  // S1 receives the LID-routed part and starts the directed part.
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 3), port_hop(5), want);
  // S2 enters on 2: ReturnPath[1] = 2, hp -> 2, out 7.
  want[193] = 2;
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 2), port_hop(7), want);
  // T enters on 1: ReturnPath[2] = 1, hp -> 3, delivered.
  want[194] = 1;
  want[6] = 3;
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);

  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;
  // T sends out ReturnPath[2] = 1: hp -> 2.
  want[6] = 2;
  STEP(smi_outgoing(smp, false, 1, 1), port_hop(1), want);
  // S2 enters on 7: hp -> 1, out ReturnPath[1] = 2.
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 7), port_hop(2), want);
  // S1 enters on 5: end of the directed part, hp -> 0, LID-routed to DrSLID.
  want[6] = 0;
  STEP(smi_incoming(smp, true, kSwitchPorts, 5), lid_hop(kSmLid), want);
  // The SM receives the LID-routed response: hp 0, for the SM.
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);
}

TEST(Smi, LidRoutedLastPart) {
  // Directed SM -1-> S1 -5-> S2, then LID-routed S2 --> T (DrDLID).
  Buffer smp = request({1, 5}, dr_smp::kPermissiveLid, kTargetLid);
  Buffer want = smp;

  want[6] = 1;
  STEP(smi_outgoing(smp, false, 1, 1), port_hop(1), want);
  want[193] = 3;
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 3), port_hop(5), want);
  // S2 is at the end of the directed part: records ReturnPath[2], hp -> 3,
  // and LID-routes to DrDLID.
  want[194] = 2;
  want[6] = 3;
  STEP(smi_incoming(smp, true, kSwitchPorts, 2), lid_hop(kTargetLid), want);
  // T receives it at hp = HopCount + 1: delivered, nothing recorded.
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);

  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;
  // T answers LID-routed to the request's LRH SLID (S2); unchanged.
  STEP(smi_outgoing(smp, false, 1, 1), lid_hop(kLidFromAddress), want);
  // S2 receives it (on 7 here) and starts the return path: hp -> 2, out
  // ReturnPath[2] = 2.
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 7), port_hop(2), want);
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 5), port_hop(3), want);
  want[6] = 0;
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);
}

TEST(Smi, BothLidRoutedParts) {
  // SM --LID--> S1 -5-> S2 --LID--> T.
  Buffer smp = request({5}, kSmLid, kTargetLid);
  Buffer want = smp;

  STEP(smi_outgoing(smp, false, 1, 1), lid_hop(kLidFromAddress), want);
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 3), port_hop(5), want);
  want[193] = 2;
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 2), lid_hop(kTargetLid), want);
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);

  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;
  STEP(smi_outgoing(smp, false, 1, 1), lid_hop(kLidFromAddress), want);
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 7), port_hop(2), want);
  want[6] = 0;
  STEP(smi_incoming(smp, true, kSwitchPorts, 5), lid_hop(kSmLid), want);
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);
}

TEST(Smi, SmOnASwitchManagementPort) {
  // An SM on S1's port 0 queries S2 over S1's port 5.
  Buffer smp = request({5});
  Buffer want = smp;
  want[6] = 1;
  STEP(smi_outgoing(smp, true, kSwitchPorts, 0), port_hop(5), want);
  want[193] = 2;
  want[6] = 2;
  STEP(smi_incoming(smp, true, kSwitchPorts, 2), kLocal, want);
  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;
  // S2's SMA answers from port 0 out the port the request came in by.
  want[6] = 1;
  STEP(smi_outgoing(smp, true, kSwitchPorts, 0), port_hop(2), want);
  want[6] = 0;
  STEP(smi_incoming(smp, true, kSwitchPorts, 5), kLocal, want);
}

TEST(Smi, EmptyPathLoopsBackToTheLocalSma) {
  Buffer smp = request({});
  Buffer want = smp;
  want[6] = 1;
  STEP(smi_outgoing(smp, false, 1, 1), kLocal, want);
  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;
  want[6] = 0;
  STEP(smi_outgoing(smp, false, 1, 1), kLocal, want);
}

TEST(Smi, EmptyPathWithLidRoutedParts) {
  // SM --LID--> S1 (hop count 0): S1 answers itself...
  Buffer smp = request({}, kSmLid);
  Buffer want = smp;
  STEP(smi_outgoing(smp, false, 1, 1), lid_hop(kLidFromAddress), want);
  want[6] = 1;
  STEP(smi_incoming(smp, true, kSwitchPorts, 3), kLocal, want);
  smi_make_response(smp);
  want[3] = dr_smp::kMethodGetResp;
  want[4] = 0x80;
  want[6] = 0;
  STEP(smi_outgoing(smp, true, kSwitchPorts, 0), lid_hop(kSmLid), want);
  STEP(smi_incoming(smp, false, 1, 1), kLocal, want);

  // ...and an SM on a switch with an empty path and a DrDLID LID-routes at once.
  Buffer smp2 = request({}, dr_smp::kPermissiveLid, kTargetLid);
  EXPECT_EQ(smi_outgoing(smp2, true, kSwitchPorts, 0), lid_hop(kTargetLid));
  EXPECT_EQ(dr_smp::hop_pointer(smp2), 1);
  // A CA cannot LID-route on behalf of a DR SMP.
  Buffer smp3 = request({}, dr_smp::kPermissiveLid, kTargetLid);
  EXPECT_EQ(smi_outgoing(smp3, false, 1, 1), kDiscard);
}

// Discards leave the buffer as it was.
void expect_discard_unchanged(Buffer smp, bool outgoing, bool is_switch, uint8_t num_ports,
                              uint8_t port) {
  const Buffer before = smp;
  const SmiResult r = outgoing ? smi_outgoing(smp, is_switch, num_ports, port)
                               : smi_incoming(smp, is_switch, num_ports, port);
  EXPECT_EQ(r, kDiscard);
  EXPECT_EQ(smp, before);
}

TEST(Smi, DiscardsMalformedPaths) {
  // Hop count above 63.
  Buffer b = request({1});
  dr_smp::set_hop_count(b, 64);
  expect_discard_unchanged(b, true, false, 1, 1);
  dr_smp::set_hop_pointer(b, 1);
  expect_discard_unchanged(b, false, true, kSwitchPorts, 1);

  // First hop is not the port the CA sends on, or is not a port at all.
  expect_discard_unchanged(request({2, 5}), true, false, 2, 1);
  expect_discard_unchanged(request({0, 5}), true, false, 1, 1);
  // A CA must name the port it sends by.
  expect_discard_unchanged(request({1, 5}), true, false, 1, 0);
  // Switch management port: path port must exist.
  expect_discard_unchanged(request({9}), true, true, kSwitchPorts, 0);
  expect_discard_unchanged(request({0}), true, true, kSwitchPorts, 0);

  // Intermediate hop to port 0 or past the last port.
  Buffer mid = request({1, 0, 7});
  dr_smp::set_hop_pointer(mid, 1);
  expect_discard_unchanged(mid, false, true, kSwitchPorts, 3);
  mid = request({1, 9, 7});
  dr_smp::set_hop_pointer(mid, 1);
  expect_discard_unchanged(mid, false, true, kSwitchPorts, 3);
  // Intermediate hop at a CA.
  mid = request({1, 5, 7});
  dr_smp::set_hop_pointer(mid, 1);
  expect_discard_unchanged(mid, false, false, 1, 1);
  // Ingress port that does not exist.
  expect_discard_unchanged(mid, false, true, kSwitchPorts, 0);
  expect_discard_unchanged(mid, false, true, kSwitchPorts, 9);

  // Hop pointer past HopCount + 1 (outbound), or not HopCount + 1 at a
  // responder.
  Buffer far = request({1, 5});
  dr_smp::set_hop_pointer(far, 4);
  expect_discard_unchanged(far, false, false, 1, 1);
  expect_discard_unchanged(far, true, false, 1, 1);
  // Outbound hp 0 with a path arriving anywhere but a DR start switch.
  expect_discard_unchanged(request({1, 5}), false, true, kSwitchPorts, 3);
  expect_discard_unchanged(request({1, 5}, kSmLid), false, false, 1, 1);
  // End of the directed part at a CA with a DrDLID: a CA cannot LID-route.
  Buffer end = request({1, 5}, dr_smp::kPermissiveLid, kTargetLid);
  dr_smp::set_hop_pointer(end, 2);
  expect_discard_unchanged(end, false, false, 1, 1);

  // Returning: a corrupt ReturnPath entry, an intermediate return hop at a
  // CA, a returning SMP at hp = HopCount + 1 without a LID-routed part, and
  // a CA at the end of the return path with a DrSLID.
  Buffer ret = request({1, 5, 7});
  smi_make_response(ret);
  dr_smp::set_hop_pointer(ret, 3);
  dr_smp::set_return_path(ret, 2, 9);
  expect_discard_unchanged(ret, false, true, kSwitchPorts, 7);
  dr_smp::set_return_path(ret, 2, 2);
  expect_discard_unchanged(ret, false, false, 1, 1);
  dr_smp::set_hop_pointer(ret, 4);
  expect_discard_unchanged(ret, false, true, kSwitchPorts, 7);
  dr_smp::set_hop_pointer(ret, 5);
  expect_discard_unchanged(ret, false, true, kSwitchPorts, 7);
  Buffer ret_slid = request({1, 5}, kSmLid);
  smi_make_response(ret_slid);
  dr_smp::set_hop_pointer(ret_slid, 1);
  expect_discard_unchanged(ret_slid, false, false, 1, 1);
  // Responder whose ReturnPath entry is not the port it answers from.
  Buffer resp = request({1, 5});
  smi_make_response(resp);
  dr_smp::set_hop_pointer(resp, 3);
  dr_smp::set_return_path(resp, 2, 1);
  expect_discard_unchanged(resp, true, false, 2, 2);
}

TEST(Smi, MaximumLengthPath) {
  // 63 hops through switches that always leave by port 2 and enter by 1.
  std::vector<uint8_t> hops(dr_smp::kMaxHops, 2);
  hops[0] = 1;
  Buffer smp = request(hops);
  EXPECT_EQ(smi_outgoing(smp, false, 1, 1), port_hop(1));
  for (int hop = 1; hop < dr_smp::kMaxHops; ++hop) {
    ASSERT_EQ(smi_incoming(smp, true, 2, 1), port_hop(2)) << hop;
  }
  EXPECT_EQ(smi_incoming(smp, false, 1, 1), kLocal);
  EXPECT_EQ(dr_smp::hop_pointer(smp), 64);
  for (std::size_t i = 1; i <= dr_smp::kMaxHops; ++i) EXPECT_EQ(dr_smp::return_path(smp, i), 1);

  smi_make_response(smp);
  EXPECT_EQ(smi_outgoing(smp, false, 1, 1), port_hop(1));
  for (int hop = 1; hop < dr_smp::kMaxHops; ++hop) {
    ASSERT_EQ(smi_incoming(smp, true, 2, 2), port_hop(1)) << hop;
  }
  EXPECT_EQ(smi_incoming(smp, false, 1, 1), kLocal);
  EXPECT_EQ(dr_smp::hop_pointer(smp), 0);
}

TEST(Smi, MakeResponseKeepsStatusAndPaths) {
  Buffer smp = request({1, 5});
  dr_smp::set_status(smp, 0x000C);
  smi_make_response(smp);
  EXPECT_TRUE(dr_smp::direction(smp));
  EXPECT_EQ(dr_smp::status(smp), 0x000C);
  EXPECT_EQ(smp[4], 0x80);
  EXPECT_EQ(smp[5], 0x0C);
  EXPECT_EQ(smp[3], 0x81);
  EXPECT_EQ(dr_smp::initial_path(smp, 2), 5);
}

}  // namespace
}  // namespace ibfab::mad
