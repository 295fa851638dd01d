// libibverbs' calls that do not touch the fabric (api/verbs): strings, rate
// conversions, kernel-structure copies, fork bookkeeping, the calls ibfab
// does not model and the provider interface. Checked against rdma-core 44's
// behaviour as written down here and, where its libibverbs.so.1 is
// installed, against that library itself.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "tests/api/system_library.h"

// Exported by libibverbs.so.1 but declared by no installed header (rdma-core
// keeps marshall.h and driver.h private); as api/verbs defines them.
struct ibv_command_buffer;
struct verbs_device_ops;
struct verbs_sysfs_dev;
extern "C" {
void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, ib_uverbs_ah_attr* src);
void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, ib_uverbs_qp_attr* src);
void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, ib_user_path_rec* src);
void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, ibv_sa_path_rec* src);
int ibv_dontfork_range(void* base, std::size_t size);
int ibv_dofork_range(void* base, std::size_t size);
void verbs_register_driver_34(const verbs_device_ops* ops);
ibv_context* verbs_open_device(ibv_device* device, void* private_data);
void* _verbs_init_and_alloc_context(ibv_device* device, int cmd_fd, std::size_t alloc_size,
                                    verbs_context* context_offset, std::uint32_t driver_id);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, ibv_command_buffer* link);
void verbs_init_cq(ibv_cq* cq, ibv_context* context, ibv_comp_channel* channel, void* cq_context);
int ibv_read_ibdev_sysfs_file(char* buf, std::size_t size, verbs_sysfs_dev* sysfs_dev, const char* fnfmt, ...);
void __verbs_log(verbs_context* ctx, std::uint32_t level, const char* fmt, ...);
extern bool verbs_allow_disassociate_destroy;
}

namespace {

// rdma-core's libibverbs.so.1 as an oracle, loaded privately next to ours.
class VerbsOracle : public ibfab::testing::SystemLibrary {
 protected:
  VerbsOracle() : SystemLibrary(IBFAB_SYSTEM_IBVERBS) {}
};

// Every value an enum argument may carry in these tests: each enumerator,
// and the unknown values around them.
constexpr int kFirstValue = -3, kLastValue = 64;

// --- Rates ---------------------------------------------------------------

TEST(VerbsRates, KnownCodes) {
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_2_5_GBPS), 1);
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_120_GBPS), 48);
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_28_GBPS), 11);
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_1200_GBPS), 480);
  EXPECT_EQ(ibv_rate_to_mbps(IBV_RATE_14_GBPS), 14062);
  EXPECT_EQ(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
  EXPECT_EQ(ibv_rate_to_mbps(IBV_RATE_1200_GBPS), 1275000);
  EXPECT_EQ(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
  EXPECT_EQ(mult_to_ibv_rate(20), IBV_RATE_50_GBPS);
  EXPECT_EQ(mbps_to_ibv_rate(25781), IBV_RATE_25_GBPS);
  EXPECT_EQ(mbps_to_ibv_rate(850000), IBV_RATE_800_GBPS);
}

TEST(VerbsRates, UnknownInputs) {
  // FDR/EDR-era rates are no whole multiple of 2.5 Gb/s.
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_14_GBPS), -1);
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_100_GBPS), -1);
  EXPECT_EQ(ibv_rate_to_mult(IBV_RATE_MAX), -1);
  EXPECT_EQ(ibv_rate_to_mult(static_cast<ibv_rate>(99)), -1);
  EXPECT_EQ(ibv_rate_to_mbps(IBV_RATE_MAX), -1);
  EXPECT_EQ(ibv_rate_to_mbps(static_cast<ibv_rate>(-1)), -1);
  for (int mult : {-1, 0, 3, 10, 14, 40, 1000}) EXPECT_EQ(mult_to_ibv_rate(mult), IBV_RATE_MAX) << mult;
  for (int mbps : {-1, 0, 2499, 14000, 14063, 100000, 25000}) EXPECT_EQ(mbps_to_ibv_rate(mbps), IBV_RATE_MAX) << mbps;
}

TEST(VerbsRates, RoundTripEveryCode) {
  for (int code = IBV_RATE_2_5_GBPS; code <= IBV_RATE_1200_GBPS; ++code) {
    const auto rate = static_cast<ibv_rate>(code);
    EXPECT_EQ(mbps_to_ibv_rate(ibv_rate_to_mbps(rate)), rate) << code;
    if (ibv_rate_to_mult(rate) > 0) EXPECT_EQ(mult_to_ibv_rate(ibv_rate_to_mult(rate)), rate) << code;
  }
}

TEST_F(VerbsOracle, RatesMatchForEveryInput) {
  auto to_mult = REAL(ibv_rate_to_mult);
  auto from_mult = REAL(mult_to_ibv_rate);
  auto to_mbps = REAL(ibv_rate_to_mbps);
  auto from_mbps = REAL(mbps_to_ibv_rate);
  for (int code = kFirstValue; code <= kLastValue; ++code) {
    const auto rate = static_cast<ibv_rate>(code);
    ASSERT_EQ(ibv_rate_to_mult(rate), to_mult(rate)) << code;
    ASSERT_EQ(ibv_rate_to_mbps(rate), to_mbps(rate)) << code;
  }
  for (int mult = -10; mult <= 1000; ++mult) ASSERT_EQ(mult_to_ibv_rate(mult), from_mult(mult)) << mult;
  for (int mbps = -10; mbps <= 1'300'000; ++mbps) ASSERT_EQ(mbps_to_ibv_rate(mbps), from_mbps(mbps)) << mbps;
}

// --- Strings -------------------------------------------------------------

TEST(VerbsStrings, AsRdmaCoreSpellsThem) {
  const std::pair<const char*, const char*> names[] = {
      {ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter"},
      {ibv_node_type_str(IBV_NODE_SWITCH), "InfiniBand switch"},
      {ibv_node_type_str(IBV_NODE_UNSPECIFIED), "unspecified"},
      {ibv_port_state_str(IBV_PORT_NOP), "no state change (NOP)"},
      {ibv_port_state_str(IBV_PORT_ACTIVE), "active"},
      {ibv_port_state_str(IBV_PORT_ACTIVE_DEFER), "active defer"},
      {ibv_event_type_str(IBV_EVENT_CQ_ERR), "CQ error"},
      {ibv_event_type_str(IBV_EVENT_PORT_ACTIVE), "port active"},
      {ibv_event_type_str(IBV_EVENT_WQ_FATAL), "WQ fatal"},
      {ibv_wc_status_str(IBV_WC_SUCCESS), "success"},
      {ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error"},
      {ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded"},
      {ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE), "TM software rendezvous"},
      // Values outside each enum.
      {ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown"},
      {ibv_node_type_str(static_cast<ibv_node_type>(0)), "unknown"},
      {ibv_node_type_str(static_cast<ibv_node_type>(IBV_NODE_UNSPECIFIED + 1)), "unknown"},
      {ibv_port_state_str(static_cast<ibv_port_state>(IBV_PORT_ACTIVE_DEFER + 1)), "unknown"},
      {ibv_port_state_str(static_cast<ibv_port_state>(-1)), "unknown"},
      {ibv_event_type_str(static_cast<ibv_event_type>(IBV_EVENT_WQ_FATAL + 1)), "unknown"},
      {ibv_event_type_str(static_cast<ibv_event_type>(-1)), "unknown"},
      {ibv_wc_status_str(static_cast<ibv_wc_status>(IBV_WC_TM_RNDV_INCOMPLETE + 1)), "unknown"},
      {ibv_wc_status_str(static_cast<ibv_wc_status>(-1)), "unknown"},
  };
  for (const auto& [got, expected] : names) EXPECT_STREQ(got, expected);
}

// Ours and rdma-core's name every value from kFirstValue to kLastValue alike.
template <class Enum>
void expect_same_names(const char* (*ours)(Enum), const char* (*real)(Enum)) {
  for (int v = kFirstValue; v <= kLastValue; ++v) ASSERT_STREQ(ours(static_cast<Enum>(v)), real(static_cast<Enum>(v))) << v;
}

TEST_F(VerbsOracle, StringsMatchForEveryValue) {
  expect_same_names(ibv_node_type_str, REAL(ibv_node_type_str));
  expect_same_names(ibv_port_state_str, REAL(ibv_port_state_str));
  expect_same_names(ibv_event_type_str, REAL(ibv_event_type_str));
  expect_same_names(ibv_wc_status_str, REAL(ibv_wc_status_str));
}

// --- Kernel-structure copies -----------------------------------------------

// `object` filled with `byte`, so that fields a copy leaves alone show.
template <class T>
T filled(unsigned char byte) {
  T object;
  std::memset(&object, byte, sizeof object);
  return object;
}

// A kernel address vector whose every field has a value of its own.
ib_uverbs_ah_attr kern_ah(std::uint8_t base) {
  auto ah = filled<ib_uverbs_ah_attr>(0xEE);
  for (std::uint8_t i = 0; i < 16; ++i) ah.grh.dgid[i] = static_cast<std::uint8_t>(base + i);
  ah.grh.flow_label = 0x000ABCDEu + base;
  ah.grh.sgid_index = static_cast<std::uint8_t>(base + 1);
  ah.grh.hop_limit = static_cast<std::uint8_t>(base + 2);
  ah.grh.traffic_class = static_cast<std::uint8_t>(base + 3);
  ah.dlid = static_cast<std::uint16_t>(0x1200 + base);
  ah.sl = static_cast<std::uint8_t>(base + 4);
  ah.src_path_bits = static_cast<std::uint8_t>(base + 5);
  ah.static_rate = static_cast<std::uint8_t>(base + 6);
  ah.is_global = 1;
  ah.port_num = static_cast<std::uint8_t>(base + 7);
  return ah;
}

void expect_ah(const ibv_ah_attr& ah, const ib_uverbs_ah_attr& kern) {
  EXPECT_EQ(std::memcmp(ah.grh.dgid.raw, kern.grh.dgid, 16), 0);
  EXPECT_EQ(ah.grh.flow_label, kern.grh.flow_label);
  EXPECT_EQ(ah.grh.sgid_index, kern.grh.sgid_index);
  EXPECT_EQ(ah.grh.hop_limit, kern.grh.hop_limit);
  EXPECT_EQ(ah.grh.traffic_class, kern.grh.traffic_class);
  EXPECT_EQ(ah.dlid, kern.dlid);
  EXPECT_EQ(ah.sl, kern.sl);
  EXPECT_EQ(ah.src_path_bits, kern.src_path_bits);
  EXPECT_EQ(ah.static_rate, kern.static_rate);
  EXPECT_EQ(ah.is_global, kern.is_global);
  EXPECT_EQ(ah.port_num, kern.port_num);
}

ib_uverbs_qp_attr kern_qp() {
  auto qp = filled<ib_uverbs_qp_attr>(0xEE);
  qp.qp_attr_mask = 0xFFFF;
  qp.qp_state = IBV_QPS_RTS;
  qp.cur_qp_state = IBV_QPS_RTR;
  qp.path_mtu = IBV_MTU_2048;
  qp.path_mig_state = IBV_MIG_REARM;
  qp.qkey = 0x11111111;
  qp.rq_psn = 0x123456;
  qp.sq_psn = 0x654321;
  qp.dest_qp_num = 0xABCDEF;
  qp.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  qp.ah_attr = kern_ah(0x10);
  qp.alt_ah_attr = kern_ah(0x40);
  qp.max_send_wr = 101;
  qp.max_recv_wr = 102;
  qp.max_send_sge = 103;
  qp.max_recv_sge = 104;
  qp.max_inline_data = 105;
  qp.pkey_index = 3;
  qp.alt_pkey_index = 4;
  qp.en_sqd_async_notify = 1;
  qp.sq_draining = 1;
  qp.max_rd_atomic = 5;
  qp.max_dest_rd_atomic = 6;
  qp.min_rnr_timer = 7;
  qp.port_num = 1;
  qp.timeout = 14;
  qp.retry_cnt = 7;
  qp.rnr_retry = 6;
  qp.alt_port_num = 2;
  qp.alt_timeout = 15;
  return qp;
}

TEST(VerbsKernCopy, AhAttrFromKernel) {
  auto kern = kern_ah(0x20);
  auto ah = filled<ibv_ah_attr>(0x55);
  ibv_copy_ah_attr_from_kern(&ah, &kern);
  expect_ah(ah, kern);
}

TEST(VerbsKernCopy, QpAttrFromKernelLeavesQpStateAndRateLimit) {
  auto kern = kern_qp();
  auto qp = filled<ibv_qp_attr>(0x55);
  ibv_copy_qp_attr_from_kern(&qp, &kern);
  EXPECT_EQ(static_cast<int>(qp.qp_state), 0x55555555) << "rdma-core does not copy qp_state";
  EXPECT_EQ(qp.rate_limit, 0x55555555u) << "not in the kernel structure";
  EXPECT_EQ(qp.cur_qp_state, IBV_QPS_RTR);
  EXPECT_EQ(qp.path_mtu, IBV_MTU_2048);
  EXPECT_EQ(qp.path_mig_state, IBV_MIG_REARM);
  EXPECT_EQ(qp.qkey, kern.qkey);
  EXPECT_EQ(qp.rq_psn, kern.rq_psn);
  EXPECT_EQ(qp.sq_psn, kern.sq_psn);
  EXPECT_EQ(qp.dest_qp_num, kern.dest_qp_num);
  EXPECT_EQ(qp.qp_access_flags, kern.qp_access_flags);
  EXPECT_EQ(qp.cap.max_send_wr, 101u);
  EXPECT_EQ(qp.cap.max_recv_wr, 102u);
  EXPECT_EQ(qp.cap.max_send_sge, 103u);
  EXPECT_EQ(qp.cap.max_recv_sge, 104u);
  EXPECT_EQ(qp.cap.max_inline_data, 105u);
  expect_ah(qp.ah_attr, kern.ah_attr);
  expect_ah(qp.alt_ah_attr, kern.alt_ah_attr);
  EXPECT_EQ(qp.pkey_index, 3);
  EXPECT_EQ(qp.alt_pkey_index, 4);
  EXPECT_EQ(qp.en_sqd_async_notify, 1);
  EXPECT_EQ(qp.sq_draining, 1);
  EXPECT_EQ(qp.max_rd_atomic, 5);
  EXPECT_EQ(qp.max_dest_rd_atomic, 6);
  EXPECT_EQ(qp.min_rnr_timer, 7);
  EXPECT_EQ(qp.port_num, 1);
  EXPECT_EQ(qp.timeout, 14);
  EXPECT_EQ(qp.retry_cnt, 7);
  EXPECT_EQ(qp.rnr_retry, 6);
  EXPECT_EQ(qp.alt_port_num, 2);
  EXPECT_EQ(qp.alt_timeout, 15);
}

ib_user_path_rec kern_path() {
  auto path = filled<ib_user_path_rec>(0xEE);
  for (std::uint8_t i = 0; i < 16; ++i) {
    path.dgid[i] = static_cast<std::uint8_t>(0xF0 + i);
    path.sgid[i] = static_cast<std::uint8_t>(0x30 + i);
  }
  path.dlid = 0x0201;
  path.slid = 0x0403;
  path.raw_traffic = 0;
  path.flow_label = 0x00045678;
  path.reversible = 1;
  path.mtu = 0x104;  // 8 bits survive in ibv_sa_path_rec
  path.pkey = 0xFFFF;
  path.hop_limit = 64;
  path.traffic_class = 9;
  path.numb_path = 1;
  path.sl = 3;
  path.mtu_selector = 2;
  path.rate_selector = 2;
  path.rate = IBV_RATE_100_GBPS;
  path.packet_life_time_selector = 2;
  path.packet_life_time = 18;
  path.preference = 1;
  return path;
}

void expect_path(const ibv_sa_path_rec& rec, const ib_user_path_rec& kern) {
  EXPECT_EQ(std::memcmp(rec.dgid.raw, kern.dgid, 16), 0);
  EXPECT_EQ(std::memcmp(rec.sgid.raw, kern.sgid, 16), 0);
  EXPECT_EQ(rec.dlid, kern.dlid);
  EXPECT_EQ(rec.slid, kern.slid);
  EXPECT_EQ(rec.raw_traffic, static_cast<int>(kern.raw_traffic));
  EXPECT_EQ(rec.flow_label, kern.flow_label);
  EXPECT_EQ(rec.hop_limit, kern.hop_limit);
  EXPECT_EQ(rec.traffic_class, kern.traffic_class);
  EXPECT_EQ(rec.reversible, static_cast<int>(kern.reversible));
  EXPECT_EQ(rec.numb_path, kern.numb_path);
  EXPECT_EQ(rec.pkey, kern.pkey);
  EXPECT_EQ(rec.sl, kern.sl);
  EXPECT_EQ(rec.mtu_selector, kern.mtu_selector);
  EXPECT_EQ(rec.mtu, static_cast<std::uint8_t>(kern.mtu));
  EXPECT_EQ(rec.rate_selector, kern.rate_selector);
  EXPECT_EQ(rec.rate, kern.rate);
  EXPECT_EQ(rec.packet_life_time_selector, kern.packet_life_time_selector);
  EXPECT_EQ(rec.packet_life_time, kern.packet_life_time);
  EXPECT_EQ(rec.preference, kern.preference);
}

TEST(VerbsKernCopy, PathRecordFromKernel) {
  auto kern = kern_path();
  auto rec = filled<ibv_sa_path_rec>(0x55);
  ibv_copy_path_rec_from_kern(&rec, &kern);
  expect_path(rec, kern);
  EXPECT_EQ(rec.mtu, 0x04);
}

TEST(VerbsKernCopy, PathRecordToKernelAndBack) {
  auto original = kern_path();
  original.mtu = IBV_MTU_4096;
  auto rec = filled<ibv_sa_path_rec>(0x55);
  ibv_copy_path_rec_from_kern(&rec, &original);
  auto kern = filled<ib_user_path_rec>(0x77);
  ibv_copy_path_rec_to_kern(&kern, &rec);
  expect_path(rec, kern);
  EXPECT_EQ(std::memcmp(&kern, &original, sizeof kern), 0) << "every kernel field is written";
}

// Both libraries' copies give the same bytes, including what they leave.
TEST_F(VerbsOracle, KernCopiesMatchByteForByte) {
  auto ah_from = REAL(ibv_copy_ah_attr_from_kern);
  auto qp_from = REAL(ibv_copy_qp_attr_from_kern);
  auto path_from = REAL(ibv_copy_path_rec_from_kern);
  auto path_to = REAL(ibv_copy_path_rec_to_kern);

  auto ah_src = kern_ah(0x20);
  auto ours_ah = filled<ibv_ah_attr>(0x55), real_ah = ours_ah;
  ibv_copy_ah_attr_from_kern(&ours_ah, &ah_src);
  ah_from(&real_ah, &ah_src);
  EXPECT_EQ(std::memcmp(&ours_ah, &real_ah, sizeof ours_ah), 0);

  auto qp_src = kern_qp();
  auto ours_qp = filled<ibv_qp_attr>(0x55), real_qp = ours_qp;
  ibv_copy_qp_attr_from_kern(&ours_qp, &qp_src);
  qp_from(&real_qp, &qp_src);
  EXPECT_EQ(std::memcmp(&ours_qp, &real_qp, sizeof ours_qp), 0);

  auto path_src = kern_path();
  auto ours_rec = filled<ibv_sa_path_rec>(0x55), real_rec = ours_rec;
  ibv_copy_path_rec_from_kern(&ours_rec, &path_src);
  path_from(&real_rec, &path_src);
  EXPECT_EQ(std::memcmp(&ours_rec, &real_rec, sizeof ours_rec), 0);

  auto ours_kern = filled<ib_user_path_rec>(0x77), real_kern = ours_kern;
  ibv_copy_path_rec_to_kern(&ours_kern, &ours_rec);
  path_to(&real_kern, &ours_rec);
  EXPECT_EQ(std::memcmp(&ours_kern, &real_kern, sizeof ours_kern), 0);
}

// --- Fork protection -------------------------------------------------------
// The environment is read once per process, so each case runs in a fresh
// copy of this program: VerbsForkCase.Run, selected by
// IBFAB_VERBS_FORK_CASE, with RDMAV_FORK_SAFE and IBV_FORK_SAFE only as the
// case sets them. (Run alone, VerbsForkCase.Run skips.)

// How a VerbsForkCase.Run process ended: its wait status (0 if it passed)
// and its output, which says why not.
struct CaseResult {
  int status;
  std::string output;
};

// Runs VerbsForkCase.Run for `fork_case` in a new process of this program,
// with `environment` ("NAME=value ...") added.
CaseResult run_fork_case(const std::string& fork_case, const std::string& environment) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {-1, "readlink /proc/self/exe failed"};
  self[n] = '\0';
  const std::string command = "env -u RDMAV_FORK_SAFE -u IBV_FORK_SAFE -u GTEST_OUTPUT IBFAB_VERBS_FORK_CASE=" +
                              fork_case + " " + environment + " '" + self +
                              "' --gtest_filter=VerbsForkCase.Run 2>&1";
  CaseResult result{-1, {}};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char chunk[4096];
  std::size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, pipe)) > 0) result.output.append(chunk, got);
  result.status = pclose(pipe);
  return result;
}

TEST(VerbsForkCase, Run) {
  const char* selected = std::getenv("IBFAB_VERBS_FORK_CASE");
  if (selected == nullptr) GTEST_SKIP() << "run by the VerbsFork tests in a process of its own";
  const std::string fork_case = selected;
  char page[64];
  if (fork_case == "environment") {
    EXPECT_EQ(ibv_is_fork_initialized(), IBV_FORK_ENABLED);
    EXPECT_EQ(ibv_dontfork_range(page, sizeof page), 0);
    EXPECT_EQ(ibv_fork_init(), 0);
  } else if (fork_case == "init") {
    EXPECT_EQ(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
    EXPECT_EQ(ibv_fork_init(), 0);
    EXPECT_EQ(ibv_is_fork_initialized(), IBV_FORK_ENABLED);
    EXPECT_EQ(ibv_fork_init(), 0) << "again";
    EXPECT_EQ(ibv_dontfork_range(page, sizeof page), 0);
    EXPECT_EQ(ibv_dofork_range(page, sizeof page), 0);
    EXPECT_EQ(ibv_is_fork_initialized(), IBV_FORK_ENABLED);
  } else if (fork_case == "too-late") {
    EXPECT_EQ(ibv_dontfork_range(page, sizeof page), 0);
    EXPECT_EQ(ibv_fork_init(), EINVAL);
    EXPECT_EQ(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
  } else {
    ADD_FAILURE() << "no case " << fork_case;
  }
}

void expect_case_passes(const std::string& fork_case, const std::string& environment) {
  const CaseResult r = run_fork_case(fork_case, environment);
  EXPECT_EQ(r.status, 0) << fork_case << " with '" << environment << "':\n" << r.output;
}

TEST(VerbsFork, EnabledByRdmavForkSafe) { expect_case_passes("environment", "RDMAV_FORK_SAFE=1"); }

TEST(VerbsFork, EnabledByIbvForkSafeEvenEmpty) { expect_case_passes("environment", "IBV_FORK_SAFE="); }

TEST(VerbsFork, DisabledUntilForkInit) { expect_case_passes("init", ""); }

TEST(VerbsFork, ForkInitAfterARangeCallIsTooLate) { expect_case_passes("too-late", ""); }

TEST(VerbsFork, TheCaseRunnerSeesFailures) { EXPECT_NE(run_fork_case("no-such-case", "").status, 0); }

// --- Calls ibfab does not model ---------------------------------------------

// Objects of ibfab's library are never read by these calls: any address does.
template <class T>
T* opaque() {
  alignas(64) static unsigned char storage[1024];
  return reinterpret_cast<T*>(storage);
}

TEST(VerbsUnsupported, ImportDevice) {
  errno = 0;
  EXPECT_EQ(ibv_import_device(-1), nullptr);
  EXPECT_EQ(errno, EINVAL) << "not an open file";
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  errno = 0;
  EXPECT_EQ(ibv_import_device(pipe_fds[0]), nullptr);
  EXPECT_EQ(errno, EINVAL) << "not a character device";
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  const int null_fd = open("/dev/null", O_RDWR);
  ASSERT_GE(null_fd, 0);
  errno = 0;
  EXPECT_EQ(ibv_import_device(null_fd), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  close(null_fd);
}

TEST(VerbsUnsupported, ImportsFailAndUnimportsDoNothing) {
  errno = 0;
  EXPECT_EQ(ibv_import_pd(opaque<ibv_context>(), 1), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  errno = 0;
  EXPECT_EQ(ibv_import_mr(opaque<ibv_pd>(), 2), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  errno = 0;
  EXPECT_EQ(ibv_import_dm(opaque<ibv_context>(), 3), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  errno = 0;
  ibv_unimport_pd(opaque<ibv_pd>());
  ibv_unimport_mr(opaque<ibv_mr>());
  ibv_unimport_dm(opaque<ibv_dm>());
  EXPECT_EQ(errno, 0);
}

TEST(VerbsUnsupported, RegDmabufMr) {
  errno = 0;
  EXPECT_EQ(ibv_reg_dmabuf_mr(opaque<ibv_pd>(), 0, 4096, 0, 3, IBV_ACCESS_LOCAL_WRITE), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

// rdma-core's checks, before the provider (the engine) is asked.
TEST(VerbsPure, ReregMrChecksArguments) {
  char buffer[64];
  auto* mr = opaque<ibv_mr>();
  const auto rereg = [&](int flags, void* addr, std::size_t length, int access) {
    errno = 0;
    const int result = ibv_rereg_mr(mr, flags, opaque<ibv_pd>(), addr, length, access);
    return std::make_pair(result, errno);
  };
  const auto input_error = std::make_pair(static_cast<int>(IBV_REREG_MR_ERR_INPUT), EINVAL);
  EXPECT_EQ(rereg(IBV_REREG_MR_FLAGS_SUPPORTED + 1, nullptr, 0, 0), input_error) << "unknown flag";
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, sizeof buffer, 0), input_error) << "no address";
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_TRANSLATION, buffer, 0, 0), input_error) << "no length";
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_PD, nullptr, 0, IBV_ACCESS_LOCAL_WRITE), input_error) << "stray access";
}

TEST(VerbsUnsupported, Ece) {
  ibv_ece ece{};
  errno = 0;
  EXPECT_EQ(ibv_query_ece(opaque<ibv_qp>(), &ece), EOPNOTSUPP);
  EXPECT_EQ(errno, 0);
  EXPECT_EQ(ibv_set_ece(opaque<ibv_qp>(), &ece), EOPNOTSUPP);
  EXPECT_EQ(errno, EOPNOTSUPP) << "a zero vendor is refused before the provider";
  ece.vendor_id = 0x15B3;
  errno = 0;
  EXPECT_EQ(ibv_set_ece(opaque<ibv_qp>(), &ece), EOPNOTSUPP);
  EXPECT_EQ(errno, 0);
}

TEST(VerbsUnsupported, DataInOrderAndEthernetL2) {
  EXPECT_EQ(ibv_query_qp_data_in_order(opaque<ibv_qp>(), IBV_WR_RDMA_WRITE, 0), 0);
  std::uint8_t mac[ETHERNET_LL_SIZE] = {};
  std::uint16_t vid = 7;
  EXPECT_EQ(ibv_resolve_eth_l2_from_gid(opaque<ibv_context>(), opaque<ibv_ah_attr>(), mac, &vid), -EINVAL);
  EXPECT_EQ(vid, 7);
}

// --- The provider interface (IBVERBS_PRIVATE_34) -----------------------------

TEST(VerbsPrivate, ProvidersAreAcceptedAndIgnored) {
  verbs_register_driver_34(opaque<verbs_device_ops>());
  EXPECT_FALSE(verbs_allow_disassociate_destroy);
  __verbs_log(opaque<verbs_context>(), 0, "%s", "ignored");
}

TEST(VerbsPrivate, ContextCallsFail) {
  errno = 0;
  EXPECT_EQ(verbs_open_device(opaque<ibv_device>(), nullptr), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  errno = 0;
  EXPECT_EQ(_verbs_init_and_alloc_context(opaque<ibv_device>(), -1, 1024, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  char buf[16];
  errno = 0;
  EXPECT_EQ(ibv_read_ibdev_sysfs_file(buf, sizeof buf, opaque<verbs_sysfs_dev>(), "ports/%d/gids/%d", 1, 0), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(__ioctl_final_num_attrs(7, nullptr), 7u);
}

TEST(VerbsPrivate, InitCqAsRdmaCore) {
  ibv_context context{};
  pthread_mutex_init(&context.mutex, nullptr);
  ibv_comp_channel channel{};
  channel.refcnt = 2;
  auto cq = filled<ibv_cq>(0x55);
  int user = 0;
  verbs_init_cq(&cq, &context, &channel, &user);
  EXPECT_EQ(cq.context, &context);
  EXPECT_EQ(cq.channel, &channel);
  EXPECT_EQ(cq.cq_context, &user);
  EXPECT_EQ(cq.comp_events_completed, 0u);
  EXPECT_EQ(cq.async_events_completed, 0u);
  EXPECT_EQ(channel.refcnt, 3) << "the channel counts its CQs";
  EXPECT_EQ(pthread_mutex_trylock(&cq.mutex), 0) << "initialised, unlocked";
  pthread_mutex_unlock(&cq.mutex);
  pthread_mutex_destroy(&cq.mutex);
  pthread_cond_destroy(&cq.cond);

  auto lone = filled<ibv_cq>(0x55);
  verbs_init_cq(&lone, &context, nullptr, nullptr);
  EXPECT_EQ(lone.channel, nullptr);
  EXPECT_EQ(channel.refcnt, 3);
  pthread_mutex_destroy(&lone.mutex);
  pthread_cond_destroy(&lone.cond);
  pthread_mutex_destroy(&context.mutex);
}

}  // namespace
