// The CM's connection messages (fabric/mad/cm_req.h ... cm_lap.h): every
// field set to a distinct value and packed must give the bytes laid out by
// hand below from the IBTA's offsets (as Linux's ibta_vol1_c12.h also
// states them), reserved bits included; unpacking gives the message back,
// ignores reserved bits and refuses a short buffer.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "fabric/mad/cm_dreq.h"
#include "fabric/mad/cm_lap.h"
#include "fabric/mad/cm_mra.h"
#include "fabric/mad/cm_rej.h"
#include "fabric/mad/cm_rep.h"
#include "fabric/mad/cm_req.h"
#include "fabric/mad/cm_rtu.h"
#include "fabric/mad/cm_sidr.h"
#include "tests/fabric/mad/cm_samples.h"

namespace ibfab::mad {
namespace {

using testing::counting;

using Bytes = std::array<uint8_t, kCmDataSize>;

struct Run {
  std::size_t offset;
  std::vector<uint8_t> bytes;
};

// A message image: the runs at their offsets, zero everywhere else.
Bytes image(std::initializer_list<Run> runs) {
  Bytes b{};
  for (const Run& r : runs)
    for (std::size_t i = 0; i < r.bytes.size(); ++i) b.at(r.offset + i) = r.bytes[i];
  return b;
}

Bytes filled(uint8_t v) {
  Bytes b;
  b.fill(v);
  return b;
}

// Packs, unpacks and compares `m` against `expected` (every byte of the
// message) and `reserved` (a 1 for each reserved bit).
template <class M>
void check_layout(const M& m, const Bytes& expected, const Bytes& reserved) {
  static_assert(M::kSize == kCmDataSize);
  Bytes out = filled(0xEE);  // pack must write every byte
  m.pack(out);
  for (std::size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i], expected[i]) << "byte " << i << " of the message (MAD byte " << i + kCmDataOffset << ")";

  const std::optional<M> back = M::unpack(out);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(*back == m) << "unpack(pack(m)) != m";

  // Reserved bits set on the wire are ignored.
  Bytes dirty = expected;
  for (std::size_t i = 0; i < dirty.size(); ++i) dirty[i] |= reserved[i];
  const std::optional<M> from_dirty = M::unpack(dirty);
  ASSERT_TRUE(from_dirty.has_value());
  EXPECT_TRUE(*from_dirty == m) << "a reserved bit was read into a field";

  // Every bit that is not reserved belongs to a field (all ones survive a
  // round trip) and reserved bits are written as zero.
  Bytes ones_out = filled(0xEE);
  M::unpack(filled(0xFF))->pack(ones_out);
  for (std::size_t i = 0; i < ones_out.size(); ++i)
    EXPECT_EQ(ones_out[i], static_cast<uint8_t>(~reserved[i])) << "all-ones round trip, message byte " << i;

  // Short input.
  EXPECT_FALSE(M::unpack(std::span<const uint8_t>(out).first(kCmDataSize - 1)).has_value());
  EXPECT_FALSE(M::unpack(std::span<const uint8_t>()).has_value());

  // As a whole CM MAD.
  const CmMad mad = make_cm_mad(0x0102030405060708ull, m);
  EXPECT_EQ(mad[16] << 8 | mad[17], M::kAttributeId);
  const std::optional<M> from_mad = cm_message<M>(mad);
  ASSERT_TRUE(from_mad.has_value());
  EXPECT_TRUE(*from_mad == m);
  EXPECT_FALSE(cm_message<M>(std::span<const uint8_t>(mad).first(wire::kMadSize - 1)).has_value());
}

TEST(CmMessages, AttributeIds) {
  EXPECT_EQ(cm_attr::kClassPortInfo, 0x0001);
  EXPECT_EQ(CmReq::kAttributeId, 0x0010);
  EXPECT_EQ(CmMra::kAttributeId, 0x0011);
  EXPECT_EQ(CmRej::kAttributeId, 0x0012);
  EXPECT_EQ(CmRep::kAttributeId, 0x0013);
  EXPECT_EQ(CmRtu::kAttributeId, 0x0014);
  EXPECT_EQ(CmDreq::kAttributeId, 0x0015);
  EXPECT_EQ(CmDrep::kAttributeId, 0x0016);
  EXPECT_EQ(SidrReq::kAttributeId, 0x0017);
  EXPECT_EQ(SidrRep::kAttributeId, 0x0018);
  EXPECT_EQ(CmLap::kAttributeId, 0x0019);
  EXPECT_EQ(CmApr::kAttributeId, 0x001A);
}

TEST(CmMessages, Req) {
  const CmReq m = testing::sample_req();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},               // LocalCommunicationID
      {4, {0x00, 0x05, 0x06, 0x07}},               // reserved | VendorID
      {8, {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17}},  // ServiceID
      {16, {0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}},  // LocalCAGUID
      {24, {0x00, 0x00, 0x00, 0x00}},              // reserved
      {28, {0x20, 0x21, 0x22, 0x23}},              // LocalQ_Key
      {32, {0x24, 0x25, 0x26, 0x27}},              // LocalQPN | ResponderResources
      {36, {0x28, 0x29, 0x2a, 0x2b}},              // LocalEECN | InitiatorDepth
      {40, {0x2c, 0x2d, 0x2e, 0x9d}},              // RemoteEECN | 10011 10 1
      {44, {0x30, 0x31, 0x32, 0xb5}},              // StartingPSN | 10110 101
      {48, {0x80, 0x34}},                          // PartitionKey
      {50, {0x5e}},                                // MTU 0101 | RDC 1 | RNR 110
      {51, {0xab}},                                // MaxCMRetries 1010 | SRQ 1 | Ext 011
      {52, {0x35, 0x36, 0x37, 0x38}},              // primary LIDs
      {56, counting(16, 0x40)},                    // primary LocalPortGID
      {72, counting(16, 0x50)},                    // primary RemotePortGID
      {88, {0xab, 0xcd, 0xe0, 0x2a}},              // FlowLabel | reserved | PacketRate 101010
      {92, {0x61, 0x62}},                          // TrafficClass, HopLimit
      {94, {0xc8}},                                // SL 1100 | SubnetLocal 1 | reserved
      {95, {0x88}},                                // LocalACKTimeout 10001 | reserved
      {96, {0x63, 0x64, 0x65, 0x66}},              // alternate LIDs
      {100, counting(16, 0x70)},
      {116, counting(16, 0x80)},
      {132, {0x12, 0x34, 0x50, 0x15}},             // FlowLabel | PacketRate 010101
      {136, {0x91, 0x92}},
      {138, {0x30}},                               // SL 0011 | SubnetLocal 0
      {139, {0x74}},                               // LocalACKTimeout 01110 | SAPSupported 1
      {140, counting(92, 0xa0)},                   // PrivateData
  });
  const Bytes reserved = image({{4, {0xff}}, {24, {0xff, 0xff, 0xff, 0xff}},
                                {90, {0x0f, 0xc0}}, {94, {0x07, 0x07}},
                                {134, {0x0f, 0xc0}}, {138, {0x07, 0x03}}});
  check_layout(m, expected, reserved);
}

TEST(CmMessages, Rep) {
  const CmRep m = testing::sample_rep();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},  // LocalCommunicationID
      {4, {0x05, 0x06, 0x07, 0x08}},  // RemoteCommunicationID
      {8, {0x09, 0x0a, 0x0b, 0x0c}},  // LocalQ_Key
      {12, {0x0d, 0x0e, 0x0f, 0x10}}, // LocalQPN | VendorID 23:16
      {16, {0x11, 0x12, 0x13, 0x20}}, // LocalEECN | VendorID 15:8
      {20, {0x14, 0x15, 0x16, 0x30}}, // StartingPSN | VendorID 7:0
      {24, {0x17, 0x18}},             // ResponderResources, InitiatorDepth
      {26, {0xcd}},                   // TargetACKDelay 11001 | Failover 10 | E2E 1
      {27, {0xb0}},                   // RNRRetryCount 101 | SRQ 1 | reserved
      {28, {0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28}},  // LocalCAGUID
      {36, counting(196, 0x30)},      // PrivateData
  });
  check_layout(m, expected, image({{27, {0x0f}}}));
}

TEST(CmMessages, Rtu) {
  const CmRtu m = testing::sample_rtu();
  check_layout(m, image({{0, {0x01, 0x02, 0x03, 0x04}}, {4, {0x05, 0x06, 0x07, 0x08}}, {8, counting(224, 0x11)}}),
               image({}));
}

TEST(CmMessages, Rej) {
  const CmRej m = testing::sample_rej();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},
      {4, {0x05, 0x06, 0x07, 0x08}},
      {8, {0x80}},         // MessageREJected 10 | reserved
      {9, {0x8a}},         // RejectInfoLength 1000101 | reserved
      {10, {0x00, 0x1c}},  // Reason 28
      {12, counting(72, 0x20)},
      {84, counting(148, 0x70)},
  });
  check_layout(m, expected, image({{8, {0x3f, 0x01}}}));
}

TEST(CmMessages, Mra) {
  const CmMra m = testing::sample_mra();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},
      {4, {0x05, 0x06, 0x07, 0x08}},
      {8, {0x40}},  // MessageMRAed 01 | reserved
      {9, {0xb8}},  // ServiceTimeout 10111 | reserved
      {10, counting(222, 0x33)},
  });
  check_layout(m, expected, image({{8, {0x3f, 0x07}}}));
}

TEST(CmMessages, Dreq) {
  const CmDreq m = testing::sample_dreq();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},
      {4, {0x05, 0x06, 0x07, 0x08}},
      {8, {0x0a, 0x0b, 0x0c, 0x00}},  // RemoteQPN/EECN | reserved
      {12, counting(220, 0x44)},
  });
  check_layout(m, expected, image({{11, {0xff}}}));
}

TEST(CmMessages, Drep) {
  const CmDrep m = testing::sample_drep();
  check_layout(m, image({{0, {0x01, 0x02, 0x03, 0x04}}, {4, {0x05, 0x06, 0x07, 0x08}}, {8, counting(224, 0x55)}}),
               image({}));
}

TEST(CmMessages, Lap) {
  const CmLap m = testing::sample_lap();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},
      {4, {0x05, 0x06, 0x07, 0x08}},
      {8, {0x00, 0x00, 0x00, 0x00}},  // reserved
      {12, {0x0a, 0x0b, 0x0c, 0xa8}}, // RemoteQPN/EECN | RemoteCMResponseTimeout 10101 | reserved
      {16, {0x00, 0x00, 0x00, 0x00}}, // reserved
      {20, {0x14, 0x15, 0x16, 0x17}}, // alternate LIDs
      {24, counting(16, 0x20)},       // AlternateLocalPortGID
      {40, counting(16, 0x30)},       // AlternateRemotePortGID
      {56, {0xfe, 0xdc, 0xb0, 0x5a}}, // FlowLabel | reserved | TrafficClass
      {60, {0x5b}},                   // HopLimit
      {61, {0x3c}},                   // reserved | PacketRate 111100
      {62, {0x98}},                   // SL 1001 | SubnetLocal 1 | reserved
      {63, {0xf8}},                   // LocalACKTimeout 11111 | reserved
      {64, counting(168, 0x66)},
  });
  const Bytes reserved = image({{8, {0xff, 0xff, 0xff, 0xff}}, {15, {0x07}}, {16, {0xff, 0xff, 0xff, 0xff}},
                                {58, {0x0f}}, {61, {0xc0, 0x07, 0x07}}});
  check_layout(m, expected, reserved);
}

TEST(CmMessages, Apr) {
  const CmApr m = testing::sample_apr();
  const Bytes expected = image({
      {0, {0x01, 0x02, 0x03, 0x04}},
      {4, {0x05, 0x06, 0x07, 0x08}},
      {8, {0x48, 0x05, 0x00, 0x00}},  // AdditionalInfoLength, APStatus, reserved
      {12, counting(72, 0x21)},
      {84, counting(148, 0x77)},
  });
  check_layout(m, expected, image({{10, {0xff, 0xff}}}));
}

// Values wider than their fields are cut to their width and never reach
// a neighbour.
TEST(CmMessages, FieldsAreMaskedToTheirWidths) {
  CmReq m;
  m.vendor_id = 0xff000000;
  m.local_qpn = 0xff000000;
  m.local_eecn = 0xff000000;
  m.remote_eecn = 0xff000000;
  m.starting_psn = 0xff000000;
  m.remote_cm_response_timeout = 0xe0;
  m.transport_service_type = 0xfc;
  m.local_cm_response_timeout = 0xe0;
  m.retry_count = 0xf8;
  m.path_mtu = 0xf0;
  m.rnr_retry_count = 0xf8;
  m.max_cm_retries = 0xf0;
  m.extended_transport_type = 0xf8;
  m.primary_path.flow_label = 0xfff00000;
  m.primary_path.packet_rate = 0xc0;
  m.primary_path.sl = 0xf0;
  m.primary_path.local_ack_timeout = 0xe0;
  m.alternate_path = m.primary_path;
  Bytes out = filled(0xEE);
  m.pack(out);
  EXPECT_EQ(out, Bytes{});

  CmLap lap;
  lap.remote_qpn_eecn = 0xff000000;
  lap.remote_cm_response_timeout = 0xe0;
  lap.alternate_path = m.primary_path;
  out = filled(0xEE);
  lap.pack(out);
  EXPECT_EQ(out, Bytes{});

  CmRej rej;
  rej.message_rejected = 0xfc;
  rej.reject_info_length = 0x80;
  rej.reason = static_cast<CmRejReason>(0);
  out = filled(0xEE);
  rej.pack(out);
  EXPECT_EQ(out, Bytes{});
}

TEST(CmMessages, RejReasonCodes) {
  EXPECT_EQ(static_cast<int>(CmRejReason::kNoQp), 1);
  EXPECT_EQ(static_cast<int>(CmRejReason::kNoEec), 2);
  EXPECT_EQ(static_cast<int>(CmRejReason::kNoResources), 3);
  EXPECT_EQ(static_cast<int>(CmRejReason::kTimeout), 4);
  EXPECT_EQ(static_cast<int>(CmRejReason::kUnsupportedRequest), 5);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidCommId), 6);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidCommInstance), 7);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidServiceId), 8);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidTransportType), 9);
  EXPECT_EQ(static_cast<int>(CmRejReason::kStaleConnection), 10);
  EXPECT_EQ(static_cast<int>(CmRejReason::kRdcNotExist), 11);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidGid), 12);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidLid), 13);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidSl), 14);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidTrafficClass), 15);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidHopLimit), 16);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidPacketRate), 17);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltGid), 18);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltLid), 19);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltSl), 20);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltTrafficClass), 21);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltHopLimit), 22);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltPacketRate), 23);
  EXPECT_EQ(static_cast<int>(CmRejReason::kPortCmRedirect), 24);
  EXPECT_EQ(static_cast<int>(CmRejReason::kPortRedirect), 25);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidPathMtu), 26);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInsufficientResponderResources), 27);
  EXPECT_EQ(static_cast<int>(CmRejReason::kConsumerReject), 28);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidRnrRetry), 29);
  EXPECT_EQ(static_cast<int>(CmRejReason::kDuplicateLocalCommId), 30);
  EXPECT_EQ(static_cast<int>(CmRejReason::kUnsupportedClassVersion), 31);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidFlowLabel), 32);
  EXPECT_EQ(static_cast<int>(CmRejReason::kInvalidAltFlowLabel), 33);
  EXPECT_EQ(static_cast<int>(CmRejReason::kVendorOptionNotSupported), 35);
}

// The common header of a whole CM MAD, and what cm_message refuses.
TEST(CmMessages, WholeMadHeader) {
  CmDreq m;
  m.local_comm_id = 0x11223344;
  const CmMad b = make_cm_mad(0x0102030405060708ull, m, 0xa1b2c3d4);
  const std::array<uint8_t, 24> header = {
      0x01, 0x07, 0x02, 0x03,  // BaseVersion, MgmtClass CM, ClassVersion 2, Method Send
      0x00, 0x00, 0x00, 0x00,  // Status, ClassSpecific
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // TID
      0x00, 0x15, 0x00, 0x00,  // AttributeID DREQ, reserved
      0xa1, 0xb2, 0xc3, 0xd4,  // AttributeModifier
  };
  for (std::size_t i = 0; i < header.size(); ++i) EXPECT_EQ(b[i], header[i]) << "MAD byte " << i;
  EXPECT_EQ(b[24], 0x11);
  EXPECT_EQ(b[27], 0x44);
  EXPECT_EQ(make_cm_mad(1, m)[23], 0);  // AttributeModifier 0 by default

  const std::optional<wire::MadHeader> h = cm_header(b);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->tid, 0x0102030405060708ull);
  EXPECT_EQ(h->attr_id, cm_attr::kDreq);
  EXPECT_EQ(h->attr_mod, 0xa1b2c3d4u);

  EXPECT_FALSE(cm_message<CmDrep>(b).has_value());  // another attribute
  EXPECT_FALSE(cm_message<CmDreq>(std::span<const uint8_t>(b).first(100)).has_value());
  CmMad other = b;
  other[1] = 0x03;  // SA, not CM
  EXPECT_FALSE(cm_message<CmDreq>(other).has_value());
  other = b;
  other[2] = 0x01;  // ClassVersion 1
  EXPECT_FALSE(cm_message<CmDreq>(other).has_value());
  other = b;
  other[0] = 0x02;  // BaseVersion 2
  EXPECT_FALSE(cm_header(other).has_value());
  // SIDR goes through the same helpers.
  SidrReq s;
  s.request_id = 0x55667788;
  const std::optional<SidrReq> sidr = cm_message<SidrReq>(make_cm_mad(9, s));
  ASSERT_TRUE(sidr.has_value());
  EXPECT_EQ(sidr->request_id, 0x55667788u);
}

}  // namespace
}  // namespace ibfab::mad
