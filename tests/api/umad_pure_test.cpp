// libibumad's calls that do not touch the fabric (api/umad), checked against
// the facts of shared/reference/RDMA-CORE-ABI.md section 5 and, where
// rdma-core's libibumad.so.3 is installed, against that library itself.
#include <endian.h>
#include <infiniband/umad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_str.h>
#include <infiniband/umad_types.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "api/umad/umad_state.h"
#include "tests/api/system_library.h"

namespace {

// A umad buffer: the 64-byte header and a 256-byte MAD, filled with `fill`.
struct Buffer {
  alignas(8) std::uint8_t raw[64 + 256];
  explicit Buffer(std::uint8_t fill = 0xAA) { std::memset(raw, fill, sizeof raw); }
  ib_user_mad* mad() { return reinterpret_cast<ib_user_mad*>(raw); }
  std::vector<std::uint8_t> at(std::size_t offset, std::size_t n) const {
    return {raw + offset, raw + offset + n};
  }
};

// Offsets in struct ib_user_mad (RDMA-CORE-ABI.md section 5).
constexpr std::size_t kQpn = 20, kQkey = 24, kLid = 28, kSl = 30, kPathBits = 31,
                      kGrhPresent = 32, kGidIndex = 33, kHopLimit = 34, kTrafficClass = 35,
                      kGid = 36, kFlowLabel = 52, kPkeyIndex = 56;

static_assert(offsetof(ib_user_mad, addr) == kQpn && offsetof(ib_user_mad, data) == 64);
static_assert(sizeof(ib_mad_addr) == 44 && offsetof(ib_mad_addr, pkey_index) == kPkeyIndex - kQpn);

// A GRH source as umad_set_grh takes it: flow_label in host order.
ib_mad_addr grh_source() {
  ib_mad_addr a;
  std::memset(&a, 0x11, sizeof a);
  for (std::uint8_t i = 0; i < 16; ++i) a.gid[i] = i;
  a.flow_label = 0x12345;
  a.hop_limit = 64;
  a.traffic_class = 7;
  a.gid_index = 9;
  a.grh_present = 0;
  return a;
}

// Must run before anything calls note_port_opened(): gtest runs the tests of
// this file in order, and CTest runs each in a process of its own.
TEST(UmadHeader, OldLayoutUntilAPortIsOpenedThenNewLayout) {
  if (ibfab::umad::port_opened()) GTEST_SKIP() << "needs a process where no port was opened yet";
  Buffer buf;
  EXPECT_EQ(umad_size(), 56u);
  EXPECT_EQ(umad_get_mad(buf.raw), buf.raw + 56);  // &addr.pkey_index
  buf.mad()->addr.pkey_index = 5;
  EXPECT_EQ(umad_get_pkey(buf.raw), 0);
  EXPECT_EQ(umad_set_pkey(buf.raw, 3), 0);
  EXPECT_EQ(buf.mad()->addr.pkey_index, 5) << "old header: umad_set_pkey writes nothing";

  ibfab::umad::note_port_opened();
  ibfab::umad::note_port_opened();  // idempotent
  EXPECT_TRUE(ibfab::umad::port_opened());
  EXPECT_EQ(umad_size(), 64u);
  EXPECT_EQ(umad_get_mad(buf.raw), buf.mad()->data);
  EXPECT_EQ(umad_get_pkey(buf.raw), 5);
  EXPECT_EQ(umad_set_pkey(buf.raw, 0x0102), 0);
  EXPECT_EQ(buf.mad()->addr.pkey_index, 0x0102) << "pkey_index is host order";
  EXPECT_EQ(umad_get_pkey(buf.raw), 0x0102);
}

TEST(UmadHeader, PkeyIndexTouchesOnlyItsTwoBytes) {
  ibfab::umad::note_port_opened();
  Buffer buf, before;
  EXPECT_EQ(umad_set_pkey(buf.raw, 0xBEEF), 0);
  EXPECT_EQ(umad_get_pkey(buf.raw), 0xBEEF);
  std::memcpy(buf.raw + kPkeyIndex, before.raw + kPkeyIndex, 2);
  EXPECT_EQ(buf.at(0, sizeof buf.raw), before.at(0, sizeof buf.raw));
}

TEST(UmadHeader, StatusAndAddressAccessors) {
  Buffer buf;
  buf.mad()->status = 110;  // ETIMEDOUT, as the kernel reports an unanswered request
  EXPECT_EQ(umad_status(buf.raw), 110);
  EXPECT_EQ(umad_get_mad_addr(buf.raw), &buf.mad()->addr);
}

TEST(UmadAddr, SetAddrTakesHostOrder) {
  Buffer buf, before;
  EXPECT_EQ(umad_set_addr(buf.raw, 0x1234, 0x56789A, 5, static_cast<int>(0x80010000u)), 0);
  EXPECT_EQ(buf.at(kQpn, 4), (std::vector<std::uint8_t>{0x00, 0x56, 0x78, 0x9A}));
  EXPECT_EQ(buf.at(kQkey, 4), (std::vector<std::uint8_t>{0x80, 0x01, 0x00, 0x00}));
  EXPECT_EQ(buf.at(kLid, 2), (std::vector<std::uint8_t>{0x12, 0x34}));
  EXPECT_EQ(buf.raw[kSl], 5);
  // Nothing else changes: path_bits, the GRH, pkey_index, the MAD.
  EXPECT_EQ(buf.at(0, kQpn), before.at(0, kQpn));
  EXPECT_EQ(buf.at(kPathBits, sizeof buf.raw - kPathBits), before.at(kPathBits, sizeof buf.raw - kPathBits));
}

TEST(UmadAddr, SetAddrNetCopiesNetworkOrder) {
  Buffer host, net;
  umad_set_addr(host.raw, 0x1234, 0x56789A, 5, static_cast<int>(0x80010000u));
  EXPECT_EQ(umad_set_addr_net(net.raw, htobe16(0x1234), htobe32(0x56789A), 5, htobe32(0x80010000u)), 0);
  EXPECT_EQ(net.at(0, sizeof net.raw), host.at(0, sizeof host.raw));

  // Values are stored as given, without conversion.
  Buffer raw;
  umad_set_addr_net(raw.raw, 0x1234, 0x56789A, 5, 0x80010000u);
  std::uint32_t qpn;
  std::uint16_t lid;
  std::memcpy(&qpn, raw.raw + kQpn, 4);
  std::memcpy(&lid, raw.raw + kLid, 2);
  EXPECT_EQ(qpn, 0x56789Au);
  EXPECT_EQ(lid, 0x1234u);
}

TEST(UmadAddr, SetGrhCopiesGidFlowLabelHopLimitTrafficClassButNotGidIndex) {
  Buffer buf, before;
  ib_mad_addr from = grh_source();
  EXPECT_EQ(umad_set_grh(buf.raw, &from), 0);
  EXPECT_EQ(buf.raw[kGrhPresent], 1);
  EXPECT_EQ(buf.raw[kGidIndex], 0xAA) << "gid_index is not copied";
  EXPECT_EQ(buf.raw[kHopLimit], 64);
  EXPECT_EQ(buf.raw[kTrafficClass], 7);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(buf.raw[kGid + i], i);
  EXPECT_EQ(buf.at(kFlowLabel, 4), (std::vector<std::uint8_t>{0x00, 0x01, 0x23, 0x45}))
      << "flow_label is converted from host to network order";
  EXPECT_EQ(buf.at(0, kGrhPresent), before.at(0, kGrhPresent));
  EXPECT_EQ(buf.at(kPkeyIndex, sizeof buf.raw - kPkeyIndex), before.at(kPkeyIndex, sizeof buf.raw - kPkeyIndex));
}

TEST(UmadAddr, SetGrhNullClearsGrhPresentOnly) {
  Buffer buf, before;
  EXPECT_EQ(umad_set_grh(buf.raw, nullptr), 0);
  EXPECT_EQ(buf.raw[kGrhPresent], 0);
  buf.raw[kGrhPresent] = 0xAA;
  EXPECT_EQ(buf.at(0, sizeof buf.raw), before.at(0, sizeof buf.raw));
}

TEST(UmadLibrary, InitDoneAndDebugLevel) {
  EXPECT_EQ(umad_init(), 0);
  EXPECT_EQ(umad_done(), 0);
  EXPECT_EQ(umad_debug(-1), 0) << "silent by default";
  EXPECT_EQ(umad_debug(3), 3);
  EXPECT_EQ(umad_debug(-1), 3) << "a negative level only queries";
  EXPECT_EQ(ibfab::umad::debug_level(), 3);
  EXPECT_EQ(umad_debug(0), 0);
}

TEST(UmadLibrary, DebugLevelTurnsTracesOn) {
  Buffer buf;
  testing::internal::CaptureStderr();
  umad_set_addr(buf.raw, 1, 1, 0, 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");

  umad_debug(1);
  testing::internal::CaptureStderr();
  umad_set_addr(buf.raw, 0x1234, 1, 0, 0);
  const std::string trace = testing::internal::GetCapturedStderr();
  umad_debug(0);
  EXPECT_EQ(trace.rfind("ibwarn: [" + std::to_string(getpid()) + "] umad_set_addr: ", 0), 0u) << trace;
  EXPECT_NE(trace.find("dlid 4660"), std::string::npos) << trace;
}

TEST(UmadDump, DumpShowsHeaderAndAddressFields) {
  ibfab::umad::note_port_opened();
  Buffer buf(0);
  ib_user_mad* mad = buf.mad();
  mad->agent_id = 7;
  mad->status = 110;
  mad->timeout_ms = 100;
  umad_set_addr(buf.raw, 0x1234, 0x56789A, 5, static_cast<int>(0x80010000u));
  ib_mad_addr from = grh_source();
  umad_set_grh(buf.raw, &from);
  umad_set_pkey(buf.raw, 3);

  testing::internal::CaptureStderr();
  umad_dump(buf.raw);
  const std::string out = testing::internal::GetCapturedStderr();
  char flow_label[32];  // shown as the raw big-endian word, as rdma-core does
  std::snprintf(flow_label, sizeof flow_label, "flow_label 0x%x ", mad->addr.flow_label);
  const std::string pid = "ibwarn: [" + std::to_string(getpid()) + "] ";
  for (const std::string& part :
       {pid + "umad_dump: agent id 7 status 6e timeout 100\n",
        pid + "umad_addr_dump: qpn 5666970 qkey 0x80010000 lid 4660 sl 5\n",
        std::string("grh_present 1 gid_index 0 hop_limit 64 traffic_class 7 ") + flow_label +
            "pkey_index 0x3\n",
        std::string("Gid 0x000102030405060708090a0b0c0d0e0f\n")})
    EXPECT_NE(out.find(part), std::string::npos) << "missing: " << part << "in:\n" << out;
}

// Checks name(value) for each {value, expected name}.
struct Named {
  unsigned value;
  const char* name;
};
template <class NameOf>
void expect_names(NameOf name_of, std::initializer_list<Named> cases) {
  for (const Named& c : cases) EXPECT_STREQ(name_of(c.value), c.name) << "value 0x" << std::hex << c.value;
}

TEST(UmadStrings, ClassNames) {
  expect_names([](unsigned c) { return umad_class_str(static_cast<std::uint8_t>(c)); },
               {{UMAD_CLASS_SUBN_LID_ROUTED, "Subn"},
                {UMAD_CLASS_SUBN_DIRECTED_ROUTE, "Subn"},
                {UMAD_CLASS_SUBN_ADM, "SubnAdm"},
                {UMAD_CLASS_PERF_MGMT, "Perf"},
                {UMAD_CLASS_CM, "ComMgt"},
                {UMAD_CLASS_DEVICE_ADM, "DevAdm"},
                {UMAD_CLASS_CONG_MGMT, "CongestionManagment"},  // sic
                {0x09, "Vendor"},
                {0x0F, "Vendor"},
                {0x30, "Vendor"},
                {0x4F, "Vendor"},
                {0x13, "Application"},
                {0x2F, "Application"},
                {0x00, "<unknown>"},
                {0x02, "<unknown>"},
                {0x50, "<unknown>"},
                {0x80, "<unknown>"},
                {0x82, "<unknown>"},
                {0xFF, "<unknown>"}});
}

TEST(UmadStrings, MethodNames) {
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_SUBN_LID_ROUTED, UMAD_METHOD_GET), "Get");
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_PERF_MGMT, UMAD_METHOD_GET_RESP), "GetResp");
  EXPECT_STREQ(umad_method_str(0x50, UMAD_METHOD_TRAP_REPRESS), "TrapRepress");
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_SUBN_ADM, UMAD_SA_METHOD_GET_TABLE), "GetTable");
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_SUBN_ADM, UMAD_SA_METHOD_GET_TABLE_RESP), "GetTableResp");
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_SUBN_ADM, UMAD_METHOD_REPORT_RESP), "ReportResp");
  // SA methods belong to SubnAdm only; rdma-core spells this "unknown" without '>'.
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_SUBN_LID_ROUTED, UMAD_SA_METHOD_GET_TABLE), "<unknown");
  EXPECT_STREQ(umad_method_str(UMAD_CLASS_SUBN_ADM, 0x85), "<unknown");
}

TEST(UmadStrings, AttributeNamesTakeNetworkOrder) {
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_LID_ROUTED, htobe16(UMAD_SM_ATTR_PORT_INFO)), "PortInfo");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_DIRECTED_ROUTE, htobe16(UMAD_SM_ATTR_NODE_INFO)), "NodeInfo");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_ADM, htobe16(UMAD_SA_ATTR_MCMEMBER_REC)), "MCMemberRecord");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_ADM, htobe16(UMAD_SA_ATTR_INFORM_INFO_REC)), "InformInfoRecord");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_CM, htobe16(0x0010)), "ConnectRequest");
  // Common attributes, for every class.
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_PERF_MGMT, htobe16(UMAD_ATTR_CLASS_PORT_INFO)), "Class Port Info");
  EXPECT_STREQ(umad_attribute_str(0x50, htobe16(UMAD_ATTR_NOTICE)), "Notice");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_ADM, htobe16(UMAD_ATTR_INFORM_INFO)), "Inform Info");
  // Class-specific names stay in their class; byte order matters.
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_ADM, htobe16(UMAD_SM_ATTR_NODE_DESC)), "<unknown>");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_PERF_MGMT, htobe16(UMAD_SM_ATTR_PORT_INFO)), "<unknown>");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_LID_ROUTED, htobe16(0x1500)), "<unknown>");
  EXPECT_STREQ(umad_attribute_str(UMAD_CLASS_SUBN_LID_ROUTED, htobe16(UMAD_SM_ATTR_MLNX_EXT_PORT_INFO)), "<unknown>");
}

TEST(UmadStrings, CommonStatusTakesNetworkOrder) {
  expect_names([](unsigned s) { return umad_common_mad_status_str(htobe16(static_cast<std::uint16_t>(s))); },
               {{UMAD_STATUS_SUCCESS, "Success"},
                {UMAD_STATUS_BUSY, "Busy"},
                {UMAD_STATUS_REDIRECT, "Redirection required"},
                {UMAD_STATUS_BAD_VERSION, "Bad Version"},
                {UMAD_STATUS_METHOD_NOT_SUPPORTED, "Method not supported"},
                {UMAD_STATUS_ATTR_NOT_SUPPORTED, "Method/Attribute combo not supported"},
                {UMAD_STATUS_INVALID_ATTR_VALUE, "Invalid attribute/modifier field"},
                // Busy wins over redirect, redirect over the invalid-field code.
                {UMAD_STATUS_BUSY | UMAD_STATUS_REDIRECT | UMAD_STATUS_BAD_VERSION, "Busy"},
                {UMAD_STATUS_REDIRECT | UMAD_STATUS_INVALID_ATTR_VALUE, "Redirection required"},
                // Reserved invalid-field codes 4-6 and the class-specific byte read "Success".
                {4 << 2, "Success"},
                {6 << 2, "Success"},
                {0xFF00, "Success"},
                {0xFF00 | UMAD_STATUS_ATTR_NOT_SUPPORTED, "Method/Attribute combo not supported"}});
  // In host order on a little-endian machine, Busy (0x0001) reads 0x0100.
  if (htobe16(1) != 1) EXPECT_STREQ(umad_common_mad_status_str(UMAD_STATUS_BUSY), "Success");
}

TEST(UmadStrings, SaStatusIsTheHighByteInNetworkOrder) {
  expect_names([](unsigned s) { return umad_sa_mad_status_str(htobe16(static_cast<std::uint16_t>(s))); },
               {{UMAD_SA_STATUS_SUCCESS << 8, "Success"},
                {UMAD_SA_STATUS_NO_RESOURCES << 8, "No Resources"},
                {UMAD_SA_STATUS_REQ_INVALID << 8, "Request Invalid"},
                {UMAD_SA_STATUS_NO_RECORDS << 8, "No Records"},
                {UMAD_SA_STATUS_TOO_MANY_RECORDS << 8, "Too Many Records"},
                {UMAD_SA_STATUS_INVALID_GID << 8, "Invalid GID"},
                {UMAD_SA_STATUS_INSUF_COMPS << 8, "Insufficient Components"},
                {UMAD_SA_STATUS_REQ_DENIED << 8, "Request Denied"},
                {UMAD_SA_STATUS_PRI_SUGGESTED << 8, "Priority Suggested"},
                {0x0900, "Undefined Error"},
                {0xFF00, "Undefined Error"},
                {0x03FF, "No Records"},  // the low byte (common status) is ignored
                {0x0003, "Success"}});
}

// rdma-core's libibumad.so.3 as an oracle, loaded privately next to ours.
class UmadOracle : public ibfab::testing::SystemLibrary {
 protected:
  UmadOracle() : SystemLibrary(IBFAB_SYSTEM_IBUMAD) {}
};

TEST_F(UmadOracle, ClassAndMethodNamesMatchForEveryValue) {
  auto class_str = REAL(umad_class_str);
  auto method_str = REAL(umad_method_str);
  for (unsigned c = 0; c < 256; ++c) {
    const auto cls = static_cast<std::uint8_t>(c);
    ASSERT_STREQ(umad_class_str(cls), class_str(cls)) << c;
    for (unsigned m = 0; m < 256; ++m)
      ASSERT_STREQ(umad_method_str(cls, static_cast<std::uint8_t>(m)), method_str(cls, static_cast<std::uint8_t>(m)))
          << c << " " << m;
  }
}

TEST_F(UmadOracle, AttributeNamesMatch) {
  auto attribute_str = REAL(umad_attribute_str);
  // Every attribute id of the classes that have names of their own and of a
  // class that has none; the low and vendor ids of every class.
  for (unsigned c = 0; c < 256; ++c) {
    const auto cls = static_cast<std::uint8_t>(c);
    const bool all = c == 0x01 || c == 0x81 || c == 0x03 || c == 0x07 || c == 0x04;
    for (unsigned id = 0; id < 0x10000; ++id) {
      if (!all && id >= 0x200 && id < 0xFF00) continue;
      const __be16 be = htobe16(static_cast<std::uint16_t>(id));
      ASSERT_STREQ(umad_attribute_str(cls, be), attribute_str(cls, be)) << c << " " << id;
    }
  }
}

TEST_F(UmadOracle, StatusNamesMatchForEveryValue) {
  auto common = REAL(umad_common_mad_status_str);
  auto sa = REAL(umad_sa_mad_status_str);
  for (unsigned s = 0; s < 0x10000; ++s) {
    const auto status = static_cast<__be16>(s);
    ASSERT_STREQ(umad_common_mad_status_str(status), common(status)) << s;
    ASSERT_STREQ(umad_sa_mad_status_str(status), sa(status)) << s;
  }
}

TEST_F(UmadOracle, AddressSettersWriteTheSameBytes) {
  auto set_addr = REAL(umad_set_addr);
  auto set_addr_net = REAL(umad_set_addr_net);
  auto set_grh = REAL(umad_set_grh);
  ib_mad_addr from = grh_source();
  Buffer ours, theirs;
  umad_set_addr(ours.raw, 0xC001, 0x00ABCDEF, 15, 0x12345678);
  set_addr(theirs.raw, 0xC001, 0x00ABCDEF, 15, 0x12345678);
  EXPECT_EQ(ours.at(0, sizeof ours.raw), theirs.at(0, sizeof theirs.raw));
  umad_set_addr_net(ours.raw, 0x0102, 0x03040506, 3, 0x0708090A);
  set_addr_net(theirs.raw, 0x0102, 0x03040506, 3, 0x0708090A);
  EXPECT_EQ(ours.at(0, sizeof ours.raw), theirs.at(0, sizeof theirs.raw));
  umad_set_grh(ours.raw, &from);
  set_grh(theirs.raw, &from);
  EXPECT_EQ(ours.at(0, sizeof ours.raw), theirs.at(0, sizeof theirs.raw));
  umad_set_grh(ours.raw, nullptr);
  set_grh(theirs.raw, nullptr);
  EXPECT_EQ(ours.at(0, sizeof ours.raw), theirs.at(0, sizeof theirs.raw));
}

TEST_F(UmadOracle, DumpsAreTheSame) {
  auto dump = REAL(umad_dump);
  Buffer buf(0x5C);
  ib_mad_addr from = grh_source();
  umad_set_addr(buf.raw, 0xC001, 0x00ABCDEF, 15, 0x12345678);
  umad_set_grh(buf.raw, &from);
  testing::internal::CaptureStderr();
  umad_dump(buf.raw);
  const std::string ours = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  dump(buf.raw);
  EXPECT_EQ(ours, testing::internal::GetCapturedStderr());
}

}  // namespace
