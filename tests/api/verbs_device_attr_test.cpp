// ibv_query_device and ibv_query_device_ex, field by field, against what
// rdma-core 44 fills from the kernel for an IB HCA (ibv_cmd_query_device_any
// and the mlx5 provider), and the rules that tie the fields together and to
// what the other calls then do.
#include <infiniband/verbs.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

class VerbsDeviceAttr : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ctx_ = ibv_open_device(device(0));
    ASSERT_NE(ctx_, nullptr);
    ASSERT_EQ(ibv_query_device(ctx_, &legacy_), 0);
    std::memset(&ex_, 0xA5, sizeof ex_);  // every field must be written
    ASSERT_EQ(ibv_query_device_ex(ctx_, nullptr, &ex_), 0);
  }
  void TearDown() override { ibv_close_device(ctx_); }
  ibv_context* ctx_ = nullptr;
  ibv_device_attr legacy_{};
  ibv_device_attr_ex ex_{};
};

TEST_F(VerbsDeviceAttr, PhysPortCntExIsThePortCount) {
  EXPECT_EQ(ex_.orig_attr.phys_port_cnt, 1);
  EXPECT_EQ(ex_.phys_port_cnt_ex, 1u);
  EXPECT_EQ(ex_.phys_port_cnt_ex, ex_.orig_attr.phys_port_cnt);  // rdma-core's test_phys_port_cnt_ex
}

TEST_F(VerbsDeviceAttr, LegacyPartEqualsIbvQueryDevice) {
  EXPECT_EQ(std::memcmp(&ex_.orig_attr, &legacy_, sizeof legacy_), 0);
}

TEST_F(VerbsDeviceAttr, CompMaskIsZeroAsRdmaCoreLeavesIt) {
  // rdma-core 44 never copies the kernel's comp_mask into the attributes.
  EXPECT_EQ(ex_.comp_mask, 0u);
}

TEST_F(VerbsDeviceAttr, IdentityFields) {
  EXPECT_NE(legacy_.node_guid, 0u);
  EXPECT_NE(legacy_.sys_image_guid, 0u);
  EXPECT_EQ(legacy_.node_guid, ibv_get_device_guid(device(0)));
  EXPECT_EQ(legacy_.vendor_id, 0x02C9u);
  EXPECT_NE(legacy_.vendor_part_id, 0u);
  EXPECT_STRNE(legacy_.fw_ver, "");
  EXPECT_LT(std::strlen(legacy_.fw_ver), sizeof legacy_.fw_ver);
}

TEST_F(VerbsDeviceAttr, MemoryLimits) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_GT(legacy_.max_mr_size, page);
  EXPECT_GE(legacy_.page_size_cap, page);
  EXPECT_EQ(legacy_.page_size_cap, 0xFFFFFFFFFFFFF000ull);  // every multiple of 4 KiB, as mlx5
  EXPECT_GT(legacy_.max_mr, 0);
  EXPECT_GT(legacy_.max_pd, 0);
}

TEST_F(VerbsDeviceAttr, QueueLimitsAreWhatCreateAccepts) {
  EXPECT_GT(legacy_.max_qp, 0);
  EXPECT_GT(legacy_.max_cq, 0);
  EXPECT_GT(legacy_.max_ah, 0);
  ibv_pd* pd = ibv_alloc_pd(ctx_);
  ASSERT_NE(pd, nullptr);
  ibv_cq* cq = ibv_create_cq(ctx_, legacy_.max_cqe, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr) << "max_cqe " << legacy_.max_cqe << " refused";
  errno = 0;
  EXPECT_EQ(ibv_create_cq(ctx_, legacy_.max_cqe + 1, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  ibv_qp_init_attr a{};
  a.send_cq = a.recv_cq = cq;
  a.qp_type = IBV_QPT_UD;
  a.cap.max_send_wr = a.cap.max_recv_wr = static_cast<uint32_t>(legacy_.max_qp_wr);
  a.cap.max_send_sge = a.cap.max_recv_sge = static_cast<uint32_t>(legacy_.max_sge);
  ibv_qp* qp = ibv_create_qp(pd, &a);
  ASSERT_NE(qp, nullptr) << "max_qp_wr / max_sge refused";
  ibv_destroy_qp(qp);
  a.cap.max_send_sge = static_cast<uint32_t>(legacy_.max_sge) + 1;
  errno = 0;
  EXPECT_EQ(ibv_create_qp(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
}

TEST_F(VerbsDeviceAttr, MulticastLimits) {
  EXPECT_EQ(legacy_.max_mcast_grp, 2048);
  EXPECT_EQ(legacy_.max_mcast_qp_attach, 240);
  EXPECT_EQ(legacy_.max_total_mcast_qp_attach, legacy_.max_mcast_grp * legacy_.max_mcast_qp_attach);
}

TEST_F(VerbsDeviceAttr, PortFieldsOfAnIbHca) {
  EXPECT_EQ(legacy_.max_pkeys, 128);
  EXPECT_EQ(legacy_.local_ca_ack_delay, 16);
  ibv_port_attr p{};
  ASSERT_EQ(ibv_query_port(ctx_, 1, &p), 0);
  EXPECT_EQ(p.pkey_tbl_len, legacy_.max_pkeys);
}

TEST_F(VerbsDeviceAttr, ReadsAtomicsAndSrqsAsTheRcTransportHasThem) {
  EXPECT_EQ(legacy_.max_sge_rd, legacy_.max_sge);
  EXPECT_EQ(legacy_.max_qp_rd_atom, 16);
  EXPECT_EQ(legacy_.max_qp_init_rd_atom, 16);
  EXPECT_EQ(legacy_.max_res_rd_atom, 16 << 16);
  EXPECT_EQ(legacy_.atomic_cap, IBV_ATOMIC_HCA);
  EXPECT_GT(legacy_.max_srq, 0);
  EXPECT_EQ(legacy_.max_srq_wr, legacy_.max_qp_wr);
  EXPECT_EQ(legacy_.max_srq_sge, legacy_.max_sge);
}

TEST_F(VerbsDeviceAttr, AbsentFeaturesReadZero) {
  // No EE, RD, raw QPs or FMRs.
  EXPECT_EQ(legacy_.max_ee_rd_atom, 0);
  EXPECT_EQ(legacy_.max_ee_init_rd_atom, 0);
  EXPECT_EQ(legacy_.max_ee, 0);
  EXPECT_EQ(legacy_.max_rdd, 0);
  EXPECT_EQ(legacy_.max_raw_ipv6_qp, 0);
  EXPECT_EQ(legacy_.max_raw_ethy_qp, 0);
  EXPECT_EQ(legacy_.max_fmr, 0);
  EXPECT_EQ(legacy_.max_map_per_fmr, 0);
}

TEST_F(VerbsDeviceAttr, MemoryWindowsShareTheRegionsTable) {
  EXPECT_EQ(legacy_.max_mw, legacy_.max_mr);
  EXPECT_GT(legacy_.max_mw, 0);
}

TEST_F(VerbsDeviceAttr, CapabilityFlagsAreWhatTheModelDoes) {
  const auto flags = static_cast<uint32_t>(legacy_.device_cap_flags);
  for (uint32_t want : {IBV_DEVICE_BAD_PKEY_CNTR, IBV_DEVICE_BAD_QKEY_CNTR, IBV_DEVICE_UD_AV_PORT_ENFORCE,
                        IBV_DEVICE_PORT_ACTIVE_EVENT, IBV_DEVICE_SYS_IMAGE_GUID, IBV_DEVICE_RC_RNR_NAK_GEN,
                        IBV_DEVICE_XRC, IBV_DEVICE_MEM_WINDOW, IBV_DEVICE_MEM_WINDOW_TYPE_2B})
    EXPECT_TRUE(flags & want) << "missing 0x" << std::hex << want;
  for (uint32_t absent : {IBV_DEVICE_RESIZE_MAX_WR, IBV_DEVICE_RAW_MULTI, IBV_DEVICE_AUTO_PATH_MIG,
                          IBV_DEVICE_CHANGE_PHY_PORT, IBV_DEVICE_CURR_QP_STATE_MOD, IBV_DEVICE_SHUTDOWN_PORT, IBV_DEVICE_SRQ_RESIZE, IBV_DEVICE_N_NOTIFY_CQ,
                          IBV_DEVICE_UD_IP_CSUM,
                          IBV_DEVICE_MEM_MGT_EXTENSIONS, IBV_DEVICE_MEM_WINDOW_TYPE_2A,
                          IBV_DEVICE_RC_IP_CSUM, IBV_DEVICE_RAW_IP_CSUM,
                          IBV_DEVICE_MANAGED_FLOW_STEERING})
    EXPECT_FALSE(flags & absent) << "claims 0x" << std::hex << absent;
}

TEST_F(VerbsDeviceAttr, CapFlagsExHoldsTheLegacyFlagsInItsLow32Bits) {
  EXPECT_EQ(ex_.device_cap_flags_ex & 0xFFFFFFFFull, static_cast<uint32_t>(legacy_.device_cap_flags));
  EXPECT_EQ(ex_.device_cap_flags_ex & IBV_DEVICE_RAW_SCATTER_FCS, 0u);
  EXPECT_EQ(ex_.device_cap_flags_ex & IBV_DEVICE_PCI_WRITE_END_PADDING, 0u);
}

TEST_F(VerbsDeviceAttr, NoOnDemandPaging) {
  EXPECT_EQ(ex_.odp_caps.general_caps, 0u);
  EXPECT_EQ(ex_.odp_caps.per_transport_caps.rc_odp_caps, 0u);
  EXPECT_EQ(ex_.odp_caps.per_transport_caps.uc_odp_caps, 0u);
  EXPECT_EQ(ex_.odp_caps.per_transport_caps.ud_odp_caps, 0u);
  EXPECT_EQ(ex_.xrc_odp_caps, 0u);
}

TEST_F(VerbsDeviceAttr, NoCompletionTimestampsAndCreateCqExRefusesThem) {
  EXPECT_EQ(ex_.completion_timestamp_mask, 0u);
  EXPECT_EQ(ex_.hca_core_clock, 0u);
  ibv_cq_init_attr_ex a{};
  a.cqe = 16;
  a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
  errno = 0;
  EXPECT_EQ(ibv_create_cq_ex(ctx_, &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST_F(VerbsDeviceAttr, NoEthernetOffloads) {
  EXPECT_EQ(ex_.tso_caps.max_tso, 0u);
  EXPECT_EQ(ex_.tso_caps.supported_qpts, 0u);
  EXPECT_EQ(ex_.rss_caps.supported_qpts, 0u);
  EXPECT_EQ(ex_.rss_caps.max_rwq_indirection_tables, 0u);
  EXPECT_EQ(ex_.rss_caps.max_rwq_indirection_table_size, 0u);
  EXPECT_EQ(ex_.rss_caps.rx_hash_fields_mask, 0u);
  EXPECT_EQ(ex_.rss_caps.rx_hash_function, 0u);
  EXPECT_EQ(ex_.max_wq_type_rq, 0u);
  EXPECT_EQ(ex_.raw_packet_caps, 0u);
  EXPECT_EQ(ex_.packet_pacing_caps.qp_rate_limit_min, 0u);
  EXPECT_EQ(ex_.packet_pacing_caps.qp_rate_limit_max, 0u);
  EXPECT_EQ(ex_.packet_pacing_caps.supported_qpts, 0u);
}

TEST_F(VerbsDeviceAttr, NoTagMatchingCqModerationDeviceMemoryOrPciAtomics) {
  EXPECT_EQ(ex_.tm_caps.max_rndv_hdr_size, 0u);
  EXPECT_EQ(ex_.tm_caps.max_num_tags, 0u);
  EXPECT_EQ(ex_.tm_caps.flags, 0u);
  EXPECT_EQ(ex_.tm_caps.max_ops, 0u);
  EXPECT_EQ(ex_.tm_caps.max_sge, 0u);
  EXPECT_EQ(ex_.cq_mod_caps.max_cq_count, 0u);
  EXPECT_EQ(ex_.cq_mod_caps.max_cq_period, 0u);
  EXPECT_EQ(ex_.max_dm_size, 0u);
  EXPECT_EQ(ex_.pci_atomic_caps.fetch_add, 0u);
  EXPECT_EQ(ex_.pci_atomic_caps.swap, 0u);
  EXPECT_EQ(ex_.pci_atomic_caps.compare_swap, 0u);
  ibv_alloc_dm_attr dm{};
  dm.length = 64;
  errno = 0;
  EXPECT_EQ(ibv_alloc_dm(ctx_, &dm), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST_F(VerbsDeviceAttr, InputCompMaskIsRefused) {
  ibv_query_device_ex_input in{};
  in.comp_mask = 1;
  ibv_device_attr_ex ex{};
  EXPECT_EQ(ibv_query_device_ex(ctx_, &in, &ex), EINVAL);
  // The provider op refuses it too, for callers that reach it directly.
  verbs_context* v = verbs_get_ctx(ctx_);
  ASSERT_NE(v->query_device_ex, nullptr);
  EXPECT_EQ(v->query_device_ex(ctx_, &in, &ex, sizeof ex), EINVAL);
}

TEST_F(VerbsDeviceAttr, ProviderOpHonoursTheCallersSize) {
  verbs_context* v = verbs_get_ctx(ctx_);
  // Smaller than the legacy struct: EINVAL, as rdma-core.
  ibv_device_attr_ex ex{};
  EXPECT_EQ(v->query_device_ex(ctx_, nullptr, &ex, sizeof(ibv_device_attr) - 1), EINVAL);
  // The legacy size: nothing past it is written.
  std::vector<unsigned char> buf(sizeof(ibv_device_attr_ex) + 32, 0xA5);
  ASSERT_EQ(v->query_device_ex(ctx_, nullptr, reinterpret_cast<ibv_device_attr_ex*>(buf.data()),
                               sizeof(ibv_device_attr)),
            0);
  for (std::size_t i = sizeof(ibv_device_attr); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xA5) << "byte " << i;
  // A larger (newer) struct: the tail this library does not know reads 0.
  std::fill(buf.begin(), buf.end(), 0xA5);
  ASSERT_EQ(v->query_device_ex(ctx_, nullptr, reinterpret_cast<ibv_device_attr_ex*>(buf.data()), buf.size()), 0);
  for (std::size_t i = sizeof(ibv_device_attr_ex); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0) << "byte " << i;
  EXPECT_EQ(reinterpret_cast<ibv_device_attr_ex*>(buf.data())->phys_port_cnt_ex, 1u);
}

}  // namespace
}  // namespace ibfab::testing
