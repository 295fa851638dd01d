// SIDR_REQ and SIDR_REP (fabric/mad/cm_sidr.h): byte offsets pinned by hand
// from the IBTA layout (as Linux's ibta_vol1_c12.h also states it), whole
// CM MADs, and round trips.
#include "fabric/mad/cm_sidr.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace ibfab::mad {
namespace {

// Every byte of `b` in [from, to) equals `v`.
bool all_equal(const CmMad& b, std::size_t from, std::size_t to, uint8_t v) {
  for (std::size_t i = from; i < to; ++i)
    if (b[i] != v) return false;
  return true;
}

SidrReq sample_req() {
  SidrReq m;
  m.request_id = 0x11223344;
  m.p_key = 0xffff;
  m.service_id = 0x0000000001113456ull;  // RDMA_PS_UDP (0x0111) port 0x3456
  for (std::size_t i = 0; i < m.private_data.size(); ++i) m.private_data[i] = static_cast<uint8_t>(i + 1);
  return m;
}

SidrRep sample_rep() {
  SidrRep m;
  m.request_id = 0xa1b2c3d4;
  m.status = sidr_status::kRedirect;
  m.additional_info_length = 72;
  m.qpn = 0x00abcdef;
  m.service_id = 0x0102030405060708ull;
  m.q_key = 0x01234567;
  m.additional_info.fill(0x5a);
  for (std::size_t i = 0; i < m.private_data.size(); ++i) m.private_data[i] = static_cast<uint8_t>(0x80 + i);
  return m;
}

TEST(CmSidr, Sizes) {
  EXPECT_EQ(kCmDataSize, 232u);
  EXPECT_EQ(SidrReq::kPrivateDataOffset + SidrReq::kPrivateDataSize, 232u);
  EXPECT_EQ(SidrRep::kAdditionalInfoOffset + SidrRep::kAdditionalInfoSize, SidrRep::kPrivateDataOffset);
  EXPECT_EQ(SidrRep::kPrivateDataOffset + SidrRep::kPrivateDataSize, 232u);
  EXPECT_EQ(SidrReq::kAttributeId, 0x0017);
  EXPECT_EQ(SidrRep::kAttributeId, 0x0018);
  EXPECT_EQ(sidr_status::kValid, 0);
  EXPECT_EQ(sidr_status::kSidNotSupported, 1);
  EXPECT_EQ(sidr_status::kRejected, 2);
  EXPECT_EQ(sidr_status::kNoQp, 3);
  EXPECT_EQ(sidr_status::kRedirect, 4);
  EXPECT_EQ(sidr_status::kVersionNotSupported, 5);
}

TEST(CmSidr, WholeSidrReqMadBytes) {
  const CmMad b = make_cm_mad(0x0102030405060708ull, sample_req());
  // Common MAD header.
  EXPECT_EQ(b[0], 0x01);  // BaseVersion
  EXPECT_EQ(b[1], 0x07);  // MgmtClass: CM
  EXPECT_EQ(b[2], 0x02);  // ClassVersion
  EXPECT_EQ(b[3], 0x03);  // Method: Send
  EXPECT_TRUE(all_equal(b, 4, 8, 0));  // Status, ClassSpecific
  EXPECT_EQ(b[8], 0x01);  // TID: bytes 8-15
  EXPECT_EQ(b[15], 0x08);
  EXPECT_EQ(b[16], 0x00);  // AttributeID 0x0017
  EXPECT_EQ(b[17], 0x17);
  EXPECT_TRUE(all_equal(b, 18, 24, 0));  // reserved, AttributeModifier
  // The message, at MAD offset 24.
  EXPECT_EQ(b[24], 0x11);  // RequestID: 24-27
  EXPECT_EQ(b[27], 0x44);
  EXPECT_EQ(b[28], 0xff);  // P_Key: 28-29
  EXPECT_EQ(b[29], 0xff);
  EXPECT_TRUE(all_equal(b, 30, 32, 0));  // reserved
  EXPECT_TRUE(all_equal(b, 32, 36, 0));  // ServiceID: 32-39
  EXPECT_EQ(b[36], 0x01);
  EXPECT_EQ(b[37], 0x11);
  EXPECT_EQ(b[38], 0x34);
  EXPECT_EQ(b[39], 0x56);
  EXPECT_EQ(b[40], 1);  // PrivateData: 40-255
  EXPECT_EQ(b[255], 216);
}

TEST(CmSidr, WholeSidrRepMadBytes) {
  const CmMad b = make_cm_mad(7, sample_rep());
  EXPECT_EQ(b[1], 0x07);
  EXPECT_EQ(b[3], 0x03);
  EXPECT_EQ(b[15], 7);
  EXPECT_EQ(b[17], 0x18);  // AttributeID 0x0018
  EXPECT_EQ(b[24], 0xa1);  // RequestID: 24-27
  EXPECT_EQ(b[27], 0xd4);
  EXPECT_EQ(b[28], 4);     // Status
  EXPECT_EQ(b[29], 72);    // AdditionalInfoLength
  EXPECT_TRUE(all_equal(b, 30, 32, 0));  // reserved (IBTA 1.4: VendorID 23:8)
  EXPECT_EQ(b[32], 0xab);  // QPN: 32-34
  EXPECT_EQ(b[33], 0xcd);
  EXPECT_EQ(b[34], 0xef);
  EXPECT_EQ(b[35], 0);     // reserved (IBTA 1.4: VendorID 7:0)
  EXPECT_EQ(b[36], 0x01);  // ServiceID: 36-43
  EXPECT_EQ(b[43], 0x08);
  EXPECT_EQ(b[44], 0x01);  // Q_Key: 44-47
  EXPECT_EQ(b[47], 0x67);
  EXPECT_TRUE(all_equal(b, 48, 120, 0x5a));  // AdditionalInfo: 48-119
  EXPECT_EQ(b[120], 0x80);                   // PrivateData: 120-255
  EXPECT_EQ(b[255], static_cast<uint8_t>(0x80 + 135));
}

TEST(CmSidr, QpnIsMaskedTo24Bits) {
  SidrRep m = sample_rep();
  m.qpn = 0xff123456;
  const CmMad b = make_cm_mad(1, m);
  EXPECT_EQ(b[32], 0x12);
  EXPECT_EQ(b[35], 0);
  EXPECT_EQ(SidrRep::unpack(cm_data(b)).qpn, 0x123456u);
}

TEST(CmSidr, RoundTrips) {
  const CmMad req = make_cm_mad(1, sample_req());
  EXPECT_EQ(SidrReq::unpack(cm_data(req)), sample_req());
  const CmMad rep = make_cm_mad(1, sample_rep());
  EXPECT_EQ(SidrRep::unpack(cm_data(rep)), sample_rep());
}

TEST(CmSidr, ReservedBytesAreIgnoredOnReading) {
  CmMad req = make_cm_mad(1, sample_req());
  req[30] = req[31] = 0xee;
  EXPECT_EQ(SidrReq::unpack(cm_data(req)), sample_req());
  CmMad rep = make_cm_mad(1, sample_rep());
  rep[30] = rep[31] = rep[35] = 0xee;  // a VendorID, as IBTA 1.4 senders may set
  EXPECT_EQ(SidrRep::unpack(cm_data(rep)), sample_rep());
}

}  // namespace
}  // namespace ibfab::mad
