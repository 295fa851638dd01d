// umad_register2(3) (seeds/003_0ebb768526f543b0.txt), sentence by
// sentence, through the built libibumad.so.3 on an in-process fabric
// (IBFAB_TOPOLOGY=fat-tree:2:4, this process on H3, the built-in SM on H1).
#include <gtest/gtest.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fabric/wire/byte_cursor.h"
#include "tests/api/embedded_port.h"

namespace {

class Register2 : public ibfab::testing::EmbeddedPort {
 protected:
  // A GetTable of every NodeRecord (14 of them: several RMPP segments).
  void ask_node_records(uint32_t agent) {
    std::vector<uint8_t> u(umad_size() + 256, 0);
    umad_set_addr(u.data(), sm_lid_, 1, 0, 0x80010000);
    auto* m = static_cast<uint8_t*>(umad_get_mad(u.data()));
    m[0] = 1;
    m[1] = 0x03;
    m[2] = 2;
    m[3] = 0x12;  // GetTable
    ibfab::wire::store_be64(&m[8], 0x4242);
    ibfab::wire::store_be16(&m[16], 0x0011);  // NodeRecord
    ASSERT_EQ(umad_send(fd_, static_cast<int>(agent), u.data(), 256, 2000, 0), 0);
  }
};

// "umad_register2() registers for a MAD agent using the provided
// registration attributes"; "returns 0 on success"; "agent_id returned on
// success ... returned in the umad header on recv and specified in
// umad_send when sending"; "rmpp_version: if the class supports RMPP and
// kernel RMPP is enabled (the default), indicate which rmpp_version to use":
// the 14 NodeRecords arrive as one coalesced message.
TEST_F(Register2, RegistersAndTheAgentIdTravelsWithItsMads) {
  umad_reg_attr attr{};
  attr.mgmt_class = 0x03;
  attr.mgmt_class_version = 2;
  attr.rmpp_version = 1;
  uint32_t agent = 99;
  ASSERT_EQ(umad_register2(fd_, &attr, &agent), 0);
  EXPECT_EQ(agent, 0u);
  ask_node_records(agent);
  std::vector<uint8_t> u(umad_size() + 8192);
  int len = 8192;
  ASSERT_EQ(umad_recv(fd_, u.data(), &len, 5000), static_cast<int>(agent));
  EXPECT_EQ(static_cast<ib_user_mad*>(static_cast<void*>(u.data()))->agent_id, agent);
  const auto* m = static_cast<const uint8_t*>(umad_get_mad(u.data()));
  EXPECT_EQ(m[3], 0x92);
  const int records = (len - 56) / (ibfab::wire::load_be16(&m[44]) * 8);
  EXPECT_EQ(records, 14) << "every NodeRecord in one message";
}

// "flags: If a flag specified is not supported by the kernel, an error is
// returned, and the supported flags are returned in this field" (rdma-core
// 44 returns them as 0: COMPATIBILITY.md); "+ERRNO on failure".
TEST_F(Register2, AnUnsupportedFlagIsAnErrorWithTheFlagsWrittenBack) {
  umad_reg_attr attr{};
  attr.mgmt_class = 0x03;
  attr.mgmt_class_version = 2;
  attr.flags = 1u << 7;
  uint32_t agent = 0;
  EXPECT_EQ(umad_register2(fd_, &attr, &agent), EINVAL) << "a positive errno";
  EXPECT_EQ(attr.flags, 0u);
}

// "UMAD_USER_RMPP -- flag to indicate the kernel should not process RMPP
// packets. All RMPP packets will be treated like individual MADs."
TEST_F(Register2, UserRmppGetsTheSegmentsOneByOne) {
  umad_reg_attr attr{};
  attr.mgmt_class = 0x03;
  attr.mgmt_class_version = 2;
  attr.rmpp_version = 1;
  attr.flags = UMAD_USER_RMPP;
  uint32_t agent = 0;
  ASSERT_EQ(umad_register2(fd_, &attr, &agent), 0);
  ask_node_records(agent);
  std::vector<uint8_t> u(umad_size() + 8192);
  int len = 8192;
  ASSERT_GE(umad_recv(fd_, u.data(), &len, 5000), 0);
  const auto* m = static_cast<const uint8_t*>(umad_get_mad(u.data()));
  EXPECT_EQ(len, 256) << "one segment, not the whole table";
  EXPECT_EQ(m[26] & 0x3, 0x3) << "RMPP Active and First: the first segment as it came";
}

// "method_mask ... Setting this array to 0 will result in the agent only
// receiving response MADs for which a request was sent": two agents of one
// class both register when neither takes unsolicited methods, and one that
// takes Gets excludes a second taker.
TEST_F(Register2, AZeroMethodMaskTakesOnlyResponses) {
  umad_reg_attr attr{};
  attr.mgmt_class = 0x09;
  attr.mgmt_class_version = 1;
  uint32_t a = 0, b = 0;
  EXPECT_EQ(umad_register2(fd_, &attr, &a), 0);
  EXPECT_EQ(umad_register2(fd_, &attr, &b), 0);
  EXPECT_NE(a, b);
  attr.method_mask[0] = 1u << 1;  // unsolicited Gets
  uint32_t c = 0, d = 0;
  EXPECT_EQ(umad_register2(fd_, &attr, &c), 0);
  EXPECT_NE(umad_register2(fd_, &attr, &d), 0) << "Gets of class 0x09 have a taker already";
}

// "oui: The oui (in host order) to use for vendor classes 0x30 - 0x4f.
// Otherwise ignored."
TEST_F(Register2, VendorClassesNeedAnOuiOthersIgnoreIt) {
  umad_reg_attr attr{};
  attr.mgmt_class = 0x30;
  attr.mgmt_class_version = 1;
  uint32_t agent = 0;
  EXPECT_EQ(umad_register2(fd_, &attr, &agent), EINVAL) << "no OUI";
  attr.oui = 0x1000000;
  EXPECT_EQ(umad_register2(fd_, &attr, &agent), EINVAL) << "more than 24 bits";
  attr.oui = 0x0002c9;
  EXPECT_EQ(umad_register2(fd_, &attr, &agent), 0);
  attr.mgmt_class = 0x04;
  attr.oui = 0x1000000;  // ignored outside 0x30-0x4f
  EXPECT_EQ(umad_register2(fd_, &attr, &agent), 0);
}

}  // namespace
