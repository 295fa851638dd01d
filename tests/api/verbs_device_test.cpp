// libibverbs' devices, contexts and queries on an in-process fabric: what
// ibv_devinfo and programs read, as the SM configured the ports.
#include <infiniband/verbs.h>
#include <poll.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <string>

#include "tests/api/verbs_fabric.h"

// Declared in rdma-core's private driver.h; ibv_devinfo calls it.
extern "C" int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size);

namespace ibfab::testing {
namespace {

class VerbsDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ctx_ = ibv_open_device(device(0));
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override { ibv_close_device(ctx_); }
  ibv_context* ctx_ = nullptr;
};

TEST_F(VerbsDevice, EmbeddedListsEveryHostThisNodeFirst) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(n, 8);  // fat-tree:2:4 has 8 hosts
  EXPECT_EQ(list[n], nullptr);
  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.insert(ibv_get_device_name(list[i]));
    EXPECT_EQ(ibv_get_device_index(list[i]), i);
    EXPECT_EQ(list[i]->node_type, IBV_NODE_CA);
    EXPECT_EQ(list[i]->transport_type, IBV_TRANSPORT_IB);
  }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_STREQ(ibv_get_device_name(list[0]), "ibfab0");
  // Stable: the same list, the same objects, call after call.
  int m = 0;
  ibv_device** again = ibv_get_device_list(&m);
  ASSERT_EQ(m, n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(again[i], list[i]);
  ibv_free_device_list(again);
  ibv_free_device_list(list);
}

TEST_F(VerbsDevice, GuidIsTheNodeGuidOfTheHost) {
  ibv_device_attr a{};
  ASSERT_EQ(ibv_query_device(ctx_, &a), 0);
  EXPECT_NE(a.node_guid, 0u);
  EXPECT_EQ(ibv_get_device_guid(device(0)), a.node_guid);
  EXPECT_NE(ibv_get_device_guid(device(1)), a.node_guid);
  EXPECT_EQ(a.phys_port_cnt, 1);
  EXPECT_GE(a.max_mcast_grp, 1);
  EXPECT_GE(a.max_mcast_qp_attach, 1);
  EXPECT_EQ(a.max_pkeys, 128);
}

TEST_F(VerbsDevice, ContextIsAFullVerbsContext) {
  verbs_context* v = verbs_get_ctx(ctx_);
  ASSERT_NE(v, nullptr);  // abi_compat says extended
  EXPECT_EQ(v->sz, sizeof(verbs_context));
  EXPECT_GE(ctx_->num_comp_vectors, 1);
  EXPECT_NE(ctx_->ops.poll_cq, nullptr);
  EXPECT_NE(ctx_->ops.post_send, nullptr);
  EXPECT_NE(ctx_->ops.post_recv, nullptr);
  EXPECT_NE(ctx_->ops.req_notify_cq, nullptr);
  EXPECT_NE(ctx_->ops.post_srq_recv, nullptr);
  // An op ibfab does not implement fails with EOPNOTSUPP through the inline.
  ibv_td_init_attr td{};
  errno = 0;
  EXPECT_EQ(ibv_alloc_td(ctx_, &td), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  ibv_modify_cq_attr mc{};
  ibv_cq* cq = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(ibv_modify_cq(cq, &mc), EOPNOTSUPP);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(VerbsDevice, PortAsTheSmConfiguredIt) {
  ibv_port_attr p{};
  ASSERT_EQ(ibv_query_port(ctx_, 1, &p), 0);
  EXPECT_EQ(p.state, IBV_PORT_ACTIVE);
  EXPECT_NE(p.lid, 0);
  EXPECT_NE(p.sm_lid, 0);
  EXPECT_EQ(p.phys_state, 5);  // LinkUp
  EXPECT_EQ(p.link_layer, IBV_LINK_LAYER_INFINIBAND);
  EXPECT_EQ(p.active_mtu, IBV_MTU_4096);
  EXPECT_NE(p.active_width, 0);
  EXPECT_NE(p.active_speed, 0);
  EXPECT_NE(ibv_query_port(ctx_, 2, &p), 0);  // one port only
  // The LIDs differ between hosts.
  ibv_context* other = ibv_open_device(device(1));
  ASSERT_NE(other, nullptr);
  ibv_port_attr q{};
  ASSERT_EQ(ibv_query_port(other, 1, &q), 0);
  EXPECT_NE(q.lid, p.lid);
  EXPECT_EQ(q.sm_lid, p.sm_lid);
  ibv_close_device(other);
}

TEST_F(VerbsDevice, ExportedQueryPortWritesOnlyTheCompatLayout) {
  // Programs built against old headers pass a 48-byte struct.
  alignas(8) unsigned char buf[sizeof(ibv_port_attr) + 8];
  std::memset(buf, 0xAB, sizeof buf);
#undef ibv_query_port
  ASSERT_EQ(ibv_query_port(ctx_, 1, reinterpret_cast<_compat_ibv_port_attr*>(buf)), 0);
  const std::size_t compat = offsetof(ibv_port_attr, port_cap_flags2);
  for (std::size_t i = compat; i < sizeof buf; ++i) EXPECT_EQ(buf[i], 0xAB) << "byte " << i;
  ibv_port_attr a;
  std::memcpy(&a, buf, compat);
  EXPECT_EQ(a.state, IBV_PORT_ACTIVE);
}

TEST_F(VerbsDevice, GidIsPrefixAndPortGuid) {
  ibv_gid g{};
  ASSERT_EQ(ibv_query_gid(ctx_, 1, 0, &g), 0);
  EXPECT_EQ(be64toh(g.global.subnet_prefix), 0xfe80000000000000ull);
  EXPECT_NE(g.global.interface_id, 0u);
  EXPECT_EQ(ibv_query_gid(ctx_, 1, 1, &g), -1);  // past the table
  ibv_gid_entry e{};
  ASSERT_EQ(ibv_query_gid_ex(ctx_, 1, 0, &e, 0), 0);
  EXPECT_EQ(e.gid_type, IBV_GID_TYPE_IB);
  EXPECT_EQ(e.port_num, 1u);
  EXPECT_EQ(ibv_query_gid_ex(ctx_, 1, 5, &e, 0), ENODATA);
  ibv_gid_entry table[4];
  EXPECT_EQ(ibv_query_gid_table(ctx_, table, 4, 0), 1);
  EXPECT_EQ(std::memcmp(&table[0].gid, &g, sizeof g), 0);
}

TEST_F(VerbsDevice, PkeyTableHoldsTheDefaultPartition) {
  __be16 pkey = 0;
  ASSERT_EQ(ibv_query_pkey(ctx_, 1, 0, &pkey), 0);
  EXPECT_EQ(be16toh(pkey), 0xFFFF);
  EXPECT_EQ(ibv_query_pkey(ctx_, 1, 127, &pkey), 0);
  EXPECT_EQ(ibv_query_pkey(ctx_, 1, 128, &pkey), -1);
  EXPECT_EQ(ibv_get_pkey_index(ctx_, 1, htobe16(0xFFFF)), 0);
  EXPECT_EQ(ibv_get_pkey_index(ctx_, 1, htobe16(0x1234)), -1);
}

TEST_F(VerbsDevice, SysfsFilesIbvDevinfoReads) {
  char buf[64];
  ASSERT_GT(ibv_read_sysfs_file(device(0)->ibdev_path, "board_id", buf, sizeof buf), 0);
  EXPECT_STRNE(buf, "");
  EXPECT_LT(ibv_read_sysfs_file(device(0)->ibdev_path, "no_such_file", buf, sizeof buf), 0);
}

TEST_F(VerbsDevice, AsyncFdIsPollableAndQuiet) {
  pollfd p{ctx_->async_fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 50), 0);  // no event on a steady fabric
}

TEST_F(VerbsDevice, DeviceQueryExFallsBackCleanly) {
  ibv_device_attr_ex ex{};
  ASSERT_EQ(ibv_query_device_ex(ctx_, nullptr, &ex), 0);
  ibv_device_attr a{};
  ASSERT_EQ(ibv_query_device(ctx_, &a), 0);
  EXPECT_EQ(ex.orig_attr.node_guid, a.node_guid);
}

}  // namespace
}  // namespace ibfab::testing
